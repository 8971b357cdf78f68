package actors

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"reasonix/actors/agent"
	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/actors/fleet"
	"reasonix/actors/fleet/resume"
	"reasonix/actors/kernel"
	"reasonix/core/compact"
	"reasonix/core/journal"
	"reasonix/core/provider"
	"reasonix/core/provider/openai"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

// fullTranscript is a transcript on a disk that is full until freed, as
// session.Store behaves there: it keeps every message, answers a barrier
// with ENOSPC while full, and tells its listener once when writing starts
// to fail and once when a retry has written what waited.
type fullTranscript struct {
	mu      sync.Mutex
	full    bool
	failing bool
	kept    []provider.Message
	notify  func(error)
}

var errDiskFull = fmt.Errorf("append transcript: write x.jsonl: %w", syscall.ENOSPC)

func (f *fullTranscript) Append(m provider.Message) error {
	f.mu.Lock()
	f.kept = append(f.kept, m)
	tell := f.full && !f.failing
	f.failing = f.failing || f.full
	fn := f.notify
	f.mu.Unlock()
	if tell && fn != nil {
		fn(errDiskFull)
	}
	return nil
}

func (f *fullTranscript) Barrier(done func(error)) {
	f.mu.Lock()
	full := f.full
	f.mu.Unlock()
	if full {
		done(errDiskFull)
		return
	}
	done(nil)
}

func (f *fullTranscript) Notify(fn func(error)) {
	f.mu.Lock()
	f.notify = fn
	f.mu.Unlock()
}

// setFull fills or frees the disk; freeing it lets the waiting records out.
func (f *fullTranscript) setFull(full bool) {
	f.mu.Lock()
	f.full = full
	recovered := !full && f.failing
	if recovered {
		f.failing = false
	}
	fn := f.notify
	f.mu.Unlock()
	if recovered && fn != nil {
		fn(nil)
	}
}

// transcriptSession starts a session with tr as its transcript on a fresh
// model fake, torn down at cleanup.
func transcriptSession(t *testing.T, tr agent.Transcript) (*providertest.Server, *event.Bus, *event.Subscription, *Session) {
	t.Helper()
	srv := providertest.Start(t)
	hc := &http.Transport{}
	t.Cleanup(hc.CloseIdleConnections)
	p, err := openai.New(provider.Config{Name: "fake", Kind: "openai", BaseURL: srv.URL(), Model: "fake-model",
		MaxRetries: -1, HTTPClient: &http.Client{Transport: hc}})
	must(t, err)
	reg, err := tool.NewRegistry()
	must(t, err)
	sys, bus := kernel.NewSystem(nil), event.NewBus()
	sub := bus.Subscribe()
	sess, err := StartSession(sys, SessionSpec{Agent: agent.AgentSpec{Session: "s1", Provider: p, Model: "fake-model", Tools: reg,
		System: "sys", Bus: bus, Transcript: tr}})
	must(t, err)
	t.Cleanup(func() {
		sub.Close()
		if err := sess.Close(5 * time.Second); err != nil {
			t.Errorf("close session: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return srv, bus, sub, sess
}

func waitTurn(t *testing.T, sub *event.Subscription, sess *Session, input string) (*event.TurnDone, []event.Event) {
	t.Helper()
	sess.Run(input)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var evs []event.Event
	done, err := WaitTurn(ctx, sub, "s1", func(e event.Event) { evs = append(evs, e) })
	if err != nil {
		t.Fatalf("waiting for the turn: %v", err)
	}
	return done, evs
}

func noticesAbout(evs []event.Event, level, about string) int {
	n := 0
	for _, e := range evs {
		if no, ok := e.(*event.Notice); ok && no.Level == level && strings.Contains(no.Message, about) {
			n++
		}
	}
	return n
}

// TestTurnOnAFullDiskIsIncomplete: while the transcript cannot be
// written, every turn still answers but ends incomplete, naming the
// transcript and ENOSPC; the user is warned once for the whole outage, not
// once per turn; once space returns the session says so and its turns end
// ok again.
func TestTurnOnAFullDiskIsIncomplete(t *testing.T) {
	t.Parallel()
	tr := &fullTranscript{full: true}
	srv, _, sub, sess := transcriptSession(t, tr)
	var all []event.Event
	for i := 1; i <= 3; i++ {
		srv.Push(providertest.Turn{Text: fmt.Sprintf("answer %d", i)})
		done, evs := waitTurn(t, sub, sess, fmt.Sprintf("question %d", i))
		all = append(all, evs...)
		if done.Status != StatusIncomplete || done.Text != fmt.Sprintf("answer %d", i) ||
			!strings.HasPrefix(done.Error, "incomplete: transcript not saved: ") || !strings.Contains(done.Error, "no space left on device (ENOSPC)") {
			t.Fatalf("turn %d on a full disk: %+v", i, done)
		}
	}
	if n := noticesAbout(all, "warn", "transcript not saved"); n != 1 {
		t.Errorf("%d warnings over three turns on a full disk, want one", n)
	}

	tr.setFull(false)
	srv.Push(providertest.Turn{Text: "answer 4"})
	done, evs := waitTurn(t, sub, sess, "question 4")
	if done.Status != event.StatusOK || done.Error != "" {
		t.Fatalf("turn once space returned: %+v", done)
	}
	if n := noticesAbout(append(all, evs...), "info", "transcript saved again"); n != 1 {
		t.Errorf("%d notices of the recovery, want one", n)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.kept) != 9 { // the system prompt, then four questions and answers
		t.Errorf("the transcript was given %d messages, want 9", len(tr.kept))
	}
}

// TestCompactionArchiveNotSavedIsIncomplete: a compaction whose archive
// cannot be written still compacts, but the turn does not end ok; the next
// turn, with nothing unsaved, does.
func TestCompactionArchiveNotSavedIsIncomplete(t *testing.T) {
	t.Parallel()
	blocker := filepath.Join(t.TempDir(), "file")
	must(t, os.WriteFile(blocker, nil, 0o600))
	pol := compact.Policy{Window: 200000}.WithDefaults()
	h := newHarness(t, harnessOpts{tools: []tool.Tool{bigTool()}, compaction: pol, archive: filepath.Join(blocker, "archive")})
	h.srv.Push(workTurns(6)...)
	h.srv.Push(providertest.Turn{Text: "the digest"}, providertest.Turn{Text: "next answer"})
	if done, _ := h.turn("dump six times"); done.Status != event.StatusOK {
		t.Fatalf("work turn: %+v", done)
	}
	done, evs := h.turn("/compact")
	if done.Status != StatusIncomplete || !strings.HasPrefix(done.Error, "incomplete: compaction archive not saved: ") {
		t.Fatalf("/compact with an unwritable archive: %+v", done)
	}
	if len(eventsOf[*event.Compacted](evs)) == 0 {
		t.Fatal("the compaction did not happen")
	}
	if done, _ := h.turn("and now?"); done.Status != event.StatusOK {
		t.Fatalf("the next turn: %+v", done)
	}
}

// failingJournal is a fleet journal on a disk that fills up: it keeps the
// records it took, and from the record breaks says on refuses every
// append with SQLite's "database or disk is full".
type failingJournal struct {
	mu     sync.Mutex
	recs   []journal.Record
	full   bool
	breaks func(journal.Record) bool
}

// sqliteFullErr is what modernc.org/sqlite returns on a full disk.
type sqliteFullErr struct{}

func (sqliteFullErr) Error() string { return "database or disk is full (13)" }
func (sqliteFullErr) Code() int     { return 13 }

func (j *failingJournal) Append(_ context.Context, r journal.Record) (int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.full || j.breaks(r) {
		j.full = true
		return 0, fmt.Errorf("append fleet record: %w", sqliteFullErr{})
	}
	r.Seq = int64(len(j.recs) + 1)
	j.recs = append(j.recs, r)
	return r.Seq, nil
}

// AppendAll takes all of rs or none: the first that breaks fills the disk.
func (j *failingJournal) AppendAll(_ context.Context, rs []journal.Record) ([]int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, r := range rs {
		if j.full || j.breaks(r) {
			j.full = true
			return nil, fmt.Errorf("append fleet record: %w", sqliteFullErr{})
		}
	}
	seqs := make([]int64, len(rs))
	for i, r := range rs {
		r.Seq = int64(len(j.recs) + 1)
		j.recs = append(j.recs, r)
		seqs[i] = r.Seq
	}
	return seqs, nil
}

func (j *failingJournal) records() []journal.Record {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]journal.Record(nil), j.recs...)
}

// Records are the records of one fleet, as the journal would read them.
func (j *failingJournal) Records(_ context.Context, fleet string) ([]journal.Record, error) {
	var out []journal.Record
	for _, r := range j.records() {
		if r.Fleet == fleet {
			out = append(out, r)
		}
	}
	return out, nil
}

// TestFleetJournalFailureEndsTheFleet: when a finish record cannot be
// written the fleet ends at once: the task whose result was refused and
// the sibling still running are not delivered as ok, the queued task
// never starts, and the parent's turn ends incomplete naming the journal
// and ENOSPC. Resuming from what the journal holds asks nothing of the
// task whose result reached the parent and completes the rest.
func TestFleetJournalFailureEndsTheFleet(t *testing.T) {
	t.Parallel()
	j := &failingJournal{breaks: func(r journal.Record) bool { return r.Kind == journal.KindFinish && r.Task == "f1.2" }}
	spec := &fleet.FleetSpec{MaxRunning: 2, MaxWriters: 1, Root: "/ws", Journal: j}
	var resumed sync.Map
	h := newHarness(t, harnessOpts{fleet: spec,
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				task := req.FirstUser()
				if _, again := resumed.Load("yes"); task == "task 1" && !again {
					return providertest.Turn{Stall: true} // running when the journal fails
				}
				return providertest.Turn{Text: "answer to " + task}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(3, nil)}}
			}
			return providertest.Turn{Text: "parent read: " + toolMessages(req)[0].Content}
		})}})
	done, evs := h.turn("fan out")
	if done.Status != StatusIncomplete || !strings.Contains(done.Error, "fleet journal not saved: ") ||
		!strings.Contains(done.Error, "no space left on device (ENOSPC)") {
		t.Fatalf("parent turn: %+v", done)
	}
	if !strings.HasPrefix(done.Text, "parent read: 3 tasks: 0 ok, 3 failed") {
		t.Fatalf("the parent was given:\n%s", done.Text)
	}
	for _, td := range eventsOf[*event.TaskDone](evs) {
		if td.Status != event.TaskFailed || !strings.Contains(td.Error, "fleet journal not saved") {
			t.Errorf("task %s ended %s: %s", td.Task, td.Status, td.Error)
		}
	}
	if n := subRequests(h)["task 3"]; n != 0 {
		t.Fatalf("task 3 was asked %d times after the journal failed", n)
	}
	for _, ts := range eventsOf[*event.TaskStarted](evs) {
		if ts.Task == "f1.3" {
			t.Fatal("task 3 started after the journal failed")
		}
	}

	recs := j.records()
	for _, r := range recs {
		if r.Kind == journal.KindFinish {
			t.Fatalf("a finish record was journalled although no result was delivered: %+v", r)
		}
	}
	resumed.Store("yes", true)
	ctx := context.Background()
	again := &failingJournal{breaks: func(journal.Record) bool { return false }}
	for _, r := range recs {
		if _, err := again.Append(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	rf, err := resume.Rebuild(ctx, again, recs, "rerun")
	must(t, err)
	more := *spec
	more.Journal = again
	res, err := fleet.RunFleet(h.sys, more, "s1", h.bus, rf.Submit, 20*time.Second)
	must(t, err)
	if out, _ := fleet.FormatFleetResult(team.ToolFleet, res); !strings.HasPrefix(out, "3 tasks: 3 ok") {
		t.Fatalf("resumed fleet:\n%s", out)
	}
}

// TestFleetWithoutAJournalDoesNotRun: a fleet whose journal cannot be
// opened starts none of its tasks and says why.
func TestFleetWithoutAJournalDoesNotRun(t *testing.T) {
	t.Parallel()
	blocker := filepath.Join(t.TempDir(), "file")
	must(t, os.WriteFile(blocker, nil, 0o600))
	spec := &fleet.FleetSpec{MaxRunning: 2, MaxWriters: 1, Root: "/ws", JournalHome: blocker}
	h := newHarness(t, harnessOpts{fleet: spec,
		server: []providertest.Option{providertest.WithResponder(func(req providertest.Request) providertest.Turn {
			if isSub(req) {
				return providertest.Turn{Text: "answer"}
			}
			if len(toolMessages(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{fleetCall(2, nil)}}
			}
			return providertest.Turn{Text: "parent read: " + toolMessages(req)[0].Content}
		})}})
	done, _ := h.turn("fan out")
	if done.Status != StatusIncomplete || !strings.Contains(done.Error, "fleet journal not saved: ") {
		t.Fatalf("parent turn: %+v", done)
	}
	if n := len(subRequests(h)); n != 0 {
		t.Fatalf("%d tasks asked the model without a journal", n)
	}
	if !strings.Contains(done.Text, "2 failed") {
		t.Fatalf("the parent was given:\n%s", done.Text)
	}
}

// TestPanicWhileATurnIsSaved injects a panic where the session learns that
// a turn's records are written: the turn still ends exactly once, as
// incomplete when the crash lost the answer (whether the records were
// written is then not known) and ok when it came after, and the session
// goes on. It sets the process-wide fault hook, so it does not run in
// parallel.
func TestPanicWhileATurnIsSaved(t *testing.T) {
	for _, tc := range []struct {
		after bool
		want  string
	}{{false, StatusIncomplete}, {true, event.StatusOK}} {
		t.Run(fmt.Sprintf("after=%v", tc.after), func(t *testing.T) {
			fired := InjectPanic(t, "session", "*actors.turnSaved", tc.after)
			srv, _, sub, sess := transcriptSession(t, &fullTranscript{})
			srv.Push(providertest.Turn{Text: "first"}, providertest.Turn{Text: "second"})
			done, evs := waitTurn(t, sub, sess, "one")
			// The turn's end is published inside the very handler an
			// after-fault follows: wait for the fault before clearing it.
			select {
			case <-fired.Done:
			case <-time.After(10 * time.Second):
			}
			kernel.FaultHook.Store(nil)
			if !fired.Load() {
				t.Fatal("the fault never fired")
			}
			if n := countTurnDone(evs); n != 1 || done.Status != tc.want {
				t.Fatalf("%d turn_done, the turn: %+v", n, done)
			}
			if tc.want == StatusIncomplete && !strings.HasPrefix(done.Error, "incomplete: transcript not saved: not known whether it was written: ") {
				t.Fatalf("the turn: %+v", done)
			}
			if done, evs := waitTurn(t, sub, sess, "two"); done.Status != event.StatusOK || countTurnDone(evs) != 1 {
				t.Fatalf("the next turn: %+v", done)
			}
		})
	}
}
