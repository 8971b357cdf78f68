package scheduler

import (
	"fmt"
	"slices"
	"strings"
)

const (
	// MaxNodeSlots is the largest number of run slots a node may have: a
	// whole fleet (64 tasks) may run on one worker.
	MaxNodeSlots = 64
	// MaxAttempts is how many times one task may be started. Requeue
	// refuses a task that has had this many attempts, so a task that keeps
	// losing its node ends failed instead of circling for ever.
	MaxAttempts = 3
)

// Node is a place tasks can run: the local process, named "" and always
// present, or a worker the caller added with SetNode.
type Node struct {
	// Name is "" for the local process, a worker's name otherwise.
	Name string
	// Slots is how many tasks may hold a run slot on the node at once:
	// 0–64 for the local node (0: the parent process runs no task
	// itself), 1–64 for a worker.
	Slots int
	// Up says the node takes new tasks. A lost or draining worker is down;
	// tasks already placed there stay until the caller requeues or
	// finishes them. The local node is always up: its Up is ignored.
	Up bool
	// Writes are the workspace paths a writer placed on the node may
	// modify, normalised like write paths ("." is the whole workspace).
	// Nil or empty means the node takes readers only. The local node
	// covers the whole workspace whatever is passed.
	Writes []string
}

// NodeStatus is one node as Status reports it.
type NodeStatus struct {
	// Node is as set, with Writes normalised (["."] for the local node).
	Node Node
	// Running counts the running and stopping tasks placed on the node.
	Running int
}

// node is the Queue's record of one node.
type node struct {
	Node
	running int // running and stopping tasks placed here
}

// free is how many more tasks the node may take now.
func (n *node) free() int {
	if !n.Up {
		return 0
	}
	return max(0, n.Slots-n.running)
}

// covers reports whether every claim lies under one of the node's write
// paths, which is what a writer needs to be placed there.
func (n *node) covers(claims []string) bool {
	for _, c := range claims {
		if !slices.ContainsFunc(n.Writes, func(w string) bool { return contains(w, c) }) {
			return false
		}
	}
	return true
}

// locality is the length, in path components, of the node's longest write
// path covering one of claims: a worker that owns "services/api" is a
// closer home for a writer there than one that owns everything. The whole
// workspace counts as zero.
func (n *node) locality(claims []string) int {
	best := 0
	for _, w := range n.Writes {
		if w == wholeWorkspace {
			continue
		}
		if slices.ContainsFunc(claims, func(c string) bool { return contains(w, c) }) {
			best = max(best, strings.Count(w, "/")+1)
		}
	}
	return best
}

func (n *node) status() NodeStatus {
	s := n.Node
	s.Writes = slices.Clone(n.Writes)
	return NodeStatus{Node: s, Running: n.running}
}

// SetNode adds a worker node, or updates a node already known, by name.
// Name "" is the local node: only its Slots (0–64) are taken from n. A
// worker needs 1–64 slots; its write paths are normalised against
// Config.Root. A bad slot count or write path is refused with an error
// wrapping ErrConfig (and ErrBadClaim for a path), leaving the node as it
// was.
//
// A change applies to placements from the next Next on. SetNode never
// ends or moves a task: tasks already on a node that goes down, or whose
// slots or write paths shrink, keep their slots there until the caller
// calls Requeue or Finish for them. Tasks already queued are not checked
// again, so a writer that no node can take any more waits until one can,
// or until it is cancelled; Submit's ErrNoNode check only covers the nodes
// known when the task arrives.
func (q *Queue) SetNode(n Node) error {
	if n.Name == "" {
		if n.Slots < 0 || n.Slots > MaxRunningCap {
			return fmt.Errorf("set local node: slots %d outside 0–%d: %w", n.Slots, MaxRunningCap, ErrConfig)
		}
		q.local.Slots = n.Slots
		return nil
	}
	if n.Slots < 1 || n.Slots > MaxNodeSlots {
		return fmt.Errorf("set node %q: slots %d outside 1–%d: %w", n.Name, n.Slots, MaxNodeSlots, ErrConfig)
	}
	var writes []string
	if len(n.Writes) > 0 {
		w, err := normalizeClaims(q.root, n.Writes)
		if err != nil {
			return fmt.Errorf("set node %q: %w: %w", n.Name, ErrConfig, err)
		}
		writes = w
	}
	rec := q.byName[n.Name]
	if rec == nil {
		rec = &node{}
		q.nodes = append(q.nodes, rec)
		q.byName[n.Name] = rec
	}
	rec.Node = Node{Name: n.Name, Slots: n.Slots, Up: n.Up, Writes: writes}
	return nil
}

// OnNode lists the running and stopping tasks placed on the named node, in
// start order: what the caller must requeue or fail when that node is lost.
func (q *Queue) OnNode(name string) []string {
	var ids []string
	for _, t := range q.running {
		if t.node.Name == name {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

// freeSlots is how many tasks could start now, over all up nodes.
func (q *Queue) freeSlots() int {
	free := 0
	for _, n := range q.nodes {
		free += n.free()
	}
	return free
}

// place picks the node a task that may start now runs on, nil when no
// eligible node has a free slot. A reader may run on any up node and goes
// where most slots are free; a writer only on a node covering all its
// claims, preferring the one with the longest covering write path. Ties go
// to the local node, then to the node added first.
func (q *Queue) place(t *task) *node {
	var best *node
	bestLoc, bestFree := 0, 0
	for _, n := range q.nodes {
		free := n.free()
		if free == 0 || t.Local && n.Name != "" {
			continue
		}
		loc := 0
		if t.Writer {
			if !n.covers(t.claims) {
				continue
			}
			loc = n.locality(t.claims)
		}
		// q.nodes is in tie-break order (local first), so only a strictly
		// better node replaces the one already chosen.
		if best == nil || loc > bestLoc || (loc == bestLoc && free > bestFree) {
			best, bestLoc, bestFree = n, loc, free
		}
	}
	return best
}

// placeable reports whether some known node could ever take t, up or not.
func (q *Queue) placeable(t *task) bool {
	return slices.ContainsFunc(q.nodes, func(n *node) bool {
		return n.Slots > 0 && (!t.Writer || n.covers(t.claims)) && (!t.Local || n.Name == "")
	})
}
