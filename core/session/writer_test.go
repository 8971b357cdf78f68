package session

import (
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"reasonix/core/provider"
)

// fullDisk makes every write fail with ENOSPC while it is on. It sets the
// package's write hook, so the tests that use it do not run in parallel.
type fullDisk struct{ on atomic.Bool }

func (d *fullDisk) install(t *testing.T) {
	t.Helper()
	testHookWrite = func([]byte) error {
		if d.on.Load() {
			return syscall.ENOSPC
		}
		return nil
	}
	t.Cleanup(func() { testHookWrite = nil })
}

// healthLog records what Notify reports.
type healthLog struct {
	mu   sync.Mutex
	seen []error
	ch   chan error
}

func newHealthLog() *healthLog { return &healthLog{ch: make(chan error, 16)} }

func (l *healthLog) hear(err error) {
	l.mu.Lock()
	l.seen = append(l.seen, err)
	l.mu.Unlock()
	l.ch <- err
}

func (l *healthLog) next(t *testing.T) error {
	t.Helper()
	select {
	case err := <-l.ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the store reported no change of health")
		return nil
	}
}

func barrierErr(t *testing.T, s *Store) error {
	t.Helper()
	got := make(chan error, 1)
	s.Barrier(func(err error) { got <- err })
	select {
	case err := <-got:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("barrier never answered")
		return nil
	}
}

// TestStoreKeepsRecordsThroughAFullDisk: while writes fail, appends still
// succeed and keep their records, a barrier answers at once with the
// failure, and the listener hears it once however many records fail; once
// space returns the next append writes everything that waited, in order,
// the listener hears the recovery, and Close reports nothing lost.
func TestStoreKeepsRecordsThroughAFullDisk(t *testing.T) {
	disk := &fullDisk{}
	disk.install(t)
	s, err := Create(t.TempDir(), Header{ID: "full"})
	must(t, err)
	health := newHealthLog()
	s.Notify(health.hear)
	must(t, s.Append(provider.Message{Role: provider.RoleUser, Content: "0"}))
	must(t, barrierErr(t, s))

	disk.on.Store(true)
	for i := 1; i <= 5; i++ {
		if err := s.Append(provider.Message{Role: provider.RoleUser, Content: string(rune('0' + i))}); err != nil {
			t.Fatalf("append %d on a full disk: %v", i, err)
		}
	}
	if err := barrierErr(t, s); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("barrier on a full disk = %v, want ENOSPC", err)
	}
	if err := health.next(t); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("first health report = %v, want ENOSPC", err)
	}

	disk.on.Store(false)
	must(t, s.Append(provider.Message{Role: provider.RoleUser, Content: "6"}))
	if err := barrierErr(t, s); err != nil {
		t.Fatalf("barrier once space returned = %v", err)
	}
	if err := health.next(t); err != nil {
		t.Fatalf("second health report = %v, want the recovery (nil)", err)
	}
	must(t, s.Close())
	health.mu.Lock()
	if len(health.seen) != 2 {
		t.Errorf("health reports = %v, want one failure and one recovery", health.seen)
	}
	health.mu.Unlock()
	_, msgs, warn, err := Load(s.Path())
	must(t, err)
	var got []string
	for _, m := range msgs {
		got = append(got, m.Content)
	}
	if strings.Join(got, "") != "0123456" || warn != nil {
		t.Fatalf("transcript holds %q (warning %v), want every record in order", got, warn)
	}
}

// TestStoreRetriesOnItsOwn: a store whose disk fills up and frees again
// writes the waiting records without another append to wake it.
func TestStoreRetriesOnItsOwn(t *testing.T) {
	disk := &fullDisk{}
	disk.install(t)
	s, err := Create(t.TempDir(), Header{ID: "idle"})
	must(t, err)
	health := newHealthLog()
	s.Notify(health.hear)
	disk.on.Store(true)
	must(t, s.Append(provider.Message{Role: provider.RoleUser, Content: "waits"}))
	if err := health.next(t); err == nil {
		t.Fatal("no failure reported")
	}
	disk.on.Store(false)
	if err := health.next(t); err != nil {
		t.Fatalf("recovery = %v", err)
	}
	must(t, s.Close())
	if _, msgs, _, err := Load(s.Path()); err != nil || len(msgs) != 1 {
		t.Fatalf("transcript: %d messages, %v", len(msgs), err)
	}
}

// TestStoreCloseReportsWhatWasLost: records still waiting when the store
// is closed make Close fail with the cause, and later appends fail too; a
// new transcript whose header never reached the disk is removed.
func TestStoreCloseReportsWhatWasLost(t *testing.T) {
	disk := &fullDisk{}
	disk.install(t)
	disk.on.Store(true)
	s, err := Create(t.TempDir(), Header{ID: "lost"})
	must(t, err)
	must(t, s.Append(provider.Message{Role: provider.RoleUser, Content: "never written"}))
	err = s.Close()
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "2 record(s) not written") {
		t.Fatalf("Close = %v, want the two lost records and ENOSPC", err)
	}
	if err := s.Append(provider.Message{Role: provider.RoleUser}); err == nil {
		t.Fatal("append after a lossy close succeeded")
	}
	if _, err := os.Stat(s.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a transcript without its header was left behind: %v", err)
	}
}

// BenchmarkStoreTurn appends what a turn of 20 steps appends (an assistant
// message and a tool result of 1 KiB each per step) and waits on a
// barrier, as the executor before each step's tools and the session at
// the turn's end do.
func BenchmarkStoreTurn(b *testing.B) {
	s, err := Create(b.TempDir(), Header{ID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	body := strings.Repeat("x", 1024)
	done := make(chan error, 1)
	b.ResetTimer()
	for range b.N {
		for range 20 {
			if err := s.Append(provider.Message{Role: provider.RoleAssistant, Content: body}); err != nil {
				b.Fatal(err)
			}
			if err := s.Append(provider.Message{Role: provider.RoleTool, ToolCallID: "c", Content: body}); err != nil {
				b.Fatal(err)
			}
		}
		s.Barrier(func(err error) { done <- err })
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}
