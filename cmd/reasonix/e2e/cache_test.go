package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"reasonix/core/provider/providertest"
)

// TestE2EPromptPrefixIsStable proves the property the provider's prompt
// cache depends on: across a 10-step tool loop, every request's messages
// are a byte-identical prefix of the next request's, and the tools and
// system prompt never change. Any drift (a timestamp, map order, a
// reformatted tool result) fails it.
func TestE2EPromptPrefixIsStable(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	for i := 0; i < 3; i++ {
		name := filepath.Join(e.work, fmt.Sprintf("f%d.txt", i))
		if err := os.WriteFile(name, []byte(fmt.Sprintf("line %d\nsecond\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	steps := []providertest.ToolCall{
		call("ls", `{}`),
		call("read_file", `{"path":"f0.txt"}`),
		call("grep", `{"pattern":"second"}`),
		call("glob", `{"pattern":"*.txt"}`),
		call("bash", `{"command":"echo hi; ls"}`),
		call("write_file", `{"path":"new.txt","content":"fresh\n"}`),
		call("edit_file", `{"path":"new.txt","old_string":"fresh","new_string":"edited"}`),
		call("read_file", `{"path":"new.txt"}`),
		call("missing_tool", `{}`),
	}
	for _, c := range steps {
		e.srv.Push(providertest.Turn{Text: "step", ToolCalls: []providertest.ToolCall{c}})
	}
	e.srv.Push(providertest.Turn{Text: "all done"})
	r := e.run("run", "walk the workspace")
	if r.code != 0 {
		t.Fatalf("run failed:\n%s", r)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 10 {
		t.Fatalf("%d requests, want 10", len(reqs))
	}
	type body struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    json.RawMessage   `json:"tools"`
		Model    string            `json:"model"`
	}
	var prev body
	for i, req := range reqs {
		var b body
		if err := json.Unmarshal(req.Body, &b); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if i > 0 {
			if !bytes.Equal(b.Tools, prev.Tools) {
				t.Errorf("request %d: tools changed", i)
			}
			if len(b.Messages) <= len(prev.Messages) {
				t.Fatalf("request %d: %d messages, previous had %d", i, len(b.Messages), len(prev.Messages))
			}
			for j := range prev.Messages {
				if !bytes.Equal(b.Messages[j], prev.Messages[j]) {
					t.Fatalf("request %d: message %d drifted:\nbefore %s\nafter  %s", i, j, prev.Messages[j], b.Messages[j])
				}
			}
		}
		prev = b
	}
}

func call(name, args string) providertest.ToolCall {
	return providertest.ToolCall{Name: name, Arguments: args}
}
