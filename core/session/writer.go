package session

import (
	"errors"
	"fmt"
	"os"
	"time"

	"reasonix/core/panics"
)

// retryEvery is how long a writer that could not write waits before it
// tries again on its own; an append or a barrier wakes it sooner.
const retryEvery = 2 * time.Second

// testHookWrite, when set by a test, is called with each line just before
// the writer goroutine writes it, so a test can make the writer fail: a
// returned error stands for a failed write (nothing reaches the file), a
// panic for a broken writer.
var testHookWrite func(line []byte) error

// fileWriter is the writer goroutine's hold on the file: the file, nil
// once it is gone, the size of what it holds in whole records, which a
// failed write is cut back to, and whether the last write failed.
type fileWriter struct {
	f       *os.File
	size    int64
	failing bool
}

// write appends line in one write. A write that fails part way is cut back
// to the last whole record, so a retry starts on a line of its own; when
// even that fails the file cannot be trusted any more and the failure is
// fatal.
func (w *fileWriter) write(line []byte) (fatal bool, err error) {
	if testHookWrite != nil {
		if err := testHookWrite(line); err != nil {
			return false, fmt.Errorf("append transcript: %w", err)
		}
	}
	// One write per record: with O_APPEND a crash leaves either the whole
	// line or a torn tail that Load skips.
	n, err := w.f.Write(line)
	if err == nil {
		w.size += int64(n)
		return false, nil
	}
	err = fmt.Errorf("append transcript: %w", err)
	if n > 0 {
		if terr := w.f.Truncate(w.size); terr != nil {
			return true, errors.Join(err, fmt.Errorf("cut the torn record off: %w", terr))
		}
	}
	return false, err
}

// Notify makes fn hear, from the store's goroutine, each change of the
// store's health: the error when writing starts to fail (at once when it
// is failing already), nil when a retry has written everything that
// waited. A session uses it to warn once per outage instead of once per
// record.
func (s *Store) Notify(fn func(error)) {
	s.mu.Lock()
	s.notify = fn
	cur := s.health()
	s.mu.Unlock()
	if cur != nil && fn != nil {
		fn(cur)
	}
}

// health is the store's failure, nil when it is writing; s.mu is held.
func (s *Store) health() error {
	if s.err != nil {
		return s.err
	}
	return s.failing
}

// setHealth records a fatal failure (err, fatal), a failure to retry
// (err) or a success (nil), and tells the listener when the store went
// from healthy to failing or back.
func (s *Store) setHealth(err error, fatal bool) {
	s.mu.Lock()
	before := s.health()
	if fatal {
		if s.err == nil {
			s.err = err
		}
	} else {
		s.failing = err
	}
	after, fn := s.health(), s.notify
	s.mu.Unlock()
	if fn != nil && (before == nil) != (after == nil) {
		fn(after)
	}
}

// run owns the file: it creates it when open is set, writes the header
// (when there is one: a reopened file has it already) and then every
// queued line, and on Close syncs and closes it and releases the lock. A
// line that cannot be written waits at the head of the queue for the next
// try; a panic stops the writer for good: the file is closed and the panic
// becomes the store's error, recorded before done is closed so that Close
// returns it.
func (s *Store) run(f *os.File, open func() (*os.File, error), header []byte) {
	defer close(s.done)
	w := &fileWriter{f: f}
	// Registered before the panic handler, so it runs after it: the file
	// is closed before the lock is let go.
	defer func() {
		if s.lock != nil {
			if err := s.lock.release(); err != nil {
				s.setHealth(fmt.Errorf("unlock transcript: %w", err), true)
			}
		}
	}()
	defer panics.Recover(func(err error) {
		s.setHealth(fmt.Errorf("write transcript: %w", err), true)
		if w.f != nil {
			w.f.Close()
		}
	})
	if open != nil {
		var err error
		if w.f, err = open(); err != nil {
			s.setHealth(err, true)
		}
	}
	if w.f != nil {
		if st, err := w.f.Stat(); err == nil {
			w.size = st.Size()
		}
	}
	var pending []entry
	if header != nil {
		pending = append(pending, entry{line: header})
	}
	// Barriers still waiting when the writer stops (a panic) are answered
	// with the store's error, so nobody waits on a dead writer.
	defer func() {
		s.mu.Lock()
		rest, err := append(pending, s.queue...), s.health()
		s.queue = nil
		s.mu.Unlock()
		if err == nil {
			err = errors.New("transcript writer stopped")
		}
		for _, e := range rest {
			if e.barrier != nil {
				e.barrier(err)
			}
		}
	}()
	retry := time.NewTimer(retryEvery)
	retry.Stop()
	defer retry.Stop()
	// A wake can outlive what it announced (the entry was taken with an
	// earlier one): only new entries, the retry timer or the close make a
	// round write, so a failing line is not tried again, and a torn tail
	// left and cut again, between those.
	fired := true
	for {
		s.mu.Lock()
		fresh := len(s.queue) > 0
		pending, s.queue = append(pending, s.queue...), nil
		closed := s.closed
		s.mu.Unlock()
		if fresh || fired || closed {
			s.drain(w, &pending)
		}
		if closed {
			break
		}
		if len(pending) > 0 {
			retry.Reset(retryEvery)
		}
		fired = false
		select {
		case <-s.wake:
		case <-retry.C:
			fired = true
		}
		retry.Stop()
	}
	s.finish(w, pending, header != nil)
}

// drain writes the pending lines in order, taking each off as it goes, so
// that a panic leaves only what was not handled. A line that cannot be
// written stays, with every line after it; the barriers among them are
// answered at once with the failure.
func (s *Store) drain(w *fileWriter, pending *[]entry) {
	for len(*pending) > 0 {
		e := (*pending)[0]
		if e.barrier != nil {
			*pending = (*pending)[1:]
			s.mu.Lock()
			err := s.health()
			s.mu.Unlock()
			e.barrier(err)
			continue
		}
		if w.f == nil {
			*pending = (*pending)[1:] // failed for good: the line has nowhere to go
			continue
		}
		fatal, err := w.write(e.line)
		switch {
		case fatal:
			*pending = (*pending)[1:]
			s.setHealth(err, true)
			w.f.Close()
			w.f = nil
		case err != nil:
			w.failing = true
			s.setHealth(err, false)
			var left, barriers []entry
			for _, rest := range *pending {
				if rest.barrier != nil {
					barriers = append(barriers, rest)
				} else {
					left = append(left, rest)
				}
			}
			*pending = left
			for _, b := range barriers {
				b.barrier(err)
			}
			return
		default:
			*pending = (*pending)[1:]
			if w.failing {
				w.failing = false
				s.setHealth(nil, false)
			}
		}
	}
}

// finish ends the writer at Close: records still unwritten make the
// failure final, and the file is synced and closed. A new transcript that
// never got its header written is removed rather than left as a file no
// reader can open.
func (s *Store) finish(w *fileWriter, pending []entry, created bool) {
	if len(pending) > 0 {
		s.mu.Lock()
		cause := s.failing
		s.mu.Unlock()
		s.setHealth(fmt.Errorf("close transcript: %d record(s) not written: %w", len(pending), cause), true)
	}
	if w.f == nil {
		return
	}
	syncErr := w.f.Sync()
	if err := errors.Join(syncErr, w.f.Close()); err != nil {
		s.setHealth(fmt.Errorf("close transcript: %w", err), true)
	}
	if created && w.size == 0 {
		if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.setHealth(fmt.Errorf("remove empty transcript: %w", err), true)
		}
	}
}

// Close writes everything queued (one last try for what is waiting on a
// failed write), syncs the file and closes it. It returns nil when every
// record reached the file, however many tries that took, and otherwise
// the failure that cost records. Closing twice is harmless.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
