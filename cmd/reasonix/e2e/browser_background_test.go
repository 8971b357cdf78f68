package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"reasonix/core/provider/providertest"
)

// TestE2EBrowserBackgroundTasks: on the page, a fleet sent to the
// background shows its rows marked as background with their names; the
// parent's turn ends while they run, and when their results come back the
// session's own turn for them shows each result as a note, with no empty
// message from the user, and the agent's answer to them. A message from a
// finished task's detail runs one more turn of that agent's conversation,
// whose answer comes back the same way.
func TestE2EBrowserBackgroundTasks(t *testing.T) {
	release := make(chan struct{})
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if isSubagent(req) {
			select {
			case <-release:
			case <-time.After(30 * time.Second):
			}
			return providertest.Turn{Text: "found it in " + req.FirstUser()}
		}
		if len(toolResults(req)) == 0 {
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "bg", Name: "fleet",
				Arguments: `{"background":true,"tasks":[{"prompt":"task 1","name":"logs"},{"prompt":"task 2","name":"docs"}]}`}}}
		}
		if n := len(backgroundResults(req)); n > 0 {
			return providertest.Turn{Text: "both searches are back"}
		}
		return providertest.Turn{Text: "the searches run in the background"}
	}))
	e.writeConfig("[agent]\nmax_subagent_concurrency = 4\n")
	_, b := browserSignedIn(t, e)
	b.prompt("search in the background")
	b.do("the fleet's approval", chromedp.WaitVisible(chromedp.CSS(`[data-testid=approval][data-tool=fleet]`)))
	b.do("approve it", chromedp.Click(chromedp.CSS(`[data-testid=approval] [data-testid=approve-once]`)))
	b.waitJS("the parent's turn over, the tasks still out", `[...document.querySelectorAll('[data-testid=assistant-message]')].some((a) => a.textContent.includes('run in the background')) && document.querySelectorAll('[data-testid=fleet-row][data-background=true][data-state=running]').length === 2`)
	if got := pageEval[string](b, `[...document.querySelectorAll('[data-testid=fleet-row] td.f-id')].map((c) => c.textContent).join('|')`); got != "f1.1 · logs|f1.2 · docs" {
		t.Errorf("the fleet rows read %q", got)
	}
	b.shot("background-running")
	close(release)
	b.waitJS("the answer to the results", `[...document.querySelectorAll('[data-testid=assistant-message]')].some((a) => a.textContent.includes('both searches are back'))`)
	b.shot("background-back")
	notes := pageEval[string](b, `[...document.querySelectorAll('[data-testid=notice]')].map((n) => n.textContent).join('\n')`)
	for _, want := range []string{"[Background task f1.1 (logs) ok]", "[Background task f1.2 (docs) ok]"} {
		if !strings.Contains(notes, want) {
			t.Errorf("no note %q on the page; notes:\n%s", want, notes)
		}
	}
	if bad := pageEval[int](b, `[...document.querySelectorAll('[data-testid=assistant-message]')].filter((a) => a.textContent.includes('backboth')).length`); bad != 0 {
		t.Errorf("two steps' answers run together in one message, across a result that came between them")
	}
	if n := pageEval[int](b, `document.querySelectorAll('[data-testid=user-message]').length`); n != 1 {
		t.Errorf("%d user messages on the page, want the one typed", n)
	}

	b.prompt("/tasks")
	b.waitJS("the /tasks note", `[...document.querySelectorAll('[data-testid=page-note]')].some((n) => n.textContent.includes('f1.1 (logs) ok · f1.2 (docs) ok'))`)

	// From a finished task's detail, a message: the agent answers it in one
	// more turn of its own conversation, and the answer comes back.
	b.do("open the first task", chromedp.Click(chromedp.CSS(`[data-testid=fleet-row][data-task="f1.1"] td.f-id`)))
	b.do("write to it",
		chromedp.SendKeys(chromedp.CSS(`[data-testid=task-message]`), "what else is in the logs?"),
		chromedp.Click(chromedp.CSS(`[data-testid=task-message-send]`)))
	b.waitJS("the follow-up's result", `document.querySelector('[data-testid=fleet-row][data-task="f1.1+1"]')?.dataset.status === 'ok' && [...document.querySelectorAll('[data-testid=notice]')].filter((n) => n.textContent.startsWith('[Background task f1.1 (logs) ok]')).length === 2`)
	b.shot("background-follow-up")
	var follow providertest.Request
	for _, r := range e.srv.Requests() {
		if isSubagent(r) && r.FirstUser() == "task 1" {
			follow = r
		}
	}
	if last := follow.Messages[len(follow.Messages)-1]; last.Role != "user" || last.Content != "[Message from the user]\nwhat else is in the logs?" {
		t.Errorf("the follow-up's last message = %+v", last)
	}
	b.noExceptions()
}
