package mcp

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"reasonix/core/config"
	"reasonix/core/mcp/oauth"
)

func TestExpand(t *testing.T) {
	t.Parallel()
	env := map[string]string{"KEY": "sk-1", "EMPTY": "", "HOME": "/home/ada"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"Bearer ${KEY}", "Bearer sk-1"},
		{"${HOME}/x:${KEY}", "/home/ada/x:sk-1"},
		{"${MISSING}", ""},
		{"${MISSING:-fallback}", "fallback"},
		{"${EMPTY:-fallback}", "fallback"},
		{"${KEY:-fallback}", "sk-1"},
		{"${KEY:-}", "sk-1"},
		{"${MISSING:-a:-b}", "a:-b"},
		{"$KEY stays", "$KEY stays"},
		{"${unclosed", "${unclosed"},
		{"${}", "${}"},
		{"${1BAD}", "${1BAD}"},
		{"${BAD-NAME}", "${BAD-NAME}"},
		{"a${KEY}b${KEY}c", "ask-1bsk-1c"},
		{"${${KEY}}", "${sk-1}"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			if got := Expand(tt.in, lookup); got != tt.want {
				t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestExpanded(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TOKEN": "t0k", "BIN": "/opt/bin"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	in := ServerConfig{
		Name: "s", Type: TypeStdio,
		Command: "${BIN}/server", Args: []string{"--token=${TOKEN}", "--x=${NOPE}"},
		Env:     map[string]string{"A": "${TOKEN}", "B": "${NOPE:-d}"},
		URL:     "https://${HOSTNAME_UNSET:-example.com}/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${TOKEN}", "X-Other": "${NOPE}${ALSO_NOPE}"},
	}
	got, missing := in.Expanded(lookup)
	want := ServerConfig{
		Name: "s", Type: TypeStdio,
		Command: "/opt/bin/server", Args: []string{"--token=t0k", "--x="},
		Env:     map[string]string{"A": "t0k", "B": "d"},
		URL:     "https://example.com/mcp",
		Headers: map[string]string{"Authorization": "Bearer t0k", "X-Other": ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Expanded =\n%+v\nwant\n%+v", got, want)
	}
	if !reflect.DeepEqual(missing, []string{"NOPE", "ALSO_NOPE"}) {
		t.Errorf("missing = %v", missing)
	}
	if in.Args[0] != "--token=${TOKEN}" || in.Env["A"] != "${TOKEN}" {
		t.Error("Expanded changed its receiver")
	}
}

func TestFromPlugin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      config.PluginConfig
		want    ServerConfig
		wantErr string
	}{
		{
			name: "stdio by default",
			in:   config.PluginConfig{Name: "ex", Command: "reasonix-plugin-example", Args: []string{"a"}, Env: map[string]string{"K": "v"}, CallTimeoutSeconds: 600, ToolTimeoutSeconds: map[string]int{"slow": 1800, "off": 0}},
			want: ServerConfig{Name: "ex", Type: TypeStdio, Command: "reasonix-plugin-example", Args: []string{"a"}, Env: map[string]string{"K": "v"}, CallTimeout: 10 * time.Minute, ToolTimeouts: map[string]time.Duration{"slow": 30 * time.Minute}},
		},
		{
			name: "http",
			in:   config.PluginConfig{Name: "stripe", Type: "http", URL: "https://mcp.stripe.com", Headers: map[string]string{"Authorization": "Bearer ${STRIPE_KEY}"}},
			want: ServerConfig{Name: "stripe", Type: TypeHTTP, URL: "https://mcp.stripe.com", Headers: map[string]string{"Authorization": "Bearer ${STRIPE_KEY}"}},
		},
		{
			name: "streamable-http spelling",
			in:   config.PluginConfig{Name: "r", Type: "streamable-http", URL: "http://127.0.0.1:9/mcp"},
			want: ServerConfig{Name: "r", Type: TypeHTTP, URL: "http://127.0.0.1:9/mcp"},
		},
		{
			name: "url only means http",
			in:   config.PluginConfig{Name: "r", URL: "http://${HOST}/mcp"},
			want: ServerConfig{Name: "r", Type: TypeHTTP, URL: "http://${HOST}/mcp"},
		},
		{
			name: "sse is recognised",
			in:   config.PluginConfig{Name: "old", Type: "sse", URL: "https://old.example/sse"},
			want: ServerConfig{Name: "old", Type: TypeSSE, URL: "https://old.example/sse"},
		},
		{name: "unknown type", in: config.PluginConfig{Name: "x", Type: "websocket", URL: "ws://x"}, wantErr: `unknown transport type "websocket"`},
		{name: "stdio without command", in: config.PluginConfig{Name: "x", Type: "stdio"}, wantErr: "needs a command"},
		{name: "http without url", in: config.PluginConfig{Name: "x", Type: "http"}, wantErr: "needs a url"},
		{name: "http with relative url", in: config.PluginConfig{Name: "x", Type: "http", URL: "/mcp"}, wantErr: "not an absolute http"},
		{name: "no name", in: config.PluginConfig{Command: "x"}, wantErr: "without a name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := FromPlugin(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	c := ServerConfig{CallTimeout: time.Minute, ToolTimeouts: map[string]time.Duration{"slow": time.Hour}}
	tests := []struct {
		name   string
		cfg    ServerConfig
		tool   string
		global time.Duration
		want   time.Duration
	}{
		{"tool override", c, "slow", 5 * time.Minute, time.Hour},
		{"server cap", c, "other", 5 * time.Minute, time.Minute},
		{"global cap", ServerConfig{}, "other", 5 * time.Minute, 5 * time.Minute},
		{"no cap", ServerConfig{}, "other", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.cfg.Timeout(tt.tool, tt.global); got != tt.want {
				t.Errorf("Timeout = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIdentity(t *testing.T) {
	t.Parallel()
	base := ServerConfig{
		Name: "a", Type: TypeStdio, Command: "srv", Args: []string{"x", "y"},
		Env: map[string]string{"A": "1", "B": "2"}, Headers: map[string]string{"Authorization": "t"},
	}
	id := Identity(base)
	if len(id) != 64 {
		t.Fatalf("Identity = %q, want 64 hex digits", id)
	}
	same := []struct {
		name string
		edit func(c *ServerConfig)
	}{
		{"other name", func(c *ServerConfig) { c.Name = "b" }},
		{"other timeouts", func(c *ServerConfig) { c.CallTimeout = time.Hour }},
		{"rebuilt maps", func(c *ServerConfig) {
			c.Env = map[string]string{"B": "2", "A": "1"}
			c.Headers = map[string]string{"authorization": "t"}
		}},
	}
	for _, tt := range same {
		t.Run("same/"+tt.name, func(t *testing.T) {
			t.Parallel()
			c := clone(base)
			tt.edit(&c)
			if Identity(c) != id {
				t.Error("identity changed")
			}
		})
	}
	differ := []struct {
		name string
		edit func(c *ServerConfig)
	}{
		{"command", func(c *ServerConfig) { c.Command = "srv2" }},
		{"arg order", func(c *ServerConfig) { c.Args = []string{"y", "x"} }},
		{"arg split", func(c *ServerConfig) { c.Args = []string{"xy"} }},
		{"env value", func(c *ServerConfig) { c.Env["A"] = "2" }},
		{"env added", func(c *ServerConfig) { c.Env["C"] = "" }},
		{"url", func(c *ServerConfig) { c.URL = "http://x" }},
		{"header value", func(c *ServerConfig) { c.Headers["Authorization"] = "u" }},
		{"type", func(c *ServerConfig) { c.Type = TypeHTTP }},
		{"oauth secret variable", func(c *ServerConfig) { c.OAuth.ClientSecretEnv = "OTHER" }},
	}
	for _, tt := range differ {
		t.Run("differs/"+tt.name, func(t *testing.T) {
			t.Parallel()
			c := clone(base)
			tt.edit(&c)
			if Identity(c) == id {
				t.Error("identity did not change")
			}
		})
	}
	if Identity(ServerConfig{Type: TypeStdio, Command: "x"}) != Identity(ServerConfig{Type: TypeStdio, Command: "x", Args: []string{}, Env: map[string]string{}}) {
		t.Error("nil and empty collections give different identities")
	}
}

func clone(c ServerConfig) ServerConfig {
	out := c
	out.Args = append([]string(nil), c.Args...)
	out.Env = map[string]string{}
	for k, v := range c.Env {
		out.Env[k] = v
	}
	out.Headers = map[string]string{}
	for k, v := range c.Headers {
		out.Headers[k] = v
	}
	return out
}

func TestLoadMCPJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		want    []ServerConfig
		wantErr string
	}{
		{
			name: "claude code schema",
			content: `{"mcpServers": {
				"stripe": {"type": "http", "url": "https://mcp.stripe.com", "headers": {"Authorization": "Bearer ${STRIPE_KEY}"}},
				"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "env": {"DEBUG": "${DEBUG:-0}"}},
				"remote": {"type": "streamable-http", "url": "http://127.0.0.1:8080/mcp", "oauth": {"ignored": true}},
				"bare": {"url": "https://bare.example/mcp"},
				"legacy": {"type": "sse", "url": "https://legacy.example/sse"}
			}}`,
			want: []ServerConfig{
				{Name: "bare", Type: TypeHTTP, URL: "https://bare.example/mcp"},
				{Name: "fs", Type: TypeStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "."}, Env: map[string]string{"DEBUG": "${DEBUG:-0}"}},
				{Name: "legacy", Type: TypeSSE, URL: "https://legacy.example/sse"},
				{Name: "remote", Type: TypeHTTP, URL: "http://127.0.0.1:8080/mcp"},
				{Name: "stripe", Type: TypeHTTP, URL: "https://mcp.stripe.com", Headers: map[string]string{"Authorization": "Bearer ${STRIPE_KEY}"}},
			},
		},
		{
			name: "oauth member",
			content: `{"mcpServers": {"m2m": {"url": "https://m2m.example/mcp", "oauth": {
				"grant": "client_credentials", "client_id": "svc", "private_key_env": "SVC_KEY", "signing_algorithm": "ES256"}}}}`,
			want: []ServerConfig{{Name: "m2m", Type: TypeHTTP, URL: "https://m2m.example/mcp", OAuth: oauth.Settings{
				Grant: oauth.GrantClientCredentials, ClientID: "svc", PrivateKeyEnv: "SVC_KEY", SigningAlgorithm: "ES256"}}},
		},
		{name: "oauth grant unknown", content: `{"mcpServers": {"x": {"url": "https://x", "oauth": {"grant": "password"}}}}`, wantErr: `grant "password"`},
		{name: "no servers", content: `{}`, want: []ServerConfig{}},
		{name: "not json", content: `{"mcpServers": {`, wantErr: ".mcp.json"},
		{name: "server not an object", content: `{"mcpServers": {"x": 3}}`, wantErr: `server "x"`},
		{name: "unknown type", content: `{"mcpServers": {"x": {"type": "grpc", "url": "http://x"}}}`, wantErr: `unknown transport type "grpc"`},
		{name: "missing command", content: `{"mcpServers": {"x": {"args": ["a"]}}}`, wantErr: "needs a command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), ".mcp.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := LoadMCPJSON(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		t.Parallel()
		if _, err := LoadMCPJSON(filepath.Join(t.TempDir(), ".mcp.json")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error = %v, want fs.ErrNotExist", err)
		}
	})
}

func TestToolName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("t", 80)
	tests := []struct{ server, tool, want string }{
		{"example", "echo", "mcp__example__echo"},
		{"my server", "do thing", "mcp__my_server__do_thing"},
		{"gh.com/x", "a:b", "mcp__gh_com_x__a_b"},
		{"dash-ok", "under_ok", "mcp__dash-ok__under_ok"},
		{"ünï", "工具", "mcp___n_____"},
		{"s", long, "mcp__s__" + strings.Repeat("t", 47) + "_a3c0d2ff"},
	}
	for _, tt := range tests {
		t.Run(tt.server+"/"+tt.tool, func(t *testing.T) {
			t.Parallel()
			got := ToolName(tt.server, tt.tool)
			if tt.tool == long {
				if len(got) != 64 || !strings.HasPrefix(got, "mcp__s__ttt") || got == ToolName("s", long+"x") {
					t.Errorf("ToolName(long) = %q (%d chars)", got, len(got))
				}
				return
			}
			if got != tt.want {
				t.Errorf("ToolName = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     ServerConfig
		wantErr error
		errText string
	}{
		{name: "sse deferred", cfg: ServerConfig{Name: "old", Type: TypeSSE, URL: "https://old.example/sse"}, wantErr: ErrSSEDeferred, errText: `type "http"`},
		{name: "invalid", cfg: ServerConfig{Name: "bad", Type: TypeStdio}, errText: "needs a command"},
		{name: "unexpanded url", cfg: ServerConfig{Name: "u", Type: TypeHTTP, URL: "http://${HOST}/mcp"}, errText: "mcp server url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr, err := Open(t.Context(), tt.cfg, OpenOptions{})
			if err == nil {
				_ = tr.Close()
				t.Fatal("Open succeeded")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.errText) {
				t.Errorf("error %q does not mention %q", err, tt.errText)
			}
		})
	}
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		tr, err := Open(t.Context(), ServerConfig{Name: "h", Type: TypeHTTP, URL: "http://127.0.0.1:1/mcp"}, OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := tr.(*HTTP); !ok {
			t.Errorf("Open gave %T", tr)
		}
		_ = tr.Close()
	})
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		tr, err := Open(t.Context(), ServerConfig{Name: "s", Type: TypeStdio, Command: os.Args[0], Env: map[string]string{helperEnv: "1", "GORACE": helperGORACE()}}, OpenOptions{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		c, err := Connect(testCtx(t), tr, testClientInfo, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	})
}
