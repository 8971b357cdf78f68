package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"reasonix/actors/event"
	"reasonix/core/command"
)

// commandSet is every slash command beyond the built-ins.
type commandSet struct {
	// custom are the user's and the project's commands: offered for
	// completion and rendered, when one is sent, by prompt.Expand.
	custom  []command.Command
	prompts []event.MCPPromptRef
	// resources are the MCP resources for @ completion.
	resources []event.MCPResourceRef
	// reported remembers the load problems already shown.
	reported map[string]bool
	// loaded says the custom commands have been read once; helpWaits
	// that /help came before, and is shown when they are.
	loaded, helpWaits bool
}

func (c *commandSet) setMCP(st *event.MCPStatus) {
	c.prompts = st.MCPPrompts()
	c.resources = st.Resources()
}

// commandsMsg answers loadCommands.
type commandsMsg struct {
	gen      int
	custom   []command.Command
	problems []string
}

// loadCustom reads the custom commands of the user's and the project's
// commands directories.
func loadCustom(home, cwd string) ([]command.Command, []string) {
	cmds, problems := command.Load(command.Dirs(home, cwd)...)
	var msgs []string
	for _, p := range problems {
		msgs = append(msgs, p.String())
	}
	return cmds, msgs
}

func (m *model) loadCommands() tea.Cmd {
	home, cwd, gen := m.opts.Home, m.opts.Cwd, m.gen
	return func() tea.Msg {
		custom, problems := loadCustom(home, cwd)
		return commandsMsg{gen: gen, custom: custom, problems: problems}
	}
}

func (m *model) commandsLoaded(msg commandsMsg) tea.Cmd {
	m.commands.custom = msg.custom
	m.commands.loaded = true
	if m.commands.helpWaits {
		m.commands.helpWaits = false
		m.commit(m.helpText())
	}
	if m.complete.open && m.complete.kind == '/' {
		// The menu was opened before the commands were read.
		m.refreshCompletion()
	}
	if m.commands.reported == nil {
		m.commands.reported = map[string]bool{}
	}
	for _, p := range msg.problems {
		if !m.commands.reported[p] {
			m.commands.reported[p] = true
			m.notice("warn", "command skipped: "+p)
		}
	}
	return nil
}

// slash dispatches one slash command: built-ins, then custom commands,
// then MCP prompts, which the session expands itself.
func (m *model) slash(input string) tea.Cmd {
	name, args, ok := command.Split(input)
	if !ok {
		// "/usr/bin is slow" is a message, not a command.
		return m.prompt(input, input)
	}
	args = strings.TrimSpace(args)
	switch name {
	case "help", "?":
		m.showHelp()
		return nil
	case "new":
		m.commitAt(func(w int) string { return renderPrompt(input, w) })
		return m.switchSession(OpenRequest{Model: m.req.Model})
	case "clear":
		m.modal = &confirmModal{
			question: "Discard this conversation's context and start a new session? The transcript stays on disk.",
			yes: func(m *model) tea.Cmd {
				m.notice("info", "context cleared")
				return m.switchSession(OpenRequest{Model: m.req.Model})
			},
		}
		return nil
	case "compact":
		if m.live != nil {
			m.commitAt(func(w int) string { return renderPrompt(input, w) })
			if err := m.live.Session().Do(&event.CompactCmd{}); err != nil {
				m.notice("error", err.Error())
			}
		}
		return nil
	case "effort":
		if args == "" || m.live == nil {
			effort := m.status.effort
			if effort == "" {
				effort = "the model's default"
			}
			m.notice("info", "reasoning effort: "+effort+" ("+strings.Join(event.Efforts, ", ")+"; /effort LEVEL sets it)")
			return nil
		}
		if err := m.live.Session().Do(&event.SetEffortCmd{Effort: args}); err != nil {
			m.notice("error", err.Error())
		}
		return nil
	case "model":
		return m.switchModel(args)
	case "mcp":
		return m.listMCP()
	case "status":
		m.commit(m.statusText())
		return nil
	case "tasks":
		return m.noteCmd("info", m.fleet.Tasks())
	case "plan":
		return m.enterPlanMode()
	case "init":
		return m.initAgents(input)
	case "resume":
		if args != "" {
			return m.switchSession(OpenRequest{Resume: args})
		}
		if m.opts.Sessions == nil {
			m.notice("warn", "no saved sessions to resume")
			return nil
		}
		list := m.opts.Sessions
		return func() tea.Msg {
			l, err := list()
			return sessionsMsg{list: l, err: err}
		}
	case "goal":
		return m.goalCommand(input, args)
	case "posture":
		if args == "" {
			m.notice("info", "posture: "+m.status.posture+" (ask, auto or yolo; shift+tab cycles)")
			return nil
		}
		if !slices.Contains(postures, args) {
			m.notice("error", fmt.Sprintf("unknown posture %q: want ask, auto or yolo", args))
			return nil
		}
		return m.setPosture(args)
	case "quit", "exit":
		return m.quitNow()
	}
	if _, ok := command.Find(m.commands.custom, name); ok {
		// Rendered, with its @ references, where every frontend does it.
		return m.prompt(input, input)
	}
	if strings.HasPrefix(name, "mcp__") {
		// The session renders MCP prompts itself (and says so if the
		// server or prompt is unknown).
		return m.prompt(input, input)
	}
	if slices.Contains(m.status.profiles, name) {
		return m.runProfile(input, name, args)
	}
	m.notice("error", fmt.Sprintf("unknown command /%s (see /help)", name))
	return nil
}

// runProfile is /<profile> task: the task goes to the model as a request
// to run it through the task tool with that profile, which the model may
// not discover on its own (a manual profile is not in its index).
func (m *model) runProfile(input, name, task string) tea.Cmd {
	if task == "" {
		m.notice("info", fmt.Sprintf("usage: /%s <task>: runs the task as a subagent with the %s profile", name, name))
		return nil
	}
	return m.prompt(input, fmt.Sprintf("Run this task with the task tool, with profile %q, and give me its answer.\n\nTask: %s", name, task))
}

func (m *model) goalCommand(input, args string) tea.Cmd {
	if m.live == nil {
		return nil
	}
	if args == "" {
		m.notice("info", "usage: /goal [--research|--simple] <objective>, or /goal clear")
		return nil
	}
	m.commitAt(func(w int) string { return renderPrompt(input, w) })
	var cmd event.Command
	if args == "clear" {
		cmd = &event.GoalClearCmd{}
	} else {
		g := &event.GoalCmd{Objective: args}
		for _, s := range []string{"research", "simple"} {
			if rest, ok := strings.CutPrefix(args, "--"+s+" "); ok {
				g.Strategy, g.Objective = s, strings.TrimSpace(rest)
			}
		}
		cmd = g
	}
	if err := m.live.Session().Do(cmd); err != nil {
		m.notice("error", err.Error())
	}
	return nil
}

// showHelp prints /help; typed right at the start, before the custom
// commands are read, it is shown once they are, so the list is whole.
func (m *model) showHelp() {
	if m.live != nil && !m.commands.loaded {
		m.commands.helpWaits = true
		return
	}
	m.commit(m.helpText())
}

func (m *model) helpText() string {
	var b strings.Builder
	b.WriteString(headingStyle.Render("Commands") + "\n")
	for _, c := range command.Builtins {
		fmt.Fprintf(&b, "  /%-10s %s\n", strings.TrimSpace(c.Name+" "+c.Args), dimStyle.Render(c.Description))
	}
	if len(m.commands.custom) > 0 {
		b.WriteString(headingStyle.Render("Custom commands") + "\n")
		for _, c := range m.commands.custom {
			fmt.Fprintf(&b, "  /%s %s %s\n", c.Name, c.ArgumentHint, dimStyle.Render(c.Description+" ("+c.Source+")"))
		}
	}
	if len(m.commands.prompts) > 0 {
		b.WriteString(headingStyle.Render("MCP prompts") + "\n")
		for _, p := range m.commands.prompts {
			fmt.Fprintf(&b, "  /%s %s\n", p.Command(), dimStyle.Render(p.Prompt.Description))
		}
	}
	if len(m.status.profiles) > 0 {
		b.WriteString(headingStyle.Render("Subagent profiles") + "  " + dimStyle.Render("/<profile> <task> runs the task with it") + "\n")
		for _, p := range m.status.profiles {
			fmt.Fprintf(&b, "  /%s\n", p)
		}
	}
	b.WriteString(headingStyle.Render("Keys") + "\n")
	for _, k := range keyHelp {
		fmt.Fprintf(&b, "  %-12s %s\n", k[0], dimStyle.Render(k[1]))
	}
	return b.String()
}

// keyHelp is the key table /help prints.
var keyHelp = [][2]string{
	{"enter", "send (or take the highlighted completion)"},
	{"shift+enter", "new line (also alt+enter, ctrl+j)"},
	{"ctrl+c", "cancel the running turn; twice on an idle prompt quits"},
	{"shift+tab", "cycle the posture ask → auto → yolo"},
	{"↑/↓", "earlier and later prompts (this workspace, every session)"},
	{"ctrl+r", "search the prompts typed here"},
	{"ctrl+o", "show or hide reasoning"},
	{"ctrl+e", "print the last command's whole output, or the last error's raw reply"},
	{"esc", "stop the running turn (or close a menu)"},
	{"ctrl+f", "focus the fleet panel (esc leaves it)"},
	{"tab, ↑/↓", "move in and take from the autocomplete menu"},
	{"y s a n", "approval: once, session, always, deny"},
}

// switchModel is /model: the list, or the conversation reopened on
// another model.
func (m *model) switchModel(args string) tea.Cmd {
	if args == "" {
		m.commit(m.modelsText())
		return nil
	}
	if m.opts.CheckModel != nil {
		// Checked before the session is closed for the switch: a
		// name that cannot open keeps the conversation where it is.
		if err := m.opts.CheckModel(args); err != nil {
			m.notice("error", "/model "+args+": "+err.Error())
			return nil
		}
	}
	req := OpenRequest{Model: args, Switch: true}
	if m.live != nil {
		// The conversation goes on with the other model.
		req.Resume = m.live.ID()
	}
	m.notice("info", "switching to "+args)
	return m.switchSession(req)
}

// enterPlanMode is /plan: the conversation reopens in plan mode, so the
// next turns research read-only and present a plan to approve before
// anything changes.
func (m *model) enterPlanMode() tea.Cmd {
	if m.status.plan {
		m.notice("info", "already in plan mode: the agent presents a plan to approve before it changes anything")
		return nil
	}
	if m.live == nil {
		m.notice("warn", "no session is open")
		return nil
	}
	m.notice("info", "plan mode: the agent researches with read-only tools and presents a plan; nothing changes until you approve it")
	return m.switchSession(OpenRequest{Model: m.req.Model, Resume: m.live.ID(), Plan: true, Switch: true})
}

// initPrompt is what /init asks of the model, in plan mode: the file it
// proposes is its plan, so nothing is written before the user approves it,
// whatever the posture.
const initPrompt = `Survey this repository with read-only tools (ls, glob, grep, read_file): its layout, languages, build, test and lint commands, and the conventions its code and docs follow. Then present, as your plan with exit_plan_mode, the complete text of a starter AGENTS.md for agents working here: what the project is, how to build and test it, the layout, the conventions to keep, and what to avoid. Keep it short and specific to this repository. Once the plan is approved, write it to AGENTS.md at the repository root with write_file.`

// initAgents is /init: the conversation reopens in plan mode and the model
// is asked to survey the repository and propose a starter AGENTS.md.
func (m *model) initAgents(input string) tea.Cmd {
	if m.live == nil {
		m.notice("warn", "no session is open")
		return nil
	}
	if _, err := os.Stat(filepath.Join(m.opts.Cwd, "AGENTS.md")); err == nil {
		m.notice("info", "AGENTS.md exists already; ask for the changes you want in it instead")
		return nil
	}
	var open tea.Cmd
	if !m.status.plan {
		open = m.enterPlanMode()
	}
	// Typed while the session reopens, the prompt goes out once it is
	// open, in plan mode.
	return tea.Batch(open, m.prompt(input, initPrompt))
}

// statusText is /status: the session, its model and settings, what it has
// used, and the project instruction files in its system prompt.
func (m *model) statusText() string {
	var b strings.Builder
	b.WriteString(headingStyle.Render("Status") + "\n")
	row := func(k, v string) { fmt.Fprintf(&b, "  %-13s %s\n", k, v) }
	id := "none open"
	if m.live != nil {
		id = m.live.ID()
	}
	row("session", id)
	row("model", m.status.model)
	row("posture", m.status.posture)
	effort := m.status.effort
	if effort == "" {
		effort = "the model's default"
	}
	row("effort", effort)
	u := m.status.total
	row("tokens", fmt.Sprintf("%d in (%d from cache), %d out", u.PromptTokens, u.CacheHitTokens, u.CompletionTokens))
	if len(m.status.instructions) == 0 {
		row("instructions", dimStyle.Render("none (AGENTS.md, CLAUDE.md or REASONIX.md in the workspace, its parents up to the repository root, or the home)"))
	}
	for i, p := range m.status.instructions {
		k := ""
		if i == 0 {
			k = "instructions"
		}
		row(k, p)
	}
	return strings.TrimRight(b.String(), "\n")
}

func (m *model) modelsText() string {
	var b strings.Builder
	b.WriteString(headingStyle.Render("Models") + "  " + dimStyle.Render("current: "+m.status.model) + "\n")
	if len(m.opts.Models) == 0 {
		b.WriteString(dimStyle.Render("  no model list configured; /model <provider/model> still works") + "\n")
	}
	for _, ref := range m.opts.Models {
		fmt.Fprintf(&b, "  %s\n", ref)
	}
	b.WriteString(dimStyle.Render("/model <name> continues this conversation on that model"))
	return b.String()
}

// noteCmd shows a note now; it is a command for the cases that end with
// one.
func (m *model) noteCmd(level, text string) tea.Cmd {
	m.notice(level, text)
	return nil
}
