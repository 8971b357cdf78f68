package actors

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
	"time"

	"reasonix/core/goal"
	"reasonix/core/mcp"
	"reasonix/core/provider"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden event, command and snapshot shapes under testdata/golden")

// goldenDir holds one file per wire shape: events/<type>.json,
// commands/<name>.json and snapshot.json. They are the stream-json
// contract as bytes, so a change to a field name or tag shows up as a
// diff in review rather than as a broken frontend.
var goldenDir = filepath.Join("testdata", "golden")

// goldenMeta is a fixed Meta, so goldens do not depend on the clock.
func goldenMeta(seq int64, task string) Meta {
	return Meta{Seq: seq, Time: time.Date(2025, 1, 2, 3, 4, 5, 6000000, time.UTC), Session: "s1", Task: task}
}

var goldenUsage = provider.Usage{PromptTokens: 120, CompletionTokens: 30, TotalTokens: 150, CacheHitTokens: 100, CacheMissTokens: 20, ReasoningTokens: 7}

// eventSamples holds one sample of every event type, every field set, so
// each golden shows the whole shape (omitempty fields included).
// TestGoldenCoversEveryType fails when a type with a Kind method is in
// neither this list nor commandSamples.
var eventSamples = []Event{
	&SessionStarted{Meta: goldenMeta(1, ""), Model: "deepseek-chat", Cwd: "/ws", Transcript: "/home/u/.reasonix/sessions/s1.jsonl", Tools: []string{"bash", "read_file"}},
	&TextDelta{Meta: goldenMeta(2, ""), Text: "Hello"},
	&ReasoningDelta{Meta: goldenMeta(3, ""), Text: "thinking"},
	&ToolStarted{Meta: goldenMeta(4, ""), CallID: "c1", Tool: "bash", Args: `{"command":"make"}`},
	&ToolFinished{Meta: goldenMeta(5, ""), CallID: "c1", Tool: "bash", IsError: true, DurationMS: 42, Output: "exit 2", OutputBytes: 6},
	&UsageReported{Meta: goldenMeta(6, ""), Usage: goldenUsage, Total: goldenUsage},
	&Notice{Meta: goldenMeta(7, ""), Level: "warn", Message: "retrying in 2s"},
	&ErrorOccurred{Meta: goldenMeta(8, ""), Message: "model error"},
	&TurnDone{Meta: goldenMeta(9, ""), Status: StatusFailed, Text: "partial", Error: "stream ended", Steps: 3, Usage: goldenUsage},
	&ApprovalRequested{Meta: goldenMeta(10, "f1.1"), RequestID: "s1/f1.1/c2", CallID: "c2", Tool: "bash", Args: `{"command":"make"}`,
		Reason: "bash needs approval", Suggestions: []string{"Bash(make)", "Bash(make:*)"}},
	&ApprovalResolved{Meta: goldenMeta(11, "f1.1"), RequestID: "s1/f1.1/c2", CallID: "c2", Decision: ApproveDeny, Reason: "approval_timeout_seconds"},
	&ToolWaiting{Meta: goldenMeta(12, ""), CallID: "c3", Tool: "edit", Args: `{"path":"a.go"}`, RequestID: "s1/c3"},
	&TurnStarted{Meta: goldenMeta(13, ""), Prompt: "fix the build"},
	&PromptQueued{Meta: goldenMeta(14, ""), Prompt: "then run the tests", Position: 1},
	&PromptRejected{Meta: goldenMeta(15, ""), Prompt: "now", Reason: "a turn is already running"},
	&PostureChanged{Meta: goldenMeta(16, ""), Posture: "auto"},
	&TaskQueued{Meta: goldenMeta(17, "f1.1"), Fleet: "f1", Prompt: "build it", Profile: "explore", Writer: true},
	&TaskStarted{Meta: goldenMeta(18, "f1.1"), Fleet: "f1", Model: "deepseek-chat", Worker: "build1", Attempt: 2},
	&TaskDone{Meta: goldenMeta(19, "f1.1"), Fleet: "f1", Status: TaskFailed, Error: "timed out", Steps: 4, DurationMS: 1500, Usage: goldenUsage,
		Worker: "build1", Attempt: 2},
	&TaskRequeued{Meta: goldenMeta(20, "f1.1"), Fleet: "f1", Worker: "build2", Attempt: 2, Reason: "worker build2 lost: no heartbeat answer for 3s"},
	&Lagged{Meta: Meta{Seq: 30, Time: goldenMeta(0, "").Time}, Dropped: 10, SinceSeq: 21, UntilSeq: 30},
	&ToolProgress{Meta: goldenMeta(31, ""), CallID: "c4", Server: "docs", Tool: "index", Progress: 3, Total: 10, Message: "indexing"},
	&ElicitationRequested{Meta: goldenMeta(32, ""), RequestID: "docs-1", Server: "docs", Message: "Which branch?", Mode: "form",
		Schema: json.RawMessage(`{"type":"object","properties":{"branch":{"type":"string","default":"main"}}}`), URL: "https://example.test/auth"},
	&MCPServerUpdated{Meta: goldenMeta(33, ""), Server: "docs", Source: "project", State: MCPRestarting, Tools: 4, Prompts: 1, Resources: 2,
		Error: "connection closed", Failures: 2},
	&CompactionStarted{Meta: goldenMeta(34, ""), Tier: "fold", Trigger: "auto", Tokens: 13200, Messages: 41},
	&Compacted{Meta: goldenMeta(35, ""), Tier: "fold", Trigger: "auto", TokensBefore: 13200, TokensAfter: 5100, Window: 16000,
		MessagesBefore: 88, MessagesAfter: 31, Archive: "/home/u/.reasonix/archive/20261201-120000.000000000.jsonl"},
	&PlanReady{Meta: Meta{Seq: 36, Time: goldenMeta(0, "").Time, Session: "s1", Role: RolePlanner}, Round: 1,
		Plan: "1. Add the flag in cmd/run.go.\n2. Run go test ./cmd/..."},
	&PlanProposed{Meta: goldenMeta(37, ""), Plan: "1. Add the flag.\n2. Test it."},
	&PlanStep{Meta: goldenMeta(38, ""), Step: "1", Summary: "added the flag"},
	&GoalStarted{Meta: goldenMeta(39, ""), Goal: "g20261201-120000000-s1", Objective: "make the tests pass", Strategy: "research",
		Resumed: true, MaxTurns: 200, MaxTokens: 500000, MaxTimeMS: 3600000, Research: "/ws/.reasonix/autoresearch/20261201-120000-make-the-tests-pass"},
	&GoalProgressed{Meta: goldenMeta(40, ""), Goal: "g20261201-120000000-s1", Turn: 3, Tokens: 4200, ElapsedMS: 61000,
		Report: "in_progress", Summary: "fixed two of five tests", Todo: 5, TodoDone: 2, NoProgress: 8, Nudged: true},
	&GoalEnded{Meta: goldenMeta(41, ""), Goal: "g20261201-120000000-s1", Status: "limit", Reason: "turn limit reached (200 turns)",
		Summary: "four of five tests pass", Turns: 200, Tokens: 410000, ElapsedMS: 3500000},
	&EffortChanged{Meta: goldenMeta(43, ""), Effort: "high"},
	&TodoUpdated{Meta: goldenMeta(42, ""), Items: []goal.Item{{Content: "Reproduce the failure", Status: "completed"},
		{Content: "Fix the parser", Status: "in_progress"}, {Content: "Add a regression test", Status: "in_progress", Level: 1}}},
}

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
}

// snapshotSample is folded into the golden snapshot: a turn with a queued
// prompt, a pending approval and elicitation, tasks and MCP servers.
func snapshotSample() []Event {
	return []Event{
		&PostureChanged{Meta: goldenMeta(1, ""), Posture: "ask"},
		&MCPServerUpdated{Meta: goldenMeta(2, ""), Server: "docs", Source: "project", State: MCPReady, Tools: 4, Prompts: 1, Resources: 2},
		&MCPServerUpdated{Meta: goldenMeta(3, ""), Server: "broken", Source: "user", State: MCPFailed, Error: "exit status 1", Failures: 5},
		&TurnStarted{Meta: goldenMeta(4, ""), Prompt: "fix the build"},
		&PromptQueued{Meta: goldenMeta(5, ""), Prompt: "then run the tests", Position: 1},
		&TaskQueued{Meta: goldenMeta(6, "f1.1"), Fleet: "f1", Prompt: "build it", Writer: true},
		&TaskQueued{Meta: goldenMeta(7, "f1.2"), Fleet: "f1", Prompt: "read the docs", Profile: "explore"},
		&TaskStarted{Meta: goldenMeta(8, "f1.1"), Fleet: "f1", Model: "deepseek-chat"},
		&TaskStarted{Meta: goldenMeta(9, "f1.2"), Fleet: "f1", Model: "deepseek-chat"},
		&TaskDone{Meta: goldenMeta(10, "f1.2"), Fleet: "f1", Status: TaskOK, Steps: 2},
		&ApprovalRequested{Meta: goldenMeta(11, "f1.1"), RequestID: "s1/f1.1/c2", CallID: "c2", Tool: "bash", Args: `{"command":"make"}`,
			Reason: "bash needs approval", Suggestions: []string{"Bash(make)", "Bash(make:*)"}},
		&ElicitationRequested{Meta: goldenMeta(12, ""), RequestID: "docs-1", Server: "docs", Message: "Which branch?",
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
	for _, e := range eventSamples {
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
	if len(declared) < len(eventSamples) {
		t.Fatalf("found %d types with a Kind method, fewer than the %d event samples: %v", len(declared), len(eventSamples), declared)
	}
	sampled := map[string]bool{}
	for _, e := range eventSamples {
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
	spec, err := os.ReadFile(filepath.Join("..", "docs", "SPEC.md"))
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
