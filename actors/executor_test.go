package actors

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/kernel"
	"reasonix/core/provider"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

func TestPlainAnswer(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	h.srv.Push(providertest.Turn{Text: "hello there, world", Reasoning: "think"})
	done, evs := h.turn("hi")
	if done.Status != event.StatusOK || done.Text != "hello there, world" || done.Steps != 1 {
		t.Fatalf("done = %+v", done)
	}
	var text, reasoning strings.Builder
	for _, d := range eventsOf[*event.TextDelta](evs) {
		text.WriteString(d.Text)
	}
	for _, d := range eventsOf[*event.ReasoningDelta](evs) {
		reasoning.WriteString(d.Text)
	}
	if text.String() != "hello there, world" || reasoning.String() != "think" {
		t.Errorf("deltas: text %q reasoning %q", text.String(), reasoning.String())
	}
	if len(eventsOf[*event.UsageReported](evs)) != 1 {
		t.Errorf("want one usage event, got %d", len(eventsOf[*event.UsageReported](evs)))
	}
	var last int64
	for _, e := range evs {
		if e.EventMeta().Seq <= last {
			t.Fatalf("event seq not increasing: %d after %d", e.EventMeta().Seq, last)
		}
		last = e.EventMeta().Seq
	}
	req := h.srv.Requests()[0]
	if len(req.Messages) != 2 || req.Messages[0].Content != "sys" || req.Messages[1].Content != "hi" {
		t.Errorf("request messages = %+v", req.Messages)
	}
}

func TestToolLoopEditsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644))
	tools, err := tool.NewBuiltins(tool.Env{Root: dir}, []string{"read_file", "edit_file"})
	must(t, err)
	h := newHarness(t, harnessOpts{tools: tools})
	h.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("read_file", `{"path":"a.txt"}`)}},
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("edit_file", `{"path":"a.txt","old_string":"alpha","new_string":"beta"}`)}},
		providertest.Turn{Text: "done"},
	)
	done, evs := h.turn("change alpha to beta")
	if done.Status != event.StatusOK || done.Steps != 3 || done.Text != "done" {
		t.Fatalf("done = %+v", done)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "a.txt"))
	if string(got) != "beta\n" {
		t.Errorf("file = %q", got)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if tm := toolMessages(reqs[1]); len(tm) != 1 || !strings.Contains(tm[0].Content, "alpha") {
		t.Errorf("second request tool messages = %+v", tm)
	}
	fin := eventsOf[*event.ToolFinished](evs)
	if len(fin) != 2 || fin[0].Tool != "read_file" || fin[1].Tool != "edit_file" || fin[0].IsError || fin[1].IsError {
		t.Errorf("tool events = %+v", fin)
	}
}

func TestReadOnlyBatchRunsInParallel(t *testing.T) {
	t.Parallel()
	b := newBarrier(3)
	par := &funcTool{name: "probe", readOnly: true, run: func(ctx context.Context, _ json.RawMessage) (string, error) {
		if err := b.arrive(ctx); err != nil {
			return "", err
		}
		return "met", nil
	}}
	// A short tool timeout bounds the failure case: run one at a time, the
	// first call would wait at the barrier until it times out.
	h := newHarness(t, harnessOpts{tools: []tool.Tool{par}, timeout: 5e9})
	h.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("probe", `{}`), call("probe", `{"n":2}`), call("probe", `{"n":3}`)}},
		providertest.Turn{Text: "ok"},
	)
	done, _ := h.turn("go")
	if done.Status != event.StatusOK {
		t.Fatalf("done = %+v", done)
	}
	tm := toolMessages(h.srv.Requests()[1])
	if len(tm) != 3 {
		t.Fatalf("tool messages = %+v", tm)
	}
	for _, m := range tm {
		if m.Content != "met" {
			t.Errorf("call %s: %q (calls did not run together)", m.ToolCallID, m.Content)
		}
	}
}

func TestWritersRunInOrder(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var order []string
	w := &funcTool{name: "write", run: func(_ context.Context, args json.RawMessage) (string, error) {
		var a struct{ N string }
		_ = json.Unmarshal(args, &a)
		mu.Lock()
		order = append(order, a.N)
		mu.Unlock()
		return "wrote " + a.N, nil
	}}
	h := newHarness(t, harnessOpts{tools: []tool.Tool{w}})
	var calls []providertest.ToolCall
	for _, n := range []string{"1", "2", "3", "4"} {
		calls = append(calls, call("write", `{"n":"`+n+`"}`))
	}
	h.srv.Push(providertest.Turn{ToolCalls: calls}, providertest.Turn{Text: "ok"})
	if done, _ := h.turn("go"); done.Status != event.StatusOK {
		t.Fatalf("done = %+v", done)
	}
	if strings.Join(order, "") != "1234" {
		t.Errorf("writers ran in order %v", order)
	}
	tm := toolMessages(h.srv.Requests()[1])
	for i, m := range tm {
		if want := "wrote " + string(rune('1'+i)); m.Content != want {
			t.Errorf("result %d = %q, want %q (results must follow call order)", i, m.Content, want)
		}
	}
}

func TestPanickingToolBecomesErrorResult(t *testing.T) {
	t.Parallel()
	boom := &funcTool{name: "boom", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) {
		panic("kaboom")
	}}
	h := newHarness(t, harnessOpts{tools: []tool.Tool{boom}})
	h.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("boom", `{}`), call("missing", `{}`)}},
		providertest.Turn{Text: "recovered"},
	)
	done, evs := h.turn("go")
	if done.Status != event.StatusOK || done.Text != "recovered" {
		t.Fatalf("done = %+v", done)
	}
	tm := toolMessages(h.srv.Requests()[1])
	if len(tm) != 2 || !strings.Contains(tm[0].Content, "crashed: kaboom") || !strings.Contains(tm[1].Content, `unknown tool "missing"`) {
		t.Fatalf("tool messages = %+v", tm)
	}
	for _, f := range eventsOf[*event.ToolFinished](evs) {
		if !f.IsError {
			t.Errorf("%s not flagged as error", f.Tool)
		}
	}
	// The session is still usable.
	h.srv.Push(providertest.Turn{Text: "again"})
	if done, _ := h.turn("more"); done.Status != event.StatusOK || done.Text != "again" {
		t.Fatalf("second turn = %+v", done)
	}
}

func TestCancelMidStream(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	h.srv.Push(providertest.Turn{Text: "partial answer that never ends", Stall: true, FaultAfterEvents: 2})
	h.sess.Run("go")
	h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.TextDelta); return ok })
	h.sess.Cancel()
	done, _ := h.wait()
	if done.Status != event.StatusCancelled {
		t.Fatalf("done = %+v", done)
	}
	// The next turn works and its request carries the partial text.
	h.srv.Push(providertest.Turn{Text: "fine"})
	if done, _ := h.turn("again"); done.Status != event.StatusOK {
		t.Fatalf("after cancel: %+v", done)
	}
	msgs := h.srv.Requests()[1].Messages
	if len(msgs) != 4 || msgs[2].Role != "assistant" || msgs[2].Content == "" {
		t.Errorf("messages after a cancelled stream = %+v", msgs)
	}
}

func TestCancelDuringTool(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	block := &funcTool{name: "block", run: func(ctx context.Context, _ json.RawMessage) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	}}
	h := newHarness(t, harnessOpts{tools: []tool.Tool{block}})
	h.srv.Push(providertest.Turn{ToolCalls: []providertest.ToolCall{call("block", `{}`), call("block", `{}`)}})
	h.sess.Run("go")
	<-started
	h.sess.Cancel()
	done, evs := h.wait()
	if done.Status != event.StatusCancelled {
		t.Fatalf("done = %+v", done)
	}
	fin := eventsOf[*event.ToolFinished](evs)
	if len(fin) != 2 || !fin[0].IsError || !strings.Contains(fin[1].Output, "before it ran") {
		t.Errorf("tool events = %+v", fin)
	}
	if h.srv.Count() != 1 {
		t.Errorf("a cancelled turn made %d requests", h.srv.Count())
	}
}

func TestMaxSteps(t *testing.T) {
	t.Parallel()
	echo := &funcTool{name: "echo", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) { return "x", nil }}
	h := newHarness(t, harnessOpts{tools: []tool.Tool{echo}, maxSteps: 2})
	loop := providertest.Turn{ToolCalls: []providertest.ToolCall{call("echo", `{}`)}}
	h.srv.Push(loop, loop, loop)
	done, _ := h.turn("go")
	if done.Status != event.StatusMaxSteps || done.Steps != 2 || h.srv.Count() != 2 {
		t.Fatalf("done = %+v after %d requests", done, h.srv.Count())
	}
}

func TestModelErrorFailsTurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	h.srv.Push(providertest.Turn{Status: 400, Body: `{"error":{"message":"bad request body"}}`})
	done, evs := h.turn("go")
	if done.Status != event.StatusFailed || !strings.Contains(done.Error, "400") {
		t.Fatalf("done = %+v", done)
	}
	if len(eventsOf[*event.ErrorOccurred](evs)) != 1 {
		t.Error("no error event")
	}
}

func TestTurnWhileRunningIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	h.srv.Push(providertest.Turn{Text: "slow and stalled", Stall: true, FaultAfterEvents: 2})
	h.sess.Run("first")
	h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.TextDelta); return ok })
	res, err := h.sys.Root().RequestFuture(h.sess.pid, &agent.RunTurn{Input: "second", Reject: true}, 5e9).Result()
	must(t, err)
	if tf, ok := res.(*agent.TurnFinished); !ok || tf.Status != event.StatusFailed || !strings.Contains(tf.Error, "already running") {
		t.Fatalf("second turn reply = %#v", res)
	}
	h.sess.Cancel()
	if done, _ := h.wait(); done.Status != event.StatusCancelled {
		t.Fatalf("first turn = %+v", done)
	}
}

// heldTranscript is a transcript whose barrier answers only when the test
// releases it: the message log is what the executor appended, asked
// signals each Barrier call with the number of messages appended by then.
type heldTranscript struct {
	mu      sync.Mutex
	msgs    []provider.Message
	waiting []func(error)
	asked   chan int
}

func (h *heldTranscript) Append(m provider.Message) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, m)
	return nil
}

func (h *heldTranscript) Barrier(done func(error)) {
	h.mu.Lock()
	h.waiting = append(h.waiting, done)
	n := len(h.msgs)
	h.mu.Unlock()
	h.asked <- n
}

// release answers every barrier asked so far, as the store does once the
// messages before it are on disk.
func (h *heldTranscript) release() {
	h.mu.Lock()
	waiting := h.waiting
	h.waiting = nil
	h.mu.Unlock()
	for _, done := range waiting {
		done(nil)
	}
}

func (h *heldTranscript) messages() []provider.Message {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.msgs)
}

// drain returns the events queued on sub without waiting for more.
func drain(sub *event.Subscription) []event.Event {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var evs []event.Event
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			return evs
		}
		evs = append(evs, e)
	}
}

// TestToolCallsWaitForTheTranscriptBarrier: a step's tool calls start only
// once the transcript says the assistant message asking for them is
// stored. While the barrier is held nothing of the call has started, not
// even its tool_started, though the executor has handled the messages
// that came after; once released, the call runs and the turn ends.
func TestToolCallsWaitForTheTranscriptBarrier(t *testing.T) {
	t.Parallel()
	srv := providertest.Start(t)
	p := fakeProvider(t, srv)
	var released atomic.Bool
	started := make(chan bool, 4) // whether the barrier was released when the tool started
	probe := &funcTool{name: "probe", run: func(context.Context, json.RawMessage) (string, error) {
		started <- released.Load()
		return "probed", nil
	}}
	reg, err := tool.NewRegistry(probe)
	must(t, err)
	transcript := &heldTranscript{asked: make(chan int, 4)}
	sys := kernel.NewSystem(nil)
	bus := event.NewBus()
	sub := bus.Subscribe()
	defer sub.Close()
	pid := sys.Root().Spawn(agent.ExecutorProps(sys, agent.AgentSpec{Session: "s1", Provider: p, Model: "fake-model", Tools: reg,
		System: "sys", ToolTimeout: 10 * time.Second, Bus: bus, Transcript: transcript}))
	defer func() {
		transcript.release()
		must(t, sys.Stop(pid, 5*time.Second))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		must(t, sys.Shutdown(ctx))
	}()
	srv.Push(providertest.Turn{Text: "probing", ToolCalls: []providertest.ToolCall{call("probe", `{}`)}}, providertest.Turn{Text: "done"})
	turn := sys.Root().RequestFuture(pid, &agent.RunTurn{Input: "go"}, 20*time.Second)

	var appended int
	select {
	case appended = <-transcript.asked:
	case <-started:
		t.Fatal("the tool started before the transcript was asked for a barrier")
	case <-time.After(20 * time.Second):
		t.Fatal("the executor never asked the transcript for a barrier")
	}
	// The barrier comes after the message that asks for the call.
	msgs := transcript.messages()
	if last := msgs[appended-1]; last.Role != provider.RoleAssistant || len(last.ToolCalls) != 1 || last.ToolCalls[0].Name != "probe" {
		t.Fatalf("last message before the barrier = %+v", last)
	}
	// A second turn is refused by the executor itself: its reply means
	// the handler that asked for the barrier, and anything it started,
	// is done.
	res, err := sys.Root().RequestFuture(pid, &agent.RunTurn{Input: "second"}, 5*time.Second).Result()
	must(t, err)
	if tf, ok := res.(*agent.TurnFinished); !ok || !strings.Contains(tf.Error, "already running") {
		t.Fatalf("second turn reply = %#v", res)
	}
	if got := eventsOf[*event.ToolStarted](drain(sub)); len(got) != 0 {
		t.Fatalf("tool_started before the barrier was released: %+v", got[0])
	}
	select {
	case <-started:
		t.Fatal("the tool started before the barrier was released")
	default:
	}

	released.Store(true)
	transcript.release()
	out, err := turn.Result()
	must(t, err)
	if tf, ok := out.(*agent.TurnFinished); !ok || tf.Status != event.StatusOK || tf.Text != "done" {
		t.Fatalf("turn = %#v", out)
	}
	if n := len(started); n != 1 {
		t.Fatalf("the tool started %d times, want 1", n)
	}
	if !<-started {
		t.Fatal("the tool started before the barrier was released")
	}
	if srv.Count() != 2 {
		t.Errorf("%d requests, want 2", srv.Count())
	}
}
