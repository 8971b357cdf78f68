package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/core/provider/providertest"
)

// requestMessages returns a recorded request's messages as the bytes sent.
func requestMessages(t *testing.T, r providertest.Request) []json.RawMessage {
	t.Helper()
	var body struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("request body: %v", err)
	}
	return body.Messages
}

// checkExtends fails unless next starts with exactly the messages of prev.
func checkExtends(t *testing.T, prev, next providertest.Request) {
	t.Helper()
	p, n := requestMessages(t, prev), requestMessages(t, next)
	if len(n) <= len(p) {
		t.Fatalf("the later request has %d messages, the earlier %d", len(n), len(p))
	}
	for i := range p {
		if string(p[i]) != string(n[i]) {
			t.Fatalf("message %d changed between requests:\nbefore %s\nafter  %s", i, p[i], n[i])
		}
	}
}

// TestE2EContinueExtendsThePrefix: a second `run --continue` picks the
// session up where the first left it. Its first request is the first
// run's last request byte for byte, then that run's answer (with its
// reasoning, which a thinking-mode model insists on), then the new prompt.
func TestE2EContinueExtendsThePrefix(t *testing.T) {
	t.Parallel()
	e := newE2E(t, providertest.WithThinkingMode())
	e.srv.Push(
		providertest.Turn{Reasoning: "look first", ToolCalls: []providertest.ToolCall{{Name: "ls", Arguments: `{"path":"."}`}}},
		providertest.Turn{Reasoning: "seen it", Text: "the workspace is empty"},
		providertest.Turn{Reasoning: "again", Text: "still empty"},
	)
	if r := e.run("run", "what is here?"); r.code != 0 {
		t.Fatalf("first run:\n%s", r)
	}
	r := e.run("run", "--continue", "and now?")
	if r.code != 0 || !strings.Contains(r.stdout, "still empty") {
		t.Fatalf("second run:\n%s", r)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	checkExtends(t, reqs[1], reqs[2])
	msgs := reqs[2].Messages
	answer, prompt := msgs[len(msgs)-2], msgs[len(msgs)-1]
	if answer.Role != "assistant" || answer.Content != "the workspace is empty" || answer.ReasoningContent != "seen it" {
		t.Fatalf("first run's answer in the second request = %+v", answer)
	}
	if prompt.Role != "user" || prompt.Content != "and now?" {
		t.Fatalf("new prompt = %+v", prompt)
	}
	if ts := e.transcripts(); len(ts) != 1 {
		t.Fatalf("a continued session must keep one transcript, got %v", ts)
	}
	// The session list sees both turns.
	list := e.run("sessions", "list", "--json")
	var sessions []struct {
		Turns      int    `json:"turns"`
		LastPrompt string `json:"last_prompt"`
	}
	if err := json.Unmarshal([]byte(list.stdout), &sessions); err != nil || len(sessions) != 1 || sessions[0].Turns != 2 || sessions[0].LastPrompt != "and now?" {
		t.Fatalf("sessions list = %s (%v)", list.stdout, err)
	}
}

// TestE2EResumeAfterKill: a run killed with SIGKILL while a tool call runs
// is resumed by id. The unanswered call gets a recorded "interrupted"
// result, so the next request is valid, and it extends the killed run's
// last request byte for byte.
func TestE2EResumeAfterKill(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(
		providertest.Turn{Reasoning: "wait a bit", ToolCalls: []providertest.ToolCall{{Name: "e2e_sleep", Arguments: `{"seconds":"5","hang":true}`}}},
		providertest.Turn{Text: "picked up after the crash"},
	)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, _, _ := e.command(ctx, "run", "-o", "stream-json", "sleep please")
	cmd.Stdout = nil
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	var id string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var ev map[string]any
		must(t, json.Unmarshal(sc.Bytes(), &ev))
		if ev["type"] == "session_started" {
			id = ev["session"].(string)
		}
		if ev["type"] == "tool_started" {
			break
		}
	}
	if id == "" {
		t.Fatal("no session_started before the tool ran")
	}
	must(t, cmd.Process.Kill())
	_ = cmd.Wait()

	r := e.run("run", "--resume", id, "are you back?")
	if r.code != 0 || !strings.Contains(r.stdout, "picked up after the crash") || !strings.Contains(r.stderr, "interrupted") {
		t.Fatalf("resumed run:\n%s", r)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	checkExtends(t, reqs[0], reqs[1])
	msgs := reqs[1].Messages
	var sawInterrupted bool
	for i, m := range msgs {
		if m.Role == "tool" {
			sawInterrupted = strings.Contains(m.Content, "interrupted") && msgs[i-1].Role == "assistant"
		}
	}
	if !sawInterrupted || msgs[len(msgs)-1].Content != "are you back?" {
		t.Fatalf("resumed request messages = %+v", msgs)
	}
	// A second resume adds no second repair.
	e.srv.Push(providertest.Turn{Text: "third"})
	if r := e.run("run", "--resume", id, "once more"); r.code != 0 || strings.Contains(r.stderr, "interrupted") {
		t.Fatalf("second resume:\n%s", r)
	}
	if ts := e.transcripts(); len(ts) != 1 || filepath.Base(ts[0]) != id+".jsonl" {
		t.Fatalf("transcripts = %v", ts)
	}
}

// TestE2EResumeErrors: clear errors for a session that does not exist or
// a workspace with none.
func TestE2EResumeErrors(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	if r := e.run("run", "--continue", "hi"); r.code != 2 || !strings.Contains(r.stderr, "no session yet") {
		t.Fatalf("--continue in an empty workspace:\n%s", r)
	}
	if r := e.run("run", "--resume", "20990101-000000-nope", "hi"); r.code != 2 || !strings.Contains(r.stderr, "no such session") {
		t.Fatalf("--resume of an unknown id:\n%s", r)
	}
	if r := e.run("run", "--resume", "../escape", "hi"); r.code != 2 || !strings.Contains(r.stderr, "not a session id") {
		t.Fatalf("--resume of a path:\n%s", r)
	}
}
