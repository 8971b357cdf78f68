package e2e

import (
	"strings"
	"testing"

	"reasonix/core/provider/providertest"
)

// TestE2EFleetBudget runs a fleet where two of four tasks may take one
// model turn each: exactly those two end over_budget with their partial
// answers, ask the fake nothing past their ceiling, and the other two run
// their three turns to the end.
func TestE2EFleetBudget(t *testing.T) {
	t.Parallel()
	args := `{"tasks":[{"prompt":"task 1"},{"prompt":"task 2","budget":{"turns":1}},{"prompt":"task 3","budget":{"turns":1}},{"prompt":"task 4"}]}`
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if !isSubagent(req) {
			if len(toolResults(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet", Arguments: args}}}
			}
			return providertest.Turn{Text: "parent done"}
		}
		task := req.FirstUser()
		switch len(toolResults(req)) {
		case 0:
			return providertest.Turn{Text: "first look at " + task, ToolCalls: []providertest.ToolCall{{Name: "ls", Arguments: `{}`}}}
		case 1:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "glob", Arguments: `{"pattern":"*"}`}}}
		}
		return providertest.Turn{Text: "done with " + task}
	}))
	r := e.run("run", "--output-format", "stream-json", "fan out")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	var last providertest.Request
	asked := map[string]int{}
	for _, req := range e.srv.Requests() {
		if isSubagent(req) {
			asked[req.FirstUser()]++
		} else {
			last = req
		}
	}
	out := toolResults(last)[0].Content
	for _, want := range []string{
		"4 tasks: 2 ok, 0 failed, 0 timed out, 0 cancelled, 2 over budget (partial answers).",
		"(f1.2): over_budget", "(f1.3): over_budget", "first look at task 2", "done with task 1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("fleet result lacks %q:\n%s", want, out)
		}
	}
	if asked["task 1"] != 3 || asked["task 2"] != 1 || asked["task 3"] != 1 || asked["task 4"] != 3 {
		t.Errorf("requests per task: %v", asked)
	}
	if n := strings.Count(r.stdout, `"over_budget":"turns"`); n != 2 {
		t.Errorf("%d task_done events report a turns ceiling, want 2", n)
	}
}
