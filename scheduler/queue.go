package scheduler

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"time"
)

const (
	// DefaultMaxRunning is the run-slot cap used when Config.MaxRunning is
	// zero, matching agent.max_subagent_concurrency's default.
	DefaultMaxRunning = 6
	// DefaultMaxWriters is the writer-slot cap used when Config.MaxWriters
	// is zero, matching agent.max_parallel_writers's default.
	DefaultMaxWriters = 3
	// MaxRunningCap is the largest run-slot cap New accepts: a whole fleet
	// (64 tasks) may run at once. MaxWritersCap bounds writer slots. A
	// larger value is refused rather than clamped, because it is far more
	// likely a mistake in the config than a wish.
	MaxRunningCap = 64
	MaxWritersCap = 32
	// MaxPasses is how many later conflicting writers may start ahead of a
	// waiting writer before it holds its paths. It trades a little
	// throughput for a bound on how long any writer waits.
	MaxPasses = 3
)

// Config sets a Queue's caps and the workspace its writers claim paths in.
type Config struct {
	// MaxRunning is the local node's run slots, 1–64; zero means
	// DefaultMaxRunning. SetNode(Node{Name: ""}) may change it later, to
	// zero as well when the parent process should run no task itself.
	MaxRunning int
	// MaxWriters caps running writers, 1–32; zero means DefaultMaxWriters.
	MaxWriters int
	// Root is the absolute workspace root that write paths are normalised
	// against. When empty, only relative write paths are accepted.
	Root string
}

// Queue is the admission state of one session: every task it accepted and
// the slots they hold. Create it with New; the zero value is not usable.
type Queue struct {
	maxWriters int
	root       string
	passLimit  int

	local  *node
	nodes  []*node          // local first, then workers in the order added
	byName map[string]*node // workers only

	seq     uint64
	tasks   map[string]*task // every accepted task, ended ones included
	queued  []*task          // submission order
	running []*task          // start order, stopping tasks included

	writers  int
	stopping int
	ended    int
}

// New returns an empty Queue for cfg, or an error wrapping ErrConfig when a
// cap is outside its range (run slots 1–64, writer slots 1–32) or Root is
// not absolute.
func New(cfg Config) (*Queue, error) {
	maxRunning, err := resolveCap("max running", cfg.MaxRunning, DefaultMaxRunning, MaxRunningCap)
	if err != nil {
		return nil, err
	}
	maxWriters, err := resolveCap("max writers", cfg.MaxWriters, DefaultMaxWriters, MaxWritersCap)
	if err != nil {
		return nil, err
	}
	root := cfg.Root
	if root != "" {
		if !filepath.IsAbs(root) {
			return nil, fmt.Errorf("workspace root %q is not absolute: %w", root, ErrConfig)
		}
		root = filepath.Clean(root)
	}
	local := &node{Node: Node{Slots: maxRunning, Up: true, Writes: []string{wholeWorkspace}}}
	return &Queue{
		maxWriters: maxWriters,
		root:       root,
		passLimit:  MaxPasses,
		local:      local,
		nodes:      []*node{local},
		byName:     make(map[string]*node),
		tasks:      make(map[string]*task),
	}, nil
}

// resolveCap applies the default for zero and checks the allowed range.
func resolveCap(name string, v, def, max int) (int, error) {
	if v == 0 {
		return def, nil
	}
	if v < 1 || v > max {
		return 0, fmt.Errorf("%s %d outside 1–%d: %w", name, v, max, ErrConfig)
	}
	return v, nil
}

// Submit queues t behind every task already queued. It fails, leaving the
// Queue unchanged, when t is invalid, its id was used before, one of its
// write paths is bad, or no node known now, up or down, could ever run it
// (ErrNoNode): a writer whose claims no worker covers while the local node
// has no slots, or any task while no node has a slot. Nodes added later do
// not make a refused task acceptable retroactively; submit it again.
func (q *Queue) Submit(t Task, now time.Time) error {
	if err := q.validate(t); err != nil {
		return fmt.Errorf("submit task %q: %w", t.ID, err)
	}
	var claims []string
	if t.Writer && !t.Isolated {
		c, err := normalizeClaims(q.root, t.WritePaths)
		if err != nil {
			return fmt.Errorf("submit task %q: %w", t.ID, err)
		}
		claims = c
	}
	rec := &task{Task: t, claims: claims}
	if !q.placeable(rec) {
		return fmt.Errorf("submit task %q: %w", t.ID, ErrNoNode)
	}
	rec.WritePaths = slices.Clone(t.WritePaths)
	q.seq++
	rec.seq, rec.state, rec.submitted, rec.attempt = q.seq, Queued, now, 1
	q.tasks[t.ID] = rec
	q.queued = append(q.queued, rec)
	return nil
}

// validate checks the parts of a task that need no path handling.
func (q *Queue) validate(t Task) error {
	switch {
	case t.ID == "":
		return fmt.Errorf("empty id: %w", ErrInvalidTask)
	case t.Timeout < 0:
		return fmt.Errorf("negative timeout %v: %w", t.Timeout, ErrInvalidTask)
	case !t.Writer && len(t.WritePaths) > 0:
		return fmt.Errorf("reader declares write paths: %w", ErrInvalidTask)
	case !t.Writer && t.Isolated:
		return fmt.Errorf("reader marked isolated: %w", ErrInvalidTask)
	}
	if _, ok := q.tasks[t.ID]; ok {
		return ErrDuplicateID
	}
	return nil
}

// Next starts every queued task that may start now and returns them in
// launch order. Call it after any operation that queues work or frees a
// slot: Submit, Finish, and a Cancel or CancelFleet that dropped a queued
// task, since that may lift a reservation.
//
// Tasks are considered in submission order. A task is skipped, not waited
// on, when it cannot start: a writer while the writer cap is reached, while
// it conflicts with a running writer, while it conflicts with an earlier
// waiting writer that holds its paths, or while no up node covering its
// claims has a free slot. Starting a writer counts as a pass against each
// earlier waiting writer it conflicts with, and the pass that brings a
// writer to MaxPasses makes it hold its paths from then on, whatever keeps
// it waiting. A reader waits only when no up node has a free slot, and
// then so does everything after it.
//
// Each Start names the node it was placed on (see place for the choice)
// and the attempt it is.
func (q *Queue) Next(now time.Time) []Start {
	free := q.freeSlots()
	if len(q.queued) == 0 || free == 0 {
		return nil
	}
	var (
		starts []Start
		held   []*task // waiting writers, earlier in this scan, holding their paths
		kept   = q.queued[:0]
	)
	// kept reuses the queue's array: it never grows past the element being
	// read, so compaction in place is safe.
	for i, t := range q.queued {
		if free == 0 {
			if len(kept) == i {
				kept = q.queued // nothing started yet: the queue is unchanged
			} else {
				kept = append(kept, q.queued[i:]...)
			}
			break
		}
		// Placement first: it is the cheaper test when nodes are full.
		n := q.place(t)
		if n != nil && t.Writer && !q.admissible(t, held) {
			n = nil
		}
		if n == nil {
			// Only a writer gets here while slots are free. A reserved one
			// holds its paths whichever rule stopped it, so that a writer
			// whose only node is down or full is not passed without limit.
			if t.reserved {
				held = append(held, t)
			}
			kept = append(kept, t)
			continue
		}
		q.start(t, n, now)
		free--
		starts = append(starts, Start{Task: t.Task, Deadline: t.deadline, Node: n.Name, Attempt: t.attempt})
		if !t.Writer {
			continue
		}
		for _, w := range kept {
			if !w.Writer || w.reserved || !overlaps(w.claims, t.claims) {
				continue
			}
			w.passes++
			if w.passes >= q.passLimit {
				w.reserved = true
				held = append(held, w)
			}
		}
	}
	clear(q.queued[len(kept):])
	q.queued = kept
	return starts
}

// admissible reports whether writer t may take a writer slot now, given the
// waiting writers that hold their paths ahead of it.
func (q *Queue) admissible(t *task, held []*task) bool {
	if q.writers >= q.maxWriters {
		return false
	}
	for _, r := range q.running {
		if r.Writer && overlaps(r.claims, t.claims) {
			return false
		}
	}
	for _, h := range held {
		if overlaps(h.claims, t.claims) {
			return false
		}
	}
	return true
}

// start moves a queued task into the running set on node n.
func (q *Queue) start(t *task, n *node, now time.Time) {
	t.state = Running
	t.node = n
	n.running++
	t.started = now
	t.reserved = false
	if t.Timeout > 0 {
		t.deadline = now.Add(t.Timeout)
	}
	q.running = append(q.running, t)
	if t.Writer {
		q.writers++
	}
}

// Finish records that a running or stopping task has stopped, frees its
// slots and returns how it ended. It fails for a queued, ended or unknown
// task, so each task is finished at most once.
func (q *Queue) Finish(id string, now time.Time) (Outcome, error) {
	t, ok := q.tasks[id]
	if !ok {
		return OutcomeNone, fmt.Errorf("finish task %q: %w", id, ErrUnknownID)
	}
	switch t.state {
	case Queued:
		return OutcomeNone, fmt.Errorf("finish task %q: %w", id, ErrNotRunning)
	case Ended:
		return OutcomeNone, fmt.Errorf("finish task %q: %w", id, ErrEnded)
	case Stopping:
		q.stopping--
	default:
		t.outcome = OutcomeFinished
	}
	q.release(t)
	q.end(t, t.outcome, now)
	return t.outcome, nil
}

// release frees the run slot, node slot and writer slot of a running or
// stopping task. The task keeps its node, so Lookup still says where an
// ended task ran.
func (q *Queue) release(t *task) {
	q.running = slices.DeleteFunc(q.running, func(r *task) bool { return r == t })
	t.node.running--
	if t.Writer {
		q.writers--
	}
}

// Requeue puts a running task whose attempt was lost (its node went away)
// back in the queue at its original submission position, frees its slots,
// and returns the number of the attempt its next start will be. It is not
// an end: the task still ends exactly once, later. Call Next afterwards.
//
// A task that has had MaxAttempts attempts is refused with ErrAttempts and
// stays running, so the caller ends it with Finish (and reports it failed).
// Requeue also fails with ErrStopping for a task being stopped (its stop
// decides its end), ErrNotRunning for a queued task, ErrEnded for an ended
// one and ErrUnknownID. The attempt is 0 whenever err is not nil.
func (q *Queue) Requeue(id string, now time.Time) (attempt int, err error) {
	t, ok := q.tasks[id]
	if !ok {
		return 0, fmt.Errorf("requeue task %q: %w", id, ErrUnknownID)
	}
	switch t.state {
	case Queued:
		return 0, fmt.Errorf("requeue task %q: %w", id, ErrNotRunning)
	case Stopping:
		return 0, fmt.Errorf("requeue task %q: %w", id, ErrStopping)
	case Ended:
		return 0, fmt.Errorf("requeue task %q: %w", id, ErrEnded)
	}
	if t.attempt >= MaxAttempts {
		return 0, fmt.Errorf("requeue task %q after %d attempts: %w", id, t.attempt, ErrAttempts)
	}
	q.release(t)
	t.state = Queued
	t.node = nil
	t.attempt++
	t.passes = 0
	t.started, t.deadline = time.Time{}, time.Time{}
	t.requeued = now
	// q.queued is in seq order: Submit appends, everything else removes.
	i, _ := slices.BinarySearchFunc(q.queued, t.seq, func(w *task, seq uint64) int { return cmp.Compare(w.seq, seq) })
	q.queued = slices.Insert(q.queued, i, t)
	return t.attempt, nil
}

// Cancel cancels one task. A queued task ends at once and wasRunning is
// false. A running task becomes stopping and wasRunning is true: the caller
// must stop it and then call Finish, which reports OutcomeCancelled. It
// fails for a task already stopping or ended, and for an unknown id.
func (q *Queue) Cancel(id string, now time.Time) (wasRunning bool, err error) {
	t, ok := q.tasks[id]
	if !ok {
		return false, fmt.Errorf("cancel task %q: %w", id, ErrUnknownID)
	}
	switch t.state {
	case Queued:
		q.queued = slices.DeleteFunc(q.queued, func(w *task) bool { return w == t })
		q.end(t, OutcomeCancelled, now)
		return false, nil
	case Running:
		q.stop(t, OutcomeCancelled)
		return true, nil
	case Stopping:
		return false, fmt.Errorf("cancel task %q: %w", id, ErrStopping)
	default:
		return false, fmt.Errorf("cancel task %q: %w", id, ErrEnded)
	}
}

// CancelFleet cancels every queued and running task of fleet, as Cancel
// would one by one. Tasks of the fleet that are already stopping keep
// their outcome and are not listed again. An empty fleet names no fleet
// and cancels nothing, so ungrouped tasks cannot be cancelled by accident.
func (q *Queue) CancelFleet(fleet string, now time.Time) FleetCancel {
	var res FleetCancel
	if fleet == "" {
		return res
	}
	q.queued = slices.DeleteFunc(q.queued, func(t *task) bool {
		if t.Fleet != fleet {
			return false
		}
		q.end(t, OutcomeCancelled, now)
		res.Dropped = append(res.Dropped, t.ID)
		return true
	})
	for _, t := range q.running {
		if t.Fleet == fleet && t.state == Running {
			q.stop(t, OutcomeCancelled)
			res.Stopping = append(res.Stopping, t.ID)
		}
	}
	return res
}

// Expired marks as stopping every running task whose deadline is at or
// before now and returns their ids, earliest deadline first (ties in start
// order). Each task is reported once; the caller stops it and calls Finish,
// which reports OutcomeExpired.
func (q *Queue) Expired(now time.Time) []string {
	var due []*task
	for _, t := range q.running {
		if t.state == Running && !t.deadline.IsZero() && !now.Before(t.deadline) {
			due = append(due, t)
		}
	}
	slices.SortStableFunc(due, func(a, b *task) int { return a.deadline.Compare(b.deadline) })
	ids := make([]string, 0, len(due))
	for _, t := range due {
		q.stop(t, OutcomeExpired)
		ids = append(ids, t.ID)
	}
	return ids
}

// stop marks a running task as stopping with the outcome Finish will report.
func (q *Queue) stop(t *task, outcome Outcome) {
	t.state = Stopping
	t.outcome = outcome
	q.stopping++
}

// end records the single terminal transition of a task.
func (q *Queue) end(t *task, outcome Outcome, now time.Time) {
	t.state = Ended
	t.outcome = outcome
	t.reserved = false
	t.ended = now
	q.ended++
}

// Status returns a snapshot of the queue for status queries.
func (q *Queue) Status() Snapshot {
	s := Snapshot{
		Queued:   len(q.queued),
		Running:  len(q.running),
		Writers:  q.writers,
		Stopping: q.stopping,
		Ended:    q.ended,
		Tasks:    make([]TaskStatus, 0, len(q.queued)+len(q.running)),
		Nodes:    make([]NodeStatus, 0, len(q.nodes)),
	}
	for _, n := range q.nodes {
		s.Nodes = append(s.Nodes, n.status())
	}
	live := append(slices.Clone(q.running), q.queued...)
	slices.SortFunc(live, func(a, b *task) int { return cmp.Compare(a.seq, b.seq) })
	for _, t := range live {
		s.Tasks = append(s.Tasks, t.status())
	}
	return s
}

// Lookup returns the status of any task the Queue accepted, ended ones
// included, so a late status query still gets an answer.
func (q *Queue) Lookup(id string) (TaskStatus, bool) {
	t, ok := q.tasks[id]
	if !ok {
		return TaskStatus{}, false
	}
	return t.status(), true
}
