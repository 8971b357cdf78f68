package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/actors/agent"
	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/kernel"
	"reasonix/core/provider"
	"reasonix/core/provider/openai"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

// budgetFleet is a harness whose subagents call the read-only tool
// "look" on every turn (saying "progress <n>") until their fifth, where
// they answer; latency is added to every subagent turn.
func budgetFleet(t *testing.T, fleetArgs string, latency time.Duration) (*harness, func() string) {
	t.Helper()
	look := &funcTool{name: "look", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) { return "seen", nil }}
	h := newHarness(t, harnessOpts{fleet: &fleet.FleetSpec{MaxRunning: 8, MaxWriters: 2, Root: "/ws"}, subTools: []tool.Tool{look},
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				n := len(toolMessages(req))
				if n >= 4 {
					return providertest.Turn{Latency: latency, Text: "final answer to " + req.FirstUser()}
				}
				// Each turn looks somewhere new, so no turn repeats the last.
				return providertest.Turn{Latency: latency, Text: fmt.Sprintf("progress %d on %s", n+1, req.FirstUser()),
					ToolCalls: []providertest.ToolCall{call("look", fmt.Sprintf(`{"at":%d}`, n+1))}}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{call("fleet", fleetArgs)}}
			}
			return providertest.Turn{Text: "parent done"}
		})}})
	result := func() string {
		var final providertest.Request
		for _, r := range h.srv.Requests() {
			if !isSub(r) {
				final = r
			}
		}
		if msgs := toolMessages(final); len(msgs) == 1 {
			return msgs[0].Content
		}
		t.Fatal("parent got no fleet result")
		return ""
	}
	return h, result
}

// holdOverBudget makes the scheduler handle the over-budget report of
// each task in turns (task id to its turn ceiling) only after the task's
// next model attempt: a request the endpoint answered (one usage past the
// ceiling) or one refused before it left (the task's error event). Without
// it the stop usually lands first and cancels the attempt, and a task that
// would have sent a request past its ceiling is not caught.
func holdOverBudget(t *testing.T, bus *event.Bus, turns map[string]int) {
	t.Helper()
	// attempted is the watcher's own; the hook waits on waits.
	attempted := map[string]chan struct{}{}
	waits := map[string]<-chan struct{}{}
	for id := range turns {
		attempted[id] = make(chan struct{})
		waits[id] = attempted[id]
	}
	sub := bus.Subscribe()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		usage := map[string]int{}
		signal := func(id string) {
			if ch := attempted[id]; ch != nil {
				close(ch)
				attempted[id] = nil
			}
		}
		for {
			e, err := sub.Next(context.Background())
			if err != nil {
				return
			}
			id := e.EventMeta().Task
			switch e.(type) {
			case *event.UsageReported:
				if usage[id]++; usage[id] > turns[id] {
					signal(id)
				}
			case *event.ErrorOccurred:
				signal(id)
			}
		}
	}()
	var late atomic.Bool
	hook := func(kind string, msg any, after bool) {
		m, ok := msg.(*fleet.TaskOverBudget)
		if kind != "scheduler" || after || !ok || waits[m.TaskID] == nil {
			return
		}
		timer := time.NewTimer(10 * time.Second)
		defer timer.Stop()
		select {
		case <-waits[m.TaskID]:
		case <-timer.C:
			late.Store(true)
		}
	}
	kernel.FaultHook.Store(&hook)
	t.Cleanup(func() {
		kernel.FaultHook.Store(nil)
		sub.Close()
		<-watched
		if late.Load() {
			t.Error("a task over its budget made no further attempt")
		}
	})
}

// subRequests counts the fake's requests per subagent task prompt.
func subRequests(h *harness) map[string]int {
	n := map[string]int{}
	for _, r := range h.srv.Requests() {
		if isSub(r) {
			n[r.FirstUser()]++
		}
	}
	return n
}

// TestFleetBudgetStopsOnlyTheTasksAtTheirCeiling: a task at its turn
// ceiling ends over_budget with its partial answer and asks for no turn
// past it, even when its next attempt comes before the scheduler's stop
// lands; its siblings run to the end. The test makes that the order every
// time: the scheduler handles a task's over-budget report only once the
// task has made its next attempt (holdOverBudget), so only the metered
// provider stands between that attempt and the endpoint. It sets
// faultHook, so it must not run in parallel.
func TestFleetBudgetStopsOnlyTheTasksAtTheirCeiling(t *testing.T) {
	args := `{"tasks":[{"prompt":"task 1"},{"prompt":"task 2","budget":{"turns":2}},{"prompt":"task 3","budget":{"turns":3}},{"prompt":"task 4"}]}`
	h, result := budgetFleet(t, args, 0)
	holdOverBudget(t, h.bus, map[string]int{"f1.2": 2, "f1.3": 3})
	done, evs := h.turn("fan out")
	if done.Status != event.StatusOK {
		t.Fatalf("parent turn: %+v", done)
	}
	res := result()
	if !strings.HasPrefix(res, "4 tasks: 2 ok, 0 failed, 0 timed out, 0 cancelled, 2 over budget") {
		t.Fatalf("fleet result:\n%s", res)
	}
	for _, want := range []string{
		"(f1.2): over_budget", "Partial answer: stopped at its turns budget.\nprogress 2 on task 2",
		"(f1.3): over_budget", "progress 3 on task 3",
		"final answer to task 1", "final answer to task 4",
	} {
		if !strings.Contains(res, want) {
			t.Errorf("fleet result lacks %q:\n%s", want, res)
		}
	}
	// A stopped task asks for no turn past its ceiling; its siblings run
	// to the end.
	if n := subRequests(h); n["task 1"] != 5 || n["task 2"] != 2 || n["task 3"] != 3 || n["task 4"] != 5 {
		t.Errorf("requests per task: %v", n)
	}
	byTask := map[string]*event.TaskDone{}
	for _, d := range eventsOf[*event.TaskDone](evs) {
		byTask[d.Task] = d
	}
	if d := byTask["f1.2"]; d == nil || d.Status != event.TaskOverBudget || d.OverBudget != "turns" || d.Budget == nil || d.Budget.Turns != 2 || d.Turns != 2 {
		t.Errorf("task_done of f1.2: %+v", d)
	}
	if d := byTask["f1.1"]; d == nil || d.Status != event.TaskOK || d.Budget != nil || d.Turns != 5 {
		t.Errorf("task_done of f1.1: %+v", d)
	}
}

func TestFleetBudgetIsSharedEvenly(t *testing.T) {
	t.Parallel()
	args := `{"budget":{"turns":9},"tasks":[{"prompt":"task 1"},{"prompt":"task 2"},{"prompt":"task 3","budget":{"turns":5}}]}`
	h, result := budgetFleet(t, args, 0)
	done, evs := h.turn("fan out")
	if done.Status != event.StatusOK {
		t.Fatalf("parent turn: %+v", done)
	}
	// Task 3 keeps its own 5; the other two share the 4 left.
	started := map[string]int{}
	for _, s := range eventsOf[*event.TaskStarted](evs) {
		if s.Budget != nil {
			started[s.Task] = s.Budget.Turns
		}
	}
	if started["f1.1"] != 2 || started["f1.2"] != 2 || started["f1.3"] != 5 {
		t.Errorf("allotted turns: %v", started)
	}
	res := result()
	if !strings.HasPrefix(res, "3 tasks: 1 ok, 0 failed, 0 timed out, 0 cancelled, 2 over budget") {
		t.Errorf("fleet result:\n%s", res)
	}
}

func TestFleetBudgetSeconds(t *testing.T) {
	t.Parallel()
	args := `{"tasks":[{"prompt":"task 1","budget":{"seconds":1}},{"prompt":"task 2"}]}`
	h, result := budgetFleet(t, args, 300*time.Millisecond)
	done, _ := h.turn("fan out")
	if done.Status != event.StatusOK {
		t.Fatalf("parent turn: %+v", done)
	}
	res := result()
	if !strings.Contains(res, "(f1.1): over_budget") || !strings.Contains(res, "stopped at its seconds budget") ||
		!strings.Contains(res, "final answer to task 2") {
		t.Errorf("fleet result:\n%s", res)
	}
}

func TestParseDelegationBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, tool, args string
		want             []event.Budget
		fleet            event.Budget
		err              string
	}{
		{name: "task", tool: team.ToolTask, args: `{"prompt":"p","budget":{"tokens":100,"turns":2,"seconds":30}}`,
			want: []event.Budget{{Tokens: 100, Turns: 2, Seconds: 30}}},
		{name: "fleet", tool: team.ToolFleet, args: `{"budget":{"tokens":1000},"tasks":[{"prompt":"a"},{"prompt":"b","budget":{"turns":1}}]}`,
			want: []event.Budget{{}, {Turns: 1}}, fleet: event.Budget{Tokens: 1000}},
		{name: "negative", tool: team.ToolTask, args: `{"prompt":"p","budget":{"turns":-1}}`, err: "positive"},
		{name: "unknown field", tool: team.ToolTask, args: `{"prompt":"p","budget":{"dollars":1}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			specs, err := team.ParseDelegation(tc.tool, tc.args, "f1")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range specs {
				if i < len(tc.want) && (s.Budget != tc.want[i] || s.FleetBudget != tc.fleet) {
					t.Errorf("task %d: budget %+v fleet %+v", i+1, s.Budget, s.FleetBudget)
				}
			}
		})
	}
}

// TestFleetBudgetCost prices the subagents' model and gives one task a
// cost ceiling its first turn exceeds: it ends over_budget on cost, its
// sibling without one runs to the end, and both report what they cost.
func TestFleetBudgetCost(t *testing.T) {
	t.Parallel()
	var url string // set before the first task starts
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	spec := &fleet.FleetSpec{MaxRunning: 4, MaxWriters: 1, Root: "/ws", NewAgent: func(event.TaskSpec) (agent.AgentSpec, error) {
		p, err := openai.New(provider.Config{Name: "fake", Kind: "openai", BaseURL: url, Model: "fake-model", MaxRetries: -1,
			HTTPClient: &http.Client{Transport: tr}})
		if err != nil {
			return agent.AgentSpec{}, err
		}
		look := &funcTool{name: "look", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) { return "seen", nil }}
		reg, err := tool.NewRegistry(look)
		if err != nil {
			return agent.AgentSpec{}, err
		}
		// One unit of cost per thousand tokens.
		return agent.AgentSpec{Provider: &fleet.PricedProvider{Provider: p, Cost: event.Price{Input: 1000, Output: 1000}}, Model: "fake-model",
			Tools: reg, System: "sub", ToolTimeout: 10 * time.Second}, nil
	}}
	args := `{"tasks":[{"prompt":"task 1","budget":{"cost":0.01}},{"prompt":"task 2"}]}`
	h := newHarness(t, harnessOpts{fleet: spec, server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if isSub(req) {
			if n := len(toolMessages(req)); n < 2 {
				return providertest.Turn{Text: fmt.Sprintf("progress %d", n+1), ToolCalls: []providertest.ToolCall{call("look", `{}`)}}
			}
			return providertest.Turn{Text: "final answer to " + req.FirstUser()}
		}
		if len(toolMessages(req)) == 0 {
			return providertest.Turn{ToolCalls: []providertest.ToolCall{call("fleet", args)}}
		}
		return providertest.Turn{Text: "parent done"}
	})}})
	url = h.srv.URL()
	done, evs := h.turn("fan out")
	if done.Status != event.StatusOK {
		t.Fatalf("parent turn: %+v", done)
	}
	byTask := map[string]*event.TaskDone{}
	for _, d := range eventsOf[*event.TaskDone](evs) {
		byTask[d.Task] = d
	}
	if d := byTask["f1.1"]; d == nil || d.Status != event.TaskOverBudget || d.OverBudget != "cost" || d.Cost < 0.01 || d.Turns != 1 {
		t.Errorf("task_done of f1.1: %+v", d)
	}
	if d := byTask["f1.2"]; d == nil || d.Status != event.TaskOK || d.Cost <= byTask["f1.1"].Cost {
		t.Errorf("task_done of f1.2: %+v", d)
	}
}

// TestFleetBudgetTokens gives one task a token ceiling its first turn's
// usage reaches exactly: it ends over_budget on tokens with that turn's
// text as its partial answer and asks for no second turn, while its
// sibling without one runs to the end.
func TestFleetBudgetTokens(t *testing.T) {
	t.Parallel()
	look := &funcTool{name: "look", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) { return "seen", nil }}
	args := `{"tasks":[{"prompt":"task 1","budget":{"tokens":1000}},{"prompt":"task 2"}]}`
	h := newHarness(t, harnessOpts{fleet: &fleet.FleetSpec{MaxRunning: 4, MaxWriters: 1, Root: "/ws"}, subTools: []tool.Tool{look},
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				// Every subagent turn costs 700 + 300 tokens.
				usage := &providertest.Usage{PromptTokens: 700, CompletionTokens: 300}
				if n := len(toolMessages(req)); n < 4 {
					return providertest.Turn{Usage: usage, Text: fmt.Sprintf("progress %d on %s", n+1, req.FirstUser()),
						ToolCalls: []providertest.ToolCall{call("look", fmt.Sprintf(`{"at":%d}`, n+1))}}
				}
				return providertest.Turn{Usage: usage, Text: "final answer to " + req.FirstUser()}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{call("fleet", args)}}
			}
			return providertest.Turn{Text: "parent done"}
		})}})
	done, evs := h.turn("fan out")
	if done.Status != event.StatusOK {
		t.Fatalf("parent turn: %+v", done)
	}
	byTask := map[string]*event.TaskDone{}
	for _, d := range eventsOf[*event.TaskDone](evs) {
		byTask[d.Task] = d
	}
	if d := byTask["f1.1"]; d == nil || d.Status != event.TaskOverBudget || d.OverBudget != "tokens" || d.Turns != 1 ||
		d.Budget == nil || d.Budget.Tokens != 1000 || d.Usage.PromptTokens+d.Usage.CompletionTokens != 1000 {
		t.Errorf("task_done of f1.1: %+v", d)
	}
	if d := byTask["f1.2"]; d == nil || d.Status != event.TaskOK || d.Turns != 5 {
		t.Errorf("task_done of f1.2: %+v", d)
	}
	if n := subRequests(h); n["task 1"] != 1 || n["task 2"] != 5 {
		t.Errorf("requests per task: %v", n)
	}
	var final providertest.Request
	for _, r := range h.srv.Requests() {
		if !isSub(r) {
			final = r
		}
	}
	tm := toolMessages(final)
	if len(tm) != 1 {
		t.Fatalf("parent got %d tool results", len(tm))
	}
	res := tm[0].Content
	for _, want := range []string{
		"2 tasks: 1 ok, 0 failed, 0 timed out, 0 cancelled, 1 over budget",
		"(f1.1): over_budget", "Partial answer: stopped at its tokens budget.\nprogress 1 on task 1",
		"final answer to task 2",
	} {
		if !strings.Contains(res, want) {
			t.Errorf("fleet result lacks %q:\n%s", want, res)
		}
	}
}
