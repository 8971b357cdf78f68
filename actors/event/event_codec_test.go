package event

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestEventCodecRoundTrip: Encode, DecodeEvent, Encode gives the same
// bytes for the golden sample of every kind, so nothing (Meta included)
// is lost on the way.
func TestEventCodecRoundTrip(t *testing.T) {
	for _, sample := range Samples() {
		t.Run(sample.Kind(), func(t *testing.T) {
			line, err := Encode(sample)
			must(t, err)
			ev, err := DecodeEvent(line)
			if err != nil {
				t.Fatalf("decode %s: %v", line, err)
			}
			if reflect.TypeOf(ev) != reflect.TypeOf(sample) {
				t.Fatalf("decoded a %T, want %T", ev, sample)
			}
			again, err := Encode(ev)
			must(t, err)
			if !bytes.Equal(again, line) {
				t.Fatalf("re-encoded line differs:\n got %s\nwant %s", again, line)
			}
			if got, want := MetaOf(ev), MetaOf(sample); !got.Time.Equal(want.Time) || got.Seq != want.Seq ||
				got.Session != want.Session || got.Task != want.Task || got.Role != want.Role {
				t.Fatalf("meta %+v, want %+v", got, want)
			}
		})
	}
}

// TestEventCodecGoldenFiles decodes the committed golden lines
// themselves, so the codec reads what frontends were promised, not only
// what Encode writes today.
func TestEventCodecGoldenFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenDir, "events", "*.json"))
	must(t, err)
	if len(files) != len(Samples()) {
		t.Fatalf("%d golden event files, %d samples", len(files), len(Samples()))
	}
	for _, path := range files {
		line, err := os.ReadFile(path)
		must(t, err)
		line = bytes.TrimSpace(line)
		ev, err := DecodeEvent(line)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if want := strings.TrimSuffix(filepath.Base(path), ".json"); ev.Kind() != want {
			t.Errorf("%s decodes to a %s event", path, ev.Kind())
		}
		again, err := Encode(ev)
		must(t, err)
		if !bytes.Equal(again, line) {
			t.Errorf("%s re-encodes as\n%s", path, again)
		}
	}
}

// TestEventCodecCoversEveryKind: the decoder's table and the golden
// samples (complete by TestGoldenCoversEveryType) name the same kinds,
// and each constructor makes an event of its own kind.
func TestEventCodecCoversEveryKind(t *testing.T) {
	sampled := map[string]reflect.Type{}
	for _, e := range Samples() {
		sampled[e.Kind()] = reflect.TypeOf(e)
	}
	for _, kind := range slices.Sorted(maps.Keys(sampled)) {
		if _, ok := eventTypes[kind]; !ok {
			t.Errorf("%s has a golden sample but no entry in eventTypes (event_codec.go)", kind)
		}
	}
	for kind, mk := range eventTypes {
		ev := mk()
		if ev.Kind() != kind {
			t.Errorf("eventTypes[%q] makes a %s event", kind, ev.Kind())
		}
		if want, ok := sampled[kind]; !ok {
			t.Errorf("eventTypes has %s, which has no golden sample", kind)
		} else if reflect.TypeOf(ev) != want {
			t.Errorf("eventTypes[%q] makes a %T, the sample is a %v", kind, ev, want)
		}
	}
	if !slices.Equal(eventKinds, slices.Sorted(maps.Keys(eventTypes))) {
		t.Errorf("eventKinds %v is not the table's sorted keys", eventKinds)
	}
}

func TestEventCodecTypeNotFirst(t *testing.T) {
	ev, err := DecodeEvent([]byte(` {"text":"hi", "seq":4, "type" : "text_delta", "session":"s1","task":"f1.1","later_field":[1,2]}`))
	must(t, err)
	d, ok := ev.(*TextDelta)
	if !ok || d.Text != "hi" || d.Seq != 4 || d.Session != "s1" || d.Task != "f1.1" {
		t.Fatalf("decoded %#v", ev)
	}
	// An escaped type is read through encoding/json, not the prefix.
	ev, err = DecodeEvent([]byte(`{"type":"text\u005fdelta","text":"hi"}`))
	must(t, err)
	if _, ok := ev.(*TextDelta); !ok {
		t.Fatalf("escaped type decoded to %T", ev)
	}
}

func TestEventCodecErrors(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{``, "not a JSON object"},
		{`not json`, "not a JSON object"},
		{`[1,2]`, "not a JSON object"},
		{`{"text":"hi"}`, `missing "type"`},
		{`{"type":null}`, `missing "type"`},
		{`{"type":7}`, `"type"`},
		{`{"type":"text_deltas","text":"hi"}`, `unknown type "text_deltas"`},
		{`{"type":"command","text":"hi"}`, `unknown type "command"`},
		{`{"type":"text_delta","text":5}`, "text_delta event"},
		{`{"type":"text_delta","text":"hi"} {"type":"text_delta"}`, "text_delta event"},
		{`{"type":"text_delta","text":"hi"`, "text_delta event"},
		{`{"type":"prompt","text":"a command is not an event"}`, `unknown type "prompt"`},
	} {
		ev, err := DecodeEvent([]byte(c.line))
		if err == nil {
			t.Errorf("DecodeEvent(%s) = %#v, want an error", c.line, ev)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("DecodeEvent(%s): error %q does not mention %q", c.line, err, c.want)
		}
	}
}
