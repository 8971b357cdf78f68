package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// architecturePackages returns the package paths the "## Packages" block
// of docs/ARCHITECTURE.md lists: the first word of every line of the first
// fenced block after that heading, without a trailing slash.
func architecturePackages(t *testing.T, doc string) []string {
	t.Helper()
	var pkgs []string
	section, fence := false, false
	sc := bufio.NewScanner(strings.NewReader(doc))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			if fence {
				t.Fatal("ARCHITECTURE.md: the Packages block has no closing fence")
			}
			section = line == "## Packages"
		case section && strings.HasPrefix(line, "```"):
			if fence {
				return pkgs
			}
			fence = true
		case fence:
			if f := strings.Fields(line); len(f) > 0 {
				pkgs = append(pkgs, strings.TrimSuffix(f[0], "/"))
			}
		}
	}
	t.Fatal("ARCHITECTURE.md has no fenced block under ## Packages")
	return nil
}

// TestArchitectureListsEveryPackage keeps the package list in
// docs/ARCHITECTURE.md equal to the module's packages: a package added
// without a line there, or a line left behind for a package that is gone
// (or never existed), fails.
func TestArchitectureListsEveryPackage(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := architecturePackages(t, string(doc))

	goList := func(args ...string) []string {
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %s: %v", strings.Join(args, " "), err)
		}
		return strings.Fields(string(out))
	}
	module := goList("list", "-m")[0]
	// -e: a package another change has left not compiling still exists.
	var actual []string
	for _, p := range goList("list", "-e", "./...") {
		rel, ok := strings.CutPrefix(p, module+"/")
		if !ok {
			t.Fatalf("package %q outside module %q", p, module)
		}
		actual = append(actual, rel)
	}

	for i, p := range listed {
		if slices.Contains(listed[:i], p) {
			t.Errorf("ARCHITECTURE.md lists %s twice", p)
		}
		if !slices.Contains(actual, p) {
			t.Errorf("ARCHITECTURE.md lists %s, which is not a package of the module", p)
		}
	}
	for _, p := range actual {
		if !slices.Contains(listed, p) {
			t.Errorf("package %s is missing from the Packages block of docs/ARCHITECTURE.md", p)
		}
	}
}
