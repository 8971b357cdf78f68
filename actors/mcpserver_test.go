package actors

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// The MCP servers of these tests are real subprocesses: this test binary
// started again as a small scripted server (testServerEnv names its mode),
// the reasonix-plugin-example binary, and @modelcontextprotocol/server-everything.

const (
	testServerEnv = "REASONIX_ACTORS_MCP_SERVER"
	// testMarkerEnv names a file the server creates when it starts (mode
	// "marker"), or whose existence makes it refuse to start (mode
	// "once", which creates it on its first start).
	testMarkerEnv = "REASONIX_ACTORS_MCP_MARKER"
)

// init turns the test binary into the scripted server when asked, before
// TestMain runs any test.
func init() {
	if mode := os.Getenv(testServerEnv); mode != "" {
		os.Exit(runTestServer(mode, os.Stdin, os.Stdout))
	}
}

// runTestServer serves MCP over stdio. Modes:
//   - serve: tools echo (read-only), hang (never answers), die (exits),
//     add (adds a tool and announces it), ask (elicits a name); prompt
//     greet; resource test://hello.
//   - forgetful: serve, plus the tools note (a writer that answers
//     "noted") and forget (drops note from the list and announces it;
//     note calls are still answered, as an in-flight call would be).
//   - hang-init: reads everything and answers nothing.
//   - marker: creates the marker file, then serves.
//   - once: refuses to start when the marker exists, else creates it and
//     serves.
func runTestServer(mode string, stdin io.Reader, stdout io.Writer) int {
	marker := os.Getenv(testMarkerEnv)
	switch mode {
	case "hang-init":
		_, _ = io.Copy(io.Discard, stdin)
		return 0
	case "once":
		if _, err := os.Stat(marker); err == nil {
			fmt.Fprintln(os.Stderr, "already started once; refusing")
			return 1
		}
		if err := os.WriteFile(marker, []byte("started"), 0o600); err != nil {
			return 1
		}
	case "marker":
		if err := os.WriteFile(marker, []byte("started"), 0o600); err != nil {
			return 1
		}
	case "serve", "forgetful", "destructive":
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", mode)
		return 2
	}
	out := bufio.NewWriter(stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		_, _ = out.Write(append(b, '\n'))
		_ = out.Flush()
	}
	reply := func(id json.RawMessage, result any) {
		send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	}
	fail := func(id json.RawMessage, code int, msg string) {
		send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	}
	text := func(s string) map[string]any {
		return map[string]any{"content": []map[string]any{{"type": "text", "text": s}}}
	}
	object := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
	tools := []map[string]any{
		{"name": "echo", "description": "Echo text", "inputSchema": object, "annotations": map[string]any{"readOnlyHint": true}},
		{"name": "hang", "description": "Never answers", "inputSchema": object},
		{"name": "die", "description": "Exits", "inputSchema": object},
		{"name": "add", "description": "Adds a tool", "inputSchema": object},
		{"name": "ask", "description": "Asks the user for a name", "inputSchema": object},
	}
	if mode == "destructive" {
		tools = append(tools, map[string]any{"name": "wipe", "description": "Wipes everything", "inputSchema": object,
			"annotations": map[string]any{"readOnlyHint": false, "destructiveHint": true}})
	}
	if mode == "forgetful" {
		tools = append(tools,
			map[string]any{"name": "note", "description": "Takes a note", "inputSchema": object},
			map[string]any{"name": "forget", "description": "Stops listing note", "inputSchema": object})
	}
	var asking json.RawMessage
	in := bufio.NewScanner(stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		if m.Method == "" {
			if asking != nil {
				reply(asking, text("elicitation answer: "+string(m.Result)))
				asking = nil
			}
			continue
		}
		if m.ID == nil {
			continue
		}
		var p struct {
			Name            string          `json:"name"`
			URI             string          `json:"uri"`
			ProtocolVersion string          `json:"protocolVersion"`
			Arguments       json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(m.Params, &p)
		switch m.Method {
		case "initialize":
			reply(m.ID, map[string]any{
				"protocolVersion": p.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}, "prompts": map[string]any{}, "resources": map[string]any{}},
				"serverInfo":      map[string]any{"name": "actors-test", "version": "1"},
			})
		case "ping":
			reply(m.ID, map[string]any{})
		case "tools/list":
			reply(m.ID, map[string]any{"tools": tools})
		case "prompts/list":
			reply(m.ID, map[string]any{"prompts": []map[string]any{{"name": "greet", "description": "Greets",
				"arguments": []map[string]any{{"name": "name", "required": true}}}}})
		case "prompts/get":
			var args struct {
				Arguments map[string]string `json:"arguments"`
			}
			_ = json.Unmarshal(m.Params, &args)
			if p.Name != "greet" {
				fail(m.ID, -32602, "no such prompt")
				continue
			}
			reply(m.ID, map[string]any{"messages": []map[string]any{{"role": "user",
				"content": map[string]any{"type": "text", "text": "Hello, " + args.Arguments["name"] + "!"}}}})
		case "resources/list":
			reply(m.ID, map[string]any{"resources": []map[string]any{{"uri": "test://hello", "name": "hello", "mimeType": "text/plain"}}})
		case "resources/read":
			if p.URI != "test://hello" {
				fail(m.ID, -32002, "resource not found: "+p.URI)
				continue
			}
			reply(m.ID, map[string]any{"contents": []map[string]any{{"uri": p.URI, "mimeType": "text/plain", "text": "hello from the resource"}}})
		case "tools/call":
			var args struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(p.Arguments, &args)
			switch p.Name {
			case "echo":
				reply(m.ID, text("echo: "+args.Text))
			case "hang":
			case "die":
				return 3
			case "add":
				tools = append(tools, map[string]any{"name": "added", "description": "Added later", "inputSchema": object})
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
				reply(m.ID, text("added"))
			case "note":
				reply(m.ID, text("noted"))
			case "wipe":
				reply(m.ID, text("wiped"))
			case "forget":
				tools = slices.DeleteFunc(tools, func(t map[string]any) bool { return t["name"] == "note" })
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
				reply(m.ID, text("forgotten"))
			case "ask":
				asking = m.ID
				send(map[string]any{"jsonrpc": "2.0", "id": "elicit-1", "method": "elicitation/create", "params": map[string]any{
					"message": "What is your name?",
					"requestedSchema": map[string]any{"type": "object",
						"properties": map[string]any{"name": map[string]any{"type": "string", "default": "Grace"}},
						"required":   []string{"name"}},
				}})
			default:
				fail(m.ID, -32602, "unknown tool "+p.Name)
			}
		default:
			fail(m.ID, -32601, "method not found: "+m.Method)
		}
	}
	return 0
}

// pluginExample builds cmd/reasonix-plugin-example into dir.
func pluginExample(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "reasonix-plugin-example")
	if os.PathSeparator == '\\' {
		bin += ".exe"
	}
	cmd := exec.Command("go", "build", "-o", bin, "reasonix/cmd/reasonix-plugin-example")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the plugin example: %v\n%s", err, out)
	}
	return bin
}
