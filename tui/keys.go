package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"reasonix/actors/event"
	"reasonix/core/command"
	"reasonix/core/prompt"
)

// postures is the order shift+tab cycles through.
var postures = []string{"ask", "auto", "yolo"}

// key handles one key press: Ctrl-C first, then whatever overlay owns the
// keyboard, then the chat's own keys, then the composer.
func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if s == "ctrl+c" && (len(m.approvals) > 0 || len(m.forms) == 0) {
		return m.interrupt()
	}
	m.quitArmed = false
	if md := m.activeModal(); md != nil {
		cmd, done := md.key(m, k)
		if done && md == m.modal {
			m.modal = nil
		}
		return cmd
	}
	if m.fleet.Focused() {
		if s == "ctrl+f" {
			m.fleet.Blur()
			return nil
		}
		handled, cancel, message := m.fleet.Key(k)
		if message != "" {
			m.composer.SetValue("@" + message + " ")
		}
		if cancel != "" && m.live != nil {
			if err := m.live.Session().Do(&event.CancelTaskCmd{ID: cancel}); err != nil {
				m.notice("error", err.Error())
			} else {
				m.notice("info", "cancelling task "+cancel)
			}
		}
		if handled || (s != "shift+tab" && s != "ctrl+o") {
			// The focused panel owns the keys; only the chat's own
			// shortcuts reach past it.
			return nil
		}
	}
	switch s {
	case "shift+tab":
		return m.setPosture(next(postures, m.status.posture))
	case "ctrl+o":
		m.chat.showReasoning = !m.chat.showReasoning
		return nil
	case "ctrl+r":
		m.modal = &searchModal{}
		return nil
	case "ctrl+e":
		if m.lastOutput == "" {
			m.notice("info", "no command output or error reply yet")
			return nil
		}
		m.commit(dimStyle.Render(m.lastOutputOf) + "\n" + strings.TrimRight(m.lastOutput, "\n"))
		return nil
	case "ctrl+f":
		if m.fleet.Len() > 0 {
			m.fleet.Focus()
		}
		return nil
	}
	if m.complete.open && m.menu.Len() > 0 {
		switch s {
		case "up", "ctrl+p":
			m.menu.Move(-1)
			return nil
		case "down", "ctrl+n":
			m.menu.Move(1)
			return nil
		case "tab", "enter":
			if cmd, ok := m.accept(); ok {
				return cmd
			}
		case "esc":
			m.complete.dismiss(m.composer.Value())
			return nil
		}
	}
	switch s {
	case "enter":
		return m.submit()
	case "up", "down":
		if m.recall(s == "up") {
			return nil
		}
	case "esc":
		// Esc stops a running turn, as Ctrl-C does.
		if m.status.running && m.live != nil {
			return m.interrupt()
		}
	}
	before := m.composer.Value()
	var cmd tea.Cmd
	m.composer, cmd = m.composer.Update(k)
	if m.composer.Value() != before {
		cmd = tea.Batch(cmd, m.refreshCompletion())
	}
	return cmd
}

// interrupt is Ctrl-C: it cancels a running turn; on an idle prompt the
// first one warns and the second quits.
func (m *model) interrupt() tea.Cmd {
	if m.status.running && m.live != nil {
		if err := m.live.Session().Do(&event.CancelCmd{}); err != nil {
			m.notice("error", err.Error())
		}
		m.quitArmed = false
		return nil
	}
	if m.modal != nil {
		m.modal = nil
		return nil
	}
	if m.composer.Value() != "" {
		m.composer.Reset()
		m.complete.close()
		return nil
	}
	if m.quitArmed {
		return m.quitNow()
	}
	m.quitArmed = true
	return nil
}

func (m *model) quitNow() tea.Cmd {
	m.chat.flushAll(m)
	return tea.Quit
}

func (m *model) setPosture(p string) tea.Cmd {
	if m.live == nil {
		return nil
	}
	if err := m.live.Session().Do(&event.SetPostureCmd{Posture: p}); err != nil {
		m.notice("error", err.Error())
	}
	return nil
}

func next(list []string, cur string) string {
	for i, s := range list {
		if s == cur {
			return list[(i+1)%len(list)]
		}
	}
	return list[0]
}

// submit sends what the composer holds: a slash command is dispatched
// here, anything else becomes a prompt once its @ references are read.
func (m *model) submit() tea.Cmd {
	input := strings.TrimSpace(m.composer.Value())
	if input == "" {
		return nil
	}
	m.composer.Reset()
	m.complete.close()
	m.layout()
	save := m.remember(input)
	if strings.HasPrefix(input, "/") {
		return tea.Batch(save, m.slash(input))
	}
	if to, msg, ok := m.fleet.Addressed(input); ok && m.live != nil {
		m.commitAt(func(w int) string { return renderPrompt(input, w) })
		sess := m.live.Session()
		return tea.Batch(save, func() tea.Msg { // it waits for the scheduler's word: off the loop
			if err := sess.Do(&event.SendMessageCmd{To: to, Text: msg}); err != nil {
				return noteMsg{"error", err.Error()}
			}
			return noteMsg{"info", "message sent to " + to}
		})
	}
	return tea.Batch(save, m.prompt(input, input))
}

// noteMsg is a note for the scrollback from work done off the loop.
type noteMsg struct{ level, text string }

// prompt shows shown as the user's message and sends text as a turn once
// its @ references are resolved, off the update loop.
func (m *model) prompt(shown, text string) tea.Cmd {
	if m.live == nil {
		if m.opening {
			// Typed while the session opens: it goes out once it is open.
			m.early = append(m.early, [2]string{shown, text})
			return nil
		}
		m.notice("warn", "no session is open: the prompt is back in the input box")
		m.restore(shown)
		return nil
	}
	m.commitAt(func(w int) string { return renderPrompt(shown, w) })
	_, custom := m.customCommand(text)
	m.outgoing = append(m.outgoing, outgoing{text: text, shown: shown, ready: !custom && !strings.Contains(text, "@")})
	if m.outgoing[len(m.outgoing)-1].ready {
		m.drain()
		return nil
	}
	m.nextOut++
	id, gen, root, sh, cmds := m.nextOut, m.gen, m.opts.Cwd, m.sh, m.commands.custom
	m.outgoing[len(m.outgoing)-1].id = id
	return func() tea.Msg {
		ctx, end, ok := sh.begin(expandTimeout)
		if !ok {
			return nil
		}
		defer end()
		text, notices := prompt.Expand(ctx, root, cmds, text)
		return promptReadyMsg{gen: gen, id: id, text: text, notices: notices}
	}
}

// customCommand reports whether text runs one of the chat's custom
// commands.
func (m *model) customCommand(text string) (command.Command, bool) {
	name, _, ok := command.Split(text)
	if !ok {
		return command.Command{}, false
	}
	return command.Find(m.commands.custom, name)
}

// outgoing is a prompt on its way to the session: prompts go out in the
// order they were sent, so one waiting for its @ references holds back
// those typed after it.
type outgoing struct {
	id          int
	text, shown string
	ready       bool
}

// expanded fills in a prompt whose references are read and sends what is
// ready.
func (m *model) expanded(msg promptReadyMsg) {
	for _, n := range msg.notices {
		m.notice("note", n)
	}
	for i := range m.outgoing {
		if m.outgoing[i].id == msg.id {
			m.outgoing[i].text, m.outgoing[i].ready = msg.text, true
		}
	}
	m.drain()
}

// drain sends the ready prompts at the head of the queue.
func (m *model) drain() {
	for len(m.outgoing) > 0 && m.outgoing[0].ready {
		m.send(m.outgoing[0].text)
		// A prompt the session turned away never starts a turn: only
		// the last few are kept for started to match.
		m.sent = append(m.sent[max(len(m.sent)-15, 0):], [2]string{m.outgoing[0].text, m.outgoing[0].shown})
		m.outgoing = m.outgoing[1:]
	}
}

// started notes which typed prompt the turn that began runs, so a failure
// can give it back.
func (m *model) started(prompt string) {
	m.turnShown = ""
	for i, p := range m.sent {
		if p[0] == prompt {
			m.turnShown = p[1]
			m.sent = m.sent[i+1:]
			return
		}
	}
}

// restore puts text back in an empty composer.
func (m *model) restore(text string) {
	if text == "" || m.composer.Value() != "" {
		return
	}
	m.composer.SetValue(text)
	m.composer.MoveToEnd()
	m.layout()
}

// switchSession closes the current session (saving its transcript) and
// opens the one req names.
func (m *model) switchSession(req OpenRequest) tea.Cmd {
	if req.PermissionMode == "" {
		req.PermissionMode = m.status.posture
	}
	m.chat.flushAll(m)
	return m.open(req, m.live)
}

// send starts (or queues) a turn of text.
func (m *model) send(text string) {
	if m.live == nil {
		return
	}
	if err := m.live.Session().Do(&event.PromptCmd{Text: text, Queue: true}); err != nil {
		m.notice("error", err.Error())
	}
}
