package actors

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// httpMCP is a streamable-HTTP MCP server on loopback, small enough to
// need no node: it offers one read-only tool, echo, answers every request
// with application/json and offers no event stream. A failing one
// answers every POST with 500, so that each connection attempt is one
// request whose arrival it records.
type httpMCP struct {
	srv     *httptest.Server
	failing bool

	mu       sync.Mutex
	attempts []time.Time
	sessions int
	open     map[string]bool
}

func startHTTPMCP(t *testing.T, failing bool) *httpMCP {
	t.Helper()
	f := &httpMCP{failing: failing, open: map[string]bool{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *httpMCP) URL() string { return f.srv.URL + "/mcp" }

// Attempts are the arrival times of the initialize requests, in order.
func (f *httpMCP) Attempts() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.attempts...)
}

// Open is the number of sessions not ended with DELETE.
func (f *httpMCP) Open() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.open)
}

func (f *httpMCP) serve(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		f.mu.Lock()
		delete(f.open, r.Header.Get("Mcp-Session-Id"))
		f.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
			Name            string `json:"name"`
			Arguments       struct {
				Text string `json:"text"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	if m.Method == "initialize" {
		f.mu.Lock()
		f.attempts = append(f.attempts, time.Now())
		f.mu.Unlock()
	}
	if f.failing {
		http.Error(w, "down for the test", http.StatusInternalServerError)
		return
	}
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result any
	switch m.Method {
	case "initialize":
		f.mu.Lock()
		f.sessions++
		sid := fmt.Sprintf("session-%d", f.sessions)
		f.open[sid] = true
		f.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
		result = map[string]any{
			"protocolVersion": m.Params.ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "actors-http-test", "version": "1"},
		}
	case "ping":
		result = map[string]any{}
	case "tools/list":
		result = map[string]any{"tools": []map[string]any{{"name": "echo", "description": "Echo text",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}},
			"annotations": map[string]any{"readOnlyHint": true}}}}
	case "tools/call":
		result = map[string]any{"content": []map[string]any{{"type": "text", "text": "echo: " + m.Params.Arguments.Text}}}
	default:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID,
			"error": map[string]any{"code": -32601, "message": "method not found: " + m.Method}})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
}
