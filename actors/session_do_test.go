package actors

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/core/mcp"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

// TestSessionDoRejectsInvalid: Do checks a hand-built command as strictly
// as DecodeCommand checks a line, and a nil one is an error, not a panic.
func TestSessionDoRejectsInvalid(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	cases := []struct {
		name string
		cmd  event.Command
		want string
	}{
		{"nil", nil, "nil command"},
		{"typed nil", (*event.ApproveCmd)(nil), "nil command"},
		{"empty prompt", &event.PromptCmd{}, `"text" is empty`},
		{"empty task id", &event.CancelTaskCmd{}, `"id" is empty`},
		{"bad decision", &event.ApproveCmd{ID: "x", Decision: "maybe"}, "once, session, always or deny"},
		{"bad action", &event.ElicitationCmd{ID: "t-1", Action: "sure"}, "accept, decline or cancel"},
		{"unroutable elicitation", &event.ElicitationCmd{ID: "t", Action: mcp.ElicitCancel}, "<server>-<n>"},
		{"posture ParsePosture would take", &event.SetPostureCmd{Posture: "YOLO"}, "ask, auto or yolo"},
		{"unknown effort", &event.SetEffortCmd{Effort: "extreme"}, "low, medium, high or max"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := h.sess.Do(tc.cmd)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Do(%#v) = %v, want an error saying %q", tc.cmd, err, tc.want)
			}
		})
	}
	// Nothing reached the session: the next turn is the only one, and no
	// posture changed.
	h.srv.Push(providertest.Turn{Text: "fine"})
	h.sess.Run("after")
	_, evs := h.wait()
	if started := eventsOf[*event.TurnStarted](evs); len(started) != 1 || started[0].Prompt != "after" {
		t.Errorf("turn_started = %+v, want only the one for \"after\"", started)
	}
	if pc := eventsOf[*event.PostureChanged](evs); len(pc) != 0 {
		t.Errorf("an invalid command reached the session: %+v", pc)
	}
}

// doLine decodes line and applies it, as a stream-json frontend does.
func doLine(t *testing.T, s *Session, line string) {
	t.Helper()
	cmd, err := event.DecodeCommand([]byte(line))
	if err != nil {
		t.Fatalf("decode %s: %v", line, err)
	}
	if err := s.Do(cmd); err != nil {
		t.Fatalf("do %s: %v", line, err)
	}
}

// TestSessionDoCommands drives a session by command lines only: prompts
// queue or are refused, cancel stops the running turn, set_posture
// switches the posture, approve answers an approval.
func TestSessionDoCommands(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	h := newHarness(t, harnessOpts{tools: []tool.Tool{shell(&runs)},
		perms: agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Interactive: true}})
	h.srv.Push(
		providertest.Turn{Text: "one", Stall: true, FaultAfterEvents: 2},
		providertest.Turn{Text: "two"},
	)
	doLine(t, h.sess, `{"type":"prompt","text":"first"}`)
	h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.TextDelta); return ok })
	doLine(t, h.sess, `{"type":"prompt","text":"refused","queue":false}`)
	rej := h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.PromptRejected); return ok }).(*event.PromptRejected)
	if rej.Prompt != "refused" {
		t.Errorf("prompt_rejected = %+v", rej)
	}
	doLine(t, h.sess, `{"type":"prompt","text":"second"}`)
	if q := h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.PromptQueued); return ok }).(*event.PromptQueued); q.Prompt != "second" {
		t.Errorf("prompt_queued = %+v", q)
	}
	doLine(t, h.sess, `{"type":"cancel"}`)
	if first, _ := h.wait(); first.Status != event.StatusCancelled {
		t.Fatalf("first turn = %+v, want cancelled", first)
	}
	if second, _ := h.wait(); second.Status != event.StatusOK || second.Text != "two" {
		t.Fatalf("second turn = %+v", second)
	}

	doLine(t, h.sess, `{"type":"set_posture","posture":"auto"}`)
	if pc := h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.PostureChanged); return ok }).(*event.PostureChanged); pc.Posture != "auto" {
		t.Errorf("posture_changed = %+v", pc)
	}
	doLine(t, h.sess, `{"type":"set_posture","posture":"ask"}`)
	h.waitEvent(func(e event.Event) bool { pc, ok := e.(*event.PostureChanged); return ok && pc.Posture == "ask" })

	h.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("bash", `{"command":"make"}`)}},
		providertest.Turn{Text: "built"},
	)
	doLine(t, h.sess, `{"type":"prompt","text":"build"}`)
	req := h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.ApprovalRequested); return ok }).(*event.ApprovalRequested)
	line, err := json.Marshal(map[string]string{"type": "approve", "id": req.RequestID, "decision": "once"})
	must(t, err)
	doLine(t, h.sess, string(line))
	done, evs := h.wait()
	if done.Status != event.StatusOK || runs.Load() != 1 {
		t.Fatalf("turn = %+v, runs %d", done, runs.Load())
	}
	if res := eventsOf[*event.ApprovalResolved](evs); len(res) != 1 || res[0].RequestID != req.RequestID || res[0].Decision != event.ApproveOnce {
		t.Errorf("approval_resolved = %+v", res)
	}
}

// TestSessionDoElicitation: an elicitation command carries only the
// request's id, and the answer reaches the server that asked, even one
// whose name has dashes.
func TestSessionDoElicitation(t *testing.T) {
	t.Parallel()
	spec := testSpec(t, scripted(t, "my-srv", "serve", nil))
	spec.Interactive = true
	h := newMCPHarness(t, spec)
	h.waitServer("my-srv", event.MCPReady)
	tl, _ := h.reg.Get("mcp__my-srv__ask")
	if tl == nil {
		t.Fatalf("no ask tool in %v", h.reg.Names())
	}
	type outcome struct {
		out string
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitBound)
		defer cancel()
		out, err := tl.Execute(ctx, json.RawMessage(`{}`))
		done <- outcome{out, err}
	}()
	req := h.next("elicitation", func(e event.Event) bool { _, ok := e.(*event.ElicitationRequested); return ok }).(*event.ElicitationRequested)
	line, err := json.Marshal(map[string]any{"type": "elicitation", "id": req.RequestID, "action": "accept", "content": map[string]any{"name": "Ada"}})
	must(t, err)
	doLine(t, h.sess, string(line))
	select {
	case o := <-done:
		if o.err != nil || !strings.Contains(o.out, `"action":"accept"`) || !strings.Contains(o.out, `"Ada"`) {
			t.Errorf("ask = %q, %v", o.out, o.err)
		}
	case <-time.After(waitBound):
		t.Fatal("the answer never reached the server")
	}
}

// TestViewerFollowsSession watches a real session run a fleet driven by
// commands: the snapshot shows the running turn and its tasks, a task
// cancelled by cancel_task, and the idle session once the turn is done.
func TestViewerFollowsSession(t *testing.T) {
	t.Parallel()
	started := make(chan string, 4)
	release := make(chan struct{})
	gate := &funcTool{name: "gate", readOnly: true, run: func(ctx context.Context, args json.RawMessage) (string, error) {
		started <- string(args)
		select {
		case <-release:
			return "released", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}}
	h := newHarness(t, harnessOpts{fleet: &fleet.FleetSpec{MaxRunning: 2, Root: "/ws"}, subTools: []tool.Tool{gate},
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				if len(toolMessages(req)) == 0 {
					return providertest.Turn{ToolCalls: []providertest.ToolCall{call("gate", `{}`)}}
				}
				return providertest.Turn{Text: "finished"}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(2, nil)}}
			}
			return providertest.Turn{Text: "parent done"}
		})}})
	v := h.sess.Watch(h.bus)
	defer v.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	doLine(t, h.sess, `{"type":"set_posture","posture":"auto"}`)
	doLine(t, h.sess, `{"type":"prompt","text":"go"}`)
	for range 2 {
		select {
		case <-started:
		case <-ctx.Done():
			t.Fatal("subagents never reached the gate")
		}
	}
	doLine(t, h.sess, `{"type":"cancel_task","id":"f1.2"}`)
	done := h.waitEvent(func(e event.Event) bool { d, ok := e.(*event.TaskDone); return ok && d.Task == "f1.2" })
	s, err := v.WaitSeq(ctx, done.EventMeta().Seq)
	must(t, err)
	if !s.Running || s.Prompt != "go" || s.Posture != "auto" || len(s.Queued) != 0 {
		t.Errorf("mid-turn snapshot = %+v", s)
	}
	byID := map[string]event.TaskSnapshot{}
	for _, ts := range s.Tasks {
		byID[ts.ID] = ts
	}
	if c := byID["f1.2"]; c.State != "done" || c.Status != event.TaskCancelled || c.Fleet != "f1" || c.Prompt != "task 2" {
		t.Errorf("cancelled task = %+v", c)
	}
	if r := byID["f1.1"]; r.State != "running" || r.Model != "fake-model" {
		t.Errorf("running task = %+v", r)
	}
	close(release)
	td, _ := h.wait()
	if td.Status != event.StatusOK {
		t.Fatalf("turn = %+v", td)
	}
	s, err = v.WaitSeq(ctx, td.Seq)
	must(t, err)
	if s.Running || s.Prompt != "" || len(s.Tasks) != 2 || s.Tasks[0].State != "done" || s.Tasks[1].State != "done" {
		t.Errorf("final snapshot = %+v", s)
	}
}
