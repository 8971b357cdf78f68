package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"reasonix/cmd/reasonix/internal/fleetcmd"
	"reasonix/core/provider/providertest"
	"reasonix/core/testenv"
)

// onTmpfs moves e's home onto a fresh 2 MiB tmpfs (a disk that really
// fills up) and writes its config there.
func onTmpfs(t *testing.T, e *e2e, extra string) {
	t.Helper()
	e.home = testenv.Tmpfs(t, 2<<20)
	for i, kv := range e.env {
		switch {
		case strings.HasPrefix(kv, "HOME="):
			e.env[i] = "HOME=" + e.home
		case strings.HasPrefix(kv, "REASONIX_HOME="):
			e.env[i] = "REASONIX_HOME=" + e.home
		}
	}
	e.writeConfig(extra)
}

// diskFiller fills the home's disk once and frees it again, from the
// model fake's handler (so it reports with Errorf, never Fatal) or from the
// test.
type diskFiller struct {
	once sync.Once
	// path is set by the test once the home is known and read by the
	// fake's handler; the binary's request between them is no
	// synchronisation the race detector can see, so it is atomic.
	path atomic.Pointer[string]
}

func (d *diskFiller) setPath(p string) { d.path.Store(&p) }

func (d *diskFiller) fill(t *testing.T) {
	d.once.Do(func() {
		if _, err := testenv.Fill(*d.path.Load()); err != nil {
			t.Errorf("fill the disk: %v", err)
		}
	})
}

func (d *diskFiller) free(t *testing.T) {
	if err := os.Remove(*d.path.Load()); err != nil {
		t.Errorf("free the disk: %v", err)
	}
}

// big makes an answer longer than a page, so writing it needs room the
// full disk no longer has (a short record could still fit in the last
// page of its file).
func big(s string) string { return s + "\n" + strings.Repeat("detail line of the answer\n", 300) }

// TestE2EFullDiskRunIsIncomplete: with the home's disk full, a plain run
// still prints its answer, warns once on stderr, says at the end what was
// not saved and why (ENOSPC), and exits 1.
func TestE2EFullDiskRunIsIncomplete(t *testing.T) {
	t.Parallel()
	disk := &diskFiller{}
	e := newE2E(t, providertest.WithResponder(func(providertest.Request) providertest.Turn {
		disk.fill(t)
		return providertest.Turn{Text: big("the answer")}
	}))
	onTmpfs(t, e, "")
	disk.setPath(filepath.Join(e.home, "filler"))

	r := e.run("run", "what is it?")
	if r.code != 1 || !strings.HasPrefix(r.stdout, "the answer\n") {
		t.Fatalf("run on a full disk:\n%s", r)
	}
	if !regexp.MustCompile(`(?m)^reasonix: incomplete: transcript not saved: .*no space left on device \(ENOSPC\)`).MatchString(r.stderr) {
		t.Fatalf("no incomplete line naming the transcript and ENOSPC:\n%s", r.stderr)
	}
	if n := strings.Count(r.stderr, "reasonix: warn: transcript not saved"); n != 1 {
		t.Fatalf("%d warnings about the transcript, want one:\n%s", n, r.stderr)
	}
}

// TestE2EFullDiskFleetResumesWhatWasNotDelivered: the disk fills while a
// fleet runs. The run prints its answer, exits 1 and its JSON result is
// incomplete, naming the transcript, the fleet journal and ENOSPC; the
// fleet starts no task after its journal failed. Once space returns,
// `fleet resume` asks nothing of a task whose result reached the parent
// and runs the others.
func TestE2EFullDiskFleetResumesWhatWasNotDelivered(t *testing.T) {
	t.Parallel()
	disk := &diskFiller{}
	var mu sync.Mutex
	delivered := "" // the fleet result the parent read
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if isSubagent(req) {
			task := req.FirstUser()
			if task == "task 2" {
				disk.fill(t) // task 2's result is the first that cannot be journalled
			}
			return providertest.Turn{Text: big("done with " + task)}
		}
		if res := toolResults(req); len(res) > 0 {
			mu.Lock()
			delivered = res[0].Content
			mu.Unlock()
			return providertest.Turn{Text: big("parent read the fleet")}
		}
		return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet", Arguments: fleetArgs(3, nil)}}}
	}))
	onTmpfs(t, e, "\n[agent]\nmax_subagent_concurrency = 1\n")
	disk.setPath(filepath.Join(e.home, "filler"))

	r := e.run("run", "-o", "json", "fan out")
	var out struct {
		Status, Text, Error string
	}
	if r.code != 1 || json.Unmarshal([]byte(r.stdout), &out) != nil {
		t.Fatalf("run on a disk that fills up:\n%s", r)
	}
	if out.Status != "incomplete" || !strings.HasPrefix(out.Text, "parent read the fleet") ||
		!strings.HasPrefix(out.Error, "incomplete: ") || !strings.Contains(out.Error, "transcript not saved: ") ||
		!strings.Contains(out.Error, "fleet journal not saved: ") || !strings.Contains(out.Error, "(ENOSPC)") {
		t.Fatalf("result: %+v", out)
	}
	asked := func() map[string]int {
		n := map[string]int{}
		for _, req := range e.srv.Requests() {
			if isSubagent(req) {
				n[req.FirstUser()]++
			}
		}
		return n
	}
	before := asked()
	if before["task 3"] != 0 {
		t.Fatalf("task 3 started after the journal failed: %v", before)
	}
	mu.Lock()
	okInParent := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^## Task (\d+) \([^)]*\): ([a-z_]+)`).FindAllStringSubmatch(delivered, -1) {
		okInParent["task "+m[1]] = m[2] == "ok"
	}
	mu.Unlock()
	if !okInParent["task 1"] || okInParent["task 2"] || len(okInParent) != 3 {
		t.Fatalf("the parent read:\n%s", delivered)
	}

	disk.free(t)
	r = e.run("fleet", "list", "--json")
	var list []fleetcmd.FleetJSON
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil || len(list) != 1 || list[0].State != "interrupted" {
		t.Fatalf("fleet list after space returned:\n%s", r)
	}
	r = e.run("fleet", "resume", list[0].ID)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "3 tasks: 3 ok") {
		t.Fatalf("fleet resume:\n%s", r)
	}
	after := asked()
	for task, ok := range okInParent {
		switch {
		case ok && after[task] != before[task]:
			t.Errorf("%s reached the parent ok, yet the resume asked it again", task)
		case !ok && after[task] == before[task]:
			t.Errorf("%s did not reach the parent, yet the resume did not run it", task)
		}
	}
}

// TestE2EFullDiskSessionRecovers: a session of several turns on a disk
// that fills up and frees again: the turns on the full disk answer but end
// incomplete, the user is warned once, and once space returns the session
// says so, the records that waited are written, its turn ends ok, and the
// transcript holds every turn.
func TestE2EFullDiskSessionRecovers(t *testing.T) {
	t.Parallel()
	disk := &diskFiller{}
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		switch q := req.LastUser(); q {
		case "one":
			disk.fill(t)
		case "three":
			disk.free(t)
		}
		return providertest.Turn{Text: big("answer to " + req.LastUser())}
	}))
	onTmpfs(t, e, "")
	disk.setPath(filepath.Join(e.home, "filler"))

	s := e.stream()
	var statuses []string
	for _, q := range []string{"one", "two", "three"} {
		s.send(`{"type":"prompt","text":"` + q + `"}`)
		done := s.expect("turn_done", func(ev map[string]any) bool { return ev["task"] == nil })
		statuses = append(statuses, done["status"].(string))
		if q != "three" && !strings.Contains(done["error"].(string), "(ENOSPC)") {
			t.Errorf("turn %q on the full disk: %v", q, done)
		}
	}
	r := s.finish()
	if strings.Join(statuses, " ") != "incomplete incomplete ok" || r.code != 0 {
		t.Fatalf("turns ended %v, exit %d:\n%s", statuses, r.code, r.stderr)
	}
	warned, recovered := 0, 0
	for _, ev := range s.seen {
		msg, _ := ev["message"].(string)
		switch {
		case ev["type"] == "notice" && ev["level"] == "warn" && strings.HasPrefix(msg, "transcript not saved"):
			warned++
		case ev["type"] == "notice" && ev["level"] == "info" && strings.HasPrefix(msg, "transcript saved again"):
			recovered++
		}
	}
	if warned != 1 || recovered != 1 {
		t.Fatalf("%d warnings and %d recoveries, want one of each", warned, recovered)
	}
	files := e.transcripts()
	if len(files) != 1 {
		t.Fatalf("transcripts: %v", files)
	}
	data, err := os.ReadFile(files[0])
	must(t, err)
	for _, q := range []string{"one", "two", "three"} {
		if !strings.Contains(string(data), "answer to "+q) {
			t.Errorf("the transcript lost the answer to %q", q)
		}
	}
}
