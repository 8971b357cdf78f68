package main

import (
	"fmt"
	"os"
	"testing"
)

// The tests of package main run the commands in-process (NewCmdX with a
// runF, runCLI, openLive). The end-to-end tests, which build the binary
// and run it, are in package e2e (./e2e).

// pluginDir holds what the tests build on demand (the plugin example, see
// pluginBinary); TestMain removes it.
var pluginDir string

// TestMain builds nothing: it makes pluginDir and removes it at the end.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "reasonix-plugin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
