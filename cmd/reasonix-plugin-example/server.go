package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The protocol revisions this server speaks, newest first. initialize
// answers with the client's version when it is listed here, otherwise
// with the newest, and the client decides whether it can live with that.
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// JSON-RPC error codes used here.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
)

// message is any incoming JSON-RPC message. A request has an id and a
// method, a notification only a method; responses (a client answering a
// request of ours) never arrive, since this server sends none.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// server holds no per-connection state: every request is answered from
// its own content, so stdio and HTTP share one instance.
type server struct {
	info implementation
}

// handle answers one message. It returns nil for a notification, which
// gets no answer, and the encoded response otherwise.
func (s *server) handle(data []byte) []byte {
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		return encode(response{ID: json.RawMessage("null"), Error: &rpcError{codeParseError, "parse error: " + err.Error()}})
	}
	if m.JSONRPC != "2.0" || m.Method == "" {
		if m.ID == nil {
			return nil // a stray response or junk notification: nothing to answer
		}
		return encode(response{ID: m.ID, Error: &rpcError{codeInvalidRequest, "invalid request"}})
	}
	if m.ID == nil {
		return nil // notifications/initialized, notifications/cancelled, ...
	}
	result, rerr := s.dispatch(m)
	return encode(response{ID: m.ID, Result: result, Error: rerr})
}

func (s *server) dispatch(m message) (any, *rpcError) {
	switch m.Method {
	case "initialize":
		return s.initialize(m.Params)
	case "ping":
		return struct{}{}, nil
	case "tools/list":
		return map[string]any{"tools": toolList}, nil
	case "tools/call":
		return callTool(m.Params)
	}
	return nil, &rpcError{codeMethodNotFound, "method not found: " + m.Method}
}

func (s *server) initialize(params json.RawMessage) (any, *rpcError) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &rpcError{codeInvalidParams, "initialize: " + err.Error()}
	}
	v := protocolVersions[0]
	if slices.Contains(protocolVersions, p.ProtocolVersion) {
		v = p.ProtocolVersion
	}
	return map[string]any{
		"protocolVersion": v,
		"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
		"serverInfo":      s.info,
		"instructions":    "echo repeats text; wordcount counts its words. Both are read-only.",
	}, nil
}

// textSchema is the input schema both tools share: one required string.
var textSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"The text to work on"}},"required":["text"],"additionalProperties":false}`)

// readOnly marks a tool as free of side effects, which lets Reasonix run
// it in parallel and allow it without asking.
var readOnly = map[string]any{"readOnlyHint": true, "destructiveHint": false, "openWorldHint": false}

var toolList = []map[string]any{
	{"name": "echo", "description": "Return the given text unchanged.", "inputSchema": textSchema, "annotations": readOnly},
	{"name": "wordcount", "description": "Count the whitespace-separated words in the given text.", "inputSchema": textSchema, "annotations": readOnly},
}

// callTool runs a tool. An unknown tool is a protocol error; bad
// arguments are a tool error (isError), which the model reads and can
// correct.
func callTool(params json.RawMessage) (any, *rpcError) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &rpcError{codeInvalidParams, "tools/call: " + err.Error()}
	}
	if p.Name != "echo" && p.Name != "wordcount" {
		return nil, &rpcError{codeInvalidParams, fmt.Sprintf("unknown tool %q", p.Name)}
	}
	var args struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(p.Arguments, &args); err != nil || args.Text == nil {
		return toolResult(`argument "text" must be a string`, true), nil
	}
	if p.Name == "echo" {
		return toolResult(*args.Text, false), nil
	}
	return toolResult(strconv.Itoa(len(strings.Fields(*args.Text))), false), nil
}

func toolResult(text string, isError bool) map[string]any {
	r := map[string]any{"content": []map[string]any{{"type": "text", "text": text}}}
	if isError {
		r["isError"] = true
	}
	return r
}

func encode(r response) []byte {
	r.JSONRPC = "2.0"
	b, err := json.Marshal(r)
	if err != nil {
		// Every result above is plain data; this cannot happen.
		panic(err)
	}
	return b
}
