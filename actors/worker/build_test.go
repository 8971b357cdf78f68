package worker

import (
	"strings"
	"testing"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/remote"
)

// noWorktrees is an Agents that cannot make worktrees.
type noWorktrees struct{}

func (noWorktrees) AgentFor(agent.TaskOwner, event.TaskSpec) (agent.AgentSpec, error) {
	return agent.AgentSpec{}, nil
}

// TestBuildRefusesWhatOnlyTheSchedulerHasHere: a worker never builds a
// task that would open a path its scheduler names (a follow-up's
// transcript, a worktree directory), and a worktree writer only where the
// workspace can give it a worktree.
func TestBuildRefusesWhatOnlyTheSchedulerHasHere(t *testing.T) {
	t.Parallel()
	w := &workerActor{agents: map[string]Agents{"ws": noWorktrees{}}}
	for _, tc := range []struct {
		name string
		spec event.TaskSpec
		want string
	}{
		{"follow-up", event.TaskSpec{ID: "f1.1+1", Of: "f1.1", Continue: "/home/u/.reasonix/t.jsonl"}, "follow-up"},
		{"a scheduler's worktree dir", event.TaskSpec{ID: "f1.2", Writer: true, Isolation: event.IsolationWorktree, Workdir: "/etc"}, "named by its scheduler"},
	} {
		_, err := w.build("ws", agent.TaskOwner{Parent: "s1"}, tc.spec, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a refusal naming %q", tc.name, err, tc.want)
		}
	}
	if err := w.prepare("ws", &remote.Start{Spec: event.TaskSpec{ID: "f1.3", Writer: true, Isolation: event.IsolationWorktree}}, nil); err == nil ||
		!strings.Contains(err.Error(), "cannot give a writer a worktree") {
		t.Errorf("a worktree writer on a worker that cannot make worktrees: %v", err)
	}
}
