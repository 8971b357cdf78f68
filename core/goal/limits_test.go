package goal

import (
	"testing"
	"time"
)

func TestLimitsReached(t *testing.T) {
	t.Parallel()
	l := Limits{MaxTurns: 5, MaxTokens: 1000, MaxTime: time.Minute}
	tests := []struct {
		name    string
		l       Limits
		turns   int
		tokens  int
		elapsed time.Duration
		want    string
	}{
		{name: "below every limit", l: l, turns: 4, tokens: 999, elapsed: 59 * time.Second},
		{name: "turns", l: l, turns: 5, want: "turn limit reached (5 turns)"},
		{name: "tokens at the ceiling", l: l, tokens: 1000, want: "token budget reached (1000 of 1000 tokens)"},
		{name: "time past it", l: l, elapsed: 61 * time.Second, want: "time budget reached (1m1s of 1m0s)"},
		{name: "zero is no limit", l: Limits{}, turns: 1 << 20, tokens: 1 << 30, elapsed: 24 * time.Hour},
		{name: "turns first", l: l, turns: 9, tokens: 9999, elapsed: time.Hour, want: "turn limit reached (5 turns)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.l.Reached(tt.turns, tt.tokens, tt.elapsed); got != tt.want {
				t.Errorf("Reached = %q, want %q", got, tt.want)
			}
		})
	}
}
