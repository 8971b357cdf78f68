package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"reasonix/actors"
	"reasonix/actors/event"
	"reasonix/core/mcp"
	"reasonix/core/prompt"
	"reasonix/core/provider/providertest"
	"reasonix/core/session"
)

// TestComposerOwnership holds the modal/composer rule: a modal overlay
// hides the composer, an input-owned one keeps it, and the status line is
// always last.
func TestComposerOwnership(t *testing.T) {
	approval := &event.ApprovalRequested{Meta: meta(1), RequestID: "r1", Tool: "bash", Args: `{"command":"ls"}`}
	cases := []struct {
		name     string
		setup    func(m *model)
		composer bool
		want     string
	}{
		{"idle", func(*model) {}, true, ""},
		{"approval", func(m *model) { feed(m, approval) }, false, partModal},
		{"mcp", func(m *model) {
			m.Update(m.slash("/mcp")())
		}, false, partModal},
		{"resume", func(m *model) { m.sessionsListed(sessionsMsg{list: []session.Summary{{ID: "abc"}}}) }, false, partModal},
		{"clear confirm", func(m *model) { m.slash("/clear") }, false, partModal},
		{"slash autocomplete", func(m *model) { typeText(m, "/he") }, true, partMenu},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := testModel(t, 80, 24)
			c.setup(m)
			parts := partNames(m)
			if got := hasPart(m, partComposer); got != c.composer {
				t.Errorf("composer shown = %v, want %v (parts %v)", got, c.composer, parts)
			}
			if m.hideComposer() == c.composer {
				t.Errorf("hideComposer() = %v with parts %v", m.hideComposer(), parts)
			}
			if c.want != "" && !hasPart(m, c.want) {
				t.Errorf("no %s part in %v", c.want, parts)
			}
			if parts[len(parts)-1] != partStatus {
				t.Errorf("status is not the last row: %v", parts)
			}
		})
	}
}

// TestApprovalAnswers checks the keys of the approval modal and that a
// once_only request offers only once and deny.
func TestApprovalAnswers(t *testing.T) {
	req := func(onceOnly bool) *event.ApprovalRequested {
		return &event.ApprovalRequested{Meta: meta(1), RequestID: "r1", Tool: "bash", Args: `{"command":"go test ./..."}`,
			Suggestions: []string{"Bash(go test ./...)", "Bash(go test:*)"}, OnceOnly: onceOnly}
	}
	m := testModel(t, 80, 24)
	feed(m, req(true))
	got := frame(m)
	if strings.Contains(got, "Allow for this session") || strings.Contains(got, "Always allow") || !strings.Contains(got, "Deny") {
		t.Errorf("a once_only approval offers more than once/deny:\n%s", got)
	}
	press(m, "s") // not offered: nothing happens
	if len(m.approvals) != 1 {
		t.Fatal("a key the request does not offer answered it")
	}
	press(m, "n")
	if len(m.approvals) != 0 || !hasPart(m, partComposer) {
		t.Fatalf("deny left the modal open: %v", partNames(m))
	}

	m = testModel(t, 80, 24)
	feed(m, req(false), &event.ApprovalRequested{Meta: event.Meta{Seq: 2, Session: "s1", Task: "t7"}, RequestID: "r2", Tool: "write_file",
		Args: `{"path":"a.go"}`})
	press(m, "tab", "a")
	if !strings.Contains(ansi.Strip(m.chat.history[len(m.chat.history)-1]), "always allow (saved) Bash(go test:*)") {
		t.Errorf("always with the prefix scope was not what was answered: %q", m.chat.history)
	}
	if got := frame(m); !strings.Contains(got, "Task t7 wants to run write_file") {
		t.Errorf("a subagent's approval does not say which task asks:\n%s", got)
	}
	feed(m, &event.ApprovalResolved{Meta: meta(3), RequestID: "r2", Decision: event.ApproveDeny})
	if len(m.approvals) != 0 {
		t.Errorf("approval_resolved did not close the request")
	}
}

// TestCtrlC: the first Ctrl-C on an idle prompt warns, the second quits;
// any other key in between disarms it.
func TestCtrlC(t *testing.T) {
	m := testModel(t, 80, 24)
	if cmd := press(m, "ctrl+c"); isQuit(cmd) {
		t.Fatal("the first Ctrl-C quit")
	}
	if !strings.Contains(frame(m), "press Ctrl-C again to quit") {
		t.Errorf("no warning after the first Ctrl-C:\n%s", frame(m))
	}
	press(m, "x", "ctrl+c") // typing, then Ctrl-C clears the input
	if m.composer.Value() != "" || m.quitArmed {
		t.Fatalf("Ctrl-C with input: value %q, armed %v", m.composer.Value(), m.quitArmed)
	}
	press(m, "ctrl+c")
	if cmd := press(m, "ctrl+c"); !isQuit(cmd) {
		t.Fatal("the second Ctrl-C on an idle prompt did not quit")
	}
}

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	return containsQuit(cmd())
}

func containsQuit(msg tea.Msg) bool {
	switch msg := msg.(type) {
	case tea.QuitMsg:
		return true
	case tea.BatchMsg:
		for _, c := range msg {
			if c != nil && containsQuit(c()) {
				return true
			}
		}
	}
	return false
}

// TestWideCharacters: CJK text in the composer is measured in terminal
// columns, so no line of the frame is wider than the terminal and the
// cursor sits after the text.
func TestWideCharacters(t *testing.T) {
	const width = 30
	m := testModel(t, width, 20)
	typeText(m, "你好世界，这是一个很长的中文句子需要换行显示")
	for _, line := range strings.Split(m.View().Content, "\n") {
		if w := lipgloss.Width(line); w > width {
			t.Errorf("line %q is %d columns wide, over %d", ansi.Strip(line), w, width)
		}
	}
	m = testModel(t, width, 20)
	typeText(m, "你好")
	v := m.View()
	if v.Cursor == nil {
		t.Fatal("no cursor")
	}
	// "› " is two columns, each CJK character two more.
	if v.Cursor.X != 2+4 {
		t.Errorf("cursor at column %d, want 6", v.Cursor.X)
	}
	lines := strings.Split(v.Content, "\n")
	if row := ansi.Strip(lines[v.Cursor.Y]); !strings.Contains(row, "你好") {
		t.Errorf("cursor row %d is %q, not the composer", v.Cursor.Y, row)
	}
}

// TestSlashDispatch covers the commands that need no session and the
// custom commands loaded from disk.
func TestSlashDispatch(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	dir := filepath.Join(cwd, ".reasonix", "commands")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "review.md"), []byte("---\ndescription: Review the diff\n---\nReview $ARGUMENTS carefully.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.md"), []byte("---\ndescription: unterminated\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := testModel(t, 100, 30)
	m.opts.Home, m.opts.Cwd = home, cwd
	msg := m.loadCommands()()
	m.Update(msg)
	m.Update(msg) // a reload reports a problem only once
	help := func() string { m.slash("/help"); return ansi.Strip(m.chat.history[len(m.chat.history)-1]) }
	h := help()
	for _, want := range []string{"/compact", "/resume", "/review", "Review the diff"} {
		if !strings.Contains(h, want) {
			t.Errorf("/help lacks %q:\n%s", want, h)
		}
	}
	typeText(m, "/rev")
	if it, ok := m.menu.Selected(); !ok || it.Value != "/review" {
		t.Errorf("autocomplete for /rev = %+v, %v", it, ok)
	}
	if text, _ := prompt.Expand(context.Background(), m.opts.Cwd, m.commands.custom, "/review auth.go"); strings.TrimSpace(text) != "Review auth.go carefully." {
		t.Errorf("custom command render = %q", text)
	}
	problems := 0
	for _, h := range m.chat.history {
		if strings.Contains(h, "bad.md") {
			problems++
		}
	}
	if problems != 1 {
		t.Errorf("the broken command file was reported %d times, want once", problems)
	}
	m.slash("/nonsense")
	if last := ansi.Strip(m.chat.history[len(m.chat.history)-1]); !strings.Contains(last, "unknown command /nonsense") {
		t.Errorf("unknown command: %q", last)
	}
	m.slash("/posture sideways")
	if last := ansi.Strip(m.chat.history[len(m.chat.history)-1]); !strings.Contains(last, "want ask, auto or yolo") {
		t.Errorf("bad posture: %q", last)
	}
}

// TestAtCompletion lists one directory level, descends into a directory
// and completes a file into the composer.
func TestAtCompletion(t *testing.T) {
	cwd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"src/main.go", "README.md"} {
		if err := os.WriteFile(filepath.Join(cwd, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := testModel(t, 80, 24)
	m.opts.Cwd = cwd
	run := func(cmd tea.Cmd) {
		for cmd != nil {
			msg := cmd()
			if _, ok := msg.(completionMsg); !ok {
				return
			}
			_, cmd = m.Update(msg)
		}
	}
	m.composer.SetValue("look at @")
	run(m.refreshCompletion())
	if !hasPart(m, partMenu) || !hasPart(m, partComposer) {
		t.Fatalf("@ menu: parts %v", partNames(m))
	}
	var labels []string
	for range m.menu.Len() {
		it, _ := m.menu.Selected()
		labels = append(labels, it.Value)
		m.menu.Move(1)
	}
	if strings.Join(labels, " ") != "@README.md @src/" && strings.Join(labels, " ") != "@src/ @README.md" {
		t.Fatalf("top level = %v", labels)
	}
	for it, _ := m.menu.Selected(); it.Value != "@src/"; it, _ = m.menu.Selected() {
		m.menu.Move(1)
	}
	cmd, ok := m.accept()
	if !ok {
		t.Fatal("accepting a directory did nothing")
	}
	run(cmd)
	if m.composer.Value() != "look at @src/" || !m.complete.open {
		t.Fatalf("after descending: %q open=%v", m.composer.Value(), m.complete.open)
	}
	if _, ok := m.accept(); !ok || m.composer.Value() != "look at @src/main.go " {
		t.Fatalf("after taking the file: %q", m.composer.Value())
	}
	if hasPart(m, partMenu) {
		t.Error("the menu stays open after a file was taken")
	}
}

// TestReasoningToggle: ctrl+o shows the reasoning being streamed, and the
// next finished stretch is printed in full.
func TestReasoningToggle(t *testing.T) {
	m := testModel(t, 80, 24)
	feed(m, &event.ReasoningDelta{Meta: meta(1), Text: "considering the options"})
	if strings.Contains(frame(m), "considering") {
		t.Error("hidden reasoning is shown")
	}
	press(m, "ctrl+o")
	if !strings.Contains(frame(m), "considering the options") {
		t.Error("ctrl+o does not show the reasoning")
	}
	feed(m, &event.TextDelta{Meta: meta(2), Text: "answer"})
	if last := ansi.Strip(m.chat.history[len(m.chat.history)-1]); !strings.Contains(last, "considering the options") {
		t.Errorf("shown reasoning printed as %q", last)
	}
}

// TestLaggedRebuilds: a lagged subscription takes the session's snapshot
// and rebuilds approvals and tasks from it.
func TestLaggedRebuilds(t *testing.T) {
	m := testModel(t, 80, 24)
	m.Update(snapshotMsg{gen: m.gen, lost: 12, snap: event.Snapshot{
		Session: "s1", Running: true, Queued: []string{"next"}, Posture: "auto",
		Approvals: []event.PendingApproval{{RequestID: "r9", Tool: "bash", Args: `{"command":"make"}`}},
		Tasks:     []event.TaskSnapshot{{ID: "t1", State: "running"}, {ID: "t2", State: "done", Status: "ok"}},
	}})
	if len(m.approvals) != 1 || m.fleet.Len() != 2 || m.status.posture != "auto" || !m.status.running || m.status.queued != 1 {
		t.Fatalf("rebuilt: approvals %d, tasks %d, status %+v", len(m.approvals), m.fleet.Len(), m.status)
	}
	if !strings.Contains(frame(m), "12 events behind") {
		t.Errorf("the lag is not reported:\n%s", frame(m))
	}
}

// TestMCPCommands: the session's MCP prompts are offered as slash
// commands and listed by /help; its resources sit beside the top-level @
// entries.
func TestMCPCommands(t *testing.T) {
	m := testModel(t, 100, 30)
	m.Update(mcpMsg{gen: m.gen, st: &event.MCPStatus{Servers: []event.MCPServerStatus{
		{Name: "docs", State: event.MCPReady,
			Prompts:   []mcp.Prompt{{Name: "summarise", Description: "Summarise a page"}},
			Resources: []mcp.Resource{{URI: "guide/intro", Name: "Intro"}}},
		{Name: "down", State: event.MCPFailed, Prompts: []mcp.Prompt{{Name: "hidden"}}},
	}}})
	typeText(m, "/mcp__")
	if it, ok := m.menu.Selected(); !ok || it.Value != "/mcp__docs__summarise" || m.menu.Len() != 1 {
		t.Errorf("autocomplete for /mcp__ = %+v (%d items)", it, m.menu.Len())
	}
	m.composer.Reset()
	m.slash("/help")
	if h := ansi.Strip(m.chat.history[len(m.chat.history)-1]); !strings.Contains(h, "/mcp__docs__summarise") || strings.Contains(h, "hidden") {
		t.Errorf("/help MCP prompts:\n%s", h)
	}
	m.Update(mcpServersMsg{gen: m.gen, servers: []event.MCPServerState{
		{Server: "docs", State: "ready", Tools: 3, Prompts: 1, Resources: 1},
		{Server: "down", State: "failed", Error: "exit status 1"},
	}})
	if got := frame(m); !strings.Contains(got, "docs             ready      3 tools · 1 prompts · 1 resources") ||
		!strings.Contains(got, "exit status 1") || hasPart(m, partComposer) {
		t.Errorf("/mcp modal:\n%s", got)
	}
	press(m, "esc")
	if !hasPart(m, partComposer) {
		t.Fatal("esc did not close the /mcp modal")
	}
	m.opts.Cwd = t.TempDir()
	m.composer.SetValue("@")
	msg := m.refreshCompletion()().(completionMsg)
	m.Update(msg)
	if it, ok := m.menu.Selected(); !ok || it.Value != "@docs:guide/intro" {
		t.Errorf("@ menu in an empty workspace = %+v, want the MCP resource", it)
	}
}

// TestGoalPanel: the goal panel is drawn while a goal is active, above the
// composer.
func TestGoalPanel(t *testing.T) {
	m := testModel(t, 80, 24)
	feed(m, &event.GoalStarted{Meta: meta(1), Goal: "g1", Objective: "make the build green", Strategy: "simple", MaxTurns: 20})
	if !hasPart(m, partGoal) || !strings.Contains(frame(m), "make the build green") {
		t.Fatalf("no goal panel: %v\n%s", partNames(m), frame(m))
	}
	feed(m, &event.GoalEnded{Meta: meta(2), Goal: "g1", Status: "complete"})
	if hasPart(m, partGoal) {
		t.Error("the goal panel stays after the goal ended")
	}
}

// TestFleetCancel: the fleet panel focused with ctrl+f cancels the
// selected task after confirmation, through the session's cancel_task.
func TestFleetCancel(t *testing.T) {
	srv := providertest.Start(t)
	o, _ := liveOpener(t, srv)
	live, _, err := o.Open(context.Background(), OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	m := fleetModel(t, 3)
	m.Update(openedMsg{gen: m.gen, live: live})
	if m.sub != nil {
		defer m.sub.Close()
	}
	if got := m.statusLine(); !strings.Contains(ansi.Strip(got), "fleet 3 running, 0/3 done") {
		t.Errorf("status line %q", ansi.Strip(got))
	}
	press(m, "ctrl+f", "down", "x")
	if !strings.Contains(frame(m), "Cancel task t01?") {
		t.Fatalf("no confirmation:\n%s", frame(m))
	}
	press(m, "y")
	if last := ansi.Strip(m.chat.history[len(m.chat.history)-1]); last != "· cancelling task t01" {
		t.Errorf("after confirming: %q", last)
	}
	press(m, "ctrl+f")
	if m.fleet.Focused() || m.View().Cursor == nil {
		t.Error("ctrl+f did not give the keyboard back to the composer")
	}
}

// TestMenuSteadyWhileStreaming: with the menu open, streamed tokens
// change the answer above it but never the menu, the composer or their
// height.
func TestMenuSteadyWhileStreaming(t *testing.T) {
	m := testModel(t, 80, 30)
	feed(m, &event.TurnStarted{Meta: meta(1), Prompt: "x"})
	typeText(m, "/")
	bottom := func() string {
		var b strings.Builder
		for _, p := range m.bottomRows() {
			if p.name == partMenu || p.name == partComposer {
				b.WriteString(p.text + "\n")
			}
		}
		return b.String()
	}
	before := bottom()
	if !strings.Contains(before, "/clear") {
		t.Fatalf("menu not open:\n%s", before)
	}
	for i := range 50 {
		feed(m, &event.TextDelta{Meta: meta(int64(i + 2)), Text: "token "})
		if got := bottom(); got != before {
			t.Fatalf("delta %d changed the menu or composer:\n%s\nwas\n%s", i, got, before)
		}
	}
}

// TestPromptOrder: a prompt waiting for its @ references holds back the
// ones sent after it, so the session gets them in the order typed.
func TestPromptOrder(t *testing.T) {
	srv := providertest.Start(t)
	srv.Push(providertest.Turn{Text: "one"}, providertest.Turn{Text: "two"})
	o, _ := liveOpener(t, srv)
	live, _, err := o.Open(context.Background(), OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(o.Cwd, "a.txt"), []byte("file-a"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := testModel(t, 80, 24)
	m.opts.Cwd = o.Cwd
	m.Update(openedMsg{gen: m.gen, live: live})
	defer m.sub.Close()
	sub := live.Bus().SubscribeFrom(0, 0)
	defer sub.Close()
	expand := m.prompt("first @a.txt", "first @a.txt")
	if expand == nil {
		t.Fatal("no expansion for a prompt with @")
	}
	m.prompt("second", "second")
	if len(m.outgoing) != 2 {
		t.Fatalf("the plain prompt went ahead of the one being expanded: %d held", len(m.outgoing))
	}
	m.Update(expand())
	if len(m.outgoing) != 0 {
		t.Fatalf("%d prompts still held after the expansion", len(m.outgoing))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var started []string
	for len(started) < 2 {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("turns started: %q: %v", started, err)
		}
		if ts, ok := ev.(*event.TurnStarted); ok {
			started = append(started, ts.Prompt)
		}
	}
	if !strings.Contains(started[0], "file-a") || started[1] != "second" {
		t.Errorf("turns ran in the order %q", started)
	}
}

// TestTurnEndedSaysItsStatusOnce: a turn's error that already names its
// status ("incomplete: transcript not saved: …") is shown once, not as
// "incomplete: incomplete: …"; another error follows its status.
func TestTurnEndedSaysItsStatusOnce(t *testing.T) {
	t.Parallel()
	m := testModel(t, 120, 30)
	feed(m,
		&event.TurnDone{Meta: event.Meta{Session: "s", Seq: 1}, Status: actors.StatusIncomplete, Error: "incomplete: transcript not saved: no space left on device (ENOSPC)"},
		&event.TurnDone{Meta: event.Meta{Session: "s", Seq: 2}, Status: event.StatusFailed, Error: "model stream cut"},
	)
	f := frame(m)
	if strings.Contains(f, "incomplete: incomplete") || !strings.Contains(f, "turn ended: incomplete: transcript not saved") {
		t.Errorf("the incomplete turn:\n%s", f)
	}
	if !strings.Contains(f, "turn ended: failed: model stream cut") {
		t.Errorf("the failed turn:\n%s", f)
	}
}
