//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBashTool runs the real bash tool with the sandbox as its wrapper.
func TestBashTool(t *testing.T) {
	t.Parallel()
	j := newJail(t, false)
	bash := builtinTool(t, j.s, j.root, "bash")
	marker := fmt.Sprintf("1000.%d99", os.Getpid())
	t.Cleanup(func() { killAll(marker) })
	tests := []struct {
		name    string
		command string
		want    string
		check   func(t *testing.T)
	}{
		{name: "write inside the root", command: "echo hi > in.txt && cat in.txt", want: "hi\nexit code: 0",
			check: func(t *testing.T) {
				if b, err := os.ReadFile(filepath.Join(j.root, "in.txt")); err != nil || string(b) != "hi\n" {
					t.Errorf("in.txt = %q, %v", b, err)
				}
			}},
		{name: "write outside", command: "echo hi > " + filepath.Join(j.outside, "tool.txt"), want: "Read-only file system",
			check: func(t *testing.T) {
				if _, err := os.Lstat(filepath.Join(j.outside, "tool.txt")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("tool.txt exists outside: %v", err)
				}
			}},
		// The tool waits for the command, not for what it left running;
		// the jail's PID namespace ends with the command.
		{name: "background process does not outlive the command", command: "sleep " + marker + " & echo started", want: "started",
			check: func(t *testing.T) {
				if left := processesWith(marker); len(left) > 0 {
					t.Errorf("survived the command: %q", left)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args, _ := json.Marshal(map[string]string{"command": tt.command})
			out, err := bash.Execute(t.Context(), args)
			if err != nil || !strings.Contains(out, tt.want) {
				t.Fatalf("bash %q = %q, %v; want output containing %q", tt.command, out, err, tt.want)
			}
			tt.check(t)
		})
	}
}
