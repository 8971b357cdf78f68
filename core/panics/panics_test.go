package panics

import (
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
)

func TestGoReportsPanic(t *testing.T) {
	got := make(chan error, 1)
	Go(func() { panic("boom") }, func(err error) { got <- err })
	err := <-got
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("report got %T, want *Error", err)
	}
	if pe.Value != "boom" || err.Error() != "panic: boom" {
		t.Fatalf("got %v (%q)", pe.Value, err)
	}
	if !strings.Contains(string(pe.Stack), "panics_test.go") {
		t.Fatalf("stack does not show the panicking function:\n%s", pe.Stack)
	}
}

func TestGoGroupWaitsForReport(t *testing.T) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var reported []error
	for range 4 {
		GoGroup(&wg, func() { panic(io.EOF) }, func(err error) {
			mu.Lock()
			reported = append(reported, err)
			mu.Unlock()
		})
	}
	GoGroup(&wg, func() {}, func(error) { t.Error("report called without a panic") })
	wg.Wait()
	if len(reported) != 4 {
		t.Fatalf("got %d reports, want 4", len(reported))
	}
	if !errors.Is(reported[0], io.EOF) {
		t.Fatalf("Unwrap lost the error value: %v", reported[0])
	}
}

func TestCatch(t *testing.T) {
	f := func(p bool) (err error) {
		defer Catch(&err)
		if p {
			panic("bad index")
		}
		return nil
	}
	if err := f(false); err != nil {
		t.Fatalf("no panic: got %v", err)
	}
	if err := f(true); err == nil || !strings.Contains(err.Error(), "bad index") {
		t.Fatalf("panic: got %v", err)
	}
}

func TestRecoverNilReport(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer Recover(nil)
		panic("dropped")
	}()
	<-done
}
