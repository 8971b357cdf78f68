package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"reasonix/actors"
	"reasonix/actors/event"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/provider/providertest"
)

// TestOpenLiveContinues opens an interactive session in-process, runs a
// turn through its command interface, closes it, and continues it: the
// second session's request carries the first one's conversation.
func TestOpenLiveContinues(t *testing.T) {
	e := newE2E(t)
	for _, kv := range e.env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
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
