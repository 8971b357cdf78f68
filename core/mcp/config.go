package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"reasonix/core/config"
	"reasonix/core/mcp/oauth"
)

// The transport types a ServerConfig may name.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	// TypeSSE is the legacy HTTP+SSE transport: recognised, not served
	// (see ErrSSEDeferred).
	TypeSSE = "sse"
)

// ServerConfig is everything needed to reach one MCP server, whichever
// file declared it.
type ServerConfig struct {
	// Name identifies the server; tool names are derived from it.
	Name string
	// Type is TypeStdio, TypeHTTP or TypeSSE.
	Type string
	// Command starts a stdio server, with Args; Env is laid over the
	// inherited environment.
	Command string
	// Args are the command's arguments.
	Args []string
	// Env holds variables for the server process.
	Env map[string]string
	// URL addresses an http server.
	URL string
	// Headers go with every request to an http server.
	Headers map[string]string
	// CallTimeout caps one call to this server; zero defers to the
	// global cap.
	CallTimeout time.Duration
	// ToolTimeouts caps calls per raw tool name, overriding CallTimeout.
	ToolTimeouts map[string]time.Duration
	// OAuth is how an http server's authorization server knows this
	// client: the grant, the client, and the variables holding secrets.
	OAuth oauth.Settings
	// Sandbox runs a stdio server inside the bash jail with the writer
	// roots (a user's server opts in; see Jailed).
	Sandbox bool
	// Network lets a jailed project server reach the network; nothing
	// else does.
	Network bool
	// Approval is the server's approval policy for its tools.
	Approval Approval
	// TrustedReadOnly lists raw tool names the user audited as read-only.
	TrustedReadOnly []string
	// Project marks a server the project declared (reasonix.toml or
	// .mcp.json) rather than the user.
	Project bool
}

// normalizeType maps the spellings users write to a transport type. An
// empty type means stdio, unless only a URL is given.
func normalizeType(typ, command, rawURL string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(typ)) {
	case "":
		if command == "" && rawURL != "" {
			return TypeHTTP, nil
		}
		return TypeStdio, nil
	case "stdio":
		return TypeStdio, nil
	case "http", "streamable-http", "streamable_http", "streamablehttp":
		return TypeHTTP, nil
	case "sse":
		return TypeSSE, nil
	}
	return "", fmt.Errorf("unknown transport type %q (want stdio, http or sse)", typ)
}

// FromPlugin converts a [[plugins]] entry. ${VAR} references are kept as
// written; see Expanded.
func FromPlugin(p config.PluginConfig) (ServerConfig, error) {
	typ, err := normalizeType(p.Type, p.Command, p.URL)
	if err != nil {
		return ServerConfig{}, fmt.Errorf("plugin %q: %w", p.Name, err)
	}
	c := ServerConfig{
		Name:    p.Name,
		Type:    typ,
		Command: p.Command,
		Args:    slices.Clone(p.Args),
		Env:     maps.Clone(p.Env),
		URL:     p.URL,
		Headers: maps.Clone(p.Headers),

		OAuth: oauth.Settings{
			Grant: p.OAuthGrant, ClientID: p.OAuthClientID, ClientSecretEnv: p.OAuthClientSecretEnv,
			ClientMetadataURL: p.OAuthClientMetadataURL,
			PrivateKeyFile:    p.OAuthPrivateKeyFile, PrivateKeyEnv: p.OAuthPrivateKeyEnv, SigningAlgorithm: p.OAuthSigningAlgorithm,
			IDPIssuer: p.OAuthIDPIssuer, IDPClientID: p.OAuthIDPClientID, IDPClientSecretEnv: p.OAuthIDPClientSecretEnv,
			IDTokenEnv: p.OAuthIDTokenEnv,
		},
		Sandbox: p.Sandbox,
		Network: p.Network,

		Approval:        Approval{Default: p.DefaultToolsApprovalMode, Reviewer: p.ApprovalsReviewer},
		TrustedReadOnly: slices.Clone(p.TrustedReadOnlyTools),
	}
	for name, t := range p.Tools {
		if t.ApprovalMode == "" {
			continue
		}
		if c.Approval.Tools == nil {
			c.Approval.Tools = map[string]string{}
		}
		c.Approval.Tools[name] = t.ApprovalMode
	}
	if p.CallTimeoutSeconds > 0 {
		c.CallTimeout = time.Duration(p.CallTimeoutSeconds) * time.Second
	}
	for tool, secs := range p.ToolTimeoutSeconds {
		if secs <= 0 {
			continue
		}
		if c.ToolTimeouts == nil {
			c.ToolTimeouts = make(map[string]time.Duration)
		}
		c.ToolTimeouts[tool] = time.Duration(secs) * time.Second
	}
	return c, c.Validate()
}

// Jailed reports whether the server's process runs in the bash jail: a
// stdio server a project declared always does (read-only, see Network),
// a user's one when it opts in with sandbox = true (writer roots).
func (c ServerConfig) Jailed() bool {
	return c.Type == TypeStdio && (c.Project || c.Sandbox)
}

// Validate checks that the config names a server that can be reached:
// a command for stdio, an absolute http(s) URL otherwise.
func (c ServerConfig) Validate() error {
	if c.Name == "" {
		return fmt.Errorf("mcp server without a name")
	}
	switch c.Type {
	case TypeStdio:
		if c.Command == "" {
			return fmt.Errorf("mcp server %q: stdio needs a command", c.Name)
		}
	case TypeHTTP, TypeSSE:
		if c.URL == "" {
			return fmt.Errorf("mcp server %q: %s needs a url", c.Name, c.Type)
		}
		if strings.Contains(c.URL, "${") {
			return nil // checked again once expanded
		}
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("mcp server %q: url %q is not an absolute http or https url", c.Name, c.URL)
		}
	default:
		return fmt.Errorf("mcp server %q: unknown transport type %q", c.Name, c.Type)
	}
	if err := c.OAuth.Validate(); err != nil {
		return fmt.Errorf("mcp server %q: oauth: %w", c.Name, err)
	}
	return nil
}

// Timeout is the cap for one call of tool: the tool's own cap, else the
// server's, else global. Zero means no cap.
func (c ServerConfig) Timeout(tool string, global time.Duration) time.Duration {
	if d := c.ToolTimeouts[tool]; d > 0 {
		return d
	}
	if c.CallTimeout > 0 {
		return c.CallTimeout
	}
	return global
}

// Expanded returns a copy with ${VAR} and ${VAR:-default} expanded in the
// command, args, env values, URL and header values. It also returns the
// names of variables that were referenced without a default and are not
// set, which usually means a missing secret; they expand to "".
func (c ServerConfig) Expanded(lookup func(string) (string, bool)) (ServerConfig, []string) {
	var missing []string
	exp := func(s string) string {
		return expand(s, lookup, func(name string) {
			if !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
		})
	}
	out := c
	out.Command = exp(c.Command)
	out.Args = make([]string, len(c.Args))
	for i, a := range c.Args {
		out.Args[i] = exp(a)
	}
	if c.Args == nil {
		out.Args = nil
	}
	out.Env = expandMap(c.Env, exp)
	out.URL = exp(c.URL)
	out.Headers = expandMap(c.Headers, exp)
	out.ToolTimeouts = maps.Clone(c.ToolTimeouts)
	return out, missing
}

// oauthIdentity is s for Identity, nil when s sets nothing.
func oauthIdentity(s oauth.Settings) *oauth.Settings {
	if s.IsZero() {
		return nil
	}
	return &s
}

func expandMap(m map[string]string, exp func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = exp(v)
	}
	return out
}

// Expand replaces ${VAR} with the value lookup gives (empty when unset)
// and ${VAR:-default} with the value when it is set and non-empty, else
// with default. Anything else, including $VAR without braces and a
// reference that is never closed, is left as written.
func Expand(s string, lookup func(string) (string, bool)) string {
	return expand(s, lookup, func(string) {})
}

func expand(s string, lookup func(string) (string, bool), unset func(string)) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			b.WriteString(s[i:])
			return b.String()
		}
		ref := rest[:end]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validVarName(name) {
			b.WriteString("${")
			s = rest
			continue
		}
		v, ok := lookup(name)
		switch {
		case hasDef && v == "":
			v = def
		case !ok && !hasDef:
			unset(name)
		}
		b.WriteString(v)
		s = rest[end+1:]
	}
}

func validVarName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Identity is a stable hash of what a server config launches or contacts:
// its type, command, args, env, URL and headers. Key order, nil versus
// empty, and header name case do not change it; anything else does. Launch
// grants for project-declared servers are keyed by it, so a change to the
// declaration invalidates the grant. Compute it on the config as declared,
// before Expanded, so that secrets in the environment are not part of it.
func Identity(c ServerConfig) string {
	headers := make(map[string]string, len(c.Headers))
	for k, v := range c.Headers {
		headers[http.CanonicalHeaderKey(k)] = v
	}
	env := c.Env
	if env == nil {
		env = map[string]string{}
	}
	args := c.Args
	if args == nil {
		args = []string{}
	}
	// encoding/json writes map keys sorted, which makes this canonical.
	b, err := json.Marshal(struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		// Network and OAuth are written only when set, so the grants
		// of servers without them stand; a project that turns one on,
		// or names other secrets, asks again.
		Network bool            `json:"network,omitempty"`
		OAuth   *oauth.Settings `json:"oauth,omitempty"`
	}{c.Type, c.Command, args, env, c.URL, headers, c.Network, oauthIdentity(c.OAuth)})
	if err != nil {
		// Only strings are marshalled; this cannot fail.
		panic(fmt.Sprintf("mcp identity: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// mcpJSONServer is one entry of .mcp.json's mcpServers object, in the
// schema Claude Code defines. Unknown members are ignored.
type mcpJSONServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	// Network is Reasonix's own member: the server's jail may reach the
	// network.
	Network bool `json:"network"`
	// OAuth is Reasonix's own member too: how an http server's
	// authorization server knows this client.
	OAuth oauth.Settings `json:"oauth"`
}

// LoadMCPJSON reads a project .mcp.json ({"mcpServers": {name: {...}}})
// and returns its servers sorted by name, with ${VAR} references kept as
// written. Type "streamable-http" is read as http, and an entry with only
// a url is http. A missing file is an error wrapping fs.ErrNotExist.
func LoadMCPJSON(path string) ([]ServerConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read mcp servers: %w", err)
	}
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make([]ServerConfig, 0, len(doc.MCPServers))
	for _, name := range slices.Sorted(maps.Keys(doc.MCPServers)) {
		var s mcpJSONServer
		if err := json.Unmarshal(bytes.TrimSpace(doc.MCPServers[name]), &s); err != nil {
			return nil, fmt.Errorf("%s: server %q: %w", path, name, err)
		}
		typ, err := normalizeType(s.Type, s.Command, s.URL)
		if err != nil {
			return nil, fmt.Errorf("%s: server %q: %w", path, name, err)
		}
		c := ServerConfig{Name: name, Type: typ, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL, Headers: s.Headers, Network: s.Network, OAuth: s.OAuth}
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// maxToolName is the longest function name OpenAI-compatible APIs accept.
const maxToolName = 64

// ToolName is the name a remote tool has in the run's registry:
// mcp__<server>__<tool>, with every character outside [A-Za-z0-9_-]
// replaced by "_" (function names allow nothing else). A name longer than
// 64 characters is cut and given a short hash of the full name, so that it
// stays valid and distinct.
func ToolName(server, tool string) string {
	name := "mcp__" + sanitizeName(server) + "__" + sanitizeName(tool)
	if len(name) <= maxToolName {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:maxToolName-9] + "_" + hex.EncodeToString(sum[:4])
}

func sanitizeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
