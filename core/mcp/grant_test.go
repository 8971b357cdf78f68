package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/core/config"
)

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestDeclarations(t *testing.T) {
	t.Parallel()
	home, project, extra := t.TempDir(), t.TempDir(), t.TempDir()
	writeTestFile(t, filepath.Join(home, "config.toml"), `
[[plugins]]
name = "user-tool"
command = "user-server"

[[plugins]]
name = "overridden"
command = "from-user"

[[plugins]]
name = "off"
command = "x"
disabled = true
`)
	writeTestFile(t, filepath.Join(project, "reasonix.toml"), `
[[plugins]]
name = "proj"
command = "project-server"
args = ["--flag"]

[[plugins]]
name = "overridden"
command = "from-project"

[[plugins]]
name = "odd name"
type = "http"
url = "https://example.com/mcp"
`)
	writeTestFile(t, filepath.Join(extra, "extra.toml"), `
[[plugins]]
name = "flagged"
command = "from-config-flag"
`)
	writeTestFile(t, filepath.Join(project, ".mcp.json"), `{"mcpServers":{
		"proj": {"command": "loses-to-reasonix-toml"},
		"claude": {"type": "streamable-http", "url": "https://mcp.example.com", "headers": {"Authorization": "Bearer ${TOKEN}"}}
	}}`)
	cfg, err := config.Load(config.Options{Home: home, ProjectDir: project, File: filepath.Join(extra, "extra.toml"), TrustProject: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Declarations(cfg, project)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		source, command, url string
		disabled             bool
	}
	want := map[string]row{
		"claude":     {source: SourceMCPJSON, url: "https://mcp.example.com"},
		"flagged":    {source: SourceUser, command: "from-config-flag"},
		"odd name":   {source: SourceProject, url: "https://example.com/mcp"},
		"off":        {source: SourceUser, command: "x", disabled: true},
		"overridden": {source: SourceProject, command: "from-project"},
		"proj":       {source: SourceProject, command: "project-server"},
		"user-tool":  {source: SourceUser, command: "user-server"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d servers, want %d: %+v", len(got), len(want), got)
	}
	for i, d := range got {
		if i > 0 && got[i-1].Config.Name >= d.Config.Name {
			t.Errorf("not sorted: %q after %q", d.Config.Name, got[i-1].Config.Name)
		}
		w, ok := want[d.Config.Name]
		if !ok {
			t.Errorf("unexpected server %q", d.Config.Name)
			continue
		}
		if d.Source != w.source || d.Config.Command != w.command || d.Config.URL != w.url || d.Disabled != w.disabled {
			t.Errorf("%s = source %q command %q url %q disabled %v; want %+v", d.Config.Name, d.Source, d.Config.Command, d.Config.URL, d.Disabled, w)
		}
		if d.Project() != (w.source != SourceUser) {
			t.Errorf("%s: Project() = %v", d.Config.Name, d.Project())
		}
		if d.File == "" {
			t.Errorf("%s: no file", d.Config.Name)
		}
	}
	// Expansion is the caller's business, after the trust check.
	for _, d := range got {
		if d.Config.Name == "claude" && d.Config.Headers["Authorization"] != "Bearer ${TOKEN}" {
			t.Errorf("claude headers expanded early: %v", d.Config.Headers)
		}
	}
}

func TestDeclarationsBadMCPJSON(t *testing.T) {
	t.Parallel()
	home, project := t.TempDir(), t.TempDir()
	writeTestFile(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"x": {"type": "carrier-pigeon"}}}`)
	cfg, err := config.Load(config.Options{Home: home, ProjectDir: project, TrustProject: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Declarations(cfg, project); err == nil || !strings.Contains(err.Error(), ".mcp.json") {
		t.Fatalf("err = %v, want one naming .mcp.json", err)
	}
	if d, err := Declarations(cfg, ""); err != nil || len(d) != 0 {
		t.Fatalf("without a project dir: %v %v", d, err)
	}
}

// TestDeclarationsUntrustedWorkspace: an untrusted project declares no
// server, by either file, while the user's and a --config file's stay, even
// when --config names the project's own reasonix.toml.
func TestDeclarationsUntrustedWorkspace(t *testing.T) {
	t.Parallel()
	home, project := t.TempDir(), t.TempDir()
	writeTestFile(t, filepath.Join(home, "config.toml"), "[[plugins]]\nname = \"user-tool\"\ncommand = \"user-server\"\n")
	projectFile := filepath.Join(project, "reasonix.toml")
	writeTestFile(t, projectFile, "[[plugins]]\nname = \"proj\"\ncommand = \"project-server\"\n")
	writeTestFile(t, filepath.Join(project, ".mcp.json"), `{"mcpServers":{"claude":{"command":"claude-server"}}}`)
	names := func(ds []Declared) string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Config.Name+":"+d.Source)
		}
		return strings.Join(out, " ")
	}
	tests := []struct {
		name string
		opts config.Options
		want string
	}{
		{"untrusted", config.Options{Home: home, ProjectDir: project},
			"user-tool:user"},
		{"trusted", config.Options{Home: home, ProjectDir: project, TrustProject: true},
			"claude:.mcp.json proj:project user-tool:user"},
		{"project file as --config, untrusted", config.Options{Home: home, ProjectDir: project, File: projectFile},
			"proj:user user-tool:user"},
		{"project file as --config, trusted", config.Options{Home: home, ProjectDir: project, File: projectFile, TrustProject: true},
			"claude:.mcp.json proj:user user-tool:user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := config.Load(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Declarations(cfg, project)
			if err != nil {
				t.Fatal(err)
			}
			if names(got) != tt.want {
				t.Errorf("servers = %q, want %q", names(got), tt.want)
			}
		})
	}

	t.Run("a broken .mcp.json is not read", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeTestFile(t, filepath.Join(dir, ".mcp.json"), "{broken")
		cfg, err := config.Load(config.Options{Home: home, ProjectDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Declarations(cfg, dir); err != nil || names(got) != "user-tool:user" {
			t.Errorf("servers %q, err %v", names(got), err)
		}
	})
	t.Run("a project entry in a hand-built config", func(t *testing.T) {
		t.Parallel()
		// Whatever produced cfg, an entry the project file wrote stays
		// out while the workspace is untrusted.
		cfg := &config.Config{
			ProjectFile: projectFile,
			Plugins:     []config.PluginConfig{{Name: "proj", Type: "stdio", Command: "project-server"}},
			Sources:     map[string]string{config.EntryKey("plugins", "proj") + ".name": projectFile},
		}
		if got, err := Declarations(cfg, ""); err != nil || len(got) != 0 {
			t.Errorf("servers %q, err %v", names(got), err)
		}
	})
}

func TestGrants(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	path := GrantsPath(filepath.Join(home, "nested"))
	ws := t.TempDir()
	other := t.TempDir()
	g, err := LoadGrants(path)
	if err != nil {
		t.Fatal(err)
	}
	id := Identity(ServerConfig{Name: "s", Type: TypeStdio, Command: "srv"})
	if got := g.Check(ws, "s", id); got != NotGranted {
		t.Fatalf("fresh = %v", got)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := g.Grant(ws, "s", id, now); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		workspace string
		server    string
		identity  string
		want      Trust
	}{
		{"same identity", ws, "s", id, Granted},
		{"same workspace spelled differently", ws + string(filepath.Separator) + ".", "s", id, Granted},
		{"identity changed", ws, "s", Identity(ServerConfig{Name: "s", Type: TypeStdio, Command: "srv", Args: []string{"--evil"}}), IdentityChanged},
		{"other server", ws, "t", id, NotGranted},
		{"other workspace", other, "s", id, NotGranted},
	}
	reloaded, err := LoadGrants(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, gg := range []*Grants{g, reloaded} {
				if got := gg.Check(tt.workspace, tt.server, tt.identity); got != tt.want {
					t.Errorf("Check = %v, want %v", got, tt.want)
				}
			}
		})
	}

	// A second holder that loaded before the first grant still keeps it
	// when it records its own.
	stale, err := LoadGrants(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Grant(other, "s", id, now); err != nil {
		t.Fatal(err)
	}
	if err := stale.Grant(ws, "t", id, now); err != nil {
		t.Fatal(err)
	}
	final, err := LoadGrants(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ws, server string }{{ws, "s"}, {other, "s"}, {ws, "t"}} {
		if final.Check(c.ws, c.server, id) != Granted {
			t.Errorf("grant %s/%s lost", c.ws, c.server)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil || doc["version"] != float64(1) {
		t.Errorf("file = %s (%v)", data, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 && os.PathSeparator == '/' {
		t.Errorf("grant file mode %v, want owner-only", perm)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*.tmp"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestLoadGrantsCorrupt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), GrantsFile)
	writeTestFile(t, path, "{not json")
	if _, err := LoadGrants(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v", err)
	}
}

func TestUntrustedReason(t *testing.T) {
	t.Parallel()
	if r := UntrustedReason(IdentityChanged, "x"); !strings.Contains(r, "identity changed") || !strings.Contains(r, "--trust-project-mcp") {
		t.Errorf("changed: %q", r)
	}
	if r := UntrustedReason(NotGranted, "x"); !strings.Contains(r, "reasonix mcp trust x") {
		t.Errorf("not granted: %q", r)
	}
	if r := UntrustedReason(Granted, "x"); r != "" {
		t.Errorf("granted: %q", r)
	}
}
