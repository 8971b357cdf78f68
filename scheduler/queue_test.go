package scheduler_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"reasonix/scheduler"
)

// A script is a sequence of calls on one Queue with the reply each must
// give. The clock starts at t0 and moves only with tick.
type step interface {
	run(t *testing.T, q *scheduler.Queue, now *time.Time)
}

type (
	submit struct {
		task scheduler.Task
		err  error
	}
	next   []string // ids Next must start, in order
	finish struct {
		id      string
		outcome scheduler.Outcome
		err     error
	}
	cancel struct {
		id         string
		wasRunning bool
		err        error
	}
	cancelFleet struct {
		fleet             string
		dropped, stopping []string
	}
	expired []string
	tick    time.Duration
	// state checks one task's state, outcome and reservation via Lookup.
	state struct {
		id       string
		state    scheduler.State
		outcome  scheduler.Outcome
		reserved bool
	}
	// counts checks the Status counters.
	counts struct{ queued, running, writers, stopping, ended int }
)

func (s submit) run(t *testing.T, q *scheduler.Queue, now *time.Time) {
	t.Helper()
	if err := q.Submit(s.task, *now); !errors.Is(err, s.err) || (err == nil) != (s.err == nil) {
		t.Fatalf("Submit(%+v) = %v, want %v", s.task, err, s.err)
	}
}

func (s next) run(t *testing.T, q *scheduler.Queue, now *time.Time) {
	t.Helper()
	var got []string
	for _, st := range q.Next(*now) {
		got = append(got, st.Task.ID)
	}
	if !slices.Equal(got, s) {
		t.Fatalf("Next started %q, want %q", got, []string(s))
	}
}

func (s finish) run(t *testing.T, q *scheduler.Queue, now *time.Time) {
	t.Helper()
	got, err := q.Finish(s.id, *now)
	if got != s.outcome || !errors.Is(err, s.err) || (err == nil) != (s.err == nil) {
		t.Fatalf("Finish(%q) = %v, %v; want %v, %v", s.id, got, err, s.outcome, s.err)
	}
}

func (s cancel) run(t *testing.T, q *scheduler.Queue, now *time.Time) {
	t.Helper()
	got, err := q.Cancel(s.id, *now)
	if got != s.wasRunning || !errors.Is(err, s.err) || (err == nil) != (s.err == nil) {
		t.Fatalf("Cancel(%q) = %v, %v; want %v, %v", s.id, got, err, s.wasRunning, s.err)
	}
}

func (s cancelFleet) run(t *testing.T, q *scheduler.Queue, now *time.Time) {
	t.Helper()
	got := q.CancelFleet(s.fleet, *now)
	if !slices.Equal(got.Dropped, s.dropped) || !slices.Equal(got.Stopping, s.stopping) {
		t.Fatalf("CancelFleet(%q) = %q/%q, want %q/%q", s.fleet, got.Dropped, got.Stopping, s.dropped, s.stopping)
	}
}

func (s expired) run(t *testing.T, q *scheduler.Queue, now *time.Time) {
	t.Helper()
	if got := q.Expired(*now); !slices.Equal(got, s) {
		t.Fatalf("Expired(%v) = %q, want %q", now.Sub(t0), got, []string(s))
	}
}

func (s tick) run(_ *testing.T, _ *scheduler.Queue, now *time.Time) {
	*now = now.Add(time.Duration(s))
}

func (s state) run(t *testing.T, q *scheduler.Queue, _ *time.Time) {
	t.Helper()
	st, ok := q.Lookup(s.id)
	if !ok || st.State != s.state || st.Outcome != s.outcome || st.Reserved != s.reserved {
		t.Fatalf("Lookup(%q) = %v %v reserved=%v (found %v), want %v %v reserved=%v",
			s.id, st.State, st.Outcome, st.Reserved, ok, s.state, s.outcome, s.reserved)
	}
}

func (s counts) run(t *testing.T, q *scheduler.Queue, _ *time.Time) {
	t.Helper()
	st := q.Status()
	got := counts{st.Queued, st.Running, st.Writers, st.Stopping, st.Ended}
	if got != s {
		t.Fatalf("Status counts = %+v, want %+v", got, s)
	}
}

// rd is a reader, wr a writer with paths (none: the whole workspace), and
// in puts a task in a fleet.
func rd(id string) submit { return submit{task: scheduler.Task{ID: id}} }

func wr(id string, paths ...string) submit {
	return submit{task: scheduler.Task{ID: id, Writer: true, WritePaths: paths}}
}

func in(fleet string, s submit) submit { s.task.Fleet = fleet; return s }

// iso makes a writer isolated (a worktree of its own).
func iso(s submit) submit { s.task.Isolated = true; return s }

func timeout(d time.Duration, s submit) submit { s.task.Timeout = d; return s }

// script is one named table case: a Queue made from cfg, then steps.
type script struct {
	name  string
	cfg   scheduler.Config
	steps []step
}

// runScripts runs each script as a parallel subtest.
func runScripts(t *testing.T, scripts []script) {
	t.Helper()
	for _, sc := range scripts {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			runScript(t, sc.cfg, sc.steps)
		})
	}
}

func runScript(t *testing.T, cfg scheduler.Config, steps []step) {
	t.Helper()
	q, err := scheduler.New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	now := t0
	for _, s := range steps {
		s.run(t, q, &now)
	}
}

var caps63 = scheduler.Config{MaxRunning: 6, MaxWriters: 3, Root: "/ws"}

func TestQueueRules(t *testing.T) {
	t.Parallel()
	runScripts(t, []script{
		{"run cap holds readers back until a slot frees", scheduler.Config{MaxRunning: 3, Root: "/ws"}, []step{
			rd("r1"), rd("r2"), rd("r3"), rd("r4"), rd("r5"),
			next{"r1", "r2", "r3"},
			next(nil),
			finish{id: "r2", outcome: scheduler.OutcomeFinished},
			next{"r4"},
			counts{queued: 1, running: 3, ended: 1},
		}},
		{"default caps are six running and three writers", scheduler.Config{}, []step{
			wr("w1", "a"), wr("w2", "b"), wr("w3", "c"), wr("w4", "d"),
			rd("r1"), rd("r2"), rd("r3"), rd("r4"),
			next{"w1", "w2", "w3", "r1", "r2", "r3"},
			counts{queued: 2, running: 6, writers: 3},
		}},
		{"writer cap holds disjoint writers back", scheduler.Config{MaxRunning: 6, MaxWriters: 2, Root: "/ws"}, []step{
			wr("w1", "a"), wr("w2", "b"), wr("w3", "c"),
			next{"w1", "w2"},
			finish{id: "w1", outcome: scheduler.OutcomeFinished},
			next{"w3"},
		}},
		{"isolated writers on the same paths run together, up to the writer cap", scheduler.Config{MaxRunning: 6, MaxWriters: 2, Root: "/ws"}, []step{
			iso(wr("i1", "a.go")), iso(wr("i2", "a.go")), iso(wr("i3")), wr("w1", "a.go"),
			next{"i1", "i2"},
			finish{id: "i1", outcome: scheduler.OutcomeFinished},
			next{"i3"},
			finish{id: "i2", outcome: scheduler.OutcomeFinished},
			next{"w1"},
		}},
		{"whole-workspace writer excludes every writer but not readers", caps63, []step{
			wr("all"), wr("w1", "a"), rd("r1"), wr("w2", "zzz/deep/file.go"),
			next{"all", "r1"},
			finish{id: "all", outcome: scheduler.OutcomeFinished},
			next{"w1", "w2"},
		}},
		{"dot claim is the whole workspace", caps63, []step{
			wr("w1", "a/b"), wr("dot", "."),
			next{"w1"},
		}},
		{"root itself is the whole workspace", caps63, []step{
			wr("w1", "a/b"), wr("root", "/ws"),
			next{"w1"},
		}},
		{"reader is not stuck behind a blocked writer", caps63, []step{
			wr("w1", "a"), wr("w2", "a/x.go"), rd("r1"),
			next{"w1", "r1"},
			state{id: "w2", state: scheduler.Queued},
		}},
		{"disjoint writer passes a blocked writer", caps63, []step{
			wr("w1", "a"), wr("w2", "a"), wr("w3", "b"),
			next{"w1", "w3"},
			finish{id: "w1", outcome: scheduler.OutcomeFinished},
			next{"w2"},
		}},
		{"readers stay in submission order", scheduler.Config{MaxRunning: 2, Root: "/ws"}, []step{
			rd("r1"), wr("w1", "a"), rd("r2"), rd("r3"),
			next{"r1", "w1"},
			finish{id: "w1", outcome: scheduler.OutcomeFinished},
			next{"r2"},
			finish{id: "r1", outcome: scheduler.OutcomeFinished},
			next{"r3"},
		}},
		{"waiting writer reserves its paths after MaxPasses passes", scheduler.Config{MaxRunning: 8, MaxWriters: 8, Root: "/ws"}, []step{
			// w waits for x; three writers on y pass it, then it holds y.
			wr("hold", "x"), wr("w", "x", "y"),
			wr("p1", "y/1"), wr("p2", "y/2"), wr("p3", "y/3"),
			next{"hold", "p1", "p2", "p3"},
			state{id: "w", state: scheduler.Queued, reserved: true},
			wr("late", "y/4"), rd("r1"), wr("free", "z"),
			next{"r1", "free"},
			finish{id: "hold", outcome: scheduler.OutcomeFinished},
			finish{id: "p1", outcome: scheduler.OutcomeFinished},
			finish{id: "p2", outcome: scheduler.OutcomeFinished},
			next(nil),
			finish{id: "p3", outcome: scheduler.OutcomeFinished},
			next{"w"},
			finish{id: "w", outcome: scheduler.OutcomeFinished},
			next{"late"},
		}},
		{"passes count only conflicting writers", scheduler.Config{MaxRunning: 8, MaxWriters: 8, Root: "/ws"}, []step{
			wr("hold", "x"), wr("w", "x"),
			wr("o1", "o/1"), wr("o2", "o/2"), wr("o3", "o/3"), wr("o4", "o/4"),
			next{"hold", "o1", "o2", "o3", "o4"},
			state{id: "w", state: scheduler.Queued},
		}},
		{"reservation is lifted when the writer is cancelled", scheduler.Config{MaxRunning: 8, MaxWriters: 8, Root: "/ws"}, []step{
			wr("hold", "x"), wr("w", "x", "y"),
			wr("p1", "y/1"), wr("p2", "y/2"), wr("p3", "y/3"),
			next{"hold", "p1", "p2", "p3"},
			wr("late", "y/4"),
			next(nil),
			cancel{id: "w"},
			next{"late"},
		}},
		{"fleet cancel drops queued and stops running tasks", scheduler.Config{MaxRunning: 2, Root: "/ws"}, []step{
			in("f", rd("a")), in("g", rd("b")), in("f", rd("c")), in("f", wr("d", "x")), in("g", rd("e")),
			next{"a", "b"},
			cancelFleet{fleet: "f", dropped: []string{"c", "d"}, stopping: []string{"a"}},
			state{id: "c", state: scheduler.Ended, outcome: scheduler.OutcomeCancelled},
			state{id: "a", state: scheduler.Stopping, outcome: scheduler.OutcomeCancelled},
			counts{queued: 1, running: 2, stopping: 1, ended: 2},
			next(nil), // the stopping task still holds its slot
			cancelFleet{fleet: "f"},
			finish{id: "a", outcome: scheduler.OutcomeCancelled},
			next{"e"},
			cancelFleet{fleet: "nobody"},
		}},
		{"empty fleet id cancels nothing", caps63, []step{
			rd("a"), next{"a"}, rd("b"), // one running, one queued, both ungrouped
			cancelFleet{fleet: ""},
			counts{queued: 1, running: 1},
		}},
		{"cancel a queued task ends it at once", scheduler.Config{MaxRunning: 1}, []step{
			rd("a"), rd("b"), next{"a"},
			cancel{id: "b"},
			state{id: "b", state: scheduler.Ended, outcome: scheduler.OutcomeCancelled},
			cancel{id: "b", err: scheduler.ErrEnded},
			finish{id: "b", err: scheduler.ErrEnded},
			finish{id: "a", outcome: scheduler.OutcomeFinished},
			next(nil),
		}},
		{"cancel a running task keeps its slot until Finish", scheduler.Config{MaxRunning: 1, MaxWriters: 1, Root: "/ws"}, []step{
			wr("a", "x"), rd("b"), next{"a"},
			cancel{id: "a", wasRunning: true},
			cancel{id: "a", err: scheduler.ErrStopping},
			next(nil),
			counts{queued: 1, running: 1, writers: 1, stopping: 1},
			finish{id: "a", outcome: scheduler.OutcomeCancelled},
			finish{id: "a", err: scheduler.ErrEnded},
			next{"b"},
		}},
		{"expired lists running tasks at their deadline once", caps63, []step{
			timeout(10*time.Second, rd("slow")), timeout(5*time.Second, rd("fast")), rd("forever"),
			next{"slow", "fast", "forever"},
			tick(4 * time.Second), expired(nil),
			tick(time.Second), expired{"fast"},
			expired(nil),
			tick(10 * time.Second), expired{"slow"},
			state{id: "fast", state: scheduler.Stopping, outcome: scheduler.OutcomeExpired},
			cancel{id: "fast", err: scheduler.ErrStopping},
			finish{id: "fast", outcome: scheduler.OutcomeExpired},
			finish{id: "slow", outcome: scheduler.OutcomeExpired},
			finish{id: "forever", outcome: scheduler.OutcomeFinished},
		}},
		{"expired orders by deadline, ties by start", caps63, []step{
			timeout(3*time.Second, rd("a")), timeout(2*time.Second, rd("b")), timeout(2*time.Second, rd("c")),
			next{"a", "b", "c"},
			tick(time.Hour), expired{"b", "c", "a"},
		}},
		{"deadline counts from the start, not the submission", scheduler.Config{MaxRunning: 1}, []step{
			rd("first"), timeout(5*time.Second, rd("later")),
			next{"first"},
			tick(10 * time.Second), expired(nil),
			finish{id: "first", outcome: scheduler.OutcomeFinished},
			next{"later"},
			tick(4 * time.Second), expired(nil),
			tick(time.Second), expired{"later"},
		}},
		{"a cancelled task is not reported as expired", caps63, []step{
			timeout(time.Second, rd("a")), next{"a"},
			cancel{id: "a", wasRunning: true},
			tick(time.Minute), expired(nil),
			finish{id: "a", outcome: scheduler.OutcomeCancelled},
		}},
		{"duplicate and unknown ids", caps63, []step{
			rd("a"),
			submit{task: scheduler.Task{ID: "a"}, err: scheduler.ErrDuplicateID},
			finish{id: "a", err: scheduler.ErrNotRunning},
			finish{id: "zz", err: scheduler.ErrUnknownID},
			cancel{id: "zz", err: scheduler.ErrUnknownID},
			next{"a"},
			finish{id: "a", outcome: scheduler.OutcomeFinished},
			submit{task: scheduler.Task{ID: "a"}, err: scheduler.ErrDuplicateID},
			counts{ended: 1},
		}},
		{"invalid tasks are refused and leave nothing behind", caps63, []step{
			submit{task: scheduler.Task{}, err: scheduler.ErrInvalidTask},
			submit{task: scheduler.Task{ID: "neg", Timeout: -time.Second}, err: scheduler.ErrInvalidTask},
			submit{task: scheduler.Task{ID: "rw", WritePaths: []string{"a"}}, err: scheduler.ErrInvalidTask},
			submit{task: scheduler.Task{ID: "up", Writer: true, WritePaths: []string{"../x"}}, err: scheduler.ErrBadClaim},
			submit{task: scheduler.Task{ID: "abs", Writer: true, WritePaths: []string{"/etc/passwd"}}, err: scheduler.ErrBadClaim},
			submit{task: scheduler.Task{ID: "sib", Writer: true, WritePaths: []string{"/wsx/a"}}, err: scheduler.ErrBadClaim},
			submit{task: scheduler.Task{ID: "empty", Writer: true, WritePaths: []string{"a", ""}}, err: scheduler.ErrBadClaim},
			submit{task: scheduler.Task{ID: "late", Writer: true, WritePaths: []string{".", ".."}}, err: scheduler.ErrBadClaim},
			counts{},
			rd("up"), // a refused id stays free
			next{"up"},
		}},
		{"absolute path without a root is refused", scheduler.Config{}, []step{
			submit{task: scheduler.Task{ID: "abs", Writer: true, WritePaths: []string{"/ws/a"}}, err: scheduler.ErrBadClaim},
			submit{task: scheduler.Task{ID: "up", Writer: true, WritePaths: []string{"a/../.."}}, err: scheduler.ErrBadClaim},
			wr("rel", "a/b"),
			next{"rel"},
		}},
	})
}

// TestQueueOverlap checks the conflict rule on pairs of claims: the second
// writer starts only when it does not overlap the first, running one.
func TestQueueOverlap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		a, b     []string
		conflict bool
	}{
		{"same file", []string{"a/b.go"}, []string{"a/b.go"}, true},
		{"directory contains file", []string{"a/b"}, []string{"a/b/c.go"}, true},
		{"file inside directory", []string{"a/b/c.go"}, []string{"a/b"}, true},
		{"deep containment", []string{"a"}, []string{"a/b/c/d/e.go"}, true},
		{"shared prefix is not containment", []string{"a/b"}, []string{"a/bc"}, false},
		{"sibling files", []string{"a/b.go"}, []string{"a/c.go"}, false},
		{"unrelated trees", []string{"a"}, []string{"b"}, false},
		{"dash sorts before slash", []string{"a-b"}, []string{"a/b"}, false},
		{"any of several claims", []string{"x", "y"}, []string{"z", "y/q"}, true},
		{"none of several claims", []string{"x", "y"}, []string{"z", "yy"}, false},
		{"whole workspace against a file", nil, []string{"a/b.go"}, true},
		{"file against whole workspace", []string{"a/b.go"}, nil, true},
		{"two whole workspaces", nil, nil, true},
		{"trailing slash", []string{"a/b/"}, []string{"a/b/c"}, true},
		{"dot prefix", []string{"./a"}, []string{"a"}, true},
		{"double slash", []string{"a//b"}, []string{"a/b/c"}, true},
		{"parent step inside the root", []string{"x/../a"}, []string{"a/b"}, true},
		{"absolute under root", []string{"/ws/a"}, []string{"a/x"}, true},
		{"climb out and back in", []string{"../ws/a"}, []string{"a"}, true},
		{"dotted name is not a parent", []string{"..foo"}, []string{"foo"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := next{"a", "b"}
			if tc.conflict {
				want = next{"a"}
			}
			runScript(t, caps63, []step{wr("a", tc.a...), wr("b", tc.b...), want})
		})
	}
}

// TestQueueClaims checks the normalised form Lookup reports.
func TestQueueClaims(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		root  string
		paths []string
		want  []string
	}{
		{"no paths is the whole workspace", "/ws", nil, []string{"."}},
		{"empty list is the whole workspace", "/ws", []string{}, []string{"."}},
		{"cleaned and made relative", "/ws", []string{"./a//b/", "/ws/c/../d"}, []string{"a/b", "d"}},
		{"contained claims fold into their directory", "/ws", []string{"a/b/c.go", "a", "a/b"}, []string{"a"}},
		{"duplicates fold", "/ws", []string{"x", "x/", "./x"}, []string{"x"}},
		{"sorted", "/ws", []string{"z", "a-b", "a/b"}, []string{"a-b", "a/b", "z"}},
		{"whole workspace absorbs the rest", "/ws", []string{"a", "-dash", "b/.."}, []string{"."}},
		{"root with trailing slash", "/ws/", []string{"/ws/a"}, []string{"a"}},
		{"no root keeps relative paths", "", []string{"a/./b"}, []string{"a/b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q, err := scheduler.New(scheduler.Config{Root: tc.root})
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Submit(scheduler.Task{ID: "w", Writer: true, WritePaths: tc.paths}, t0); err != nil {
				t.Fatal(err)
			}
			st, _ := q.Lookup("w")
			if !slices.Equal(st.Claims, tc.want) {
				t.Fatalf("claims of %q = %q, want %q", tc.paths, st.Claims, tc.want)
			}
		})
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     scheduler.Config
		wantErr bool
	}{
		{"zero config takes defaults", scheduler.Config{}, false},
		{"smallest caps", scheduler.Config{MaxRunning: 1, MaxWriters: 1}, false},
		{"largest caps", scheduler.Config{MaxRunning: 64, MaxWriters: 32}, false},
		{"running over 64", scheduler.Config{MaxRunning: 65}, true},
		{"running negative", scheduler.Config{MaxRunning: -1}, true},
		{"writers over 32", scheduler.Config{MaxWriters: 64}, true},
		{"writers negative", scheduler.Config{MaxWriters: -3}, true},
		{"relative root", scheduler.Config{Root: "ws"}, true},
		{"absolute root", scheduler.Config{Root: "/home/me/project"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q, err := scheduler.New(tc.cfg)
			if tc.wantErr {
				if !errors.Is(err, scheduler.ErrConfig) || q != nil {
					t.Fatalf("New(%+v) = %v, %v; want ErrConfig", tc.cfg, q, err)
				}
				return
			}
			if err != nil || q == nil {
				t.Fatalf("New(%+v) = %v, %v", tc.cfg, q, err)
			}
		})
	}
}

// TestStatus checks the per-task view a status query gets.
func TestStatus(t *testing.T) {
	t.Parallel()
	q, err := scheduler.New(scheduler.Config{MaxRunning: 2, Root: "/ws"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range []scheduler.Task{
		{ID: "a", Fleet: "f", Writer: true, WritePaths: []string{"src"}, Timeout: time.Minute},
		{ID: "b"},
		{ID: "c", Fleet: "f"},
		{ID: "d"},
	} {
		if err := q.Submit(tk, t0); err != nil {
			t.Fatal(err)
		}
	}
	q.Next(t0.Add(time.Second))
	if _, err := q.Cancel("b", t0.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Cancel("d", t0.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	got := q.Status()
	type row struct {
		id    string
		state scheduler.State
	}
	var rows []row
	for _, ts := range got.Tasks {
		rows = append(rows, row{ts.ID, ts.State})
	}
	want := []row{{"a", scheduler.Running}, {"b", scheduler.Stopping}, {"c", scheduler.Queued}}
	if !slices.Equal(rows, want) {
		t.Fatalf("Status tasks = %v, want %v", rows, want)
	}
	a := got.Tasks[0]
	if !a.Writer || a.Fleet != "f" || !slices.Equal(a.Claims, []string{"src"}) ||
		!a.Submitted.Equal(t0) || !a.Started.Equal(t0.Add(time.Second)) ||
		!a.Deadline.Equal(t0.Add(time.Second+time.Minute)) {
		t.Fatalf("status of a = %+v", a)
	}
	if got.Queued != 1 || got.Running != 2 || got.Writers != 1 || got.Stopping != 1 || got.Ended != 1 {
		t.Fatalf("Status counts = %+v", got)
	}
	d, ok := q.Lookup("d")
	if !ok || d.State != scheduler.Ended || !d.EndedAt.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("Lookup(d) = %+v, %v", d, ok)
	}
	if _, ok := q.Lookup("nope"); ok {
		t.Fatal("Lookup found an id never submitted")
	}
	// The snapshot is a copy: changing it leaves the Queue alone.
	got.Tasks[0].Claims[0] = "elsewhere"
	if a2, _ := q.Lookup("a"); a2.Claims[0] != "src" {
		t.Fatalf("snapshot shares claims with the Queue: %q", a2.Claims)
	}
}

// TestSubmitCopiesWritePaths checks that a caller reusing its slice cannot
// change a queued task's claims.
func TestSubmitCopiesWritePaths(t *testing.T) {
	t.Parallel()
	q, err := scheduler.New(scheduler.Config{Root: "/ws"})
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"a"}
	if err := q.Submit(scheduler.Task{ID: "w", Writer: true, WritePaths: paths}, t0); err != nil {
		t.Fatal(err)
	}
	paths[0] = "b"
	starts := q.Next(t0)
	if len(starts) != 1 || starts[0].Task.WritePaths[0] != "a" {
		t.Fatalf("Next = %+v, want the task as submitted", starts)
	}
}

func TestStringers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"queued", scheduler.Queued.String(), "queued"},
		{"running", scheduler.Running.String(), "running"},
		{"stopping", scheduler.Stopping.String(), "stopping"},
		{"ended", scheduler.Ended.String(), "ended"},
		{"bad state", scheduler.State(0).String(), "unknown"},
		{"none", scheduler.OutcomeNone.String(), "none"},
		{"finished", scheduler.OutcomeFinished.String(), "finished"},
		{"cancelled", scheduler.OutcomeCancelled.String(), "cancelled"},
		{"expired", scheduler.OutcomeExpired.String(), "expired"},
		{"bad outcome", scheduler.Outcome(99).String(), "unknown"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.got != tc.want {
				t.Fatalf("String() = %q, want %q", tc.got, tc.want)
			}
		})
	}
}
