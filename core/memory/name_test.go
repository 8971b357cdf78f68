package memory

import (
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		wantErr string // "" for valid
	}{
		{name: "db-host"},
		{name: "a"},
		{name: "go_version_2"},
		{name: strings.Repeat("x", MaxNameLen)},
		{name: "", wantErr: "empty"},
		{name: strings.Repeat("x", MaxNameLen+1), wantErr: "the limit is 64"},
		{name: "DB Host", wantErr: `(for example "db-host")`},
		{name: "../etc/passwd", wantErr: `(for example "etc-passwd")`},
		{name: ".hidden", wantErr: "not a slug"},
		{name: "-flag", wantErr: "starting with a letter or digit"},
		{name: "_x", wantErr: "not a slug"},
		{name: "a/b", wantErr: "not a slug"},
		{name: `a\b`, wantErr: "not a slug"},
		{name: "note.md", wantErr: `(for example "note-md")`},
		{name: "数据库", wantErr: "not a slug"},
		{name: "con", wantErr: "reserved on Windows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateName(tt.name)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ValidateName(%q) = %v, want nil", tt.name, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ValidateName(%q) = %v, want an error containing %q", tt.name, err, tt.wantErr)
			}
		})
	}
}

func TestSlug(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"DB Host", "db-host"},
		{"  staging / db  ", "staging-db"},
		{"go_version", "go_version"},
		{"__x", "x"},
		{"数据库", ""},
		{"con", ""},
		{strings.Repeat("ab ", 40), strings.TrimRight(strings.Repeat("ab-", 22)[:MaxNameLen], "-")},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got := Slug(tt.in)
			if got != tt.want {
				t.Fatalf("Slug(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got != "" {
				if err := ValidateName(got); err != nil {
					t.Fatalf("Slug(%q) = %q, which is not valid: %v", tt.in, got, err)
				}
			}
		})
	}
}

func TestParseScope(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Scope{"": Project, "project": Project, " User ": User} {
		if got, err := ParseScope(in, Project); err != nil || got != want {
			t.Errorf("ParseScope(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseScope("all", Project); err == nil || !strings.Contains(err.Error(), `got "all"`) {
		t.Errorf("ParseScope(all) = %v, want an error", err)
	}
}
