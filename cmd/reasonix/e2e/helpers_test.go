package e2e

import (
	"path/filepath"
	"testing"

	"reasonix/cmd/reasonix/internal/clitest"
)

// Small helpers the end-to-end tests share; those package main's tests
// need too are in cmd/reasonix/internal/clitest and core/testenv.

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// pluginBinary builds the plugin example once, next to the reasonix
// binary TestMain built (and removes with it).
func pluginBinary(t testing.TB) string {
	t.Helper()
	return clitest.PluginBinary(t, filepath.Dir(e2eBinary))
}
