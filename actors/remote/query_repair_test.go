package remote

import (
	"context"
	"errors"
	"testing"
	"time"

	"reasonix/actors/kernel"
)

// TestQueryCrashIsItsAnswer: the query actor is spawned with the repair
// middleware, so a panic in its handler ends the query at once with the
// crash, instead of leaving the caller waiting for its deadline.
func TestQueryCrashIsItsAnswer(t *testing.T) {
	// Not parallel: the fault hook is process-wide.
	fired, clear := kernel.InjectFault("query", "*actor.Started", false)
	t.Cleanup(clear)
	q, err := NewWorkerQuerier(RemoteOptions{Token: testToken})
	must(t, err)
	defer q.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = q.hello(ctx, "127.0.0.1:9", 0)
	var crashed *kernel.Crashed
	if !fired.Load() || !errors.As(err, &crashed) {
		t.Fatalf("fired %v, err %v; want the crash as the answer", fired.Load(), err)
	}
	if ctx.Err() != nil {
		t.Fatal("the query waited for its deadline")
	}
}
