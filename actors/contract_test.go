package actors

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"reasonix/actors/agent/team"
	"reasonix/core/tool"
)

var updateContract = flag.Bool("update-contract", false, "rewrite the delegation schema blocks of docs/TOOL_CONTRACT.md")

var delegationSection = regexp.MustCompile("(?s)\n## `([a-z_]+)` · [a-z]+\n(.*?)```json\n(.*?)\n```")

// TestDelegationContract fails when the delegation tools' schemas in
// docs/TOOL_CONTRACT.md differ from what the model is sent.
func TestDelegationContract(t *testing.T) {
	path := filepath.Join("..", "docs", "TOOL_CONTRACT.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tool.NewRegistry(team.DelegationTools()...)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	out := delegationSection.ReplaceAllStringFunc(string(doc), func(sec string) string {
		m := delegationSection.FindStringSubmatch(sec)
		name, prose, block := m[1], m[2], m[3]
		seen[name] = true
		tl, ok := reg.Get(name)
		if !ok {
			t.Errorf("TOOL_CONTRACT.md documents %q as a delegation tool; it is not one", name)
			return sec
		}
		if ro := strings.Contains(prose, "Read-only: yes"); ro != tl.ReadOnly() {
			t.Errorf("%s: document says read-only=%v, tool says %v", name, ro, tl.ReadOnly())
		}
		var want bytes.Buffer
		for _, s := range reg.Schemas() {
			if s.Name == name {
				_ = json.Indent(&want, s.Parameters, "", "  ")
			}
		}
		got, err := tool.Canonical(json.RawMessage(block))
		var canon bytes.Buffer
		if err == nil {
			_ = json.Indent(&canon, got, "", "  ")
		}
		if canon.String() != want.String() {
			if *updateContract {
				return strings.Replace(sec, block, want.String(), 1)
			}
			t.Errorf("%s: documented schema differs from the code (run go test ./actors -run TestDelegationContract -update-contract)", name)
		}
		return sec
	})
	for _, n := range reg.Names() {
		if !seen[n] {
			t.Errorf("delegation tool %q is not documented in TOOL_CONTRACT.md", n)
		}
	}
	if *updateContract && out != string(doc) {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
