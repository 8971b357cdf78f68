package event

import (
	"bytes"
	"encoding/json"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"reasonix/core/mcp"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden event, command and snapshot shapes under testdata/golden")

// goldenDir holds one file per wire shape: events/<type>.json,
// commands/<name>.json and snapshot.json. They are the stream-json
// contract as bytes, so a change to a field name or tag shows up as a
// diff in review rather than as a broken frontend.
var goldenDir = filepath.Join("testdata", "golden")

// commandSamples holds each command in the shapes worth pinning; its
// golden is commands/<name>.json.
var commandSamples = []struct {
	name string
	cmd  Command
}{
	{"prompt", &PromptCmd{Text: "fix the build", Queue: true}},
	{"prompt_reject_if_busy", &PromptCmd{Text: "now or never"}},
	{"cancel", &CancelCmd{}},
	{"cancel_task", &CancelTaskCmd{ID: "f1.2"}},
	{"approve_once", &ApproveCmd{ID: "s1/c1", Decision: ApproveOnce}},
	{"approve_session_rule", &ApproveCmd{ID: "s1/f1.1/c2", Decision: ApproveSession, Rule: "Bash(make:*)"}},
	{"approve_deny", &ApproveCmd{ID: "s1/c1", Decision: ApproveDeny}},
	{"elicitation_accept", &ElicitationCmd{ID: "docs-1", Action: mcp.ElicitAccept, Content: map[string]any{"branch": "main", "force": false, "depth": 2.0}}},
	{"elicitation_decline", &ElicitationCmd{ID: "docs-1", Action: mcp.ElicitDecline}},
	{"set_posture", &SetPostureCmd{Posture: "yolo"}},
	{"set_effort", &SetEffortCmd{Effort: "max"}},
	{"compact", &CompactCmd{}},
	{"goal", &GoalCmd{Objective: "make the tests pass", Strategy: "research"}},
	{"goal_clear", &GoalClearCmd{}},
	{"send_message", &SendMessageCmd{To: "f2.1", Text: "also check the 404s"}},
}

// snapshotSample is folded into the golden snapshot: a turn with a queued
// prompt, a pending approval and elicitation, tasks and MCP servers.
func snapshotSample() []Event {
	return []Event{
		&PostureChanged{Meta: SampleMeta(1, ""), Posture: "ask"},
		&MCPServerUpdated{Meta: SampleMeta(2, ""), Server: "docs", Source: "project", State: MCPReady, Tools: 4, Prompts: 1, Resources: 2},
		&MCPServerUpdated{Meta: SampleMeta(3, ""), Server: "broken", Source: "user", State: MCPFailed, Error: "exit status 1", Failures: 5},
		&TurnStarted{Meta: SampleMeta(4, ""), Prompt: "fix the build"},
		&PromptQueued{Meta: SampleMeta(5, ""), Prompt: "then run the tests", Position: 1},
		&TaskQueued{Meta: SampleMeta(6, "f1.1"), Fleet: "f1", Prompt: "build it", Writer: true},
		&TaskQueued{Meta: SampleMeta(7, "f1.2"), Fleet: "f1", Prompt: "read the docs", Profile: "explore"},
		&TaskStarted{Meta: SampleMeta(8, "f1.1"), Fleet: "f1", Model: "deepseek-chat"},
		&TaskStarted{Meta: SampleMeta(9, "f1.2"), Fleet: "f1", Model: "deepseek-chat"},
		&TaskDone{Meta: SampleMeta(10, "f1.2"), Fleet: "f1", Status: TaskOK, Steps: 2},
		&ApprovalRequested{Meta: SampleMeta(11, "f1.1"), RequestID: "s1/f1.1/c2", CallID: "c2", Tool: "bash", Args: `{"command":"make"}`,
			Reason: "bash needs approval", Suggestions: []string{"Bash(make)", "Bash(make:*)"}},
		&ElicitationRequested{Meta: SampleMeta(12, ""), RequestID: "docs-1", Server: "docs", Message: "Which branch?",
			Schema: json.RawMessage(`{"type":"object"}`)},
	}
}

// golden compares got with the file at path, or rewrites it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	got = append(bytes.TrimSpace(got), '\n')
	if *updateGolden {
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		must(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./actors/ -run Golden -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s changed:\n got %s\nwant %s(if the change is meant, rerun with -update and document it in docs/SPEC.md)", path, got, want)
	}
}

// TestGoldenEvents pins the wire form of every event type.
func TestGoldenEvents(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range Samples() {
		kind := e.Kind()
		if seen[kind] {
			t.Fatalf("two samples of %s", kind)
		}
		seen[kind] = true
		t.Run(kind, func(t *testing.T) {
			b, err := Encode(e)
			must(t, err)
			if !bytes.HasPrefix(b, []byte(`{"type":"`+kind+`",`)) {
				t.Errorf("encoding does not start with its type: %s", b)
			}
			golden(t, filepath.Join(goldenDir, "events", kind+".json"), b)
		})
	}
	checkNoStale(t, filepath.Join(goldenDir, "events"), seen)
}

// TestGoldenCommands: every golden command line decodes to its sample,
// and the sample encodes to that line.
func TestGoldenCommands(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range commandSamples {
		seen[s.name] = true
		t.Run(s.name, func(t *testing.T) {
			b, err := EncodeCommand(s.cmd)
			must(t, err)
			path := filepath.Join(goldenDir, "commands", s.name+".json")
			golden(t, path, b)
			line, err := os.ReadFile(path)
			must(t, err)
			got, err := DecodeCommand(line)
			if err != nil {
				t.Fatalf("decode %s: %v", path, err)
			}
			if !reflect.DeepEqual(got, s.cmd) {
				t.Fatalf("%s decodes to %#v, want %#v", path, got, s.cmd)
			}
		})
	}
	checkNoStale(t, filepath.Join(goldenDir, "commands"), seen)
}

// TestGoldenSnapshot pins the JSON form of a snapshot.
func TestGoldenSnapshot(t *testing.T) {
	v := NewView("s1")
	for _, e := range snapshotSample() {
		v.Apply(e)
	}
	b, err := json.Marshal(v.Snapshot())
	must(t, err)
	golden(t, filepath.Join(goldenDir, "snapshot.json"), b)
	empty, err := json.Marshal(NewView("s1").Snapshot())
	must(t, err)
	golden(t, filepath.Join(goldenDir, "snapshot_empty.json"), empty)
}

// checkNoStale fails on a golden file no sample writes: a removed or
// renamed shape must take its golden with it.
func checkNoStale(t *testing.T, dir string, names map[string]bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	must(t, err)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if names[name] {
			continue
		}
		if *updateGolden {
			must(t, os.Remove(f))
			continue
		}
		t.Errorf("%s has no sample in golden_test.go", f)
	}
}

// TestGoldenCoversEveryType finds every type of the package with a Kind
// method (events and commands alike) in its source, so a new event or
// command fails here until it has a sample, hence a golden.
func TestGoldenCoversEveryType(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	must(t, err)
	declared := map[string]string{} // type name → file
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", path, err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "Kind" || len(fn.Recv.List) != 1 {
				continue
			}
			typ := fn.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			// An unexported event is a mark on a private bus (a worker
			// job's flush), never a stream-json line.
			if id, ok := typ.(*ast.Ident); ok && ast.IsExported(id.Name) {
				declared[id.Name] = path
			}
		}
	}
	// Meta has no Kind of its own; finding too few types means the scan
	// broke, not that the samples are complete.
	if len(declared) < len(Samples()) {
		t.Fatalf("found %d types with a Kind method, fewer than the %d event samples: %v", len(declared), len(Samples()), declared)
	}
	sampled := map[string]bool{}
	for _, e := range Samples() {
		sampled[reflect.TypeOf(e).Elem().Name()] = true
	}
	for _, c := range commandSamples {
		sampled[reflect.TypeOf(c.cmd).Elem().Name()] = true
	}
	for _, name := range slices.Sorted(maps.Keys(declared)) {
		if !sampled[name] {
			t.Errorf("%s (%s) has a Kind method but no sample in golden_test.go: add one to eventSamples or commandSamples and run -update", name, declared[name])
		}
	}
	for name := range sampled {
		if _, ok := declared[name]; !ok {
			t.Errorf("sample type %s has no Kind method in the package source", name)
		}
	}
}

// TestSpecListsEveryCommand: docs/SPEC.md documents each command type.
func TestSpecListsEveryCommand(t *testing.T) {
	spec, err := os.ReadFile(filepath.Join("..", "..", "docs", "SPEC.md"))
	must(t, err)
	_, section, ok := strings.Cut(string(spec), "## Commands (stream-json input)")
	if !ok {
		t.Fatal(`docs/SPEC.md has no "## Commands (stream-json input)" section`)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	for _, kind := range commandKindsOrder {
		if !strings.Contains(section, "`"+kind+"`") {
			t.Errorf("the Commands section of docs/SPEC.md does not list `%s`", kind)
		}
	}
	for _, field := range jsonFields(reflect.TypeOf(Snapshot{})) {
		if !strings.Contains(section, "`"+field+"`") {
			t.Errorf("the Commands section of docs/SPEC.md does not describe the snapshot field `%s`", field)
		}
	}
}

// jsonFields are the JSON names of a struct's fields.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}
