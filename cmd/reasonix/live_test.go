package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/actors"
	"reasonix/actors/event"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/provider/providertest"
	"reasonix/core/testenv"
)

// liveHome is a home and a workspace whose user config points at a model
// fake, for tests that open sessions in-process. Its environment is also
// set on the process, which openLive with newFactory reads.
type liveHome struct {
	srv        *providertest.Server
	home, work string
	env        map[string]string
}

func newLiveHome(t *testing.T) *liveHome {
	t.Helper()
	const key = "sk-live-test"
	e := &liveHome{srv: providertest.Start(t, providertest.WithAPIKey(key)), home: t.TempDir(), work: t.TempDir()}
	testenv.WriteFile(t, filepath.Join(e.home, "config.toml"), fmt.Sprintf(`default_model = "fake"

[[providers]]
name = "fake"
kind = "openai"
base_url = %q
model = "fake-model"
api_key_env = "FAKE_API_KEY"
context_window = 128000
`, e.srv.URL()), 0o600)
	e.env = map[string]string{"HOME": e.home, "REASONIX_HOME": e.home, "FAKE_API_KEY": key, "PATH": os.Getenv("PATH")}
	for k, v := range e.env {
		t.Setenv(k, v)
	}
	return e
}

// runJSON runs `run -o json` with args in-process in the workspace and
// returns the session it ran in.
func (e *liveHome) runJSON(t *testing.T, args ...string) string {
	t.Helper()
	r := runCLI(t, e.env, "", append([]string{"run", "-o", "json", "--cwd", e.work}, args...)...)
	var out struct {
		Session string `json:"session"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || out.Session == "" {
		t.Fatalf("run %q: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
	}
	return out.Session
}

// TestOpenLiveContinues opens an interactive session in-process, runs a
// turn through its command interface, closes it, and continues it: the
// second session's request carries the first one's conversation.
func TestOpenLiveContinues(t *testing.T) {
	e := newLiveHome(t)
	f := newFactory()
	e.srv.Push(providertest.Turn{Text: "first answer"}, providertest.Turn{Text: "second answer"})

	turn := func(live *actors.Live, prompt string) *event.TurnDone {
		t.Helper()
		sub := live.Bus().SubscribeFrom(0, 0)
		defer sub.Close()
		if err := live.Session().Do(&event.PromptCmd{Text: prompt, Queue: true}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done, err := actors.WaitTurn(ctx, sub, live.ID(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return done
	}

	live, warns, err := openLive(f, cmdutil.GlobalOptions{}, liveRequest{Cwd: e.work}, nil)
	if err != nil {
		t.Fatalf("open: %v (warnings %q)", err, warns)
	}
	done := turn(live, "hello")
	if done.Status != event.StatusOK || done.Text != "first answer" {
		t.Fatalf("first turn: %+v", done)
	}
	// The view folds on its own goroutine: ask for the state as of the
	// turn's end.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if snap, err := live.SnapshotAt(ctx, done.Seq); err != nil || snap.Running || snap.Seq < done.Seq {
		t.Fatalf("snapshot after the turn: %+v, %v", snap, err)
	}
	id := live.ID()
	if err := live.Close(10 * time.Second); err != nil {
		t.Fatal(err)
	}

	again, _, err := openLive(f, cmdutil.GlobalOptions{}, liveRequest{Cwd: e.work, Continue: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close(10 * time.Second)
	if again.ID() != id {
		t.Fatalf("continued session %s, want %s", again.ID(), id)
	}
	if done := turn(again, "and then?"); done.Text != "second answer" {
		t.Fatalf("second turn: %+v", done)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "first answer") {
		t.Fatalf("the continued request does not carry the first turn (%d requests)", len(reqs))
	}
}

// TestOpenLiveContinueSelection: the chat's -c (openLive with Continue)
// picks as run -c does: the session used last, never a subagent session.
func TestOpenLiveContinueSelection(t *testing.T) {
	e := newLiveHome(t)
	e.srv.Push(providertest.Turn{Text: "a1"}, providertest.Turn{Text: "b1"}, providertest.Turn{Text: "a2"}, providertest.Turn{Text: "looked"})
	a := e.runJSON(t, "one")
	e.runJSON(t, "two")
	e.runJSON(t, "--resume", a, "three")
	if r := runCLI(t, e.env, "", "subagent", "try", "--cwd", e.work, "explore", "look around"); r.code != 0 {
		t.Fatalf("subagent try: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	live, warns, err := openLive(newFactory(), cmdutil.GlobalOptions{}, liveRequest{Cwd: e.work, Continue: true}, nil)
	if err != nil {
		t.Fatalf("open: %v (warnings %q)", err, warns)
	}
	defer live.Close(10 * time.Second)
	if live.ID() != a {
		t.Fatalf("the chat's -c opened %s, want %s", live.ID(), a)
	}
}
