// Command reasonix-mutants checks that the tests guard the code behind the
// project's claims: it applies, one at a time, the one-line changes listed
// in mutants.tsv to a copy of the working tree, runs the tests named for
// each, and reports each change as killed (a test failed), survived (every
// test passed: a claim no test guards) or stale (the line to change is no
// longer there exactly once, or the change does not build).
//
// Run it from the module root with `make mutants`, or `go run
// ./cmd/reasonix-mutants [-run REGEXP] [-count N]`. It never touches the
// working tree: the copy lives in a temporary directory. It exits 1 when
// any mutant survived or is stale.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// mutant is one row of the table: in File, the one line containing
// Original (exactly once in the file) has Original replaced by
// Replacement; the tests matching Tests in Package must then fail.
type mutant struct {
	line        int // in the table, for messages
	File        string
	Original    string
	Replacement string
	Package     string
	Tests       string
	Claim       string
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	fs.SetOutput(stderr)
	table := fs.String("table", "cmd/reasonix-mutants/mutants.tsv", "the mutation table, from the module root")
	only := fs.String("run", "", "only the mutants whose file, claim or tests match this regexp")
	count := fs.Int("count", 1, "run each mutant's tests this many times (a mutant survives only if every run passes)")
	timeout := fs.Duration("timeout", 5*time.Minute, "give up on one mutant's tests after this long (counted as killed, and said so)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var filter *regexp.Regexp
	if *only != "" {
		var err error
		if filter, err = regexp.Compile(*only); err != nil {
			fmt.Fprintln(stderr, "mutants: -run:", err)
			return 2
		}
	}
	ms, err := readTable(*table)
	if err != nil {
		fmt.Fprintln(stderr, "mutants:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	tree, err := copyTree(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "mutants:", err)
		return 2
	}
	defer os.RemoveAll(tree)

	var killed, survived, stale int
	for _, m := range ms {
		if filter != nil && !filter.MatchString(m.File+" "+m.Claim+" "+m.Tests) {
			continue
		}
		verdict, detail := try(ctx, tree, m, *count, *timeout)
		switch verdict {
		case "killed":
			killed++
		case "survived":
			survived++
		default:
			stale++
		}
		fmt.Fprintf(stdout, "%-8s %s:%d %s (%s)%s\n", verdict, *table, m.line, m.Claim, m.File, detail)
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "mutants: interrupted")
			return 2
		}
	}
	fmt.Fprintf(stdout, "%d killed, %d survived, %d stale\n", killed, survived, stale)
	if survived+stale > 0 {
		return 1
	}
	return 0
}

// readTable parses the tab-separated table: file, original, replacement,
// package, test regexp, claim. Blank lines and lines starting with # are
// comments. In the original and replacement columns, \t stands for a tab
// and \n for a newline, so a change can span lines.
func readTable(path string) ([]mutant, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mutant
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cols := strings.Split(text, "\t")
		if len(cols) != 6 {
			return nil, fmt.Errorf("%s:%d: want 6 tab-separated columns (file, original, replacement, package, tests, claim), got %d", path, n, len(cols))
		}
		unescape := strings.NewReplacer(`\t`, "\t", `\n`, "\n").Replace
		m := mutant{line: n, File: cols[0], Original: unescape(cols[1]), Replacement: unescape(cols[2]),
			Package: cols[3], Tests: cols[4], Claim: cols[5]}
		if m.Original == m.Replacement || m.Original == "" {
			return nil, fmt.Errorf("%s:%d: the replacement must differ from a non-empty original", path, n)
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// copyTree copies the files git knows (tracked, and untracked but not
// ignored, so uncommitted work is checked too) into a temporary directory.
func copyTree(ctx context.Context) (string, error) {
	list, err := exec.CommandContext(ctx, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return "", fmt.Errorf("list the tree with git: %w", err)
	}
	dir, err := os.MkdirTemp("", "reasonix-mutants-")
	if err != nil {
		return "", err
	}
	for _, name := range bytes.Split(list, []byte{0}) {
		if len(name) == 0 {
			continue
		}
		if err := copyFile(string(name), filepath.Join(dir, string(name))); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // deleted in the work tree, not yet in git
			}
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

func copyFile(src, dst string) error {
	info, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if info.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, info.Mode().Perm())
}

// try applies m in tree, runs its tests and restores the file.
func try(ctx context.Context, tree string, m mutant, count int, timeout time.Duration) (verdict, detail string) {
	path := filepath.Join(tree, m.File)
	orig, err := os.ReadFile(path)
	if err != nil {
		return "stale", ": " + err.Error()
	}
	if n := bytes.Count(orig, []byte(m.Original)); n != 1 {
		return "stale", fmt.Sprintf(": the original text occurs %d times, want once", n)
	}
	mutated := bytes.Replace(orig, []byte(m.Original), []byte(m.Replacement), 1)
	if err := os.WriteFile(path, mutated, 0o644); err != nil {
		return "stale", ": " + err.Error()
	}
	defer os.WriteFile(path, orig, 0o644)

	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, "go", "test", "-count", fmt.Sprint(count), "-run", m.Tests, m.Package)
	cmd.Dir = tree
	out, err := cmd.CombinedOutput()
	switch {
	case err == nil && bytes.Contains(out, []byte("no tests to run")):
		return "stale", ": no test matches " + m.Tests
	case err == nil:
		return "survived", ""
	case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
		return "stale", ": the mutant does not build"
	case tctx.Err() == context.DeadlineExceeded:
		return "killed", fmt.Sprintf(" (timed out after %s)", timeout)
	}
	return "killed", ""
}
