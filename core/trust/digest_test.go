package trust

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"reasonix/core/config"
	"reasonix/core/mcp"
	"reasonix/core/testenv"
)

func TestNamesMatchTheirOwners(t *testing.T) {
	t.Parallel()
	if projectFile != config.ProjectFileName || mcpJSONFile != mcp.MCPJSONFile {
		t.Fatalf("trust covers %q and %q; config reads %q and mcp %q", projectFile, mcpJSONFile, config.ProjectFileName, mcp.MCPJSONFile)
	}
}

func mustDigest(t *testing.T, dir string) string {
	t.Helper()
	d, err := Digest(dir)
	if err != nil {
		t.Fatalf("Digest: %v", err)
	}
	if !strings.HasPrefix(d, digestPrefix) || len(d) != len(digestPrefix)+64 {
		t.Fatalf("digest %q is not a sha256 digest", d)
	}
	return d
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks: %v", err)
	}
}

// base is the tree every digest case starts from.
var base = map[string]string{
	"reasonix.toml":                     "[permissions]\nallow = [\"Bash(make:*)\"]\n",
	".mcp.json":                         `{"mcpServers":{}}`,
	".reasonix/skills/review/SKILL.md":  "---\nname: review\n---\nReview.\n",
	".reasonix/commands/ship.md":        "Ship it.\n",
	".reasonix/memory/notes.md":         "a memory\n",
	".reasonix/autoresearch/run/log.md": "research notes\n",
	"main.go":                           "package main\n",
}

func TestDigest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		change  func(t *testing.T, dir string)
		changed bool
	}{
		{"nothing", func(t *testing.T, dir string) {}, false},
		{"project file edited", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "reasonix.toml"), "[permissions]\nallow = [\"Bash\"]\n")
		}, true},
		{"project file removed", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "reasonix.toml"))
		}, true},
		{"mcp json edited", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, ".mcp.json"), `{"mcpServers":{"x":{"command":"evil"}}}`)
		}, true},
		{"skill edited", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, ".reasonix/skills/review/SKILL.md"), "---\nname: review\n---\nExfiltrate.\n")
		}, true},
		{"file added under .reasonix", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, ".reasonix/commands/new.md"), "new\n")
		}, true},
		{"file renamed", func(t *testing.T, dir string) {
			os.Rename(filepath.Join(dir, ".reasonix/commands/ship.md"), filepath.Join(dir, ".reasonix/commands/shop.md"))
		}, true},
		{"mode changed", func(t *testing.T, dir string) {
			if runtime.GOOS == "windows" {
				t.Skip("no permission bits")
			}
			os.Chmod(filepath.Join(dir, ".reasonix/commands/ship.md"), 0o755)
		}, true},
		{"memory written", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, ".reasonix/memory/more.md"), "another memory\n")
		}, false},
		{"research written", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, ".reasonix/autoresearch/run/log.md"), "more notes\n")
		}, false},
		{"nested memory dir is covered", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, ".reasonix/skills/memory/SKILL.md"), "x\n")
		}, true},
		{"empty directory made", func(t *testing.T, dir string) {
			os.MkdirAll(filepath.Join(dir, ".reasonix/skills/empty"), 0o755)
		}, false},
		{"other files edited", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "main.go"), "package main // changed\n")
			writeFile(t, filepath.Join(dir, "reasonix.toml.bak"), "x")
		}, false},
		{"only touched", func(t *testing.T, dir string) {
			later := time.Now().Add(time.Hour)
			os.Chtimes(filepath.Join(dir, "reasonix.toml"), later, later)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := testenv.Tree(t, base)
			before := mustDigest(t, dir)
			tt.change(t, dir)
			if after := mustDigest(t, dir); (after != before) != tt.changed {
				t.Errorf("digest changed = %v, want %v", after != before, tt.changed)
			}
		})
	}
}

func TestDigestSameTreeSameDigest(t *testing.T) {
	t.Parallel()
	a, b := testenv.Tree(t, base), testenv.Tree(t, base)
	if mustDigest(t, a) != mustDigest(t, b) {
		t.Error("two copies of one tree digest differently")
	}
	empty1, empty2 := t.TempDir(), t.TempDir()
	if mustDigest(t, empty1) != mustDigest(t, empty2) || mustDigest(t, empty1) == mustDigest(t, a) {
		t.Error("empty workspaces do not share one digest distinct from a full one")
	}
}

// TestDigestFieldsDoNotRun: moving bytes between a name and a content, or
// between two files, gives another digest.
func TestDigestFieldsDoNotRun(t *testing.T) {
	t.Parallel()
	a := testenv.Tree(t, map[string]string{".reasonix/a": "bc", ".reasonix/ab": "c"})
	b := testenv.Tree(t, map[string]string{".reasonix/a": "b", ".reasonix/ab": "cc"})
	c := testenv.Tree(t, map[string]string{".reasonix/a": "bc\"", ".reasonix/ab": ""})
	if da, db, dc := mustDigest(t, a), mustDigest(t, b), mustDigest(t, c); da == db || da == dc || db == dc {
		t.Error("different trees share a digest")
	}
}

func TestDigestSymlinks(t *testing.T) {
	t.Parallel()
	t.Run("project file through a link follows its target", func(t *testing.T) {
		t.Parallel()
		dir := testenv.Tree(t, map[string]string{"docs/config.toml": "[agent]\n", "docs/other.toml": "[agent]\n"})
		symlink(t, "docs/config.toml", filepath.Join(dir, "reasonix.toml"))
		before := mustDigest(t, dir)
		// Loading reads the target, so an edit there must untrust.
		writeFile(t, filepath.Join(dir, "docs/config.toml"), "[permissions]\nallow = [\"Bash\"]\n")
		edited := mustDigest(t, dir)
		if edited == before {
			t.Error("an edit of the link's target kept the digest")
		}
		os.Remove(filepath.Join(dir, "reasonix.toml"))
		symlink(t, "docs/other.toml", filepath.Join(dir, "reasonix.toml"))
		if mustDigest(t, dir) == edited {
			t.Error("a retargeted link kept the digest")
		}
	})
	t.Run("dangling link counts as its text", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		symlink(t, "nowhere-1", filepath.Join(dir, ".mcp.json"))
		before := mustDigest(t, dir)
		os.Remove(filepath.Join(dir, ".mcp.json"))
		symlink(t, "nowhere-2", filepath.Join(dir, ".mcp.json"))
		if mustDigest(t, dir) == before {
			t.Error("the link text is not covered")
		}
	})
	t.Run("a linked directory is not entered", func(t *testing.T) {
		t.Parallel()
		outside := testenv.Tree(t, map[string]string{"SKILL.md": "one\n"})
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, ".reasonix"), 0o755)
		symlink(t, outside, filepath.Join(dir, ".reasonix", "skills"))
		before := mustDigest(t, dir)
		writeFile(t, filepath.Join(outside, "SKILL.md"), "two\n")
		if mustDigest(t, dir) != before {
			t.Error("the digest read through a directory link")
		}
	})
	t.Run("a linked .reasonix is one entry", func(t *testing.T) {
		t.Parallel()
		outside := testenv.Tree(t, map[string]string{"skills/x/SKILL.md": "one\n"})
		dir := t.TempDir()
		symlink(t, outside, filepath.Join(dir, ".reasonix"))
		if mustDigest(t, dir) == mustDigest(t, t.TempDir()) {
			t.Error("a .reasonix link is not covered")
		}
	})
}

func TestDigestCaps(t *testing.T) {
	t.Parallel()
	files := map[string]string{"reasonix.toml": "[agent]\n"}
	for i := range maxContentFiles + 1 {
		files[fmt.Sprintf(".reasonix/commands/c%05d.md", i)] = "body\n"
	}
	dir := testenv.Tree(t, files)
	before := mustDigest(t, dir)
	last := filepath.Join(dir, ".reasonix/commands", fmt.Sprintf("c%05d.md", maxContentFiles))
	first := filepath.Join(dir, ".reasonix/commands/c00000.md")

	// Past the file cap only the path, mode and size count.
	writeFile(t, last, "BODY\n")
	if mustDigest(t, dir) != before {
		t.Error("a file past the cap was read")
	}
	writeFile(t, last, "longer body\n")
	if mustDigest(t, dir) == before {
		t.Error("a size change past the cap went unnoticed")
	}
	writeFile(t, last, "body\n")
	writeFile(t, first, "BODY\n")
	edited := mustDigest(t, dir)
	if edited == before {
		t.Error("a file within the cap was not read")
	}
	// reasonix.toml sorts after .reasonix/ but is read whatever the caps.
	writeFile(t, filepath.Join(dir, "reasonix.toml"), "[agenT]\n")
	if mustDigest(t, dir) == edited {
		t.Error("reasonix.toml was not read past the caps")
	}
}

func TestDigestEntryLimit(t *testing.T) {
	t.Parallel()
	dir := testenv.Tree(t, map[string]string{".reasonix/a": "", ".reasonix/b": "", ".reasonix/memory/m": ""})
	root, err := Canonical(dir)
	if err != nil {
		t.Fatal(err)
	}
	// .reasonix, a, b and the memory directory itself.
	if _, err := walkProjectDir(root, 4); err != nil {
		t.Errorf("within the limit: %v", err)
	}
	if _, err := walkProjectDir(root, 3); err == nil || !strings.Contains(err.Error(), "more than 3 entries") {
		t.Errorf("past the limit: %v", err)
	}
}

// TestDigestNamesCannotForgeEntries: a file whose path spells out other
// entries (newlines and all) does not digest like the tree it imitates.
func TestDigestNamesCannotForgeEntries(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("file names cannot hold newlines")
	}
	genuine := testenv.Tree(t, map[string]string{".reasonix/x": "one\n", ".reasonix/y": "two\n"})
	info, err := os.Lstat(filepath.Join(genuine, ".reasonix/x"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := contentSum(filepath.Join(genuine, ".reasonix/x"), info)
	if err != nil {
		t.Fatal(err)
	}
	// Unquoted, this one file's line would read exactly as x's lines
	// followed by y's.
	dirName := fmt.Sprintf("x %s\n  content %s\n.reasonix", describe(info), sum)
	forged := t.TempDir()
	p := filepath.Join(forged, ".reasonix", dirName, "y")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Skipf("file system refuses the name: %v", err)
	}
	writeFile(t, p, "two\n")
	if mustDigest(t, genuine) == mustDigest(t, forged) {
		t.Error("a crafted name forged another tree's digest")
	}
}

func TestDigestBigFileCountsBySize(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", maxContentBytes+1)
	dir := testenv.Tree(t, map[string]string{".reasonix/big.bin": big, ".reasonix/small.md": "s\n"})
	before := mustDigest(t, dir)
	writeFile(t, filepath.Join(dir, ".reasonix/big.bin"), "y"+big[1:])
	if mustDigest(t, dir) != before {
		t.Error("a file above the byte cap was read")
	}
	writeFile(t, filepath.Join(dir, ".reasonix/small.md"), "S\n")
	if mustDigest(t, dir) == before {
		t.Error("a small file beside a big one was not read")
	}
}

func TestDigestUnreadableFile(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("needs permission bits that bind")
	}
	dir := testenv.Tree(t, map[string]string{".reasonix/commands/secret.md": "x"})
	p := filepath.Join(dir, ".reasonix/commands/secret.md")
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(p, 0o644) })
	if _, err := Digest(dir); err == nil || !strings.Contains(err.Error(), "secret.md") {
		t.Fatalf("err = %v, want one naming the file", err)
	}
}

func TestDigestMissingWorkspace(t *testing.T) {
	t.Parallel()
	if _, err := Digest(filepath.Join(t.TempDir(), "gone")); err == nil {
		t.Fatal("a missing workspace has a digest")
	}
}

func TestCanonical(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	want, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	symlink(t, dir, link)
	for _, spelling := range []string{dir, dir + string(filepath.Separator) + ".", link} {
		if got, err := Canonical(spelling); err != nil || got != want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", spelling, got, err, want)
		}
	}
}

func TestCovers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rel  string
		want bool
	}{
		{"reasonix.toml", true},
		{"./reasonix.toml", true},
		{".mcp.json", true},
		{".reasonix", true},
		{".reasonix/skills/x/SKILL.md", true},
		{".reasonix/commands/a.md", true},
		{".reasonix/memory", false},
		{".reasonix/memory/a.md", false},
		{".reasonix/autoresearch/r/notes.md", false},
		{".reasonix/memoryx/a.md", true},
		{".reasonix/skills/memory/a.md", true},
		{"sub/reasonix.toml", false},
		{"main.go", false},
		{"../reasonix.toml", false},
		{".reasonix/../main.go", false},
	}
	for _, tt := range tests {
		if got := Covers(tt.rel); got != tt.want {
			t.Errorf("Covers(%q) = %v, want %v", tt.rel, got, tt.want)
		}
	}
}
