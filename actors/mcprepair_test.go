package actors

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/kernel"
	"reasonix/actors/mcpconn"
	"reasonix/core/mcp"
	"reasonix/core/permission"
	"reasonix/core/provider/providertest"
)

// injectMCPPanic makes the repair middleware panic once, at the first
// message of a connection actor that match accepts: before its handler
// runs, or just after it returned when after is set. faultHook is global,
// so tests that use it never run in parallel.
func injectMCPPanic(t *testing.T, match func(any) bool, after bool) *atomic.Bool {
	t.Helper()
	var fired atomic.Bool
	hook := func(kind string, msg any, a bool) {
		if kind == "mcp" && a == after && match(msg) && fired.CompareAndSwap(false, true) {
			panic("injected fault")
		}
	}
	kernel.FaultHook.Store(&hook)
	t.Cleanup(func() { kernel.FaultHook.Store(nil) })
	return &fired
}

func isMsg[T any](msg any) bool {
	_, ok := msg.(T)
	return ok
}

// replyProbe is a requester that records every reply it gets, so a test can
// tell one reply from two.
type replyProbe struct{ replies chan any }

// replyProbeAsk makes the probe send msg, as a request, to to.
type replyProbeAsk struct {
	to  *actor.PID
	msg any
}

func (p *replyProbe) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *replyProbeAsk:
		c.Request(m.to, m.msg)
	case *event.MCPStatus, *mcpconn.MCPPromptResult, *mcpconn.MCPResourceResult:
		p.replies <- m
	}
}

func startProbe(t *testing.T, h *mcpHarness) (*actor.PID, chan any) {
	t.Helper()
	replies := make(chan any, 16)
	pid := h.sys.Root().Spawn(actor.PropsFromProducer(func() actor.Actor { return &replyProbe{replies: replies} }))
	// Registered after the harness, so it runs before the harness stops.
	t.Cleanup(func() {
		if err := h.sys.Stop(pid, 5*time.Second); err != nil {
			t.Errorf("stop probe: %v", err)
		}
	})
	return pid, replies
}

// TestMCPRepairAtEveryHandler injects a panic before and after each
// handler of the connection actor. Each time the panic counts as a
// connection failure: the server goes restarting with the crash as its
// error, reconnects after the backoff, the same actor answers again and
// its tools work; the requester of a request whose handler panicked gets
// exactly one reply.
func TestMCPRepairAtEveryHandler(t *testing.T) {
	// Not parallel: faultHook is global.
	die := func(t *testing.T, h *mcpHarness) {
		if _, err := h.call("mcp__t__die", `{}`); err == nil {
			t.Error("die returned no error")
		}
	}
	// add makes the server announce a changed tool list. The server
	// announces it before replying, so a repair of that announcement may
	// close the connection under the reply: either outcome is fine.
	add := func(t *testing.T, h *mcpHarness) {
		if out, err := h.call("mcp__t__add", `{}`); err != nil && !strings.Contains(err.Error(), "connection closed") || err == nil && out != "added" {
			t.Errorf("add = %q, %v", out, err)
		}
	}
	elicit := func(t *testing.T, h *mcpHarness) {
		h.sys.Send(h.child("t"), &mcpconn.ElicitationResponse{RequestID: "nobody-asked", Server: "t", Action: mcp.ElicitCancel})
	}
	handlers := []struct {
		name  string
		match func(any) bool
		// trigger makes the ready actor handle the message; nil for the
		// messages it handles while connecting.
		trigger func(t *testing.T, h *mcpHarness)
		// ask is a request the probe sends once the server is ready.
		ask any
	}{
		{"Started", isMsg[*actor.Started], nil, nil},
		{"connUp", isMsg[*mcpconn.ConnUp], nil, nil},
		{"connDown", isMsg[*mcpconn.ConnDown], die, nil},
		{"reconnect", isMsg[*mcpconn.Reconnect], die, nil},
		{"listChanged", isMsg[*mcpconn.ListChanged], add, nil},
		{"relisted", isMsg[*mcpconn.Relisted], add, nil},
		{"QueryMCP", isMsg[*mcpconn.QueryMCP], nil, &mcpconn.QueryMCP{}},
		{"GetMCPPrompt", isMsg[*mcpconn.GetMCPPrompt], nil, &mcpconn.GetMCPPrompt{ID: "p1", Server: "t", Prompt: "greet", Args: map[string]string{"name": "Ada"}}},
		{"ReadMCPResource", isMsg[*mcpconn.ReadMCPResource], nil, &mcpconn.ReadMCPResource{ID: "r1", Server: "t", URI: "test://hello"}},
		{"ElicitationResponse", isMsg[*mcpconn.ElicitationResponse], elicit, nil},
	}
	for _, hd := range handlers {
		for _, after := range []bool{false, true} {
			where := "before"
			if after {
				where = "after"
			}
			t.Run(hd.name+"/"+where, func(t *testing.T) {
				fired := injectMCPPanic(t, hd.match, after)
				spec := testSpec(t, scripted(t, "t", "serve", nil))
				spec.Backoff.GiveUp = 5
				h := newMCPHarness(t, spec)
				probePID, replies := startProbe(t, h)
				if hd.trigger != nil || hd.ask != nil {
					h.waitServer("t", event.MCPReady)
				}
				if hd.trigger != nil {
					hd.trigger(t, h)
				}
				if hd.ask != nil {
					h.sys.Send(probePID, &replyProbeAsk{to: h.child("t"), msg: hd.ask})
				}
				crashed := h.next("restarting after the crash", func(e event.Event) bool {
					u, ok := e.(*event.MCPServerUpdated)
					return ok && u.Server == "t" && u.State == event.MCPRestarting && strings.Contains(u.Error, "internal error in mcp while handling")
				}).(*event.MCPServerUpdated)
				if !fired.Load() || !strings.Contains(crashed.Error, "injected fault") || crashed.Failures < 1 {
					t.Errorf("crash update = %+v (fired %v)", crashed, fired.Load())
				}
				h.waitServer("t", event.MCPReady)

				// The same actor answers, connected again, and calls work.
				res, err := h.sys.Root().RequestFuture(h.child("t"), &mcpconn.QueryMCP{}, 5*time.Second).Result()
				must(t, err)
				if st := res.(*event.MCPStatus).Servers[0]; st.State != event.MCPReady || st.Failures < 1 || st.Pid == 0 {
					t.Errorf("status after the repair = %+v", st)
				}
				if out, err := h.call("mcp__t__echo", `{"text":"back"}`); err != nil || out != "echo: back" {
					t.Errorf("echo after the repair = %q, %v", out, err)
				}

				if hd.ask == nil {
					return
				}
				var got any
				select {
				case got = <-replies:
				case <-time.After(waitBound):
					t.Fatal("the requester got no reply")
				}
				checkCrashReply(t, hd.ask, got, after)
				select {
				case again := <-replies:
					t.Errorf("a second reply: %#v", again)
				default:
				}
			})
		}
	}
}

// checkCrashReply checks that got answers ask. A panic before the handler
// ran leaves the answer to repair, which reports the crash; after it, the
// handler's own reply stands.
func checkCrashReply(t *testing.T, ask, got any, after bool) {
	t.Helper()
	const crash = "internal error in mcp while handling"
	switch a := ask.(type) {
	case *mcpconn.QueryMCP:
		if _, ok := got.(*event.MCPStatus); !ok {
			t.Errorf("reply = %#v", got)
		}
	case *mcpconn.GetMCPPrompt:
		r, ok := got.(*mcpconn.MCPPromptResult)
		if !ok || r.ID != a.ID || r.Server != "t" || !after && !strings.Contains(r.Error, crash) {
			t.Errorf("reply = %#v", got)
		}
	case *mcpconn.ReadMCPResource:
		r, ok := got.(*mcpconn.MCPResourceResult)
		if !ok || r.ID != a.ID || r.URI != a.URI || !after && !strings.Contains(r.Error, crash) {
			t.Errorf("reply = %#v", got)
		}
	}
}

// TestMCPRepairFailsAHeldPrompt: when the handler of the prompt a
// /mcp__ command fetches panics, the held turn ends once, failed with the
// crash, without reaching the model; once reconnected the command works.
func TestMCPRepairFailsAHeldPrompt(t *testing.T) {
	// Not parallel: faultHook is global.
	injectMCPPanic(t, isMsg[*mcpconn.GetMCPPrompt], false)
	h := newMCPHarness(t, testSpec(t, scripted(t, "t", "serve", nil)))
	h.waitServer("t", event.MCPReady)
	done := h.turn("/mcp__t__greet Ada")
	if done.Status != event.StatusFailed || !strings.Contains(done.Error, "/mcp__t__greet") || !strings.Contains(done.Error, "internal error in mcp while handling *mcpconn.GetMCPPrompt") {
		t.Errorf("turn = %+v", done)
	}
	if h.srv.Count() != 0 {
		t.Error("the failed command reached the model")
	}
	h.waitServer("t", event.MCPReady)
	h.srv.Push(providertest.Turn{Text: "hi Ada"})
	if done := h.turn("/mcp__t__greet Ada"); done.Status != event.StatusOK {
		t.Errorf("turn after the repair = %+v", done)
	}
	if n := len(seenOf[*event.TurnDone](h)); n != 2 {
		t.Errorf("%d turn_done events, want 2", n)
	}
}

// TestMCPRelistDuringTurn: the server stops listing a tool while a call
// to it waits for approval. The session takes the tool out of the
// registry, yet the turn still runs the approved call with the tool it
// started with; the next turn no longer offers it.
func TestMCPRelistDuringTurn(t *testing.T) {
	t.Parallel()
	srv := scripted(t, "t", "forgetful", nil)
	// auto: the call is the ordinary permission decision's, an Ask here.
	srv.Config.Approval.Default = mcp.ApprovalAuto
	h := newMCPHarnessWith(t, testSpec(t, srv),
		agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Interactive: true})
	h.waitServer("t", event.MCPReady)
	if _, ok := h.reg.Get("mcp__t__note"); !ok {
		t.Fatalf("mcp__t__note missing from %v", h.reg.Names())
	}
	listed := len(h.status("t").Tools)
	h.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("mcp__t__note", `{"text":"x"}`)}},
		providertest.Turn{Text: "done"},
		providertest.Turn{Text: "second"},
	)
	h.sess.Run("take a note")
	ask := h.next("approval", func(e event.Event) bool { _, ok := e.(*event.ApprovalRequested); return ok }).(*event.ApprovalRequested)
	if ask.Tool != "mcp__t__note" {
		t.Fatalf("approval = %+v", ask)
	}
	if out, err := h.call("mcp__t__forget", `{}`); err != nil || out != "forgotten" {
		t.Fatalf("forget = %q, %v", out, err)
	}
	h.next("the relisted tools", func(e event.Event) bool {
		u, ok := e.(*event.MCPServerUpdated)
		return ok && u.Server == "t" && u.Tools == listed-1
	})
	if _, ok := h.reg.Get("mcp__t__note"); ok {
		t.Fatal("mcp__t__note still registered after the relist")
	}
	h.sess.Approve(&agent.ApprovalResponse{RequestID: ask.RequestID, Choice: event.ApproveOnce})
	done := h.next("turn_done", func(e event.Event) bool { _, ok := e.(*event.TurnDone); return ok }).(*event.TurnDone)
	if done.Status != event.StatusOK || done.Text != "done" {
		t.Fatalf("turn = %+v", done)
	}
	reqs := h.srv.Requests()
	if tm := toolMessages(reqs[1]); len(tm) != 1 || tm[0].Content != "noted" {
		t.Errorf("tool result = %+v", tm)
	}
	if !slices.Equal(reqs[0].Tools, reqs[1].Tools) {
		t.Errorf("tools changed within the turn: %v then %v", reqs[0].Tools, reqs[1].Tools)
	}
	if done := h.turn("again"); done.Status != event.StatusOK {
		t.Fatalf("second turn = %+v", done)
	}
	if got := h.srv.Requests()[2].Tools; slices.Contains(got, "mcp__t__note") || !slices.Contains(got, "mcp__t__forget") {
		t.Errorf("tools of the next turn: %v", got)
	}
}

// TestMCPReconnectWaitsBackoff: against a server that refuses every
// connection, the attempts are spaced by at least the backoff's lower
// bound, Base·2^(n-1)·(1-Jitter) after the n-th failure, until the
// server is marked failed after GiveUp attempts.
func TestMCPReconnectWaitsBackoff(t *testing.T) {
	t.Parallel()
	fake := startHTTPMCP(t, true)
	b := mcpconn.Backoff{Base: 100 * time.Millisecond, Max: 5 * time.Second, Jitter: 0.2, GiveUp: 4}
	spec := testSpec(t, mcpconn.MCPServer{Config: mcp.ServerConfig{Name: "h", Type: mcp.TypeHTTP, URL: fake.URL()}, Source: mcp.SourceUser})
	spec.Backoff = b
	h := newMCPHarness(t, spec)
	u := h.waitServer("h", event.MCPFailed)
	if u.Failures != b.GiveUp || !strings.Contains(u.Error, "500") {
		t.Errorf("failed update = %+v", u)
	}
	at := fake.Attempts()
	if len(at) != b.GiveUp {
		t.Fatalf("%d connection attempts, want %d", len(at), b.GiveUp)
	}
	for n := 1; n < len(at); n++ {
		low := time.Duration(float64(b.Base<<(n-1)) * (1 - b.Jitter))
		if gap := at[n].Sub(at[n-1]); gap < low {
			t.Errorf("attempt %d came %v after attempt %d, want at least %v", n+1, gap, n, low)
		}
	}
}

// TestMCPSessionOwnsTheRegistry: once the session publishes a server
// ready its tools are in the registry, a name another tool holds is
// skipped with a notice, and a server's tools stay registered (failing
// fast) while it restarts.
func TestMCPSessionOwnsTheRegistry(t *testing.T) {
	t.Parallel()
	builtin := &funcTool{name: "mcp__t__echo", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) { return "builtin", nil }}
	h := newMCPHarness(t, testSpec(t, scripted(t, "t", "serve", nil)), builtin)
	u := h.waitServer("t", event.MCPReady)
	if u.Tools != 4 {
		t.Errorf("ready update = %+v, want the four tools whose names are free", u)
	}
	if _, ok := h.reg.Get("mcp__t__hang"); !ok {
		t.Errorf("ready before its tools were registered: %v", h.reg.Names())
	}
	if out, err := h.call("mcp__t__echo", `{}`); err != nil || out != "builtin" {
		t.Errorf("the taken name was replaced: %q, %v", out, err)
	}
	var noticed bool
	for _, n := range seenOf[*event.Notice](h) {
		noticed = noticed || strings.Contains(n.Message, `tool "echo" skipped`)
	}
	if !noticed {
		t.Error("no notice about the taken name")
	}
	if st := h.status("t"); slices.Contains(st.Tools, "mcp__t__echo") || len(st.Tools) != 4 {
		t.Errorf("status tools = %v", st.Tools)
	}
	if _, err := h.call("mcp__t__die", `{}`); err == nil {
		t.Fatal("die returned no error")
	}
	h.waitServer("t", event.MCPRestarting)
	if _, ok := h.reg.Get("mcp__t__hang"); !ok {
		t.Errorf("tools dropped while restarting: %v", h.reg.Names())
	}
}

// TestMCPDestructiveAsksEveryTime: a tool the server marks destructive is
// approved by a person on every call, in yolo and under an approve mode,
// and an "always" answer covers that call only.
func TestMCPDestructiveAsksEveryTime(t *testing.T) {
	t.Parallel()
	srv := scripted(t, "t", "destructive", nil)
	srv.Config.Approval.Default = mcp.ApprovalApprove
	h := newMCPHarnessWith(t, testSpec(t, srv),
		agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Posture: permission.PostureYolo, Interactive: true})
	h.waitServer("t", event.MCPReady)
	h.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("mcp__t__wipe", `{"text":"1"}`)}},
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("mcp__t__wipe", `{"text":"2"}`)}},
		providertest.Turn{Text: "wiped twice"},
	)
	h.sess.Run("wipe it twice")
	for i, choice := range []string{event.ApproveAlways, event.ApproveOnce} {
		ask := h.next("approval", func(e event.Event) bool { _, ok := e.(*event.ApprovalRequested); return ok }).(*event.ApprovalRequested)
		if ask.Tool != "mcp__t__wipe" || !ask.OnceOnly || !strings.Contains(ask.Reason, "destructive") {
			t.Fatalf("approval %d = %+v", i+1, ask)
		}
		h.sess.Approve(&agent.ApprovalResponse{RequestID: ask.RequestID, Choice: choice})
	}
	done := h.next("turn_done", func(e event.Event) bool { _, ok := e.(*event.TurnDone); return ok }).(*event.TurnDone)
	if done.Status != event.StatusOK || done.Text != "wiped twice" {
		t.Fatalf("turn = %+v", done)
	}
	if tm := toolMessages(h.srv.Requests()[2]); len(tm) != 2 || tm[0].Content != "wiped" || tm[1].Content != "wiped" {
		t.Errorf("tool results = %+v", tm)
	}
}

// TestHeldTurnFetchOfAStoppedConnection: a connection actor that stops
// while it reads a held turn's @reference (its handler and the repair of
// that both fail) does not hold the turn: the session's ledger ends the
// fetch, the reference becomes a notice, and the prompt goes to the model
// without it.
func TestHeldTurnFetchOfAStoppedConnection(t *testing.T) {
	h := newMCPHarness(t, testSpec(t, scripted(t, "t", "serve", nil)))
	h.waitServer("t", event.MCPReady)
	killed := killActorAt(t, "mcp", func(msg any) bool {
		_, ok := msg.(*mcpconn.ReadMCPResource)
		return ok
	})
	h.srv.Push(providertest.Turn{Text: "ok"})
	done := h.turn("summarise @t:test://hello")
	<-killed
	if done.Status != event.StatusOK {
		t.Fatalf("turn = %+v", done)
	}
	reqs := h.srv.Requests()
	if got := reqs[len(reqs)-1].LastUser(); got != "summarise @t:test://hello" {
		t.Errorf("user message = %q, want the prompt without the resource", got)
	}
	var noticed bool
	for _, n := range seenOf[*event.Notice](h) {
		noticed = noticed || strings.Contains(n.Message, "could not read @t:test://hello: the connection actor") && strings.Contains(n.Message, "stopped")
	}
	if !noticed {
		t.Errorf("no notice for the reference: %+v", seenOf[*event.Notice](h))
	}
}
