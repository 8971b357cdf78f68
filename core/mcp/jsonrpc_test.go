package mcp

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestDecodeMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     string
		kind   Kind
		id     string
		method string
		code   int
	}{
		{name: "request", in: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, kind: KindRequest, id: "1", method: "ping"},
		{name: "request with string id", in: `{"jsonrpc":"2.0","id":"a-1","method":"roots/list","params":{}}`, kind: KindRequest, id: `"a-1"`, method: "roots/list"},
		{name: "request with object id", in: `{"jsonrpc":"2.0","id":{ "x" : 1 },"method":"ping"}`, kind: KindRequest, id: `{"x":1}`, method: "ping"},
		{name: "notification", in: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, kind: KindNotification, method: "notifications/initialized"},
		{name: "null params is absent", in: `{"jsonrpc":"2.0","method":"x","params":null}`, kind: KindNotification, method: "x"},
		{name: "result", in: `{"jsonrpc":"2.0","id":7,"result":{}}`, kind: KindResponse, id: "7"},
		{name: "error", in: `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"nope","data":{"a":1}}}`, kind: KindResponse, id: "7", code: -32601},
		{name: "error with null id", in: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, kind: KindResponse, id: "null", code: -32700},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := DecodeMessage([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind() != tt.kind || string(m.ID) != tt.id || m.Method != tt.method {
				t.Errorf("got kind %v id %s method %q", m.Kind(), m.ID, m.Method)
			}
			if tt.code != 0 && (m.Error == nil || m.Error.Code != tt.code) {
				t.Errorf("error = %+v, want code %d", m.Error, tt.code)
			}
			// What we decode, we encode back to an equivalent message.
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			again, err := DecodeMessage(b)
			if err != nil || again.Kind() != m.Kind() || string(again.ID) != string(m.ID) {
				t.Errorf("round trip %s: %+v, %v", b, again, err)
			}
		})
	}
}

func TestDecodeMessageRejects(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in string }{
		{"not json", `{"jsonrpc":`},
		{"not an object", `"hello"`},
		{"missing version", `{"id":1,"method":"ping"}`},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`},
		{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`},
		{"request with null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`},
		{"request with result", `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`},
		{"scalar params", `{"jsonrpc":"2.0","method":"x","params":3}`},
		{"neither method nor id", `{"jsonrpc":"2.0","result":{}}`},
		{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`},
		{"neither result nor error", `{"jsonrpc":"2.0","id":1}`},
		{"success with null id", `{"jsonrpc":"2.0","id":null,"result":{}}`},
		{"error without code", `{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}`},
		{"error with fractional code", `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}`},
		{"response with params", `{"jsonrpc":"2.0","id":1,"result":{},"params":{}}`},
		{"trailing data", `{"jsonrpc":"2.0","method":"x"} {}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if m, err := DecodeMessage([]byte(tt.in)); !errors.Is(err, ErrInvalidMessage) {
				t.Errorf("DecodeMessage(%s) = %+v, %v; want ErrInvalidMessage", tt.in, m, err)
			}
		})
	}
}

func TestDecodeMessagesBatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    int
		wantErr bool
	}{
		{name: "single", in: `{"jsonrpc":"2.0","method":"a"}`, want: 1},
		{name: "batch", in: ` [{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":1,"result":{}}]`, want: 2},
		{name: "empty batch", in: `[]`, wantErr: true},
		{name: "bad element", in: `[{"jsonrpc":"2.0","method":"a"},{}]`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msgs, err := DecodeMessages([]byte(tt.in))
			if (err != nil) != tt.wantErr || len(msgs) != tt.want {
				t.Errorf("got %d messages, %v", len(msgs), err)
			}
		})
	}
}

func TestMessageEncoding(t *testing.T) {
	t.Parallel()
	req, err := NewRequest(3, "tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	notif, err := NewNotification("notifications/cancelled", map[string]any{"requestId": 3})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := NewResponse(json.RawMessage(`"srv-1"`), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		msg  Message
		want string
	}{
		{"request without params", req, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`},
		{"notification", notif, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`},
		{"empty result", resp, `{"jsonrpc":"2.0","id":"srv-1","result":{}}`},
		{"error", NewErrorResponse(json.RawMessage(`{"k":1}`), CodeMethodNotFound, "nope"), `{"jsonrpc":"2.0","id":{"k":1},"error":{"code":-32601,"message":"nope"}}`},
		{"error without id", NewErrorResponse(nil, CodeParseError, "bad"), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := json.Marshal(tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
	if _, err := NewRequest(1, "x", func() {}); err == nil {
		t.Error("NewRequest accepted params that cannot be marshalled")
	}
}

func TestIDKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b  string
		equal bool
	}{
		{"1", "1.0", true},
		{"1", "1e0", true},
		{"1", `"1"`, false},
		{`"a"`, `"a"`, true},
		{`{"x":1}`, `{ "x": 1 }`, true},
		{"-2", "-2", true},
	}
	for _, tt := range tests {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			t.Parallel()
			if got := idKey(json.RawMessage(tt.a)) == idKey(json.RawMessage(tt.b)); got != tt.equal {
				t.Errorf("idKey(%s) == idKey(%s) is %v", tt.a, tt.b, got)
			}
		})
	}
}
