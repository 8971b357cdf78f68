package session

import (
	"bytes"
	"os"
	"testing"
	"time"

	"reasonix/core/provider"
)

// TestBarrierAfterWrites: a barrier is called only once every message
// appended before it is in the file, and at once on a closed store.
func TestBarrierAfterWrites(t *testing.T) {
	t.Parallel()
	s, err := Create(t.TempDir(), Header{ID: NewID(time.Now())})
	must(t, err)
	for i := range 50 {
		must(t, s.Append(provider.Message{Role: provider.RoleUser, Content: string(rune('a' + i%26))}))
	}
	got := make(chan int, 1)
	s.Barrier(func(err error) {
		if err != nil {
			t.Errorf("barrier error: %v", err)
		}
		data, _ := os.ReadFile(s.Path())
		got <- bytes.Count(data, []byte("\n"))
	})
	select {
	case n := <-got:
		if n != 51 { // the header and 50 messages
			t.Fatalf("barrier saw %d lines, want 51", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("barrier never called")
	}
	must(t, s.Close())
	closed := make(chan error, 1)
	s.Barrier(func(err error) { closed <- err })
	if err := <-closed; err == nil {
		t.Fatal("a barrier on a closed store reported no error")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
