package serve

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"reasonix/core/provider/providertest"
)

type listed struct {
	Sessions []struct {
		ID, Cwd, Title, Model, Updated string
		Live, Running                  bool
	}
}

func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	var l listed
	decode(t, h.req("GET", "/api/sessions", nil), http.StatusOK, &l)
	if len(l.Sessions) != 0 {
		t.Fatalf("sessions of an empty workspace: %+v", l)
	}

	id := h.newSession()
	h.fake.Push(providertest.Turn{Text: "the answer"})
	s := h.stream(id, "")
	s.must()
	h.prompt(id, "what is it?\nsecond line")
	s.until("turn_done")

	decode(t, h.req("GET", "/api/sessions", nil), http.StatusOK, &l)
	if len(l.Sessions) != 1 {
		t.Fatalf("listed %+v", l)
	}
	got := l.Sessions[0]
	if got.ID != id || !got.Live || got.Running || got.Cwd != h.cwd || got.Title != "what is it? second line" ||
		got.Model != "fake/fake-model" || got.Updated == "" {
		t.Fatalf("live session listed as %+v", got)
	}

	var detail struct {
		ID, Model, Transcript string
		Live                  bool
		Snapshot              struct {
			Session string
			Seq     int64
			Running bool
		}
	}
	decode(t, h.req("GET", "/api/sessions/"+id, nil), http.StatusOK, &detail)
	if !detail.Live || detail.Snapshot.Session != id || detail.Snapshot.Seq == 0 || !strings.HasSuffix(detail.Transcript, id+".jsonl") {
		t.Fatalf("detail %+v", detail)
	}

	// A second session runs beside the first.
	other := h.newSession()
	if other == id {
		t.Fatal("a new session reused the id")
	}
	decode(t, h.req("GET", "/api/sessions", nil), http.StatusOK, &l)
	if len(l.Sessions) != 2 {
		t.Fatalf("two live sessions listed as %+v", l)
	}

	// Closed, it is saved: listed as not live, with its conversation.
	want(t, h.req("DELETE", "/api/sessions/"+id, nil), http.StatusNoContent)
	want(t, h.req("DELETE", "/api/sessions/"+id, nil), http.StatusNotFound)
	want(t, h.req("POST", "/api/sessions/"+id+"/commands", map[string]any{"type": "cancel"}), http.StatusNotFound)
	decode(t, h.req("GET", "/api/sessions", nil), http.StatusOK, &l)
	var saved bool
	for _, s := range l.Sessions {
		if s.ID == id {
			saved = !s.Live && s.Title == "what is it? second line" && s.Model == "fake/fake-model"
		}
	}
	if !saved {
		t.Fatalf("the closed session is not listed as saved: %+v", l)
	}
	var msgs struct {
		Messages []struct{ Role, Text string }
	}
	decode(t, h.req("GET", "/api/sessions/"+id+"/messages", nil), http.StatusOK, &msgs)
	if len(msgs.Messages) != 2 || msgs.Messages[0].Role != "user" || msgs.Messages[1].Text != "the answer" {
		t.Fatalf("messages of the saved session: %+v", msgs)
	}
	var sd struct{ Live bool }
	decode(t, h.req("GET", "/api/sessions/"+id, nil), http.StatusOK, &sd)
	if sd.Live {
		t.Fatal("a closed session described as live")
	}
	var savedMsgs struct {
		LiveFrom int `json:"live_from"`
	}
	decode(t, h.req("GET", "/api/sessions/"+id+"/messages", nil), http.StatusOK, &savedMsgs)
	if savedMsgs.LiveFrom != 2 {
		t.Fatalf("a saved session's live_from is %d, want all of its 2 messages", savedMsgs.LiveFrom)
	}

	// Resumed, it carries on with its conversation; asking again returns
	// the same live session.
	var opened struct{ ID string }
	decode(t, h.req("POST", "/api/sessions", map[string]string{"resume": id}), http.StatusCreated, &opened)
	if opened.ID != id {
		t.Fatalf("resumed %q, want %q", opened.ID, id)
	}
	decode(t, h.req("POST", "/api/sessions", map[string]string{"resume": id}), http.StatusOK, &opened)
	h.fake.Push(providertest.Turn{Text: "still here"})
	s = h.stream(id, "")
	s.must()
	h.prompt(id, "and now?")
	s.until("turn_done")
	reqs := h.fake.Requests()
	if last := reqs[len(reqs)-1]; !strings.Contains(string(last.Body), "the answer") {
		t.Fatal("the resumed session's request does not carry the earlier turn")
	}
	var resumed struct {
		Messages []struct{ Role, Text string }
		LiveFrom int `json:"live_from"`
	}
	decode(t, h.req("GET", "/api/sessions/"+id+"/messages", nil), http.StatusOK, &resumed)
	if len(resumed.Messages) != 4 || resumed.LiveFrom != 2 {
		t.Fatalf("messages after the resumed turn: %+v, want 4 with the bus from the 3rd", resumed)
	}

	want(t, h.req("POST", "/api/sessions", map[string]string{"resume": "no-such-session"}), http.StatusNotFound)
	want(t, h.req("POST", "/api/sessions", map[string]string{"resume": "../" + id}), http.StatusNotFound)
	want(t, h.req("POST", "/api/sessions", `{"resume":1}`), http.StatusBadRequest)
	want(t, h.req("POST", "/api/sessions", map[string]string{"model": "no-such-model"}), http.StatusBadRequest)
	want(t, h.req("GET", "/api/sessions/nope", nil), http.StatusNotFound)
	want(t, h.req("GET", "/api/sessions/nope/messages", nil), http.StatusNotFound)
	want(t, h.req("GET", "/api/nope", nil), http.StatusNotFound)
}

func TestSessionModel(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	var out struct{ ID string }
	decode(t, h.req("POST", "/api/sessions", map[string]string{"model": "other-model"}), http.StatusCreated, &out)
	var detail struct{ Model string }
	decode(t, h.req("GET", "/api/sessions/"+out.ID, nil), http.StatusOK, &detail)
	if detail.Model != "fake/other-model" {
		t.Fatalf("model %q", detail.Model)
	}
}

func TestCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	id := h.newSession()
	for _, tc := range []struct {
		name, body string
		status     int
		msg        string
	}{
		{"not json", `{`, http.StatusBadRequest, "command"},
		{"unknown type", `{"type":"launch"}`, http.StatusBadRequest, "unknown type"},
		{"unknown field", `{"type":"prompt","text":"x","txet":"y"}`, http.StatusBadRequest, "unknown field"},
		{"empty prompt", `{"type":"prompt","text":"  "}`, http.StatusBadRequest, "empty"},
		{"bad posture", `{"type":"set_posture","posture":"reckless"}`, http.StatusBadRequest, "posture"},
		{"posture", `{"type":"set_posture","posture":"auto"}`, http.StatusAccepted, ""},
		{"cancel", `{"type":"cancel"}`, http.StatusAccepted, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := want(t, h.req("POST", "/api/sessions/"+id+"/commands", tc.body), tc.status)
			if !strings.Contains(b, tc.msg) {
				t.Fatalf("answer %q does not say %q", b, tc.msg)
			}
		})
	}
}

func TestPromptExpandsReferences(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	if err := os.WriteFile(filepath.Join(h.cwd, "notes.txt"), []byte("remember the milk"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := h.newSession()
	h.fake.Push(providertest.Turn{Text: "ok"})
	s := h.stream(id, "")
	s.must()
	h.prompt(id, "read @notes.txt please")
	s.until("turn_done")
	reqs := h.fake.Requests()
	if got := reqs[len(reqs)-1].LastUser(); !strings.Contains(got, "remember the milk") || !strings.Contains(got, "read @notes.txt please") {
		t.Fatalf("the model got %q, want the file's text and the prompt", got)
	}
}

// TestPromptCustomCommand: a custom command of the workspace is rendered
// before the session sees it, with the @reference in its body expanded;
// a broken command file beside it comes back on the stream as a notice.
func TestPromptCustomCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	dir := filepath.Join(h.cwd, ".reasonix", "commands")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"review.md":      "---\ndescription: review\n---\nReview @notes.md for $1.",
		"broken.md":      "---\ndescription: never closed\nbody",
		"../../notes.md": "# Notes\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	id := h.newSession()
	h.fake.Push(providertest.Turn{Text: "reviewed"}, providertest.Turn{Text: "as typed"})
	s := h.stream(id, "")
	s.must()
	h.prompt(id, "/review Ada")
	var notices []string
	for _, m := range s.until("turn_done") {
		if m.kind() == "notice" {
			notices = append(notices, m.field("message").(string))
		}
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "broken.md") {
		t.Fatalf("notices %q, want one about broken.md", notices)
	}
	// An unknown command goes as typed, references and all.
	h.prompt(id, "/nosuch @notes.md")
	s.until("turn_done")
	reqs := h.fake.Requests()
	if got, want := reqs[0].LastUser(), "<file path=\"notes.md\">\n# Notes\n</file>\n\nReview @notes.md for Ada."; got != want {
		t.Fatalf("the model got\n%q\nwant\n%q", got, want)
	}
	if got := reqs[1].LastUser(); got != "/nosuch @notes.md" {
		t.Fatalf("an unknown command reached the model as %q", got)
	}
}

// TestShutdownClosesEverything stops a server with sessions open, one of
// them mid-turn with a stream attached: the stream ends with
// session_closed, the transcripts are saved and no goroutine is left.
func TestShutdownClosesEverything(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newHarness(t, harnessOpts{})
	id := h.newSession()
	h.newSession()
	h.fake.Push(providertest.Turn{Text: "never finished", Stall: true})
	s := h.stream(id, "")
	s.must()
	h.prompt(id, "stall")
	for {
		if m := s.must(); m.kind() == "turn_started" {
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for {
		m, err := s.next()
		if err != nil {
			break
		}
		kinds = append(kinds, m.kind())
	}
	if len(kinds) == 0 || kinds[len(kinds)-1] != "session_closed" {
		t.Fatalf("the stream ended with %v, want session_closed last", kinds)
	}
	s.close()
	if _, err := os.Stat(filepath.Join(h.home, "projects")); err != nil {
		t.Fatalf("no transcripts: %v", err)
	}
	// Opening after shutdown is refused rather than leaked.
	if _, status, err := h.srv.open(ctx, OpenRequest{}); err == nil || status != http.StatusServiceUnavailable {
		t.Fatalf("open after shutdown: %d %v", status, err)
	}
	h.fake.Close()
}

// TestShutdownClosesLateSessions: a session whose opening was under way
// when the shutdown began is closed as it arrives, and its request is
// answered 503.
func TestShutdownClosesLateSessions(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	entered, release := make(chan struct{}), make(chan struct{})
	h := newHarness(t, harnessOpts{entered: entered, release: release})
	answer := make(chan int, 1)
	go func() {
		resp := h.req("POST", "/api/sessions", map[string]any{})
		resp.Body.Close()
		answer <- resp.StatusCode
	}()
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- h.srv.Shutdown(ctx) }()
	// Shutdown waits for the open request, which it cannot finish alone.
	for !h.srv.isClosing() {
		select {
		case err := <-stopped:
			t.Fatalf("shutdown returned before the open request finished: %v", err)
		case <-ctx.Done():
			t.Fatal("shutdown never began")
		default:
			runtime.Gosched()
		}
	}
	close(release)
	if status := <-answer; status != http.StatusServiceUnavailable {
		t.Fatalf("the late open was answered %d", status)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	opened := h.opened
	h.mu.Unlock()
	if opened != 1 {
		t.Fatalf("%d sessions opened, want the one", opened)
	}
	h.fake.Close()
}

func TestSessionPosture(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	id := h.newSession()
	var d struct{ Posture string }
	decode(t, h.req("GET", "/api/sessions/"+id, nil), http.StatusOK, &d)
	if d.Posture != "ask" {
		t.Fatalf("posture at start %q, want ask", d.Posture)
	}
	s := h.stream(id, "")
	s.must()
	want(t, h.req("POST", "/api/sessions/"+id+"/commands", map[string]string{"type": "set_posture", "posture": "yolo"}), http.StatusAccepted)
	s.until("posture_changed")
	// The snapshot has folded the change once the next stream attaches.
	h.stream(id, "").must()
	decode(t, h.req("GET", "/api/sessions/"+id, nil), http.StatusOK, &d)
	if d.Posture != "yolo" {
		t.Fatalf("posture after set_posture %q, want yolo", d.Posture)
	}
}

// TestApprovalOverTheAPI: a write the model asks for waits for the page's
// answer, which the page sees in the stream and in the snapshot; a deny
// is carried out (nothing written) and the turn goes on.
func TestApprovalOverTheAPI(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	id := h.newSession()
	h.fake.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "write_file", Arguments: `{"path":"x.txt","content":"hi"}`}}},
		providertest.Turn{Text: "left it alone"},
	)
	s := h.stream(id, "")
	s.must()
	h.prompt(id, "write x.txt")
	var req message
	for _, m := range s.until("approval_requested") {
		req = m
	}
	reqID, _ := req.field("request_id").(string)
	if req.field("tool") != "write_file" || reqID == "" {
		t.Fatalf("approval request %s", req.Data)
	}
	// A page that attaches now finds the question in the snapshot.
	snap := h.stream(id, "").must()
	if !strings.Contains(snap.Data, reqID) {
		t.Fatalf("the snapshot does not hold the pending approval: %s", snap.Data)
	}
	want(t, h.req("POST", "/api/sessions/"+id+"/commands", map[string]string{"type": "approve", "id": reqID, "decision": "deny"}), http.StatusAccepted)
	var resolved, done message
	for _, m := range s.until("turn_done") {
		if m.kind() == "approval_resolved" {
			resolved = m
		}
		done = m
	}
	if resolved.field("decision") != "deny" || done.field("text") != "left it alone" {
		t.Fatalf("resolved %s, done %s", resolved.Data, done.Data)
	}
	if _, err := os.Stat(filepath.Join(h.cwd, "x.txt")); !os.IsNotExist(err) {
		t.Fatalf("a denied write happened: %v", err)
	}
}

// TestPlanModeSwitch: POST /api/sessions with resume and plan reopens an
// open session in or out of plan mode under the same id, with its
// conversation, title and posture; it is refused while a turn runs, which
// closing the session would cancel.
func TestPlanModeSwitch(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	id := h.newSession()
	h.fake.Push(providertest.Turn{Text: "hi"})
	s := h.stream(id, "")
	h.prompt(id, "hello there")
	s.until("turn_done")
	want(t, h.req("POST", "/api/sessions/"+id+"/commands", map[string]any{"type": "set_posture", "posture": "auto"}), http.StatusAccepted)
	s.until("posture_changed")
	s.close()

	type info struct {
		ID, Title, Posture string
		Plan, Live         bool
	}
	var before info
	decode(t, h.req("GET", "/api/sessions/"+id, nil), http.StatusOK, &before)
	if before.Plan {
		t.Fatalf("a new session is in plan mode: %+v", before)
	}
	var got struct{ ID string }
	decode(t, h.req("POST", "/api/sessions", map[string]any{"resume": id, "plan": true}), http.StatusOK, &got)
	if got.ID != id {
		t.Fatalf("reopened as %q, want %q", got.ID, id)
	}
	var after info
	decode(t, h.req("GET", "/api/sessions/"+id, nil), http.StatusOK, &after)
	if !after.Plan || !after.Live || after.Posture != "auto" || after.Title != "hello there" {
		t.Fatalf("after the switch: %+v", after)
	}
	h.fake.Push(providertest.Turn{Text: "planning"})
	s = h.stream(id, "")
	h.prompt(id, "make a plan")
	s.until("turn_done")
	reqs := h.fake.Requests()
	last := reqs[len(reqs)-1]
	if !slices.Contains(last.Tools, "exit_plan_mode") || last.Messages[1].Content != "hello there" {
		t.Errorf("the reopened session's request: tools %v, first user message %q", last.Tools, last.Messages[1].Content)
	}

	h.fake.Push(providertest.Turn{Text: "never finished", Stall: true})
	h.prompt(id, "stall")
	s.until("turn_started")
	want(t, h.req("POST", "/api/sessions", map[string]any{"resume": id, "plan": false}), http.StatusConflict)
	s.close()
}
