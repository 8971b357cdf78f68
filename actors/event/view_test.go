package event

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// stamped gives events the seqs 1, 2, … and the session s1 unless they
// name one, as a bus would.
func stamped(evs ...Event) []Event {
	for i, e := range evs {
		m := e.EventMeta()
		m.Seq = int64(i + 1)
		if m.Session == "" {
			m.Session = "s1"
		}
	}
	return evs
}

// emptySnapshot is the snapshot of s1 at seq with nothing in it.
func emptySnapshot(seq int64) Snapshot {
	return Snapshot{Session: "s1", Seq: seq, Queued: []string{}, Approvals: []PendingApproval{},
		Elicitations: []PendingElicitation{}, Tasks: []TaskSnapshot{}, MCP: []MCPServerState{}}
}

func TestViewFold(t *testing.T) {
	t.Parallel()
	task := func(id string) Meta { return Meta{Task: id} }
	cases := []struct {
		name   string
		events []Event
		// want edits the empty snapshot at the last seq into the expected one.
		want func(s *Snapshot)
	}{
		{"nothing", nil, func(*Snapshot) {}},
		{"a turn runs from turn_started to turn_done", []Event{&TurnStarted{Prompt: "one"}},
			func(s *Snapshot) { s.Running, s.Prompt = true, "one" }},
		{"a finished turn", []Event{&TurnStarted{Prompt: "one"}, &TurnDone{Status: StatusOK}}, func(*Snapshot) {}},
		{"queued prompts leave the queue as their turns start", []Event{
			&TurnStarted{Prompt: "one"}, &PromptQueued{Prompt: "two", Position: 1}, &PromptQueued{Prompt: "three", Position: 2},
			&TurnDone{Status: StatusCancelled}, &TurnStarted{Prompt: "two"},
		}, func(s *Snapshot) { s.Running, s.Prompt, s.Queued = true, "two", []string{"three"} }},
		{"a queued prompt failed without starting leaves the queue", []Event{
			&TurnStarted{Prompt: "a"}, &PromptQueued{Prompt: "b", Position: 1}, &TurnDone{Status: StatusFailed}, &TurnDone{Status: StatusFailed},
		}, func(*Snapshot) {}},
		{"a subagent's turn_done is not the session's", []Event{&TurnStarted{Prompt: "go"}, &TurnDone{Meta: task("f1.1")}},
			func(s *Snapshot) { s.Running, s.Prompt = true, "go" }},
		{"a rejected prompt changes nothing", []Event{&TurnStarted{Prompt: "go"}, &PromptRejected{Prompt: "no", Reason: "busy"}},
			func(s *Snapshot) { s.Running, s.Prompt = true, "go" }},
		{"approvals wait until resolved", []Event{
			&TurnStarted{Prompt: "go"},
			&ApprovalRequested{RequestID: "s1/c1", CallID: "c1", Tool: "bash", Args: "{}", Reason: "ask", Suggestions: []string{"Bash(make:*)"}},
			&ApprovalRequested{Meta: task("f1.1"), RequestID: "s1/f1.1/c2", CallID: "c2", Tool: "edit", OnceOnly: true},
			&ApprovalResolved{RequestID: "s1/c1", CallID: "c1", Decision: ApproveOnce},
		}, func(s *Snapshot) {
			s.Running, s.Prompt = true, "go"
			s.Approvals = []PendingApproval{{Seq: 3, Task: "f1.1", RequestID: "s1/f1.1/c2", CallID: "c2", Tool: "edit", OnceOnly: true}}
		}},
		{"a turn's end drops its approvals, a task's end drops the task's", []Event{
			&TurnStarted{Prompt: "go"},
			&ApprovalRequested{RequestID: "s1/c1"}, &ApprovalRequested{Meta: task("f1.1"), RequestID: "s1/f1.1/c2"},
			&ApprovalRequested{Meta: task("f1.2"), RequestID: "s1/f1.2/c3"},
			&TurnDone{Status: StatusCancelled}, &TaskDone{Meta: task("f1.1"), Fleet: "f1", Status: TaskCancelled},
		}, func(s *Snapshot) {
			s.Approvals = []PendingApproval{{Seq: 4, Task: "f1.2", RequestID: "s1/f1.2/c3"}}
			s.Tasks = []TaskSnapshot{{ID: "f1.1", Fleet: "f1", State: "done", Status: TaskCancelled}}
		}},
		{"elicitations wait until their turn ends or their server goes down", []Event{
			&TurnStarted{Prompt: "go"},
			&ElicitationRequested{RequestID: "a-1", Server: "a", Message: "name?", Schema: json.RawMessage(`{"type":"object"}`)},
			&ElicitationRequested{RequestID: "b-1", Server: "b", Mode: "url", URL: "https://example.test"},
			&MCPServerUpdated{Server: "b", State: MCPRestarting, Error: "eof", Failures: 1},
			&MCPServerUpdated{Server: "a", State: MCPReady, Tools: 2},
		}, func(s *Snapshot) {
			s.Running, s.Prompt = true, "go"
			s.Elicitations = []PendingElicitation{{Seq: 2, RequestID: "a-1", Server: "a", Message: "name?", Schema: json.RawMessage(`{"type":"object"}`)}}
			s.MCP = []MCPServerState{{Server: "a", State: MCPReady, Tools: 2}, {Server: "b", State: MCPRestarting, Error: "eof", Failures: 1}}
		}},
		{"the end of the turn drops elicitations", []Event{
			&TurnStarted{Prompt: "go"}, &ElicitationRequested{RequestID: "a-1", Server: "a"}, &TurnDone{Status: StatusOK},
		}, func(*Snapshot) {}},
		{"tasks keep their order and their latest state", []Event{
			&TaskQueued{Meta: task("f1.1"), Fleet: "f1", Prompt: "one", Writer: true},
			&TaskQueued{Meta: task("f1.2"), Fleet: "f1", Prompt: "two", Profile: "explore"},
			&TaskStarted{Meta: task("f1.2"), Fleet: "f1", Model: "m"},
			&TaskStarted{Meta: task("f1.1"), Fleet: "f1", Model: "m"},
			&TaskDone{Meta: task("f1.1"), Fleet: "f1", Status: TaskFailed, Error: "boom"},
			&TaskStarted{Meta: task("f2.1"), Fleet: "f2", Model: "m"},
		}, func(s *Snapshot) {
			s.Tasks = []TaskSnapshot{
				{ID: "f1.1", Fleet: "f1", Prompt: "one", Writer: true, Model: "m", State: "done", Status: TaskFailed, Error: "boom"},
				{ID: "f1.2", Fleet: "f1", Prompt: "two", Profile: "explore", Model: "m", State: "running"},
				{ID: "f2.1", Fleet: "f2", Model: "m", State: "running"},
			}
		}},
		{"a requeued task waits again and its lost attempt's approvals go", []Event{
			&TaskQueued{Meta: task("f1.1"), Fleet: "f1", Prompt: "one"},
			&TaskStarted{Meta: task("f1.1"), Fleet: "f1", Model: "m", Worker: "w1"},
			&ApprovalRequested{Meta: task("f1.1"), RequestID: "s1/f1.1/c1"},
			&TaskRequeued{Meta: task("f1.1"), Fleet: "f1", Worker: "w1", Attempt: 2, Reason: "worker w1 lost"},
		}, func(s *Snapshot) {
			s.Tasks = []TaskSnapshot{{ID: "f1.1", Fleet: "f1", Prompt: "one", Model: "m", Worker: "w1", State: "queued"}}
		}},
		{"a rerun task names its last worker and attempt", []Event{
			&TaskQueued{Meta: task("f1.1"), Fleet: "f1", Prompt: "one"},
			&TaskStarted{Meta: task("f1.1"), Fleet: "f1", Model: "m", Worker: "w1"},
			&TaskRequeued{Meta: task("f1.1"), Fleet: "f1", Worker: "w1", Attempt: 2},
			&TaskStarted{Meta: task("f1.1"), Fleet: "f1", Model: "m", Worker: "w2", Attempt: 2},
			&TaskDone{Meta: task("f1.1"), Fleet: "f1", Status: TaskOK, Worker: "w2", Attempt: 2},
		}, func(s *Snapshot) {
			s.Tasks = []TaskSnapshot{{ID: "f1.1", Fleet: "f1", Prompt: "one", Model: "m", Worker: "w2", Attempt: 2, State: "done", Status: TaskOK}}
		}},
		{"mcp servers by name, latest state", []Event{
			&MCPServerUpdated{Server: "b", Source: "user", State: MCPConnecting},
			&MCPServerUpdated{Server: "a", Source: "project", State: MCPUntrusted},
			&MCPServerUpdated{Server: "b", Source: "user", State: MCPReady, Tools: 3, Prompts: 1, Resources: 2},
		}, func(s *Snapshot) {
			s.MCP = []MCPServerState{{Server: "a", Source: "project", State: MCPUntrusted},
				{Server: "b", Source: "user", State: MCPReady, Tools: 3, Prompts: 1, Resources: 2}}
		}},
		{"posture", []Event{&PostureChanged{Posture: "yolo"}, &PostureChanged{Posture: "auto"}},
			func(s *Snapshot) { s.Posture = "auto" }},
		{"other sessions only move seq", []Event{
			&TurnStarted{Meta: Meta{Session: "s2"}, Prompt: "theirs"}, &PostureChanged{Meta: Meta{Session: "s2"}, Posture: "yolo"},
		}, func(*Snapshot) {}},
		{"streaming events change nothing", []Event{
			&SessionStarted{Model: "m"}, &TextDelta{Text: "x"}, &ToolStarted{CallID: "c"}, &UsageReported{}, &Notice{Message: "n"},
		}, func(*Snapshot) {}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evs := stamped(tc.events...)
			v := NewView("s1")
			for _, e := range evs {
				v.Apply(e)
			}
			want := emptySnapshot(int64(len(evs)))
			tc.want(&want)
			if got := v.Snapshot(); !reflect.DeepEqual(got, want) {
				t.Fatalf("snapshot =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

// TestViewSkipsWhatItHasSeen: a replay overlapping what the view applied
// changes nothing, so snapshot plus replay never double-counts.
func TestViewSkipsWhatItHasSeen(t *testing.T) {
	t.Parallel()
	evs := stamped(&TurnStarted{Prompt: "one"}, &PromptQueued{Prompt: "two"}, &PromptQueued{Prompt: "three"}, &TurnDone{}, &TurnStarted{Prompt: "two"})
	once := NewView("s1")
	twice := NewView("s1")
	for i, e := range evs {
		once.Apply(e)
		for _, again := range evs[:i+1] {
			twice.Apply(again)
		}
	}
	if a, b := once.Snapshot(), twice.Snapshot(); !reflect.DeepEqual(a, b) {
		t.Fatalf("overlapping replay: %+v, want %+v", b, a)
	}
}

func TestViewLagged(t *testing.T) {
	t.Parallel()
	v := NewView("s1")
	v.Apply(&Lagged{Meta: Meta{Seq: 7}, Dropped: 7, SinceSeq: 1, UntilSeq: 7})
	v.Apply(&PostureChanged{Meta: Meta{Seq: 8, Session: "s1"}, Posture: "yolo"})
	s := v.Snapshot()
	if s.Seq != 8 || s.Dropped != 7 || s.Posture != "yolo" {
		t.Fatalf("snapshot = %+v, want seq 8, dropped 7, posture yolo", s)
	}
}

// TestSnapshotIsACopy: changing a snapshot's lists changes neither the
// view nor the event it came from.
func TestSnapshotIsACopy(t *testing.T) {
	t.Parallel()
	req := &ApprovalRequested{RequestID: "r", Suggestions: []string{"Bash"}}
	eli := &ElicitationRequested{RequestID: "a-1", Server: "a", Schema: json.RawMessage(`{}`)}
	v := NewView("s1")
	for _, e := range stamped(&PromptQueued{Prompt: "p"}, req, eli, &TaskQueued{Meta: Meta{Task: "t"}}, &MCPServerUpdated{Server: "a", State: MCPReady}) {
		v.Apply(e)
	}
	before := v.Snapshot()
	s := v.Snapshot()
	s.Queued[0] = "x"
	s.Approvals[0].Suggestions[0] = "x"
	s.Elicitations[0].Schema[0] = 'x'
	s.Tasks[0].State = "x"
	s.MCP[0].State = "x"
	if after := v.Snapshot(); !reflect.DeepEqual(before, after) {
		t.Fatalf("view changed through its snapshot: %+v, was %+v", after, before)
	}
	if req.Suggestions[0] != "Bash" || string(eli.Schema) != "{}" {
		t.Fatal("an event changed through a snapshot")
	}
}

// randomEvent draws an event of session s1 or s2 touching every part of
// the view, with ids from small pools so requests get resolved and tasks
// move on.
func randomEvent(r *rand.Rand) Event {
	sess := "s1"
	if r.IntN(5) == 0 {
		sess = "s2"
	}
	meta := Meta{Session: sess}
	id := func(prefix string) string { return fmt.Sprintf("%s%d", prefix, r.IntN(4)) }
	if r.IntN(3) == 0 {
		meta.Task = id("f1.")
	}
	switch r.IntN(14) {
	case 0:
		return &TurnStarted{Meta: meta, Prompt: id("p")}
	case 1:
		return &TurnDone{Meta: meta, Status: StatusOK}
	case 2:
		return &PromptQueued{Meta: meta, Prompt: id("q"), Position: r.IntN(3) + 1}
	case 3:
		return &ApprovalRequested{Meta: meta, RequestID: id("r"), Tool: "bash", Suggestions: []string{id("Bash")}}
	case 4:
		return &ApprovalResolved{Meta: meta, RequestID: id("r"), Decision: ApproveDeny}
	case 5:
		return &ElicitationRequested{Meta: Meta{Session: sess}, RequestID: id("m-"), Server: id("m"), Schema: json.RawMessage(`{}`)}
	case 6:
		return &MCPServerUpdated{Meta: Meta{Session: sess}, Server: id("m"), State: []string{MCPReady, MCPRestarting, MCPFailed}[r.IntN(3)], Tools: r.IntN(5)}
	case 7:
		return &TaskQueued{Meta: Meta{Session: sess, Task: id("f1.")}, Fleet: "f1", Prompt: id("t")}
	case 8:
		return &TaskStarted{Meta: Meta{Session: sess, Task: id("f1.")}, Fleet: "f1", Model: "m"}
	case 9:
		return &TaskDone{Meta: Meta{Session: sess, Task: id("f1.")}, Fleet: "f1", Status: TaskOK}
	case 10:
		return &PostureChanged{Meta: meta, Posture: []string{"ask", "auto", "yolo"}[r.IntN(3)]}
	case 11:
		return &PromptRejected{Meta: meta, Prompt: id("x")}
	case 12:
		return &TextDelta{Meta: meta, Text: "t"}
	default:
		return &Notice{Meta: meta, Level: "info", Message: "n"}
	}
}

// replayFold folds events 1..n as a fresh subscription replays them.
func replayFold(t *testing.T, bus *Bus, session string, n int64) Snapshot {
	t.Helper()
	sub := bus.SubscribeFrom(0, 0)
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v := NewView(session)
	for v.seq < n {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("replay to %d: %v", n, err)
		}
		v.Apply(e)
	}
	return v.Snapshot()
}

// TestViewerSnapshotIsReplayFold is the property a late frontend relies
// on: whenever a viewer has reached seq N, its snapshot is the fold of the
// replay of events 1..N, whether the viewer watched from the start or
// attached midway (it replays the bus's history first).
func TestViewerSnapshotIsReplayFold(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, 0x5eed))
			bus := NewBus()
			early := NewViewer(bus, "s1")
			defer early.Close()
			var late *Viewer
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for batch := 0; batch < 12; batch++ {
				for range r.IntN(30) + 1 {
					bus.Publish(randomEvent(r))
				}
				if batch == 4 {
					late = NewViewer(bus, "s1")
					defer late.Close()
				}
				n := bus.LastSeq()
				want := replayFold(t, bus, "s1", n)
				for name, v := range map[string]*Viewer{"early": early, "late": late} {
					if v == nil {
						continue
					}
					got, err := v.WaitSeq(ctx, n)
					if err != nil {
						t.Fatalf("%s viewer: %v", name, err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s viewer at seq %d:\n%+v\nfold of the replay:\n%+v", name, n, got, want)
					}
				}
			}
		})
	}
}

// TestViewerPastHistory: a viewer attached after the bus let events go
// reports them as dropped, at the right seq.
func TestViewerPastHistory(t *testing.T) {
	t.Parallel()
	bus := NewBus(WithHistory(2))
	for i := range 5 {
		bus.Publish(&PostureChanged{Meta: Meta{Session: "s1"}, Posture: []string{"ask", "auto", "yolo"}[i%3]})
	}
	v := NewViewer(bus, "s1")
	defer v.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := v.WaitSeq(ctx, 5)
	must(t, err)
	if s.Seq != 5 || s.Dropped != 3 || s.Posture != "auto" {
		t.Fatalf("snapshot = %+v, want seq 5, 3 dropped, posture auto", s)
	}
}

func TestViewerWaitSeqEnds(t *testing.T) {
	t.Parallel()
	t.Run("closed", func(t *testing.T) {
		t.Parallel()
		v := NewViewer(NewBus(), "s1")
		v.Close()
		v.Close()
		if _, err := v.WaitSeq(context.Background(), 1); !errors.Is(err, errViewerClosed) {
			t.Fatalf("WaitSeq on a closed viewer = %v", err)
		}
	})
	t.Run("context", func(t *testing.T) {
		t.Parallel()
		v := NewViewer(NewBus(), "s1")
		defer v.Close()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := v.WaitSeq(ctx, 1); !errors.Is(err, context.Canceled) {
			t.Fatalf("WaitSeq with a cancelled context = %v", err)
		}
	})
}
