package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Small helpers the end-to-end tests share. Package main's tests have
// copies of some of them: this package cannot import those.

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, text string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), perm); err != nil {
		t.Fatal(err)
	}
	// WriteFile leaves the mode of an existing file alone and the umask
	// may narrow a new one; tests that check modes need the exact one.
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
}

// pluginBinary builds cmd/reasonix-plugin-example once, next to the
// reasonix binary TestMain built (and removes with it).
var pluginBuild struct {
	once sync.Once
	path string
	err  error
}

func pluginBinary(t testing.TB) string {
	t.Helper()
	pluginBuild.once.Do(func() {
		path := filepath.Join(filepath.Dir(e2eBinary), "reasonix-plugin-example")
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
		t.Fatalf("build the plugin example: %v", pluginBuild.err)
	}
	return pluginBuild.path
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// tableRows maps each row of the `reasonix workers` table to its fields,
// by name.
func tableRows(t *testing.T, out string) map[string][]string {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "NAME") {
		t.Fatalf("no table header in:\n%s", out)
	}
	header := strings.Fields(lines[0])
	want := []string{"NAME", "ADDRESS", "STATE", "CAPACITY", "RUNNING", "FREE", "RTT", "WORKSPACES"}
	if !slices.Equal(header, want) {
		t.Errorf("header = %q, want %q", header, want)
	}
	// Columns are found by the header's offsets, since STATE may hold a
	// space ("bad token").
	starts := make([]int, len(want))
	for i, h := range want {
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
