package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/provider/providertest"
)

var (
	planWrite = providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "write_file", Arguments: `{"path":"x.txt","content":"planned\n"}`}}}
	planExit  = providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "exit_plan_mode", Arguments: `{"plan":"1. write x.txt\n2. check it"}`}}}
	planStep  = providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "complete_step", Arguments: `{"step":"1","summary":"wrote x.txt"}`}}}
)

// TestE2EPlanHeadlessStopsAtPlan: `run --plan` refuses a write made while
// planning, prints the plan it presents and exits 0 without writing.
func TestE2EPlanHeadlessStopsAtPlan(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(planWrite, planExit, providertest.Turn{Text: "should not be asked"})
	r := e.run("run", "--plan", "--permission-mode", "yolo", "write x.txt")
	if r.code != 0 || !strings.Contains(r.stdout, "1. write x.txt") {
		t.Fatalf("run --plan:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(e.work, "x.txt")); err == nil {
		t.Fatal("x.txt was written while planning")
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests; the run should end at the plan", len(reqs))
	}
	if res := toolResult(reqs[1], "write_file"); !strings.Contains(res, "plan mode") || !strings.HasPrefix(res, "Blocked:") {
		t.Fatalf("the write while planning got %q", res)
	}
	if !strings.HasPrefix(reqs[0].LastUser(), "[Plan mode:") {
		t.Fatalf("the prompt is not marked as planning: %q", reqs[0].LastUser())
	}
	if r := e.run("run", "--approve-plan", "x"); r.code != 2 {
		t.Fatalf("--approve-plan without --plan:\n%s", r)
	}
}

// TestE2EPlanApprovedHeadless: `--plan --approve-plan` carries the plan
// out in the same turn; complete_step is refused before approval only.
func TestE2EPlanApprovedHeadless(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(planStep, planExit, planWrite, planStep, providertest.Turn{Text: "done"})
	r := e.run("run", "--plan", "--approve-plan", "write x.txt")
	if r.code != 0 {
		t.Fatalf("run:\n%s", r)
	}
	if b, err := os.ReadFile(filepath.Join(e.work, "x.txt")); err != nil || string(b) != "planned\n" {
		t.Fatalf("x.txt = %q, %v", b, err)
	}
	reqs := e.srv.Requests()
	if res := toolResult(reqs[1], "complete_step"); !strings.HasPrefix(res, "Blocked:") {
		t.Fatalf("complete_step while planning: %q", res)
	}
	if res := toolResult(reqs[4], "complete_step"); res != "Step 1 recorded." {
		t.Fatalf("complete_step after approval: %q", res)
	}
}

// TestE2EPlanApprovalOnStream: over the JSON input stream the plan is an
// approval like any other. A write while planning is refused without
// asking; after the plan is approved the same write runs without a
// prompt, while a deny rule still blocks another.
func TestE2EPlanApprovalOnStream(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	denied := providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "write_file", Arguments: `{"path":"secret.env","content":"x"}`}}}
	e.srv.Push(planWrite, planExit, planWrite, denied, providertest.Turn{Text: "carried out"})
	s := e.stream("--plan", "--deny", "Edit(secret.env)")
	s.send(`{"type":"prompt","text":"write x.txt"}`)
	ask := s.expect("approval_requested", nil)
	if ask["tool"] != "exit_plan_mode" || ask["once_only"] != true {
		t.Fatalf("the first approval asked is %v", ask)
	}
	s.send(`{"type":"approve","id":` + quote(ask["request_id"].(string)) + `,"decision":"once"}`)
	done := s.expect("turn_done", nil)
	if done["status"] != "ok" {
		t.Fatalf("turn_done %v", done)
	}
	for _, ev := range s.seen {
		if ev["type"] == "approval_requested" && ev["tool"] != "exit_plan_mode" {
			t.Fatalf("a write asked for approval: %v", ev)
		}
	}
	if res := s.finish(); res.code != 0 {
		t.Fatalf("stream: %s", res)
	}
	if b, err := os.ReadFile(filepath.Join(e.work, "x.txt")); err != nil || string(b) != "planned\n" {
		t.Fatalf("x.txt = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(e.work, "secret.env")); err == nil {
		t.Fatal("the deny rule did not hold after approval")
	}
	reqs := e.srv.Requests()
	if res := toolResult(reqs[1], "write_file"); !strings.Contains(res, "plan mode") {
		t.Fatalf("the write while planning got %q", res)
	}
	if res := toolResult(reqs[4], "write_file"); !strings.Contains(res, "deny rule") {
		t.Fatalf("the denied write got %q", res)
	}
}

// toolResult is the content of the last tool result of name in r.
func toolResult(r providertest.Request, name string) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if m := r.Messages[i]; m.Role == "tool" && m.Name == name {
			return m.Content
		}
	}
	return ""
}
