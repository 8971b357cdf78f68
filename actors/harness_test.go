package actors

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/kernel"
	"reasonix/core/compact"
	"reasonix/core/provider"
	"reasonix/core/provider/openai"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
	_ "reasonix/core/tool/builtin"
)

// harness is one quiet actor system with one session against the model
// fake.
type harness struct {
	t    testing.TB
	srv  *providertest.Server
	sys  *kernel.System
	bus  *event.Bus
	sub  *event.Subscription
	sess *Session
	id   string
	// reg is the session's tool registry.
	reg *tool.Registry
}

type harnessOpts struct {
	tools    []tool.Tool
	maxSteps int
	timeout  time.Duration
	server   []providertest.Option
	perms    agent.Permissions
	// fleet gives the session a scheduler; a nil NewAgent builds subagents
	// on the same fake with subTools and the system prompt "sub".
	fleet    *fleet.FleetSpec
	subTools []tool.Tool
	// grace is the tool runners' grace period (AgentSpec.ToolGrace).
	grace time.Duration
	// approvalTimeout is AgentSpec.ApprovalTimeout.
	approvalTimeout time.Duration
	// subPerms are the subagents' permissions (default: allow all).
	subPerms *agent.Permissions
	// compaction and archive are AgentSpec.Compaction and ArchiveDir.
	compaction compact.Policy
	archive    string
	// planRounds, when positive, makes the session a two-model run: a
	// planner on the same fake with model "plan-model", no tools and the
	// system prompt "plan".
	planRounds int
	// planMode starts the session planning (AgentSpec.PlanMode).
	planMode bool
	// agents, when set, builds the fleet's subagent factory on the fake.
	agents func(p provider.Provider) fleet.SubagentFactory
}

func newHarness(t testing.TB, o harnessOpts) *harness {
	t.Helper()
	srv := providertest.Start(t, o.server...)
	p := fakeProvider(t, srv)
	reg, err := tool.NewRegistry(o.tools...)
	if err != nil {
		t.Fatal(err)
	}
	sys := kernel.NewSystem(nil)
	bus := event.NewBus()
	h := &harness{t: t, srv: srv, sys: sys, bus: bus, sub: bus.Subscribe(), id: "s1", reg: reg}
	timeout := o.timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	if o.fleet != nil && o.agents != nil {
		o.fleet.NewAgent = o.agents(p)
	}
	if o.fleet != nil && o.fleet.NewAgent == nil {
		o.fleet.NewAgent = func(spec event.TaskSpec) (agent.AgentSpec, error) {
			sub, err := tool.NewRegistry(o.subTools...)
			if err != nil {
				return agent.AgentSpec{}, err
			}
			agent := agent.AgentSpec{Provider: p, Model: "fake-model", Tools: sub, System: "sub", ToolTimeout: timeout}
			if o.subPerms != nil {
				agent.Permissions = *o.subPerms
			}
			return agent, nil
		}
	}
	var planner *PlannerSpec
	if o.planRounds > 0 {
		empty, err := tool.NewRegistry()
		if err != nil {
			t.Fatal(err)
		}
		planner = &PlannerSpec{Rounds: o.planRounds, Agent: agent.AgentSpec{Provider: p, Model: "plan-model", Tools: empty,
			System: "plan", ToolTimeout: timeout}}
	}
	h.sess, err = StartSession(sys, SessionSpec{Agent: agent.AgentSpec{
		Session: h.id, Provider: p, Model: "fake-model", Tools: reg, System: "sys",
		MaxSteps: o.maxSteps, ToolTimeout: timeout, Bus: bus, Permissions: o.perms,
		ToolGrace: o.grace, ApprovalTimeout: o.approvalTimeout,
		Compaction: o.compaction, ArchiveDir: o.archive, PlanMode: o.planMode,
	}, Fleet: o.fleet, Planner: planner})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.close)
	return h
}

func (h *harness) close() {
	h.sub.Close()
	if err := h.sess.Close(5 * time.Second); err != nil {
		h.t.Errorf("close session: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.sys.Shutdown(ctx); err != nil {
		h.t.Errorf("shutdown: %v", err)
	}
}

// turn runs input and collects the events up to its TurnDone.
func (h *harness) turn(input string) (*event.TurnDone, []event.Event) {
	h.t.Helper()
	h.sess.Run(input)
	return h.wait()
}

func (h *harness) wait() (*event.TurnDone, []event.Event) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var evs []event.Event
	done, err := WaitTurn(ctx, h.sub, h.id, func(e event.Event) { evs = append(evs, e) })
	if err != nil {
		h.t.Fatalf("waiting for the turn: %v (events so far: %d)", err, len(evs))
	}
	return done, evs
}

// waitEvent reads events until match accepts one.
func (h *harness) waitEvent(match func(event.Event) bool) event.Event {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		e, err := h.sub.Next(ctx)
		if err != nil {
			h.t.Fatalf("waiting for event: %v", err)
		}
		if match(e) {
			return e
		}
	}
}

// funcTool is a test tool whose behaviour is a function.
type funcTool struct {
	name     string
	readOnly bool
	run      func(ctx context.Context, args json.RawMessage) (string, error)
}

func (f *funcTool) Name() string            { return f.name }
func (f *funcTool) Description() string     { return "test tool " + f.name }
func (f *funcTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (f *funcTool) ReadOnly() bool          { return f.readOnly }
func (f *funcTool) Execute(ctx context.Context, args json.RawMessage) (string, error) {
	return f.run(ctx, args)
}

// barrier releases its waiters only once n of them have arrived, so calls
// that are not run concurrently never get through.
type barrier struct {
	mu      sync.Mutex
	n, seen int
	open    chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, open: make(chan struct{})} }

func (b *barrier) arrive(ctx context.Context) error {
	b.mu.Lock()
	b.seen++
	if b.seen == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
		return nil
	case <-ctx.Done():
		return errors.New("barrier: the other calls never ran alongside this one")
	}
}

func eventsOf[T event.Event](evs []event.Event) []T {
	var out []T
	for _, e := range evs {
		if v, ok := e.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

func toolMessages(req providertest.Request) []providertest.Message {
	var out []providertest.Message
	for _, m := range req.Messages {
		if m.Role == "tool" {
			out = append(out, m)
		}
	}
	return out
}

func call(name, args string) providertest.ToolCall {
	return providertest.ToolCall{Name: name, Arguments: args}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fakeProvider is the OpenAI-compatible client of srv for one test, on a
// transport of its own that cleanup closes, so idle keep-alive
// connections never look like leaked goroutines; it never retries.
func fakeProvider(t testing.TB, srv *providertest.Server) provider.Provider {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	p, err := openai.New(provider.Config{Name: "fake", Kind: "openai", BaseURL: srv.URL(), Model: "fake-model",
		MaxRetries: -1, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
