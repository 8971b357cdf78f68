package headless

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"reasonix/actors"
	"reasonix/actors/event"
	"reasonix/core/text"
)

var (
	outputFormats = []string{"text", "json", "stream-json"}
	InputFormats  = []string{"text", "stream-json"}
)

// renderer writes a run's events in one output format.
type renderer struct {
	format         string
	stdout, stderr io.Writer
	endsNewline    bool
	wroteText      bool
	// apart says a model step ended since the last text: the next
	// answer's text is another message, set off by a blank line.
	apart bool
}

func newRenderer(format string, stdout, stderr io.Writer) *renderer {
	return &renderer{format: format, stdout: stdout, stderr: stderr, endsNewline: true}
}

func (r *renderer) event(ev event.Event) {
	switch r.format {
	case "stream-json":
		line, err := event.Encode(ev)
		if err != nil {
			return
		}
		line = append(line, '\n')
		_, _ = r.stdout.Write(line)
	case "text":
		r.text(ev)
	}
}

func (r *renderer) text(ev event.Event) {
	switch e := ev.(type) {
	case *event.TextDelta:
		// A planner's text is its plan, shown whole by plan_ready; stdout
		// carries the answer.
		if e.Task != "" || e.Text == "" || e.Role == event.RolePlanner {
			return
		}
		if r.apart && r.wroteText {
			sep := "\n\n"
			if r.endsNewline {
				sep = "\n"
			}
			fmt.Fprint(r.stdout, sep)
		}
		r.apart = false
		fmt.Fprint(r.stdout, e.Text)
		r.wroteText = true
		r.endsNewline = strings.HasSuffix(e.Text, "\n")
	case *event.ToolStarted:
		if e.Task == "" {
			r.apart = true
			fmt.Fprintf(r.stderr, "• %s %s\n", e.Tool, text.OneLine(e.Args, 120))
		}
	case *event.UsageReported, *event.TurnStarted:
		// The end of a model request, or a new turn (a goal's next).
		if ev.EventMeta().Task == "" {
			r.apart = true
		}
	case *event.ToolFinished:
		if e.Task == "" && e.IsError {
			fmt.Fprintf(r.stderr, "  %s failed: %s\n", e.Tool, text.OneLine(e.Output, 200))
		}
	case *event.Notice:
		fmt.Fprintf(r.stderr, "reasonix: %s: %s\n", e.Level, e.Message)
	case *event.CompactionStarted:
		if e.Task == "" {
			fmt.Fprintf(r.stderr, "• compacting: summarising %d older messages (%d tokens)\n", e.Messages, e.Tokens)
		}
	case *event.Compacted:
		if e.Task == "" {
			fmt.Fprintf(r.stderr, "• compacted (%s, %s): %d → %d tokens of %d; originals in %s\n",
				e.Tier, e.Trigger, e.TokensBefore, e.TokensAfter, e.Window, e.Archive)
		}
	case *event.ErrorOccurred:
		if e.Role == event.RolePlanner {
			fmt.Fprintf(r.stderr, "reasonix: error: planner: %s\n", e.Message)
			return
		}
		fmt.Fprintf(r.stderr, "reasonix: error: %s\n", e.Message)
	case *event.PlanProposed:
		if e.Task == "" {
			// The plan is the answer of a run that stops at it, and news
			// in one that carries it out.
			fmt.Fprintln(r.stdout, strings.TrimRight(e.Plan, "\n"))
			r.wroteText, r.endsNewline = true, true
		}
	case *event.PlanStep:
		if e.Task == "" {
			fmt.Fprintf(r.stderr, "• step %s done %s\n", e.Step, e.Summary)
		}
	case *event.PlanReady:
		fmt.Fprintf(r.stderr, "• plan (round %d):\n%s\n", e.Round, strings.TrimRight(e.Plan, "\n"))
	}
}

func (r *renderer) finish(done *event.TurnDone, transcript string) error {
	switch r.format {
	case "text":
		if r.wroteText && !r.endsNewline {
			fmt.Fprintln(r.stdout)
		}
		switch unsaved := unsavedNote(done.Error); {
		case done.Status == event.StatusCancelled && unsaved != "":
			fmt.Fprintf(r.stderr, "reasonix: interrupted; %s\n", unsaved)
		case done.Status == event.StatusCancelled:
			fmt.Fprintf(r.stderr, "reasonix: interrupted; transcript saved to %s\n", transcript)
		case done.Status == event.StatusMaxSteps, done.Status == actors.StatusIncomplete:
			fmt.Fprintf(r.stderr, "reasonix: %s\n", done.Error)
		case unsaved != "":
			// The failure itself was shown as it happened; what was not
			// saved is news at the end.
			fmt.Fprintf(r.stderr, "reasonix: %s\n", unsaved)
		}
	case "json":
		out := struct {
			Session    string `json:"session"`
			Status     string `json:"status"`
			Text       string `json:"text"`
			Error      string `json:"error,omitempty"`
			Steps      int    `json:"steps"`
			Usage      any    `json:"usage"`
			Transcript string `json:"transcript"`
		}{done.Session, done.Status, done.Text, done.Error, done.Steps, done.Usage, transcript}
		enc := json.NewEncoder(r.stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			return fmt.Errorf("write result: %w", err)
		}
	}
	return nil
}

// unsavedNote is the part of a turn's error that says what was not saved
// ("incomplete: <what> not saved: <cause>", the whole error or its last
// part after "; "), or "".
func unsavedNote(turnErr string) string {
	const mark = "incomplete: "
	note := ""
	if strings.HasPrefix(turnErr, mark) {
		note = turnErr
	} else if i := strings.LastIndex(turnErr, "; "+mark); i >= 0 {
		note = turnErr[i+2:]
	}
	if !strings.Contains(note, " not saved: ") {
		return ""
	}
	return note
}
