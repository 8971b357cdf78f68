package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// outcome classifies how a stream ended, so tests can compare endings
// without depending on error text.
type outcome int

const (
	endEOF outcome = iota
	endCut
	endTooLong
	endOther
)

func classify(err error) outcome {
	switch {
	case err == io.EOF:
		return endEOF
	case errors.Is(err, io.ErrUnexpectedEOF):
		return endCut
	case errors.Is(err, ErrLineTooLong):
		return endTooLong
	}
	return endOther
}

func (o outcome) String() string {
	return [...]string{"eof", "cut", "too-long", "other"}[o]
}

// readAll drains r, failing the test if the reader does not end within a
// bound derived from the input size.
func readAll(t testing.TB, r *Reader, inputLen int) ([]Event, error) {
	t.Helper()
	var evs []Event
	for range inputLen + 2 {
		ev, err := r.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	t.Fatalf("reader produced more than %d results for %d input bytes", inputLen+2, inputLen)
	return nil, nil
}

// feeds are the ways a test input is delivered; the parser must not depend
// on how the bytes are split into reads.
var feeds = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"whole", func(r io.Reader) io.Reader { return r }},
	{"bytewise", iotest.OneByteReader},
	{"halves", iotest.HalfReader},
	{"data-err", iotest.DataErrReader},
}

func TestReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []Event
		end  outcome
	}{
		{name: "empty", in: "", end: endEOF},
		{name: "single", in: "data: hello\n\n", want: []Event{{Data: "hello"}}},
		{name: "crlf", in: "data: a\r\n\r\ndata: b\r\n\r\n", want: []Event{{Data: "a"}, {Data: "b"}}},
		{name: "cr only", in: "data: a\r\rdata: b\r\r", want: []Event{{Data: "a"}, {Data: "b"}}},
		{name: "mixed endings", in: "data: a\r\ndata: b\rdata: c\n\r\n", want: []Event{{Data: "a\nb\nc"}}},
		{name: "bom", in: "\xef\xbb\xbfdata: x\n\n", want: []Event{{Data: "x"}}},
		{name: "second bom kept", in: "\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n", want: nil},
		{name: "comments ignored", in: ": keep-alive\n:\ndata: x\n: mid\n\n: tail\n", want: []Event{{Data: "x"}}},
		{name: "multi data", in: "data: one\ndata: two\ndata:three\n\n", want: []Event{{Data: "one\ntwo\nthree"}}},
		{name: "only one space stripped", in: "data:  two spaces\n\n", want: []Event{{Data: " two spaces"}}},
		{name: "no colon is empty value", in: "data\n\n", want: []Event{{Data: ""}}},
		{name: "empty data field dispatches", in: "data:\n\n", want: []Event{{Data: ""}}},
		{name: "no data skipped", in: "event: ping\nid: 7\n\ndata: x\n\n", want: []Event{{Data: "x"}}},
		{name: "event type", in: "event: update\ndata: {}\n\n", want: []Event{{Event: "update", Data: "{}"}}},
		{name: "event type resets", in: "event: a\ndata: 1\n\ndata: 2\n\n", want: []Event{{Event: "a", Data: "1"}, {Data: "2"}}},
		{name: "id", in: "id: 42\ndata: x\n\n", want: []Event{{ID: "42", HasID: true, Data: "x"}}},
		{name: "empty id", in: "id\ndata: x\n\n", want: []Event{{HasID: true, Data: "x"}}},
		{name: "id with nul ignored", in: "id: a\x00b\ndata: x\n\n", want: []Event{{Data: "x"}}},
		{name: "retry", in: "retry: 1500\ndata: x\n\n", want: []Event{{Retry: 1500 * time.Millisecond, Data: "x"}}},
		{name: "bad retry ignored", in: "retry: 15s\ndata: x\n\nretry: -1\ndata: y\n\n", want: []Event{{Data: "x"}, {Data: "y"}}},
		{name: "huge retry ignored", in: "retry: 99999999999999999999\ndata: x\n\n", want: []Event{{Data: "x"}}},
		{name: "unknown field", in: "foo: bar\ndata: x\n\n", want: []Event{{Data: "x"}}},
		{name: "field name is case sensitive", in: "Data: x\ndata: y\n\n", want: []Event{{Data: "y"}}},
		{name: "colon in value", in: "data: a: b\n\n", want: []Event{{Data: "a: b"}}},
		{name: "done marker", in: "data: {\"a\":1}\n\ndata: [DONE]\n\n", want: []Event{{Data: `{"a":1}`}, {Data: "[DONE]"}}},
		{name: "cut after data", in: "data: x\n", end: endCut},
		{name: "cut mid line", in: "data: x\n\ndata: partial", want: []Event{{Data: "x"}}, end: endCut},
		{name: "cut after id only", in: "id: 1\n", end: endCut},
		{name: "cut after lone cr", in: "data: x\r", end: endCut},
		{name: "trailing comment is clean", in: "data: x\n\n: bye", want: []Event{{Data: "x"}}},
		{name: "terminated cr then eof", in: "data: x\r\r", want: []Event{{Data: "x"}}},
	}
	for _, tc := range tests {
		for _, f := range feeds {
			t.Run(tc.name+"/"+f.name, func(t *testing.T) {
				t.Parallel()
				r := NewReader(f.wrap(strings.NewReader(tc.in)))
				got, err := readAll(t, r, len(tc.in))
				if classify(err) != tc.end {
					t.Fatalf("end = %v (%v), want %v", classify(err), err, tc.end)
				}
				if !slices.Equal(got, tc.want) {
					t.Fatalf("events:\n got %#v\nwant %#v", got, tc.want)
				}
				if _, again := r.Next(); again != err {
					t.Fatalf("error not sticky: first %v, then %v", err, again)
				}
			})
		}
	}
}

func TestReaderLastEventID(t *testing.T) {
	t.Parallel()
	in := "id: 1\ndata: a\n\ndata: b\n\nid: 2\nevent: x\n\nid\ndata: c\n\n"
	r := NewReader(strings.NewReader(in))
	steps := []struct {
		name   string
		data   string
		hasID  bool
		lastID string
	}{
		{name: "explicit", data: "a", hasID: true, lastID: "1"},
		{name: "inherited", data: "b", hasID: false, lastID: "1"},
		// The block with id 2 has no data and is not dispatched, but the
		// standard still updates the last event ID; the empty id resets it.
		{name: "reset", data: "c", hasID: true, lastID: ""},
	}
	for _, s := range steps {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if ev.Data != s.data || ev.HasID != s.hasID || r.LastEventID() != s.lastID {
			t.Fatalf("%s: got data=%q hasID=%v last=%q, want %q %v %q",
				s.name, ev.Data, ev.HasID, r.LastEventID(), s.data, s.hasID, s.lastID)
		}
	}
}

func TestReaderRetryWithoutData(t *testing.T) {
	t.Parallel()
	r := NewReader(strings.NewReader("retry: 250\n\ndata: x\n\n"))
	ev, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if ev.Retry != 0 {
		t.Errorf("event retry = %v, want 0 (retry came in an earlier block)", ev.Retry)
	}
	if r.Retry() != 250*time.Millisecond {
		t.Errorf("reader retry = %v, want 250ms", r.Retry())
	}
}

func TestReaderLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		maxLine int
		want    []Event
		end     outcome
	}{
		{name: "line at limit", in: "data: 1234\n\n", maxLine: 10, want: []Event{{Data: "1234"}}},
		{name: "line over limit", in: "data: 12345\n\n", maxLine: 10, end: endTooLong},
		{name: "after good event", in: "data: 1\n\ndata: 123456789\n\n", maxLine: 10, want: []Event{{Data: "1"}}, end: endTooLong},
		{name: "unterminated over limit", in: "data: 123456789", maxLine: 10, end: endTooLong},
		{name: "long comment", in: ": 12345678901\ndata: x\n\n", maxLine: 10, end: endTooLong},
		{name: "many data lines", in: "data: 1234\ndata: 1234\ndata: 1234\n\n", maxLine: 10, end: endTooLong},
	}
	for _, tc := range tests {
		for _, f := range feeds {
			t.Run(tc.name+"/"+f.name, func(t *testing.T) {
				t.Parallel()
				r := NewReaderSize(f.wrap(strings.NewReader(tc.in)), tc.maxLine)
				got, err := readAll(t, r, len(tc.in))
				if classify(err) != tc.end {
					t.Fatalf("end = %v (%v), want %v", classify(err), err, tc.end)
				}
				if !slices.Equal(got, tc.want) {
					t.Fatalf("events:\n got %#v\nwant %#v", got, tc.want)
				}
			})
		}
	}
}

// TestReaderBoundedMemory feeds an endless line and checks that the reader
// gives up instead of buffering it.
func TestReaderBoundedMemory(t *testing.T) {
	t.Parallel()
	endless := io.MultiReader(strings.NewReader("data: "), infinite('x'))
	r := NewReaderSize(endless, 1<<16)
	_, err := r.Next()
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("err = %v, want ErrLineTooLong", err)
	}
	if len(r.buf) > 1<<16+1 {
		t.Fatalf("buffer grew to %d bytes, cap is %d", len(r.buf), 1<<16+1)
	}
}

type infinite byte

func (b infinite) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestReaderSourceErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	tests := []struct {
		name string
		src  io.Reader
		want error
	}{
		{name: "read error", src: io.MultiReader(strings.NewReader("data: x\n"), iotest.ErrReader(boom)), want: boom},
		{name: "no progress", src: zeroReader{}, want: io.ErrNoProgress},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewReader(tc.src).Next()
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

// chunkReader returns at most n bytes per Read, n varying with a simple
// deterministic sequence so splits fall at many different offsets.
type chunkReader struct {
	data []byte
	seed byte
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	c.seed = c.seed*31 + 7
	n := min(int(c.seed%13)+1, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// reference is a direct, whole-input transcription of the standard's
// parsing steps, used as the oracle for the fuzzer.
func reference(in []byte, maxLine int) ([]Event, outcome) {
	in = bytes.TrimPrefix(in, []byte("\xef\xbb\xbf"))
	var (
		evs     []Event
		data    []byte
		hasData bool
		pending bool
		cur     Event
	)
	for len(in) > 0 {
		i := bytes.IndexAny(in, "\r\n")
		if i < 0 {
			if len(in) > maxLine {
				return evs, endTooLong
			}
			if pending || in[0] != ':' {
				return evs, endCut
			}
			return evs, endEOF
		}
		line := in[:i]
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			in = in[i+2:]
		} else {
			in = in[i+1:]
		}
		if len(line) > maxLine {
			return evs, endTooLong
		}
		if len(line) == 0 {
			if hasData {
				cur.Data = string(data[:len(data)-1])
				evs = append(evs, cur)
			}
			cur, data, hasData, pending = Event{}, nil, false, false
			continue
		}
		if line[0] == ':' {
			continue
		}
		pending = true
		name, value, found := bytes.Cut(line, []byte(":"))
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(name) {
		case "data":
			if len(data)+len(value) > maxLine {
				return evs, endTooLong
			}
			data = append(append(data, value...), '\n')
			hasData = true
		case "event":
			cur.Event = string(value)
		case "id":
			if !bytes.Contains(value, []byte{0}) {
				cur.ID, cur.HasID = string(value), true
			}
		case "retry":
			if d, ok := parseRetry(value); ok {
				cur.Retry = d
			}
		}
	}
	if pending {
		return evs, endCut
	}
	return evs, endEOF
}

func FuzzReader(f *testing.F) {
	seeds := []string{
		"data: hello\n\n",
		"\xef\xbb\xbfdata: a\r\ndata: b\r\n\r\n",
		"event: x\rid: 1\rretry: 10\rdata\r\r",
		": c\n\ndata: [DONE]\n\n",
		"data: cut",
		"id: \x00\ndata:\n\n",
		"data: " + strings.Repeat("y", 300) + "\n\n",
	}
	for i, s := range seeds {
		f.Add([]byte(s), byte(i), uint16(64))
	}
	f.Fuzz(func(t *testing.T, in []byte, seed byte, limit uint16) {
		maxLine := int(limit%512) + 1
		wantEvs, wantEnd := reference(in, maxLine)
		r := NewReaderSize(&chunkReader{data: in, seed: seed}, maxLine)
		got, err := readAll(t, r, len(in))
		if classify(err) != wantEnd {
			t.Fatalf("end = %v (%v), want %v", classify(err), err, wantEnd)
		}
		if !slices.Equal(got, wantEvs) {
			t.Fatalf("events:\n got %#v\nwant %#v", got, wantEvs)
		}
	})
}

// openAIStream builds a chat-completion stream shaped like the real API's:
// many small data lines, each a JSON chunk carrying a few bytes of text.
func openAIStream(chunks int) []byte {
	var b bytes.Buffer
	words := []string{"The ", "quick ", "brown ", "fox ", "jumps ", "over ", "the ", "lazy ", "dog", ".\\n"}
	b.WriteString(`data: {"id":"chatcmpl-6f1c","object":"chat.completion.chunk","created":1718345013,"model":"deepseek-chat","system_fingerprint":"fp_a49d71b8a1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n")
	for i := range chunks {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-6f1c","object":"chat.completion.chunk","created":1718345013,"model":"deepseek-chat","system_fingerprint":"fp_a49d71b8a1","choices":[{"index":0,"delta":{"content":"%s"},"logprobs":null,"finish_reason":null}],"usage":null}`+"\n\n", words[i%len(words)])
	}
	b.WriteString(`data: {"id":"chatcmpl-6f1c","object":"chat.completion.chunk","created":1718345013,"model":"deepseek-chat","system_fingerprint":"fp_a49d71b8a1","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1200,"completion_tokens":2000,"total_tokens":3200,"prompt_cache_hit_tokens":1024,"prompt_cache_miss_tokens":176}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

func BenchmarkReader(b *testing.B) {
	stream := openAIStream(2000)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(stream))
		n := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 2003 {
			b.Fatalf("got %d events, want 2003", n)
		}
	}
}
