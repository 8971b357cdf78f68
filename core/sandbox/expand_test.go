package sandbox

import (
	"strings"
	"testing"
)

// fakeEnv is a LookupEnv over a fixed map.
func fakeEnv(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

func TestExpandPath(t *testing.T) {
	t.Parallel()
	env := fakeEnv(map[string]string{"HOME": "/home/u", "SECRETS": "/srv/secrets", "EMPTY": ""})
	tests := []struct {
		name    string
		in      string
		env     func(string) (string, bool)
		want    string
		wantErr string
	}{
		{name: "plain path unchanged", in: "/etc/shadow", env: env, want: "/etc/shadow"},
		{name: "variable", in: "${HOME}/.ssh", env: env, want: "/home/u/.ssh"},
		{name: "two variables", in: "${SECRETS}/${HOME}", env: env, want: "/srv/secrets//home/u"},
		{name: "unset variable is empty", in: "/x${NOPE}/y", env: env, want: "/x/y"},
		{name: "default when unset", in: "${NOPE:-/opt/keys}/id", env: env, want: "/opt/keys/id"},
		{name: "default when empty", in: "${EMPTY:-/opt/keys}", env: env, want: "/opt/keys"},
		{name: "value wins over default", in: "${SECRETS:-/opt/keys}", env: env, want: "/srv/secrets"},
		{name: "empty default", in: "/a${NOPE:-}", env: env, want: "/a"},
		{name: "tilde slash", in: "~/.aws", env: env, want: "/home/u/.aws"},
		{name: "tilde alone", in: "~", env: env, want: "/home/u"},
		{name: "tilde then variable", in: "~/${EMPTY:-.kube}", env: env, want: "/home/u/.kube"},
		{name: "tilde inside is literal", in: "/a/~/b", env: env, want: "/a/~/b"},
		{name: "tilde user form is literal", in: "~root/x", env: env, want: "~root/x"},
		{name: "bare dollar is literal", in: "/a/$HOME/b", env: env, want: "/a/$HOME/b"},
		{name: "userprofile when home unset", in: "~/x", env: fakeEnv(map[string]string{"USERPROFILE": `C:\Users\u`}), want: `C:\Users\u/x`},
		{name: "tilde without home", in: "~/x", env: fakeEnv(nil), wantErr: "~ needs HOME"},
		{name: "unterminated", in: "/a/${HOME", env: env, wantErr: "unterminated"},
		{name: "empty name", in: "${}", env: env, wantErr: "variable name"},
		{name: "bad name", in: "${1X}", env: env, wantErr: "variable name"},
		// The first "}" closes a reference, so a default cannot nest one.
		{name: "nested default is text", in: "${EMPTY:-${B}}", env: env, want: "${B}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := expandPath(tt.in, tt.env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("expandPath(%q) = %q, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("expandPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

// FuzzExpandPath checks that configured paths never panic the expander and
// that text without references comes back unchanged.
func FuzzExpandPath(f *testing.F) {
	for _, s := range []string{"${HOME}/.ssh", "~/x", "${A:-/b}", "${", "$", "~", "${X}}", "/plain"} {
		f.Add(s)
	}
	env := fakeEnv(map[string]string{"HOME": "/h", "A": ""})
	f.Fuzz(func(t *testing.T, s string) {
		got, err := expandPath(s, env)
		if err != nil {
			return
		}
		if !strings.Contains(s, "${") && !strings.HasPrefix(s, "~") && got != s {
			t.Fatalf("expandPath(%q) = %q; text without references must not change", s, got)
		}
	})
}
