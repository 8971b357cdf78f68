// Package clitest is what the tests of the commands share, in package main
// and in the end-to-end package: building the plugin example and reading
// the tables the commands print. Only tests import it.
package clitest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

var pluginBuild struct {
	once sync.Once
	path string
	err  error
}

// PluginBinary builds cmd/reasonix-plugin-example into dir, once per
// process (later calls return that build whatever dir they name), and
// returns its path. The caller removes dir when its tests end.
func PluginBinary(tb testing.TB, dir string) string {
	tb.Helper()
	pluginBuild.once.Do(func() {
		path := filepath.Join(dir, "reasonix-plugin-example")
		if runtime.GOOS == "windows" {
			path += ".exe"
		}
		cmd := exec.Command("go", "build", "-o", path, "reasonix/cmd/reasonix-plugin-example")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			pluginBuild.err = fmt.Errorf("%w\n%s", err, out)
			return
		}
		pluginBuild.path = path
	})
	if pluginBuild.err != nil {
		tb.Fatalf("build the plugin example: %v", pluginBuild.err)
	}
	return pluginBuild.path
}

// WorkersColumns is the header of the `reasonix workers` table.
var WorkersColumns = []string{"NAME", "ADDRESS", "STATE", "CAPACITY", "RUNNING", "FREE", "RTT", "WORKSPACES"}

// TableRows maps each row of the `reasonix workers` table in out to its
// cells, by name, and checks the header.
func TableRows(tb testing.TB, out string) map[string][]string {
	tb.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "NAME") {
		tb.Fatalf("no table header in:\n%s", out)
	}
	if header := strings.Fields(lines[0]); !slices.Equal(header, WorkersColumns) {
		tb.Errorf("header = %q, want %q", header, WorkersColumns)
	}
	// Columns are found by the header's offsets, since STATE may hold a
	// space ("bad token").
	starts := make([]int, len(WorkersColumns))
	for i, h := range WorkersColumns {
		starts[i] = strings.Index(lines[0], h)
	}
	rows := map[string][]string{}
	for _, l := range lines[1:] {
		if l == "" {
			break
		}
		var cells []string
		for i := range starts {
			end := len(l)
			if i+1 < len(starts) && starts[i+1] < len(l) {
				end = starts[i+1]
			}
			if starts[i] >= len(l) {
				cells = append(cells, "")
				continue
			}
			cells = append(cells, strings.TrimSpace(l[starts[i]:end]))
		}
		rows[cells[0]] = cells
	}
	return rows
}
