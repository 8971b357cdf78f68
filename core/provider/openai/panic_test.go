package openai

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"reasonix/core/panics"
	"reasonix/core/provider"
)

// panicBody is a response body that serves data and then panics, on the
// next read or on close: the fault a decoder bug or a broken transport
// would raise inside the stream pump.
type panicBody struct {
	r                     io.Reader
	readPanic, closePanic any
}

func (b *panicBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF && b.readPanic != nil {
		panic(b.readPanic)
	}
	return n, err
}

func (b *panicBody) Close() error {
	if b.closePanic != nil {
		panic(b.closePanic)
	}
	return nil
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestStreamPanicIsTerminalError makes the response body panic at each
// point the pump touches it: the stream must end with exactly one error
// chunk carrying the panic, after whatever was decoded before it.
func TestStreamPanicIsTerminalError(t *testing.T) {
	t.Parallel()
	done := sseData(deltaChunk(`{"content":"hi"}`), finishChunk("stop"), "[DONE]")
	tests := []struct {
		name     string
		body     panicBody
		wantText string
	}{
		{name: "first read", body: panicBody{r: strings.NewReader(""), readPanic: "bad frame"}},
		{
			name:     "after a delta",
			body:     panicBody{r: strings.NewReader(sseData(deltaChunk(`{"content":"hi"}`))), readPanic: io.ErrUnexpectedEOF},
			wantText: "hi",
		},
		{name: "while draining", body: panicBody{r: strings.NewReader(done), readPanic: "drain"}, wantText: "hi"},
		{name: "on close", body: panicBody{r: strings.NewReader(done), closePanic: "close"}, wantText: "hi"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				body := tc.body
				return &http.Response{
					StatusCode: http.StatusOK,
					Header:     http.Header{"Content-Type": {"text/event-stream"}},
					Body:       &body,
					Request:    r,
				}, nil
			})}
			p, _ := fakeProvider(t, provider.Config{
				Name: "fake", Kind: Kind, BaseURL: "http://fake.invalid/v1", Model: "m", HTTPClient: client,
			})
			r := stream(t, p, userReq("hi"))
			if r.text != tc.wantText {
				t.Errorf("text = %q, want %q", r.text, tc.wantText)
			}
			var pe *panics.Error
			if r.term.Type != provider.ChunkError || !errors.As(r.term.Err, &pe) {
				t.Fatalf("terminal = %+v, want an error chunk carrying a *panics.Error", r.term)
			}
			if !strings.HasPrefix(r.term.Err.Error(), "chat stream: panic: ") {
				t.Errorf("err = %q", r.term.Err)
			}
		})
	}
}
