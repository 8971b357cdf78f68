package openai

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"reasonix/core/provider"
	"reasonix/core/provider/providertest"
)

// longStream is a DeepSeek-shaped reply: reasoning, then text, then a tool
// call with sizeable arguments, each in small pieces as the API sends them.
func longStream(pieces int) []byte {
	var b strings.Builder
	head := `{"id":"chatcmpl-6f1c","object":"chat.completion.chunk","created":1718345013,"model":"deepseek-chat","system_fingerprint":"fp_a49d71b8a1","choices":[{"index":0,"delta":`
	tail := `,"logprobs":null,"finish_reason":null}]}`
	words := []string{"The ", "quick ", "brown ", "fox ", "jumps ", "over ", "the ", "lazy ", "dog", ".\\n"}
	b.WriteString("data: " + head + `{"role":"assistant","content":""}` + tail + "\n\n")
	for i := range pieces / 4 {
		b.WriteString("data: " + head + `{"content":null,"reasoning_content":"` + words[i%len(words)] + `"}` + tail + "\n\n")
	}
	for i := range pieces / 2 {
		b.WriteString("data: " + head + `{"content":"` + words[i%len(words)] + `"}` + tail + "\n\n")
	}
	b.WriteString("data: " + head + `{"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"write_file","arguments":""}}]}` + tail + "\n\n")
	for i := range pieces / 4 {
		fmt.Fprintf(&b, "data: %s{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"line %d \\\\n\"}}]}%s\n\n", head, i, tail)
	}
	b.WriteString(`data: {"id":"chatcmpl-6f1c","object":"chat.completion.chunk","created":1718345013,"model":"deepseek-chat","system_fingerprint":"fp_a49d71b8a1","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1200,"completion_tokens":2000,"total_tokens":3200,"prompt_cache_hit_tokens":1024,"prompt_cache_miss_tokens":176}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// BenchmarkDecode measures the chunk decoder alone on an in-memory stream.
func BenchmarkDecode(b *testing.B) {
	in := longStream(4000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		term := decode(bytes.NewReader(in), func(provider.Chunk) bool { n++; return true })
		if term.Type != provider.ChunkDone || n != 4000/4+4000/2+2 {
			b.Fatalf("terminal %v %v after %d chunks", term.Type, term.Err, n)
		}
	}
}

// countingTransport counts response body bytes so the loopback benchmark
// can report wire throughput.
type countingTransport struct {
	http.RoundTripper
	n atomic.Int64
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.RoundTripper.RoundTrip(r)
	if err == nil {
		resp.Body = countingBody{resp.Body, &c.n}
	}
	return resp, err
}

// BenchmarkStreamLoopback measures a whole Stream against the fake over
// loopback: request, SSE parsing, decoding and channel delivery.
func BenchmarkStreamLoopback(b *testing.B) {
	srv := providertest.New(providertest.WithResponder(func(providertest.Request) providertest.Turn {
		return providertest.Turn{Text: strings.Repeat("The quick brown fox jumps over the lazy dog. ", 1500), ChunkBytes: 16}
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	ct := &countingTransport{RoundTripper: tr}
	p, err := New(provider.Config{BaseURL: srv.URL(), Model: "fake-model", HTTPClient: &http.Client{Transport: ct}})
	if err != nil {
		b.Fatal(err)
	}
	req := userReq("bench")
	b.ReportAllocs()
	for b.Loop() {
		ch, err := p.Stream(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		var last provider.Chunk
		for c := range ch {
			last = c
		}
		if last.Type != provider.ChunkDone {
			b.Fatalf("stream ended with %v", last.Err)
		}
	}
	b.SetBytes(ct.n.Load() / int64(b.N))
}
