package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix/core/provider/providertest"
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
// is not started without a grant (the run goes on without it), and
// --trust-project-mcp approves it for later runs.
func TestE2EMCPProjectServerNeedsGrant(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	if err := os.WriteFile(filepath.Join(e.work, ".mcp.json"), []byte(fmt.Sprintf(
		`{"mcpServers": {"proj": {"command": %q, "env": {"UNUSED": "${REASONIX_E2E_UNSET}"}}}}`, pluginBinary(t))), 0o644); err != nil {
		t.Fatal(err)
	}

	e.srv.Push(providertest.Turn{Text: "no tools"})
	r := e.run("run", "hello")
	if r.code != 0 || !strings.Contains(r.stderr, `mcp server "proj" (.mcp.json) not started: untrusted`) {
		t.Fatalf("untrusted run:\n%s", r)
	}
	if tools := e.srv.Requests()[0].Tools; slices.ContainsFunc(tools, func(n string) bool { return strings.HasPrefix(n, "mcp__") }) {
		t.Errorf("tools offered without a grant: %v", tools)
	}

	e.srv.Push(providertest.Turn{Text: "with tools"})
	r = e.run("run", "--trust-project-mcp", "hello")
	if r.code != 0 || !strings.Contains(r.stderr, "REASONIX_E2E_UNSET") {
		t.Fatalf("trusted run:\n%s", r)
	}
	if tools := e.srv.Requests()[1].Tools; !slices.Contains(tools, "mcp__proj__echo") {
		t.Errorf("tools after the grant: %v", tools)
	}

	// The grant stays for the next run.
	e.srv.Push(providertest.Turn{Text: "still"})
	r = e.run("run", "hello")
	if r.code != 0 || strings.Contains(r.stderr, "untrusted") {
		t.Fatalf("granted run:\n%s", r)
	}
	if tools := e.srv.Requests()[2].Tools; !slices.Contains(tools, "mcp__proj__echo") {
		t.Errorf("tools on the granted run: %v", tools)
	}
}
