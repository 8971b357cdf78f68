package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/core/provider/providertest"
)

// tabsConfig lets the parent delegate without asking, so the one approval
// of the test is the subagent's write, and makes approvals time out after
// a second: the grace a session without a tab gets.
const tabsConfig = `
[permissions]
allow = ["task"]
approval_timeout_seconds = 1
`

// delegating scripts a parent that hands a write to a subagent.
func delegating(h *harness) {
	h.t.Helper()
	if err := os.MkdirAll(filepath.Join(h.cwd, "out"), 0o755); err != nil {
		h.t.Fatal(err)
	}
	h.fake.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "task", Arguments: `{"prompt":"write the report","write_paths":["out"]}`}}},
		providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "write_file", Arguments: `{"path":"out/report.txt","content":"done\n"}`}}},
		providertest.Turn{Text: "sub done"},
		providertest.Turn{Text: "parent done"},
	)
}

// untilSubagentApproval reads st up to the subagent's approval_requested.
func untilSubagentApproval(st *sse) message {
	st.t.Helper()
	for {
		m := st.must()
		if m.kind() == "approval_requested" && m.field("task") != nil {
			return m
		}
	}
}

// TestLastTabClosedDeniesApprovals: once the last tab of a session has
// closed and approval_timeout_seconds has passed, the approval a subagent
// waits for (it has no timer of its own) is denied with "no frontend
// left", the subagent reads why, and a tab that comes back sees it in the
// replay.
func TestLastTabClosedDeniesApprovals(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{config: tabsConfig})
	delegating(h)
	id := h.newSession()
	st := h.stream(id, "")
	st.must() // the snapshot
	h.prompt(id, "delegate the report")
	untilSubagentApproval(st)
	st.close()
	closed := time.Now()

	reqs, err := h.fake.WaitRequests(4, 20*time.Second)
	if err != nil {
		t.Fatalf("the turn did not go on after the tab closed: %v", err)
	}
	took := time.Since(closed)
	t.Logf("denied %v after the tab closed", took.Round(time.Millisecond))
	if took < time.Second {
		t.Errorf("denied %v after the tab closed, before approval_timeout_seconds", took)
	}
	if tm := reqs[2].Last(); tm.Role != "tool" || !strings.HasPrefix(tm.Content, "Blocked: no frontend left") {
		t.Fatalf("the subagent saw %+v", tm)
	}
	if _, err := os.Stat(filepath.Join(h.cwd, "out", "report.txt")); err == nil {
		t.Fatal("the unanswered write happened")
	}

	back := h.stream(id, "?since=0")
	for {
		m := back.must()
		if m.kind() == "approval_resolved" {
			if m.field("decision") != "deny" || m.field("reason") != "no frontend left" {
				t.Fatalf("approval_resolved = %s", m.Data)
			}
			break
		}
	}
}

// TestOpenTabKeepsApprovalWaiting: while a tab follows the session its
// approvals wait for it, past approval_timeout_seconds, and its answer
// is the one that counts.
func TestOpenTabKeepsApprovalWaiting(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{config: tabsConfig})
	delegating(h)
	id := h.newSession()
	st := h.stream(id, "")
	st.must()
	h.prompt(id, "delegate the report")
	ask := untilSubagentApproval(st)
	// Longer than the grace: a warden blind to the open tab denies by now.
	<-time.After(2500 * time.Millisecond)
	want(t, h.req("POST", "/api/sessions/"+id+"/commands", map[string]any{
		"type": "approve", "id": ask.field("request_id"), "decision": "once"}), 202)
	for {
		m := st.must()
		if m.kind() == "approval_resolved" {
			if m.field("decision") != "once" {
				t.Fatalf("approval_resolved = %s, want the tab's answer", m.Data)
			}
			break
		}
	}
	if _, err := h.fake.WaitRequests(4, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(h.cwd, "out", "report.txt"))
	if err != nil || string(data) != "done\n" {
		t.Fatalf("report = %q, %v", data, err)
	}
}
