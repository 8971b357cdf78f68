package tui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"reasonix/core/provider"
	"reasonix/core/provider/providertest"
	"reasonix/core/session"
)

// syncBuffer is the terminal's output, read while the program writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	// wrote is closed, and replaced, at each write, so a waiter wakes on
	// new output instead of polling.
	wrote chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wrote != nil {
		close(s.wrote)
		s.wrote = nil
	}
	return s.b.Write(p)
}

// waitFor waits until the output, ANSI stripped, satisfies ok, failing
// with what after a deadline.
func (s *syncBuffer) waitFor(t *testing.T, what string, ok func(string) bool) {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		text := ansi.Strip(s.b.String())
		if s.wrote == nil {
			s.wrote = make(chan struct{})
		}
		wrote := s.wrote
		s.mu.Unlock()
		if ok(text) {
			return
		}
		select {
		case <-wrote:
		case <-deadline.C:
			t.Fatalf("%s; the screen holds:\n%s", what, text)
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ansi.Strip(s.b.String())
}

// waitOutput waits until the output holds want, failing after a deadline.
func waitOutput(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	out.waitFor(t, fmt.Sprintf("the screen never showed %q", want), func(s string) bool { return strings.Contains(s, want) })
}

// TestRunSession drives Run over a real session and the model fake: a
// prompt, a bash call the user approves from the modal, the answer as
// Markdown, and two Ctrl-C to leave, after which the transcript is closed
// with both turns' messages in it.
func TestRunSession(t *testing.T) {
	srv := providertest.Start(t)
	srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "bash", Arguments: `{"command":"echo approved-and-ran"}`}}},
		providertest.Turn{Text: "It printed **approved-and-ran**."},
	)
	o, opened := liveOpener(t, srv)
	inR, inW := io.Pipe()
	out := &syncBuffer{}
	o.Input, o.Output = inR, out
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, o) }()
	defer inW.Close()

	waitOutput(t, out, "posture ask")
	if _, err := io.WriteString(inW, "run the echo\r"); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, out, "wants to run bash")
	if _, err := io.WriteString(inW, "y"); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, out, "It printed approved-and-ran.")
	waitOutput(t, out, "idle")
	if _, err := io.WriteString(inW, "\x03"); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, out, "press Ctrl-C again to quit")
	if _, err := io.WriteString(inW, "\x03"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Run did not return after the second Ctrl-C")
	}
	screen := out.String()
	for _, want := range []string{"› run the echo", "● bash  echo approved-and-ran", "bash: allow once"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	if len(*opened) != 1 {
		t.Fatalf("%d sessions opened, want 1", len(*opened))
	}
	live := (*opened)[0]
	data, err := os.ReadFile(live.Built().Spec.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "approved-and-ran") {
		t.Errorf("the transcript lacks the turn:\n%s", data)
	}
	if reqs := srv.Requests(); len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "approved-and-ran") {
		t.Errorf("the second request does not carry the tool's output (%d requests)", len(reqs))
	}
}

// chatRun is Run in the background with its terminal as a pipe and a
// buffer.
type chatRun struct {
	in   *io.PipeWriter
	out  *syncBuffer
	done chan error
}

func startRun(t *testing.T, o Options) *chatRun {
	t.Helper()
	inR, inW := io.Pipe()
	r := &chatRun{in: inW, out: &syncBuffer{}, done: make(chan error, 1)}
	o.Input, o.Output = inR, r.out
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	go func() { r.done <- Run(ctx, o) }()
	t.Cleanup(func() { inW.Close() })
	return r
}

func (r *chatRun) typeKeys(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(r.in, s); err != nil {
		t.Fatal(err)
	}
}

func (r *chatRun) quit(t *testing.T) {
	t.Helper()
	r.typeKeys(t, "\x03")
	waitOutput(t, r.out, "press Ctrl-C again to quit")
	r.typeKeys(t, "\x03")
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after the second Ctrl-C")
	}
}

// TestRunSwitchesSessions: /new and /model close the session they leave
// and open the next with what the user asked, each announced on screen.
func TestRunSwitchesSessions(t *testing.T) {
	srv := providertest.Start(t)
	o, opened, reqs := liveOpenerReqs(t, srv)
	o.Initial = OpenRequest{PermissionMode: "auto"}
	r := startRun(t, o)
	waitOutput(t, r.out, "posture auto")
	waitOutput(t, r.out, "· session ")
	r.typeKeys(t, "/new\r")
	waitSessions(t, r.out, 2)
	r.typeKeys(t, "/model other-model\r")
	waitOutput(t, r.out, "switching to other-model")
	waitSessions(t, r.out, 3)
	// Printed whole, unlike the status line, which is redrawn by its changes.
	waitOutput(t, r.out, "· other-model ·")
	r.quit(t)

	want := []OpenRequest{
		{PermissionMode: "auto"},
		{PermissionMode: "auto"},
		{Model: "other-model", Resume: (*opened)[1].ID(), PermissionMode: "auto", Switch: true},
	}
	if len(*reqs) != len(want) {
		t.Fatalf("open requests %+v, want %+v", *reqs, want)
	}
	for i := range want {
		if (*reqs)[i] != want[i] {
			t.Errorf("open request %d = %+v, want %+v", i, (*reqs)[i], want[i])
		}
	}
	for i, l := range *opened {
		if _, err := l.Session().Busy(time.Second); err == nil {
			t.Errorf("session %d is still running after the chat left it", i)
		}
	}
}

// waitSessions waits until n session_started notices are on screen.
func waitSessions(t *testing.T, out *syncBuffer, n int) {
	t.Helper()
	out.waitFor(t, fmt.Sprintf("fewer than %d sessions announced", n), func(s string) bool { return strings.Count(s, "· session ") >= n })
}

// TestRunExpandsReferences: an @path in a prompt reaches the model as the
// file's content, read before the prompt was sent.
func TestRunExpandsReferences(t *testing.T) {
	srv := providertest.Start(t)
	// Markdown: the rendered form is printed at turn_done, so seeing it
	// means the turn is over.
	srv.Push(providertest.Turn{Text: "read **it**"})
	o, _ := liveOpener(t, srv)
	if err := os.WriteFile(filepath.Join(o.Cwd, "notes.txt"), []byte("content-only-in-the-file"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startRun(t, o)
	waitOutput(t, r.out, "· session ")
	r.typeKeys(t, "summarise @notes.txt please\r")
	waitOutput(t, r.out, "read it")
	r.quit(t)
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	if user := reqs[0].LastUser(); !strings.Contains(user, "content-only-in-the-file") || !strings.Contains(user, "summarise @notes.txt please") {
		t.Errorf("the prompt sent was %q", user)
	}
}

// TestRunCustomCommandReferences: a custom command is rendered where the
// other frontends render it, so the @path its template names reaches the
// model as the file's content, and its arguments are filled in.
func TestRunCustomCommandReferences(t *testing.T) {
	srv := providertest.Start(t)
	srv.Push(providertest.Turn{Text: "digested **it**"})
	o, _ := liveOpener(t, srv)
	dir := filepath.Join(o.Cwd, ".reasonix", "commands")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "digest.md"), []byte("Digest @notes.txt for $ARGUMENTS.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(o.Cwd, "notes.txt"), []byte("content-only-in-the-file"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startRun(t, o)
	waitOutput(t, r.out, "· session ")
	r.typeKeys(t, "/help\r")
	waitOutput(t, r.out, "/digest")
	r.typeKeys(t, "/digest the team\r")
	waitOutput(t, r.out, "digested it")
	r.quit(t)
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	if user := reqs[0].LastUser(); !strings.Contains(user, "content-only-in-the-file") || !strings.Contains(user, "Digest @notes.txt for the team.") {
		t.Errorf("the prompt sent was %q", user)
	}
}

// TestRunSetsEffort: /effort LEVEL changes the reasoning effort of the
// session's next request, and the chat says so.
func TestRunSetsEffort(t *testing.T) {
	srv := providertest.Start(t)
	srv.Push(providertest.Turn{Text: "thought **hard**"})
	o, _ := liveOpener(t, srv)
	r := startRun(t, o)
	waitOutput(t, r.out, "· session ")
	r.typeKeys(t, "/effort max\r")
	waitOutput(t, r.out, "reasoning effort: max")
	r.typeKeys(t, "think\r")
	waitOutput(t, r.out, "thought hard")
	r.quit(t)
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got := reqs[0].ReasoningEffort; got != "max" {
		t.Fatalf("reasoning_effort %q, want max", got)
	}
}

// TestRunSurvivesAPanic: a panic in work the chat runs off its update loop
// (here the session lister behind /resume) ends the chat with an error
// instead of killing the process, and the session is still closed, its
// transcript saved.
func TestRunSurvivesAPanic(t *testing.T) {
	srv := providertest.Start(t)
	o, opened := liveOpener(t, srv)
	o.Sessions = func() ([]session.Summary, error) { panic("lister broke") }
	r := startRun(t, o)
	waitOutput(t, r.out, "· session ")
	r.typeKeys(t, "/resume\r")
	select {
	case err := <-r.done:
		if err == nil {
			t.Fatal("Run ended without an error after a panic")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not end after a panic")
	}
	if len(*opened) != 1 {
		t.Fatalf("%d sessions opened", len(*opened))
	}
	if err := (*opened)[0].Built().Transcript.Append(provider.Message{Role: provider.RoleUser, Content: "late"}); err == nil {
		t.Fatal("the transcript is still open after the chat ended")
	}
}
