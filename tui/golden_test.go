package tui

import (
	"strings"
	"testing"

	"reasonix/actors/event"
	"reasonix/core/provider"
)

// streamedTurn is a turn as a session publishes it: reasoning, an answer
// in pieces, a tool call and the rest of the answer.
func streamedTurn() []event.Event {
	evs := []event.Event{
		&event.TurnStarted{Meta: meta(1), Prompt: "run the tests"},
		&event.ReasoningDelta{Meta: meta(2), Text: "The user wants the tests run. "},
		&event.ReasoningDelta{Meta: meta(3), Text: "I will call bash."},
	}
	seq := int64(4)
	for _, piece := range []string{"I'll run ", "the **test suite**", " first.\n"} {
		evs = append(evs, &event.TextDelta{Meta: meta(seq), Text: piece})
		seq++
	}
	evs = append(evs,
		&event.ToolStarted{Meta: meta(seq), CallID: "c1", Tool: "bash", Args: `{"command":"go test ./..."}`},
		&event.ToolFinished{Meta: meta(seq + 1), CallID: "c1", Tool: "bash", DurationMS: 1250, Output: "ok  reasonix/tui"},
		&event.TextDelta{Meta: meta(seq + 2), Text: "All tests pass:\n\n- `tui` ok\n"},
		&event.UsageReported{Meta: meta(seq + 3), Total: provider.Usage{PromptTokens: 12000, CompletionTokens: 340, CacheHitTokens: 9000, CacheMissTokens: 3000}},
		&event.TurnDone{Meta: meta(seq + 4), Status: event.StatusOK},
	)
	return evs
}

func TestGoldenStreamedAnswer(t *testing.T) {
	m := testModel(t, 80, 24)
	evs := streamedTurn()
	// One event per message, as a slow stream delivers them.
	for _, ev := range evs[:len(evs)-2] {
		feed(m, ev)
	}
	mid := frame(m)
	if !strings.Contains(mid, "All tests pass:") || !strings.Contains(mid, "- `tui` ok") {
		t.Errorf("the answer being streamed is not shown as it comes:\n%s", mid)
	}
	feed(m, evs[len(evs)-2:]...)
	got := frame(m)
	golden(t, got)
	for _, want := range []string{"bash", "go test ./...", "1.2s", "cache 75%", "✻ thought (10 words"} {
		if !strings.Contains(got, want) {
			t.Errorf("frame lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "**test suite**") {
		t.Errorf("the finished answer is not rendered as Markdown:\n%s", got)
	}
}

func TestGoldenApprovalModal(t *testing.T) {
	m := testModel(t, 80, 24)
	feed(m,
		&event.TurnStarted{Meta: meta(1), Prompt: "push it"},
		&event.ToolWaiting{Meta: meta(2), CallID: "c1", Tool: "bash", Args: `{"command":"git push origin main"}`, RequestID: "r1"},
		&event.ApprovalRequested{Meta: meta(3), RequestID: "r1", CallID: "c1", Tool: "bash",
			Args: `{"command":"git push origin main"}`, Reason: "bash runs commands that may change the workspace",
			Suggestions: []string{"Bash(git push origin main)", "Bash(git push:*)"}},
	)
	press(m, "down", "tab")
	got := frame(m)
	golden(t, got)
	if strings.Contains(got, "› Ask anything") || hasPart(m, partComposer) {
		t.Errorf("the composer is drawn under the approval modal:\n%s", got)
	}
	if !strings.Contains(got, "● Bash(git push:*)") {
		t.Errorf("the prefix scope is not offered:\n%s", got)
	}
}

func TestGoldenAutocomplete(t *testing.T) {
	m := testModel(t, 80, 24)
	typeText(m, "/co")
	got := frame(m)
	golden(t, got)
	if !hasPart(m, partMenu) || !hasPart(m, partComposer) {
		t.Errorf("autocomplete wants the menu and the composer, got %v", partNames(m))
	}
	if !strings.Contains(got, "/compact") || strings.Contains(got, "/model") {
		t.Errorf("the menu does not list exactly the matching commands:\n%s", got)
	}
}

func hasPart(m *model, name string) bool {
	for _, p := range m.bottomRows() {
		if p.name == name {
			return true
		}
	}
	return false
}

func partNames(m *model) []string {
	var out []string
	for _, p := range m.bottomRows() {
		out = append(out, p.name)
	}
	return out
}
