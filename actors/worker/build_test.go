package worker

import (
	"strings"
	"testing"

	"reasonix/actors/agent"
	"reasonix/actors/event"
)

// TestBuildRefusesWhatOnlyTheSchedulerHasHere: a worker never builds a
// task that would open a path its scheduler names: a follow-up's
// transcript, or a worktree writer's directory.
func TestBuildRefusesWhatOnlyTheSchedulerHasHere(t *testing.T) {
	t.Parallel()
	w := &workerActor{}
	for _, tc := range []struct {
		name string
		spec event.TaskSpec
		want string
	}{
		{"follow-up", event.TaskSpec{ID: "f1.1+1", Of: "f1.1", Continue: "/home/u/.reasonix/t.jsonl"}, "follow-up"},
		{"worktree dir", event.TaskSpec{ID: "f1.2", Writer: true, Workdir: "/etc"}, "worktree"},
		{"worktree isolation", event.TaskSpec{ID: "f1.3", Writer: true, Isolation: event.IsolationWorktree}, "worktree"},
	} {
		_, err := w.build("ws", agent.TaskOwner{Parent: "s1"}, tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: build = %v, want a refusal naming %q", tc.name, err, tc.want)
		}
	}
}
