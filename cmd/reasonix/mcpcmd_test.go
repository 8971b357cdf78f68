package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"reasonix/actors/mcpconn"
	"reasonix/cmd/reasonix/internal/clitest"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/cmd/reasonix/internal/mcpcmd"
	"reasonix/core/mcp"
	"reasonix/core/mcp/oauth"
	"reasonix/core/testenv"
)

// startPluginHTTP runs the plugin example as a streamable HTTP server and
// returns its endpoint.
func startPluginHTTP(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(pluginBinary(t), "--http", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("read the endpoint: %v", err)
	}
	return strings.TrimSpace(line)
}

func TestMCPCommandFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		wantSub  string
		want     mcpcmd.MCPOptions
		wantCode int
	}{
		{"list", []string{"list"}, "list", mcpcmd.MCPOptions{}, cmdutil.ExitOK},
		{"list no connect", []string{"list", "--no-connect", "--trust-project-mcp"}, "list", mcpcmd.MCPOptions{NoConnect: true, TrustProjectMCP: true}, cmdutil.ExitOK},
		{"list takes no server", []string{"list", "x"}, "", mcpcmd.MCPOptions{}, cmdutil.ExitUsage},
		{"tools server", []string{"tools", "example"}, "tools", mcpcmd.MCPOptions{Server: "example"}, cmdutil.ExitOK},
		{"tools url", []string{"tools", "--url", "http://h/mcp", "--header", "A=b"}, "tools", mcpcmd.MCPOptions{URL: "http://h/mcp", Headers: []string{"A=b"}}, cmdutil.ExitOK},
		{"tools nothing", []string{"tools"}, "", mcpcmd.MCPOptions{}, cmdutil.ExitUsage},
		{"tools url and server", []string{"tools", "--url", "http://h/mcp", "x"}, "", mcpcmd.MCPOptions{}, cmdutil.ExitUsage},
		{"header without url", []string{"tools", "x", "--header", "A=b"}, "", mcpcmd.MCPOptions{}, cmdutil.ExitUsage},
		{"bad header", []string{"tools", "--url", "http://h/mcp", "--header", "nope"}, "", mcpcmd.MCPOptions{}, cmdutil.ExitUsage},
		{"call", []string{"call", "s", "t", `{"a":1}`}, "call", mcpcmd.MCPOptions{Server: "s", Tool: "t", Args: `{"a":1}`}, cmdutil.ExitOK},
		{"call without args", []string{"call", "s", "t"}, "call", mcpcmd.MCPOptions{Server: "s", Tool: "t"}, cmdutil.ExitOK},
		{"call url", []string{"call", "--url", "http://h/mcp", "t", "{}"}, "call", mcpcmd.MCPOptions{URL: "http://h/mcp", Tool: "t", Args: "{}"}, cmdutil.ExitOK},
		{"call too few", []string{"call", "s"}, "", mcpcmd.MCPOptions{}, cmdutil.ExitUsage},
		{"call too many", []string{"call", "s", "t", "{}", "x"}, "", mcpcmd.MCPOptions{}, cmdutil.ExitUsage},
		{"trust", []string{"trust", "proj"}, "trust", mcpcmd.MCPOptions{Server: "proj"}, cmdutil.ExitOK},
		{"trust nothing", []string{"trust"}, "", mcpcmd.MCPOptions{}, cmdutil.ExitUsage},
		{"call with defaults", []string{"call", "--mcp-elicitation", "defaults", "s", "t"}, "call", mcpcmd.MCPOptions{Server: "s", Tool: "t", Elicitation: "defaults"}, cmdutil.ExitOK},
		{"bad elicitation", []string{"tools", "--mcp-elicitation", "yes", "s"}, "", mcpcmd.MCPOptions{}, cmdutil.ExitUsage},
		{"oauth flags", []string{"call", "--oauth-authorize", "fetch", "--oauth-client-id", "id", "--oauth-client-secret-env", "SECRET", "--url", "http://h/mcp", "t"}, "call",
			mcpcmd.MCPOptions{URL: "http://h/mcp", Tool: "t", OAuthAuthorize: "fetch", OAuth: oauth.Settings{ClientID: "id", ClientSecretEnv: "SECRET"}}, cmdutil.ExitOK},
		{"bad authorize", []string{"tools", "--oauth-authorize", "phone", "s"}, "", mcpcmd.MCPOptions{}, cmdutil.ExitUsage},
		{"secret without client", []string{"tools", "--oauth-client-secret-env", "S", "--url", "http://h/mcp"}, "", mcpcmd.MCPOptions{}, cmdutil.ExitUsage},
		{"client credentials without a client", []string{"tools", "--oauth-grant", "client_credentials", "--url", "http://h/mcp"}, "", mcpcmd.MCPOptions{}, cmdutil.ExitUsage},
		{"bad grant", []string{"tools", "--oauth-grant", "implicit", "s"}, "", mcpcmd.MCPOptions{}, cmdutil.ExitUsage},
		{"bad algorithm", []string{"tools", "--oauth-signing-algorithm", "none", "s"}, "", mcpcmd.MCPOptions{}, cmdutil.ExitUsage},
		{"key without its grant", []string{"tools", "--oauth-client-id", "c", "--oauth-private-key-env", "K", "--url", "http://h/mcp"}, "", mcpcmd.MCPOptions{}, cmdutil.ExitUsage},
		{"login", []string{"login", "remote", "--oauth-authorize", "print"}, "login", mcpcmd.MCPOptions{Server: "remote", OAuthAuthorize: "print"}, cmdutil.ExitOK},
		{"login url", []string{"login", "--url", "http://h/mcp"}, "login", mcpcmd.MCPOptions{URL: "http://h/mcp"}, cmdutil.ExitOK},
		{"login nothing", []string{"login"}, "", mcpcmd.MCPOptions{}, cmdutil.ExitUsage},
		{"logout", []string{"logout", "remote"}, "logout", mcpcmd.MCPOptions{Server: "remote"}, cmdutil.ExitOK},
		{"logout takes no authorize", []string{"logout", "remote", "--oauth-authorize", "print"}, "", mcpcmd.MCPOptions{}, cmdutil.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &cmdutil.Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
			var gotSub string
			var got *mcpcmd.MCPOptions
			cmd := mcpcmd.NewCmdMCP(f, func(sub string, o *mcpcmd.MCPOptions) error { gotSub, got = sub, o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdutil.UsageError{Err: err} })
			err := cmd.Execute()
			if code := cmdutil.ExitCode(err); code != tt.wantCode {
				t.Fatalf("exit code = %d (err %v), want %d", code, err, tt.wantCode)
			}
			if tt.wantCode != cmdutil.ExitOK {
				return
			}
			if gotSub != tt.wantSub || got == nil {
				t.Fatalf("sub = %q, options %+v", gotSub, got)
			}
			if got.Timeout == 0 && tt.wantSub != "trust" && tt.wantSub != "logout" {
				t.Error("no default timeout")
			}
			g := *got
			g.Timeout = 0
			// The defaults of the policy flags.
			if g.Elicitation == mcpconn.ElicitDecline {
				g.Elicitation = ""
			}
			if g.OAuthAuthorize == oauth.AuthorizeBrowser {
				g.OAuthAuthorize = ""
			}
			if fmt.Sprint(g) != fmt.Sprint(tt.want) {
				t.Errorf("options = %+v, want %+v", g, tt.want)
			}
		})
	}
}

// mcpWorkspace is a home whose user config declares the plugin example as
// "example", and a trusted project whose reasonix.toml declares it again
// as "proj", started through a wrapper that leaves a marker file when it
// runs.
type mcpWorkspace struct {
	home, work, marker string
	env                map[string]string
}

func newMCPWorkspace(t *testing.T) *mcpWorkspace {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the marker wrapper is a shell script")
	}
	bin := pluginBinary(t)
	w := &mcpWorkspace{home: t.TempDir(), work: t.TempDir()}
	w.marker = filepath.Join(t.TempDir(), "proj-started")
	w.env = map[string]string{"REASONIX_HOME": w.home, "PLUGIN_TOKEN": "t0k"}
	testenv.WriteFile(t, filepath.Join(w.home, "config.toml"), fmt.Sprintf(`
[[plugins]]
name = "example"
command = %q
env = { TOKEN = "${PLUGIN_TOKEN}" }

[[plugins]]
name = "off"
command = %q
disabled = true
`, bin, bin), 0o600)
	w.writeProject(t, "")
	w.trust(t)
	return w
}

// trust records the workspace's files as trusted, so its project servers
// are declared at all.
func (w *mcpWorkspace) trust(t *testing.T) {
	t.Helper()
	if r := w.run(t, "trust"); r.code != 0 {
		t.Fatalf("trust: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// writeProject declares "proj" in the project with extra arguments to the
// wrapper (which changes its identity).
func (w *mcpWorkspace) writeProject(t *testing.T, extra string) {
	t.Helper()
	testenv.WriteFile(t, filepath.Join(w.work, "reasonix.toml"), fmt.Sprintf(`
[[plugins]]
name = "proj"
command = "sh"
args = ["-c", "touch \"$0\"; exec \"$1\"", %q, %q%s]
`, w.marker, pluginBinary(t), extra), 0o644)
}

func (w *mcpWorkspace) run(t *testing.T, args ...string) cliResult {
	t.Helper()
	return runCLI(t, w.env, "", append(args, "--cwd", w.work)...)
}

func (w *mcpWorkspace) started() bool {
	_, err := os.Stat(w.marker)
	return !errors.Is(err, os.ErrNotExist)
}

func TestMCPCommands(t *testing.T) {
	t.Parallel()
	w := newMCPWorkspace(t)

	t.Run("unknown subcommand", func(t *testing.T) {
		if r := runCLI(t, w.env, "", "mcp", "frob"); r.code != cmdutil.ExitUsage || !strings.Contains(r.stderr, "want list, tools, call, trust, login or logout") {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
	})
	t.Run("list without connecting", func(t *testing.T) {
		r := w.run(t, "mcp", "list", "--no-connect")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		for _, want := range [][]string{
			{"example", "user", "stdio", "not connected"},
			{"off", "user", "stdio", "disabled"},
			{"proj", "project", "stdio", "untrusted", "reasonix mcp trust proj"},
		} {
			if !hasRow(r.stdout, want...) {
				t.Errorf("no row %v in\n%s", want, r.stdout)
			}
		}
	})
	t.Run("list connects", func(t *testing.T) {
		r := w.run(t, "mcp", "list")
		if r.code != 0 || !hasRow(r.stdout, "example", "user", "stdio", "ready", "2", "0", "0") || !hasRow(r.stdout, "proj", "untrusted") {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if w.started() {
			t.Error("the untrusted project server was started")
		}
	})
	t.Run("tools", func(t *testing.T) {
		r := w.run(t, "mcp", "tools", "example")
		if r.code != 0 || !hasRow(r.stdout, "echo", "mcp__example__echo", "read-only", "Return the given text unchanged.") ||
			!hasRow(r.stdout, "wordcount", "mcp__example__wordcount", "read-only") {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("call", func(t *testing.T) {
		r := w.run(t, "mcp", "call", "example", "wordcount", `{"text":"one two three"}`)
		if r.code != 0 || r.stdout != "3\n" {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("call errors", func(t *testing.T) {
		tests := []struct {
			name   string
			args   []string
			code   int
			stderr string
		}{
			{"tool error", []string{"example", "wordcount", `{"text":1}`}, cmdutil.ExitFailed, "reported an error"},
			{"bad json", []string{"example", "wordcount", `{"text":`}, cmdutil.ExitUsage, "JSON object"},
			{"json not an object", []string{"example", "wordcount", `[1]`}, cmdutil.ExitUsage, "JSON object"},
			{"unknown tool", []string{"example", "nope"}, cmdutil.ExitUsage, `no tool "nope" (tools: echo, wordcount)`},
			{"unknown server", []string{"nope", "echo"}, cmdutil.ExitUsage, `unknown mcp server "nope" (configured: example, off, proj)`},
			{"disabled server", []string{"off", "echo"}, cmdutil.ExitUsage, "disabled"},
			{"untrusted server", []string{"proj", "echo", `{"text":"x"}`}, cmdutil.ExitUsage, "untrusted"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := w.run(t, append([]string{"mcp", "call"}, tt.args...)...)
				if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
					t.Fatalf("exit %d, want %d with %q\n%s%s", r.code, tt.code, tt.stderr, r.stdout, r.stderr)
				}
			})
		}
		if w.started() {
			t.Error("the untrusted project server was started")
		}
	})
	t.Run("url", func(t *testing.T) {
		url := startPluginHTTP(t)
		r := runCLI(t, w.env, "", "mcp", "tools", "--url", url, "--header", "X-Test=1")
		if r.code != 0 || !hasRow(r.stdout, "echo", "read-only") {
			t.Fatalf("tools: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		r = runCLI(t, w.env, `{"text":"over http"}`, "mcp", "call", "--url", url, "echo", "-")
		if r.code != 0 || r.stdout != "over http\n" {
			t.Fatalf("call: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("trust", func(t *testing.T) {
		r := w.run(t, "mcp", "trust", "example")
		if r.code != 0 || !strings.Contains(r.stdout, "needs no grant") {
			t.Fatalf("trust a user server: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if r := w.run(t, "mcp", "trust", "nope"); r.code != cmdutil.ExitUsage {
			t.Fatalf("trust an unknown server: exit %d\n%s", r.code, r.stderr)
		}
		r = w.run(t, "mcp", "trust", "proj")
		if r.code != 0 || !strings.Contains(r.stdout, `trusted mcp server "proj"`) {
			t.Fatalf("trust: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if _, err := os.Stat(mcp.GrantsPath(w.home)); err != nil {
			t.Fatalf("no grant file: %v", err)
		}
		r = w.run(t, "mcp", "call", "proj", "echo", `{"text":"granted"}`)
		if r.code != 0 || r.stdout != "granted\n" || !w.started() {
			t.Fatalf("call after trust: exit %d started %v\n%s%s", r.code, w.started(), r.stdout, r.stderr)
		}
		// A changed declaration untrusts the workspace, which hides the
		// server again; trusted again, it still needs a new grant.
		w.writeProject(t, `, "--extra"`)
		r = w.run(t, "mcp", "list", "--no-connect")
		if strings.Contains(r.stdout, "proj") || !strings.Contains(r.stderr, "ignored until you trust this workspace: plugins[proj]") {
			t.Fatalf("after the change, untrusted:\n%s%s", r.stdout, r.stderr)
		}
		if r := w.run(t, "mcp", "trust", "proj"); r.code != cmdutil.ExitUsage || !strings.Contains(r.stderr, `unknown mcp server "proj"`) || !strings.Contains(r.stderr, "the project's servers are ignored until you trust this workspace") {
			t.Fatalf("mcp trust in an untrusted workspace: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		w.trust(t)
		r = w.run(t, "mcp", "list", "--no-connect")
		if !hasRow(r.stdout, "proj", "untrusted", "identity changed") {
			t.Fatalf("after the change:\n%s%s", r.stdout, r.stderr)
		}
		r = w.run(t, "mcp", "list", "--no-connect", "--trust-project-mcp")
		if !hasRow(r.stdout, "proj", "project", "not connected") {
			t.Fatalf("with --trust-project-mcp:\n%s%s", r.stdout, r.stderr)
		}
		r = w.run(t, "mcp", "list", "--no-connect")
		if !hasRow(r.stdout, "proj", "not connected") {
			t.Fatalf("the grant was not recorded:\n%s%s", r.stdout, r.stderr)
		}
	})
}

// hasRow reports whether a line of out holds every field, in order.
func hasRow(out string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		rest, ok := line, true
		for _, f := range fields {
			i := strings.Index(rest, f)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(f):]
		}
		if ok {
			return true
		}
	}
	return false
}

func TestRunMCPFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		args        []string
		trust       bool
		elicitation string
		wantCode    int
	}{
		{"defaults", []string{"go"}, false, "", cmdutil.ExitOK},
		{"trust and defaults", []string{"--trust-project-mcp", "--mcp-elicitation", "defaults", "go"}, true, "defaults", cmdutil.ExitOK},
		{"decline", []string{"--mcp-elicitation", "decline", "go"}, false, "decline", cmdutil.ExitOK},
		{"bad elicitation", []string{"--mcp-elicitation", "ask", "go"}, false, "", cmdutil.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &cmdutil.Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
			var got *RunOptions
			cmd := NewCmdRun(f, func(o *RunOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if code := cmdutil.ExitCode(err); code != tt.wantCode {
				t.Fatalf("exit code = %d (err %v), want %d", code, err, tt.wantCode)
			}
			if tt.wantCode == cmdutil.ExitOK && (got.TrustProjectMCP != tt.trust || got.MCPElicitation != tt.elicitation) {
				t.Errorf("options = %+v", got)
			}
		})
	}
}

// TestMCPListProbePanic makes one server's probe panic once connected: that
// server is listed as failed with the panic, the other as ready, and the
// command still succeeds. It sets a package-level hook, so it does not run
// in parallel.
func TestMCPListProbePanic(t *testing.T) {
	bin := pluginBinary(t)
	home := t.TempDir()
	testenv.WriteFile(t, filepath.Join(home, "config.toml"), fmt.Sprintf(`
[[plugins]]
name = "good"
command = %q

[[plugins]]
name = "bad"
command = %q
`, bin, bin), 0o600)
	mcpcmd.TestHookProbe = func(name string) {
		if name == "bad" {
			panic("probe broke")
		}
	}
	defer func() { mcpcmd.TestHookProbe = nil }()
	r := runCLI(t, map[string]string{"REASONIX_HOME": home}, "", "mcp", "list", "--cwd", t.TempDir())
	if r.code != cmdutil.ExitOK || !hasRow(r.stdout, "good", "ready", "2") || !hasRow(r.stdout, "bad", "failed", "probe: panic: probe broke") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// pluginBinary builds the plugin example once, into pluginDir.
func pluginBinary(t testing.TB) string {
	t.Helper()
	return clitest.PluginBinary(t, pluginDir)
}
