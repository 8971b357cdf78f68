package e2e

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/cmd/reasonix/internal/fleetcmd"
	"reasonix/core/history"
	"reasonix/core/journal"
	"reasonix/core/provider/providertest"
	"reasonix/core/session"
)

// truncateHalf cuts a file to half its size, as a crash of the disk or
// the file system might.
func truncateHalf(t *testing.T, path string) {
	t.Helper()
	info, err := os.Stat(path)
	must(t, err)
	must(t, os.Truncate(path, info.Size()/2))
}

// TestE2EHistoryIndexRepairs: a truncated history.db, which the index
// being derived data must never make the user mend, is moved aside and
// rebuilt by `history reindex`, by `history search` and by the model's
// history tool, each time with one notice; the search after a repair
// says nothing.
func TestE2EHistoryIndexRepairs(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	const phrase = "run the ovenbird migrator with --dry-run first"
	ref, _ := oldHistory(t, e, phrase)
	db := history.Path(e.home)
	const notice = "the history index was damaged ("
	if r := e.run("history", "reindex"); r.code != 0 || strings.Contains(r.stderr, notice) {
		t.Fatalf("first reindex:\n%s", r)
	}

	truncateHalf(t, db)
	r := e.run("history", "reindex")
	if r.code != 0 || strings.Count(r.stderr, notice) != 1 || !strings.Contains(r.stderr, db+history.DamagedSuffix) ||
		!strings.Contains(r.stdout, "Indexed 2 files, 4 messages") {
		t.Fatalf("reindex of the damaged index:\n%s", r)
	}
	if _, err := os.Stat(db + history.DamagedSuffix); err != nil {
		t.Errorf("the damaged index was not kept aside: %v", err)
	}

	truncateHalf(t, db)
	search := func() result {
		t.Helper()
		r := e.run("history", "search", "--scope", "global", "ovenbird", "migrator")
		if r.code != 0 || !strings.Contains(r.stdout, ref) {
			t.Fatalf("search:\n%s", r)
		}
		return r
	}
	if r := search(); strings.Count(r.stderr, notice) != 1 || !strings.Contains(r.stderr, "malformed") {
		t.Fatalf("search of the damaged index gave no one notice:\n%s", r)
	}
	if r := search(); r.stderr != "" {
		t.Fatalf("the search after the repair:\n%s", r)
	}

	truncateHalf(t, db)
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "h1", Name: "history", Arguments: `{"query":"ovenbird","scope":"global"}`}}},
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "h2", Name: "history", Arguments: `{"query":"ovenbird","scope":"global"}`}}},
		providertest.Turn{Text: "Use --dry-run first."},
	)
	if r := e.run("run", "how did we run the migration?"); r.code != 0 {
		t.Fatalf("run:\n%s", r)
	}
	reqs := e.srv.Requests()
	first, second := reqs[len(reqs)-2].Last(), reqs[len(reqs)-1].Last()
	if first.ToolCallID != "h1" || !strings.HasPrefix(first.Content, "Note: "+notice) || !strings.Contains(first.Content, "ref="+ref) {
		t.Errorf("the tool's answer from the damaged index:\n%s", first.Content)
	}
	if second.ToolCallID != "h2" || strings.Contains(second.Content, "damaged") || !strings.Contains(second.Content, "ref="+ref) {
		t.Errorf("the tool's next answer:\n%s", second.Content)
	}
}

// TestE2EGoalListShowsDamaged: a goal record cut short, and a file of
// garbage, are listed as damaged with the cause rather than left out
// (the list once said "no goals"), `goal status` and `goal resume` of one
// say what of it is lost and how to continue its session, and choosing
// "the latest" goal warns about the records it could not consider.
func TestE2EGoalListShowsDamaged(t *testing.T) {
	t.Parallel()
	e := goalE2E(t, newStepper(1).respond)
	if r := e.run("run", "--goal", "write the step file", "--permission-mode", "yolo"); r.code != 0 {
		t.Fatalf("goal run:\n%s", r)
	}
	recs := e.goals(t)
	if len(recs) != 1 {
		t.Fatalf("%d goal records", len(recs))
	}
	rec := recs[0]
	work, err := filepath.EvalSymlinks(e.work)
	must(t, err)
	// Where goalDir (package main) keeps the workspace's goal records.
	dir := filepath.Join(filepath.Dir(session.ProjectDir(e.home, work)), "goals")
	truncateHalf(t, filepath.Join(dir, rec.ID+".json"))
	must(t, os.WriteFile(filepath.Join(dir, "g-garbage.json"), []byte("\x00\x01 not a record"), 0o600))

	r := e.run("goal", "list")
	if r.code != 0 || strings.Contains(r.stdout, "no goals") ||
		!regexp.MustCompile(`(?m)^`+rec.ID+` +damaged: unexpected end of JSON input$`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^g-garbage +damaged: invalid character`).MatchString(r.stdout) {
		t.Fatalf("goal list:\n%s", r)
	}
	r = e.run("goal", "list", "--json")
	// A damaged record's entry in `goal list --json` (docs/SPEC.md).
	var list []struct {
		ID      string `json:"id"`
		Status  string `json:"status"`
		Damage  string `json:"damage"`
		Path    string `json:"path"`
		Session string `json:"session"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil || len(list) != 2 {
		t.Fatalf("goal list --json:\n%s", r)
	}
	if d := list[0]; d.ID != rec.ID || d.Status != "damaged" || d.Damage != "unexpected end of JSON input" || d.Session != rec.Session ||
		d.Path != filepath.Join(dir, rec.ID+".json") {
		t.Errorf("damaged entry %+v", d)
	}
	for _, args := range [][]string{{"goal", "status", rec.ID}, {"goal", "resume", rec.ID}} {
		r := e.run(args...)
		if r.code != 1 || !strings.Contains(r.stderr, "is damaged (unexpected end of JSON input)") ||
			!strings.Contains(r.stderr, "could not be recovered") || !strings.Contains(r.stderr, "reasonix run --resume "+rec.Session) {
			t.Errorf("%s:\n%s", strings.Join(args, " "), r)
		}
	}
	r = e.run("goal", "resume")
	if r.code != cmdutil.ExitUsage || strings.Count(r.stderr, "was not considered: damaged: ") != 2 {
		t.Errorf("goal resume of the latest:\n%s", r)
	}
}

// TestE2EFleetJournalDamaged: a fleet journal entry whose result record
// was damaged is listed as damaged with the cause by `fleet list` (and
// `status`), and `fleet resume` says what it could not recover: while the
// fleet's reply had been delivered, the task is not run again but ends
// failed; once it had not, the task counts as unfinished and runs again,
// and the tasks whose results are intact do not.
func TestE2EFleetJournalDamaged(t *testing.T) {
	t.Parallel()
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if isSubagent(req) {
			return providertest.Turn{Text: "done with " + req.FirstUser()}
		}
		if len(toolResults(req)) == 0 {
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet", Arguments: fleetArgs(3, nil)}}}
		}
		return providertest.Turn{Text: "parent read the fleet"}
	}))
	if r := e.run("run", "fan out"); r.code != 0 {
		t.Fatalf("run:\n%s", r)
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

	db, err := sql.Open("sqlite", journal.Path(e.home))
	must(t, err)
	defer db.Close()
	var (
		key, task string
		seq       int64
	)
	must(t, db.QueryRow(`SELECT fleet, seq, task FROM records WHERE kind = 'finish' ORDER BY seq LIMIT 1 OFFSET 1`).Scan(&key, &seq, &task))
	_, err = db.Exec(`UPDATE records SET data = '{"TaskID":"' WHERE fleet = ? AND seq = ?`, key, seq)
	must(t, err)
	damage := "record " + strconv.FormatInt(seq, 10) + " (finish of " + task + "): its payload is not JSON"

	r := e.run("fleet", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "damaged: "+damage+": the task's result, delivered before, is lost; it ends failed") {
		t.Fatalf("fleet list:\n%s", r)
	}
	r = e.run("fleet", "list", "--json")
	var list []fleetcmd.FleetJSON
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil || len(list) != 1 || list[0].State != "damaged" ||
		len(list[0].Damage) != 1 || list[0].Tasks != 3 || list[0].Finished != 3 {
		t.Fatalf("fleet list --json:\n%s", r)
	}
	if r := e.run("fleet", "status", key); r.code != 0 || !strings.Contains(r.stdout, "damaged: "+damage) {
		t.Fatalf("fleet status:\n%s", r)
	}
	r = e.run("fleet", "resume", key)
	if r.code != 0 || !strings.Contains(r.stderr, "fleet "+key+" is damaged: "+damage) ||
		!strings.Contains(r.stdout, "journal's record of it is damaged") {
		t.Fatalf("resume of the delivered fleet:\n%s", r)
	}
	if after := asked(); !equalCounts(before, after) {
		t.Fatalf("a task of the delivered fleet ran again: %v, before %v", after, before)
	}

	// As if the process had died before the reply: the damaged result is
	// lost for good, so its task runs again; the others keep theirs.
	_, err = db.Exec(`DELETE FROM records WHERE fleet = ? AND kind = 'reply'`, key)
	must(t, err)
	r = e.run("fleet", "resume", key)
	if r.code != 0 || !strings.Contains(r.stderr, damage+": the task's result is lost and it counts as unfinished") ||
		!strings.Contains(r.stdout, "3 ok") {
		t.Fatalf("resume of the interrupted fleet:\n%s", r)
	}
	after := asked()
	for prompt, n := range after {
		if want := before[prompt]; n != want && n != want+1 {
			t.Errorf("%s asked %d times, %d before the resume", prompt, n, want)
		}
	}
	if rerun := sumCounts(after) - sumCounts(before); rerun != 1 {
		t.Errorf("%d subagent requests on resume, want 1 (the damaged task only): %v", rerun, after)
	}
	// The task ran again under the fleet's journal: nothing is lost now,
	// but the damaged record is still there and still said.
	if r := e.run("fleet", "list"); r.code != 0 || !strings.Contains(r.stdout, "damaged: "+damage+": the task's result is in record ") ||
		!strings.Contains(r.stdout, "which is intact") {
		t.Fatalf("fleet list after the resume:\n%s", r)
	}
}

// TestE2EFleetJournalFileDamaged: a journal database that is damaged as
// a file fails `fleet list` with its path and SQLite's cause rather than
// an empty list.
func TestE2EFleetJournalFileDamaged(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	path := journal.Path(e.home)
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(strings.Repeat("garbage ", 1024)), 0o600))
	r := e.run("fleet", "list")
	if r.code != 1 || !strings.Contains(r.stderr, path) || !strings.Contains(r.stderr, "not a database") {
		t.Fatalf("fleet list:\n%s", r)
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
