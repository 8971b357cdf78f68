package main

import (
	"encoding/json"
	"testing"
)

func TestHandle(t *testing.T) {
	t.Parallel()
	srv := &server{info: implementation{Name: "reasonix-plugin-example", Version: "test"}}
	tests := []struct {
		name string
		in   string
		want string // "" for no reply
	}{
		{name: "initialize latest", in: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
			want: `{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"tools":{"listChanged":false}},"instructions":"echo repeats text; wordcount counts its words. Both are read-only.","protocolVersion":"2025-11-25","serverInfo":{"name":"reasonix-plugin-example","version":"test"}}}`},
		{name: "initialize older supported", in: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}`,
			want: `{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"tools":{"listChanged":false}},"instructions":"echo repeats text; wordcount counts its words. Both are read-only.","protocolVersion":"2025-03-26","serverInfo":{"name":"reasonix-plugin-example","version":"test"}}}`},
		{name: "initialize unknown version gets the latest", in: `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2024-11-05"}}`,
			want: `{"jsonrpc":"2.0","id":"i","result":{"capabilities":{"tools":{"listChanged":false}},"instructions":"echo repeats text; wordcount counts its words. Both are read-only.","protocolVersion":"2025-11-25","serverInfo":{"name":"reasonix-plugin-example","version":"test"}}}`},
		{name: "ping", in: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, want: `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{name: "echo", in: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi  there"}}}`,
			want: `{"jsonrpc":"2.0","id":3,"result":{"content":[{"text":"hi  there","type":"text"}]}}`},
		{name: "wordcount", in: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"wordcount","arguments":{"text":" one two\tthree\nfour "}}}`,
			want: `{"jsonrpc":"2.0","id":4,"result":{"content":[{"text":"4","type":"text"}]}}`},
		{name: "missing argument is a tool error", in: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
			want: `{"jsonrpc":"2.0","id":5,"result":{"content":[{"text":"argument \"text\" must be a string","type":"text"}],"isError":true}}`},
		{name: "unknown tool", in: `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"rm"}}`,
			want: `{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"unknown tool \"rm\""}}`},
		{name: "unknown method", in: `{"jsonrpc":"2.0","id":7,"method":"resources/list"}`,
			want: `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method not found: resources/list"}}`},
		{name: "parse error", in: `{"jsonrpc":`, want: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: unexpected end of JSON input"}}`},
		{name: "invalid request", in: `{"jsonrpc":"1.0","id":8,"method":"ping"}`, want: `{"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":"invalid request"}}`},
		{name: "notification", in: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, want: ""},
		{name: "stray response", in: `{"jsonrpc":"2.0","id":9,"result":{}}`, want: `{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"invalid request"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := srv.handle([]byte(tt.in))
			if tt.want == "" {
				if got != nil {
					t.Errorf("reply %s, want none", got)
				}
				return
			}
			if !jsonEqual(t, got, []byte(tt.want)) {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func TestLoopbackChecks(t *testing.T) {
	t.Parallel()
	hosts := []struct {
		host string
		ok   bool
	}{
		{"127.0.0.1:8080", true}, {"localhost:1", true}, {"LOCALHOST", true}, {"[::1]:9", true}, {"127.1.2.3", true},
		{"evil.example", false}, {"evil.example:8080", false}, {"10.0.0.1:80", false}, {"localhost.evil.example", false}, {"", false},
	}
	for _, tt := range hosts {
		t.Run("host "+tt.host, func(t *testing.T) {
			t.Parallel()
			if got := loopbackHost(tt.host); got != tt.ok {
				t.Errorf("loopbackHost(%q) = %v", tt.host, got)
			}
		})
	}
	origins := []struct {
		origin string
		ok     bool
	}{
		{"http://localhost", true}, {"http://localhost:5173", true}, {"http://127.0.0.1:3000", true}, {"http://[::1]:8080", true}, {"https://localhost", true},
		{"http://evil.example", false}, {"null", false}, {"file://", false}, {"http://localhost.evil.example", false}, {"http://127.0.0.1.nip.io", false},
	}
	for _, tt := range origins {
		t.Run("origin "+tt.origin, func(t *testing.T) {
			t.Parallel()
			if got := loopbackOrigin(tt.origin); got != tt.ok {
				t.Errorf("loopbackOrigin(%q) = %v", tt.origin, got)
			}
		})
	}
}
