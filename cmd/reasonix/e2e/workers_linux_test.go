package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"reasonix/cmd/reasonix/internal/clitest"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/cmd/reasonix/internal/workercmd"
	"reasonix/core/testenv"
)

// TestE2EWorkersListsWorkerProcesses runs `reasonix workers` of the real
// binary against `reasonix worker` processes on loopback: one sharing the
// token, one with another token, and an address nobody serves. It checks
// the table, the JSON and the exit codes, then that the listing left the
// workers serving and no process behind.
func TestE2EWorkersListsWorkerProcesses(t *testing.T) {
	t.Parallel()
	r := newRig(t, map[string]string{"README.md": "a checkout\n"})
	good := r.startWorker("build1", 3, workerToken)
	stranger := r.startWorker("stranger", 2, "not-the-shared-token")
	dead := testenv.ClosedAddr(t)
	entry := func(name, addr string) string {
		return fmt.Sprintf("\n[[workers]]\nname = %q\naddress = %q\n", name, addr)
	}
	remote := "\n[remote]\nlisten = \"127.0.0.1:0\"\n"

	r.e.writeConfig(remote + entry("build1", good.addr))
	res := r.e.run("workers")
	if res.code != cmdutil.ExitOK {
		t.Fatalf("one worker, up: %s", res)
	}
	rows := clitest.TableRows(t, res.stdout)
	if got := rows["build1"]; len(got) != 8 || got[1] != good.addr || got[2] != "up" || got[3] != "3" || got[4] != "0" ||
		got[5] != "3" || got[7] != rigWorkspace {
		t.Errorf("build1 = %q\n%s", got, res.stdout)
	}

	r.e.writeConfig(remote + entry("build1", good.addr) + entry("stranger", stranger.addr) + entry("dead", dead))
	res = r.e.run("workers")
	if res.code != cmdutil.ExitFailed {
		t.Fatalf("one of three up: %s", res)
	}
	rows = clitest.TableRows(t, res.stdout)
	for name, state := range map[string]string{"build1": "up", "stranger": "bad token", "dead": "unreachable"} {
		if got := rows[name]; len(got) < 3 || got[2] != state {
			t.Errorf("%s = %q, want %s\n%s", name, got, state, res.stdout)
		}
	}
	res = r.e.run("workers", "--json")
	if res.code != cmdutil.ExitFailed {
		t.Fatalf("--json, one of three up: %s", res)
	}
	var list []workercmd.WorkerJSON
	if err := json.Unmarshal([]byte(res.stdout), &list); err != nil {
		t.Fatalf("--json: %v\n%s", err, res.stdout)
	}
	if len(list) != 3 || list[0].State != "up" || list[0].Capacity != 3 || list[0].Free != 3 || list[0].RTTMS <= 0 ||
		list[1].State != "bad token" || list[2].State != "unreachable" || !strings.Contains(list[2].Error, dead) {
		t.Errorf("--json = %+v", list)
	}
	// A status query holds no lease: the worker still answers afterwards
	// and stops cleanly.
	r.e.writeConfig(remote + entry("build1", good.addr))
	if res := r.e.run("workers"); res.code != cmdutil.ExitOK {
		t.Errorf("after the listings: %s", res)
	}
	finish(t, r, "build1", "stranger")
}
