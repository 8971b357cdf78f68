package memory

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testStore is a store over fresh project and home directories whose clock
// reads *now.
func testStore(t *testing.T) (*Store, string, string, *time.Time) {
	t.Helper()
	project, home := t.TempDir(), t.TempDir()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s := NewStore(project, home)
	s.now = func() time.Time { return now }
	return s, project, home, &now
}

func mustSave(t *testing.T, s *Store, sc Scope, name, desc, body string) Saved {
	t.Helper()
	saved, err := s.Save(sc, name, desc, body)
	if err != nil {
		t.Fatalf("Save(%s, %s): %v", sc, name, err)
	}
	return saved
}

func TestSaveCreatesUpdatesAndKeeps(t *testing.T) {
	t.Parallel()
	s, project, home, now := testStore(t)

	saved := mustSave(t, s, Project, "db-host", "", "\n# Staging DB\nThe staging DB is db.internal:5432.\n\n")
	if !saved.Created || saved.Unchanged {
		t.Fatalf("first save = %+v, want created", saved)
	}
	wantPath := filepath.Join(project, ".reasonix", "memory", "db-host.md")
	if saved.Path != wantPath {
		t.Fatalf("path = %s, want %s", saved.Path, wantPath)
	}
	data, err := os.ReadFile(wantPath)
	if err != nil {
		t.Fatal(err)
	}
	want := "---\nname: db-host\ndescription: Staging DB\nscope: project\nupdated: 2026-12-01T12:00:00Z\n---\n" +
		"# Staging DB\nThe staging DB is db.internal:5432.\n"
	if string(data) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", data, want)
	}

	*now = now.Add(time.Hour)
	again := mustSave(t, s, Project, "db-host", "", "# Staging DB\nThe staging DB is db.internal:5432.")
	if !again.Unchanged || again.Created {
		t.Fatalf("same save = %+v, want unchanged", again)
	}
	if data2, _ := os.ReadFile(wantPath); string(data2) != want {
		t.Fatalf("an unchanged save rewrote the file:\n%s", data2)
	}

	upd := mustSave(t, s, Project, "db-host", "", "The staging DB moved to db2.internal.")
	if upd.Created || upd.Unchanged {
		t.Fatalf("update = %+v", upd)
	}
	m, err := s.Read(Project, "db-host")
	if err != nil {
		t.Fatal(err)
	}
	if m.Description != "Staging DB" || m.Body != "The staging DB moved to db2.internal." || !m.Updated.Equal(*now) {
		t.Fatalf("after update: %+v (the description must be kept, the time moved on)", m)
	}

	user := mustSave(t, s, User, "editor", "Editor choice", "Prefers vim.")
	if user.Path != filepath.Join(home, "memory", "editor.md") {
		t.Fatalf("user memory at %s", user.Path)
	}
}

func TestSaveRejects(t *testing.T) {
	t.Parallel()
	s, project, _, _ := testStore(t)
	tests := []struct {
		name, mem, desc, body string
		want                  string
	}{
		{"bad name", "../x", "", "b", "not a slug"},
		{"empty body", "x", "", " \n\t", "content is empty"},
		{"huge body", "x", "", strings.Repeat("a", MaxBodyBytes+1), "the limit is 16384"},
		{"long description", "x", strings.Repeat("d", MaxDescriptionRunes+1), "b", "description is 201 characters"},
		{"invalid utf-8", "x", "", "a\xffb", "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.Save(Project, tt.mem, tt.desc, tt.body); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Save = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(project, ".reasonix")); !os.IsNotExist(err) {
		t.Fatalf("a rejected save created files (stat: %v)", err)
	}
}

func TestMissingDirectories(t *testing.T) {
	t.Parallel()
	s := NewStore("", "")
	if _, err := s.Save(Project, "x", "", "b"); err == nil || !strings.Contains(err.Error(), "needs a project directory") {
		t.Errorf("Save(project) without a project = %v", err)
	}
	if _, err := s.Read(User, "x"); err == nil || !strings.Contains(err.Error(), "needs the reasonix home") {
		t.Errorf("Read(user) without a home = %v", err)
	}
	if got := s.Available(); len(got) != 0 {
		t.Errorf("Available() = %v", got)
	}
	if got := NewStore("", t.TempDir()).Available(); len(got) != 1 || got[0] != User {
		t.Errorf("Available() with a home only = %v", got)
	}
}

func TestListShadowsAndSkips(t *testing.T) {
	t.Parallel()
	s, project, home, _ := testStore(t)
	mustSave(t, s, User, "editor", "", "vim")
	mustSave(t, s, User, "db-host", "", "user's db")
	mustSave(t, s, Project, "db-host", "", "project's db")
	mustSave(t, s, Project, "ci", "", "ci runs on main")
	mustSave(t, s, Project, "old", "", "stale")
	if _, err := s.Archive(Project, "old"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(project, ".reasonix", "memory")
	// Files the tools could not address, and leftovers, are not memories.
	for _, f := range []string{"Bad Name.md", "notes.txt", ".db-host.md.123.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The file's location decides name and scope, not its frontmatter.
	if err := os.WriteFile(filepath.Join(home, "memory", "copied.md"), []byte("---\nname: ci\nscope: project\n---\ncopy"), 0o644); err != nil {
		t.Fatal(err)
	}

	entries, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Ref()+"<"+string(e.Hides)+">="+e.Body)
	}
	want := []string{"project/ci<>=ci runs on main", "project/db-host<user>=project's db", "user/copied<>=copy", "user/editor<>=vim"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("List() =\n%v\nwant\n%v", got, want)
	}

	users, err := s.List(User)
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 3 || users[1].Ref() != "user/db-host" || users[1].Hides != "" {
		t.Fatalf("List(user) = %+v", users)
	}
}

func TestArchiveMovesNeverDeletes(t *testing.T) {
	t.Parallel()
	s, project, _, _ := testStore(t)
	mustSave(t, s, Project, "db-host", "", "first")
	first, err := s.Archive(Project, "db-host")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(project, ".reasonix", "memory")
	if want := filepath.Join(dir, "archive", "db-host-20261201T120000Z.md"); first != want {
		t.Fatalf("archived to %s, want %s", first, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "db-host.md")); !os.IsNotExist(err) {
		t.Fatalf("the active file is still there (stat: %v)", err)
	}
	if _, err := s.Read(Project, "db-host"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Read after Archive = %v, want ErrNotFound", err)
	}

	// Saved and forgotten again within the same second: a second archive
	// file, the first untouched.
	mustSave(t, s, Project, "db-host", "", "second")
	second, err := s.Archive(Project, "db-host")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(second) != "db-host-20261201T120000Z-2.md" {
		t.Fatalf("second archive = %s", second)
	}
	for path, body := range map[string]string{first: "first", second: "second"} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if m := Parse(data); m.Body != body || m.Name != "db-host" {
			t.Errorf("%s holds %+v, want body %q", path, m, body)
		}
	}

	if _, err := s.Archive(Project, "db-host"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Archive of a forgotten memory = %v, want ErrNotFound", err)
	}
	if _, err := s.Archive(Project, "../x"); err == nil || !strings.Contains(err.Error(), "not a slug") {
		t.Fatalf("Archive(../x) = %v", err)
	}
}
