package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"reasonix/core/provider/providertest"
)

// twoModels is a fake serving a planner model and an executor model. The
// planner researches with one read_file and answers with a plan; the
// executor writes the file the plan names, reports, and answers.
type twoModels struct {
	mu sync.Mutex
	// report is what the executor reports through plan_report.
	report string
	// cutPlanner breaks the planner's first stream.
	cutPlanner bool
	plans      int
}

const (
	planModel = "plan-model"
	execModel = "exec-model"
)

func (m *twoModels) respond(r providertest.Request) providertest.Turn {
	m.mu.Lock()
	defer m.mu.Unlock()
	last := r.Messages[len(r.Messages)-1]
	if r.Model == planModel {
		if m.cutPlanner {
			return providertest.Turn{Text: "1. write the fi", CutAfterEvents: 2}
		}
		if last.Role == "user" {
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "read_file", Arguments: `{"path":"notes.txt"}`}}}
		}
		m.plans++
		return providertest.Turn{Text: fmt.Sprintf("PLAN-%d: 1. write out.txt with the word done. 2. check it.", m.plans)}
	}
	switch {
	case last.Role == "user":
		return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "write_file", Arguments: `{"path":"out.txt","content":"done\n"}`}}}
	case last.Name == "write_file":
		return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "plan_report",
			Arguments: fmt.Sprintf(`{"status":%q,"summary":"wrote out.txt"}`, m.report)}}}
	default:
		return providertest.Turn{Text: "executed the plan"}
	}
}

func twoModelE2E(t *testing.T, m *twoModels, extra string) *e2e {
	e := newE2E(t, providertest.WithResponder(m.respond))
	cfg := fmt.Sprintf(`default_model = "fake/%s"

[agent]
planner_model = "fake/%s"
%s

[[providers]]
name = "fake"
kind = "openai"
base_url = %q
models = [%q, %q]
api_key_env = "FAKE_API_KEY"
`, execModel, planModel, extra, e.srv.URL(), execModel, planModel)
	must(t, os.WriteFile(filepath.Join(e.home, "config.toml"), []byte(cfg), 0o600))
	must(t, os.WriteFile(filepath.Join(e.work, "notes.txt"), []byte("the notes\n"), 0o644))
	return e
}

// byModel splits the recorded requests by model.
func byModel(reqs []providertest.Request, model string) []providertest.Request {
	var out []providertest.Request
	for _, r := range reqs {
		if r.Model == model {
			out = append(out, r)
		}
	}
	return out
}

// extendsEach says every request's messages extend the previous one's, byte
// for byte.
func extendsEach(t *testing.T, reqs []providertest.Request) bool {
	t.Helper()
	var prev wireRequest
	for i, r := range reqs {
		var w wireRequest
		must(t, json.Unmarshal(r.Body, &w))
		if i > 0 && !extends(prev.Messages, w.Messages) {
			return false
		}
		prev = w
	}
	return true
}

// TestE2ETwoModelRun: the planner plans with read-only tools only, the
// plan reaches the executor's first request as the handoff, nothing of
// the planner's conversation appears in the executor's, each
// conversation extends byte for byte, and events carry the role.
func TestE2ETwoModelRun(t *testing.T) {
	t.Parallel()
	m := &twoModels{report: "done"}
	e := twoModelE2E(t, m, "")
	r := e.run("run", "-o", "stream-json", "write out.txt")
	if r.code != 0 {
		t.Fatalf("run:\n%s", r)
	}
	if b, err := os.ReadFile(filepath.Join(e.work, "out.txt")); err != nil || string(b) != "done\n" {
		t.Fatalf("out.txt: %q %v", b, err)
	}
	reqs := e.srv.Requests()
	plan, exec := byModel(reqs, planModel), byModel(reqs, execModel)
	if len(plan) != 2 || len(exec) != 3 {
		t.Fatalf("%d planner and %d executor requests", len(plan), len(exec))
	}
	allowed := []string{"read_file", "ls", "glob", "grep", "history", "memory"}
	for _, p := range plan {
		for _, name := range p.Tools {
			if !slices.Contains(allowed, name) {
				t.Fatalf("the planner was offered %s (tools %v)", name, p.Tools)
			}
		}
	}
	if !slices.Contains(exec[0].Tools, "write_file") || !slices.Contains(exec[0].Tools, "plan_report") {
		t.Fatalf("executor tools %v", exec[0].Tools)
	}
	handoff := exec[0].LastUser()
	for _, want := range []string{"[Plan from the planner, round 1]", "Request:\nwrite out.txt", "PLAN-1: 1. write out.txt"} {
		if !strings.Contains(handoff, want) {
			t.Fatalf("handoff lacks %q:\n%s", want, handoff)
		}
	}
	plannerSystem := plan[0].Messages[0].Content
	for _, x := range exec {
		for _, msg := range x.Messages {
			if msg.Content == plannerSystem || strings.Contains(msg.Content, "the notes") {
				t.Fatalf("a planner message reached the executor: %.80q", msg.Content)
			}
			for _, c := range msg.ToolCalls {
				if c.Name == "read_file" {
					t.Fatalf("the planner's research call reached the executor")
				}
			}
		}
	}
	if !extendsEach(t, plan) || !extendsEach(t, exec) {
		t.Fatal("a conversation did not extend byte for byte")
	}
	roles := map[string]bool{}
	var ready int
	for _, ev := range decodeStream(t, r.stdout) {
		var role string
		if raw, ok := ev.fields["role"]; ok {
			_ = json.Unmarshal(raw, &role)
		}
		if ev.Type == "usage" {
			roles[role] = true
		}
		if ev.Type == "plan_ready" && role == "planner" {
			ready++
		}
	}
	if !roles["planner"] || !roles["executor"] || ready != 1 {
		t.Fatalf("usage roles %v, plan_ready %d", roles, ready)
	}
	// The planner's transcript is its own, beside the session's.
	if files, _ := filepath.Glob(filepath.Join(e.home, "projects", "*", "sessions", "*-planner.jsonl")); len(files) != 1 {
		t.Fatalf("planner transcripts: %v", files)
	}
}

// TestE2EReplanBound: an executor that keeps reporting "incomplete" gets a
// revised plan while rounds are left, and no more.
func TestE2EReplanBound(t *testing.T) {
	t.Parallel()
	m := &twoModels{report: "incomplete"}
	e := twoModelE2E(t, m, "plan_rounds = 2")
	r := e.run("run", "write out.txt")
	if r.code != 0 {
		t.Fatalf("run:\n%s", r)
	}
	reqs := e.srv.Requests()
	plan := byModel(reqs, planModel)
	var rounds []string
	for _, p := range plan {
		if last := p.Messages[len(p.Messages)-1]; last.Role == "user" {
			rounds = append(rounds, last.Content)
		}
	}
	if len(rounds) != 2 || !strings.Contains(rounds[1], "status: incomplete") || !strings.Contains(rounds[1], "wrote out.txt") {
		t.Fatalf("planner turns %q", rounds)
	}
	if !extendsEach(t, plan) {
		t.Fatal("the planner's conversation did not extend byte for byte across rounds")
	}
	exec := byModel(reqs, execModel)
	if h := exec[len(exec)-3].LastUser(); !strings.Contains(h, "[Plan from the planner, round 2]") || !strings.Contains(h, "PLAN-2") {
		t.Fatalf("second handoff: %s", h)
	}
	if !strings.Contains(r.stderr, "re-planning (round 2 of 2)") {
		t.Fatalf("no re-planning notice:\n%s", r.stderr)
	}
}

// TestE2EPlannerCutFailsBeforeExecutor: a planner stream that breaks off
// fails the run with a clear error; the executor never starts and nothing
// is written.
func TestE2EPlannerCutFailsBeforeExecutor(t *testing.T) {
	t.Parallel()
	m := &twoModels{report: "done", cutPlanner: true}
	e := twoModelE2E(t, m, "")
	r := e.run("run", "write out.txt")
	if r.code != 1 || !strings.Contains(r.stderr, "planner:") {
		t.Fatalf("run:\n%s", r)
	}
	if n := len(byModel(e.srv.Requests(), execModel)); n != 0 {
		t.Fatalf("the executor was asked %d times", n)
	}
	if _, err := os.Stat(filepath.Join(e.work, "out.txt")); err == nil {
		t.Fatal("out.txt was written")
	}
}

// TestE2ETwoModelResume: --continue rebuilds both conversations from
// their transcripts, so each role's next request extends its last one.
func TestE2ETwoModelResume(t *testing.T) {
	t.Parallel()
	m := &twoModels{report: "done"}
	e := twoModelE2E(t, m, "")
	if r := e.run("run", "write out.txt"); r.code != 0 {
		t.Fatalf("first run:\n%s", r)
	}
	first := e.srv.Count()
	if r := e.run("run", "--continue", "write it again"); r.code != 0 {
		t.Fatalf("continued run:\n%s", r)
	}
	reqs := e.srv.Requests()
	for _, model := range []string{planModel, execModel} {
		before, after := byModel(reqs[:first], model), byModel(reqs[first:], model)
		if len(before) == 0 || len(after) == 0 {
			t.Fatalf("%s: %d requests before, %d after", model, len(before), len(after))
		}
		var last, next wireRequest
		must(t, json.Unmarshal(before[len(before)-1].Body, &last))
		must(t, json.Unmarshal(after[0].Body, &next))
		if !extends(last.Messages, next.Messages) {
			t.Fatalf("%s: the continued conversation does not extend the first run's", model)
		}
	}
}

// TestE2EPlannerGetsTrustedMCPReaders: the planner is offered an MCP tool
// only when its server lists it in trusted_read_only_tools; the executor
// gets all of them.
func TestE2EPlannerGetsTrustedMCPReaders(t *testing.T) {
	t.Parallel()
	m := &twoModels{report: "done"}
	e := twoModelE2E(t, m, "")
	f, err := os.OpenFile(filepath.Join(e.home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = fmt.Fprintf(f, "\n[[plugins]]\nname = \"example\"\ncommand = %q\ntrusted_read_only_tools = [\"echo\"]\n", pluginBinary(t))
	must(t, err)
	must(t, f.Close())
	if r := e.run("run", "write out.txt"); r.code != 0 {
		t.Fatalf("run:\n%s", r)
	}
	reqs := e.srv.Requests()
	plan, exec := byModel(reqs, planModel), byModel(reqs, execModel)
	if !slices.Contains(plan[0].Tools, "mcp__example__echo") || slices.Contains(plan[0].Tools, "mcp__example__wordcount") {
		t.Fatalf("planner tools %v", plan[0].Tools)
	}
	if !slices.Contains(exec[0].Tools, "mcp__example__echo") || !slices.Contains(exec[0].Tools, "mcp__example__wordcount") {
		t.Fatalf("executor tools %v", exec[0].Tools)
	}
}
