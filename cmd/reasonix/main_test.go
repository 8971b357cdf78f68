package main

import (
	"os"
	"testing"
)

// The tests of package main run the commands in-process (NewCmdX with a
// runF, runCLI, openLive). The end-to-end tests, which build the binary
// and run it, are in package e2e (./e2e).

// TestMain builds nothing: it only removes what the tests built on demand
// (the plugin example, see pluginBinary).
func TestMain(m *testing.M) {
	code := m.Run()
	if pluginBuild.dir != "" {
		os.RemoveAll(pluginBuild.dir)
	}
	os.Exit(code)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
