package e2e

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"reasonix/core/provider/providertest"
)

// writeFiles writes files (slash-separated names) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(body), 0o644))
	}
}

// TestE2ERunExpandsReferences: an @path that exists reaches the model as
// a <file> block before the prompt, which itself is unchanged; one that
// does not exist, an email and an @mention stay literal; a reference that
// cannot be read is a warning on stderr and the turn still runs.
func TestE2ERunExpandsReferences(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	writeFiles(t, e.work, map[string]string{"note.txt": "hello from the note\n", "src/a.go": "package a\n"})
	e.srv.Push(providertest.Turn{Text: "read it"})
	prompt := "read @note.txt, list @src and @nope.txt; thanks @alice, me@note.txt"
	args := []string{"run", prompt}
	if runtime.GOOS != "windows" {
		prompt += " @/dev/null"
		args = []string{"run", prompt}
	}
	r := e.run(args...)
	if r.code != 0 || r.stdout != "read it\n" {
		t.Fatalf("unexpected result:\n%s", r)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	want := "<file path=\"note.txt\">\nhello from the note\n</file>\n\n<dir path=\"src\">\na.go\n</dir>\n\n" + prompt
	if got := reqs[0].LastUser(); got != want {
		t.Fatalf("the model got\n%q\nwant\n%q", got, want)
	}
	if runtime.GOOS != "windows" && !strings.Contains(r.stderr, "@/dev/null is not a regular file") {
		t.Errorf("no warning for @/dev/null on stderr:\n%s", r.stderr)
	}
}

// TestE2ERunCustomCommand: /git:commit names the project's
// .reasonix/commands/git/commit.md, which overrides the user's file of the
// same name; its frontmatter is not sent and its placeholders are filled.
// A malformed command file beside it is a warning, not a failure, and an
// @reference in a command's body is expanded like a typed one.
func TestE2ERunCustomCommand(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	writeFiles(t, filepath.Join(e.home, "commands"), map[string]string{
		"git/commit.md": "USER VERSION $ARGUMENTS",
		"greet.md":      "---\ndescription: from the user\n---\nSay hello to $1.",
	})
	writeFiles(t, filepath.Join(e.work, ".reasonix", "commands"), map[string]string{
		"git/commit.md": "---\ndescription: Commit the staged work\nargument-hint: <message>\n---\nCommit the staged changes with the message: $ARGUMENTS.\nFirst word: $1; cost $$0.\n",
		"broken.md":     "---\ndescription: never closed\nbody",
		"review.md":     "Review @notes.md with care.",
	})
	writeFiles(t, e.work, map[string]string{"notes.md": "# Notes\n"})
	e.srv.Push(providertest.Turn{Text: "committed"}, providertest.Turn{Text: "hi"}, providertest.Turn{Text: "reviewed"})

	r := e.run("run", "/git:commit fix the bug")
	if r.code != 0 || r.stdout != "committed\n" {
		t.Fatalf("unexpected result:\n%s", r)
	}
	if !strings.Contains(r.stderr, "reasonix: warn: custom command skipped") || !strings.Contains(r.stderr, "broken.md") || !strings.Contains(r.stderr, "no closing ---") {
		t.Errorf("no warning for broken.md on stderr:\n%s", r.stderr)
	}
	r = e.run("run", "/greet Ada Lovelace")
	if r.code != 0 {
		t.Fatalf("unexpected result:\n%s", r)
	}
	r = e.run("run", "/review")
	if r.code != 0 {
		t.Fatalf("unexpected result:\n%s", r)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, want := range []string{
		"Commit the staged changes with the message: fix the bug.\nFirst word: fix; cost $0.",
		"Say hello to Ada.",
		"<file path=\"notes.md\">\n# Notes\n</file>\n\nReview @notes.md with care.",
	} {
		if got := reqs[i].LastUser(); got != want {
			t.Errorf("request %d: the model got\n%q\nwant\n%q", i, got, want)
		}
	}
}

// TestE2ERunSlashPassThrough: a slash command that is no custom command
// reaches the session exactly as typed, @references and all (a block
// before it would hide the command), and a path is not a command.
func TestE2ERunSlashPassThrough(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	writeFiles(t, e.work, map[string]string{"note.txt": "n\n"})
	e.srv.Push(providertest.Turn{Text: "a"}, providertest.Turn{Text: "b"})
	for _, prompt := range []string{"/nope do it @note.txt", "/usr/bin and @note.txt"} {
		if r := e.run("run", prompt); r.code != 0 {
			t.Fatalf("%s: unexpected result:\n%s", prompt, r)
		}
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if got := reqs[0].LastUser(); got != "/nope do it @note.txt" {
		t.Errorf("unknown command reached the model as %q", got)
	}
	if got, want := reqs[1].LastUser(), "<file path=\"note.txt\">\nn\n</file>\n\n/usr/bin and @note.txt"; got != want {
		t.Errorf("path prompt reached the model as %q, want %q", got, want)
	}
}

// TestE2EStreamExpandsPrompts: prompt commands on stdin are expanded like
// a typed prompt, and what could not be used arrives as notice events on
// the stream.
func TestE2EStreamExpandsPrompts(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	writeFiles(t, e.work, map[string]string{
		"note.txt":                    "streamed note\n",
		".reasonix/commands/sum.md":   "Summarise $ARGUMENTS",
		".reasonix/commands/bad.md":   "\xff\xfe",
		".reasonix/commands/clear.md": "shadows a built-in",
	})
	e.srv.Push(providertest.Turn{Text: "first"}, providertest.Turn{Text: "second"})
	s := e.stream()
	s.send(`{"type":"prompt","text":"look at @note.txt"}`)
	s.expect("turn_done", func(ev map[string]any) bool { return ev["task"] == nil })
	s.send(`{"type":"prompt","text":"/sum @note.txt"}`)
	s.expect("turn_done", func(ev map[string]any) bool { return ev["task"] == nil })
	r := s.finish()
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	var notices []string
	for _, ev := range s.seen {
		if ev["type"] == "notice" {
			notices = append(notices, ev["message"].(string))
		}
	}
	joined := strings.Join(notices, "\n")
	if !strings.Contains(joined, "bad.md") || !strings.Contains(joined, "UTF-8") || !strings.Contains(joined, "clear.md") {
		t.Errorf("notices = %q", notices)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	block := "<file path=\"note.txt\">\nstreamed note\n</file>\n\n"
	if got := reqs[0].LastUser(); got != block+"look at @note.txt" {
		t.Errorf("first prompt reached the model as %q", got)
	}
	if got := reqs[1].LastUser(); got != block+"Summarise @note.txt" {
		t.Errorf("second prompt reached the model as %q", got)
	}
}
