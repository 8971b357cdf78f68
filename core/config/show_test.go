package config

import (
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

const showUser = `
default_model = "corp"

[agent]
temperature = 0.3
subagent_models = { review = "corp" }

[[providers]]
name = "corp"
kind = "openai"
base_url = "https://llm.corp.example"
model = "big"
api_key_env = "CORP_API_KEY"
model_overrides = { big = { context_window = 64000 } }

[serve]
auth_mode = "password"
token = "tok-123"
password_hash = "$2a$10$abcdef"

[[plugins]]
name = "stripe"
type = "http"
url = "https://mcp.stripe.com"
headers = { Authorization = "Bearer sk_live_1" }

[[plugins]]
name = "local"
command = "srv"
args = ["--api-key", "ARG-VISIBLE"]
env = { FOO = "plain-secret", "odd key" = "v2" }

[environment.tools]
go = "/usr/local/go/bin/go"
`

func TestShow(t *testing.T) {
	t.Parallel()
	c, f := mustLoad(t, layout{user: showUser, project: "[agent]\ncompact_ratio = 0.75\n"})
	out, err := c.Show()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"tok-123", "$2a$10$abcdef", "sk_live_1", "plain-secret", "v2"} {
		if strings.Contains(out, secret) {
			t.Errorf("output leaks %q:\n%s", secret, out)
		}
	}
	from := func(s string) string { return "  # from " + s }
	for _, w := range []string{
		`default_model = "corp"` + from(f.user),
		`temperature = 0.3` + from(f.user),
		`compact_ratio = 0.75` + from(f.project),
		`compact_force_ratio = 0.9` + from("default"),
		`language = ""` + from("default"),
		"[agent.subagent_models]\nreview = \"corp\"" + from(f.user),
		`api_key_env = "CORP_API_KEY"` + from(f.user),
		`model_overrides = { big = { context_window = 64000 } }` + from(f.user),
		`stall_timeout_seconds = 120` + from("default"),
		`token = "***"` + from(f.user),
		`password_hash = "***"` + from(f.user),
		`headers = { Authorization = "***" }` + from(f.user),
		`env = { FOO = "***", "odd key" = "***" }` + from(f.user),
		`args = ["--api-key", "ARG-VISIBLE"]` + from(f.user),
		`type = "stdio"` + from("default"),
		`chat_url = ""` + from("default"),
		"[environment.tools]\ngo = \"/usr/local/go/bin/go\"" + from(f.user),
		`subagent_efforts = {}` + from("default"),
		`forbid_read = []` + from("default"),
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}

	// The rendering is TOML that loads back to the same effective values.
	var back Config
	if _, err := toml.Decode(out, &back); err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out)
	}
	if back.Agent.CompactRatio != 0.75 || len(back.Plugins) != 2 || back.Providers[0].ModelOverrides["big"].ContextWindow != 64000 {
		t.Errorf("round trip lost values: %+v", back)
	}

	again, err := c.Show()
	if err != nil || again != out {
		t.Errorf("Show is not stable")
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		path []string
		in   string
		want string
	}{
		{"plugin env", []string{"plugins", "env", "HOME"}, "/home/u", Redacted},
		{"plugin header", []string{"plugins", "headers", "X-Trace"}, "1", Redacted},
		{"serve token", []string{"serve", "token"}, "t", Redacted},
		{"password hash", []string{"serve", "password_hash"}, "h", Redacted},
		{"name with secret", []string{"agent", "client_secret"}, "s", Redacted},
		{"map key with Key", []string{"environment", "tools", "KeyTool"}, "/bin/k", Redacted},
		{"variable name stays", []string{"providers", "api_key_env"}, "DEEPSEEK_API_KEY", "DEEPSEEK_API_KEY"},
		{"ordinary value stays", []string{"serve", "addr"}, "127.0.0.1:8787", "127.0.0.1:8787"},
		{"empty stays empty", []string{"serve", "token"}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := redact(tt.path, tt.in); got != tt.want {
				t.Errorf("redact(%q, %q) = %q, want %q", tt.path, tt.in, got, tt.want)
			}
		})
	}
}

// TestQuoteString pins the exact spelling: Sources keys are built with it,
// and other packages look keys up through EntryKey.
func TestQuoteString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", `""`},
		{"plain", "plain", `"plain"`},
		{"single quote", "it's", `"it's"`},
		{"double quote", `q"uote`, `"q\"uote"`},
		{"backslash", `back\slash`, `"back\\slash"`},
		{"short escapes", "n\nr\rt\t", `"n\nr\rt\t"`},
		{"other controls", "b\bf\fnul\x00esc\x1bdel\x7f", `"b\u0008f\u000Cnul\u0000esc\u001Bdel\u007F"`},
		{"unicode", "中文 é", `"中文 é"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := QuoteString(tt.in); got != tt.want {
				t.Errorf("QuoteString(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestEntryKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, array, entry, want string
	}{
		{"bare", "plugins", "fs-server_2", "plugins[fs-server_2]"},
		{"empty", "plugins", "", `plugins[""]`},
		{"dotted", "providers", "corp.v2", `providers["corp.v2"]`},
		{"space and quote", "plugins", `my "srv"`, `plugins["my \"srv\""]`},
		{"control", "plugins", "a\tb\x01", `plugins["a\tb\u0001"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := EntryKey(tt.array, tt.entry); got != tt.want {
				t.Errorf("EntryKey(%q, %q) = %s, want %s", tt.array, tt.entry, got, tt.want)
			}
		})
	}
}

func TestQuoteStringDecodes(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "line\nbreak\ttab\r", "ctl\x01\x7f", "中文"} {
		var v struct{ S string }
		if _, err := toml.Decode("S = "+QuoteString(s), &v); err != nil || v.S != s {
			t.Errorf("QuoteString(%q) = %s decodes to %q, %v", s, QuoteString(s), v.S, err)
		}
	}
}
