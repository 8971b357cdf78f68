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

// TestRendererSeparatesMessages: in text output the answer of each model
// request is its own paragraph: a blank line comes between the text of one
// step and the next, never inside one, and a subagent's text stays out.
func TestRendererSeparatesMessages(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	r := newRenderer("text", &stdout, &stderr)
	for _, ev := range []event.Event{
		&event.TurnStarted{},
		&event.TextDelta{Text: "I'll create "},
		&event.TextDelta{Text: "the file."},
		&event.UsageReported{},
		&event.ToolStarted{Tool: "write_file", Args: `{"path":"out.txt"}`},
		&event.ToolFinished{Tool: "write_file"},
		&event.TextDelta{Meta: event.Meta{Task: "f1.1"}, Text: "a subagent"},
		&event.TextDelta{Text: "I wrote **out.txt** for you.\n"},
		&event.UsageReported{},
		&event.TurnStarted{},
		&event.TextDelta{Text: "Next turn."},
	} {
		r.event(ev)
	}
	if err := r.finish(&event.TurnDone{Status: event.StatusOK}, "t.jsonl"); err != nil {
		t.Fatal(err)
	}
	want := "I'll create the file.\n\nI wrote **out.txt** for you.\n\nNext turn.\n"
	if stdout.String() != want {
		t.Fatalf("stdout = %q, want %q", stdout.String(), want)
	}
}
