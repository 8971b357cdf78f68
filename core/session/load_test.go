package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"reasonix/core/provider"
	"reasonix/core/provider/openai"
	"reasonix/core/provider/providertest"
)

const (
	testHeader = `{"type":"header","header":{"version":1,"id":"x"}}` + "\n"
	testMsg    = `{"type":"message","message":{"role":"user","content":"a"}}` + "\n"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoad(t *testing.T) {
	t.Parallel()
	long := `{"type":"message","message":{"role":"tool","content":"` + strings.Repeat("y", 3*readBufSize) + `"}}` + "\n"
	torn := `{"type":"message","mess`
	cases := []struct {
		name    string
		body    string
		msgs    int
		torn    int // line of the dropped record, 0 for none
		dropped int
		wantErr string
	}{
		{name: "complete", body: testHeader + testMsg + testMsg, msgs: 2},
		{name: "torn tail without newline", body: testHeader + testMsg + torn, msgs: 1, torn: 3, dropped: len(torn)},
		{name: "whole record without its newline", body: testHeader + testMsg + strings.TrimSuffix(testMsg, "\n"), msgs: 1, torn: 3, dropped: len(testMsg) - 1},
		{name: "zeros left by power loss", body: testHeader + testMsg + "\x00\x00\x00\x00", msgs: 1, torn: 3, dropped: 4},
		{name: "invalid last line with newline", body: testHeader + testMsg + torn + "\n", msgs: 1, torn: 3, dropped: len(torn) + 1},
		{name: "invalid last line then blank lines", body: testHeader + torn + "\n\n  \n", msgs: 0, torn: 2, dropped: len(torn) + 5},
		{name: "blank lines kept", body: testHeader + "\n" + testMsg + "\n", msgs: 1},
		{name: "long lines", body: testHeader + long + long, msgs: 2},
		{name: "torn long line", body: testHeader + long + long[:2*readBufSize], msgs: 1, torn: 3, dropped: 2 * readBufSize},
		{name: "unknown record skipped", body: testHeader + `{"type":"usage","x":1}` + "\n" + testMsg, msgs: 1},
		{name: "corrupt middle line", body: testHeader + "{oops\n" + testMsg, wantErr: "s.jsonl line 2: invalid character"},
		{name: "two torn lines", body: testHeader + "{oops\n" + torn, wantErr: "line 2"},
		{name: "wrong type on the last line", body: testHeader + `{"type":"message","message":{"role":7}}` + "\n", wantErr: "line 2: json: cannot unmarshal"},
		{name: "message record without message", body: testHeader + `{"type":"message"}` + "\n", wantErr: "line 2: message record without message"},
		{name: "no header", body: testMsg, wantErr: "no header"},
		{name: "torn header", body: testHeader[:20], wantErr: "no header"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, tc.body)
			_, msgs, warn, err := Load(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("err = %v, want one naming %s and %q", err, path, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) != tc.msgs {
				t.Fatalf("got %d messages, want %d", len(msgs), tc.msgs)
			}
			switch {
			case tc.torn == 0 && warn != nil:
				t.Fatalf("warning %v for a whole file", warn)
			case tc.torn != 0 && warn == nil:
				t.Fatal("no warning for a torn tail")
			case warn != nil && (warn.Line != tc.torn || warn.Dropped != int64(tc.dropped) || warn.Path != path):
				t.Fatalf("warning = %+v, want line %d, %d bytes dropped", warn, tc.torn, tc.dropped)
			}
		})
	}
}

// executorMessages is a conversation as the executor keeps it, with the
// fields and edge cases the request encoding looks at: reasoning, tool
// calls with and without content, empty tool results, text the encoder
// must not escape or normalise.
func executorMessages() []provider.Message {
	return []provider.Message{
		{Role: provider.RoleSystem, Content: "You are Reasonix.\n\nEnvironment:\n- OS: linux/amd64"},
		{Role: provider.RoleUser, Content: "Fix <main.go> & \"quote\" it — ünïcödé 🚀 \u2028 tab\t\\back"},
		{Role: provider.RoleAssistant, ReasoningContent: "I should read it first.", ToolCalls: []provider.ToolCall{
			{ID: "call_1", Name: "read_file", Arguments: `{ "path" : "main.go" }`},
			{ID: "call_2", Name: "ls", Arguments: ""},
		}},
		{Role: provider.RoleTool, ToolCallID: "call_1", Name: "read_file", Content: "package main\n\nfunc main() {}\n"},
		{Role: provider.RoleTool, ToolCallID: "call_2", Name: "ls", Content: ""},
		{Role: provider.RoleAssistant, Content: "Editing now.", ReasoningContent: "One edit.", ToolCalls: []provider.ToolCall{
			{ID: "call_3", Name: "edit_file", Arguments: `{"path":"main.go","old":"<a>","new":"\u003cb\u003e"}`},
		}},
		{Role: provider.RoleTool, ToolCallID: "call_3", Content: "Error: no match"},
		{Role: provider.RoleAssistant, Content: "", ReasoningContent: "Nothing to say."},
		{Role: provider.RoleAssistant, Content: "Done."},
		{Role: provider.RoleUser, Content: "Thanks."},
	}
}

// roundTrip writes msgs to a transcript and loads them back.
func roundTrip(t *testing.T, msgs []provider.Message) []provider.Message {
	t.Helper()
	s, err := Create(t.TempDir(), Header{ID: "rt"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if err := s.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, got, warn, err := Load(s.Path())
	if err != nil || warn != nil {
		t.Fatalf("load: %v, warning %v", err, warn)
	}
	return got
}

// TestRoundTripRequestBytes sends the executor's messages and the same
// messages read back from a transcript through the real OpenAI client to
// the model fake: the two request bodies must be identical, byte for byte,
// or a resumed session would miss the provider's prompt cache (or, in
// DeepSeek's thinking mode, be rejected for a lost reasoning_content).
func TestRoundTripRequestBytes(t *testing.T) {
	t.Parallel()
	want := executorMessages()
	got := roundTrip(t, want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded messages differ:\n got %+v\nwant %+v", got, want)
	}
	for _, omit := range []bool{false, true} {
		t.Run(fmt.Sprintf("omit_reasoning=%v", omit), func(t *testing.T) {
			t.Parallel()
			original := requestBody(t, want, omit)
			loaded := requestBody(t, got, omit)
			if !bytes.Equal(original, loaded) {
				t.Fatalf("request bodies differ:\noriginal: %s\nloaded:   %s", original, loaded)
			}
			if !omit && !bytes.Contains(loaded, []byte(`"reasoning_content":"I should read it first."`)) {
				t.Fatalf("reasoning lost: %s", loaded)
			}
		})
	}
}

// requestBody is the body the OpenAI client sends for msgs.
func requestBody(t *testing.T, msgs []provider.Message, omitReasoning bool) []byte {
	t.Helper()
	srv := providertest.Start(t)
	srv.Push(providertest.Turn{Text: "ok"})
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	p, err := openai.New(provider.Config{
		Name: "fake", Kind: openai.Kind, BaseURL: srv.URL(), Model: "fake-model", APIKey: "sk-test",
		OmitReasoning: omitReasoning, HTTPClient: &http.Client{Transport: tr},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch, err := p.Stream(ctx, provider.Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	for c := range ch {
		if c.Type == provider.ChunkError {
			t.Fatal(c.Err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	return reqs[0].Body
}

// TestRoundTripEveryField fills every field of Message and ToolCall by
// reflection: a field added later without a JSON form that survives the
// transcript fails here rather than on a resumed session's first request.
func TestRoundTripEveryField(t *testing.T) {
	t.Parallel()
	var m provider.Message
	fill(t, reflect.ValueOf(&m).Elem(), "m")
	got := roundTrip(t, []provider.Message{m})
	if len(got) != 1 || !reflect.DeepEqual(got[0], m) {
		t.Fatalf("round trip lost fields:\n got %+v\nwant %+v", got, m)
	}
	a, _ := json.Marshal(m)
	b, _ := json.Marshal(got[0])
	if !bytes.Equal(a, b) {
		t.Fatalf("encodings differ:\n%s\n%s", a, b)
	}
}

// fill sets every field of the struct v to a distinct non-zero value.
func fill(t *testing.T, v reflect.Value, prefix string) {
	t.Helper()
	for i := range v.NumField() {
		f, name := v.Field(i), prefix+"."+v.Type().Field(i).Name
		switch f.Kind() {
		case reflect.String:
			f.SetString(name + " <&> \u2028")
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			s := reflect.MakeSlice(f.Type(), 2, 2)
			for j := range 2 {
				if s.Index(j).Kind() != reflect.Struct {
					t.Fatalf("%s: teach fill about %s", name, s.Index(j).Type())
				}
				fill(t, s.Index(j), fmt.Sprintf("%s[%d]", name, j))
			}
			f.Set(s)
		default:
			t.Fatalf("%s: teach fill about %s", name, f.Type())
		}
	}
}
