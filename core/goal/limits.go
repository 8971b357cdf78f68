package goal

import (
	"fmt"
	"time"
)

// Reached names the limit that turns goal turns, tokens and elapsed time
// have reached, or is empty. Inside a turn the turns are those before it,
// which the turn itself cannot raise.
func (l Limits) Reached(turns, tokens int, elapsed time.Duration) string {
	switch {
	case l.MaxTurns > 0 && turns >= l.MaxTurns:
		return fmt.Sprintf("turn limit reached (%d turns)", l.MaxTurns)
	case l.MaxTokens > 0 && tokens >= l.MaxTokens:
		return fmt.Sprintf("token budget reached (%d of %d tokens)", tokens, l.MaxTokens)
	case l.MaxTime > 0 && elapsed >= l.MaxTime:
		return fmt.Sprintf("time budget reached (%s of %s)", elapsed.Round(time.Second), l.MaxTime)
	}
	return ""
}
