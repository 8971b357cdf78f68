package patchcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"reasonix/core/testenv"
)

// copies are the patched trees under third_party/, from this package's
// directory: each is one upstream module, reduced to what Reasonix
// builds, plus its series.
var copies = []string{
	filepath.Join("..", "protoactor-go"), // github.com/asynkron/protoactor-go
	filepath.Join("..", "chroma"),        // github.com/alecthomas/chroma/v2
	filepath.Join("..", "glamour"),       // charm.land/glamour/v2
	filepath.Join("..", "bubbletea"),     // charm.land/bubbletea/v2
	filepath.Join("..", "goldmark"),      // github.com/yuin/goldmark
}

// marker is the comment every change to upstream code carries.
const marker = "reasonix:"

// TestCopiesAreUpstreamPlusPatches rebuilds each copy under third_party/
// from the pristine upstream module named in its patches/UPSTREAM and the
// series in patches/series, and fails unless the result and the copy are
// the same files, byte for byte (PATCHES.md and patches/ are ours and left
// out). Every hunk a patch makes in a .go file must add a line with the
// marker, and every .go file (and go.mod) of the copy that is not
// upstream's must contain it.
func TestCopiesAreUpstreamPlusPatches(t *testing.T) {
	for _, dir := range copies {
		t.Run(filepath.Base(dir), func(t *testing.T) { checkCopy(t, dir) })
	}
}

func checkCopy(t *testing.T, copyDir string) {
	up := readUpstream(t, filepath.Join(copyDir, "patches", "UPSTREAM"))
	src := pristine(t, up)

	work := t.TempDir()
	copyKept(t, src, work, up.dirs)
	for _, name := range readSeries(t, filepath.Join(copyDir, "patches", "series")) {
		data, err := os.ReadFile(filepath.Join(copyDir, "patches", name))
		if err != nil {
			t.Fatal(err)
		}
		files, err := parsePatch(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, fp := range files {
			for _, h := range fp.hunks {
				if strings.HasSuffix(fp.path(), ".go") && !h.adds(marker) {
					t.Errorf("%s: hunk %s of %s adds no line with %q", name, h.header, fp.path(), marker)
				}
			}
			if err := fp.apply(work); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}

	for _, d := range compareTrees(t, work, copyDir, ours) {
		t.Errorf("%s is not upstream plus patches/series: %s", copyDir, d)
	}

	// The copy's own files, whether or not the series produces them.
	walkFiles(t, copyDir, ours, func(rel string, got []byte) {
		if !strings.HasSuffix(rel, ".go") && rel != "go.mod" {
			return
		}
		want, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(rel)))
		if err == nil && bytes.Equal(got, want) {
			return
		}
		if !bytes.Contains(got, []byte(marker)) {
			t.Errorf("%s differs from upstream but has no %q comment", rel, marker)
		}
	})
}

// ours reports whether rel (slash-separated, from the copy's root) is one
// of our files rather than one taken from upstream.
func ours(rel string) bool {
	return rel == "PATCHES.md" || rel == "patches" || strings.HasPrefix(rel, "patches/")
}

// upstream is patches/UPSTREAM: which module version the series applies
// to, and which of its directories are kept.
type upstream struct {
	module, version, commit, zipSum string
	dirs                            []string
}

func readUpstream(t *testing.T, file string) upstream {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var up upstream
	inDirs := false
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if inDirs {
			up.dirs = append(up.dirs, line)
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("%s:%d: want key: value, got %q", file, n+1, line)
		}
		value = strings.TrimSpace(value)
		switch key {
		case "module":
			up.module = value
		case "version":
			up.version = value
		case "commit":
			up.commit = value
		case "zip-sum":
			up.zipSum = value
		case "dirs":
			inDirs = true
		default:
			t.Fatalf("%s:%d: unknown key %q", file, n+1, key)
		}
	}
	if up.module == "" || up.version == "" || len(up.dirs) == 0 {
		t.Fatalf("%s: module, version and dirs are needed", file)
	}
	if up.commit != "" && !strings.HasSuffix(up.version, "-"+up.commit) {
		t.Fatalf("%s: commit %s is not the one version %s names", file, up.commit, up.version)
	}
	return up
}

func readSeries(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		names = append(names, line)
	}
	if len(names) == 0 {
		t.Fatalf("%s lists no patch", file)
	}
	// Every patch in the directory is in the series, so none is left out
	// by mistake.
	matches, err := filepath.Glob(filepath.Join(filepath.Dir(file), "*.patch"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range matches {
		if !slices.Contains(names, filepath.Base(m)) {
			t.Errorf("%s is not in %s", filepath.Base(m), file)
		}
	}
	return names
}

// pristine returns the directory of the upstream module in the module
// cache, downloading it when it is not there. Without it (no network, no
// proxy) the test is skipped, or failed under REASONIX_TEST_STRICT=1.
func pristine(t *testing.T, up upstream) string {
	t.Helper()
	goCmd := testenv.Need(t, "go")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, goCmd, "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	cache := strings.TrimSpace(string(out))
	dir := filepath.Join(cache, filepath.FromSlash(escapePath(up.module))+"@"+escapePath(up.version))
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		// Outside any module, so our go.mod and go.sum are not touched.
		cmd := exec.CommandContext(ctx, goCmd, "mod", "download", "-json", up.module+"@"+up.version)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "GOWORK=off")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var info struct{ Dir, Error string }
		if jerr := json.Unmarshal(out, &info); err == nil && jerr != nil {
			err = jerr
		}
		if err != nil || info.Error != "" || info.Dir == "" {
			why := []string{}
			for _, s := range []string{fmt.Sprint(err), info.Error, strings.TrimSpace(stderr.String())} {
				if s != "" && s != "<nil>" && !slices.Contains(why, s) {
					why = append(why, s)
				}
			}
			testenv.Missing(t, "upstream %s@%s is not in the module cache (%s) and `go mod download` could not fetch it: %s",
				up.module, up.version, cache, strings.Join(why, "; "))
		}
		dir = info.Dir
	}
	// The hash go checked (against go.sum's database) when it downloaded
	// the module must be the one UPSTREAM records.
	if up.zipSum != "" {
		hash := filepath.Join(cache, "cache", "download", filepath.FromSlash(escapePath(up.module)), "@v", escapePath(up.version)+".ziphash")
		if got, err := os.ReadFile(hash); err != nil {
			t.Logf("cannot check the module's hash: %v", err)
		} else if strings.TrimSpace(string(got)) != up.zipSum {
			t.Fatalf("the module cache's %s@%s has hash %s, UPSTREAM records %s", up.module, up.version, strings.TrimSpace(string(got)), up.zipSum)
		}
	}
	return dir
}

// escapePath is the module cache's spelling of a module path or version:
// each upper-case letter is "!" and the letter in lower case.
func escapePath(s string) string {
	var b strings.Builder
	for _, r := range s {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// copyKept copies what the copy keeps of upstream into dst: LICENSE (when
// upstream has one), go.mod and go.sum at the root, and in each of dirs
// ("." is the root) its regular files except tests (no subdirectories).
func copyKept(t *testing.T, src, dst string, dirs []string) {
	t.Helper()
	files := []string{"LICENSE", "go.mod", "go.sum"}
	for _, d := range dirs {
		entries, err := os.ReadDir(filepath.Join(src, filepath.FromSlash(d)))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Type().IsRegular() && !strings.HasSuffix(e.Name(), "_test.go") {
				files = append(files, d+"/"+e.Name())
			}
		}
	}
	for _, rel := range files {
		data, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(rel)))
		if rel == "LICENSE" && errors.Is(err, fs.ErrNotExist) {
			continue // chroma's is COPYING, kept with its directory
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// walkFiles calls fn with every regular file under root (slash-separated
// path from root, and contents) except those skip names; a skipped
// directory is not entered.
func walkFiles(t *testing.T, root string, skip func(string) bool, fn func(rel string, data []byte)) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if skip != nil && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", rel)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fn(rel, data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// compareTrees lists how got differs from want: files missing from got,
// files only in got, and files whose bytes differ (with the first line
// that does). skip leaves names of got out.
func compareTrees(t *testing.T, want, got string, skip func(string) bool) []string {
	t.Helper()
	wantFiles := map[string][]byte{}
	walkFiles(t, want, nil, func(rel string, data []byte) { wantFiles[rel] = data })
	gotFiles := map[string][]byte{}
	walkFiles(t, got, skip, func(rel string, data []byte) { gotFiles[rel] = data })
	var diffs []string
	for rel, w := range wantFiles {
		g, ok := gotFiles[rel]
		switch {
		case !ok:
			diffs = append(diffs, rel+" is missing")
		case !bytes.Equal(g, w):
			diffs = append(diffs, rel+" differs: "+firstDifference(w, g))
		}
	}
	for rel := range gotFiles {
		if _, ok := wantFiles[rel]; !ok {
			diffs = append(diffs, rel+" is extra (neither upstream nor made by a patch)")
		}
	}
	slices.Sort(diffs)
	return diffs
}

func firstDifference(want, got []byte) string {
	wl, gl := splitLines(string(want)), splitLines(string(got))
	for i := 0; ; i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d is %q in the tree, %q from upstream plus patches", i+1, g, w)
		}
	}
}

// splitLines splits s after each "\n"; the last line has none when s
// does not end with one.
func splitLines(s string) []string {
	var lines []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// A filePatch is the part of a unified diff for one file.
type filePatch struct {
	oldPath, newPath string // "" for /dev/null
	hunks            []hunk
}

type hunk struct {
	header             string
	oldStart, oldCount int
	lines              []hunkLine
}

// A hunkLine is one line of a hunk: op ' ', '-' or '+', and its text
// with its "\n" unless "\ No newline at end of file" followed it.
type hunkLine struct {
	op   byte
	text string
}

func (fp filePatch) path() string {
	if fp.newPath != "" {
		return fp.newPath
	}
	return fp.oldPath
}

func (h hunk) adds(s string) bool {
	for _, l := range h.lines {
		if l.op == '+' && strings.Contains(l.text, s) {
			return true
		}
	}
	return false
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// parsePatch reads a unified diff (as diff -u or git diff make it, paths
// with one leading component, a/ and b/, that -p1 strips). Text before
// the first "--- " line, and between files, is commentary.
func parsePatch(data []byte) ([]filePatch, error) {
	lines := splitLines(string(data))
	var files []filePatch
	for i := 0; i < len(lines); {
		if !strings.HasPrefix(lines[i], "--- ") || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "+++ ") {
			i++
			continue
		}
		oldPath, err := patchPath(lines[i][4:])
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", i+1, err)
		}
		newPath, err := patchPath(lines[i+1][4:])
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", i+2, err)
		}
		if oldPath == "" && newPath == "" {
			return nil, fmt.Errorf("line %d: both paths are /dev/null", i+1)
		}
		fp := filePatch{oldPath: oldPath, newPath: newPath}
		i += 2
		for i < len(lines) && strings.HasPrefix(lines[i], "@@ ") {
			h, next, err := parseHunk(lines, i)
			if err != nil {
				return nil, err
			}
			fp.hunks = append(fp.hunks, h)
			i = next
		}
		if len(fp.hunks) == 0 {
			return nil, fmt.Errorf("%s: no hunks", fp.path())
		}
		files = append(files, fp)
	}
	if len(files) == 0 {
		return nil, errors.New("no file in the patch")
	}
	return files, nil
}

// patchPath is the path of a ---/+++ line with its first component
// stripped (-p1), or "" for /dev/null.
func patchPath(s string) (string, error) {
	s = strings.TrimRight(s, "\r\n")
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i] // a timestamp
	}
	if s == "/dev/null" {
		return "", nil
	}
	_, rest, ok := strings.Cut(s, "/")
	if !ok || rest == "" {
		return "", fmt.Errorf("path %q has no leading component to strip", s)
	}
	if clean := path.Clean(rest); clean != rest || path.IsAbs(rest) || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("path %q is not a clean relative path", s)
	}
	return rest, nil
}

func parseHunk(lines []string, i int) (hunk, int, error) {
	m := hunkHeader.FindStringSubmatch(lines[i])
	if m == nil {
		return hunk{}, 0, fmt.Errorf("line %d: bad hunk header %q", i+1, lines[i])
	}
	count := func(s string) int {
		if s == "" {
			return 1
		}
		n, _ := strconv.Atoi(s)
		return n
	}
	oldStart, _ := strconv.Atoi(m[1])
	h := hunk{header: strings.TrimSpace(lines[i]), oldStart: oldStart, oldCount: count(m[2])}
	newCount := count(m[4])
	i++
	oldSeen, newSeen := 0, 0
	for oldSeen < h.oldCount || newSeen < newCount {
		if i >= len(lines) {
			return hunk{}, 0, fmt.Errorf("hunk %s ends early", h.header)
		}
		l := lines[i]
		op, text := byte(' '), "\n" // an empty line is an empty context line
		if l != "\n" {
			op, text = l[0], l[1:]
		}
		switch op {
		case ' ':
			oldSeen++
			newSeen++
		case '-':
			oldSeen++
		case '+':
			newSeen++
		case '\\':
			if err := noNewline(&h, i); err != nil {
				return hunk{}, 0, err
			}
			i++
			continue
		default:
			return hunk{}, 0, fmt.Errorf("line %d: unexpected %q in hunk %s", i+1, l, h.header)
		}
		h.lines = append(h.lines, hunkLine{op, text})
		i++
	}
	if oldSeen != h.oldCount || newSeen != newCount {
		return hunk{}, 0, fmt.Errorf("hunk %s: its lines do not match its counts", h.header)
	}
	for i < len(lines) && strings.HasPrefix(lines[i], `\`) {
		if err := noNewline(&h, i); err != nil {
			return hunk{}, 0, err
		}
		i++
	}
	return h, i, nil
}

// noNewline takes the "\n" off the hunk's last line, which a
// "\ No newline at end of file" line at index i follows.
func noNewline(h *hunk, i int) error {
	if len(h.lines) == 0 || !strings.HasSuffix(h.lines[len(h.lines)-1].text, "\n") {
		return fmt.Errorf("line %d: misplaced \"\\ No newline\" in hunk %s", i+1, h.header)
	}
	last := &h.lines[len(h.lines)-1]
	last.text = strings.TrimSuffix(last.text, "\n")
	return nil
}

// apply applies fp to the tree at root. Each hunk's old lines must match
// exactly: at the line the hunk names (moved by what earlier hunks added
// or removed), or else at the nearest line after the previous hunk, as
// patch and git apply find them; there is no fuzz.
func (fp filePatch) apply(root string) error {
	var lines []string
	if fp.oldPath != "" {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(fp.oldPath)))
		if err != nil {
			return err
		}
		lines = splitLines(string(data))
	} else if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(fp.newPath))); err == nil {
		return fmt.Errorf("%s: the patch creates it, but it exists", fp.newPath)
	}
	var out []string
	pos := 0 // lines before pos are done
	for _, h := range fp.hunks {
		var old, repl []string
		for _, l := range h.lines {
			if l.op != '+' {
				old = append(old, l.text)
			}
			if l.op != '-' {
				repl = append(repl, l.text)
			}
		}
		at := h.oldStart - 1
		if h.oldCount == 0 {
			at = h.oldStart // an insertion after line oldStart
		}
		found := -1
		for off := 0; found < 0 && (at-off >= pos || at+off+len(old) <= len(lines)); off++ {
			for _, c := range []int{at + off, at - off} {
				if c >= pos && c+len(old) <= len(lines) && slices.Equal(lines[c:c+len(old)], old) {
					found = c
					break
				}
			}
		}
		if found < 0 {
			return fmt.Errorf("%s: hunk %s does not apply", fp.path(), h.header)
		}
		out = append(out, lines[pos:found]...)
		out = append(out, repl...)
		pos = found + len(old)
	}
	out = append(out, lines[pos:]...)
	content := strings.Join(out, "")
	if fp.newPath == "" {
		if content != "" {
			return fmt.Errorf("%s: the patch deletes it, but lines are left", fp.oldPath)
		}
		return os.Remove(filepath.Join(root, filepath.FromSlash(fp.oldPath)))
	}
	if fp.oldPath != "" && fp.oldPath != fp.newPath {
		if err := os.Remove(filepath.Join(root, filepath.FromSlash(fp.oldPath))); err != nil {
			return err
		}
	}
	p := filepath.Join(root, filepath.FromSlash(fp.newPath))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

// TestApplyAndCompare checks the applier and the comparison on a tree of
// their own: a hunk moved by an earlier file's lines, a file without a
// final newline, a new file, a deleted file; and that one byte changed
// in the result is reported.
func TestApplyAndCompare(t *testing.T) {
	root, want := t.TempDir(), t.TempDir()
	testenv.WriteTree(t, root, map[string]string{
		"a.go":   "package a\n\nfunc A() {}\n\nfunc B() {}\n",
		"b.txt":  "one\ntwo",
		"gone.x": "bye\n",
	})
	testenv.WriteTree(t, want, map[string]string{
		"a.go":      "package a\n\nfunc A() {}\n\n// reasonix: B is gone.\nfunc C() {}\n",
		"b.txt":     "one\nthree\n",
		"new/n.txt": "new\n",
	})
	patch := `A header: what and why.
--- a/a.go
+++ b/a.go
@@ -3,3 +3,4 @@
 func A() {}
 
-func B() {}
+// reasonix: B is gone.
+func C() {}
--- a/b.txt
+++ b/b.txt
@@ -1,2 +1,2 @@
 one
-two
\ No newline at end of file
+three
--- /dev/null
+++ b/new/n.txt
@@ -0,0 +1 @@
+new
--- a/gone.x
+++ /dev/null
@@ -1 +0,0 @@
-bye
`
	files, err := parsePatch([]byte(patch))
	if err != nil {
		t.Fatal(err)
	}
	for _, fp := range files {
		if err := fp.apply(root); err != nil {
			t.Fatal(err)
		}
	}
	if d := compareTrees(t, want, root, nil); len(d) > 0 {
		t.Fatalf("applied tree differs: %v", d)
	}
	if !files[0].hunks[0].adds(marker) || files[1].hunks[0].adds(marker) {
		t.Error("adds does not find the marker where it is, or finds it where it is not")
	}

	// One byte changed, a file added, a file removed: each reported.
	if err := os.WriteFile(filepath.Join(root, "b.txt"), []byte("one\nthreE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "extra"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "new", "n.txt")); err != nil {
		t.Fatal(err)
	}
	d := compareTrees(t, want, root, nil)
	if len(d) != 3 || !strings.HasPrefix(d[0], "b.txt differs: line 2") || !strings.HasPrefix(d[1], "extra is extra") || d[2] != "new/n.txt is missing" {
		t.Errorf("compareTrees = %q", d)
	}

	// A hunk whose context is not there does not apply.
	bad, err := parsePatch([]byte("--- a/a.go\n+++ b/a.go\n@@ -1,1 +1,1 @@\n-package b\n+package c\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := bad[0].apply(root); err == nil {
		t.Error("a hunk that does not match applied")
	}
}
