package permission

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestPersistRule(t *testing.T) {
	t.Parallel()
	const other = `# Reasonix project config
# keep this comment

[agent]
# note = "[permissions]"
model = "deepseek"   # trailing comment
prompt = """
[permissions]
allow = ["not this"]
"""
`
	cases := []struct {
		name string
		doc  *string // nil: no file yet
		rule string
		want string
	}{
		{
			name: "missing file",
			rule: "Bash(go test:*)",
			want: "[permissions]\nallow = ['Bash(go test:*)']\n",
		},
		{
			name: "empty file",
			doc:  ptr(""),
			rule: "Bash(go test:*)",
			want: "[permissions]\nallow = ['Bash(go test:*)']\n",
		},
		{
			name: "no permissions table",
			doc:  ptr(other),
			rule: "Bash(go test:*)",
			want: other + "\n[permissions]\nallow = ['Bash(go test:*)']\n",
		},
		{
			name: "no final newline",
			doc:  ptr("[agent]\nmodel = \"x\""),
			rule: "Edit(docs/**)",
			want: "[agent]\nmodel = \"x\"\n\n[permissions]\nallow = ['Edit(docs/**)']\n",
		},
		{
			name: "table without allow",
			doc:  ptr("[permissions]\n# fallback\nmode = \"ask\" # writers\ndeny = [\n  \"Bash(rm -rf*)\",\n]\n\n[sandbox]\nbash = \"off\"\n"),
			rule: "Bash(go test:*)",
			want: "[permissions]\n# fallback\nmode = \"ask\" # writers\ndeny = [\n  \"Bash(rm -rf*)\",\n]\nallow = ['Bash(go test:*)']\n\n[sandbox]\nbash = \"off\"\n",
		},
		{
			name: "empty table",
			doc:  ptr("[permissions]\n\n[sandbox]\n"),
			rule: "Bash(make)",
			want: "[permissions]\nallow = ['Bash(make)']\n\n[sandbox]\n",
		},
		{
			name: "inline array",
			doc:  ptr("[permissions]\nallow = [\"Bash(git status:*)\"] # keep\nask = []\n"),
			rule: "Bash(go test:*)",
			want: "[permissions]\nallow = [\"Bash(git status:*)\", 'Bash(go test:*)'] # keep\nask = []\n",
		},
		{
			name: "inline array trailing comma",
			doc:  ptr("[permissions]\nallow = [ 'a', ]\n"),
			rule: "Bash(make)",
			want: "[permissions]\nallow = [ 'a', 'Bash(make)', ]\n",
		},
		{
			name: "empty inline array",
			doc:  ptr("[permissions]\nallow = [ ]\n"),
			rule: "Bash(make)",
			want: "[permissions]\nallow = ['Bash(make)']\n",
		},
		{
			name: "multi-line array with trailing comma",
			doc:  ptr("[permissions]\nallow = [\n    \"Bash(git status:*)\", # status\n    # \"Bash(old)\",\n]\nmode = \"ask\"\n"),
			rule: "Bash(go test:*)",
			want: "[permissions]\nallow = [\n    \"Bash(git status:*)\", # status\n    # \"Bash(old)\",\n    'Bash(go test:*)',\n]\nmode = \"ask\"\n",
		},
		{
			name: "multi-line array without trailing comma",
			doc:  ptr("[permissions]\nallow = [\n  \"a\",\n  \"b\" # last\n]\n"),
			rule: "Bash(make)",
			want: "[permissions]\nallow = [\n  \"a\",\n  \"b\", # last\n  'Bash(make)'\n]\n",
		},
		{
			name: "multi-line array closing after element",
			doc:  ptr("[permissions]\nallow = [\"a\",\n         \"b\"]\n"),
			rule: "Bash(make)",
			want: "[permissions]\nallow = [\"a\",\n         \"b\",\n         'Bash(make)']\n",
		},
		{
			name: "multi-line empty array",
			doc:  ptr("[permissions]\nallow = [\n  # none yet\n]\n"),
			rule: "Bash(make)",
			want: "[permissions]\nallow = [\n  # none yet\n    'Bash(make)',\n]\n",
		},
		{
			name: "crlf line endings",
			doc:  ptr("[permissions]\r\nmode = \"ask\"\r\n"),
			rule: "Bash(make)",
			want: "[permissions]\r\nmode = \"ask\"\r\nallow = ['Bash(make)']\r\n",
		},
		{
			name: "dotted keys at the root",
			doc:  ptr("permissions.mode = \"ask\"\n\n[agent]\nmodel = \"x\"\n"),
			rule: "Bash(make)",
			want: "permissions.mode = \"ask\"\npermissions.allow = ['Bash(make)']\n\n[agent]\nmodel = \"x\"\n",
		},
		{
			name: "dotted allow at the root",
			doc:  ptr("permissions.allow = [\"a\"]\n"),
			rule: "Bash(make)",
			want: "permissions.allow = [\"a\", 'Bash(make)']\n",
		},
		{
			name: "quoted key",
			doc:  ptr("[\"permissions\"]\n\"allow\" = [\"a\"]\n"),
			rule: "Bash(make)",
			want: "[\"permissions\"]\n\"allow\" = [\"a\", 'Bash(make)']\n",
		},
		{
			name: "table after sub-table",
			doc:  ptr("[permissions.extra]\nx = 1\n"),
			rule: "Bash(make)",
			want: "[permissions.extra]\nx = 1\n\n[permissions]\nallow = ['Bash(make)']\n",
		},
		{
			name: "rule needing a basic string",
			doc:  ptr(""),
			rule: "Bash(echo 'it''s')",
			want: "[permissions]\nallow = [\"Bash(echo 'it''s')\"]\n",
		},
		{
			name: "rule with newline",
			doc:  ptr(""),
			rule: "Bash(printf \"a\\n\"\necho \\)",
			want: "[permissions]\nallow = [\"Bash(printf \\\"a\\\\n\\\"\\necho \\\\)\"]\n",
		},
		{
			name: "stored canonical",
			doc:  ptr(""),
			rule: "bash(go test *)",
			want: "[permissions]\nallow = ['Bash(go test:*)']\n",
		},
		{
			name: "duplicate",
			doc:  ptr("[permissions]\nallow = [\"Bash(go test:*)\"]\n"),
			rule: "Bash(go test:*)",
			want: "[permissions]\nallow = [\"Bash(go test:*)\"]\n",
		},
		{
			name: "duplicate in another spelling",
			doc:  ptr("[permissions]\nallow = [\n  \"Bash(go test *)\",\n]\n"),
			rule: "Bash(go test:*)",
			want: "[permissions]\nallow = [\n  \"Bash(go test *)\",\n]\n",
		},
		{
			name: "other tables with allow keys",
			doc:  ptr("[sandbox]\nallow = [\"x\"]\n[permissions]\nmode = \"ask\"\n"),
			rule: "Bash(make)",
			want: "[sandbox]\nallow = [\"x\"]\n[permissions]\nmode = \"ask\"\nallow = ['Bash(make)']\n",
		},
		{
			name: "multi-line strings ending in quotes",
			doc:  ptr("a = \"\"\"x\n[permissions]\"\"\"\"\"\nb = '''y\nallow = ['''''\n[permissions]\nmode = \"ask\"\n"),
			rule: "Bash(make)",
			want: "a = \"\"\"x\n[permissions]\"\"\"\"\"\nb = '''y\nallow = ['''''\n[permissions]\nmode = \"ask\"\nallow = ['Bash(make)']\n",
		},
		{
			name: "datetimes and special floats survive",
			doc:  ptr("when = 1979-05-27T07:32:00-08:00\nday = 1979-05-27\nf = nan\n[permissions]\n"),
			rule: "Bash(make)",
			want: "when = 1979-05-27T07:32:00-08:00\nday = 1979-05-27\nf = nan\n[permissions]\nallow = ['Bash(make)']\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "reasonix.toml")
			if tc.doc != nil {
				if err := os.WriteFile(file, []byte(*tc.doc), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := PersistRule(file, tc.rule); err != nil {
				t.Fatalf("PersistRule: %v", err)
			}
			got, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("file =\n%s\nwant\n%s", got, tc.want)
			}
			var cfg struct {
				Permissions struct{ Allow []string }
			}
			if _, err := toml.Decode(string(got), &cfg); err != nil {
				t.Fatalf("result does not parse: %v", err)
			}
			r, _ := ParseRule(tc.rule)
			if !containsRule(cfg.Permissions.Allow, r) {
				t.Errorf("allow = %q, missing %s", cfg.Permissions.Allow, r)
			}
			if tc.doc != nil && runtime.GOOS != "windows" {
				if info, err := os.Stat(file); err != nil || info.Mode().Perm() != 0o600 {
					t.Errorf("mode after edit = %v, %v; want 0600 kept", info.Mode(), err)
				}
			}
			entries, err := os.ReadDir(filepath.Dir(file))
			if err != nil || len(entries) != 1 {
				t.Errorf("directory holds %d entries (%v), want only the config", len(entries), err)
			}
		})
	}
}

func containsRule(list []string, r Rule) bool {
	for _, s := range list {
		if have, err := ParseRule(s); err == nil && have == r {
			return true
		}
	}
	return false
}

func ptr(s string) *string { return &s }

func TestPersistRuleRefuses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		doc  string
		rule string
		want string // in the error
	}{
		{"bad rule", "", "Bash(", "permission rule"},
		{"invalid toml", "[permissions\nallow = [", "Bash(make)", "not valid TOML"},
		{"allow not an array", "[permissions]\nallow = \"Bash\"\n", "Bash(make)", "not an array"},
		{"permissions not a table", "permissions = 3\n", "Bash(make)", "not a table"},
		{"permissions inline table", "permissions = { mode = \"ask\" }\n", "Bash(make)", "inline"},
		{"array of tables", "[[permissions]]\nmode = \"ask\"\n", "Bash(make)", "not a table"},
		{"table spelled in another case", "[Permissions]\nmode = \"ask\"\n", "Bash(make)", "only in case"},
		{"allow spelled in another case", "[permissions]\nAllow = []\n", "Bash(make)", "only in case"},
		{"invalid utf-8 rule", "", "Bash(echo \xff)", "refusing to write"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "reasonix.toml")
			if tc.doc != "" {
				if err := os.WriteFile(file, []byte(tc.doc), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := PersistRule(file, tc.rule)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("PersistRule error = %v, want one mentioning %q", err, tc.want)
			}
			got, readErr := os.ReadFile(file)
			switch {
			case tc.doc == "" && !errors.Is(readErr, fs.ErrNotExist):
				t.Errorf("file created on error: %q, %v", got, readErr)
			case tc.doc != "" && string(got) != tc.doc:
				t.Errorf("file changed on error:\n%s", got)
			}
		})
	}
}

func TestPersistRuleThroughSymlink(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	dir := t.TempDir()
	real := filepath.Join(dir, "real.toml")
	link := filepath.Join(dir, "reasonix.toml")
	if err := os.WriteFile(real, []byte("[permissions]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := PersistRule(link, "Bash(make)"); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("symlink replaced: %v, %v", info, err)
	}
	got, _ := os.ReadFile(real)
	if !strings.Contains(string(got), "Bash(make)") {
		t.Errorf("target not updated: %q", got)
	}
}

func TestPersistRuleTwice(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "reasonix.toml")
	for _, r := range []string{"Bash(go test:*)", "Edit(docs/**)", "Bash(go test *)", "Bash(make)"} {
		if err := PersistRule(file, r); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(file)
	want := "[permissions]\nallow = ['Bash(go test:*)', 'Edit(docs/**)', 'Bash(make)']\n"
	if string(got) != want {
		t.Errorf("file =\n%s\nwant\n%s", got, want)
	}
}

// TestQuoteTOML pins how a rule is spelled in the file: literal when it
// can be, so the double quotes of shell commands stay readable.
func TestQuoteTOML(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain", "Bash(make)", `'Bash(make)'`},
		{"double quotes and backslash", `Bash(echo "a\b")`, `'Bash(echo "a\b")'`},
		{"tab stays literal", "Bash(printf\tx)", "'Bash(printf\tx)'"},
		{"single quote", "Bash(echo 'hi')", `"Bash(echo 'hi')"`},
		{"single and double quote", `Bash(echo 'a' "b\c")`, `"Bash(echo 'a' \"b\\c\")"`},
		{"newline", "Bash(a\nb)", `"Bash(a\nb)"`},
		{"control", "Bash(a\x01b)", `"Bash(a\u0001b)"`},
		{"delete", "Bash(a\x7fb)", `"Bash(a\u007Fb)"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := quoteTOML(tt.in)
			if got != tt.want {
				t.Errorf("quoteTOML(%q) = %s, want %s", tt.in, got, tt.want)
			}
			var v struct{ S string }
			if _, err := toml.Decode("S = "+got, &v); err != nil || v.S != tt.in {
				t.Errorf("%s decodes to %q, %v; want %q", got, v.S, err, tt.in)
			}
		})
	}
}
