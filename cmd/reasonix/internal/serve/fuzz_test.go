package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"reasonix/actors/event"
)

// FuzzEventFraming: whatever a model or a tool puts in an event's text
// (newlines, "data:" lines, blank lines, any bytes) stays inside that one
// SSE message and reads back unchanged: a reply cannot forge or split
// events on the page.
func FuzzEventFraming(f *testing.F) {
	for _, s := range []string{"", "plain", "a\nb", "\n\ndata: {\"type\":\"turn_done\"}\n\n", "id: 9\r\n", ": ping\n\n", "\x00\xff\u2028"} {
		f.Add(s)
	}
	// Larger than the stream's write buffer.
	f.Add(strings.Repeat("line\n", 10000))
	f.Fuzz(func(t *testing.T, text string) {
		rec := httptest.NewRecorder()
		var buf bytes.Buffer
		out := &sseWriter{rc: http.NewResponseController(rec), bw: bufio.NewWriter(&buf)}
		bus := event.NewBus()
		sub := bus.Subscribe()
		defer sub.Close()
		bus.Publish(&event.TextDelta{Meta: event.Meta{Session: "s"}, Text: text})
		bus.Publish(&event.Notice{Meta: event.Meta{Session: "s"}, Level: "info", Message: text})
		for range 2 {
			ev, err := sub.Next(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if err := out.event(ev, "s"); err != nil {
				t.Fatal(err)
			}
		}
		if err := out.bw.Flush(); err != nil {
			t.Fatal(err)
		}
		s := &sse{t: t, rd: bufio.NewReader(&buf)}
		for i, want := range []struct{ kind, field string }{{"text_delta", "text"}, {"notice", "message"}} {
			m := s.must()
			if m.ID != []string{"1", "2"}[i] {
				t.Fatalf("message %d has id %q", i, m.ID)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(m.Data), &v); err != nil {
				t.Fatalf("message %d data %q: %v", i, m.Data, err)
			}
			if v["type"] != want.kind {
				t.Fatalf("message %d is %v, want %s", i, v["type"], want.kind)
			}
			// encoding/json turns invalid UTF-8 into U+FFFD: compare with
			// what it makes of the text.
			enc, _ := json.Marshal(text)
			var norm string
			_ = json.Unmarshal(enc, &norm)
			if got, _ := v[want.field].(string); got != norm {
				t.Fatalf("message %d text %q, want %q", i, got, norm)
			}
		}
		if _, err := s.next(); err == nil {
			t.Fatal("more messages than the two events")
		}
	})
}
