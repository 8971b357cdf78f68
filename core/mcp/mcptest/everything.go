package mcptest

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/core/testenv"
)

const (
	// EverythingEnv may name the server's installed entry point (its
	// dist/index.js).
	EverythingEnv = "REASONIX_MCP_EVERYTHING"
	// EverythingVersion is the pinned npm version.
	EverythingVersion = "2026.8.31"
)

var install struct {
	once   sync.Once
	script string
	err    error
}

// Everything returns node and the server's entry script, installing the
// pinned version once per process when needed. A missing node or npm
// skips the test (fails it under REASONIX_TEST_STRICT=1), as testenv.Need
// does.
func Everything(tb testing.TB) (node, script string) {
	tb.Helper()
	node = testenv.NeedNode(tb)
	if p := os.Getenv(EverythingEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			tb.Fatalf("%s=%s: %v", EverythingEnv, p, err)
		}
		return node, p
	}
	npm := testenv.Need(tb, "npm")
	install.once.Do(func() { install.script, install.err = installEverything(npm) })
	if install.err != nil {
		tb.Fatalf("install @modelcontextprotocol/server-everything (set %s to use an installed copy): %v", EverythingEnv, install.err)
	}
	return node, install.script
}

func installEverything(npm string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "reasonix-test", "mcp-everything-"+EverythingVersion)
	script := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err == nil {
		return script, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error",
		"@modelcontextprotocol/server-everything@"+EverythingVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w\n%s", err, out)
	}
	if _, err := os.Stat(script); err != nil {
		return "", err
	}
	return script, nil
}

// StartEverythingHTTP runs the server in streamableHttp mode on a free
// loopback port, stops it when the test ends, and returns its endpoint. A
// port taken between choosing and binding it is retried.
func StartEverythingHTTP(tb testing.TB, node, script string) string {
	tb.Helper()
	for attempt := 0; attempt < 3; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		_ = ln.Close()

		cmd := exec.Command(node, script, "streamableHttp")
		cmd.Env = append(os.Environ(), "PORT="+port)
		w := &lineWatcher{substr: "listening on port", found: make(chan struct{})}
		cmd.Stdout, cmd.Stderr = io.Discard, w
		if err := cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		deadline := time.NewTimer(30 * time.Second)
		select {
		case <-w.found:
			deadline.Stop()
			tb.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-exited
			})
			return "http://127.0.0.1:" + port + "/mcp"
		case err := <-exited:
			deadline.Stop()
			if strings.Contains(w.String(), "EADDRINUSE") || strings.Contains(w.String(), "already in use") {
				continue
			}
			tb.Fatalf("server-everything exited: %v\n%s", err, w.String())
		case <-deadline.C:
			_ = cmd.Process.Kill()
			<-exited
			tb.Fatalf("server-everything did not start:\n%s", w.String())
		}
	}
	tb.Fatal("no free port for server-everything")
	return ""
}

// lineWatcher closes found once the text written to it contains substr.
type lineWatcher struct {
	substr string
	found  chan struct{}
	mu     sync.Mutex
	buf    strings.Builder
	done   bool
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.buf.Write(p)
		if strings.Contains(w.buf.String(), w.substr) {
			w.done = true
			close(w.found)
		}
	}
	return len(p), nil
}

func (w *lineWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
