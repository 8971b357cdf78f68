package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix/core/provider/providertest"
	"reasonix/core/testenv"
)

// TestE2EMCPPluginTool: the reference plugin configured in [[plugins]];
// the model calls its wordcount tool through a full `reasonix run`.
func TestE2EMCPPluginTool(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.writeConfig(fmt.Sprintf(`
[[plugins]]
name = "example"
command = %q
`, pluginBinary(t)))
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "wc", Name: "mcp__example__wordcount", Arguments: `{"text":"the quick brown fox"}`}}},
		providertest.Turn{Text: "Four words."},
	)
	r := e.run("run", "-o", "stream-json", "how many words in: the quick brown fox")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2\n%s", len(reqs), r)
	}
	// The first turn waited for the server, so its tools were offered.
	if !slices.Contains(reqs[0].Tools, "mcp__example__wordcount") || !slices.Contains(reqs[0].Tools, "mcp__example__echo") {
		t.Errorf("tools offered: %v", reqs[0].Tools)
	}
	last := reqs[1].Last()
	if last.Role != "tool" || last.ToolCallID != "wc" || last.Content != "4" {
		t.Errorf("tool result = %+v", last)
	}
	var ready, finished bool
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("stream-json line %q: %v", line, err)
		}
		switch ev["type"] {
		case "mcp_server":
			ready = ready || ev["server"] == "example" && ev["state"] == "ready" && ev["tools"] == float64(2)
		case "tool_finished":
			finished = ev["tool"] == "mcp__example__wordcount" && ev["output"] == "4"
		}
	}
	if !ready || !finished {
		t.Errorf("stream: mcp_server ready %v, tool_finished %v\n%s", ready, finished, r.stdout)
	}
}

// TestE2EMCPProjectServerNeedsGrant: a server from the project's .mcp.json
// is not even declared while the workspace is untrusted, is not started
// without a launch grant once it is trusted (the run goes on without it),
// and --trust-project-mcp approves it for later runs; once started it runs
// in the jail and cannot write the workspace.
func TestE2EMCPProjectServerNeedsGrant(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	// The server tries to write the workspace as it starts: a project's
	// server runs in the jail, with the workspace read-only.
	pwned := filepath.Join(e.work, "pwned")
	start := fmt.Sprintf("echo x > %s; exec %s", pwned, pluginBinary(t))
	if err := os.WriteFile(filepath.Join(e.work, ".mcp.json"), []byte(fmt.Sprintf(
		`{"mcpServers": {"proj": {"command": "bash", "args": ["-c", %q], "env": {"UNUSED": "${REASONIX_E2E_UNSET}"}}}}`, start)), 0o644); err != nil {
		t.Fatal(err)
	}

	e.srv.Push(providertest.Turn{Text: "no tools"})
	r := e.run("run", "--trust-project-mcp", "hello")
	if r.code != 0 || strings.Contains(r.stderr, `mcp server "proj"`) ||
		!strings.Contains(r.stderr, ".mcp.json: its MCP servers are ignored until you trust this workspace") {
		t.Fatalf("untrusted workspace:\n%s", r)
	}
	if r := e.run("trust"); r.code != 0 || !strings.Contains(r.stdout, ".mcp.json: its MCP servers") {
		t.Fatalf("trust:\n%s", r)
	}

	e.srv.Push(providertest.Turn{Text: "no tools"})
	r = e.run("run", "hello")
	if r.code != 0 || !strings.Contains(r.stderr, `mcp server "proj" (.mcp.json) not started: untrusted`) {
		t.Fatalf("untrusted run:\n%s", r)
	}
	for i := range 2 {
		if tools := e.srv.Requests()[i].Tools; slices.ContainsFunc(tools, func(n string) bool { return strings.HasPrefix(n, "mcp__") }) {
			t.Errorf("run %d: tools offered without a grant: %v", i, tools)
		}
	}

	e.srv.Push(providertest.Turn{Text: "with tools"})
	r = e.run("run", "--trust-project-mcp", "hello")
	if r.code != 0 || !strings.Contains(r.stderr, "REASONIX_E2E_UNSET") {
		t.Fatalf("trusted run:\n%s", r)
	}
	if tools := e.srv.Requests()[2].Tools; !slices.Contains(tools, "mcp__proj__echo") {
		t.Errorf("tools after the grant: %v", tools)
	}

	// The grant stays for the next run.
	e.srv.Push(providertest.Turn{Text: "still"})
	r = e.run("run", "hello")
	if r.code != 0 || strings.Contains(r.stderr, "untrusted") {
		t.Fatalf("granted run:\n%s", r)
	}
	if tools := e.srv.Requests()[3].Tools; !slices.Contains(tools, "mcp__proj__echo") {
		t.Errorf("tools on the granted run: %v", tools)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("the project's server wrote the workspace")
	}
}

// TestE2EMCPToolsInSubagents: a writer task's subagent gets the session's
// MCP tools and calls one through the parent's connection; a reader task
// gets only the tools the server lists in trusted_read_only_tools.
func TestE2EMCPToolsInSubagents(t *testing.T) {
	t.Parallel()
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if !isSubagent(req) {
			if len(toolResults(req)) == 0 {
				return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet",
					Arguments: `{"tasks":[{"prompt":"writer","write_paths":["out"]},{"prompt":"reader"}]}`}}}
			}
			return providertest.Turn{Text: "parent done"}
		}
		if res := toolResults(req); len(res) > 0 {
			return providertest.Turn{Text: req.FirstUser() + " got " + res[0].Content}
		}
		if req.FirstUser() == "writer" {
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "mcp__example__wordcount", Arguments: `{"text":"one two three"}`}}}
		}
		return providertest.Turn{Text: "reader looked"}
	}))
	e.writeConfig(fmt.Sprintf(`
[[plugins]]
name = "example"
command = %q
trusted_read_only_tools = ["echo"]
`, pluginBinary(t)))
	r := e.run("run", "-o", "stream-json", "fan out")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	var writer, reader []providertest.Request
	for _, req := range e.srv.Requests() {
		switch {
		case isSubagent(req) && req.FirstUser() == "writer":
			writer = append(writer, req)
		case isSubagent(req) && req.FirstUser() == "reader":
			reader = append(reader, req)
		}
	}
	if len(writer) != 2 || len(reader) != 1 {
		t.Fatalf("%d writer and %d reader requests\n%s", len(writer), len(reader), r)
	}
	if !slices.Contains(writer[0].Tools, "mcp__example__wordcount") || !slices.Contains(writer[0].Tools, "mcp__example__echo") {
		t.Errorf("writer tools: %v", writer[0].Tools)
	}
	if res := toolResults(writer[1]); len(res) != 1 || res[0].Content != "3" {
		t.Errorf("writer's wordcount result: %+v", res)
	}
	if !slices.Contains(reader[0].Tools, "mcp__example__echo") || slices.Contains(reader[0].Tools, "mcp__example__wordcount") {
		t.Errorf("reader tools: %v (want the trusted echo only)", reader[0].Tools)
	}
}

// TestE2EMCPSandboxedServer: a stdio server with sandbox = true runs in
// the bash jail. The same wrapper, started twice, tries to leave a marker
// outside every writer root before it execs the plugin: the free server
// leaves it, the jailed one cannot, and both serve their tools.
func TestE2EMCPSandboxedServer(t *testing.T) {
	t.Parallel()
	testenv.NeedBwrap(t)
	outside, err := os.MkdirTemp("/var/tmp", "reasonix-mcp-jail-")
	if err != nil {
		t.Skipf("no directory outside the writer roots: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(outside) })
	e := newE2E(t)
	wrapper := filepath.Join(e.home, "wrapper.sh")
	script := fmt.Sprintf("#!/bin/sh\necho escaped > \"$MARKER\" 2>/dev/null\nexec %q \"$@\"\n", pluginBinary(t))
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	free, jailed := filepath.Join(outside, "free"), filepath.Join(outside, "jailed")
	e.writeConfig(fmt.Sprintf(`
[[plugins]]
name = "free"
command = %[1]q
env = { MARKER = %[2]q }

[[plugins]]
name = "jailed"
command = %[1]q
env = { MARKER = %[3]q }
sandbox = true
`, wrapper, free, jailed))
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{
			{ID: "f", Name: "mcp__free__wordcount", Arguments: `{"text":"a b"}`},
			{ID: "j", Name: "mcp__jailed__wordcount", Arguments: `{"text":"a b c"}`},
		}},
		providertest.Turn{Text: "counted"},
	)
	r := e.run("run", "-o", "stream-json", "count")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests\n%s", len(reqs), r)
	}
	got := map[string]string{}
	for _, m := range toolResults(reqs[1]) {
		got[m.ToolCallID] = m.Content
	}
	if got["f"] != "2" || got["j"] != "3" {
		t.Errorf("tool results %v\n%s", got, r)
	}
	if _, err := os.Stat(free); err != nil {
		t.Errorf("the free server could not write its marker (the test proves nothing): %v", err)
	}
	if _, err := os.Stat(jailed); err == nil {
		t.Error("the jailed server wrote outside the writer roots")
	}
}
