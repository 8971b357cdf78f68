package e2e

import (
	"strings"
	"testing"

	"reasonix/core/provider/providertest"
)

// TestE2ETUIBackgroundTasks: in the chat, a background fleet's rows say
// bg; the parent's turn ends while they run; when they come back each
// result is a note and the session's own turn answers them; /tasks lists
// them with their names and states; "@logs <message>" writes to the
// finished task, which answers in one more turn of its own conversation,
// and its answer reaches the parent.
func TestE2ETUIBackgroundTasks(t *testing.T) {
	t.Parallel()
	release, free := heldUntil(t)
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if isSubagent(req) {
			last := req.Messages[len(req.Messages)-1]
			if strings.HasPrefix(last.Content, "[Message from the user]") {
				return providertest.Turn{Text: "also two timeouts"}
			}
			<-release
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
	m.waitFor("the turn over, the rows marked bg", func(s string) bool {
		return strings.Contains(s, "The searches run in the background.") && strings.Count(s, " bg ") >= 2 && strings.Contains(s, tuiIdle)
	})
	free()
	m.waitFor("the results back and answered", func(s string) bool {
		return strings.Contains(s, "[Background task f1.1 (logs) ok]") && strings.Contains(s, "[Background task f1.2 (docs) ok]") &&
			strings.Contains(s, "A search came back.") && strings.Contains(s, tuiIdle)
	})
	m.send("/tasks")
	m.waitText("f1.1 (logs)  ok  task 1", "f1.2 (docs)  ok  task 2")
	m.send("@logs anything else?")
	m.waitFor("the follow-up's answer read by the parent", func(s string) bool {
		return strings.Contains(s, "message sent to logs") && strings.Contains(s, "The logs task adds two timeouts.")
	})
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
