package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Package init budgets of the binary, from `GODEBUG=inittrace=1`. Every
// command pays for the package init of everything linked into the one
// binary, so what only the chat or a worker needs (the Markdown
// highlighter's lexers and styles, HTML sanitizing, the remote stack) must
// cost nothing until it is used. The chroma and glamour copies in
// third_party and protoactor's patch 0012 are what keep these.
const (
	initPackageBudget = 1.0 // ms, any one package
	initTotalBudget   = 6.0 // ms, all packages together
)

// TestPackageInitBudget runs `reasonix version` with the init trace until
// each package's fastest init is under its budget (at most 30 runs, so a
// busy machine does not fail it, while a package that really costs a
// millisecond fails every run), and fails on any package, or the total of
// the fastest, over budget.
func TestPackageInitBudget(t *testing.T) {
	t.Parallel()
	best := map[string]float64{}
	for run := 0; run < 30; run++ {
		for pkg, ms := range initTrace(t) {
			if old, ok := best[pkg]; !ok || ms < old {
				best[pkg] = ms
			}
		}
		if over, total := overBudget(best); len(over) == 0 && total <= initTotalBudget && run >= 4 {
			break
		}
	}
	over, total := overBudget(best)
	for _, o := range over {
		t.Errorf("package init over %.1f ms: %s", initPackageBudget, o)
	}
	if total > initTotalBudget {
		t.Errorf("package init totals %.2f ms (fastest of each package), over the %.1f ms budget; largest: %s", total, initTotalBudget, strings.Join(largest(best, 8), ", "))
	}
	t.Logf("package init: %d packages, %.2f ms in total; largest: %s", len(best), total, strings.Join(largest(best, 5), ", "))
}

// initTrace runs the binary once with the init trace and returns each
// package's init clock time in milliseconds.
func initTrace(t *testing.T) map[string]float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e2eBinary, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "REASONIX_HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("reasonix version: %v\n%s", err, stderr.String())
	}
	// Lines read "init <package> @<start> ms, <clock> ms clock, <bytes> bytes, <n> allocs".
	out := map[string]float64{}
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 7 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		ms, err := strconv.ParseFloat(f[4], 64)
		if err != nil || f[5] != "ms" {
			t.Fatalf("cannot read init trace line %q", sc.Text())
		}
		out[f[1]] += ms
	}
	if len(out) < 50 {
		t.Fatalf("init trace lists %d packages; is GODEBUG=inittrace=1 honoured?\n%s", len(out), stderr.String())
	}
	return out
}

func overBudget(best map[string]float64) (over []string, total float64) {
	for pkg, ms := range best {
		total += ms
		if ms > initPackageBudget {
			over = append(over, fmt.Sprintf("%s %.2f ms", pkg, ms))
		}
	}
	slices.Sort(over)
	return over, total
}

// largest names the n packages with the slowest init.
func largest(best map[string]float64, n int) []string {
	pkgs := make([]string, 0, len(best))
	for p := range best {
		pkgs = append(pkgs, p)
	}
	slices.SortFunc(pkgs, func(a, b string) int {
		if best[a] != best[b] {
			if best[a] > best[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var out []string
	for _, p := range pkgs[:min(n, len(pkgs))] {
		out = append(out, fmt.Sprintf("%s %.2f ms", p, best[p]))
	}
	return out
}
