package tui

import (
	"strings"
	"testing"

	"reasonix/actors/event"
)

// TestApprovalShowsTasks: a delegation's approval lists its task count and
// each prompt, not the call's JSON; a long diff is cut with a count.
func TestApprovalShowsTasks(t *testing.T) {
	m := testModel(t, 100, 40)
	feed(m, &event.ApprovalRequested{Meta: meta(1), RequestID: "s1/c1", CallID: "c1", Tool: "fleet",
		Args: `{"tasks":[{"prompt":"audit the parser"},{"prompt":"audit the lexer","profile":"auditor"},{"prompt":"write the summary"}]}`})
	got := frame(m)
	for _, want := range []string{"3 tasks:", "1. audit the parser", "2. [auditor] audit the lexer", "3. write the summary"} {
		if !strings.Contains(got, want) {
			t.Errorf("the fleet approval lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `{"tasks"`) {
		t.Errorf("the fleet approval shows the raw arguments:\n%s", got)
	}

	m = testModel(t, 100, 30)
	var diff []string
	for i := 0; i < 60; i++ {
		diff = append(diff, "+line")
	}
	feed(m, &event.ApprovalRequested{Meta: meta(1), RequestID: "s1/c2", CallID: "c2", Tool: "write_file",
		Args: `{"path":"big.txt"}`, Preview: "--- /dev/null\n+++ b/big.txt\n" + strings.Join(diff, "\n")})
	if got := frame(m); !strings.Contains(got, "more lines") || strings.Count(got, "+line") > 30 {
		t.Errorf("a long preview is not cut to the screen:\n%s", got)
	}
}
