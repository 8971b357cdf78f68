package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestProcessGroupIsKilled checks that a process the server started, which
// holds the server's pipes, dies with it: both when the server exits on its
// own and when the client closes.
func TestProcessGroupIsKilled(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name string
		end  func(t *testing.T, c *Client)
	}{
		{name: "server exits", end: func(t *testing.T, c *Client) {
			var exit *ExitError
			if _, err := c.CallTool(testCtx(t), "die", nil, nil); !errors.As(err, &exit) {
				t.Errorf("error = %v, want an *ExitError", err)
			}
		}},
		{name: "client closes", end: func(t *testing.T, c *Client) {
			if err := c.Close(); err != nil {
				t.Error(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newLogRecorder()
			tr := startFakeStdio(t, map[string]string{helperGrandchildEnv: "1"}, slog.New(rec))
			c, err := Connect(testCtx(t), tr, testClientInfo, Options{Logger: slog.New(rec)})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var pid int
			line := rec.wait(t, "grandchild pid")
			if _, err := fmt.Sscanf(line[strings.Index(line, "grandchild pid"):], "grandchild pid %d", &pid); err != nil {
				t.Fatalf("parse %q: %v", line, err)
			}
			tt.end(t, c)
			<-c.Done()
			_ = c.Close() // waits for the transport's supervisor
			if alive(pid) {
				t.Errorf("grandchild %d survived its server", pid)
			}
		})
	}
}

// alive reports whether pid is a process that is not on its way out. A
// signal is delivered asynchronously, so a process just sent SIGKILL may
// still be listed as running; it counts as dead when it is gone, a zombie,
// already exiting (PF_EXITING), or has SIGKILL pending.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The fields after the parenthesised command name start with the
	// state; the seventh is the flags word.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 7 || f[0] == "Z" || f[0] == "X" {
		return false
	}
	const pfExiting = 0x4
	if flags, err := strconv.ParseUint(f[6], 10, 64); err == nil && flags&pfExiting != 0 {
		return false
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	const sigkillBit = 1 << (9 - 1)
	for _, line := range strings.Split(string(status), "\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok || (name != "SigPnd" && name != "ShdPnd") {
			continue
		}
		if mask, err := strconv.ParseUint(strings.TrimSpace(val), 16, 64); err == nil && mask&sigkillBit != 0 {
			return false
		}
	}
	return true
}
