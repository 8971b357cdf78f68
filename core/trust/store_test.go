package trust

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"reasonix/core/testenv"
)

func mustOpen(t *testing.T, home string) *Store {
	t.Helper()
	s, err := Open(home)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func wantState(t *testing.T, s *Store, ws string, want State) {
	t.Helper()
	got, err := s.Check(ws)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if got != want {
		t.Fatalf("Check = %s, want %s", got, want)
	}
}

func TestStoreDecisions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// steps run in order on one store; each names the state the
		// workspace must then be in, seen by that store and by a fresh one.
		steps []func(t *testing.T, s *Store, ws string)
		want  []State
	}{
		{
			name:  "nothing recorded",
			steps: []func(*testing.T, *Store, string){func(*testing.T, *Store, string) {}},
			want:  []State{Untrusted},
		},
		{
			name:  "trusted, edited, trusted again",
			steps: []func(*testing.T, *Store, string){trustStep, editStep, trustStep},
			want:  []State{Trusted, Changed, Trusted},
		},
		{
			name:  "declined, then edited: ask again",
			steps: []func(*testing.T, *Store, string){declineStep, editStep},
			want:  []State{Declined, Untrusted},
		},
		{
			name:  "declined after trusting",
			steps: []func(*testing.T, *Store, string){trustStep, declineStep},
			want:  []State{Trusted, Declined},
		},
		{
			name:  "revoked",
			steps: []func(*testing.T, *Store, string){trustStep, revokeStep(true), revokeStep(false)},
			want:  []State{Trusted, Untrusted, Untrusted},
		},
		{
			name:  "a memory write keeps the trust",
			steps: []func(*testing.T, *Store, string){trustStep, memoryStep},
			want:  []State{Trusted, Trusted},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			ws := testenv.Tree(t, base)
			s := mustOpen(t, home)
			for i, step := range tt.steps {
				step(t, s, ws)
				wantState(t, s, ws, tt.want[i])
				wantState(t, mustOpen(t, home), ws, tt.want[i])
			}
		})
	}
}

func trustStep(t *testing.T, s *Store, ws string) {
	t.Helper()
	if err := s.Trust(ws); err != nil {
		t.Fatal(err)
	}
}

func declineStep(t *testing.T, s *Store, ws string) {
	t.Helper()
	if err := s.Decline(ws); err != nil {
		t.Fatal(err)
	}
}

func editStep(t *testing.T, _ *Store, ws string) {
	t.Helper()
	writeFile(t, filepath.Join(ws, "reasonix.toml"), "[agent]\nsubagent_ask = \"allow\"\n")
}

func memoryStep(t *testing.T, _ *Store, ws string) {
	t.Helper()
	writeFile(t, filepath.Join(ws, ".reasonix/memory/new.md"), "remembered\n")
}

func revokeStep(want bool) func(*testing.T, *Store, string) {
	return func(t *testing.T, s *Store, ws string) {
		t.Helper()
		if found, err := s.Revoke(ws); err != nil || found != want {
			t.Fatalf("Revoke = %v, %v; want %v", found, err, want)
		}
	}
}

func TestStoreKeysByResolvedPath(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), testenv.Tree(t, base)
	link := filepath.Join(t.TempDir(), "link")
	symlink(t, ws, link)
	s := mustOpen(t, home)
	if err := s.Trust(link); err != nil {
		t.Fatal(err)
	}
	wantState(t, s, ws, Trusted)
	wantState(t, s, ws+string(filepath.Separator)+".", Trusted)
	// A link elsewhere borrows nothing from the directory it replaced.
	other := testenv.Tree(t, base)
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	symlink(t, other, link)
	wantState(t, s, link, Untrusted)
}

func TestStoreFile(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "not-yet")
	ws, other := testenv.Tree(t, base), testenv.Tree(t, base)
	s := mustOpen(t, home)
	stale := mustOpen(t, home)
	if err := s.Trust(ws); err != nil {
		t.Fatal(err)
	}
	// A store opened before that decision keeps it when it records its
	// own.
	if err := stale.Decline(other); err != nil {
		t.Fatal(err)
	}
	final := mustOpen(t, home)
	wantState(t, final, ws, Trusted)
	wantState(t, final, other, Declined)

	path := Path(home)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version    int `json:"version"`
		Workspaces map[string]struct {
			Decision, Digest string
		} `json:"workspaces"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.Version != 1 || len(doc.Workspaces) != 2 {
		t.Fatalf("file = %s (%v)", data, err)
	}
	key, _ := Canonical(ws)
	if r := doc.Workspaces[key]; r.Decision != "trusted" || r.Digest != mustDigest(t, ws) {
		t.Errorf("record of %s = %+v", key, r)
	}
	if runtime.GOOS != "windows" {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("store mode %v, want 0600", st.Mode().Perm())
		}
	}
	if leftovers, _ := filepath.Glob(filepath.Join(home, ".*.tmp")); len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestStoreRevokeGoneWorkspace(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), testenv.Tree(t, base)
	s := mustOpen(t, home)
	if err := s.Trust(ws); err != nil {
		t.Fatal(err)
	}
	key, _ := Canonical(ws)
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}
	if found, err := s.Revoke(key); err != nil || !found {
		t.Fatalf("Revoke = %v, %v", found, err)
	}
	if _, err := s.Check(ws); err == nil {
		t.Error("a workspace that is gone was checked without an error")
	}
}

func TestOpenDamaged(t *testing.T) {
	t.Parallel()
	ws := testenv.Tree(t, base)
	key, err := Canonical(ws)
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(key)
	digest := `"` + mustDigest(t, ws) + `"`
	tests := []struct {
		name, text, want string
	}{
		{"not json", "{not json", "invalid character"},
		{"no version", `{"workspaces":{}}`, "version 0"},
		{"newer version", `{"version":2,"workspaces":{}}`, "version 2"},
		{"relative workspace", `{"version":1,"workspaces":{"proj":{"decision":"trusted","digest":` + digest + `}}}`, "clean absolute path"},
		{"unknown decision", `{"version":1,"workspaces":{` + string(quoted) + `:{"decision":"maybe","digest":` + digest + `}}}`, `decision "maybe"`},
		{"no digest", `{"version":1,"workspaces":{` + string(quoted) + `:{"decision":"trusted"}}}`, "not a sha256 digest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			path := Path(home)
			if err := os.WriteFile(path, []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Open(home)
			if err == nil {
				t.Fatal("a damaged store opened")
			}
			for _, w := range []string{path, tt.want, "delete it"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestDamagedStoreIsNotOverwritten: a store damaged after it was opened is
// left for the user to repair, not replaced by a one-record file.
func TestDamagedStoreIsNotOverwritten(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), testenv.Tree(t, base)
	s := mustOpen(t, home)
	if err := os.WriteFile(Path(home), []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Trust(ws); err == nil {
		t.Fatal("Trust wrote over a damaged store")
	}
	if data, _ := os.ReadFile(Path(home)); string(data) != "{broken" {
		t.Errorf("store = %q", data)
	}
}

// TestKeep: Reasonix's own edit of reasonix.toml keeps a trusted workspace
// trusted, leaves an untrusted one untrusted, and a failed edit changes
// nothing.
func TestKeep(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(ws, "reasonix.toml"), "[permissions]\nallow = [\"Bash(go test:*)\"]\n")
	edit := func(text string) func() error {
		return func() error { return os.WriteFile(filepath.Join(ws, "reasonix.toml"), []byte(text), 0o644) }
	}

	before, err := Keep(home, ws, edit("[permissions]\nallow = [\"Bash(ls:*)\"]\n"))
	if err != nil || before != Untrusted {
		t.Fatalf("untrusted: before %q, %v", before, err)
	}
	wantState(t, mustOpen(t, home), ws, Untrusted)

	trustStep(t, mustOpen(t, home), ws)
	before, err = Keep(home, ws, edit("[permissions]\nallow = [\"Bash(ls:*)\", \"Bash(pwd)\"]\n"))
	if err != nil || before != Trusted {
		t.Fatalf("trusted: before %q, %v", before, err)
	}
	wantState(t, mustOpen(t, home), ws, Trusted)

	failed := errors.New("disk full")
	before, err = Keep(home, ws, func() error {
		if err := edit("changed behind the failure")(); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) || before != Trusted {
		t.Fatalf("failed edit: before %q, %v", before, err)
	}
	// The failed edit's change is not trusted in passing.
	wantState(t, mustOpen(t, home), ws, Changed)
}
