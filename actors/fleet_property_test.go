package actors

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
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

var (
	fleetSeed  = flag.Uint64("fleet.seed", 0, "run TestFleetPropertyExactlyOnce for this one seed only (replay)")
	fleetIters = flag.Int("fleet.iters", 40, "number of seeds TestFleetPropertyExactlyOnce runs")
	fleetLog   = flag.Bool("fleet.log", false, "log the actors of TestFleetPropertyExactlyOnce to stderr")
)

// TestFleetPropertyExactlyOnce runs random fleets through a real session
// whose subagents crash, lose their stream, stall, block, ignore their
// context, fail to start, get cancelled one by one or with the whole turn,
// time out, stop slowly, and whose scheduler may itself panic in a handler.
// Whatever the mix, every task ends exactly once: the parent's model sees
// every task once, in order, with a terminal status; each task has one
// task_done and nothing of it follows on the bus; the fleet's result comes
// only after every subagent of the fleet has stopped; and the run and
// writer caps always hold.
//
// It sets faultHook, so it must not run in parallel. A failure names its
// seed; replay it with -run 'TestFleetPropertyExactlyOnce/seed=N$'
// -fleet.seed=N.
func TestFleetPropertyExactlyOnce(t *testing.T) {
	t.Cleanup(func() { kernel.FaultHook.Store(nil) })
	seeds := make([]uint64, 0, *fleetIters)
	if *fleetSeed != 0 {
		seeds = append(seeds, *fleetSeed)
	} else {
		n := *fleetIters
		if testing.Short() {
			n = min(n, 10)
		}
		for i := 1; i <= n; i++ {
			seeds = append(seeds, uint64(i))
		}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			sc := newFleetScenario(seed)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("scenario: %s", sc)
					t.Logf("replay: go test -race -run 'TestFleetPropertyExactlyOnce/seed=%d$' ./actors/ -fleet.seed=%d", seed, seed)
				}
			})
			runFleetProperty(t, sc)
		})
	}
}

// taskMode is how one subagent behaves.
type taskMode string

const (
	modeOK       taskMode = "ok"        // answers at once
	modeSteps    taskMode = "steps"     // calls a quick tool, then answers
	modeCrash    taskMode = "crash"     // its tool panics
	modeCut      taskMode = "cut"       // its model stream breaks mid-answer
	modeStall    taskMode = "stall"     // its model stream stalls until it is stopped
	modeBlock    taskMode = "block"     // its tool blocks until its context ends
	modeStubborn taskMode = "stubborn"  // its tool ignores its context
	modeNoStart  taskMode = "nostart"   // its factory fails
	modePanic    taskMode = "factpanic" // its factory panics on the scheduler's mailbox
)

// hung says the mode never ends by itself: only a cancel, a task timeout
// or (but for a stall) a tool timeout stops it.
func (m taskMode) hung() bool { return m == modeStall || m == modeBlock || m == modeStubborn }

type scenarioTask struct {
	mode       taskMode
	writer     bool
	paths      []string // claims relative to the root; empty for the whole workspace
	latency    time.Duration
	chunkDelay time.Duration
	cutAfter   int
	// slowStop delays the subagent's transcript Close, so the subagent
	// takes that long to stop.
	slowStop time.Duration
	// cancelOn, when set, cancels the task delay after its event of that
	// kind ("task_queued" or "task_started") is seen.
	cancelOn    string
	cancelDelay time.Duration
}

// schedulerFault is a panic injected into one scheduler handler.
type schedulerFault struct {
	msgType string
	nth     int32
	after   bool
	seen    atomic.Int32
	fired   atomic.Bool
}

type fleetScenario struct {
	seed       uint64
	tasks      []scenarioTask
	maxRunning int
	maxWriters int
	taskTO     time.Duration
	reapGrace  time.Duration
	toolGrace  time.Duration
	toolTO     time.Duration
	// cancelTurn, when set, cancels the parent's turn that long after the
	// first task_queued.
	cancelTurn time.Duration
	fault      *schedulerFault
}

func (s *fleetScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %d tasks, max running %d, max writers %d, task timeout %s, reap grace %s, tool grace %s, tool timeout %s, turn cancel %s",
		s.seed, len(s.tasks), s.maxRunning, s.maxWriters, s.taskTO, s.reapGrace, s.toolGrace, s.toolTO, s.cancelTurn)
	if f := s.fault; f != nil {
		fmt.Fprintf(&b, ", scheduler panic %s %s #%d (fired %v)", map[bool]string{false: "before", true: "after"}[f.after], f.msgType, f.nth, f.fired.Load())
	}
	for i, t := range s.tasks {
		fmt.Fprintf(&b, "\n  task %d: %s writer=%v paths=%v slowStop=%s", i+1, t.mode, t.writer, t.paths, t.slowStop)
		if t.cancelOn != "" {
			fmt.Fprintf(&b, " cancel %s after %s", t.cancelDelay, t.cancelOn)
		}
	}
	return b.String()
}

// scheduledMessages are the scheduler handlers a panic is injected into;
// a subagent's TurnFinished and Terminated, the ones a task's end hangs on,
// are drawn more often.
var scheduledMessages = []string{
	"*fleetmsg.SubmitFleet", "*agent.TurnFinished", "*agent.TurnFinished", "*actor.Terminated", "*actor.Terminated",
	"*fleetmsg.CancelTask", "*fleetmsg.CancelFleet", "*fleet.fleetTick", "*fleet.reapTask", "*fleetmsg.QueryFleet",
}

func newFleetScenario(seed uint64) *fleetScenario {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	ms := func(lo, hi int) time.Duration { return time.Duration(lo+r.IntN(hi-lo+1)) * time.Millisecond }
	modes := []taskMode{modeOK, modeOK, modeOK, modeSteps, modeSteps, modeCrash, modeCut, modeStall, modeBlock, modeStubborn, modeNoStart, modePanic}
	claims := [][]string{{"a"}, {"b"}, {"a/x"}, {"c", "b/y"}, {"d"}, {"e"}, nil}
	s := &fleetScenario{
		seed:       seed,
		maxRunning: 1 + r.IntN(4),
		maxWriters: 1 + r.IntN(3),
		reapGrace:  ms(30, 300),
		toolGrace:  ms(20, 120),
		toolTO:     5 * time.Second,
	}
	if r.IntN(10) < 3 {
		s.toolTO = ms(60, 150)
	}
	n := 2 + r.IntN(11)
	hung := false
	for range n {
		t := scenarioTask{mode: modes[r.IntN(len(modes))], latency: ms(0, 8), chunkDelay: ms(0, 3), cutAfter: 2 + r.IntN(4)}
		if r.IntN(10) < 4 {
			t.writer, t.paths = true, claims[r.IntN(len(claims))]
		}
		if r.IntN(2) == 0 {
			t.slowStop = ms(1, 15)
		}
		if r.IntN(10) < 2 {
			t.cancelOn = []string{"task_queued", "task_started"}[r.IntN(2)]
			t.cancelDelay = ms(0, 60)
		}
		hung = hung || t.mode == modeStall || t.mode.hung() && s.toolTO > time.Second
		s.tasks = append(s.tasks, t)
	}
	if hung && r.IntN(10) < 7 || !hung && r.IntN(10) < 3 {
		s.taskTO = ms(120, 450)
	}
	if r.IntN(10) < 2 || hung && s.taskTO == 0 {
		// Without a timeout, the cancel of the turn is what ends a hung task.
		s.cancelTurn = ms(0, 200)
	}
	if r.IntN(2) == 0 {
		s.fault = &schedulerFault{msgType: scheduledMessages[r.IntN(len(scheduledMessages))], nth: int32(1 + r.IntN(max(1, n/2))), after: r.IntN(2) == 0}
	}
	return s
}

// fleetRecorder is what the test observes outside the bus.
type fleetRecorder struct {
	bus *event.Bus
	mu  sync.Mutex
	// stops holds, per task, the bus sequence number current when each of
	// its subagents finished stopping; factories counts factory calls.
	stops     map[string][]int64
	factories map[string]int
	// fleetTool holds the fleet call results the parent's transcript got.
	fleetTool  []string
	violations []string
}

func (r *fleetRecorder) violate(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.violations = append(r.violations, fmt.Sprintf(format, args...))
}

// subTranscript is a subagent's transcript; its Close, called when the
// subagent's executor stops, records when that was.
type subTranscript struct {
	rec  *fleetRecorder
	task string
	slow time.Duration
}

func (s *subTranscript) Append(provider.Message) error { return nil }

func (s *subTranscript) Close() error {
	time.Sleep(s.slow)
	seq := s.rec.bus.LastSeq()
	s.rec.mu.Lock()
	s.rec.stops[s.task] = append(s.rec.stops[s.task], seq)
	s.rec.mu.Unlock()
	return nil
}

// parentTranscript keeps the fleet call's result as the parent records it.
type parentTranscript struct{ rec *fleetRecorder }

func (p *parentTranscript) Append(m provider.Message) error {
	if m.Role == provider.RoleTool && m.Name == team.ToolFleet {
		p.rec.mu.Lock()
		p.rec.fleetTool = append(p.rec.fleetTool, m.Content)
		p.rec.mu.Unlock()
	}
	return nil
}

var taskPrompt = regexp.MustCompile(`^task (\d+) mode=`)

func (s *fleetScenario) taskOf(prompt string) (int, scenarioTask, bool) {
	m := taskPrompt.FindStringSubmatch(prompt)
	if m == nil {
		return 0, scenarioTask{}, false
	}
	i, _ := strconv.Atoi(m[1])
	if i < 1 || i > len(s.tasks) {
		return 0, scenarioTask{}, false
	}
	return i, s.tasks[i-1], true
}

func (s *fleetScenario) fleetCall() providertest.ToolCall {
	var tasks []string
	for i, t := range s.tasks {
		x := ""
		if t.writer {
			p, _ := json.Marshal(t.paths)
			if t.paths == nil {
				p = []byte("[]")
			}
			x = `,"write_paths":` + string(p)
		}
		tasks = append(tasks, fmt.Sprintf(`{"prompt":"task %d mode=%s"%s}`, i+1, t.mode, x))
	}
	return call("fleet", `{"tasks":[`+strings.Join(tasks, ",")+`]}`)
}

// respond is the model fake: the parent asks for the fleet, then ends;
// each subagent acts out its mode.
func (s *fleetScenario) respond(req providertest.Request) providertest.Turn {
	if !isSub(req) {
		if len(toolMessages(req)) == 0 {
			return providertest.Turn{ToolCalls: []providertest.ToolCall{s.fleetCall()}}
		}
		return providertest.Turn{Text: "parent done"}
	}
	prompt := req.FirstUser()
	_, t, ok := s.taskOf(prompt)
	if !ok {
		return providertest.Turn{Text: "unknown task " + prompt}
	}
	turn := providertest.Turn{Latency: t.latency, ChunkDelay: t.chunkDelay, ChunkBytes: 4}
	if len(toolMessages(req)) > 0 {
		turn.Text = "done " + prompt
		return turn
	}
	tools := map[taskMode]string{modeSteps: "quick", modeCrash: "boom", modeBlock: "block", modeStubborn: "stubborn"}
	switch t.mode {
	case modeCut:
		turn.Text, turn.CutAfterEvents = "an answer that breaks off in the middle", t.cutAfter
	case modeStall:
		turn.Text, turn.Stall, turn.FaultAfterEvents = "stalling", true, 2
	default:
		if name, ok := tools[t.mode]; ok {
			turn.ToolCalls = []providertest.ToolCall{call(name, `{}`)}
		} else {
			turn.Text = "answer to " + prompt
		}
	}
	return turn
}

func runFleetProperty(t *testing.T, sc *fleetScenario) {
	release := make(chan struct{}) // lets the stubborn tools return at last
	var releaseOnce sync.Once
	releaseAll := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(releaseAll)

	srv := providertest.Start(t, providertest.WithResponder(sc.respond))
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	p, err := openai.New(provider.Config{Name: "fake", Kind: "openai", BaseURL: srv.URL(), Model: "fake-model",
		MaxRetries: -1, HTTPClient: &http.Client{Transport: tr}})
	must(t, err)
	bus := event.NewBus()
	sub := bus.Subscribe()
	defer sub.Close()
	rec := &fleetRecorder{bus: bus, stops: map[string][]int64{}, factories: map[string]int{}}

	subTools := []tool.Tool{
		&funcTool{name: "quick", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) { return "quick result", nil }},
		&funcTool{name: "boom", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) { panic("subagent tool exploded") }},
		&funcTool{name: "block", readOnly: true, run: func(ctx context.Context, _ json.RawMessage) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}},
		&funcTool{name: "stubborn", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) {
			<-release
			return "too late", nil
		}},
	}
	newAgent := func(spec event.TaskSpec) (agent.AgentSpec, error) {
		rec.mu.Lock()
		rec.factories[spec.ID]++
		rec.mu.Unlock()
		_, task, ok := sc.taskOf(spec.Prompt)
		if !ok {
			return agent.AgentSpec{}, fmt.Errorf("unknown task %q", spec.Prompt)
		}
		switch task.mode {
		case modeNoStart:
			return agent.AgentSpec{}, fmt.Errorf("no such profile")
		case modePanic:
			panic("subagent factory exploded")
		}
		reg, err := tool.NewRegistry(subTools...)
		if err != nil {
			return agent.AgentSpec{}, err
		}
		return agent.AgentSpec{Provider: p, Model: "fake-model", Tools: reg, System: "sub", ToolTimeout: sc.toolTO,
			ToolGrace: sc.toolGrace, Transcript: &subTranscript{rec: rec, task: spec.ID, slow: task.slowStop}}, nil
	}

	if f := sc.fault; f != nil {
		hook := func(kind string, msg any, after bool) {
			if kind != "scheduler" || after != f.after || fmt.Sprintf("%T", msg) != f.msgType {
				return
			}
			if f.seen.Add(1) == f.nth && f.fired.CompareAndSwap(false, true) {
				panic("injected scheduler fault")
			}
		}
		kernel.FaultHook.Store(&hook)
	}
	defer kernel.FaultHook.Store(nil)

	reg, err := tool.NewRegistry()
	must(t, err)
	var logger *slog.Logger
	if *fleetLog {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	sys := kernel.NewSystem(logger)
	const id = "s1"
	sess, err := StartSession(sys, SessionSpec{
		Agent: agent.AgentSpec{Session: id, Provider: p, Model: "fake-model", Tools: reg, System: "sys",
			ToolTimeout: 10 * time.Second, Bus: bus, Transcript: &parentTranscript{rec: rec}},
		Fleet: &fleet.FleetSpec{MaxRunning: sc.maxRunning, MaxWriters: sc.maxWriters, Root: "/ws",
			TaskTimeout: sc.taskTO, Grace: sc.reapGrace, NewAgent: newAgent},
	})
	must(t, err)
	stopped := false
	stopAll := func() {
		if stopped {
			return
		}
		stopped = true
		releaseAll()
		if err := sess.Close(5 * time.Second); err != nil {
			t.Errorf("close session: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}
	defer stopAll()

	// The status poller samples the scheduler's own counters while the
	// fleet runs.
	pollStop := make(chan struct{})
	var pollWG sync.WaitGroup
	pollWG.Add(1)
	go func() {
		defer pollWG.Done()
		for {
			select {
			case <-pollStop:
				return
			case <-time.After(3 * time.Millisecond):
			}
			st, err := sess.FleetStatus(5 * time.Second)
			if err != nil {
				rec.violate("fleet status: %v", err)
				continue
			}
			if st.Running > sc.maxRunning || st.Writers > sc.maxWriters {
				rec.violate("fleet status %d running, %d writers with caps %d and %d", st.Running, st.Writers, sc.maxRunning, sc.maxWriters)
			}
		}
	}()

	// Faults keyed to events: fired by timers, their delays being only
	// when a fault strikes.
	var faultWG sync.WaitGroup
	var timers []*time.Timer
	after := func(d time.Duration, f func()) {
		faultWG.Add(1)
		timers = append(timers, time.AfterFunc(d, func() { defer faultWG.Done(); f() }))
	}
	var turnCancelled atomic.Bool
	cancelArmed := false
	cancelled := map[string]bool{}

	sess.Run("fan out")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var evs []event.Event
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			close(pollStop)
			pollWG.Wait()
			t.Fatalf("the parent turn never ended (%v) after %d events; tasks done: %v", err, len(evs), doneSoFar(evs))
		}
		evs = append(evs, e)
		if e.EventMeta().Task != "" && e.EventMeta().Session == id {
			i, _ := strconv.Atoi(strings.TrimPrefix(e.EventMeta().Task, "f1."))
			if i >= 1 && i <= len(sc.tasks) {
				task := sc.tasks[i-1]
				if task.cancelOn == e.Kind() && !cancelled[e.EventMeta().Task] {
					cancelled[e.EventMeta().Task] = true
					tid := e.EventMeta().Task
					after(task.cancelDelay, func() { sess.CancelTask(tid) })
				}
			}
			if _, ok := e.(*event.TaskQueued); ok && sc.cancelTurn > 0 && !cancelArmed {
				cancelArmed = true
				after(sc.cancelTurn, func() { turnCancelled.Store(true); sess.Cancel() })
			}
		}
		if td, ok := e.(*event.TurnDone); ok && td.Session == id && td.Task == "" {
			break
		}
	}
	close(pollStop)
	pollWG.Wait()
	for _, tm := range timers {
		if tm.Stop() {
			faultWG.Done()
		}
	}
	faultWG.Wait()
	stopAll()
	// Nothing publishes any more: read the rest of the stream up to a
	// marker, so late events of a task are seen too.
	marker := &event.Notice{Meta: event.Meta{Session: "marker"}}
	bus.Publish(marker)
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("reading the rest of the stream: %v", err)
		}
		if e == event.Event(marker) {
			break
		}
		evs = append(evs, e)
	}
	checkFleetProperties(t, sc, rec, evs, turnCancelled.Load())
}

func doneSoFar(evs []event.Event) map[string]string {
	out := map[string]string{}
	for _, d := range eventsOf[*event.TaskDone](evs) {
		out[d.Task] = d.Status
	}
	return out
}

var fleetLine = regexp.MustCompile(`(?m)^## Task (\d+) \(([^)]*)\): ([a-z_]+)`)

func checkFleetProperties(t *testing.T, sc *fleetScenario, rec *fleetRecorder, evs []event.Event, turnCancelled bool) {
	t.Helper()
	n := len(sc.tasks)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("f1.%d", i+1)
	}
	terminal := map[string]bool{event.TaskOK: true, event.TaskFailed: true, event.TaskCancelled: true, event.TaskTimedOut: true}

	// The parent's turn ends once.
	var turnDone []*event.TurnDone
	for _, d := range eventsOf[*event.TurnDone](evs) {
		if d.Session == "s1" && d.Task == "" {
			turnDone = append(turnDone, d)
		}
	}
	if len(turnDone) != 1 {
		t.Fatalf("%d turn_done events for the session, want 1", len(turnDone))
	}
	if st := turnDone[0].Status; st != event.StatusOK && !(turnCancelled && st == event.StatusCancelled) {
		t.Errorf("parent turn ended %s (%s)", st, turnDone[0].Error)
	}

	// The fleet call's result, as the parent's model sees it: every task
	// once, in input order, with a terminal status.
	rec.mu.Lock()
	fleetTool := append([]string(nil), rec.fleetTool...)
	rec.mu.Unlock()
	if len(fleetTool) != 1 {
		t.Fatalf("the parent recorded %d fleet results, want 1", len(fleetTool))
	}
	res := fleetTool[0]
	if !strings.HasPrefix(res, fmt.Sprintf("%d tasks: ", n)) {
		t.Errorf("fleet result summary: %.200q", res)
	}
	lines := fleetLine.FindAllStringSubmatch(res, -1)
	if len(lines) != n {
		t.Fatalf("fleet result lists %d tasks, want %d:\n%s", len(lines), n, res)
	}
	resultStatus := map[string]string{}
	for i, l := range lines {
		if l[1] != strconv.Itoa(i+1) || l[2] != ids[i] {
			t.Errorf("fleet result line %d is task %s (%s), want %d (%s)", i+1, l[1], l[2], i+1, ids[i])
		}
		if !terminal[l[3]] {
			t.Errorf("task %s has status %q in the fleet result", l[2], l[3])
		}
		resultStatus[l[2]] = l[3]
	}

	// The bus: one task_queued and one task_done per task, at most one
	// task_started, nothing of a task after its task_done; caps held at
	// every point of the stream.
	known := map[string]int{}
	for i, id := range ids {
		known[id] = i
	}
	queued, started, done := map[string]int{}, map[string]int{}, map[string]int{}
	doneStatus := map[string]string{}
	running := map[string]bool{}
	var fleetFinished []*event.ToolFinished
	for _, e := range evs {
		m := e.EventMeta()
		if m.Session != "s1" {
			continue
		}
		if m.Task == "" {
			if tf, ok := e.(*event.ToolFinished); ok && tf.Tool == team.ToolFleet {
				fleetFinished = append(fleetFinished, tf)
			}
			continue
		}
		if _, ok := known[m.Task]; !ok {
			t.Errorf("event %s for unknown task %q", e.Kind(), m.Task)
			continue
		}
		if done[m.Task] > 0 {
			t.Errorf("%s event (seq %d) of task %s after its task_done", e.Kind(), m.Seq, m.Task)
		}
		switch ev := e.(type) {
		case *event.TaskQueued:
			queued[m.Task]++
		case *event.TaskStarted:
			started[m.Task]++
			if queued[m.Task] == 0 {
				t.Errorf("task %s started before it was queued", m.Task)
			}
			running[m.Task] = true
			checkCaps(t, sc, running, m.Seq)
		case *event.TaskDone:
			done[m.Task]++
			doneStatus[m.Task] = ev.Status
			delete(running, m.Task)
			if !terminal[ev.Status] {
				t.Errorf("task_done of %s has status %q", m.Task, ev.Status)
			}
		}
	}
	for _, id := range ids {
		if queued[id] == 0 && done[id] == 0 && started[id] == 0 {
			// A SubmitFleet lost before its handler ran: the scheduler
			// never took the task, so it has no events and fails.
			if resultStatus[id] != event.TaskFailed || !strings.Contains(res, "not scheduled") {
				t.Errorf("task %s was never queued, yet the fleet result says %s", id, resultStatus[id])
			}
			continue
		}
		if queued[id] != 1 || done[id] != 1 || started[id] > 1 {
			t.Errorf("task %s: %d task_queued, %d task_started, %d task_done", id, queued[id], started[id], done[id])
		}
		if rs, ds := resultStatus[id], doneStatus[id]; rs != ds {
			t.Errorf("task %s: fleet result says %s, task_done says %s", id, rs, ds)
		}
		mode := sc.tasks[known[id]].mode
		if (mode == modeCrash || mode == modeCut || mode == modeNoStart || mode == modePanic) && doneStatus[id] == event.TaskOK {
			t.Errorf("task %s (%s) ended ok", id, mode)
		}
	}

	// The fleet's result reached the parent only after every subagent it
	// started had stopped; each started subagent stopped exactly once.
	if len(fleetFinished) != 1 {
		t.Fatalf("%d tool_finished events for the fleet call, want 1", len(fleetFinished))
	}
	got := fleetFinished[0].Seq
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, id := range ids {
		if rec.factories[id] > 1 {
			t.Errorf("task %s: subagent factory called %d times", id, rec.factories[id])
		}
		stops := rec.stops[id]
		if len(stops) != started[id] {
			t.Errorf("task %s: %d subagents started, %d stopped", id, started[id], len(stops))
		}
		for _, s := range stops {
			if s >= got {
				t.Errorf("task %s: subagent still stopping (bus at seq %d) when the parent got the fleet result (seq %d)", id, s, got)
			}
		}
	}
	for _, v := range rec.violations {
		t.Error(v)
	}
}

// checkCaps checks the running tasks against the scheduler's caps: at
// most MaxRunning tasks, at most MaxWriters writers, and no two writers
// whose claims overlap.
func checkCaps(t *testing.T, sc *fleetScenario, running map[string]bool, seq int64) {
	t.Helper()
	var writers []int
	for id := range running {
		i, _ := strconv.Atoi(strings.TrimPrefix(id, "f1."))
		if sc.tasks[i-1].writer {
			writers = append(writers, i-1)
		}
	}
	if len(running) > sc.maxRunning {
		t.Errorf("at seq %d, %d tasks running with a cap of %d", seq, len(running), sc.maxRunning)
	}
	if len(writers) > sc.maxWriters {
		t.Errorf("at seq %d, %d writers running with a cap of %d", seq, len(writers), sc.maxWriters)
	}
	for a := range writers {
		for b := a + 1; b < len(writers); b++ {
			x, y := sc.tasks[writers[a]].paths, sc.tasks[writers[b]].paths
			if claimsOverlap(x, y) {
				t.Errorf("at seq %d, writers %d %v and %d %v run at once", seq, writers[a]+1, x, writers[b]+1, y)
			}
		}
	}
}

// claimsOverlap is the scheduler's rule on root-relative claims: an empty
// list is the whole workspace; a path covers itself and what lies below.
func claimsOverlap(x, y []string) bool {
	if len(x) == 0 || len(y) == 0 {
		return true
	}
	under := func(a, b string) bool { return a == b || strings.HasPrefix(b, a+"/") }
	for _, a := range x {
		for _, b := range y {
			if under(a, b) || under(b, a) {
				return true
			}
		}
	}
	return false
}
