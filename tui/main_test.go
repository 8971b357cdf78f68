package tui

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: a
// session's actors, a subscription reader or a program. teatest's own
// SIGINT watcher never ends, by its design, and is one exception; the
// other is the coarse clock regexp2 (the highlighter's regular
// expressions) runs for match timeouts, which stops on its own a while
// after the last match.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest/v2.NewTestModel.func2"),
		goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}
