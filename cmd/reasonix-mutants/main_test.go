package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tinyModule is a module of one function and one test, to mutate.
func tinyModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":      "module tiny\n\ngo 1.22\n",
		"add.go":      "package tiny\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n",
		"add_test.go": "package tiny\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(Add(1, 2))\n\t}\n}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestTry: a change the test notices is killed, one it does not survives,
// and a row whose line is gone, whose change does not build or whose
// tests match nothing is stale; the file is restored after each.
func TestTry(t *testing.T) {
	dir := tinyModule(t)
	cases := []struct {
		name, original, replacement, tests, want string
	}{
		{"noticed", "return a + b", "return a - b", "TestAdd", "killed"},
		{"unnoticed", "// Add adds.", "// Add sums.", "TestAdd", "survived"},
		{"line gone", "return a * b", "return a", "TestAdd", "stale"},
		{"does not build", "return a + b", "return a +", "TestAdd", "stale"},
		{"no test", "return a + b", "return a - b", "TestNothing", "stale"},
	}
	before, err := os.ReadFile(filepath.Join(dir, "add.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := mutant{File: "add.go", Original: tc.original, Replacement: tc.replacement, Package: "./", Tests: tc.tests}
			got, detail := try(context.Background(), dir, m, 1, time.Minute)
			if got != tc.want {
				t.Errorf("verdict %s%s, want %s", got, detail, tc.want)
			}
			after, err := os.ReadFile(filepath.Join(dir, "add.go"))
			if err != nil || string(after) != string(before) {
				t.Fatalf("add.go not restored: %q, %v", after, err)
			}
		})
	}
}

func TestReadTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := "# comment\n\na.go\tx := 1\\n\\ty\tx := 2\t./a/\tTestA\tthe claim\n"
	p := filepath.Join(dir, "good.tsv")
	if err := os.WriteFile(p, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	ms, err := readTable(p)
	if err != nil || len(ms) != 1 {
		t.Fatalf("readTable = %+v, %v", ms, err)
	}
	if m := ms[0]; m.Original != "x := 1\n\ty" || m.Replacement != "x := 2" || m.Claim != "the claim" || m.line != 3 {
		t.Errorf("row = %+v", m)
	}
	for name, text := range map[string]string{
		"five columns": "a.go\tx\ty\t./a/\tTestA\n",
		"no change":    "a.go\tx\tx\t./a/\tTestA\tclaim\n",
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".tsv")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readTable(p); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
