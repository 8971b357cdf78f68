package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// StrictEnv is the environment variable that, set to 1, turns every skip
// for a missing program into a failure.
const StrictEnv = "REASONIX_TEST_STRICT"

// packages maps each program tests need to the Debian package that
// provides it, so the skip message says what to install.
var packages = map[string]string{
	"bwrap":    "bubblewrap",
	"git":      "git",
	"node":     "nodejs",
	"npm":      "npm",
	"npx":      "npm",
	"rg":       "ripgrep",
	"tmux":     "tmux",
	"chromium": "chromium",
	"protoc":   "protobuf-compiler",
}

// Strict reports whether missing programs fail tests rather than skip
// them.
func Strict() bool {
	return os.Getenv(StrictEnv) == "1"
}

// Need returns the path of program on PATH. When it is missing the test
// is skipped, or failed under REASONIX_TEST_STRICT=1, with a message
// naming the package to install; either way Need does not return, so the
// caller may use the path at once.
func Need(tb testing.TB, program string) string {
	tb.Helper()
	path, err := exec.LookPath(program)
	if err == nil {
		return path
	}
	pkg, ok := packages[program]
	if !ok {
		pkg = program
	}
	Missing(tb, "%s is not on PATH: install the %s package (apt install %s) to run this test", program, pkg, pkg)
	return ""
}

// NeedBwrap is Need(tb, "bwrap"): the bash jail on Linux.
func NeedBwrap(tb testing.TB) string {
	tb.Helper()
	return Need(tb, "bwrap")
}

// NeedNode is Need(tb, "node"): real MCP servers written in JavaScript.
func NeedNode(tb testing.TB) string {
	tb.Helper()
	return Need(tb, "node")
}

// NeedRipgrep is Need(tb, "rg"): the grep tool is checked against it.
func NeedRipgrep(tb testing.TB) string {
	tb.Helper()
	return Need(tb, "rg")
}

// Missing reports that something the test needs from this machine is
// absent: it skips the test with the message, or fails it under
// REASONIX_TEST_STRICT=1. Need covers programs; Missing is for the rest
// (a sandbox that is installed but cannot start here, for one).
func Missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if Strict() {
		tb.Fatalf("%s (%s=1 makes this a failure)", msg, StrictEnv)
		return
	}
	tb.Skip(msg)
}
