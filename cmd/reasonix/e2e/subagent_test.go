package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/core/provider/providertest"
	"reasonix/core/skill"
)

// The tests in this file drive `reasonix subagent` end to end: the real
// binary, profiles on disk, and the model fake on loopback. They check what
// reaches the model (system prompt, tools, model, effort) and what reaches
// the user (final answer only, exit codes).

// writeTools are the built-ins with side effects; `subagent try` must never
// offer one.
var writeTools = []string{"bash", "edit_file", "move_file", "multi_edit", "write_file"}

// builtinPrompt is a built-in profile's system prompt.
func builtinPrompt(t *testing.T, name string) string {
	t.Helper()
	st, _ := skill.Load(skill.Options{})
	p, err := st.Profile(name)
	if err != nil {
		t.Fatal(err)
	}
	return p.SystemPrompt()
}

// systemMessage is the request's first message, which must be the system
// prompt.
func systemMessage(t *testing.T, req providertest.Request) string {
	t.Helper()
	if len(req.Messages) == 0 || req.Messages[0].Role != "system" {
		t.Fatalf("request does not start with a system message: %+v", req.Messages)
	}
	return req.Messages[0].Content
}

// writeTwoModelConfig points the user config at one fake provider that
// offers two models, fake-model being the default, plus extra TOML.
func (e *e2e) writeTwoModelConfig(extra string) {
	e.t.Helper()
	cfg := fmt.Sprintf(`default_model = "fake"

[[providers]]
name = "fake"
kind = "openai"
base_url = %q
models = ["fake-model", "fake-pro"]
default = "fake-model"
api_key_env = "FAKE_API_KEY"
context_window = 128000
%s`, e.srv.URL(), extra)
	if err := os.WriteFile(filepath.Join(e.home, "config.toml"), []byte(cfg), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

func TestE2ESubagentTryExplore(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	writeWorkFiles(t, e.work, map[string]string{"parser.go": "package x\n\nfunc ParseX() {}\n"})
	e.srv.Push(
		providertest.Turn{Text: "Looking around.", ToolCalls: []providertest.ToolCall{
			{ID: "read", Name: "read_file", Arguments: `{"path":"parser.go"}`},
			{ID: "write", Name: "write_file", Arguments: `{"path":"evil.txt","content":"x"}`},
		}},
		providertest.Turn{Text: "ParseX is defined at parser.go:3."},
	)
	r := e.run("subagent", "try", "explore", "find", "ParseX")
	if r.code != 0 {
		t.Fatalf("try failed:\n%s", r)
	}
	// Only the final answer reaches stdout, not the narration before it.
	if r.stdout != "ParseX is defined at parser.go:3.\n" {
		t.Errorf("stdout = %q, want only the final answer", r.stdout)
	}

	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	first := reqs[0]
	sys := systemMessage(t, first)
	if want := builtinPrompt(t, "explore") + "\n\nEnvironment:\n"; !strings.HasPrefix(sys, want) {
		t.Errorf("system prompt is not the explore prompt plus the environment:\n%s", sys)
	}
	if !strings.Contains(sys, "Working directory: "+e.work) {
		t.Errorf("environment summary lacks the workspace:\n%s", sys)
	}
	if strings.Contains(sys, "You are Reasonix") {
		t.Error("the default system prompt leaked into the profile's prompt")
	}
	if first.LastUser() != "find ParseX" || first.Model != "fake-model" {
		t.Errorf("task %q, model %q", first.LastUser(), first.Model)
	}
	for _, w := range writeTools {
		if slices.Contains(first.Tools, w) {
			t.Errorf("try offered the write tool %s: %v", w, first.Tools)
		}
	}
	for _, r := range []string{"glob", "grep", "ls", "read_file"} {
		if !slices.Contains(first.Tools, r) {
			t.Errorf("try did not offer the read-only tool %s: %v", r, first.Tools)
		}
	}
	// A write the model attempts anyway is refused and nothing is written.
	results := map[string]string{}
	for _, m := range reqs[1].Messages {
		if m.Role == "tool" {
			results[m.ToolCallID] = m.Content
		}
	}
	if !strings.Contains(results["read"], "func ParseX") {
		t.Errorf("read_file result = %q", results["read"])
	}
	if !strings.HasPrefix(results["write"], "Error:") {
		t.Errorf("write_file result = %q, want an error", results["write"])
	}
	if _, err := os.Stat(filepath.Join(e.work, "evil.txt")); !os.IsNotExist(err) {
		t.Errorf("try wrote a file: %v", err)
	}
	if ts := e.transcripts(); len(ts) != 1 {
		t.Errorf("transcripts = %v", ts)
	}
}

func TestE2ESubagentTryOutputFormats(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, stdout string)
	}{
		{
			name: "json",
			args: []string{"-o", "json"},
			check: func(t *testing.T, stdout string) {
				var out struct{ Status, Text string }
				if err := json.Unmarshal([]byte(stdout), &out); err != nil {
					t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
				}
				if out.Status != "ok" || out.Text != "Done: nothing to fix." {
					t.Errorf("result = %+v", out)
				}
			},
		},
		{
			name: "stream-json",
			args: []string{"-o", "stream-json"},
			check: func(t *testing.T, stdout string) {
				lines := strings.Split(strings.TrimSpace(stdout), "\n")
				var start struct {
					Type  string
					Tools []string
				}
				if err := json.Unmarshal([]byte(lines[0]), &start); err != nil || start.Type != "session_started" {
					t.Fatalf("first event = %s (%v)", lines[0], err)
				}
				for _, w := range writeTools {
					if slices.Contains(start.Tools, w) {
						t.Errorf("session_started lists %s: %v", w, start.Tools)
					}
				}
				var last struct{ Type, Status, Text string }
				if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Type != "turn_done" {
					t.Fatalf("last event = %s (%v)", lines[len(lines)-1], err)
				}
				if last.Status != "ok" || last.Text != "Done: nothing to fix." {
					t.Errorf("turn_done = %+v", last)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t)
			e.srv.Push(providertest.Turn{Text: "Done: nothing to fix."})
			r := e.run(append(append([]string{"subagent", "try"}, tt.args...), "review", "check main.go")...)
			if r.code != 0 {
				t.Fatalf("try failed:\n%s", r)
			}
			tt.check(t, r.stdout)
			if sys := systemMessage(t, e.srv.Requests()[0]); !strings.HasPrefix(sys, builtinPrompt(t, "review")) {
				t.Errorf("system prompt is not the review prompt:\n%s", sys)
			}
		})
	}
}

func TestE2ESubagentTaskFromStdin(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(providertest.Turn{Text: "ok"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, stdout, stderr := e.command(ctx, "subagent", "try", "explore")
	cmd.Stdin = strings.NewReader("where is main?\n")
	if code := exitStatus(t, cmd.Run()); code != 0 || stdout.String() != "ok\n" {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if got := e.srv.Requests()[0].LastUser(); got != "where is main?" {
		t.Errorf("task = %q", got)
	}
}

func TestE2ESubagentModelAndEffort(t *testing.T) {
	t.Parallel()
	profile := "---\nname: audit\nrunAs: subagent\nmodel: fake/fake-pro\neffort: high\ndescription: Security audit\n---\nYou audit code for security holes.\n"
	tests := []struct {
		name       string
		config     string
		args       []string
		wantModel  string
		wantEffort string
	}{
		{name: "frontmatter", wantModel: "fake-pro", wantEffort: "high"},
		{name: "the call beats the frontmatter", args: []string{"--model", "fake/fake-model", "--effort", "low"}, wantModel: "fake-model", wantEffort: "low"},
		{
			name:   "per-profile config beats the call",
			config: "[agent]\nsubagent_models = { audit = \"fake/fake-pro\" }\nsubagent_efforts = { audit = \"max\" }\n",
			args:   []string{"--model", "fake/fake-model", "--effort", "low"}, wantModel: "fake-pro", wantEffort: "max",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t)
			e.writeTwoModelConfig(tt.config)
			writeWorkFiles(t, e.work, map[string]string{".reasonix/skills/security/SKILL.md": profile})
			e.srv.Push(providertest.Turn{Text: "No holes found."})
			args := append(append([]string{"subagent", "try"}, tt.args...), "audit", "audit the repo")
			r := e.run(args...)
			if r.code != 0 || r.stdout != "No holes found.\n" {
				t.Fatalf("unexpected result:\n%s", r)
			}
			req := e.srv.Requests()[0]
			if req.Model != tt.wantModel || req.ReasoningEffort != tt.wantEffort {
				t.Errorf("model %q effort %q, want %q %q", req.Model, req.ReasoningEffort, tt.wantModel, tt.wantEffort)
			}
			if sys := systemMessage(t, req); !strings.HasPrefix(sys, "You audit code for security holes.\n\nEnvironment:") {
				t.Errorf("system prompt is not the profile body plus the environment:\n%s", sys)
			}
		})
	}
}

func TestE2ESubagentRunOffersWriteTools(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	writeWorkFiles(t, e.work, map[string]string{
		".reasonix/skills/fixer/SKILL.md": "---\nrunAs: subagent\n---\n",
	})
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "w", Name: "write_file", Arguments: `{"path":"fixed.txt","content":"fixed\n"}`}}},
		providertest.Turn{Text: "Wrote fixed.txt."},
	)
	r := e.run("subagent", "run", "fixer", "write fixed.txt")
	if r.code != 0 || r.stdout != "Wrote fixed.txt.\n" {
		t.Fatalf("unexpected result:\n%s", r)
	}
	got, err := os.ReadFile(filepath.Join(e.work, "fixed.txt"))
	if err != nil || string(got) != "fixed\n" {
		t.Errorf("fixed.txt = %q, %v", got, err)
	}
	req := e.srv.Requests()[0]
	for _, w := range writeTools {
		if !slices.Contains(req.Tools, w) {
			t.Errorf("run did not offer %s: %v", w, req.Tools)
		}
	}
	// An empty body falls back to a generic subagent prompt, never the
	// main agent's.
	sys := systemMessage(t, req)
	if strings.Contains(sys, "You are Reasonix") || !strings.Contains(sys, "subagent") {
		t.Errorf("system prompt of an empty profile:\n%s", sys)
	}
}

func TestE2ESubagentRunHonoursDeny(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "w", Name: "write_file", Arguments: `{"path":"blocked.txt","content":"x"}`}}},
		providertest.Turn{Text: "Could not write."},
	)
	r := e.run("subagent", "run", "--deny", "Edit(blocked.txt)", "review", "write blocked.txt")
	if r.code != 0 {
		t.Fatalf("unexpected result:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(e.work, "blocked.txt")); !os.IsNotExist(err) {
		t.Errorf("a denied write happened: %v", err)
	}
	res := e.srv.Requests()[1].Last()
	if res.Role != "tool" || strings.Contains(res.Content, "wrote") || !strings.Contains(strings.ToLower(res.Content), "blocked") {
		t.Errorf("tool result of a denied write = %+v", res)
	}
}

func TestE2ESubagentProfileTools(t *testing.T) {
	t.Parallel()
	profile := "---\nrunAs: subagent\ntools: read_file, bash, no_such_tool\n---\nLimited.\n"
	tests := []struct {
		action string
		want   []string
	}{
		{"try", []string{"read_file"}},
		{"run", []string{"bash", "read_file"}},
	}
	for _, tt := range tests {
		t.Run(tt.action, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t)
			writeWorkFiles(t, e.work, map[string]string{".reasonix/skills/limited/SKILL.md": profile})
			e.srv.Push(providertest.Turn{Text: "ok"})
			r := e.run("subagent", tt.action, "limited", "go")
			if r.code != 0 {
				t.Fatalf("unexpected result:\n%s", r)
			}
			if got := e.srv.Requests()[0].Tools; !slices.Equal(got, tt.want) {
				t.Errorf("tools = %v, want %v", got, tt.want)
			}
			if !strings.Contains(r.stderr, `lists tool "no_such_tool"`) {
				t.Errorf("stderr lacks the unknown-tool warning:\n%s", r.stderr)
			}
		})
	}
}

func TestE2ESubagentSigint(t *testing.T) {
	t.Parallel()
	skipWithoutSignals(t)
	e := newE2E(t)
	// Some text arrives, then the stream holds the connection open: only
	// the signal can end the turn.
	e.srv.Push(providertest.Turn{Text: "A partial answer", Stall: true, FaultAfterEvents: 2})
	p := startLive(t, e, "subagent", "try", "explore", "look forever")
	if _, err := e.srv.WaitRequests(1, e2eExitBound); err != nil {
		t.Fatal(err)
	}
	p.signal(t, os.Interrupt)
	if code := p.wait(t); code != 130 {
		t.Fatalf("exit %d, want 130\n--- stdout\n%s\n--- stderr\n%s", code, p.stdout, p.stderr)
	}
	if out := p.stdout.String(); out != "" {
		t.Errorf("an interrupted subagent printed %q; only a final answer belongs on stdout", out)
	}
	if !strings.Contains(p.stderr.String(), "interrupted; transcript saved to") {
		t.Errorf("stderr lacks the interruption notice:\n%s", p.stderr)
	}
}

func TestE2ESubagentUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown profile", []string{"subagent", "try", "nope", "do it"}, []string{`unknown subagent profile "nope"`, "available: explore, review"}},
		{"unknown profile with run", []string{"subagent", "run", "nope", "do it"}, []string{`"nope"`, "explore, review"}},
		{"ordinary skill", []string{"subagent", "try", "notes", "do it"}, []string{`"notes"`, "runAs: subagent"}},
		{"unknown model", []string{"subagent", "try", "-m", "nowhere/none", "explore", "x"}, []string{`subagent "explore"`, "model"}},
		{"missing profile", []string{"subagent", "try"}, []string{"missing the profile name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t)
			writeWorkFiles(t, e.work, map[string]string{".reasonix/skills/notes/SKILL.md": "Just notes.\n"})
			r := e.run(tt.args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2:\n%s", r.code, r)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if e.srv.Count() != 0 {
				t.Error("a model request was sent after a usage error")
			}
		})
	}
}

func TestE2ESubagentList(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.writeConfig("[agent]\nsubagent_efforts = { audit = \"max\" }\n[skills]\ndisabled_skills = [\"review\"]\n")
	writeWorkFiles(t, e.work, map[string]string{
		".reasonix/skills/audit/SKILL.md":  "---\nrunAs: subagent\nmodel: fake\ndescription: Security audit\n---\nAudit.\n",
		".reasonix/skills/notes/SKILL.md":  "---\ndescription: House notes\n---\nplain\n",
		".reasonix/skills/broken/SKILL.md": "---\nname: broken\n",
	})
	writeWorkFiles(t, e.home, map[string]string{
		"skills/explore/SKILL.md": "---\nrunAs: subagent\ndescription: My explorer\n---\nExplore my way.\n",
	})
	tests := []struct {
		name    string
		args    []string
		want    [][]string
		notWant []string
	}{
		{
			name: "profiles",
			args: []string{"subagent", "list"},
			want: [][]string{
				{"NAME", "SOURCE", "MODEL", "EFFORT", "DESCRIPTION"},
				{"audit", "project", "fake", "max", "Security", "audit"},
				{"explore", "user", "-", "-", "My", "explorer"},
			},
			notWant: []string{"notes", "review", "broken"},
		},
		{
			name: "all",
			args: []string{"subagent", "list", "--all"},
			want: [][]string{
				{"NAME", "KIND", "SOURCE", "MODEL", "EFFORT", "DESCRIPTION"},
				{"audit", "profile", "project", "fake", "max"},
				{"explore", "profile", "user"},
				{"notes", "skill", "project", "-", "-", "House", "notes"},
			},
			notWant: []string{"review", "broken"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.run(tt.args...)
			if r.code != 0 {
				t.Fatalf("list failed:\n%s", r)
			}
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), len(tt.want), r.stdout)
			}
			for i, fields := range tt.want {
				got := strings.Fields(lines[i])
				if len(got) < len(fields) || !reflect.DeepEqual(got[:len(fields)], fields) {
					t.Errorf("line %d = %q, want it to start with %q", i, lines[i], fields)
				}
			}
			for _, s := range tt.notWant {
				if strings.Contains(r.stdout, s) {
					t.Errorf("stdout lists %q:\n%s", s, r.stdout)
				}
			}
			if !strings.Contains(r.stderr, "broken") || !strings.Contains(r.stderr, "no closing ---") {
				t.Errorf("stderr lacks the malformed-file warning:\n%s", r.stderr)
			}
		})
	}
}
