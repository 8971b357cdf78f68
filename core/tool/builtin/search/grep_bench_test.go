package search

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"reasonix/core/testenv"
	"reasonix/core/tool"
)

// gorootPatterns are the searches timed against ripgrep on GOROOT/src.
var gorootPatterns = []struct {
	name       string
	pattern    string
	ignoreCase bool
	// testDir narrows the correctness test to a subtree for a pattern that
	// tests every line, which is slow under the race detector.
	testDir string
}{
	{"literal", "func main", false, ""},
	{"regex", `errors\.New\("[a-z]+`, false, ""},
	{"ignore_case", "deadline", true, ""},
	{"alternation", "TODO|FIXME", false, ""},
	{"no_literal", `[A-Z][a-z]+[0-9]{3}\b`, false, "net/http"},
}

// countGoroot runs the grep engine over dir with no practical result cap
// and returns the number of matching lines.
func countGoroot(tb testing.TB, dir, pattern string, ignoreCase bool) int {
	tb.Helper()
	lm, err := newLineMatcher(pattern, false, ignoreCase)
	if err != nil {
		tb.Fatal(err)
	}
	env := tool.Env{Root: dir}
	s := &grepSearch{lm: lm, limit: 1 << 30, tree: newSearchTree(env, dir)}
	files, _, err := s.run(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, f := range files {
		n += f.count
	}
	return n
}

// rgArgs are ripgrep flags that make it search what grep searches: hidden
// files included, .gitignore honoured even outside a git repository, but
// neither the user's global excludes nor .ignore/.rgignore files (grep
// reads neither), .git skipped, per-file counts of matching lines.
func rgArgs(pattern string, ignoreCase bool) []string {
	args := []string{"--no-config", "--hidden", "--no-require-git", "--no-ignore-global", "--no-ignore-dot",
		"--glob", "!.git", "--count"}
	if ignoreCase {
		args = append(args, "--ignore-case")
	}
	return append(args, "--regexp", pattern, ".")
}

// countRipgrep runs rg in dir and sums its per-file counts.
func countRipgrep(tb testing.TB, dir, pattern string, ignoreCase bool) int {
	tb.Helper()
	cmd := exec.Command("rg", rgArgs(pattern, ignoreCase)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil && !(cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 1) {
		tb.Fatalf("rg: %v", err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if i := strings.LastIndexByte(line, ':'); i >= 0 {
			c, err := strconv.Atoi(line[i+1:])
			if err != nil {
				tb.Fatalf("rg output %q: %v", line, err)
			}
			n += c
		}
	}
	return n
}

// gorootSrc is the benchmark corpus, GOROOT/src, or a skip.
func gorootSrc(tb testing.TB) string {
	dir := filepath.Join(runtime.GOROOT(), "src")
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		tb.Skip("GOROOT/src not available")
	}
	return dir
}

// BenchmarkGrepGoroot times the grep engine over GOROOT/src.
func BenchmarkGrepGoroot(b *testing.B) {
	dir := gorootSrc(b)
	for _, p := range gorootPatterns {
		b.Run(p.name, func(b *testing.B) {
			var n int
			for b.Loop() {
				n = countGoroot(b, dir, p.pattern, p.ignoreCase)
			}
			b.ReportMetric(float64(n), "matches")
		})
	}
}

// BenchmarkRipgrepGoroot times rg on the same searches, for the ratio.
func BenchmarkRipgrepGoroot(b *testing.B) {
	testenv.NeedRipgrep(b)
	dir := gorootSrc(b)
	for _, p := range gorootPatterns {
		b.Run(p.name, func(b *testing.B) {
			var n int
			for b.Loop() {
				n = countRipgrep(b, dir, p.pattern, p.ignoreCase)
			}
			b.ReportMetric(float64(n), "matches")
		})
	}
}

// TestGrepMatchesRipgrep checks that the engine counts the same matching
// lines as ripgrep on GOROOT/src. With rgArgs the two search the same files;
// the one behaviour that could still differ is binary detection: grep skips
// a file with a NUL byte anywhere, while rg, reading in chunks, may count
// matches it saw before the first NUL. GOROOT/src has no such file for
// these patterns, so the counts must be equal.
func TestGrepMatchesRipgrep(t *testing.T) {
	if testing.Short() {
		t.Skip("searches GOROOT/src")
	}
	testenv.NeedRipgrep(t)
	dir := gorootSrc(t)
	for _, p := range gorootPatterns {
		t.Run(p.name, func(t *testing.T) {
			dir := filepath.Join(dir, filepath.FromSlash(p.testDir))
			got := countGoroot(t, dir, p.pattern, p.ignoreCase)
			want := countRipgrep(t, dir, p.pattern, p.ignoreCase)
			if got != want {
				t.Errorf("grep counts %d matching lines, rg %d", got, want)
			}
			if got == 0 {
				t.Errorf("no matches: the comparison proves nothing")
			}
		})
	}
}
