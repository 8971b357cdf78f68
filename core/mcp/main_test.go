package mcp

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain doubles as the stdio fake server: the client tests start this
// test binary again with helperEnv set, and it serves MCP instead of
// running tests. Otherwise it checks, after every test, that no goroutine
// was left behind.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(runHelperServer())
	}
	goleak.VerifyTestMain(m)
}
