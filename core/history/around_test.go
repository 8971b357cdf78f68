package history

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix/core/compact"
	"reasonix/core/provider"
	"reasonix/core/session"
)

func TestAround(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	var msgs []provider.Message
	for i := 1; i <= 30; i++ {
		msgs = append(msgs, user(fmt.Sprintf("message %d", i)))
	}
	long := strings.Repeat("é", 3000) // 6000 bytes, 2 per rune
	msgs[14] = provider.Message{Role: provider.RoleAssistant, Content: long,
		ToolCalls: []provider.ToolCall{{ID: "c", Name: "bash", Arguments: `{"command":"ls"}`}}}
	msgs[15] = toolResult("c", "listing")
	msgs[16] = provider.Message{Role: provider.RoleAssistant, Content: "Reading.",
		ToolCalls: []provider.ToolCall{{ID: "c2", Name: "read_file", Arguments: `{"path":"a.go"}`}}}
	h.transcript(h.sessions, "s", day, msgs...)

	ordinals := func(w Window) []int {
		var out []int
		for _, m := range w.Messages {
			out = append(out, m.Ordinal)
		}
		return out
	}
	tests := []struct {
		name    string
		ordinal int
		radius  int
		want    []int
	}{
		{"middle", 10, 3, []int{7, 8, 9, 10, 11, 12, 13}},
		{"start", 1, 3, []int{1, 2, 3, 4}},
		{"end", 30, 2, []int{28, 29, 30}},
		{"hit alone", 5, 0, []int{5}},
		{"radius capped", 15, 50, []int{5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, err := Around(h.home, h.sessions, Ref{Name: "s", Ordinal: tt.ordinal}, tt.radius)
			if err != nil {
				t.Fatal(err)
			}
			if got := ordinals(w); !slices.Equal(got, tt.want) {
				t.Errorf("ordinals = %v, want %v", got, tt.want)
			}
			if w.Total != 30 || w.Session != "s" || !w.Started.Equal(day) || w.Source != session.Slug(h.project) {
				t.Errorf("window = %+v", w)
			}
		})
	}

	t.Run("long message clipped on a rune boundary", func(t *testing.T) {
		t.Parallel()
		w, err := Around(h.home, h.sessions, Ref{Name: "s", Ordinal: 15}, 1)
		if err != nil {
			t.Fatal(err)
		}
		m := w.Messages[1]
		if len(m.Text) > MessageBytes || m.Cut == 0 || !strings.HasPrefix(m.Text, "éé") || strings.ContainsRune(m.Text, '\uFFFD') {
			t.Errorf("clipped message: %d bytes, cut %d", len(m.Text), m.Cut)
		}
		out := FormatWindow(w)
		for _, want := range []string{"Session s", "messages 14-16 of 30 around #15", "--- #15 assistant <- hit ---",
			"more bytes not shown", "--- #16 tool ---", "[result of tool call c]\nlisting"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("tool calls shown", func(t *testing.T) {
		t.Parallel()
		w, err := Around(h.home, h.sessions, Ref{Name: "s", Ordinal: 17}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := w.Messages[0].Text, "Reading.\n[tool call c2 read_file: {\"path\":\"a.go\"}]"; got != want {
			t.Errorf("text = %q, want %q", got, want)
		}
	})
}

func TestAroundArchive(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	path := h.archive(day,
		compact.ArchiveRecord{Session: "a", Index: 3, Tier: "prune", Time: day, Message: toolResult("c1", "first output")},
		compact.ArchiveRecord{Session: "b", Index: 9, Tier: "fold", Time: day, Message: assistant("second")},
	)
	ref := Ref{Archive: true, Name: strings.TrimSuffix(filepath.Base(path), ".jsonl"), Ordinal: 2}
	w, err := Around(h.home, "", ref, 3)
	if err != nil {
		t.Fatal(err)
	}
	if w.Total != 2 || len(w.Messages) != 2 || w.Messages[0].Session != "a" || w.Messages[1].Session != "b" ||
		!w.Messages[1].Time.Equal(day) || w.Source != ArchiveSource {
		t.Fatalf("window = %+v", w)
	}
	out := FormatWindow(w)
	if !strings.Contains(out, "Archive "+filepath.Base(path)) || !strings.Contains(out, "--- #2 assistant session=b archived=2026-03-02T09:30Z <- hit ---") {
		t.Errorf("output:\n%s", out)
	}
}

func TestAroundErrors(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	h.transcript(h.sessions, "s", day, user("one"), user("two"))
	other := session.ProjectDir(h.home, "/other")
	h.transcript(other, "o", day, user("elsewhere"))

	if w, err := Around(h.home, h.sessions, Ref{Name: "o", Ordinal: 1}, 0); err != nil || w.Messages[0].Text != "elsewhere" {
		t.Errorf("a ref to another project's session: %+v, %v", w, err)
	}
	tests := []struct {
		name string
		ref  Ref
		want string
	}{
		{"past the end", Ref{Name: "s", Ordinal: 3}, "holds 2 messages"},
		{"no such session", Ref{Name: "nope", Ordinal: 1}, "no saved session nope"},
		{"no such archive", Ref{Archive: true, Name: "nope", Ordinal: 1}, "no archive file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Around(h.home, h.sessions, tt.ref, 1)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Around(%s) = %v, want an error containing %q", tt.ref, err, tt.want)
			}
		})
	}
	if _, err := Around(h.home, h.sessions, Ref{Name: "s", Ordinal: 1}, -1); err == nil {
		t.Error("a negative radius was accepted")
	}
}

func TestParseRef(t *testing.T) {
	t.Parallel()
	good := []struct {
		in   string
		want Ref
	}{
		{"20261130-073000-1a2b3c4d#12", Ref{Name: "20261130-073000-1a2b3c4d", Ordinal: 12}},
		{" archive/20260302-093000.000000000#1 ", Ref{Archive: true, Name: "20260302-093000.000000000", Ordinal: 1}},
		{"archive/20260302-093000.000000000-2#7", Ref{Archive: true, Name: "20260302-093000.000000000-2", Ordinal: 7}},
	}
	for _, tt := range good {
		got, err := ParseRef(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
		if err == nil && got.String() != strings.TrimSpace(tt.in) {
			t.Errorf("%+v renders as %q, want %q", got, got.String(), strings.TrimSpace(tt.in))
		}
	}
	for _, in := range []string{"", "s", "s#", "s#0", "s#-1", "s#x", "#3", "../s#1", "a/b#1", "archive/../x#1",
		".hidden#1", "s\x00#1", "archive/#1", `s\x#1`} {
		if _, err := ParseRef(in); err == nil {
			t.Errorf("ParseRef(%q) accepted", in)
		}
	}
}
