package session

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

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
	gotH, got, err := Load(s.Path())
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

func TestLoad(t *testing.T) {
	t.Parallel()
	hdr := `{"type":"header","header":{"version":1,"id":"x"}}` + "\n"
	msg := `{"type":"message","message":{"role":"user","content":"a"}}` + "\n"
	cases := []struct {
		name    string
		body    string
		msgs    int
		wantErr string
	}{
		{"complete", hdr + msg + msg, 2, ""},
		{"torn tail ignored", hdr + msg + `{"type":"message","mess`, 1, ""},
		{"unknown record skipped", hdr + `{"type":"usage","x":1}` + "\n" + msg, 1, ""},
		{"corrupt middle line", hdr + "{oops\n" + msg, 0, "line 2"},
		{"no header", msg, 0, "no header"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, msgs, err := Load(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) != tc.msgs {
				t.Fatalf("got %d messages, want %d", len(msgs), tc.msgs)
			}
		})
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
	h, msgs, err := Load(s.Path())
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
