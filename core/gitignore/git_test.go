package gitignore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix/core/testenv"
)

// TestAgainstGit generates trees with assorted .gitignore files and checks
// that Ignored agrees with `git check-ignore` on every path in them.
func TestAgainstGit(t *testing.T) {
	t.Parallel()
	testenv.Need(t, "git")
	for seed := range 16 {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			paths := generateTree(t, root, rand.New(rand.NewPCG(uint64(seed), 7)))
			runGit(t, root, nil, "init", "-q")
			// The exclude file is generated after init, which writes its own.
			testenv.WriteTree(t, root, map[string]string{".git/info/exclude": "# local\n*.tmp\n!keep.tmp\n"})

			out := runGit(t, root, []byte(strings.Join(paths, "\n")+"\n"),
				"-c", "core.ignorecase=false", "-c", "core.excludesFile=",
				"check-ignore", "--no-index", "--stdin")
			want := map[string]bool{}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if line != "" {
					want[line] = true
				}
			}
			m := New(root)
			for _, p := range paths {
				info, err := os.Stat(filepath.Join(root, p))
				if err != nil {
					t.Fatal(err)
				}
				if got := m.Ignored(p, info.IsDir()); got != want[p] {
					t.Errorf("Ignored(%q, dir=%v) = %v, git says %v", p, info.IsDir(), got, want[p])
				}
			}
			// A tree where git ignores nothing, or everything, tests little.
			if len(want) == 0 || len(want) == len(paths) {
				t.Logf("degenerate tree: %d of %d paths ignored", len(want), len(paths))
			}
			if t.Failed() {
				for _, g := range ignoreFiles(t, root) {
					t.Log(g)
				}
			}
		})
	}
}

// runGit runs git in dir with a configuration isolated from the machine's.
func runGit(t *testing.T, dir string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "HOME="+dir)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// check-ignore exits 1 when nothing is ignored.
	if err != nil && !(len(args) > 0 && slices.Contains(args, "check-ignore") && cmd.ProcessState.ExitCode() == 1) {
		t.Fatalf("git %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

var (
	genNames    = []string{"a", "b", "foo", "bar", "x.go", "y.txt", "z.log", "keep.tmp", "c.tmp", "Build", "doc"}
	genElements = []string{"a", "b", "foo", "bar", "*", "**", "*.go", "*.txt", "?oo", "[ab]", "b*", "*.log", "doc", "[!a]*", "x.*"}
)

// generateTree creates directories and files from a small vocabulary plus
// .gitignore files with patterns built from it, and returns every path.
func generateTree(t *testing.T, root string, r *rand.Rand) []string {
	t.Helper()
	var paths []string
	var mk func(dir string, depth int)
	mk = func(dir string, depth int) {
		for _, n := range genNames {
			if r.IntN(3) != 0 {
				continue
			}
			p := n
			if dir != "" {
				p = dir + "/" + n
			}
			if depth < 3 && r.IntN(2) == 0 && !strings.Contains(n, ".") {
				if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
				mk(p, depth+1)
				continue
			}
			if err := os.WriteFile(filepath.Join(root, p), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		if r.IntN(2) == 0 {
			var lines []string
			for range 1 + r.IntN(5) {
				lines = append(lines, genPattern(r))
			}
			name := filepath.Join(root, dir, ".gitignore")
			if err := os.WriteFile(name, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("", 0)
	if len(paths) == 0 {
		// git refuses an empty pathspec; keep every tree non-empty.
		if err := os.WriteFile(filepath.Join(root, "x.go"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, "x.go")
	}
	return paths
}

func genPattern(r *rand.Rand) string {
	var b strings.Builder
	if r.IntN(4) == 0 {
		b.WriteString("!")
	}
	if r.IntN(4) == 0 {
		b.WriteString("/")
	}
	n := 1 + r.IntN(3)
	for i := range n {
		if i > 0 {
			b.WriteString("/")
		}
		b.WriteString(genElements[r.IntN(len(genElements))])
	}
	if r.IntN(4) == 0 {
		b.WriteString("/")
	}
	if r.IntN(8) == 0 {
		b.WriteString("  ")
	}
	return b.String()
}

// ignoreFiles lists the generated .gitignore files for a failure report.
func ignoreFiles(t *testing.T, root string) []string {
	var out []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == ".gitignore" {
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			out = append(out, fmt.Sprintf("%s:\n%s", rel, data))
		}
		return nil
	})
	return out
}
