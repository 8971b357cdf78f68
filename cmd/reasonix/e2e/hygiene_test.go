//go:build unix

package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/cmd/reasonix/internal/fleetcmd"
	"reasonix/core/provider/providertest"
	"reasonix/core/session"
)

// runJSON runs `reasonix run -o json` with args and returns the session
// the run went on in, with the result.
func (e *e2e) runJSON(args ...string) (string, result) {
	e.t.Helper()
	r := e.run(append([]string{"run", "-o", "json"}, args...)...)
	var out struct {
		Session string `json:"session"`
		Text    string `json:"text"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || out.Session == "" {
		e.t.Fatalf("run %q:\n%s", args, r)
	}
	return out.Session, r
}

// sessionIDs lists the workspace's sessions as `sessions list` does.
func (e *e2e) sessionIDs() []string {
	e.t.Helper()
	r := e.run("sessions", "list", "--json")
	var list []struct {
		ID string `json:"id"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil {
		e.t.Fatalf("sessions list:\n%s", r)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	return ids
}

// transcriptOf is the transcript file of session id.
func (e *e2e) transcriptOf(id string) string {
	e.t.Helper()
	for _, p := range e.transcripts() {
		if filepath.Base(p) == id+".jsonl" {
			return p
		}
	}
	e.t.Fatalf("no transcript of %s among %v", id, e.transcripts())
	return ""
}

// header reads the header of the transcript of session id.
func (e *e2e) header(id string) session.Header {
	e.t.Helper()
	h, _, _, err := session.Load(e.transcriptOf(id))
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

// parentRequests are the recorded requests of the top-level session, not
// of its subagents.
func parentRequests(srv *providertest.Server) []providertest.Request {
	var out []providertest.Request
	for _, r := range srv.Requests() {
		if !isSubagent(r) {
			out = append(out, r)
		}
	}
	return out
}

func subagentRequests(srv *providertest.Server) int {
	return len(srv.Requests()) - len(parentRequests(srv))
}

// TestE2EFleetResumeThenContinueStaysInParent: `fleet resume` of a killed
// parent's fleet runs inside that parent (no session of its own, the
// re-run tasks are the parent's subagents), and `run --continue` then goes
// on in the parent, whose transcript now holds the fleet's answer: the
// first request extends the killed run's, and no task is asked again.
func TestE2EFleetResumeThenContinueStaysInParent(t *testing.T) {
	t.Parallel()
	e, resumed := killHalfwayFleet(t)
	ids := e.sessionIDs()
	if len(ids) != 1 {
		t.Fatalf("sessions after the kill: %v", ids)
	}
	parent := ids[0]
	var fleets []fleetcmd.FleetJSON
	if r := e.run("fleet", "list", "--json"); json.Unmarshal([]byte(r.stdout), &fleets) != nil || len(fleets) != 1 {
		t.Fatalf("fleet list:\n%s", r)
	}
	resumed.Store(true)
	// Elsewhere the fleet's session is not found: its tasks belong here.
	if r := e.run("fleet", "resume", "--cwd", t.TempDir(), fleets[0].ID); r.code != 2 || !strings.Contains(r.stderr, "not in this workspace") {
		t.Fatalf("fleet resume in another workspace:\n%s", r)
	}
	// Counted after that run, so a request the killed process still had
	// on the wire has arrived.
	asked := subagentRequests(e.srv)
	// While a process holds the parent, its fleet is not interrupted.
	held, err := session.Reopen(e.transcriptOf(parent))
	must(t, err)
	r := e.run("fleet", "resume", fleets[0].ID)
	must(t, held.Close())
	if r.code != 1 || !strings.Contains(r.stderr, "still running") {
		t.Fatalf("fleet resume of a held parent:\n%s", r)
	}
	if n := subagentRequests(e.srv); n != asked {
		t.Fatalf("a refused resume sent %d subagent requests", n-asked)
	}
	if r := e.run("fleet", "resume", fleets[0].ID); r.code != 0 || !strings.HasPrefix(r.stdout, "8 tasks: 8 ok") {
		t.Fatalf("fleet resume:\n%s", r)
	}
	if ids := e.sessionIDs(); len(ids) != 1 || ids[0] != parent {
		t.Fatalf("sessions after fleet resume: %v, want only the parent %s", ids, parent)
	}
	// Every task's answer is in a transcript of the parent's subagents:
	// a task run again wrote one beside its interrupted run's.
	answered := map[string]bool{}
	for _, p := range e.transcripts() {
		h, msgs, _, err := session.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if h.ID != parent && h.Parent != parent {
			t.Errorf("transcript %s belongs to %q, not to the parent %s", filepath.Base(p), h.Parent, parent)
		}
		for _, m := range msgs {
			if m.Role == "assistant" && strings.HasPrefix(m.Content, "done with ") {
				answered[strings.TrimPrefix(m.Content, "done with ")] = true
			}
		}
	}
	if len(answered) != 8 {
		t.Errorf("task answers in the subagents' transcripts: %v, want all 8", answered)
	}

	asked = subagentRequests(e.srv)
	id, r := e.runJSON("--continue", "what did the fleet say?")
	if id != parent || !strings.Contains(r.stdout, "parent read: 8 tasks: 8 ok") {
		t.Fatalf("continued %s, want the parent %s:\n%s", id, parent, r)
	}
	if n := subagentRequests(e.srv); n != asked {
		t.Errorf("the continued parent asked %d subagent requests; its fleet had its answer", n-asked)
	}
	reqs := parentRequests(e.srv)
	checkExtends(t, reqs[0], reqs[len(reqs)-1])
	if ids := e.sessionIDs(); len(ids) != 1 {
		t.Fatalf("sessions after the continue: %v", ids)
	}
}

// TestE2EContinueAfterCrashStaysInPlace: `run --continue` of a parent
// killed while its fleet ran finishes the fleet inside the parent, so the
// workspace keeps one session, and the next --continue goes on with that
// conversation rather than with an empty session the reattach left.
func TestE2EContinueAfterCrashStaysInPlace(t *testing.T) {
	t.Parallel()
	e, resumed := killHalfwayFleet(t)
	parent := e.sessionIDs()[0]
	resumed.Store(true)
	id, r := e.runJSON("--continue", "what did the fleet say?")
	if id != parent || !strings.Contains(r.stdout, "parent read: 8 tasks: 8 ok") {
		t.Fatalf("continued %s, want the parent %s:\n%s", id, parent, r)
	}
	if ids := e.sessionIDs(); len(ids) != 1 || ids[0] != parent {
		t.Fatalf("sessions after the continue: %v, want only the parent %s", ids, parent)
	}
	asked := subagentRequests(e.srv)
	if id, r = e.runJSON("--continue", "and then?"); id != parent {
		t.Fatalf("second continue went on in %s, want %s:\n%s", id, parent, r)
	}
	last := e.srv.Requests()[len(e.srv.Requests())-1]
	if !strings.Contains(string(last.Body), "what did the fleet say?") || subagentRequests(e.srv) != asked {
		t.Fatalf("the second continue does not carry the conversation on: %s", last.Body)
	}
}

// TestE2EContinuePicksLastUsed: --continue goes on with the session used
// last (here one resumed by id), not the one started last.
func TestE2EContinuePicksLastUsed(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(providertest.Turn{Text: "a1"}, providertest.Turn{Text: "b1"}, providertest.Turn{Text: "a2"}, providertest.Turn{Text: "a3"})
	a, _ := e.runJSON("one")
	b, _ := e.runJSON("two")
	if a == b {
		t.Fatal("two runs shared a session")
	}
	if id, _ := e.runJSON("--resume", a, "three"); id != a {
		t.Fatalf("--resume %s went on in %s", a, id)
	}
	id, _ := e.runJSON("-c", "four")
	if id != a {
		t.Fatalf("-c continued %s (started last), want %s (used last)", id, a)
	}
	last := e.srv.Requests()[3]
	var prompts []string
	for _, m := range last.Messages {
		if m.Role == "user" {
			prompts = append(prompts, m.Content)
		}
	}
	if strings.Join(prompts, " ") != "one three four" {
		t.Fatalf("continued conversation's prompts = %q", prompts)
	}
}

// TestE2ESubagentSessionsAreNotContinued: the sessions of `subagent try`
// and `subagent run` are marked in their headers, are not listed, and are
// never what --continue picks; --resume refuses them, since they ran
// under the profile's (often read-only) tools.
func TestE2ESubagentSessionsAreNotContinued(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(providertest.Turn{Text: "mine"}, providertest.Turn{Text: "looked"}, providertest.Turn{Text: "ran"},
		providertest.Turn{Text: "mine again"})
	mine, _ := e.runJSON("hello")
	var subs []string
	for _, action := range []string{"try", "run"} {
		r := e.run("subagent", action, "-o", "json", "explore", "look around")
		var out struct {
			Session string `json:"session"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil {
			t.Fatalf("subagent %s:\n%s", action, r)
		}
		if h := e.header(out.Session); h.Kind != session.KindSubagent || h.Profile != "explore" {
			t.Errorf("subagent %s header = %+v, want kind %q and profile explore", action, h, session.KindSubagent)
		}
		subs = append(subs, out.Session)
	}
	if ids := e.sessionIDs(); len(ids) != 1 || ids[0] != mine {
		t.Errorf("sessions = %v, want only %s", ids, mine)
	}
	if id, r := e.runJSON("--continue", "again"); id != mine || !strings.Contains(r.stdout, "mine again") {
		t.Fatalf("--continue went on in %s, want %s:\n%s", id, mine, r)
	}
	for _, id := range subs {
		r := e.run("run", "--resume", id, "widen it")
		if r.code != 2 || !strings.Contains(r.stderr, "cannot be continued") {
			t.Errorf("--resume of subagent session %s:\n%s", id, r)
		}
	}
	if n := e.srv.Count(); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
}
