package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/kernel"
	"reasonix/core/provider"
	"reasonix/core/provider/providertest"
	"reasonix/core/session"
)

// bgScenario is one random run of background agents: k tasks, the
// messages each subagent sends at each of its steps, what the parent does
// after dispatching them (messages, cancels, waits), and at most one
// crash of an executor's handler.
type bgScenario struct {
	seed int64
	k    int
	// subs[i][step] are the messages task i+1 sends at that step, before
	// its answer; lat[i][step] how long the model takes for that step.
	subs [][][]bgSend
	lat  [][]time.Duration
	// parent are the parent's steps after the fleet call, one call each.
	parent []providertest.ToolCall
	// sent lists every message of the plan: from, to and its unique text.
	sent  []bgSend
	crash *bgCrash
}

type bgSend struct{ from, to, text string }

// bgCrash is a panic in the handler of an executor (the parent's or a
// subagent's) for the nth message of type msgType, before it runs or
// after.
type bgCrash struct {
	msgType string
	after   bool
	nth     int32
}

func newBgScenario(seed int64) *bgScenario {
	r := rand.New(rand.NewSource(seed))
	s := &bgScenario{seed: seed, k: 3 + r.Intn(4)}
	n := 0
	text := func(from string) string { n++; return fmt.Sprintf("msg-%d-%d from %s", seed, n, from) }
	// A sibling is addressed by name or by id.
	target := func(self int) string {
		for {
			i := r.Intn(s.k + 1)
			switch {
			case i == s.k:
				return "parent"
			case i+1 == self:
				continue
			case r.Intn(2) == 0:
				return fmt.Sprintf("n%d", i+1)
			}
			return fmt.Sprintf("f1.%d", i+1)
		}
	}
	for i := 1; i <= s.k; i++ {
		steps := make([][]bgSend, r.Intn(3))
		lat := []time.Duration{time.Duration(r.Intn(40)) * time.Millisecond}
		for j := range steps {
			for m := 1 + r.Intn(2); m > 0; m-- {
				from := fmt.Sprintf("n%d", i)
				send := bgSend{from: from, to: target(i), text: text(from)}
				steps[j] = append(steps[j], send)
				s.sent = append(s.sent, send)
			}
			lat = append(lat, time.Duration(r.Intn(40))*time.Millisecond)
		}
		s.subs, s.lat = append(s.subs, steps), append(s.lat, lat)
	}
	for m := r.Intn(4); m > 0; m-- {
		to := fmt.Sprintf("n%d", 1+r.Intn(s.k))
		switch r.Intn(3) {
		case 0:
			send := bgSend{from: "parent", to: to, text: text("parent")}
			s.sent = append(s.sent, send)
			s.parent = append(s.parent, call("send_message", jsonArgs(map[string]any{"to": to, "text": send.text})))
		case 1:
			s.parent = append(s.parent, call("task_cancel", jsonArgs(map[string]any{"id": to})))
		default:
			s.parent = append(s.parent, call("task_wait", `{"timeout_seconds":1,"first":true}`))
		}
	}
	if r.Intn(4) != 0 {
		types := []string{"*team.Deliver", "*fleetmsg.TaskEnded", "*fleetmsg.MessageToParent", "*fleetmsg.MessageSent", "*fleetmsg.FleetResult"}
		s.crash = &bgCrash{msgType: types[r.Intn(len(types))], after: r.Intn(2) == 0, nth: 1 + r.Int31n(3)}
	}
	return s
}

func jsonArgs(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// respond is the model of the scenario: the parent dispatches the fleet,
// takes its planned steps and then answers; a subagent takes its steps
// and answers, and answers at once in a follow-up (a conversation that
// already holds an answer).
func (s *bgScenario) respond(req providertest.Request) providertest.Turn {
	steps, answered := 0, false
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			if len(m.ToolCalls) > 0 {
				steps++
			} else {
				answered = true
			}
		}
	}
	if !isSub(req) {
		switch {
		case steps == 0:
			var tasks []string
			for i := 1; i <= s.k; i++ {
				tasks = append(tasks, fmt.Sprintf(`{"prompt":"task %d","name":"n%d"}`, i, i))
			}
			return providertest.Turn{ToolCalls: []providertest.ToolCall{call("fleet", `{"background":true,"tasks":[`+strings.Join(tasks, ",")+`]}`)}}
		case steps <= len(s.parent):
			return providertest.Turn{ToolCalls: []providertest.ToolCall{s.parent[steps-1]}}
		}
		return providertest.Turn{Text: "noted"}
	}
	var i int
	fmt.Sscanf(req.FirstUser(), "task %d", &i)
	if i < 1 || i > s.k {
		return providertest.Turn{Text: "unknown task"}
	}
	plan := s.subs[i-1]
	lat := s.lat[i-1][min(steps, len(plan))]
	if answered || steps >= len(plan) {
		return providertest.Turn{Text: fmt.Sprintf("answer %d", i), Latency: lat}
	}
	var calls []providertest.ToolCall
	for _, m := range plan[steps] {
		calls = append(calls, call("send_message", jsonArgs(map[string]any{"to": m.to, "text": m.text})))
	}
	return providertest.Turn{ToolCalls: calls, Latency: lat}
}

// TestBackgroundPropertyEachThingOnce runs random scenarios of background
// agents that message each other, their parent and the parent them,
// with cancels, waits and a crash of one executor's handler at a random
// message. In each: every run's result reaches the parent exactly once;
// every message the scheduler accepted is read exactly once by the agent
// it was for (in its own conversation) or reported lost with a notice
// that quotes it; a message not accepted is read at most once; every
// conversation's requests extend each other byte for byte.
//
// It arms the process-wide fault hook, so it does not run in parallel.
func TestBackgroundPropertyEachThingOnce(t *testing.T) {
	seeds := 24
	if testing.Short() {
		seeds = 6
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		s := newBgScenario(seed)
		t.Run(fmt.Sprint(seed), func(t *testing.T) { s.check(t) })
	}
}

func (s *bgScenario) check(t *testing.T) {
	if s.crash != nil {
		var seen atomic.Int32
		cr := s.crash
		hook := func(kind string, msg any, after bool) {
			if kind == "executor" && after == cr.after && fmt.Sprintf("%T", msg) == cr.msgType && seen.Add(1) == cr.nth {
				panic("injected fault in " + cr.msgType)
			}
		}
		kernel.FaultHook.Store(&hook)
		defer kernel.FaultHook.Store(nil)
	}
	dir := t.TempDir()
	h := newHarness(t, harnessOpts{fleet: &fleet.FleetSpec{MaxRunning: 3, MaxWriters: 2, Root: "/ws", WarmWait: -1},
		server: []providertest.Option{providertest.WithResponder(s.respond)},
		agents: func(p provider.Provider) fleet.SubagentFactory { return transcriptAgents(t, p, dir) }})
	// The first turn's end, before asking whether anything runs: until
	// the session has taken the prompt, nothing does.
	_, evs := h.turn("start them")
	evs = append(evs, s.settle(t, h)...)
	kernel.FaultHook.Store(nil)
	// One more prompt: whatever waited for one is in its request. A wake
	// turn may come first; the prompt's own turn is the one to wait for.
	const last = "is everything in?"
	h.sess.Run(last)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for ours := false; ; {
		e, err := h.sub.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for the last turn: %v", err)
		}
		evs = append(evs, e)
		if st, ok := e.(*event.TurnStarted); ok {
			ours = st.Prompt == last
		}
		if done, ok := e.(*event.TurnDone); ok && ours {
			if done.Status != event.StatusOK {
				t.Fatalf("the last turn = %+v", done)
			}
			break
		}
	}
	var notices []string
	for _, n := range eventsOf[*event.Notice](evs) {
		notices = append(notices, n.Message)
	}
	// Each request extends the one before it; the fake numbers them as it
	// has read them, which for a request of a turn a crash cut off (still
	// being read when the next turn's came) is not the order they were
	// sent in. One conversation's requests are ordered by their length.
	reqs := parentRequests(h.srv)
	sort.SliceStable(reqs, func(i, j int) bool { return len(reqs[i].Messages) < len(reqs[j].Messages) })
	final := reqs[len(reqs)-1]
	defer func() {
		if !t.Failed() {
			return
		}
		t.Logf("scenario %d: %d tasks, parent steps %v, crash %+v; notices %q", s.seed, s.k, s.parent, s.crash, notices)
		for _, m := range final.Messages {
			t.Logf("parent %s: %.120q", m.Role, m.Content)
		}
		for _, e := range evs {
			t.Logf("event %s %s %.160s", e.Kind(), e.EventMeta().Task, fmt.Sprintf("%+v", e))
		}
	}()
	extendsAll(t, "parent", reqs)
	convs := s.conversations(t, dir)
	for i := 1; i <= s.k; i++ {
		sub := requestsOfTask(h.srv, fmt.Sprintf("task %d", i))
		sort.SliceStable(sub, func(a, b int) bool { return len(sub[a].Messages) < len(sub[b].Messages) })
		extendsAll(t, fmt.Sprintf("task %d", i), sub)
	}

	// Each run's result, once.
	runs := map[string]int{}
	for _, d := range eventsOf[*event.TaskDone](evs) {
		runs[strings.SplitN(d.Task, "+", 2)[0]]++
	}
	for i := 1; i <= s.k; i++ {
		id := fmt.Sprintf("f1.%d", i)
		head := fmt.Sprintf("[Background task %s (n%d) ", id, i)
		// A result is a user message of its own, or part of a task_wait's.
		got := 0
		for _, m := range final.Messages {
			switch {
			case m.Role == "user" && strings.HasPrefix(m.Content, head):
				got++
			case m.Role == "tool" && m.Name == "task_wait":
				got += strings.Count("\n"+m.Content, "\n"+head)
			}
		}
		if got != runs[id] || got == 0 {
			t.Errorf("%s: %d runs ended, %d results in the parent's conversation", id, runs[id], got)
		}
	}

	// Each message: read once where it was sent, or reported lost.
	accepted := s.acceptedMessages(h.srv, final)
	for _, m := range s.sent {
		read := 0
		switch {
		case m.to == "parent":
			read = countUser(final.Messages, m.text)
		default:
			read = countUser(convs[strings.TrimPrefix(strings.TrimPrefix(m.to, "n"), "f1.")], m.text)
		}
		lost := false
		for _, n := range notices {
			lost = lost || strings.Contains(n, m.text)
		}
		switch result := accepted[m.text]; {
		case strings.HasPrefix(result, "Sent") && read == 1 && !lost:
		case strings.HasPrefix(result, "Sent") && read == 0 && lost:
		case !strings.HasPrefix(result, "Sent") && read <= 1:
		default:
			t.Errorf("%q (%s to %s): send_message said %q; read %d times; reported lost: %v", m.text, m.from, m.to, result, read, lost)
		}
	}
}

// settle waits until the session has no turn, no background run and
// nothing undelivered; a result left for the next prompt (a turn that
// failed does not wake the session) gets one.
func (s *bgScenario) settle(t *testing.T, h *harness) []event.Event {
	t.Helper()
	var evs []event.Event
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		st, err := h.sess.Background(2 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		busy, err := h.sess.Busy(2 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Running) == 0 && !busy {
			return evs
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if e, err := h.sub.Next(ctx); err == nil {
			evs = append(evs, e)
		}
		cancel()
	}
	st, _ := h.sess.Background(2 * time.Second)
	t.Fatalf("scenario %d never settled: background %+v", s.seed, st)
	return nil
}

// conversations reads each subagent's transcript, by task number.
func (s *bgScenario) conversations(t *testing.T, dir string) map[string][]providertest.Message {
	t.Helper()
	out := map[string][]providertest.Message{}
	paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(paths) == 0 {
		entries, _ := os.ReadDir(dir)
		t.Fatalf("no transcripts in %s: %v %v", dir, err, entries)
	}
	for _, p := range paths {
		hd, msgs, _, err := session.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		n := strings.TrimPrefix(strings.SplitN(hd.Task, "+", 2)[0], "f1.")
		for _, m := range msgs {
			out[n] = append(out[n], providertest.Message{Role: string(m.Role), Content: m.Content})
		}
	}
	return out
}

// acceptedMessages maps each message's text to the result its
// send_message call got, as the sender's conversation shows it ("" when
// the sender never saw one).
func (s *bgScenario) acceptedMessages(srv *providertest.Server, parent providertest.Request) map[string]string {
	out := map[string]string{}
	read := func(msgs []providertest.Message) {
		args := map[string]string{}
		for _, m := range msgs {
			for _, c := range m.ToolCalls {
				var a struct{ Text string }
				if c.Name == "send_message" && json.Unmarshal([]byte(c.Arguments), &a) == nil {
					args[c.ID] = a.Text
				}
			}
			if m.Role == "tool" && args[m.ToolCallID] != "" {
				out[args[m.ToolCallID]] = m.Content
			}
		}
	}
	read(parent.Messages)
	for _, r := range srv.Requests() {
		if isSub(r) {
			read(r.Messages)
		}
	}
	return out
}

// countUser counts the user messages of msgs that hold text.
func countUser(msgs []providertest.Message, text string) int {
	n := 0
	for _, m := range msgs {
		if m.Role == "user" {
			n += strings.Count(m.Content, text)
		}
	}
	return n
}
