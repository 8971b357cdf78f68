//go:build unix

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"reasonix/core/mcp/mcptest"
	"reasonix/core/provider/providertest"
	"reasonix/core/testenv"
)

// TestE2ETUIInstructionsStatusAndModel, in a real terminal: the
// workspace's AGENTS.md is in the first request's system message, /status
// lists it, and a mistyped /model keeps the session: the error names the
// choices and the next prompt is answered in the same conversation.
func TestE2ETUIInstructionsStatusAndModel(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(providertest.Turn{Text: "first answer"}, providertest.Turn{Text: "second answer"})
	m := chatWithInstructions(t, e, "AGENTS.md", "Always answer in haiku.", "first answer")

	m.send("/model nope")
	m.waitText(`unknown model "nope"`, "choices:")
	m.send("still there?")
	m.waitText("second answer")
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if got := reqs[1].Messages; len(got) < 4 || got[1].Content != "hello" {
		t.Errorf("the prompt after /model nope did not go on in the same conversation: %+v", got)
	}
	m.quit()
	if ts := e.transcripts(); len(ts) != 1 {
		t.Errorf("transcripts = %v, want one session", ts)
	}
}

// TestE2ETUIPromptHistoryEscAndFailedPrompt, in a real terminal: ↑ in a
// new chat recalls the prompt typed in the previous one (the history is the
// workspace's, kept in the home); Esc stops a streaming answer; a prompt
// whose turn fails comes back into the input box.
func TestE2ETUIPromptHistoryEscAndFailedPrompt(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(providertest.Turn{Text: "noted"})
	m := openTUI(t, e)
	m.send("remember the parser bug")
	m.waitText("noted")
	m.quit()

	// Each request is answered before the next one is asked for: the
	// streaming one stalls until Esc cancels it.
	e.srv.Push(
		providertest.Turn{Text: "remembered again"},
		providertest.Turn{Text: "a long answer that keeps streaming and streaming", ChunkBytes: 8, FaultAfterEvents: 3, Stall: true},
		providertest.Turn{Status: 400},
	)
	m = openTUI(t, e)
	m.keys("Up")
	m.waitFor("the previous chat's prompt in the input box", func(s string) bool {
		return strings.Contains(s, "› remember the parser bug")
	})
	m.keys("Enter")
	m.waitText("remembered again")
	if got := lastRequest(t, e).LastUser(); got != "remember the parser bug" {
		t.Errorf("the recalled prompt reached the model as %q", got)
	}

	m.send("tell me a story")
	m.waitFor("the answer streaming", func(s string) bool { return strings.Contains(s, "a long an") })
	m.keys("Escape")
	m.waitText("turn cancelled")

	m.send("this one fails")
	m.waitText("the prompt is back in the input box")
	m.waitFor("the failed prompt in the input box", func(s string) bool { return strings.Contains(s, "› this one fails") })
	m.keys("C-c") // clears the input box
	m.quit()
}

// TestE2ETUIApprovalsShowWhatTheyApprove, in a real terminal: a write's
// approval shows the new file's lines, an edit's a diff of the change, and
// `ls -la` is labelled as a command that only reads (TestApprovalShowsTasks
// covers a fleet's).
func TestE2ETUIApprovalsShowWhatTheyApprove(t *testing.T) {
	t.Parallel()
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if isSubagent(req) {
			return providertest.Turn{Text: "sub done"}
		}
		switch len(toolResults(req)) {
		case 0:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "w", Name: "write_file",
				Arguments: `{"path":"notes.md","content":"first line of the note\nsecond line\n"}`}}}
		case 1:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "e", Name: "edit_file",
				Arguments: `{"path":"main.go","old_string":"println(\"hi\")","new_string":"println(\"bye\")"}`}}}
		case 2:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "b", Name: "bash", Arguments: `{"command":"ls -la"}`}}}
		}
		return providertest.Turn{Text: "all done"}
	}))
	if err := os.WriteFile(filepath.Join(e.work, "main.go"), []byte("package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := openTUI(t, e)
	m.send("make the changes")
	m.waitText("write_file", "+++ b/notes.md", "+first line of the note", "+second line")
	m.typeText("y")
	diff := m.waitFor("the edit's diff", func(s string) bool {
		return strings.Contains(s, "edit_file") && strings.Contains(s, "--- a/main.go") &&
			regexp.MustCompile(`-\s+println\("hi"\)`).MatchString(s) && regexp.MustCompile(`\+\s+println\("bye"\)`).MatchString(s)
	})
	t.Logf("the edit's approval:\n%s", diff)
	m.typeText("y")
	m.waitText("ls -la", "the command only reads")
	m.typeText("y")
	m.waitText("all done")
	m.quit()
	if b, err := os.ReadFile(filepath.Join(e.work, "main.go")); err != nil || !strings.Contains(string(b), "bye") {
		t.Errorf("main.go after the approved edit: %q, %v", b, err)
	}
}

// TestE2ETUIRetriesAndErrorsInWords, in a real terminal: a refused request
// that is retried shows one transient line saying so while it waits, gone
// once the answer streams; an error is shown once, in words (the message
// of the endpoint's error object, not its JSON), and ctrl+e prints the
// raw reply.
func TestE2ETUIRetriesAndErrorsInWords(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(
		providertest.Turn{Status: 429, RetryAfter: "2"},
		providertest.Turn{Text: "answered after the retry"},
		providertest.Turn{Status: 400, Body: `{"error":{"message":"Model Not Exist","type":"invalid_request_error","code":"model_not_found"}}`},
	)
	m := openTUI(t, e)
	m.send("first question")
	m.waitText("429 Too Many Requests — retrying in 2.0s, attempt 2 of")
	// The answer is printed into the scrollback at once and the live
	// region redrawn on the next frame: look once the chat is idle.
	s := m.waitFor("the answer, the chat idle", func(s string) bool {
		return strings.Contains(s, "answered after the retry") && strings.Contains(s, tuiIdle)
	})
	if strings.Contains(s, "retrying in") {
		t.Errorf("the retry line stayed after the answer:\n%s", s)
	}
	m.send("second question")
	s = m.waitText("status 400 Bad Request: Model Not Exist", "ctrl+e shows the reply")
	if n := strings.Count(s, "Model Not Exist"); n != 1 {
		t.Errorf("the error is shown %d times, want once:\n%s", n, s)
	}
	if strings.Contains(s, `"invalid_request_error"`) {
		t.Errorf("the error shows the raw JSON:\n%s", s)
	}
	m.keys("C-c") // the failed prompt came back into the input box
	m.keys("C-e")
	m.waitText("the endpoint's reply:", `"code":"model_not_found"`)
	m.quit()
}

// TestE2ETUIPlanMode, in a real terminal: /plan reopens the conversation
// in plan mode; a write the model tries before its plan is approved is
// blocked without being asked, the plan is shown for approval, and once it
// is approved the same write is made, as part of the approved plan.
func TestE2ETUIPlanMode(t *testing.T) {
	t.Parallel()
	write := providertest.ToolCall{Name: "write_file", Arguments: `{"path":"plan.txt","content":"carried out\n"}`}
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		switch n := len(toolResults(req)); {
		case req.LastUser() == "hello" && n == 0:
			return providertest.Turn{Text: "hi"}
		case n == 0:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{write}}
		case n == 1:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "exit_plan_mode", Arguments: `{"plan":"1. write plan.txt"}`}}}
		case n == 2:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{write}}
		}
		return providertest.Turn{Text: "plan carried out"}
	}))
	m := openTUI(t, e)
	m.send("hello")
	m.waitText("hi")
	m.send("/plan")
	m.waitFor("plan mode on the status line", func(s string) bool { return strings.Contains(s, "plan mode") && strings.Contains(s, tuiIdle) })
	m.send("write the plan file")
	m.waitText("1. write plan.txt", "approve this plan")
	if _, err := os.Stat(filepath.Join(e.work, "plan.txt")); !os.IsNotExist(err) {
		t.Fatalf("plan.txt exists before the plan was approved (%v)", err)
	}
	reqs := e.srv.Requests()
	if res := toolResults(reqs[len(reqs)-1]); len(res) != 1 || !strings.Contains(res[0].Content, "plan mode") {
		t.Errorf("the write before the plan was not blocked by plan mode: %+v", res)
	}
	if reqs[len(reqs)-1].Messages[1].Content != "hello" {
		t.Errorf("/plan did not keep the conversation: %+v", reqs[len(reqs)-1].Messages[:2])
	}
	m.typeText("y")
	s := m.waitFor("the plan carried out, the chat idle", func(s string) bool {
		return strings.Contains(s, "plan carried out") && strings.Contains(s, tuiIdle)
	})
	if strings.Contains(s, "plan mode ·") {
		t.Errorf("the status line still says plan mode after the plan was approved:\n%s", s)
	}
	if b, err := os.ReadFile(filepath.Join(e.work, "plan.txt")); err != nil || string(b) != "carried out\n" {
		t.Errorf("plan.txt after the approved plan: %q, %v", b, err)
	}
	m.quit()
}

// TestE2ESetupAsksForTheKey, in a real terminal: `reasonix setup` on a home
// that has a config but no key keeps the config, asks for the key without
// echoing it, and saves it in <home>/.env; run again, it asks nothing.
func TestE2ESetupAsksForTheKey(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.env = slices.DeleteFunc(slices.Clone(e.env), func(s string) bool { return strings.HasPrefix(s, "FAKE_API_KEY=") })
	e.writeConfig("")
	before, err := os.ReadFile(filepath.Join(e.home, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	// setup saves the key under the default provider's variable.
	m := startTUI(t, e, "setup")
	m.waitText("Kept your config at")
	// The question goes to stderr, which the harness keeps in a file.
	m.waitOn(m.stderrText, "the question for the key", func(s string) bool { return strings.Contains(s, "Paste your DEEPSEEK_API_KEY") })
	m.typeText("sk-typed-in-setup")
	if s := m.screen(); strings.Contains(s, "sk-typed-in-setup") {
		t.Errorf("the key is echoed:\n%s", s)
	}
	m.keys("Enter")
	if code := m.waitExit(); code != 0 {
		t.Fatalf("setup exit %d:\n%s", code, m.screen())
	}
	env, err := os.ReadFile(filepath.Join(e.home, ".env"))
	if err != nil || string(env) != "DEEPSEEK_API_KEY=sk-typed-in-setup\n" {
		t.Fatalf(".env = %q, %v", env, err)
	}
	if after, _ := os.ReadFile(filepath.Join(e.home, "config.toml")); string(after) != string(before) {
		t.Errorf("setup changed the existing config")
	}
	again := startTUI(t, e, "setup")
	if code := again.waitExit(); code != 0 {
		t.Fatalf("second setup exit %d:\n%s", code, again.screen())
	}
	if s := again.stderrText(); strings.Contains(s, "Paste your") {
		t.Errorf("setup asked again for a key it has:\n%s", s)
	}
}

// TestE2ETUIRunsAProfile, in a real terminal: /auditor <task> runs a
// manual profile (one the model's skill index leaves out): the model is
// asked to run the task with that profile, and when it does, the subagent
// runs under the profile's own system prompt.
func TestE2ETUIRunsAProfile(t *testing.T) {
	t.Parallel()
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if strings.Contains(req.Messages[0].Content, "You are the auditor profile.") {
			return providertest.Turn{Text: "audited: no bugs"}
		}
		if len(toolResults(req)) == 0 {
			if !strings.Contains(req.LastUser(), `profile "auditor"`) {
				return providertest.Turn{Text: "not asked for the profile"}
			}
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "task", Arguments: `{"prompt":"check the parser","profile":"auditor"}`}}}
		}
		return providertest.Turn{Text: "the auditor found no bugs"}
	}))
	testenv.WriteTree(t, e.work, map[string]string{
		".reasonix/skills/auditor/SKILL.md": "---\nname: auditor\ndescription: Audit for security bugs\nrunAs: subagent\ninvocation: manual\ntools: [read_file, grep]\n---\nYou are the auditor profile.\n",
	})
	m := openTUI(t, e)
	m.send("/auditor check the parser")
	m.waitText("1 task: [auditor] check the parser")
	m.typeText("y")
	m.waitText("the auditor found no bugs")
	ran := false
	for _, r := range e.srv.Requests() {
		ran = ran || strings.Contains(r.Messages[0].Content, "You are the auditor profile.")
	}
	if !ran {
		t.Error("no request ran under the auditor profile's system prompt")
	}
	if res := toolResults(lastRequest(t, e)); len(res) != 1 || !strings.Contains(res[0].Content, "audited: no bugs") {
		t.Errorf("the parent did not get the auditor's answer: %+v", res)
	}
	if sys := e.srv.Requests()[0].Messages[0].Content; strings.Contains(sys, "auditor") {
		t.Errorf("a manual profile is in the model's index:\n%s", sys)
	}
	m.quit()
}

// TestE2ETUIInit, in a real terminal: /init puts the chat in plan mode and
// asks the model to survey the repository and propose a starter AGENTS.md;
// nothing is written until the proposal is approved, then the file is.
func TestE2ETUIInit(t *testing.T) {
	t.Parallel()
	const agents = "# Agents\n\nRun go test ./... before you answer.\n"
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		switch len(toolResults(req)) {
		case 0:
			if !strings.Contains(req.LastUser(), "starter AGENTS.md") {
				return providertest.Turn{Text: "not an init request"}
			}
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "ls", Arguments: `{}`}}}
		case 1:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "exit_plan_mode", Arguments: `{"plan":"AGENTS.md:\n\n# Agents\n\nRun go test ./... before you answer."}`}}}
		case 2:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "write_file", Arguments: `{"path":"AGENTS.md","content":"# Agents\n\nRun go test ./... before you answer.\n"}`}}}
		}
		return providertest.Turn{Text: "wrote AGENTS.md"}
	}))
	m := openTUI(t, e)
	m.send("/init")
	m.waitText("Run go test ./... before you answer.", "approve this plan")
	if _, err := os.Stat(filepath.Join(e.work, "AGENTS.md")); !os.IsNotExist(err) {
		t.Fatalf("AGENTS.md exists before the proposal was approved (%v)", err)
	}
	m.typeText("y")
	m.waitText("wrote AGENTS.md")
	if b, err := os.ReadFile(filepath.Join(e.work, "AGENTS.md")); err != nil || string(b) != agents {
		t.Errorf("AGENTS.md = %q, %v", b, err)
	}
	m.quit()
}

// TestE2ETUIElicitationForm, in a real terminal against
// @modelcontextprotocol/server-everything: its elicitation request is drawn
// as a form from the request's schema, the user fills the required field
// and sends it, and the tool's result carries what was typed.
func TestE2ETUIElicitationForm(t *testing.T) {
	t.Parallel()
	node, script := mcptest.Everything(t)
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if len(toolResults(req)) == 0 {
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "mcp__everything__trigger-elicitation-request", Arguments: `{}`}}}
		}
		return providertest.Turn{Text: "the form came back"}
	}))
	e.writeConfig(fmt.Sprintf("\n[[plugins]]\nname = \"everything\"\ncommand = %q\nargs = [%q, \"stdio\"]\n", node, script))
	m := openTUI(t, e)
	m.send("ask me")
	s := m.waitFor("the form or its approval", func(s string) bool {
		return strings.Contains(s, "MCP server everything asks:") || strings.Contains(s, "[y] Allow once")
	})
	if !strings.Contains(s, "MCP server everything asks:") {
		m.typeText("y")
	}
	m.waitText("MCP server everything asks:", "String*:", "‹ Superman ›")
	m.typeText("Ada Lovelace")
	m.keys("Enter")
	m.waitText("mcp everything: accept", "the form came back")
	res := toolResults(lastRequest(t, e))
	if len(res) != 1 || !strings.Contains(res[0].Content, "Ada Lovelace") {
		t.Errorf("the tool's result does not carry the form's answer: %+v", res)
	}
	m.quit()
}

// TestE2ETUIClaudeMdAlone, in a real terminal: a workspace with only a
// CLAUDE.md has it in the first request's system message, and /status
// lists it.
func TestE2ETUIClaudeMdAlone(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(providertest.Turn{Text: "noted"})
	chatWithInstructions(t, e, "CLAUDE.md", "Prefer table-driven tests.", "noted").quit()
}

// chatWithInstructions writes the workspace's instruction file name with
// text, opens the chat, sends a prompt answered by reply, and checks that
// the first request's system message holds the text and that /status
// lists the file. It returns the open chat.
func chatWithInstructions(t *testing.T, e *e2e, name, text, reply string) *tmuxTerm {
	t.Helper()
	path := filepath.Join(e.work, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	m := openTUI(t, e)
	m.send("hello")
	m.waitText(reply)
	if sys := e.srv.Requests()[0].Messages[0].Content; !strings.Contains(sys, text) {
		t.Errorf("the first request's system message lacks %s:\n%s", name, sys)
	}
	m.send("/status")
	m.waitText("instructions", path, "fake/fake-model")
	return m
}
