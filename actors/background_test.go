package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/actors/agent"
	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/core/provider"
	"reasonix/core/provider/providertest"
	"reasonix/core/session"
	"reasonix/core/tool"
)

// transcriptAgents builds subagents on p with the system prompt "sub",
// each with a transcript of its own under dir, and a follow-up (a
// message to an agent that ended) continuing the transcript it names, as
// the session's real factory does.
func transcriptAgents(t *testing.T, p provider.Provider, dir string) fleet.SubagentFactory {
	return func(spec event.TaskSpec) (agent.AgentSpec, error) {
		reg, err := tool.NewRegistry()
		if err != nil {
			return agent.AgentSpec{}, err
		}
		ag := agent.AgentSpec{Provider: p, Model: "fake-model", Tools: reg, System: "sub", ToolTimeout: 10 * time.Second}
		if spec.Continue != "" {
			_, msgs, _, err := session.Load(spec.Continue)
			if err != nil {
				return agent.AgentSpec{}, err
			}
			st, err := session.Reopen(spec.Continue)
			if err != nil {
				return agent.AgentSpec{}, err
			}
			ag.History, ag.Transcript = msgs, st
			return ag, nil
		}
		st, err := session.Open(dir, session.Header{ID: "s1-" + strings.NewReplacer(".", "-", "+", "-").Replace(spec.ID), Created: time.Now().UTC(), Task: spec.ID})
		if err != nil {
			return agent.AgentSpec{}, err
		}
		ag.Transcript = st
		return ag, nil
	}
}

// parentRequests are the requests of the parent (system prompt "sys").
func parentRequests(srv *providertest.Server) []providertest.Request {
	var out []providertest.Request
	for _, r := range srv.Requests() {
		if len(r.Messages) > 0 && r.Messages[0].Content == "sys" {
			out = append(out, r)
		}
	}
	return out
}

// extendsAll fails t unless every request's messages extend the previous
// one's, byte for byte.
func extendsAll(t *testing.T, who string, reqs []providertest.Request) {
	t.Helper()
	for i := 1; i < len(reqs); i++ {
		prev, next := rawMessages(t, reqs[i-1]), rawMessages(t, reqs[i])
		if len(next) < len(prev) {
			for k, r := range reqs {
				t.Logf("%s request %d (seq %d, arrived %v): %+v", who, k, r.Seq, r.Arrived, r.Messages)
			}
			t.Fatalf("%s request %d has %d messages, fewer than the %d before it", who, i, len(next), len(prev))
		}
		for j := range prev {
			if string(prev[j]) != string(next[j]) {
				t.Fatalf("%s request %d changed message %d:\n%s\n%s", who, i, j, prev[j], next[j])
			}
		}
	}
}

// backgroundHeads lists the background results a request carries, in
// order: the first line of each "[Background task" user message.
func backgroundHeads(r providertest.Request) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "user" && strings.HasPrefix(m.Content, "[Background task ") {
			out = append(out, strings.SplitN(m.Content, "\n", 2)[0])
		}
	}
	return out
}

// waitIdle waits until the session has no turn, no background run and
// nothing undelivered, and returns the events it read meanwhile.
func (h *harness) waitIdle() []event.Event {
	h.t.Helper()
	var evs []event.Event
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		st, err := h.sess.Background(2 * time.Second)
		if err != nil {
			h.t.Fatal(err)
		}
		busy, err := h.sess.Busy(2 * time.Second)
		if err != nil {
			h.t.Fatal(err)
		}
		if len(st.Running) == 0 && st.Undelivered == 0 && !busy {
			return evs
		}
		// Wait for the next thing to happen rather than polling on a timer.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if e, err := h.sub.Next(ctx); err == nil {
			evs = append(evs, e)
		}
		cancel()
	}
	st, _ := h.sess.Background(2 * time.Second)
	busy, _ := h.sess.Busy(2 * time.Second)
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind()+":"+e.EventMeta().Task)
	}
	h.t.Fatalf("the session never settled: background %+v, busy %v; events %v", st, busy, kinds)
	return nil
}

// TestBackgroundFleetDeliversEachResultOnce: the parent dispatches 8
// background tasks and goes on with 3 more tool steps while they run
// (the tasks are held until the parent's turn has ended, so every result
// comes while no turn runs and needs a turn of its own);
// each result then reaches the parent's conversation as an appended user
// message, once, in the order the tasks ended, and every parent request
// extends the one before it byte for byte. Results that come after the
// turn ended start a turn of their own.
func TestBackgroundFleetDeliversEachResultOnce(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	tick := &funcTool{name: "tick", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) { return "tock", nil }}
	h := newHarness(t, harnessOpts{tools: []tool.Tool{tick}, fleet: &fleet.FleetSpec{MaxRunning: 8, MaxWriters: 2, Root: "/ws", WarmWait: -1},
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				select {
				case <-release:
				case <-time.After(10 * time.Second):
				}
				var n int
				fmt.Sscanf(req.FirstUser(), "task %d", &n)
				return providertest.Turn{Text: "answer to " + req.FirstUser(), Latency: time.Duration(n) * 15 * time.Millisecond}
			}
			tools := len(toolMessages(req))
			switch {
			case tools == 0:
				return providertest.Turn{ToolCalls: []providertest.ToolCall{call("fleet", `{"background":true,"tasks":[`+
					`{"prompt":"task 1","name":"one"},{"prompt":"task 2"},{"prompt":"task 3"},{"prompt":"task 4"},`+
					`{"prompt":"task 5"},{"prompt":"task 6"},{"prompt":"task 7"},{"prompt":"task 8","name":"eight"}]}`)}}
			case tools < 4:
				return providertest.Turn{ToolCalls: []providertest.ToolCall{call("tick", fmt.Sprintf(`{"n":%d}`, tools))}}
			}
			return providertest.Turn{Text: "noted"}
		})}})
	done, evs := h.turn("fan out in the background")
	if done.Status != event.StatusOK || done.Text != "noted" {
		t.Fatalf("turn = %+v", done)
	}
	close(release)
	fin := eventsOf[*event.ToolFinished](evs)
	if len(fin) == 0 || fin[0].Tool != team.ToolFleet || !strings.Contains(fin[0].Output, `"background":true`) || !strings.Contains(fin[0].Output, `"f1.8"`) {
		t.Fatalf("the fleet call's result = %+v", fin)
	}
	evs = append(evs, h.waitIdle()...)
	reqs := parentRequests(h.srv)
	extendsAll(t, "parent", reqs)
	if len(reqs) < 5 {
		t.Fatalf("the parent sent %d requests, want its 4 steps and at least one more", len(reqs))
	}
	for i := 1; i < 5; i++ {
		if heads := backgroundHeads(reqs[i]); len(heads) != 0 {
			t.Fatalf("request %d, sent while the tasks were held, carries results %v", i, heads)
		}
	}
	if wakes := eventsOf[*event.TurnStarted](evs); len(wakes) < 2 || !wakes[len(wakes)-1].Wake {
		t.Errorf("no turn of its own for the results: turn_started %+v", wakes)
	}
	heads := backgroundHeads(reqs[len(reqs)-1])
	if len(heads) != 8 {
		t.Fatalf("the last request carries %d results, want 8: %v", len(heads), heads)
	}
	// The task_done events say in which order the tasks ended.
	var ended []string
	for _, d := range eventsOf[*event.TaskDone](evs) {
		ended = append(ended, d.Task)
	}
	names := map[string]string{"f1.1": "f1.1 (one)", "f1.8": "f1.8 (eight)"}
	var want []string
	for _, id := range ended {
		l := id
		if n, ok := names[id]; ok {
			l = n
		}
		want = append(want, "[Background task "+l+" ok]")
	}
	if strings.Join(heads, "|") != strings.Join(want, "|") {
		t.Fatalf("results delivered as\n%v\nwant them once each in the order the tasks ended\n%v", heads, want)
	}
	// The session is idle once the last wake turn ended; its events may
	// still be on their way to this subscriber.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for len(eventsOf[*event.BackgroundResult](evs)) < 8 {
		e, err := h.sub.Next(ctx)
		if err != nil {
			break
		}
		evs = append(evs, e)
	}
	if got := len(eventsOf[*event.BackgroundResult](evs)); got != 8 {
		t.Errorf("%d background_result events, want 8", got)
	}
}

// requestsOfTask are the requests of the subagent whose task prompt is
// prompt, in order.
func requestsOfTask(srv *providertest.Server, prompt string) []providertest.Request {
	var out []providertest.Request
	for _, r := range srv.Requests() {
		if isSub(r) && r.FirstUser() == prompt {
			out = append(out, r)
		}
	}
	return out
}

// hasUser reports whether r carries a user message equal to text.
func hasUser(r providertest.Request, text string) bool {
	for _, m := range r.Messages {
		if m.Role == "user" && m.Content == text {
			return true
		}
	}
	return false
}

// TestBackgroundAgentsMessageEachOther: a subagent writes to its sibling
// (read at the sibling's next step) and to its parent; the parent writes
// to an agent that has finished, which continues its own conversation
// (its request extends its last one byte for byte) and whose new answer
// reaches the parent as a result; a message to an agent that does not
// exist is an error result, not a wait.
func TestBackgroundAgentsMessageEachOther(t *testing.T) {
	t.Parallel()
	alphaSent := make(chan struct{})
	var once sync.Once
	srv := []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case isSub(req) && req.FirstUser() == "alpha task":
			switch {
			case last.Role == "user" && strings.HasPrefix(last.Content, "[Message from your parent agent]"):
				return providertest.Turn{Text: "alpha again"}
			case len(toolMessages(req)) == 0:
				return providertest.Turn{ToolCalls: []providertest.ToolCall{
					call("send_message", `{"to":"b","text":"hello from a"}`), call("send_message", `{"to":"parent","text":"note for parent"}`)}}
			}
			once.Do(func() { close(alphaSent) })
			return providertest.Turn{Text: "alpha done"}
		case isSub(req):
			if len(toolMessages(req)) == 0 {
				select {
				case <-alphaSent:
				case <-time.After(10 * time.Second):
				}
				return providertest.Turn{ToolCalls: []providertest.ToolCall{call("send_message", `{"to":"parent","text":"beta step"}`)}}
			}
			return providertest.Turn{Text: "beta done"}
		}
		// The parent.
		calledSend := false
		gotAlpha := false
		for _, m := range req.Messages {
			for _, c := range m.ToolCalls {
				if c.Name == "send_message" {
					calledSend = true
				}
			}
			if m.Role == "user" && strings.HasPrefix(m.Content, "[Background task f1.1 (a) ok]\nalpha done") {
				gotAlpha = true
			}
		}
		switch {
		case len(toolMessages(req)) == 0:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{call("fleet", `{"background":true,"tasks":[{"prompt":"alpha task","name":"a"},{"prompt":"beta task","name":"b"}]}`)}}
		case gotAlpha && !calledSend:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{
				call("send_message", `{"to":"a","text":"one more thing"}`), call("send_message", `{"to":"nobody","text":"hello?"}`)}}
		}
		return providertest.Turn{Text: "ok"}
	})}
	dir := t.TempDir()
	h := newHarness(t, harnessOpts{fleet: &fleet.FleetSpec{MaxRunning: 4, MaxWriters: 2, Root: "/ws", WarmWait: -1}, server: srv,
		agents: func(p provider.Provider) fleet.SubagentFactory { return transcriptAgents(t, p, dir) }})
	if done, _ := h.turn("start them"); done.Status != event.StatusOK {
		t.Fatalf("turn = %+v", done)
	}
	h.waitIdle()

	beta := requestsOfTask(h.srv, "beta task")
	if len(beta) != 2 || !hasUser(beta[1], "[Message from f1.1 (a)]\nhello from a") {
		t.Fatalf("the sibling's next step did not read the message: %d requests, last %+v", len(beta), beta[len(beta)-1].Messages)
	}
	reqs := parentRequests(h.srv)
	extendsAll(t, "parent", reqs)
	final := reqs[len(reqs)-1]
	for _, want := range []string{"[Message from f1.1 (a)]\nnote for parent", "[Message from f1.2 (b)]\nbeta step",
		"[Background task f1.1 (a) ok]\nalpha again", "[Background task f1.2 (b) ok]\nbeta done"} {
		if !hasUser(final, want) {
			t.Errorf("the parent never read %q", want)
		}
	}
	var sendResults []string
	for _, m := range toolMessages(final) {
		if m.Name == "send_message" {
			sendResults = append(sendResults, m.Content)
		}
	}
	if len(sendResults) != 2 || !strings.Contains(sendResults[0], "continues its conversation") || !strings.HasPrefix(sendResults[1], "Error: no agent \"nobody\"") {
		t.Errorf("send_message results = %q", sendResults)
	}
	alpha := requestsOfTask(h.srv, "alpha task")
	if len(alpha) != 3 {
		t.Fatalf("alpha made %d requests, want 3 (two steps, one follow-up)", len(alpha))
	}
	extendsAll(t, "alpha", alpha)
	if !hasUser(alpha[2], "[Message from your parent agent]\none more thing") {
		t.Errorf("the follow-up does not carry the parent's message: %+v", alpha[2].Messages)
	}
}
