package command

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix/core/testenv"
)

func TestDirs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, home, cwd string
		want            []string
	}{
		{"both", "/h/.reasonix", "/w", []string{"/h/.reasonix/commands", "/w/.reasonix/commands"}},
		{"no home", "", "/w", []string{"/w/.reasonix/commands"}},
		{"same directory", "/h/.reasonix", "/h", []string{"/h/.reasonix/commands"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Dirs(tc.home, tc.cwd); !slices.Equal(got, tc.want) {
				t.Fatalf("Dirs = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	user, project := t.TempDir(), t.TempDir()
	testenv.WriteTree(t, user, map[string]string{
		"review.md":     "---\ndescription: user review\n---\nUser review $ARGUMENTS",
		"only-user.md":  "Just the user's.\nSecond line.",
		"git/commit.md": "user commit",
	})
	testenv.WriteTree(t, project, map[string]string{
		"review.md":           "---\r\ndescription: Review the staged diff\r\nargument-hint: [focus-area]\r\nmodel: ignored\r\n# a comment\r\n\r\n---\r\nReview the staged diff. Focus on $ARGUMENTS.\r\n",
		"git/commit.md":       "\ufeff---\nDescription: \"Commit it\"\n---\n\nCommit: $1\n",
		"a/b/c.md":            "deep",
		"notes.txt":           "not a command",
		".hidden.md":          "skipped",
		".drafts/x.md":        "skipped",
		"bad/unterminated.md": "---\ndescription: x\nbody",
		"bad/nocolon.md":      "---\ndescription x\n---\nbody",
		"bad/latin1.md":       "caf\xe9",
		"bad/empty-body.md":   "---\ndescription: nothing\n---\n \n",
		"bad/my cmd.md":       "bad name",
		".md":                 "no name",
		"help.md":             "shadows a built-in",
		"mcp__srv__p.md":      "looks like an MCP prompt",
	})
	// A directory that does not exist between them is no problem.
	cmds, problems := Load(user, filepath.Join(t.TempDir(), "missing"), project)
	got := map[string]Command{}
	var names []string
	for _, c := range cmds {
		got[c.Name] = c
		names = append(names, c.Name)
	}
	if want := []string{"a:b:c", "git:commit", "only-user", "review"}; !slices.Equal(names, want) {
		t.Fatalf("names = %q, want %q", names, want)
	}
	review := got["review"]
	if review.Description != "Review the staged diff" || review.ArgumentHint != "[focus-area]" ||
		review.Body != "Review the staged diff. Focus on $ARGUMENTS." || review.Source != SourceProject ||
		review.Path != filepath.Join(project, "review.md") {
		t.Fatalf("review = %+v", review)
	}
	if c := got["git:commit"]; c.Description != "Commit it" || c.Body != "Commit: $1" || c.Source != SourceProject {
		t.Fatalf("git:commit = %+v", c)
	}
	if c := got["only-user"]; c.Source != SourceUser || c.Description != "Just the user's." {
		t.Fatalf("only-user = %+v", c)
	}
	var bad []string
	for _, p := range problems {
		rel, _ := filepath.Rel(project, p.Path)
		bad = append(bad, filepath.ToSlash(rel))
		if p.Err == nil || !strings.Contains(p.String(), p.Path) {
			t.Errorf("problem %+v", p)
		}
	}
	slices.Sort(bad)
	want := []string{".md", "bad/empty-body.md", "bad/latin1.md", "bad/my cmd.md", "bad/nocolon.md", "bad/unterminated.md", "help.md", "mcp__srv__p.md"}
	if !slices.Equal(bad, want) {
		t.Fatalf("problems = %q, want %q", bad, want)
	}
}

func TestLoadMissingDirectory(t *testing.T) {
	t.Parallel()
	cmds, problems := Load(filepath.Join(t.TempDir(), "nope"))
	if len(cmds) != 0 || len(problems) != 0 {
		t.Fatalf("got %v, %v", cmds, problems)
	}
}

func TestLoadUnreadable(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode")
	}
	dir := t.TempDir()
	testenv.WriteTree(t, dir, map[string]string{"locked.md": "x", "ok.md": "fine", "sub/x.md": "x"})
	if err := os.Chmod(filepath.Join(dir, "locked.md"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "sub"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "sub"), 0o755) })
	cmds, problems := Load(dir)
	if len(cmds) != 1 || cmds[0].Name != "ok" {
		t.Fatalf("cmds = %+v", cmds)
	}
	if len(problems) != 2 {
		t.Fatalf("problems = %v", problems)
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	cmds := []Command{{Name: "a"}, {Name: "b", Body: "B"}}
	if c, ok := Find(cmds, "b"); !ok || c.Body != "B" {
		t.Fatal("Find b")
	}
	if _, ok := Find(cmds, "c"); ok {
		t.Fatal("Find c")
	}
}

func TestLoadSymlinkedDirectory(t *testing.T) {
	t.Parallel()
	real, home := t.TempDir(), t.TempDir()
	testenv.WriteTree(t, real, map[string]string{"deploy.md": "Deploy $1", "ops/ping.md": "Ping"})
	link := filepath.Join(home, "commands")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	cmds, problems := Load(link)
	if len(problems) != 0 || len(cmds) != 2 || cmds[0].Name != "deploy" || cmds[1].Name != "ops:ping" {
		t.Fatalf("cmds %+v, problems %v", cmds, problems)
	}
	if cmds[0].Path != filepath.Join(link, "deploy.md") {
		t.Fatalf("path %q", cmds[0].Path)
	}
}

func TestLoadNotADirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testenv.WriteTree(t, dir, map[string]string{"commands": "a file"})
	cmds, problems := Load(filepath.Join(dir, "commands"))
	if len(cmds) != 0 || len(problems) != 1 {
		t.Fatalf("cmds %+v, problems %v", cmds, problems)
	}
}
