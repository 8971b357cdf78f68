package builtin

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

var updateContract = flag.Bool("update-contract", false, "rewrite the schema blocks of docs/TOOL_CONTRACT.md from the code")

// contractEnv is the Env the documented schemas are rendered with: the
// default limits and the default bash timeout.
var contractEnv = tool.Env{Root: "/workspace", BashTimeout: 120 * time.Second}

// otherToolsHeading starts the part of TOOL_CONTRACT.md that documents
// built-ins registered by other packages (memory, history).
const otherToolsHeading = "\n# Memory and history tools\n"

var contractSection = regexp.MustCompile("(?s)\n## `([a-z_]+)`\n(.*?)```json\n(.*?)\n```")

// TestToolContract fails when docs/TOOL_CONTRACT.md and the canonical
// schemas disagree: a tool missing from either side, or a schema block that
// differs from what the model is sent. Run with -update-contract to
// rewrite the blocks after a deliberate change (then review the prose).
func TestToolContract(t *testing.T) {
	path := filepath.Join("..", "..", "..", "docs", "TOOL_CONTRACT.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := tool.NewBuiltins(contractEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	readOnly := map[string]bool{}
	for _, s := range reg.Schemas() {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, s.Parameters, "", "  "); err != nil {
			t.Fatal(err)
		}
		want[s.Name] = pretty.String()
		tl, _ := reg.Get(s.Name)
		readOnly[s.Name] = tl.ReadOnly()
	}
	documented := map[string]bool{}
	// The tools of other packages are documented after this heading and
	// checked where they are linked in (cmd/reasonix).
	head, rest, _ := strings.Cut(string(doc), otherToolsHeading)
	if rest != "" {
		rest = otherToolsHeading + rest
	}
	out := contractSection.ReplaceAllStringFunc(head, func(sec string) string {
		m := contractSection.FindStringSubmatch(sec)
		name, prose, block := m[1], m[2], m[3]
		documented[name] = true
		schema, ok := want[name]
		if !ok {
			t.Errorf("TOOL_CONTRACT.md documents %q, which is not a built-in tool", name)
			return sec
		}
		ro := strings.Contains(prose, "Read-only: yes")
		if ro != readOnly[name] {
			t.Errorf("%s: document says read-only=%v, tool says %v", name, ro, readOnly[name])
		}
		got, err := tool.Canonical(json.RawMessage(block))
		if err != nil {
			t.Errorf("%s: schema block is not valid JSON: %v", name, err)
			return sec
		}
		var canon bytes.Buffer
		_ = json.Indent(&canon, got, "", "  ")
		if canon.String() != schema {
			if *updateContract {
				return strings.Replace(sec, block, schema, 1)
			}
			t.Errorf("%s: documented schema differs from the code.\ndocument:\n%s\ncode:\n%s\n(run go test ./core/tool/builtin -run TestToolContract -update-contract)", name, canon.String(), schema)
		}
		return sec
	})
	for name := range want {
		if !documented[name] && !strings.HasPrefix(name, "e2e_") {
			t.Errorf("built-in tool %q is not documented in TOOL_CONTRACT.md", name)
		}
	}
	out += rest
	if *updateContract && out != string(doc) {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
