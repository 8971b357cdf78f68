package ref

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix/core/testenv"
)

func TestExpand(t *testing.T) {
	t.Parallel()
	root := testenv.Tree(t, map[string]string{
		"note.txt":                    "hello\nworld\n",
		"nonl.txt":                    "no newline",
		"empty.txt":                   "",
		"notes.":                      "dot is part of the name",
		"my file.md":                  "spaced",
		"a&b\".txt":                   "odd name",
		"src/main.go":                 "package main\n",
		"src/lib/x.go":                "package lib\n",
		"src/.git/HEAD":               "ref",
		"src/node_modules/m/index.js": "x",
		"server:uri":                  "a file shaped like an MCP reference",
	})
	tests := []struct {
		name   string
		input  string
		blocks []string
		files  []string
	}{
		{
			name:   "file",
			input:  "read @note.txt",
			blocks: []string{"<file path=\"note.txt\">\nhello\nworld\n</file>"},
			files:  []string{"note.txt"},
		},
		{
			name:   "at start, no trailing newline in file",
			input:  "@nonl.txt please",
			blocks: []string{"<file path=\"nonl.txt\">\nno newline\n</file>"},
			files:  []string{"nonl.txt"},
		},
		{
			name:   "empty file",
			input:  "@empty.txt",
			blocks: []string{"<file path=\"empty.txt\">\n</file>"},
			files:  []string{"empty.txt"},
		},
		{
			name:   "trailing punctuation",
			input:  "see @note.txt, and (@nonl.txt) and @note.txt.",
			blocks: []string{"<file path=\"note.txt\">\nhello\nworld\n</file>"},
			files:  []string{"note.txt"},
		},
		{
			name:   "punctuation inside parentheses after a space",
			input:  "look (see @nonl.txt).",
			blocks: []string{"<file path=\"nonl.txt\">\nno newline\n</file>"},
			files:  []string{"nonl.txt"},
		},
		{
			name:   "existing name keeps its punctuation",
			input:  "@notes.",
			blocks: []string{"<file path=\"notes.\">\ndot is part of the name\n</file>"},
			files:  []string{"notes."},
		},
		{
			name:   "quoted path with spaces",
			input:  `open @"my file.md".`,
			blocks: []string{"<file path=\"my file.md\">\nspaced\n</file>"},
			files:  []string{"my file.md"},
		},
		{
			name:   "attribute escaped",
			input:  `@a&b".txt`,
			blocks: []string{"<file path=\"a&amp;b&quot;.txt\">\nodd name\n</file>"},
			files:  []string{`a&b".txt`},
		},
		{
			name:   "each path once, order of first appearance",
			input:  "@nonl.txt @note.txt @./note.txt @nonl.txt",
			blocks: []string{"<file path=\"nonl.txt\">\nno newline\n</file>", "<file path=\"note.txt\">\nhello\nworld\n</file>"},
			files:  []string{"nonl.txt", "note.txt"},
		},
		{
			name:   "directory listing skips noise, depth first",
			input:  "what is in @src?",
			blocks: []string{"<dir path=\"src\">\nlib/\nlib/x.go\nmain.go\n</dir>"},
			files:  []string{"src"},
		},
		{
			name:   "directory with slash",
			input:  "@src/lib/",
			blocks: []string{"<dir path=\"src/lib/\">\nx.go\n</dir>"},
			files:  []string{"src/lib/"},
		},
		{name: "missing path stays literal", input: "read @nope.txt now"},
		{name: "email", input: "mail me@note.txt or x@src"},
		{name: "mention", input: "thanks @alice!"},
		{name: "mcp resource never read", input: "use @server:uri and @github:repo/x."},
		{name: "bare at", input: "@ alone and @"},
		{name: "escaping root is no reference", input: "@../note.txt @src/../../x"},
		{name: "unterminated quote", input: `@"my file.md`},
		{name: "mid-word at", input: "a@note.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := Expand(context.Background(), root, tc.input, Options{})
			want := tc.input
			if len(tc.blocks) > 0 {
				want = strings.Join(tc.blocks, "\n\n") + "\n\n" + tc.input
			}
			if res.Text != want {
				t.Errorf("Text =\n%q\nwant\n%q", res.Text, want)
			}
			if !slices.Equal(res.Files, tc.files) {
				t.Errorf("Files = %q, want %q", res.Files, tc.files)
			}
			if len(res.Notices) > 0 {
				t.Errorf("unexpected notices %q", res.Notices)
			}
		})
	}
}

func TestExpandAbsolutePath(t *testing.T) {
	t.Parallel()
	outside := testenv.Tree(t, map[string]string{"abs.txt": "outside"})
	root := testenv.Tree(t, nil)
	p := filepath.Join(outside, "abs.txt")
	res := Expand(context.Background(), root, "read @"+p, Options{})
	if want := fmt.Sprintf("<file path=\"%s\">\noutside\n</file>\n\nread @%s", p, p); res.Text != want {
		t.Fatalf("Text = %q, want %q", res.Text, want)
	}
}

func TestExpandEmptyRootIsCwd(t *testing.T) {
	// Not parallel: it reads the process's working directory, which other
	// tests do not change.
	res := Expand(context.Background(), "", "@doc.go", Options{})
	if !slices.Equal(res.Files, []string{"doc.go"}) || !strings.Contains(res.Text, "package ref") {
		t.Fatalf("Files %q, Text %q", res.Files, res.Text[:min(len(res.Text), 80)])
	}
}

func TestExpandCaps(t *testing.T) {
	t.Parallel()
	root := testenv.Tree(t, map[string]string{
		"big.txt":   strings.Repeat("a", 100),
		"runes.txt": strings.Repeat("é", 10), // 2 bytes each
		"b.txt":     strings.Repeat("b", 30),
		"c.txt":     strings.Repeat("c", 30),
		"d/x":       "",
	})
	t.Run("per file", func(t *testing.T) {
		t.Parallel()
		res := Expand(context.Background(), root, "@big.txt", Options{MaxFileBytes: 10})
		want := "<file path=\"big.txt\" truncated=\"true\">\naaaaaaaaaa\n[truncated: showing the first 10 of 100 bytes]\n</file>\n\n@big.txt"
		if res.Text != want {
			t.Fatalf("Text = %q, want %q", res.Text, want)
		}
	})
	t.Run("cut on a rune boundary", func(t *testing.T) {
		t.Parallel()
		res := Expand(context.Background(), root, "@runes.txt", Options{MaxFileBytes: 5})
		want := "<file path=\"runes.txt\" truncated=\"true\">\néé\n[truncated: showing the first 4 of 20 bytes]\n</file>\n\n@runes.txt"
		if res.Text != want {
			t.Fatalf("Text = %q, want %q", res.Text, want)
		}
	})
	t.Run("total", func(t *testing.T) {
		t.Parallel()
		res := Expand(context.Background(), root, "@b.txt @c.txt @big.txt @d", Options{MaxTotalBytes: 50})
		blocks := []string{
			"<file path=\"b.txt\">\n" + strings.Repeat("b", 30) + "\n</file>",
			"<file path=\"c.txt\" truncated=\"true\">\n" + strings.Repeat("c", 20) + "\n[truncated: showing the first 20 of 30 bytes]\n</file>",
			"<file path=\"big.txt\" size=\"100\" omitted=\"true\"/>",
			"<dir path=\"d\" omitted=\"true\"/>",
		}
		if want := strings.Join(blocks, "\n\n") + "\n\n@b.txt @c.txt @big.txt @d"; res.Text != want {
			t.Fatalf("Text = %q, want %q", res.Text, want)
		}
		if len(res.Notices) != 2 || !strings.Contains(res.Notices[0], "@big.txt left out") || !strings.Contains(res.Notices[1], "@d left out") {
			t.Fatalf("Notices = %q", res.Notices)
		}
	})
}

func TestExpandDirCap(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 8 {
		files[fmt.Sprintf("d/f%d", i)] = ""
	}
	root := testenv.Tree(t, files)
	res := Expand(context.Background(), root, "@d", Options{MaxDirEntries: 3})
	want := "<dir path=\"d\">\nf0\nf1\nf2\n[truncated: listing stopped at 3 entries]\n</dir>\n\n@d"
	if res.Text != want {
		t.Fatalf("Text = %q, want %q", res.Text, want)
	}
}

func TestExpandBinary(t *testing.T) {
	t.Parallel()
	root := testenv.Tree(t, map[string]string{
		"nul.bin":    "abc\x00def",
		"latin1.txt": "caf\xe9 au lait",
		"cut.txt":    "ab" + "é",
	})
	tests := []struct {
		name, input, want string
		o                 Options
	}{
		{"nul byte", "@nul.bin", `<file path="nul.bin" binary="true" size="7"/>`, Options{}},
		{"invalid utf-8", "@latin1.txt", `<file path="latin1.txt" binary="true" size="12"/>`, Options{}},
		{"rune split by the cap is text", "@cut.txt", "<file path=\"cut.txt\" truncated=\"true\">\nab\n[truncated: showing the first 2 of 4 bytes]\n</file>", Options{MaxFileBytes: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := Expand(context.Background(), root, tc.input, tc.o)
			if want := tc.want + "\n\n" + tc.input; res.Text != want {
				t.Fatalf("Text = %q, want %q", res.Text, want)
			}
		})
	}
}

func TestExpandSymlinks(t *testing.T) {
	t.Parallel()
	outside := testenv.Tree(t, map[string]string{"secret/s.txt": "s"})
	root := testenv.Tree(t, map[string]string{"d/a.txt": "a"})
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "d", "link")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	if err := os.Symlink("..", filepath.Join(root, "d", "loop")); err != nil {
		t.Fatal(err)
	}
	res := Expand(context.Background(), root, "@d", Options{})
	want := fmt.Sprintf("<dir path=\"d\">\na.txt\nlink -> %s\nloop -> ..\n</dir>\n\n@d", filepath.Join(outside, "secret"))
	if res.Text != want {
		t.Fatalf("Text = %q, want %q", res.Text, want)
	}
	// Named directly, a link is followed like any path the user names.
	res = Expand(context.Background(), root, "@d/link/s.txt", Options{})
	if !slices.Equal(res.Files, []string{"d/link/s.txt"}) {
		t.Fatalf("Files = %q", res.Files)
	}
}

func TestExpandNotices(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode")
	}
	root := testenv.Tree(t, map[string]string{"locked.txt": "x", "ok.txt": "ok"})
	if err := os.Chmod(filepath.Join(root, "locked.txt"), 0); err != nil {
		t.Fatal(err)
	}
	res := Expand(context.Background(), root, "@locked.txt @ok.txt", Options{})
	if !slices.Equal(res.Files, []string{"ok.txt"}) {
		t.Fatalf("Files = %q", res.Files)
	}
	if len(res.Notices) != 1 || !strings.Contains(res.Notices[0], "could not read @locked.txt") {
		t.Fatalf("Notices = %q", res.Notices)
	}
	if !strings.HasSuffix(res.Text, "@locked.txt @ok.txt") {
		t.Fatalf("Text = %q", res.Text)
	}
}

func TestExpandNotRegular(t *testing.T) {
	t.Parallel()
	res := Expand(context.Background(), "/", "@/dev/null", Options{})
	if res.Text != "@/dev/null" || len(res.Files) != 0 || len(res.Notices) != 1 {
		t.Fatalf("got %+v", res)
	}
}

func TestExpandCancelled(t *testing.T) {
	t.Parallel()
	root := testenv.Tree(t, map[string]string{"note.txt": "x"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := Expand(ctx, root, "@note.txt", Options{})
	if res.Text != "@note.txt" || len(res.Files) != 0 || len(res.Notices) != 1 {
		t.Fatalf("got %+v", res)
	}
}

func FuzzExpand(f *testing.F) {
	root := f.TempDir()
	for name, body := range map[string]string{"a.txt": "A", "b c.txt": "B", "d/e.go": "E", "bin": "\x00"} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for _, s := range []string{"", "@", "@a.txt", "x @a.txt, @d.", `@"b c.txt"`, `@"`, "me@a.txt", "@srv:uri", "@\xff", "@a.txt\n@d/e.go!?", "@bin @../a.txt"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		res := Expand(context.Background(), root, input, Options{})
		if !strings.HasSuffix(res.Text, input) {
			t.Fatalf("input not preserved: %q -> %q", input, res.Text)
		}
		if (len(res.Files) == 0) != (res.Text == input) {
			t.Fatalf("files %q but text %q", res.Files, res.Text)
		}
		for _, c := range scan(input) {
			if c.start < 0 || c.end > len(input) || c.start >= c.end || input[c.start] != '@' {
				t.Fatalf("bad span %+v in %q", c, input)
			}
		}
	})
}

func TestExpandCandidateCap(t *testing.T) {
	t.Parallel()
	root := testenv.Tree(t, map[string]string{"late.txt": "late"})
	input := strings.Repeat("@nobody ", maxCandidates) + "@late.txt"
	res := Expand(context.Background(), root, input, Options{})
	if res.Text != input || len(res.Files) != 0 || len(res.Notices) != 1 {
		t.Fatalf("Files %q, Notices %q", res.Files, res.Notices)
	}
}

func BenchmarkExpand(b *testing.B) {
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f.go"), []byte(strings.Repeat("line of code\n", 2000)), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, input string }{
		{"no refs 4KiB", strings.Repeat("plain words ", 340)},
		{"100 misses", strings.Repeat("@nobody ", 100)},
		{"one 26KB file", "read @f.go please"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Expand(context.Background(), root, bc.input, Options{})
			}
		})
	}
}
