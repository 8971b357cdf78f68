package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"

	"reasonix/core/provider/providertest"
)

// TestE2EBrowserFleetRowDetail: a click on a fleet row shows that task's
// detail (prompt, state, tokens, its last lines) and a second click hides
// it; from the detail a running task is cancelled.
func TestE2EBrowserFleetRowDetail(t *testing.T) {
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if !isSubagent(req) {
			if len(toolResults(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet", Arguments: fleetArgs(2, nil)}}}
			}
			return providertest.Turn{Text: "the fleet is back"}
		}
		if req.FirstUser() == "task 2" {
			return providertest.Turn{Text: "working on the second task, step one of many", ChunkBytes: 8, FaultAfterEvents: 5, Stall: true}
		}
		return providertest.Turn{Text: "done with " + req.FirstUser()}
	}))
	_, b := browserSignedIn(t, e)
	b.prompt("fan out")
	b.do("the fleet's approval", chromedp.WaitVisible(chromedp.CSS(`[data-testid=approval][data-tool=fleet]`)))
	// It shows the tasks it would start, not the call's JSON.
	if got := pageEval[string](b, `(() => { const c = document.querySelector('[data-testid=approval]'); return c.querySelector('[data-testid=approval-tasks-count]').textContent + [...c.querySelectorAll('[data-testid=approval-tasks] li')].map((l) => ' ' + l.textContent).join(''); })()`); got != "2 tasks: task 1 task 2" {
		t.Errorf("the fleet's approval shows %q", got)
	}
	b.do("approve the fleet", chromedp.Click(chromedp.CSS(`[data-testid=approval] [data-testid=approve-once]`)))
	b.waitJS("task 1 done, task 2 running", `document.querySelector('[data-testid=fleet-row][data-task="f1.1"]')?.dataset.status === 'ok' && document.querySelector('[data-testid=fleet-row][data-task="f1.2"]')?.dataset.state === 'running'`)

	b.do("pick the running task", chromedp.Click(chromedp.CSS(`[data-testid=fleet-row][data-task="f1.2"] td.f-id`)))
	b.waitJS("its detail", `(() => { const d = document.querySelector('[data-testid=task-detail]'); return !d.hidden && d.querySelector('h3').textContent === 'f1.2' && d.querySelector('[data-testid=task-prompt]').textContent === 'task 2' && d.querySelector('[data-testid=task-tail]').textContent.includes('working on') && d.querySelector('[data-testid=task-facts]').textContent.startsWith('running'); })()`)
	b.shot("task-detail")

	b.do("pick the finished one", chromedp.Click(chromedp.CSS(`[data-testid=fleet-row][data-task="f1.1"] td.f-id`)))
	b.waitJS("the finished task's detail", `(() => { const d = document.querySelector('[data-testid=task-detail]'); return d.querySelector('h3').textContent === 'f1.1' && d.querySelector('[data-testid=task-tail]').textContent.includes('done with task 1') && d.querySelector('[data-testid=task-facts]').textContent.startsWith('ok') && !d.querySelector('[data-testid=task-detail-cancel]'); })()`)
	b.do("pick it again", chromedp.Click(chromedp.CSS(`[data-testid=fleet-row][data-task="f1.1"] td.f-id`)))
	b.waitJS("the detail hidden", `document.querySelector('[data-testid=task-detail]').hidden`)

	b.do("pick the running task again", chromedp.Click(chromedp.CSS(`[data-testid=fleet-row][data-task="f1.2"] td.f-id`)))
	b.do("cancel it from its detail", chromedp.Click(chromedp.CSS(`[data-testid=task-detail-cancel]`)))
	b.waitJS("the task cancelled", `document.querySelector('[data-testid=fleet-row][data-task="f1.2"]').dataset.state === 'done' && document.querySelector('[data-testid=task-facts]').textContent.startsWith('cancelled')`)
	b.waitJS("the parent's answer", `[...document.querySelectorAll('[data-testid=assistant-message]')].some((a) => a.textContent.includes('the fleet is back'))`)
	b.noExceptions()
}
