package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"reasonix/core/sse"
)

// FuzzDecodeMessage feeds arbitrary bytes to the JSON-RPC framing. Whatever
// it accepts must encode and decode again to the same kind and id, since
// the client echoes server ids byte for byte.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x","result":{"a":[1,2]}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m","data":null}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}`,
		`[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":{"k":[1]},"method":"b","params":[]}]`,
		`{"jsonrpc":"2.0","id":1e400,"result":{}}`,
		`[]`, `{}`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, err := DecodeMessages(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidMessage) {
				t.Fatalf("error %v does not wrap ErrInvalidMessage", err)
			}
			return
		}
		for _, m := range msgs {
			b, err := m.MarshalJSON()
			if err != nil {
				t.Fatalf("encode %+v: %v", m, err)
			}
			again, err := DecodeMessage(b)
			if err != nil {
				t.Fatalf("re-decode %s: %v", b, err)
			}
			if again.Kind() != m.Kind() || !bytes.Equal(again.ID, m.ID) || again.Method != m.Method {
				t.Fatalf("round trip changed %+v into %+v", m, again)
			}
			_ = idKey(m.ID)
		}
	})
}

// FuzzHTTPReply feeds arbitrary bodies to both reply parsers of the HTTP
// transport: the JSON one and the event-stream one.
func FuzzHTTPReply(f *testing.F) {
	for _, s := range []string{
		"id: s1-0\nretry: 10\ndata: \n\n",
		"event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
		"data: {\"jsonrpc\":\"2.0\",\n data: \"method\":\"x\"}\n\n",
		"event: ping\ndata: nothing\n\n: comment\n\n",
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		"data: not json\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if msgs, err := ParseJSONReply(data); err == nil {
			for _, m := range msgs {
				if _, err := json.Marshal(m); err != nil {
					t.Fatalf("encode %+v: %v", m, err)
				}
			}
		}
		events := 0
		err := ReadEventStream(bytes.NewReader(data), func(ev sse.Event, msgs []Message, derr error) bool {
			events++
			if derr != nil && len(msgs) > 0 {
				t.Fatal("messages together with a decoding error")
			}
			if strings.TrimSpace(ev.Data) == "" && len(msgs) > 0 {
				t.Fatal("messages from an event without data")
			}
			return events < 1000
		})
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, sse.ErrLineTooLong) {
			t.Fatalf("unexpected error %v", err)
		}
	})
}
