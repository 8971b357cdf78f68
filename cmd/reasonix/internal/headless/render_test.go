package headless

import (
	"bytes"
	"testing"

	"reasonix/actors"
	"reasonix/actors/event"
)

// TestRendererSaysWhatWasNotSaved: in text output the end of a turn that
// could not save everything says so on stderr, whatever its status, and
// an interrupted one does not claim its transcript was saved.
func TestRendererSaysWhatWasNotSaved(t *testing.T) {
	t.Parallel()
	const note = "incomplete: transcript not saved: write x: no space left on device (ENOSPC)"
	cases := []struct {
		name, status, err, want string
	}{
		{"incomplete", actors.StatusIncomplete, note, "reasonix: " + note + "\n"},
		{"failed", event.StatusFailed, "model error; " + note, "reasonix: " + note + "\n"},
		{"cancelled", event.StatusCancelled, "cancelled; " + note, "reasonix: interrupted; " + note + "\n"},
		{"cancelled and saved", event.StatusCancelled, "", "reasonix: interrupted; transcript saved to t.jsonl\n"},
		{"failed, all saved", event.StatusFailed, "the plan is incomplete: step 2 left", ""},
		{"ok", event.StatusOK, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			r := newRenderer("text", &stdout, &stderr)
			if err := r.finish(&event.TurnDone{Status: tc.status, Error: tc.err}, "t.jsonl"); err != nil {
				t.Fatal(err)
			}
			if stderr.String() != tc.want {
				t.Fatalf("stderr = %q, want %q", stderr.String(), tc.want)
			}
		})
	}
}
