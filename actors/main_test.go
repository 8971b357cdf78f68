package actors

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when any test leaves a goroutine behind: actor
// systems, stream goroutines, tool goroutines and fake servers must all be
// gone once every test and its cleanups have run.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
