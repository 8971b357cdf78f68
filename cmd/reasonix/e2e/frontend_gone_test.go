package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/core/provider/providertest"
)

// TestE2EStreamInputEndsWithApprovalPending: the stream-json input closing
// while a call waits for approval leaves nobody to answer it. The call is
// denied with "no frontend left" (the model sees Blocked), the prompt
// queued behind the turn still gets its answer, and the run exits soon
// after, 0 as its last turn was ok.
func TestE2EStreamInputEndsWithApprovalPending(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "write_file", Arguments: `{"path":"x.txt","content":"no"}`}}},
		providertest.Turn{Text: "not written"},
		providertest.Turn{Text: "second answer"},
	)
	s := e.stream()
	s.send(`{"type":"prompt","text":"write x.txt"}`)
	ask := s.expect("approval_requested", nil)
	s.send(`{"type":"prompt","text":"and then?"}`)
	s.expect("prompt_queued", nil)

	closed := time.Now()
	r := s.finish()
	took := time.Since(closed)
	t.Logf("exited %v after its input ended", took.Round(time.Millisecond))
	if took > 2*time.Second {
		t.Errorf("exited %v after its input ended, want within 2s", took.Round(time.Millisecond))
	}
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	var resolved, dones []map[string]any
	for _, ev := range s.seen {
		switch {
		case ev["type"] == "approval_resolved":
			resolved = append(resolved, ev)
		case ev["type"] == "turn_done" && ev["task"] == nil:
			dones = append(dones, ev)
		}
	}
	if len(resolved) != 1 || resolved[0]["request_id"] != ask["request_id"] ||
		resolved[0]["decision"] != "deny" || resolved[0]["reason"] != "no frontend left" {
		t.Fatalf("approval_resolved = %v, want one deny of %v with reason \"no frontend left\"", resolved, ask["request_id"])
	}
	if len(dones) != 2 || dones[0]["text"] != "not written" || dones[1]["text"] != "second answer" {
		t.Fatalf("turn_done events = %v, want the pending turn's and the queued prompt's", dones)
	}
	if _, err := os.Stat(filepath.Join(e.work, "x.txt")); err == nil {
		t.Fatal("the unanswered write happened")
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if tm := reqs[1].Last(); tm.Role != "tool" || !strings.HasPrefix(tm.Content, "Blocked: no frontend left") {
		t.Fatalf("the model saw %+v", tm)
	}
	if reqs[2].LastUser() != "and then?" {
		t.Fatalf("third request answers %q, want the queued prompt", reqs[2].LastUser())
	}
}

// TestE2EStreamInputEndedDeniesLaterApprovals: a call asked for after the
// input has ended (the prompts were piped in and the pipe closed at once)
// is denied as it is asked, rather than waiting for an answer that cannot
// come.
func TestE2EStreamInputEndedDeniesLaterApprovals(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "write_file", Arguments: `{"path":"x.txt","content":"no"}`}}},
		providertest.Turn{Text: "not written"},
	)
	s := e.stream()
	s.send(`{"type":"prompt","text":"write x.txt"}`)
	r := s.finish()
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	denied := false
	for _, ev := range s.seen {
		if ev["type"] == "approval_resolved" {
			denied = ev["decision"] == "deny" && ev["reason"] == "no frontend left"
		}
	}
	if !denied {
		t.Fatalf("no approval denied for want of a frontend; events %v", s.types())
	}
	if _, err := os.Stat(filepath.Join(e.work, "x.txt")); err == nil {
		t.Fatal("the unanswered write happened")
	}
}

// TestE2EServeLastTabGoneDeniesApprovals: in `reasonix serve`, a call a
// subagent waits to have approved is denied with "no frontend left" once
// the session's last event stream has closed and the configured
// approval_timeout_seconds has passed; the run goes on without the write.
func TestE2EServeLastTabGoneDeniesApprovals(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.writeConfig("\n[permissions]\nallow = [\"task\"]\napproval_timeout_seconds = 1\n")
	must(t, os.MkdirAll(filepath.Join(e.work, "out"), 0o755))
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "task", Arguments: `{"prompt":"write the report","write_paths":["out"]}`}}},
		providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "write_file", Arguments: `{"path":"out/report.txt","content":"done\n"}`}}},
		providertest.Turn{Text: "sub done"},
		providertest.Turn{Text: "parent done"},
	)
	srv := e.browserServe(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	do := func(method, path, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, srv.url+path, strings.NewReader(body))
		must(t, err)
		req.Header.Set("Origin", srv.url)
		req.Header.Set("Authorization", "Bearer "+srv.token)
		resp, err := client.Do(req)
		must(t, err)
		return resp
	}
	resp := do("POST", "/api/sessions", "{}")
	var opened struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&opened); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("open session: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()

	// The tab: it follows the session until the subagent asks.
	tabCtx, closeTab := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(tabCtx, "GET", srv.url+"/api/sessions/"+opened.ID+"/events", nil)
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.token)
	events, err := client.Do(req)
	must(t, err)
	defer events.Body.Close()
	resp = do("POST", "/api/sessions/"+opened.ID+"/commands", `{"type":"prompt","text":"delegate the report"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("prompt: %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(events.Body)
	asked := false
	for !asked && sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		var ev map[string]any
		asked = ok && json.Unmarshal([]byte(data), &ev) == nil && ev["type"] == "approval_requested" && ev["task"] != nil
	}
	if !asked {
		t.Fatalf("the stream ended before the subagent asked: %v", sc.Err())
	}
	closeTab()

	reqs, err := e.srv.WaitRequests(4, 30*time.Second)
	if err != nil {
		t.Fatalf("the run did not go on after the tab closed: %v\n%s", err, srv.output())
	}
	if tm := reqs[2].Last(); tm.Role != "tool" || !strings.HasPrefix(tm.Content, "Blocked: no frontend left") {
		t.Fatalf("the subagent saw %+v", tm)
	}
	if _, err := os.Stat(filepath.Join(e.work, "out", "report.txt")); err == nil {
		t.Fatal("the unanswered write happened")
	}
}
