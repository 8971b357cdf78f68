package scheduler_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"reasonix/scheduler"
)

// The harness drives a real Queue and checks every reply against a model
// written independently of the package: its own path normaliser, its own
// component-wise overlap test, and its own record of each task's state. The
// property test and the fuzz target share it, so both check the same
// invariants:
//
//   - caps: no start puts a node above its slots, or is on a down node,
//     and running writers ≤ MaxWriters over all nodes;
//   - placement: a writer starts only on a node whose write paths cover
//     all its claims, and every start goes to the node the placement rule
//     picks (checked by the model's own choice, in launch order);
//   - safety: no two running (or stopping) writers overlap, on any nodes;
//   - exactly once: every accepted task ends once, through exactly one of
//     Cancel of a queued task, CancelFleet's Dropped, or Finish; Requeue
//     never ends one, and nothing is lost (the status lists every live
//     task, with its node and attempt);
//   - attempts: Requeue returns a task to its submission position with the
//     next attempt, and refuses after MaxAttempts;
//   - reader order: no task starts while an earlier reader is still queued,
//     which makes readers FIFO whatever node they go to and never stuck
//     behind a writer;
//   - bounded overtaking: at most MaxPasses later conflicting writers start
//     ahead of any writer;
//   - greediness: after Next, every queued task really is blocked;
//   - bounded waiting (when waitUnit > 0): see waitBound.

// t0 is the simulated epoch; simulated time is t0 plus whole seconds.
var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// errViolation marks harness errors that are broken invariants rather than
// problems with the workload itself.
var errViolation = errors.New("invariant violated")

func violation(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errViolation, fmt.Sprintf(format, args...))
}

// modelTask is the harness's own record of one submitted task.
type modelTask struct {
	task        scheduler.Task
	claims      [][]string // component lists; an empty list is the whole workspace
	seq         int
	state       scheduler.State
	outcome     scheduler.Outcome
	overtakes   int // later conflicting writers that started first
	ahead       int // tasks queued ahead of it at submission
	submitRound int
	ends        int
	node        *modelNode // where it runs or last ran; nil while queued
	attempt     int
}

// modelNode is the harness's record of one node.
type modelNode struct {
	name    string
	slots   int
	up      bool
	writes  [][]string // component lists; an empty list is the whole workspace
	running int
}

func (n *modelNode) free() int {
	if !n.up || n.running >= n.slots {
		return 0
	}
	return n.slots - n.running
}

// covers is the contract's eligibility rule: each claim lies under some
// write path of the node.
func (n *modelNode) covers(m *modelTask) bool {
	for _, c := range m.claims {
		if !slices.ContainsFunc(n.writes, func(w []string) bool { return isPrefix(w, c) }) {
			return false
		}
	}
	return true
}

// locality is the component count of the node's longest write path that
// covers one of the task's claims.
func (n *modelNode) locality(m *modelTask) int {
	best := 0
	for _, w := range n.writes {
		for _, c := range m.claims {
			if isPrefix(w, c) && len(w) > best {
				best = len(w)
			}
		}
	}
	return best
}

// check selects invariants; the checker's own tests switch single ones on
// to show each can fail.
type check int

const (
	checkStatus check = 1 << iota
	checkOvertaking
	checkWaiting
	checkAll = checkStatus | checkOvertaking | checkWaiting
)

// stats counts what a run exercised, so a passing property test can show
// it was not vacuous.
type stats struct {
	submitted, rejected, started, finished    int
	cancelledQueued, stopped, expired, passes int
	reservations, maxWait                     int
	requeued, exhausted, remote, nodeChanges  int
	// worstWaitPct is the longest wait seen as a percentage of its bound.
	worstWaitPct int
}

func (s *stats) add(o stats) {
	s.submitted += o.submitted
	s.rejected += o.rejected
	s.started += o.started
	s.finished += o.finished
	s.cancelledQueued += o.cancelledQueued
	s.stopped += o.stopped
	s.expired += o.expired
	s.passes += o.passes
	s.reservations += o.reservations
	s.requeued += o.requeued
	s.exhausted += o.exhausted
	s.remote += o.remote
	s.nodeChanges += o.nodeChanges
	s.maxWait = max(s.maxWait, o.maxWait)
	s.worstWaitPct = max(s.worstWaitPct, o.worstWaitPct)
}

type harness struct {
	q          *scheduler.Queue
	checks     check
	stats      stats
	root       string
	maxWriters int
	nodes      []*modelNode // local first, then workers in the order added
	// waitUnit is the most rounds any running task keeps its slots; zero
	// turns the bounded-waiting check off (the fuzz target picks finish
	// order freely, so no such bound exists there).
	waitUnit int
	round    int

	seq     int
	tasks   map[string]*modelTask
	all     []*modelTask // submission order
	queued  []*modelTask // submission order
	running []*modelTask // start order, stopping ones included
	trace   strings.Builder
}

func newHarness(q *scheduler.Queue, cfg scheduler.Config, waitUnit int) *harness {
	h := &harness{
		q:          q,
		root:       cfg.Root,
		maxWriters: cmpOr(cfg.MaxWriters, scheduler.DefaultMaxWriters),
		nodes: []*modelNode{{slots: cmpOr(cfg.MaxRunning, scheduler.DefaultMaxRunning), up: true,
			writes: [][]string{{}}}},
		waitUnit: waitUnit,
		checks:   checkAll,
		tasks:    make(map[string]*modelTask),
	}
	return h
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func (h *harness) logf(format string, args ...any) {
	fmt.Fprintf(&h.trace, "r%d ", h.round)
	fmt.Fprintf(&h.trace, format, args...)
	h.trace.WriteByte('\n')
}

// modelClaim resolves a write path the way the contract describes, without
// path/filepath: the root's components, then the path's, with "." dropped
// and ".." removing the previous component.
func modelClaim(root, raw string) ([]string, bool) {
	if raw == "" {
		return nil, false
	}
	rootParts := splitPath(root)
	abs := strings.HasPrefix(raw, "/")
	if abs && root == "" {
		return nil, false
	}
	var stack []string
	if !abs {
		stack = append(stack, rootParts...)
	}
	for _, c := range strings.Split(raw, "/") {
		switch c {
		case "", ".":
		case "..":
			if len(stack) == 0 {
				if root == "" {
					return nil, false // climbs above a relative base
				}
				continue // a rooted path: "/.." is "/"
			}
			stack = stack[:len(stack)-1]
		default:
			stack = append(stack, c)
		}
	}
	if len(stack) < len(rootParts) || !slices.Equal(stack[:len(rootParts)], rootParts) {
		return nil, false
	}
	return stack[len(rootParts):], true
}

func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// modelClaims resolves every write path of a writer; ok is false when any
// of them is bad.
func modelClaims(root string, t scheduler.Task) ([][]string, bool) {
	if !t.Writer {
		return nil, true
	}
	if len(t.WritePaths) == 0 {
		return [][]string{{}}, true
	}
	var out [][]string
	for _, p := range t.WritePaths {
		c, ok := modelClaim(root, p)
		if !ok {
			return nil, false
		}
		out = append(out, c)
	}
	return out, true
}

// isPrefix reports whether a's components start b's.
func isPrefix(a, b []string) bool {
	return len(a) <= len(b) && slices.Equal(a, b[:len(a)])
}

// conflict is the contract's rule, stated on components.
func conflict(a, b *modelTask) bool {
	if !a.task.Writer || !b.task.Writer {
		return false
	}
	for _, x := range a.claims {
		for _, y := range b.claims {
			if isPrefix(x, y) || isPrefix(y, x) {
				return true
			}
		}
	}
	return false
}

func (h *harness) reserved(m *modelTask) bool {
	return m.task.Writer && m.overtakes >= scheduler.MaxPasses
}

// waitBound is how many rounds a task may stay queued. With every running
// task ending within waitUnit rounds of its start, the head of the queue
// starts within (MaxPasses+2)·waitUnit rounds: its conflicting writers
// running when it became head end within one unit, at most MaxPasses later
// conflicting writers can each extend that by one unit, and one more unit
// frees a slot. A task with k tasks ahead of it becomes head after at most
// k such periods.
func (h *harness) waitBound(m *modelTask) int {
	return (m.ahead + 1) * (scheduler.MaxPasses + 2) * h.waitUnit
}

func (h *harness) submit(t scheduler.Task, now time.Time) error {
	err := h.q.Submit(t, now)
	h.logf("submit %q writer=%v paths=%q -> %v", t.ID, t.Writer, t.WritePaths, err)
	claims, claimsOK := modelClaims(h.root, t)
	var want error
	switch {
	case t.ID == "" || t.Timeout < 0 || (!t.Writer && len(t.WritePaths) > 0):
		want = scheduler.ErrInvalidTask
	case h.tasks[t.ID] != nil:
		want = scheduler.ErrDuplicateID
	case !claimsOK:
		want = scheduler.ErrBadClaim
	case !h.placeable(&modelTask{task: t, claims: claims}):
		want = scheduler.ErrNoNode
	}
	if want != nil {
		if !errors.Is(err, want) {
			return violation("submit %q: got error %v, want %v", t.ID, err, want)
		}
		h.stats.rejected++
		return nil
	}
	if err != nil {
		return violation("submit %q: unexpected error %v", t.ID, err)
	}
	h.seq++
	m := &modelTask{task: t, claims: claims, seq: h.seq, state: scheduler.Queued,
		ahead: len(h.queued), submitRound: h.round, attempt: 1}
	h.tasks[t.ID] = m
	h.all = append(h.all, m)
	h.queued = append(h.queued, m)
	h.stats.submitted++
	return h.checkClaims(m)
}

// checkClaims compares the Queue's normalised claims with the model's: the
// same coverage, sorted, none inside another.
func (h *harness) checkClaims(m *modelTask) error {
	st, ok := h.q.Lookup(m.task.ID)
	if !ok {
		return violation("lookup %q after submit: not found", m.task.ID)
	}
	if !m.task.Writer {
		if st.Claims != nil {
			return violation("reader %q has claims %q", m.task.ID, st.Claims)
		}
		return nil
	}
	return sameCoverage(fmt.Sprintf("task %q", m.task.ID), st.Claims, m.claims)
}

func (h *harness) next(now time.Time) ([]scheduler.Start, error) {
	starts := h.q.Next(now)
	ids := make([]string, len(starts))
	for i, s := range starts {
		ids[i] = s.Task.ID
	}
	h.logf("next -> %q", ids)
	for _, s := range starts {
		if err := h.admit(s, now); err != nil {
			return nil, err
		}
	}
	return starts, h.checkGreedy()
}

// admit checks one Start against the model at the moment it happens, in
// the order Next returned it, then applies it.
func (h *harness) admit(s scheduler.Start, now time.Time) error {
	m := h.tasks[s.Task.ID]
	if m == nil || m.state != scheduler.Queued {
		return violation("started %q, which is not queued", s.Task.ID)
	}
	n := h.node(s.Node)
	switch {
	case n == nil:
		return violation("started %q on unknown node %q", m.task.ID, s.Node)
	case !n.up:
		return violation("started %q on down node %q", m.task.ID, s.Node)
	case n.running+1 > n.slots:
		return violation("starting %q exceeds node %q's %d slots", m.task.ID, n.name, n.slots)
	case m.task.Writer && !n.covers(m):
		return violation("writer %q %q started on node %q, which writes only %q", m.task.ID, m.task.WritePaths, n.name, n.writes)
	case s.Attempt != m.attempt:
		return violation("start %q attempt %d, want %d", m.task.ID, s.Attempt, m.attempt)
	}
	if pick := h.pick(m); pick != n {
		return violation("started %q on node %q, the rule picks %q", m.task.ID, n.name, pick.name)
	}
	var want time.Time
	if m.task.Timeout > 0 {
		want = now.Add(m.task.Timeout)
	}
	if !s.Deadline.Equal(want) {
		return violation("start %q deadline %v, want %v", m.task.ID, s.Deadline, want)
	}
	if m.task.Writer {
		if h.writers()+1 > h.maxWriters {
			return violation("starting writer %q exceeds %d writers", m.task.ID, h.maxWriters)
		}
		for _, r := range h.running {
			if conflict(r, m) {
				return violation("writer %q started while overlapping writer %q runs", m.task.ID, r.task.ID)
			}
		}
	}
	for _, w := range h.queued {
		if w.seq >= m.seq {
			break
		}
		if !w.task.Writer {
			return violation("%q started while earlier reader %q waits", m.task.ID, w.task.ID)
		}
		if !conflict(w, m) {
			continue
		}
		if h.checks&checkOvertaking != 0 && h.reserved(w) {
			return violation("writer %q started ahead of reserved writer %q", m.task.ID, w.task.ID)
		}
		w.overtakes++
		h.stats.passes++
		if w.overtakes == scheduler.MaxPasses {
			h.stats.reservations++
		}
		if h.checks&checkOvertaking != 0 && w.overtakes > scheduler.MaxPasses {
			return violation("writer %q overtaken %d times", w.task.ID, w.overtakes)
		}
	}
	if err := h.checkWait(m, "started"); err != nil {
		return err
	}
	h.stats.started++
	if n.name != "" {
		h.stats.remote++
	}
	h.queued = slices.DeleteFunc(h.queued, func(x *modelTask) bool { return x == m })
	m.state = scheduler.Running
	m.node = n
	n.running++
	h.running = append(h.running, m)
	return nil
}

// node returns the model's node of that name, nil if none.
func (h *harness) node(name string) *modelNode {
	for _, n := range h.nodes {
		if n.name == name {
			return n
		}
	}
	return nil
}

// pick is the placement rule stated on the model: among up nodes with a
// free slot (covering the claims, for a writer), the longest covering
// write path for a writer, then the most free slots, then the node order.
func (h *harness) pick(m *modelTask) *modelNode {
	var best *modelNode
	for _, n := range h.nodes {
		if n.free() == 0 || (m.task.Writer && !n.covers(m)) {
			continue
		}
		if best == nil {
			best = n
			continue
		}
		bl, nl := 0, 0
		if m.task.Writer {
			bl, nl = best.locality(m), n.locality(m)
		}
		if nl > bl || (nl == bl && n.free() > best.free()) {
			best = n
		}
	}
	return best
}

// placeable is Submit's ErrNoNode rule: some node, up or down, has slots
// and could take the task.
func (h *harness) placeable(m *modelTask) bool {
	return slices.ContainsFunc(h.nodes, func(n *modelNode) bool {
		return n.slots > 0 && (!m.task.Writer || n.covers(m))
	})
}

// setNode calls SetNode and applies the change to the model when the
// model agrees it is valid.
func (h *harness) setNode(n scheduler.Node) error {
	err := h.q.SetNode(n)
	h.logf("set node %q slots=%d up=%v writes=%q -> %v", n.Name, n.Slots, n.Up, n.Writes, err)
	h.stats.nodeChanges++
	var writes [][]string
	valid := true
	if n.Name == "" {
		valid = n.Slots >= 0 && n.Slots <= 64
	} else {
		valid = n.Slots >= 1 && n.Slots <= 64
		for _, p := range n.Writes {
			c, ok := modelClaim(h.root, p)
			if !ok {
				if valid && !errors.Is(err, scheduler.ErrBadClaim) {
					return violation("set node %q writes %q: got %v, want ErrBadClaim", n.Name, n.Writes, err)
				}
				valid = false
				break
			}
			writes = append(writes, c)
		}
	}
	if !valid {
		if !errors.Is(err, scheduler.ErrConfig) {
			return violation("set node %+v: got %v, want ErrConfig", n, err)
		}
		return nil
	}
	if err != nil {
		return violation("set node %+v: unexpected error %v", n, err)
	}
	// Write paths inside another one add nothing: fold them, so that
	// locality is measured on the normalised set, as the contract says.
	var folded [][]string
	for i, w := range writes {
		keep := true
		for j, o := range writes {
			// o is a proper container of w, or an equal path seen earlier.
			if j != i && isPrefix(o, w) && (len(o) < len(w) || j < i) {
				keep = false
				break
			}
		}
		if keep {
			folded = append(folded, w)
		}
	}
	writes = folded
	mn := h.node(n.Name)
	if mn == nil {
		mn = &modelNode{name: n.Name}
		h.nodes = append(h.nodes, mn)
	}
	mn.slots = n.Slots
	if n.Name != "" {
		mn.up, mn.writes = n.Up, writes
	}
	return nil
}

// requeue calls Requeue and checks its reply against the model.
func (h *harness) requeue(id string, now time.Time) (int, error) {
	got, err := h.q.Requeue(id, now)
	h.logf("requeue %q -> %d %v", id, got, err)
	m := h.lookup(id)
	var want error
	switch {
	case m == nil:
		want = scheduler.ErrUnknownID
	case m.state == scheduler.Queued:
		want = scheduler.ErrNotRunning
	case m.state == scheduler.Stopping:
		want = scheduler.ErrStopping
	case m.state == scheduler.Ended:
		want = scheduler.ErrEnded
	case m.attempt >= scheduler.MaxAttempts:
		want = scheduler.ErrAttempts
	}
	if want != nil {
		if !errors.Is(err, want) || got != 0 {
			return got, violation("requeue %q: got %d %v, want error %v", id, got, err, want)
		}
		if want == scheduler.ErrAttempts {
			h.stats.exhausted++
		}
		return got, nil
	}
	if err != nil || got != m.attempt+1 {
		return got, violation("requeue %q: got %d %v, want attempt %d", id, got, err, m.attempt+1)
	}
	h.stats.requeued++
	h.running = slices.DeleteFunc(h.running, func(x *modelTask) bool { return x == m })
	m.node.running--
	m.node = nil
	m.attempt++
	m.overtakes = 0
	m.state = scheduler.Queued
	i := 0
	for i < len(h.queued) && h.queued[i].seq < m.seq {
		i++
	}
	h.queued = slices.Insert(h.queued, i, m)
	return got, nil
}

// checkGreedy verifies that Next left nothing startable in the queue.
func (h *harness) checkGreedy() error {
	if !slices.ContainsFunc(h.nodes, func(n *modelNode) bool { return n.free() > 0 }) {
		return nil
	}
	var held []*modelTask
	for _, m := range h.queued {
		if !m.task.Writer {
			return violation("reader %q left waiting with a free run slot", m.task.ID)
		}
		blocked := h.writers() >= h.maxWriters ||
			slices.ContainsFunc(h.running, func(r *modelTask) bool { return conflict(r, m) }) ||
			slices.ContainsFunc(held, func(w *modelTask) bool { return conflict(w, m) }) ||
			h.pick(m) == nil
		if !blocked {
			return violation("writer %q left waiting though it could start", m.task.ID)
		}
		if h.reserved(m) {
			held = append(held, m)
		}
	}
	return nil
}

func (h *harness) writers() int {
	n := 0
	for _, r := range h.running {
		if r.task.Writer {
			n++
		}
	}
	return n
}

// end records a terminal transition reported by the Queue.
func (h *harness) end(m *modelTask, outcome scheduler.Outcome) error {
	m.ends++
	if m.ends > 1 {
		return violation("task %q ended %d times", m.task.ID, m.ends)
	}
	if m.state == scheduler.Running || m.state == scheduler.Stopping {
		m.node.running--
	}
	m.state = scheduler.Ended
	m.outcome = outcome
	h.queued = slices.DeleteFunc(h.queued, func(x *modelTask) bool { return x == m })
	h.running = slices.DeleteFunc(h.running, func(x *modelTask) bool { return x == m })
	return nil
}

// lookup returns the model's record of id, nil when it was never accepted.
func (h *harness) lookup(id string) *modelTask { return h.tasks[id] }

func (h *harness) finish(id string, now time.Time) (scheduler.Outcome, error) {
	got, err := h.q.Finish(id, now)
	h.logf("finish %q -> %v %v", id, got, err)
	m := h.lookup(id)
	var want error
	switch {
	case m == nil:
		want = scheduler.ErrUnknownID
	case m.state == scheduler.Queued:
		want = scheduler.ErrNotRunning
	case m.state == scheduler.Ended:
		want = scheduler.ErrEnded
	}
	if want != nil {
		if !errors.Is(err, want) || got != scheduler.OutcomeNone {
			return got, violation("finish %q: got %v %v, want error %v", id, got, err, want)
		}
		return got, nil
	}
	if err != nil {
		return got, violation("finish %q: unexpected error %v", id, err)
	}
	wantOutcome := scheduler.OutcomeFinished
	if m.state == scheduler.Stopping {
		wantOutcome = m.outcome
	}
	if got != wantOutcome {
		return got, violation("finish %q: outcome %v, want %v", id, got, wantOutcome)
	}
	h.stats.finished++
	return got, h.end(m, got)
}

func (h *harness) cancel(id string, now time.Time) (bool, error) {
	wasRunning, err := h.q.Cancel(id, now)
	h.logf("cancel %q -> %v %v", id, wasRunning, err)
	m := h.lookup(id)
	var want error
	switch {
	case m == nil:
		want = scheduler.ErrUnknownID
	case m.state == scheduler.Stopping:
		want = scheduler.ErrStopping
	case m.state == scheduler.Ended:
		want = scheduler.ErrEnded
	}
	if want != nil {
		if !errors.Is(err, want) || wasRunning {
			return wasRunning, violation("cancel %q: got %v %v, want error %v", id, wasRunning, err, want)
		}
		return false, nil
	}
	if err != nil || wasRunning != (m.state == scheduler.Running) {
		return wasRunning, violation("cancel %q in state %v: got %v %v", id, m.state, wasRunning, err)
	}
	if wasRunning {
		m.state = scheduler.Stopping
		m.outcome = scheduler.OutcomeCancelled
		h.stats.stopped++
		return true, nil
	}
	h.stats.cancelledQueued++
	return false, h.end(m, scheduler.OutcomeCancelled)
}

func (h *harness) cancelFleet(fleet string, now time.Time) (scheduler.FleetCancel, error) {
	got := h.q.CancelFleet(fleet, now)
	h.logf("cancel fleet %q -> %q %q", fleet, got.Dropped, got.Stopping)
	var want scheduler.FleetCancel
	if fleet != "" {
		for _, m := range h.queued {
			if m.task.Fleet == fleet {
				want.Dropped = append(want.Dropped, m.task.ID)
			}
		}
		for _, m := range h.running {
			if m.task.Fleet == fleet && m.state == scheduler.Running {
				want.Stopping = append(want.Stopping, m.task.ID)
			}
		}
	}
	if !slices.Equal(got.Dropped, want.Dropped) || !slices.Equal(got.Stopping, want.Stopping) {
		return got, violation("cancel fleet %q: got %q/%q, want %q/%q", fleet, got.Dropped, got.Stopping, want.Dropped, want.Stopping)
	}
	for _, id := range got.Dropped {
		if err := h.end(h.tasks[id], scheduler.OutcomeCancelled); err != nil {
			return got, err
		}
	}
	h.stats.cancelledQueued += len(got.Dropped)
	h.stats.stopped += len(got.Stopping)
	for _, id := range got.Stopping {
		m := h.tasks[id]
		m.state = scheduler.Stopping
		m.outcome = scheduler.OutcomeCancelled
	}
	return got, nil
}

func (h *harness) expired(now time.Time) ([]string, error) {
	got := h.q.Expired(now)
	h.logf("expired -> %q", got)
	type due struct {
		id       string
		deadline time.Time
	}
	var want []due
	for _, m := range h.running {
		if m.state != scheduler.Running || m.task.Timeout == 0 {
			continue
		}
		st, _ := h.q.Lookup(m.task.ID)
		if dl := st.Started.Add(m.task.Timeout); !dl.After(now) {
			want = append(want, due{m.task.ID, dl})
		}
	}
	slices.SortStableFunc(want, func(a, b due) int { return a.deadline.Compare(b.deadline) })
	wantIDs := make([]string, len(want))
	for i, d := range want {
		wantIDs[i] = d.id
	}
	if !slices.Equal(got, wantIDs) {
		return got, violation("expired at %v: got %q, want %q", now, got, wantIDs)
	}
	h.stats.expired += len(got)
	for _, id := range got {
		m := h.tasks[id]
		m.state = scheduler.Stopping
		m.outcome = scheduler.OutcomeExpired
	}
	return got, nil
}

// checkStatus compares the Queue's snapshot with the model and checks the
// caps and the no-overlap rule on the running set.
func (h *harness) checkStatus() error {
	if h.checks&checkStatus == 0 {
		return nil
	}
	s := h.q.Status()
	stopping, ended := 0, 0
	for _, m := range h.all {
		switch m.state {
		case scheduler.Stopping:
			stopping++
		case scheduler.Ended:
			ended++
		}
	}
	if s.Queued != len(h.queued) || s.Running != len(h.running) || s.Writers != h.writers() ||
		s.Stopping != stopping || s.Ended != ended {
		return violation("status %d queued %d running %d writers %d stopping %d ended; model %d %d %d %d %d",
			s.Queued, s.Running, s.Writers, s.Stopping, s.Ended,
			len(h.queued), len(h.running), h.writers(), stopping, ended)
	}
	if s.Writers > h.maxWriters {
		return violation("caps exceeded: %d writers", s.Writers)
	}
	if err := h.checkNodes(s.Nodes); err != nil {
		return err
	}
	for i, a := range h.running {
		for _, b := range h.running[i+1:] {
			if conflict(a, b) {
				return violation("overlapping writers %q and %q run together", a.task.ID, b.task.ID)
			}
		}
	}
	var live []*modelTask
	for _, m := range h.all {
		if m.state != scheduler.Ended {
			live = append(live, m)
		}
	}
	if len(s.Tasks) != len(live) {
		return violation("status lists %d tasks, model has %d live", len(s.Tasks), len(live))
	}
	for i, st := range s.Tasks {
		m := live[i]
		if st.ID != m.task.ID || st.State != m.state {
			return violation("status task %d is %q %v, model %q %v", i, st.ID, st.State, m.task.ID, m.state)
		}
		if m.state == scheduler.Queued && (st.Passes != m.overtakes || st.Reserved != h.reserved(m)) {
			return violation("status %q passes %d reserved %v, model %d %v", st.ID, st.Passes, st.Reserved, m.overtakes, h.reserved(m))
		}
		if m.state == scheduler.Stopping && st.Outcome != m.outcome {
			return violation("status %q outcome %v, model %v", st.ID, st.Outcome, m.outcome)
		}
		wantNode := ""
		if m.node != nil {
			wantNode = m.node.name
		}
		if st.Node != wantNode || st.Attempt != m.attempt {
			return violation("status %q on %q attempt %d, model %q %d", st.ID, st.Node, st.Attempt, wantNode, m.attempt)
		}
	}
	return nil
}

// checkNodes compares the snapshot's nodes with the model's: the same
// order, slots, up state, running count and write coverage, and the
// running tasks each node lists.
func (h *harness) checkNodes(got []scheduler.NodeStatus) error {
	if len(got) != len(h.nodes) {
		return violation("status lists %d nodes, model has %d", len(got), len(h.nodes))
	}
	for i, g := range got {
		n := h.nodes[i]
		if g.Node.Name != n.name || g.Node.Slots != n.slots || g.Node.Up != n.up || g.Running != n.running {
			return violation("status node %d = %+v, model %q slots %d up %v running %d", i, g, n.name, n.slots, n.up, n.running)
		}
		if err := sameCoverage("node "+n.name, g.Node.Writes, n.writes); err != nil {
			return err
		}
		var want []string
		for _, m := range h.running {
			if m.node == n {
				want = append(want, m.task.ID)
			}
		}
		if on := h.q.OnNode(n.name); !slices.Equal(on, want) {
			return violation("OnNode(%q) = %q, model %q", n.name, on, want)
		}
	}
	return nil
}

// sameCoverage checks a normalised claim list against the model's
// component lists: well formed, sorted, none inside another, each one asked
// for, and together covering every path asked for.
func sameCoverage(what string, claims []string, model [][]string) error {
	if len(model) == 0 {
		if len(claims) != 0 {
			return violation("%s has claims %q, want none", what, claims)
		}
		return nil
	}
	if !slices.IsSorted(claims) || len(claims) == 0 {
		return violation("%s claims %q not sorted or empty", what, claims)
	}
	got := make([][]string, len(claims))
	for i, c := range claims {
		if c != "." && (c == "" || strings.HasPrefix(c, "/") || c == ".." || strings.HasPrefix(c, "../")) {
			return violation("%s has malformed claim %q", what, c)
		}
		got[i] = splitPath(c)
		if strings.Join(got[i], "/") != c && c != "." {
			return violation("%s has unclean claim %q", what, c)
		}
	}
	for i, g := range got {
		if !slices.ContainsFunc(model, func(w []string) bool { return slices.Equal(w, g) }) {
			return violation("%s claim %q was not asked for", what, claims[i])
		}
		for j, o := range got {
			if i != j && isPrefix(g, o) {
				return violation("%s claim %q inside %q", what, claims[j], claims[i])
			}
		}
	}
	for _, w := range model {
		if !slices.ContainsFunc(got, func(g []string) bool { return isPrefix(g, w) }) {
			return violation("%s path %q not covered by %q", what, w, claims)
		}
	}
	return nil
}

// endRound checks that no queued task has waited longer than its bound.
func (h *harness) endRound() error {
	for _, m := range h.queued {
		if err := h.checkWait(m, "still queued"); err != nil {
			return err
		}
	}
	return nil
}

// checkWait applies waitBound to one task that is starting or waiting.
func (h *harness) checkWait(m *modelTask, what string) error {
	if h.waitUnit == 0 || h.checks&checkWaiting == 0 {
		return nil
	}
	wait := h.round - m.submitRound
	h.stats.maxWait = max(h.stats.maxWait, wait)
	h.stats.worstWaitPct = max(h.stats.worstWaitPct, 100*wait/h.waitBound(m))
	if wait > h.waitBound(m) {
		return violation("%q %s after %d rounds, bound %d", m.task.ID, what, wait, h.waitBound(m))
	}
	return nil
}

func (h *harness) live() int { return len(h.queued) + len(h.running) }

// checkAllEnded verifies exactly-once at the end of a run.
func (h *harness) checkAllEnded() error {
	for _, m := range h.all {
		if m.ends != 1 {
			return violation("task %q ended %d times", m.task.ID, m.ends)
		}
		st, ok := h.q.Lookup(m.task.ID)
		if !ok || st.State != scheduler.Ended || st.Outcome != m.outcome {
			return violation("lookup %q: %+v, model outcome %v", m.task.ID, st, m.outcome)
		}
	}
	return nil
}
