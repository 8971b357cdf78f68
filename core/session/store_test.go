package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"reasonix/core/panics"
	"reasonix/core/provider"
)

func TestStoreRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := Header{ID: NewID(time.Unix(0, 0)), Cwd: "/work", Model: "m"}
	s, err := Create(dir, h)
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Message{
		{Role: provider.RoleSystem, Content: "sys"},
		{Role: provider.RoleUser, Content: "hi\nthere"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c1", Name: "ls", Arguments: `{"path":"."}`}}},
		{Role: provider.RoleTool, ToolCallID: "c1", Content: "a.go"},
	}
	for _, m := range want {
		if err := s.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(want[0]); err == nil {
		t.Fatal("append after close succeeded")
	}
	gotH, got, _, err := Load(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if gotH.ID != h.ID || gotH.Version != FormatVersion || gotH.Model != "m" {
		t.Errorf("header = %+v", gotH)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("messages = %+v, want %+v", got, want)
	}
}

func TestCreateRefusesExisting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := Create(dir, Header{ID: "same"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := Create(dir, Header{ID: "same"}); err == nil {
		t.Fatal("second Create with the same id succeeded")
	}
}

func TestSlug(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"/home/u/my proj": "home-u-my-proj",
		"/":               "root",
		`C:\src\app`:      "C--src-app",
	}
	for in, want := range cases {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOpenWritesInOrder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "later", "sessions")
	s, err := Open(dir, Header{ID: "lazy"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if err := s.Append(provider.Message{Role: provider.RoleUser, Content: strings.Repeat("x", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	h, msgs, _, err := Load(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if h.ID != "lazy" || len(msgs) != 200 {
		t.Fatalf("header %+v, %d messages", h, len(msgs))
	}
	for i, m := range msgs {
		if len(m.Content) != i {
			t.Fatalf("message %d out of order (len %d)", i, len(m.Content))
		}
	}
}

func TestOpenReportsCreateFailure(t *testing.T) {
	t.Parallel()
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(filepath.Join(blocker, "sessions"), Header{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Append(provider.Message{Role: provider.RoleUser, Content: "lost"})
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "create transcript dir") {
		t.Fatalf("Close = %v, want the create failure", err)
	}
	if err := s.Append(provider.Message{Role: provider.RoleUser}); err == nil {
		t.Fatal("append after a failure and close succeeded")
	}
}

// TestWriterPanic makes the writer goroutine panic on one line: the panic
// must become the store's error, reported by later Appends and by Close,
// with the lines before it kept. It sets a package-level hook, so it does
// not run in parallel.
func TestWriterPanic(t *testing.T) {
	tests := []struct {
		name     string
		start    func(dir string, h Header) (*Store, error)
		panicOn  string // a line containing this panics
		value    any
		wantMsgs []string
	}{
		{name: "create, on the header", start: Create, panicOn: `"type":"header"`, value: "bad header"},
		{name: "open, on a message", start: Open, panicOn: "boom", value: io.ErrShortWrite, wantMsgs: []string{"ok"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			testHookWrite = func(line []byte) error {
				if bytes.Contains(line, []byte(tc.panicOn)) {
					panic(tc.value)
				}
				return nil
			}
			defer func() { testHookWrite = nil }()
			s, err := tc.start(t.TempDir(), Header{ID: "p"})
			if err != nil {
				t.Fatal(err)
			}
			for _, text := range []string{"ok", "boom"} {
				if err := s.Append(provider.Message{Role: provider.RoleUser, Content: text}); err != nil {
					break // the header panicked already
				}
			}
			select {
			case <-s.done:
			case <-time.After(10 * time.Second):
				t.Fatal("writer did not stop after its panic")
			}
			check := func(what string, err error) {
				t.Helper()
				var pe *panics.Error
				if !errors.As(err, &pe) || pe.Value != tc.value {
					t.Fatalf("%s = %v, want the writer's panic", what, err)
				}
				if want := fmt.Sprintf("write transcript: panic: %v", tc.value); err.Error() != want {
					t.Errorf("%s = %q, want %q", what, err, want)
				}
			}
			check("Append", s.Append(provider.Message{Role: provider.RoleUser, Content: "late"}))
			check("Close", s.Close())
			if tc.wantMsgs == nil {
				return
			}
			_, msgs, _, err := Load(s.Path())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range msgs {
				got = append(got, m.Content)
			}
			if !reflect.DeepEqual(got, tc.wantMsgs) {
				t.Errorf("transcript holds %q, want %q", got, tc.wantMsgs)
			}
		})
	}
}
