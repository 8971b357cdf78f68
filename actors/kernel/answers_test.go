package kernel

import (
	"context"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// answering answers "ask" itself and panics on "crash"; its repair answers
// the lost request only when the handler had not.
type answering struct {
	Answers
}

func (a *answering) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case string:
		if m == "crash" {
			panic("injected")
		}
		c.Respond("answer")
		a.Answer()
	case *Crashed:
		if !a.Answered() && m.Sender != nil {
			c.Send(m.Sender, "repaired")
		}
	}
}

// TestAnswersAreClearedForEachMessage: a request answered by one handler
// does not count as answered for the next; the repair of a crash in the
// next one answers it. Without the middleware's clearing, the second
// request would wait for its deadline.
func TestAnswersAreClearedForEachMessage(t *testing.T) {
	t.Parallel()
	sys := NewSystem(nil)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = sys.Shutdown(ctx)
	})
	pid := sys.Root().Spawn(Props("answering", sys.Logger(), func() actor.Actor { return &answering{} }))
	for _, tc := range []struct{ ask, want string }{{"ask", "answer"}, {"crash", "repaired"}, {"ask", "answer"}, {"crash", "repaired"}} {
		got, err := sys.Root().RequestFuture(pid, tc.ask, 5*time.Second).Result()
		if err != nil || got != tc.want {
			t.Fatalf("%s: got %v, %v; want %q", tc.ask, got, err, tc.want)
		}
	}
}
