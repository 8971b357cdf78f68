package headless

import (
	"context"
	"fmt"
	"io"

	"reasonix/actors/event"
)

// preparer returns how Run readies each prompt of turn t for the
// session: expanded by t.prep (as typed when it is nil), with its warnings
// published as notice events. The renderer then shows them like any
// notice: on the event stream in stream-json, on stderr in text. The json
// format renders no events, so there they go to stderr directly; nothing
// else writes to stderr in that format.
func (t *Turn) preparer(stderr io.Writer, bus *event.Bus, session string) func(context.Context, string) string {
	return func(ctx context.Context, input string) string {
		if t.Prep == nil {
			return input
		}
		text, warnings := t.Prep.Expand(ctx, input)
		for _, w := range warnings {
			if t.Format == "json" {
				fmt.Fprintf(stderr, "reasonix: warning: %s\n", w)
				continue
			}
			bus.Publish(&event.Notice{Meta: event.Meta{Session: session}, Level: "warn", Message: w})
		}
		return text
	}
}
