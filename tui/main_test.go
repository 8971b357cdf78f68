package tui

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: a
// session's actors, a subscription reader or a program.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
