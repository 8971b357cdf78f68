package scheduler_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"reasonix/scheduler"
)

// More script steps, for nodes and requeues.
type (
	// setNode calls SetNode and expects err (nil: success).
	setNode struct {
		node scheduler.Node
		err  error
	}
	// placed is like next, each entry "id@node" ("id@" is the local node),
	// and also checks each Start's attempt when written "id@node#n".
	placed []string
	// requeue calls Requeue and expects the attempt or the error.
	requeue struct {
		id      string
		attempt int
		err     error
	}
	// onNode checks OnNode.
	onNode struct {
		node string
		ids  []string
	}
	// nodeRunning checks Status().Nodes: the running count of each node,
	// in the order Status lists them, written "name=n".
	nodeRunning []string
	// where checks a task's Node and Attempt via Lookup.
	where struct {
		id      string
		node    string
		attempt int
	}
)

func (s setNode) run(t *testing.T, q *scheduler.Queue, _ *time.Time) {
	t.Helper()
	if err := q.SetNode(s.node); !errors.Is(err, s.err) || (err == nil) != (s.err == nil) {
		t.Fatalf("SetNode(%+v) = %v, want %v", s.node, err, s.err)
	}
}

func (s placed) run(t *testing.T, q *scheduler.Queue, now *time.Time) {
	t.Helper()
	var got, want []string
	for _, st := range q.Next(*now) {
		got = append(got, st.Task.ID+"@"+st.Node+"#"+strconv.Itoa(st.Attempt))
	}
	for _, w := range s {
		if !strings.Contains(w, "#") {
			w += "#1"
		}
		want = append(want, w)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Next placed %q, want %q", got, want)
	}
}

func (s requeue) run(t *testing.T, q *scheduler.Queue, now *time.Time) {
	t.Helper()
	got, err := q.Requeue(s.id, *now)
	if got != s.attempt || !errors.Is(err, s.err) || (err == nil) != (s.err == nil) {
		t.Fatalf("Requeue(%q) = %d, %v; want %d, %v", s.id, got, err, s.attempt, s.err)
	}
}

func (s onNode) run(t *testing.T, q *scheduler.Queue, _ *time.Time) {
	t.Helper()
	if got := q.OnNode(s.node); !slices.Equal(got, s.ids) {
		t.Fatalf("OnNode(%q) = %q, want %q", s.node, got, s.ids)
	}
}

func (s nodeRunning) run(t *testing.T, q *scheduler.Queue, _ *time.Time) {
	t.Helper()
	var got []string
	for _, n := range q.Status().Nodes {
		got = append(got, n.Node.Name+"="+strconv.Itoa(n.Running))
	}
	if !slices.Equal(got, s) {
		t.Fatalf("Status nodes running %q, want %q", got, []string(s))
	}
}

func (s where) run(t *testing.T, q *scheduler.Queue, _ *time.Time) {
	t.Helper()
	st, ok := q.Lookup(s.id)
	if !ok || st.Node != s.node || st.Attempt != s.attempt {
		t.Fatalf("Lookup(%q) node %q attempt %d (found %v), want %q %d", s.id, st.Node, st.Attempt, ok, s.node, s.attempt)
	}
}

// worker is an up worker node with slots and write paths.
func worker(name string, slots int, writes ...string) setNode {
	return setNode{node: scheduler.Node{Name: name, Slots: slots, Up: true, Writes: writes}}
}

func down(s setNode) setNode { s.node.Up = false; return s }

// localSlots sets the local node's slots.
func localSlots(n int) setNode { return setNode{node: scheduler.Node{Slots: n}} }

var wide = scheduler.Config{MaxRunning: 2, MaxWriters: 8, Root: "/ws"}

func TestNodeRules(t *testing.T) {
	t.Parallel()
	runScripts(t, []script{
		{"readers spread to the node with most free slots, ties to local then order", wide, []step{
			worker("w1", 3), worker("w2", 3),
			rd("r1"), rd("r2"), rd("r3"), rd("r4"), rd("r5"), rd("r6"), rd("r7"), rd("r8"), rd("r9"),
			// free: local 2, w1 3, w2 3 → w1 (3, first added), w2 (3), then
			// local, w1, w2 all at 2 → local first, and so on.
			placed{"r1@w1", "r2@w2", "r3@", "r4@w1", "r5@w2", "r6@", "r7@w1", "r8@w2"},
			counts{queued: 1, running: 8},
			nodeRunning{"=2", "w1=3", "w2=3"},
			onNode{"w2", []string{"r2", "r5", "r8"}},
		}},
		{"a local task waits for the local node however free the workers are", wide, []step{
			localSlots(1), worker("w1", 5),
			rd("r1"), rd("r2"), rd("r3"), rd("r4"), rd("r5"),
			placed{"r1@w1", "r2@w1", "r3@w1", "r4@w1", "r5@"},
			submit{task: scheduler.Task{ID: "here", Local: true}},
			placed(nil), // w1 has a slot free, the local node none
			finish{id: "r5", outcome: scheduler.OutcomeFinished},
			placed{"here@"},
		}},
		{"a local task is refused where this process runs nothing", wide, []step{
			worker("w1", 3), localSlots(0),
			submit{task: scheduler.Task{ID: "here", Local: true}, err: scheduler.ErrNoNode},
			rd("r1"),
			placed{"r1@w1"},
		}},
		{"run cap is the sum of up nodes' slots", scheduler.Config{MaxRunning: 1, Root: "/ws"}, []step{
			worker("w1", 2), down(worker("w2", 5)),
			rd("r1"), rd("r2"), rd("r3"), rd("r4"),
			placed{"r1@w1", "r2@", "r3@w1"},
			placed(nil),
			worker("w2", 5),
			placed{"r4@w2"},
		}},
		{"writers go only to nodes covering all their claims", wide, []step{
			worker("api", 4, "services/api"), worker("docs", 4, "docs", "README.md"),
			localSlots(0),
			wr("a", "services/api/x.go"), wr("b", "docs/intro.md", "README.md"),
			submit{task: scheduler.Task{ID: "c", Writer: true, WritePaths: []string{"services/api/y.go", "docs/z.md"}}, err: scheduler.ErrNoNode},
			placed{"a@api", "b@docs"},
			down(worker("both", 1, "services", "docs")),
			wr("c", "services/api/y.go", "docs/z.md"),
			placed(nil),
			worker("both", 1, "services", "docs"),
			placed{"c@both"},
		}},
		{"submit refuses a writer no node could ever take", wide, []step{
			localSlots(0),
			worker("api", 4, "services/api"), down(worker("ro", 4)),
			submit{task: scheduler.Task{ID: "x", Writer: true, WritePaths: []string{"services"}}, err: scheduler.ErrNoNode},
			submit{task: scheduler.Task{ID: "all", Writer: true}, err: scheduler.ErrNoNode},
			wr("ok", "services/api/x"),
			rd("r"),
			counts{queued: 2},
			// A down node still counts: it may come back.
			down(worker("api", 4, "services/api")),
			wr("ok2", "services/api/y"),
		}},
		{"submit refuses any task when no node has a slot", wide, []step{
			localSlots(0),
			submit{task: scheduler.Task{ID: "r"}, err: scheduler.ErrNoNode},
			submit{task: scheduler.Task{ID: "w", Writer: true, WritePaths: []string{"a"}}, err: scheduler.ErrNoNode},
			down(worker("w1", 1)),
			rd("r"), // the same id is free again, and a down worker counts
			placed(nil),
			worker("w1", 1),
			placed{"r@w1"},
		}},
		{"local covers every writer", wide, []step{
			worker("ro", 8),
			wr("all"), rd("r1"),
			placed{"all@", "r1@ro"},
		}},
		{"writers prefer the longest covering claim, then free slots, then local", scheduler.Config{MaxRunning: 8, MaxWriters: 8, Root: "/ws"}, []step{
			worker("every", 8, "."), worker("svc", 1, "services"), worker("api", 1, "services/api"),
			wr("a", "services/api/h.go"), wr("b", "services/api/g.go"), wr("c", "services/api/f.go"),
			wr("d", "lib"),
			// a: api is the closest; b: api is full, svc next; c: both are
			// full, every and local cover with "." and have 8 free each, so
			// local wins the tie; d: local now has 7 free, every 8.
			placed{"a@api", "b@svc", "c@", "d@every"},
		}},
		{"locality counts path components, not whole-workspace claims", scheduler.Config{MaxRunning: 8, MaxWriters: 8, Root: "/ws"}, []step{
			worker("deep", 1, "a/b/c"), worker("long", 8, "aaaaaaaaaaaa"),
			wr("x", "a/b/c/d.go", "aaaaaaaaaaaa/e"),
			wr("y", "aaaaaaaaaaaa/f", "a/b/c/g"),
			placed{"x@", "y@"}, // neither worker covers both paths: local only
			worker("both", 1, "a/b/c", "aaaaaaaaaaaa"),
			wr("z", "a/b/c/h"),
			placed{"z@deep"}, // deep and both tie on locality 3; deep was added first
		}},
		{"a worker owning all beats local on free slots", wide, []step{
			worker("every", 4, "."),
			wr("a", "x"),
			placed{"a@every"},
		}},
		{"a read-only worker takes no writer", wide, []step{
			worker("ro", 8), worker("empty", 8, []string{}...),
			wr("a", "x"), wr("b", "y"), wr("c", "z"),
			placed{"a@", "b@"},
		}},
		{"reader waits only when every up node is full", scheduler.Config{MaxRunning: 1, MaxWriters: 8, Root: "/ws"}, []step{
			worker("ro", 1),
			wr("w1", "a"), wr("w2", "b"), rd("r1"),
			placed{"w1@", "r1@ro"},
			state{id: "w2", state: scheduler.Queued},
		}},
		{"a writer whose node is full is passed, not waited on", scheduler.Config{MaxRunning: 1, MaxWriters: 8, Root: "/ws"}, []step{
			worker("api", 1, "api"), worker("ro", 1),
			wr("hog", "lib"), wr("busy", "api/1"), wr("w", "api/2"), rd("r1"),
			placed{"hog@", "busy@api", "r1@ro"},
			state{id: "w", state: scheduler.Queued},
			finish{id: "busy", outcome: scheduler.OutcomeFinished},
			placed{"w@api"},
		}},
		{"reserved writer whose only node is down still holds its paths", scheduler.Config{MaxRunning: 8, MaxWriters: 8, Root: "/ws"}, []step{
			localSlots(0),
			down(worker("big", 1, "api")), worker("small", 4, "api/1", "api/2", "api/3", "api/4"),
			wr("w", "api"),
			wr("p1", "api/1"), wr("p2", "api/2"), wr("p3", "api/3"),
			placed{"p1@small", "p2@small", "p3@small"},
			state{id: "w", state: scheduler.Queued, reserved: true},
			finish{id: "p1", outcome: scheduler.OutcomeFinished},
			finish{id: "p2", outcome: scheduler.OutcomeFinished},
			finish{id: "p3", outcome: scheduler.OutcomeFinished},
			// Nothing conflicts with w now; only its node keeps it waiting.
			wr("p4", "api/4"), rd("r"),
			placed{"r@small"}, // p4 would fit on small, but w holds api
			state{id: "w", state: scheduler.Queued, reserved: true},
			worker("big", 1, "api"),
			placed{"w@big"},
			finish{id: "w", outcome: scheduler.OutcomeFinished},
			placed{"p4@small"},
		}},
		{"writer cap and overlap hold across nodes", scheduler.Config{MaxRunning: 4, MaxWriters: 2, Root: "/ws"}, []step{
			worker("w1", 4, "."), worker("w2", 4, "."),
			wr("a", "x"), wr("b", "x/y"), wr("c", "z"), wr("d", "q"),
			placed{"a@", "c@w1"},
			counts{queued: 2, running: 2, writers: 2},
			finish{id: "a", outcome: scheduler.OutcomeFinished},
			placed{"b@"},
		}},
		{"a node going down ends and moves nothing", wide, []step{
			worker("w1", 3),
			rd("a"), rd("b"), rd("c"),
			placed{"a@w1", "b@", "c@w1"},
			down(worker("w1", 3)),
			counts{running: 3},
			onNode{"w1", []string{"a", "c"}},
			state{id: "a", state: scheduler.Running},
			rd("d"),
			placed{"d@"},
			nodeRunning{"=2", "w1=2"},
			finish{id: "a", outcome: scheduler.OutcomeFinished},
			where{id: "a", node: "w1", attempt: 1},
			nodeRunning{"=2", "w1=1"},
			worker("w1", 3),
			rd("e"), rd("f"), rd("g"),
			placed{"e@w1", "f@w1"},
		}},
		{"shrinking a node's slots only stops new placements", wide, []step{
			worker("w1", 3),
			rd("a"), rd("b"), rd("c"), rd("d"), rd("e"),
			placed{"a@w1", "b@", "c@w1", "d@", "e@w1"},
			worker("w1", 1),
			nodeRunning{"=2", "w1=3"},
			rd("f"),
			finish{id: "a", outcome: scheduler.OutcomeFinished},
			finish{id: "c", outcome: scheduler.OutcomeFinished},
			placed(nil),
			finish{id: "e", outcome: scheduler.OutcomeFinished},
			placed{"f@w1"},
		}},
		{"local with no slots runs nothing itself", wide, []step{
			localSlots(0), worker("w1", 1, "."),
			rd("a"), wr("b"),
			placed{"a@w1"},
			finish{id: "a", outcome: scheduler.OutcomeFinished},
			placed{"b@w1"},
			localSlots(1),
			rd("c"),
			placed{"c@"},
		}},
		{"stopping tasks keep their node slot", wide, []step{
			worker("w1", 1),
			rd("a"), rd("b"), rd("c"), rd("d"),
			placed{"a@", "b@", "c@w1"},
			cancel{id: "c", wasRunning: true},
			nodeRunning{"=2", "w1=1"},
			placed(nil),
			finish{id: "c", outcome: scheduler.OutcomeCancelled},
			placed{"d@w1"},
		}},
	})
}

func TestRequeue(t *testing.T) {
	t.Parallel()
	one := scheduler.Config{MaxRunning: 1, MaxWriters: 1, Root: "/ws"}
	runScripts(t, []script{
		{"back at its submission position with the next attempt", one, []step{
			worker("w1", 1),
			rd("a"), rd("b"), rd("c"),
			placed{"a@", "b@w1"},
			down(worker("w1", 1)),
			requeue{id: "b", attempt: 2},
			where{id: "b", node: "", attempt: 2},
			state{id: "b", state: scheduler.Queued},
			counts{queued: 2, running: 1},
			nodeRunning{"=1", "w1=0"},
			placed(nil),
			finish{id: "a", outcome: scheduler.OutcomeFinished},
			placed{"b@#2"}, // ahead of c, submitted after it
			worker("w1", 1),
			placed{"c@w1"},
		}},
		{"attempts run out after MaxAttempts and Finish still ends it", one, []step{
			rd("a"), rd("b"),
			placed{"a@"},
			requeue{id: "a", attempt: 2},
			placed{"a@#2"},
			requeue{id: "a", attempt: 3},
			placed{"a@#3"},
			requeue{id: "a", err: scheduler.ErrAttempts},
			state{id: "a", state: scheduler.Running},
			where{id: "a", node: "", attempt: 3},
			placed(nil),
			finish{id: "a", outcome: scheduler.OutcomeFinished},
			placed{"b@"},
			requeue{id: "a", err: scheduler.ErrEnded},
			counts{running: 1, ended: 1},
		}},
		{"refused for queued, stopping, ended and unknown tasks", scheduler.Config{MaxRunning: 2, Root: "/ws"}, []step{
			rd("a"), rd("b"), rd("c"),
			requeue{id: "a", err: scheduler.ErrNotRunning},
			placed{"a@", "b@"},
			cancel{id: "a", wasRunning: true},
			requeue{id: "a", err: scheduler.ErrStopping},
			finish{id: "a", outcome: scheduler.OutcomeCancelled},
			requeue{id: "a", err: scheduler.ErrEnded},
			requeue{id: "zz", err: scheduler.ErrUnknownID},
			timeout(time.Second, rd("d")),
			placed{"c@"},
			finish{id: "b", outcome: scheduler.OutcomeFinished},
			placed{"d@"},
			tick(time.Second),
			expired{"d"},
			requeue{id: "d", err: scheduler.ErrStopping},
			finish{id: "d", outcome: scheduler.OutcomeExpired},
		}},
		{"frees the writer slot and the claims", scheduler.Config{MaxRunning: 4, MaxWriters: 1, Root: "/ws"}, []step{
			worker("w1", 1, "x"),
			wr("a", "x/1"), wr("b", "x"), wr("c", "y"),
			placed{"a@w1"},
			down(worker("w1", 1, "x")),
			requeue{id: "a", attempt: 2},
			counts{queued: 3},
			placed{"a@#2"}, // a keeps its place; local covers it while w1 is down
			finish{id: "a", outcome: scheduler.OutcomeFinished},
			placed{"b@"},
		}},
		{"the deadline restarts with the attempt", one, []step{
			timeout(5*time.Second, rd("a")),
			placed{"a@"},
			tick(4 * time.Second),
			requeue{id: "a", attempt: 2},
			tick(4 * time.Second),
			expired(nil),
			placed{"a@#2"},
			tick(4 * time.Second),
			expired(nil),
			tick(time.Second),
			expired{"a"},
			finish{id: "a", outcome: scheduler.OutcomeExpired},
		}},
		{"a requeued writer has its passes counted afresh", scheduler.Config{MaxRunning: 8, MaxWriters: 8, Root: "/ws"}, []step{
			localSlots(0), worker("wx", 1, "."), worker("wy", 4, "y"),
			wr("hog", "z"), wr("w", "x", "y"), wr("p1", "y/1"), wr("p2", "y/2"),
			placed{"hog@wx", "p1@wy", "p2@wy"}, // w waits for wx, passed twice
			finish{id: "hog", outcome: scheduler.OutcomeFinished},
			finish{id: "p1", outcome: scheduler.OutcomeFinished},
			finish{id: "p2", outcome: scheduler.OutcomeFinished},
			placed{"w@wx"},
			down(worker("wx", 1, ".")),
			requeue{id: "w", attempt: 2},
			wr("q1", "y/3"),
			placed{"q1@wy"},
			state{id: "w", state: scheduler.Queued}, // one pass since the requeue, not three
			wr("q2", "y/4"), wr("q3", "y/5"), wr("q4", "y/6"),
			placed{"q2@wy", "q3@wy"},
			state{id: "w", state: scheduler.Queued, reserved: true},
		}},
		{"a fleet cancel drops a requeued task", scheduler.Config{MaxRunning: 1, Root: "/ws"}, []step{
			in("f", rd("a")), in("f", rd("b")),
			placed{"a@"},
			requeue{id: "a", attempt: 2},
			cancelFleet{fleet: "f", dropped: []string{"a", "b"}},
			state{id: "a", state: scheduler.Ended, outcome: scheduler.OutcomeCancelled},
			where{id: "a", node: "", attempt: 2},
		}},
	})
}

func TestSetNodeValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		node scheduler.Node
		errs []error
	}{
		{"local with no slots", scheduler.Node{}, nil},
		{"local with 64 slots", scheduler.Node{Slots: 64}, nil},
		{"local over 64", scheduler.Node{Slots: 65}, []error{scheduler.ErrConfig}},
		{"local negative", scheduler.Node{Slots: -1}, []error{scheduler.ErrConfig}},
		{"local ignores write paths", scheduler.Node{Slots: 2, Writes: []string{"../x"}}, nil},
		{"worker with one slot", scheduler.Node{Name: "w", Slots: 1}, nil},
		{"worker with no slots", scheduler.Node{Name: "w"}, []error{scheduler.ErrConfig}},
		{"worker over 64", scheduler.Node{Name: "w", Slots: 65}, []error{scheduler.ErrConfig}},
		{"worker path escaping the root", scheduler.Node{Name: "w", Slots: 1, Writes: []string{"a", "../x"}}, []error{scheduler.ErrConfig, scheduler.ErrBadClaim}},
		{"worker absolute path outside the root", scheduler.Node{Name: "w", Slots: 1, Writes: []string{"/etc"}}, []error{scheduler.ErrConfig, scheduler.ErrBadClaim}},
		{"worker empty path", scheduler.Node{Name: "w", Slots: 1, Writes: []string{""}}, []error{scheduler.ErrConfig, scheduler.ErrBadClaim}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q, err := scheduler.New(scheduler.Config{Root: "/ws"})
			if err != nil {
				t.Fatal(err)
			}
			before := q.Status().Nodes
			err = q.SetNode(tc.node)
			if len(tc.errs) == 0 {
				if err != nil {
					t.Fatalf("SetNode(%+v) = %v", tc.node, err)
				}
				return
			}
			for _, want := range tc.errs {
				if !errors.Is(err, want) {
					t.Fatalf("SetNode(%+v) = %v, want it to wrap %v", tc.node, err, want)
				}
			}
			if after := q.Status().Nodes; len(after) != len(before) || after[0].Node.Slots != before[0].Node.Slots {
				t.Fatalf("a refused SetNode changed the nodes: %+v → %+v", before, after)
			}
		})
	}
}

// TestNodeStatus checks the node list Status reports: local first with
// the whole workspace, workers in the order added, write paths normalised,
// an update keeping the worker's place.
func TestNodeStatus(t *testing.T) {
	t.Parallel()
	q, err := scheduler.New(scheduler.Config{MaxRunning: 3, Root: "/ws"})
	if err != nil {
		t.Fatal(err)
	}
	writes := []string{"./b//", "/ws/a/x", "a"}
	for _, n := range []scheduler.Node{
		{Name: "z", Slots: 2, Up: true, Writes: writes},
		{Name: "y", Slots: 1},
		{Name: "", Slots: 5, Writes: []string{"q"}},
		{Name: "z", Slots: 4, Up: true, Writes: writes},
	} {
		if err := q.SetNode(n); err != nil {
			t.Fatal(err)
		}
	}
	writes[0] = "changed"
	got := q.Status().Nodes
	want := []scheduler.NodeStatus{
		{Node: scheduler.Node{Name: "", Slots: 5, Up: true, Writes: []string{"."}}},
		{Node: scheduler.Node{Name: "z", Slots: 4, Up: true, Writes: []string{"a", "b"}}},
		{Node: scheduler.Node{Name: "y", Slots: 1}},
	}
	if len(got) != len(want) {
		t.Fatalf("nodes = %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Node.Name != w.Node.Name || g.Node.Slots != w.Node.Slots || g.Node.Up != w.Node.Up ||
			!slices.Equal(g.Node.Writes, w.Node.Writes) || g.Running != w.Running {
			t.Fatalf("node %d = %+v, want %+v", i, g, w)
		}
	}
	// The snapshot is a copy.
	got[1].Node.Writes[0] = "elsewhere"
	if again := q.Status().Nodes; again[1].Node.Writes[0] != "a" {
		t.Fatalf("snapshot shares write paths with the Queue: %q", again[1].Node.Writes)
	}
}

// TestRequeueStatus checks what Lookup says of a requeued task: queued,
// no node, no start or deadline, the next attempt and when it was
// requeued; and of the attempt after it.
func TestRequeueStatus(t *testing.T) {
	t.Parallel()
	q, err := scheduler.New(scheduler.Config{MaxRunning: 1, Root: "/ws"})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.SetNode(scheduler.Node{Name: "w1", Slots: 2, Up: true, Writes: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if err := q.Submit(scheduler.Task{ID: "a", Writer: true, WritePaths: []string{"a/x"}, Timeout: time.Minute}, t0); err != nil {
		t.Fatal(err)
	}
	if st, _ := q.Lookup("a"); st.Attempt != 1 || st.Node != "" {
		t.Fatalf("queued a = %+v, want attempt 1 on no node", st)
	}
	starts := q.Next(t0.Add(time.Second))
	if len(starts) != 1 || starts[0].Node != "w1" || starts[0].Attempt != 1 || !starts[0].Deadline.Equal(t0.Add(time.Second+time.Minute)) {
		t.Fatalf("starts = %+v", starts)
	}
	if _, err := q.Requeue("a", t0.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	st, _ := q.Lookup("a")
	if st.State != scheduler.Queued || st.Node != "" || st.Attempt != 2 || !st.Started.IsZero() || !st.Deadline.IsZero() ||
		!st.Requeued.Equal(t0.Add(2*time.Second)) || !st.Submitted.Equal(t0) {
		t.Fatalf("requeued a = %+v", st)
	}
	if s := q.Status(); s.Queued != 1 || s.Running != 0 || s.Writers != 0 || s.Nodes[1].Running != 0 {
		t.Fatalf("status after requeue = %+v", s)
	}
	starts = q.Next(t0.Add(3 * time.Second))
	if len(starts) != 1 || starts[0].Node != "w1" || starts[0].Attempt != 2 || !starts[0].Deadline.Equal(t0.Add(3*time.Second+time.Minute)) {
		t.Fatalf("second start = %+v", starts)
	}
	if _, err := q.Finish("a", t0.Add(4*time.Second)); err != nil {
		t.Fatal(err)
	}
	if st, _ := q.Lookup("a"); st.State != scheduler.Ended || st.Node != "w1" || st.Attempt != 2 {
		t.Fatalf("ended a = %+v, want it to say where its last attempt ran", st)
	}
}
