package e2e

import (
	"strings"
	"testing"

	"reasonix/core/provider/providertest"
)

// TestE2ETUIBackgroundTasks: in the chat, a background fleet's rows say
// bg and the parent's turn ends while they run; a result that comes back
// is a note and the session's own turn answers it; m on a finished task's
// row puts "@f1.1 " in the input, and the message sent so runs one more
// turn of that agent's conversation, whose answer reaches the parent;
// /tasks lists the tasks with their names and states.
func TestE2ETUIBackgroundTasks(t *testing.T) {
	t.Parallel()
	release, free := heldUntil(t)
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if isSubagent(req) {
			last := req.Messages[len(req.Messages)-1]
			if strings.HasPrefix(last.Content, "[Message from the user]") {
				return providertest.Turn{Text: "also two timeouts"}
			}
			if req.FirstUser() == "task 2" {
				<-release
			}
			return providertest.Turn{Text: "found it in " + req.FirstUser()}
		}
		if len(toolResults(req)) == 0 {
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "bg", Name: "fleet",
				Arguments: `{"background":true,"tasks":[{"prompt":"task 1","name":"logs"},{"prompt":"task 2","name":"docs"}]}`}}}
		}
		last := req.Messages[len(req.Messages)-1]
		switch {
		case strings.Contains(last.Content, "also two timeouts"):
			return providertest.Turn{Text: "The logs task adds two timeouts."}
		case strings.HasPrefix(last.Content, "[Background task "):
			return providertest.Turn{Text: "A search came back."}
		}
		return providertest.Turn{Text: "The searches run in the background."}
	}))
	m := openTUISized(t, e, 140, 45)
	m.send("search in the background")
	m.waitFor("the fleet's approval", func(s string) bool { return strings.Contains(s, "wants to run fleet") })
	m.typeText("y")
	m.waitFor("the first result back and answered, the other still running", func(s string) bool {
		return strings.Contains(s, "The searches run in the background.") && strings.Contains(s, "[Background task f1.1 (logs) ok]") &&
			strings.Contains(s, "A search came back.") && strings.Count(s, " bg ") >= 2 && strings.Contains(s, tuiIdle)
	})
	m.keys("C-f")
	m.waitText("m message")
	m.typeText("m")
	m.waitText("@f1.1")
	m.typeText("anything else?")
	m.keys("Enter")
	m.waitText("message sent to f1.1", "The logs task adds two timeouts.")
	free()
	m.waitText("[Background task f1.2 (docs) ok]")
	m.send("/tasks")
	m.waitText("f1.1 (logs)  ok  task 1", "f1.2 (docs)  ok  task 2")
	var follow providertest.Request
	for _, r := range e.srv.Requests() {
		if isSubagent(r) && r.FirstUser() == "task 1" {
			follow = r
		}
	}
	if last := follow.Messages[len(follow.Messages)-1]; last.Content != "[Message from the user]\nanything else?" {
		t.Errorf("the follow-up's last message = %+v", last)
	}
	m.quit()
}
