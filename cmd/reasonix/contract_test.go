package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"reasonix/core/tool"
)

var updateRecallContract = flag.Bool("update-contract", false, "rewrite the memory and history schema blocks of docs/TOOL_CONTRACT.md from the code")

// recallSection is one tool section: its name, prose and schema block.
var recallSection = regexp.MustCompile("(?s)\n## `([a-z_]+)`\n(.*?)```json\n(.*?)\n```")

// TestRecallToolContract checks the part of docs/TOOL_CONTRACT.md about
// the tools other packages register (history, memory, remember, forget)
// against the schemas the model is sent, and that every built-in linked
// into the binary is documented somewhere in the file. Run with
// -update-contract to rewrite the blocks after a deliberate change.
func TestRecallToolContract(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "TOOL_CONTRACT.md")
	doc, err := os.ReadFile(path)
	must(t, err)
	const heading, next = "\n# Memory and history tools\n", "\n# Delegation tools\n"
	head, rest, ok := strings.Cut(string(doc), heading)
	part, tail, ok2 := strings.Cut(rest, next)
	if !ok || !ok2 {
		t.Fatalf("TOOL_CONTRACT.md lacks the %q or %q heading", strings.TrimSpace(heading), strings.TrimSpace(next))
	}
	tools, err := tool.NewBuiltins(tool.Env{Root: "/workspace", BashTimeout: 120 * time.Second}, nil)
	must(t, err)
	byName := map[string]tool.Tool{}
	for _, tl := range tools {
		byName[tl.Name()] = tl
	}
	seen := map[string]bool{}
	out := recallSection.ReplaceAllStringFunc(part, func(sec string) string {
		m := recallSection.FindStringSubmatch(sec)
		name, prose, block := m[1], m[2], m[3]
		seen[name] = true
		tl, ok := byName[name]
		if !ok {
			t.Errorf("TOOL_CONTRACT.md documents %q, which is not a built-in tool", name)
			return sec
		}
		if ro := strings.Contains(prose, "Read-only: yes"); ro != tl.ReadOnly() {
			t.Errorf("%s: document says read-only=%v, tool says %v", name, ro, tl.ReadOnly())
		}
		want, err := tool.Canonical(tl.Schema())
		must(t, err)
		var pretty bytes.Buffer
		must(t, json.Indent(&pretty, want, "", "  "))
		got, err := tool.Canonical(json.RawMessage(block))
		var canon bytes.Buffer
		if err == nil {
			_ = json.Indent(&canon, got, "", "  ")
		}
		if canon.String() != pretty.String() {
			if *updateRecallContract {
				return strings.Replace(sec, block, pretty.String(), 1)
			}
			t.Errorf("%s: documented schema differs from the code.\ndocument:\n%s\ncode:\n%s\n(run go test ./cmd/reasonix -run TestRecallToolContract -update-contract)", name, block, pretty.String())
		}
		return sec
	})
	for _, name := range []string{"history", "memory", "remember", "forget"} {
		if !seen[name] {
			t.Errorf("%s is not documented under %q", name, strings.TrimSpace(heading))
		}
	}
	for name := range byName {
		if !strings.HasPrefix(name, "e2e_") && !strings.Contains(string(doc), "\n## `"+name+"`") {
			t.Errorf("built-in tool %q is not documented in TOOL_CONTRACT.md", name)
		}
	}
	if updated := head + heading + out + next + tail; *updateRecallContract && updated != string(doc) {
		must(t, os.WriteFile(path, []byte(updated), 0o644))
	}
}
