package assemble

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/actors/event"
	"reasonix/actors/fleet/isolate"
	"reasonix/actors/remote"
	"reasonix/actors/worker"
	"reasonix/core/provider/providertest"
	"reasonix/core/testenv"
)

// gatedAgents gives worktree writers an isolator whose Prepare waits for
// gate: a checkout as slow as the test wants.
type gatedAgents struct {
	*subagents
	gate chan struct{}
}

func (g gatedAgents) Isolator(parent string) isolate.Isolator {
	return gatedIsolator{Isolator: g.subagents.Isolator(parent), gate: g.gate}
}

type gatedIsolator struct {
	isolate.Isolator
	gate chan struct{}
}

func (g gatedIsolator) Prepare(ctx context.Context, fleetID string, spec event.TaskSpec) (isolate.Worktree, error) {
	select {
	case <-g.gate:
	case <-ctx.Done():
	}
	return g.Isolator.Prepare(ctx, fleetID, spec)
}

// TestWorkerMakesAWorktreeOffItsMailbox: while a worktree writer's
// worktree is being made, the worker answers its link's heartbeats and
// starts other tasks, counting the waiting start as running; once the
// worktree is made the writer is accepted, edits, and its changes come
// back with its end as a patch, while the worker's own checkout is left
// as it was.
func TestWorkerMakesAWorktreeOffItsMailbox(t *testing.T) {
	t.Parallel()
	testenv.Need(t, "git")
	gate := make(chan struct{})
	r := newWorkerRig(t, rigOpts{capacity: 3,
		wrap: func(d *subagents) worker.Agents { return gatedAgents{subagents: d, gate: gate} },
		prepare: func(cwd string) {
			if err := os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "i"}} {
				cmd := exec.Command("git", args...)
				cmd.Dir, cmd.Env = cwd, append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
		}})
	r.srv.Push(providertest.Turn{Text: "plain done"},
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "e", Name: "edit_file", Arguments: `{"path":"a.txt","old_string":"a","new_string":"b"}`}}},
		providertest.Turn{Text: "writer done"})
	// One probe is both the link and the writer's proxy, so the heartbeat
	// reaches the worker after the start.
	writer, plain := r.probe(), r.probe()
	writer.link(1, 60_000)
	writer.send(startMsg(1, 1, event.TaskSpec{ID: "f1.1", Prompt: "write", Writer: true, Isolation: event.IsolationWorktree}))
	writer.send(&remote.Heartbeat{Epoch: 1, N: 2})
	if ack := nextOf[*remote.HeartbeatAck](writer); ack.Running != 1 || ack.Free != 2 {
		t.Fatalf("while the worktree is made: %+v, want the start counted as running", ack)
	}
	plain.start(event.TaskSpec{ID: "f1.2", Prompt: "read"})
	if _, fin := plain.attempt(); fin.Status != event.StatusOK {
		t.Fatalf("the other task: %+v", fin)
	}
	close(gate)
	if acc := nextOf[*remote.Accepted](writer); acc.Task != "f1.1" {
		t.Fatalf("accepted = %+v", acc)
	}
	_, fin := writer.attempt()
	if fin.Status != event.StatusOK || fin.Changes == nil || fin.Changes.Error != "" || len(fin.Changes.Files) != 1 ||
		fin.Changes.Files[0] != "a.txt" || !strings.Contains(string(fin.Changes.Patch), "+b") {
		t.Fatalf("the writer finished %+v (changes %+v)", fin, fin.Changes)
	}
	r.waitIdle()
	if b, _ := os.ReadFile(filepath.Join(r.cwd, "a.txt")); string(b) != "a\n" {
		t.Errorf("the worker's checkout changed: a.txt = %q", b)
	}
}
