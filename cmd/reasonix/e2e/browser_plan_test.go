package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"reasonix/core/provider/providertest"
)

// TestE2EBrowserPlanMode: the header's Plan toggle reopens the
// conversation in plan mode as the chat's /plan does, keeping the
// conversation and the posture; a write before the plan is approved is
// blocked, the plan is approved on the page, and the toggle is off again
// while the agent carries it out.
func TestE2EBrowserPlanMode(t *testing.T) {
	write := providertest.ToolCall{Name: "write_file", Arguments: `{"path":"plan.txt","content":"carried out\n"}`}
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		switch n := len(toolResults(req)); {
		case req.LastUser() == "hello" && n == 0:
			return providertest.Turn{Text: "hi"}
		case n == 0:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{write}}
		case n == 1:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "exit_plan_mode", Arguments: `{"plan":"1. write plan.txt"}`}}}
		case n == 2:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{write}}
		}
		return providertest.Turn{Text: "plan carried out"}
	}))
	_, b := browserSignedIn(t, e)
	b.prompt("hello")
	b.waitJS("the answer", `[...document.querySelectorAll('[data-testid=assistant-message]')].some((m) => m.textContent.includes('hi'))`)
	if slices.Contains(e.srv.Requests()[0].Tools, "exit_plan_mode") {
		t.Fatalf("a session not in plan mode was offered exit_plan_mode")
	}
	b.prompt("/posture auto")
	b.waitJS("the posture changed", `document.querySelector('[data-testid=posture]').value === 'auto'`)

	b.do("toggle plan mode", chromedp.Click(chromedp.CSS(`[data-testid=plan-toggle]`)))
	b.waitJS("plan mode on", `document.querySelector('[data-testid=plan-toggle]').getAttribute('aria-pressed') === 'true' && !document.querySelector('[data-testid=composer]').disabled`)
	b.shot("plan-mode")
	if v := pageEval[string](b, `document.querySelector('[data-testid=posture]').value`); v != "auto" {
		t.Errorf("plan mode reopened the session with posture %q, want the auto it had", v)
	}
	b.prompt("write the plan file")
	b.waitJS("the plan to approve", `[...document.querySelectorAll('[data-testid=approval]')].some((a) => a.textContent.includes('1. write plan.txt'))`)
	b.shot("plan-approval")
	if _, err := os.Stat(filepath.Join(e.work, "plan.txt")); !os.IsNotExist(err) {
		t.Fatalf("plan.txt exists before the plan was approved (%v)", err)
	}
	reqs := e.srv.Requests()
	last := reqs[len(reqs)-1]
	if !slices.Contains(last.Tools, "exit_plan_mode") {
		t.Errorf("plan mode did not offer exit_plan_mode: %v", last.Tools)
	}
	if res := toolResults(last); len(res) != 1 || !strings.Contains(res[0].Content, "plan mode") {
		t.Errorf("the write before the plan was not blocked by plan mode: %+v", res)
	}
	if last.Messages[1].Content != "hello" {
		t.Errorf("plan mode did not keep the conversation: %+v", last.Messages[:2])
	}

	b.do("approve the plan", chromedp.Click(chromedp.CSS(`[data-testid=approval] [data-testid=approve-once]`)))
	b.waitJS("the plan carried out", `[...document.querySelectorAll('[data-testid=assistant-message]')].some((m) => m.textContent.includes('plan carried out'))`)
	if got, err := os.ReadFile(filepath.Join(e.work, "plan.txt")); err != nil || string(got) != "carried out\n" {
		t.Errorf("plan.txt = %q, %v", got, err)
	}
	if pageEval[string](b, `document.querySelector('[data-testid=plan-toggle]').getAttribute('aria-pressed')`) != "false" {
		t.Errorf("the Plan toggle is still on after the plan was approved")
	}
	b.noExceptions()
}
