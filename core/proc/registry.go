package proc

import (
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"time"
)

// ErrStopping is returned by Start once KillAll has run: the process is
// going down, and a child started now would outlive it.
var ErrStopping = errors.New("proc: shutting down, no new processes")

// tracked is the process-wide registry behind Start, Wait and KillAll.
var tracked = newRegistry()

// Start starts cmd as the leader of a new process group (see SetGroup) and
// records the group until Wait reaps cmd, so that KillAll can reach it.
// After KillAll it refuses with ErrStopping.
func Start(cmd *exec.Cmd) error { return tracked.start(cmd) }

// Wait waits for cmd, which Start started, kills what is left of its
// group (see SweepGroup) and forgets the group. The sweep comes before the
// group is forgotten, so a KillAll in between still reaches what cmd left
// behind.
func Wait(cmd *exec.Cmd) error { return tracked.wait(cmd) }

// KillAll kills every process group Start recorded and not yet waited for,
// and refuses new starts from then on. It is the last resort of a process
// that is about to exit without waiting for its work to stop. It returns
// once every group's leader has been reaped by its Wait, or when timeout
// has passed, whichever comes first; the error then says how many were
// not.
func KillAll(timeout time.Duration) error { return tracked.killAll(timeout) }

// registry records the commands started and not yet waited for.
type registry struct {
	mu      sync.Mutex
	cmds    map[*exec.Cmd]struct{}
	stopped bool
	// changed is closed and replaced whenever a command is forgotten, so
	// killAll waits for the reaping without polling.
	changed chan struct{}
}

func newRegistry() *registry {
	return &registry{cmds: map[*exec.Cmd]struct{}{}, changed: make(chan struct{})}
}

func (r *registry) start(cmd *exec.Cmd) error {
	r.mu.Lock()
	stopped := r.stopped
	r.mu.Unlock()
	if stopped {
		return ErrStopping
	}
	SetGroup(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	// No lock is held across cmd.Start, so a killAll may have taken its
	// list meanwhile: a start that lands after it kills its own group.
	// The command stays recorded so that killAll waits for its reaping too.
	r.mu.Lock()
	r.cmds[cmd] = struct{}{}
	late := r.stopped
	r.mu.Unlock()
	if late {
		KillGroup(cmd)
	}
	return nil
}

func (r *registry) wait(cmd *exec.Cmd) error {
	err := cmd.Wait()
	SweepGroup(cmd)
	r.mu.Lock()
	if _, ok := r.cmds[cmd]; ok {
		delete(r.cmds, cmd)
		close(r.changed)
		r.changed = make(chan struct{})
	}
	r.mu.Unlock()
	return err
}

func (r *registry) killAll(timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	r.mu.Lock()
	r.stopped = true
	cmds := make([]*exec.Cmd, 0, len(r.cmds))
	for cmd := range r.cmds {
		cmds = append(cmds, cmd)
	}
	r.mu.Unlock()

	// Killing is a signal on Unix but a taskkill process on Windows, so
	// the groups are killed side by side and the deadline bounds the lot.
	// Kills still under way at the deadline are left to finish on their
	// own: the caller is about to exit.
	killed := make(chan struct{})
	var wg sync.WaitGroup
	for _, cmd := range cmds {
		wg.Go(func() { KillGroup(cmd) })
	}
	go func() {
		wg.Wait()
		close(killed)
	}()
	select {
	case <-killed:
	case <-deadline.C:
		select {
		case <-killed: // both were ready; the kills made it
		default:
			return fmt.Errorf("proc: killing %d process groups took longer than %s", len(cmds), timeout)
		}
	}
	for {
		r.mu.Lock()
		left, changed := len(r.cmds), r.changed
		r.mu.Unlock()
		if left == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("proc: %d process groups still not reaped after %s", left, timeout)
		}
	}
}
