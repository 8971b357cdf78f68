package assemble

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/actors/agent"
	"reasonix/actors/fleet"
	"reasonix/core/config"
)

// TestAddWorkersFromConfig: [[workers]] and [remote] become the fleet's
// workers; without a token the run goes on with no workers.
func TestAddWorkersFromConfig(t *testing.T) {
	extra := `
[remote]
listen = "127.0.0.1:0"
heartbeat_ms = 250
miss_limit = 2
run_local = false

[[workers]]
name = "build1"
address = "build1.lan:7420"
capacity = 3
writes = ["src"]

[[workers]]
name = "build2"
address = "build2.lan:7420"
workspace = "other"
`
	cfg, cwd := buildConfig(t, "http://127.0.0.1:1/v1", extra)
	d := &subagents{cfg: cfg, cwd: cwd, logger: slog.New(slog.DiscardHandler), perms: agent.Permissions{Interactive: true}}

	t.Setenv(config.WorkerTokenEnv, "")
	spec := d.fleetSpec()
	if len(spec.Workers) != 0 || spec.Remote != nil {
		t.Errorf("no token, yet workers %+v remote %+v", spec.Workers, spec.Remote)
	}
	if !strings.Contains(spec.Warning, "workers not used") || !strings.Contains(spec.Warning, config.WorkerTokenEnv) {
		t.Errorf("no token: warning %q should say the workers are not used and name %s", spec.Warning, config.WorkerTokenEnv)
	}

	t.Setenv(config.WorkerTokenEnv, "s3cret")
	spec = d.fleetSpec()
	if spec.Remote == nil || spec.Remote.Token != "s3cret" || spec.Remote.Listen != "127.0.0.1:0" {
		t.Fatalf("remote = %+v", spec.Remote)
	}
	if spec.Heartbeat != 250*time.Millisecond || spec.MissLimit != 2 || spec.RunLocal || spec.LostPolicy != "rerun" || !spec.Interactive {
		t.Errorf("spec = %+v", spec)
	}
	if spec.Workspace != filepath.Base(spec.Root) {
		t.Errorf("workspace %q, root %q", spec.Workspace, spec.Root)
	}
	want := []fleet.WorkerSpec{
		{Name: "build1", Address: "build1.lan:7420", Capacity: 3, Writes: []string{"src"}},
		{Name: "build2", Address: "build2.lan:7420", Capacity: 4, Workspace: "other"},
	}
	if fmt.Sprint(spec.Workers) != fmt.Sprint(want) {
		t.Errorf("workers = %+v, want %+v", spec.Workers, want)
	}
}
