package providertest

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"reasonix/core/sse"
)

// TestHoldPausesMidStream: a held turn delivers its first events, then
// nothing until the test closes the channel, then the rest; a held turn
// whose client goes away ends without the rest.
func TestHoldPausesMidStream(t *testing.T) {
	t.Parallel()
	t.Run("released", func(t *testing.T) {
		t.Parallel()
		srv := Start(t)
		release := make(chan struct{})
		srv.Push(Turn{Text: "abcdefgh-rest", Hold: release, FaultAfterEvents: 2})
		resp := post(t, client(t), srv, streamBody)
		defer resp.Body.Close()
		r := sse.NewReader(resp.Body)
		var got []string
		for range 2 {
			ev, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ev.Data)
		}
		if !strings.Contains(got[1], "abcdefgh") {
			t.Fatalf("second event before the hold = %s", got[1])
		}
		// The third event is written only after the release: read it on
		// another goroutine and check it has not arrived before.
		next := make(chan string, 1)
		go func() {
			ev, err := r.Next()
			if err != nil {
				next <- "error: " + err.Error()
				return
			}
			next <- ev.Data
		}()
		// Absence can only be checked for a while; a broken hold shows
		// within it, a working one never fails it.
		select {
		case d := <-next:
			t.Fatalf("an event arrived before the release: %s", d)
		case <-time.After(100 * time.Millisecond):
		}
		close(release)
		if d := <-next; !strings.Contains(d, "-rest") {
			t.Fatalf("event after the release = %s", d)
		}
		var rest []string
		for {
			ev, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				break
			}
			rest = append(rest, ev.Data)
		}
		if len(rest) == 0 || rest[len(rest)-1] != "[DONE]" {
			t.Fatalf("rest of the stream = %v", rest)
		}
	})
	t.Run("client gone", func(t *testing.T) {
		t.Parallel()
		srv := Start(t)
		srv.Push(Turn{Text: "abc", Hold: make(chan struct{}), FaultAfterEvents: 1})
		ctx, cancel := context.WithCancel(context.Background())
		resp := postCtx(t, ctx, client(t), srv, streamBody)
		r := sse.NewReader(resp.Body)
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		cancel()
		if _, err := r.Next(); err == nil {
			t.Fatal("read succeeded after cancel")
		}
	})
	// The client sees its own cancel whatever the handler does, so hold
	// itself is checked for ending on each of its three events.
	t.Run("hold ends", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name string
			end  func(srv *Server, cancel context.CancelFunc, release chan struct{})
			want bool
		}{
			{"released", func(_ *Server, _ context.CancelFunc, release chan struct{}) { close(release) }, true},
			{"client gone", func(_ *Server, cancel context.CancelFunc, _ chan struct{}) { cancel() }, false},
			{"server closed", func(srv *Server, _ context.CancelFunc, _ chan struct{}) { srv.Close() }, false},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				srv := Start(t)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				release := make(chan struct{})
				got := make(chan bool, 1)
				go func() { got <- srv.hold(ctx, release) }()
				tc.end(srv, cancel, release)
				select {
				case ok := <-got:
					if ok != tc.want {
						t.Fatalf("hold = %v, want %v", ok, tc.want)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("hold did not return")
				}
			})
		}
	})
}
