package tui

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"reasonix/actors"
	"reasonix/actors/event"
	"reasonix/core/provider"
	"reasonix/core/session"
	"reasonix/tui/panel"
)

// Timeouts of the work the model hands to commands. None of it runs on
// the update loop; these only bound how long a command may hold a
// goroutine.
const (
	openTimeout   = 2 * time.Minute
	closeTimeout  = 10 * time.Second
	queryTimeout  = 3 * time.Second
	expandTimeout = 30 * time.Second

	// eventQueue bounds the model's subscription: a frontend that falls
	// this far behind rebuilds from a snapshot instead of holding memory.
	eventQueue = 4096
	// eventBatch is the most events one message carries, so a burst of
	// deltas costs one update and one frame rather than one per token.
	eventBatch = 256
)

// Messages the model's commands answer with. gen names the session they
// belong to: an answer for a session that has since been replaced is
// dropped.
type (
	openedMsg struct {
		gen      int
		live     *actors.Live
		warnings []string
		err      error
	}
	eventsMsg struct {
		gen    int
		events []event.Event
		err    error
	}
	snapshotMsg struct {
		gen  int
		snap event.Snapshot
		lost int64
	}
	mcpMsg struct {
		gen int
		st  *event.MCPStatus
		err error
	}
	// promptReadyMsg is a prompt whose @ references are resolved.
	promptReadyMsg struct {
		gen     int
		id      int
		text    string
		notices []string
	}
	printedMsg struct{}
)

// shared tracks the session work the model's commands do (opening and
// closing sessions, reading @ references), so Run can end it: shutdown
// cancels what is in flight and waits for it, and refuses new work.
type shared struct {
	mu      sync.Mutex
	closed  bool
	next    int
	cancels map[int]context.CancelFunc
	work    sync.WaitGroup
}

// begin registers one piece of work bounded by timeout. ok is false once
// Run is ending: the work must not start.
func (s *shared) begin(timeout time.Duration) (ctx context.Context, end func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	if s.cancels == nil {
		s.cancels = map[int]context.CancelFunc{}
	}
	s.next++
	id := s.next
	s.cancels[id] = cancel
	s.work.Add(1)
	return ctx, func() {
		cancel()
		s.mu.Lock()
		delete(s.cancels, id)
		s.mu.Unlock()
		s.work.Done()
	}, true
}

// ending says Run is ending: a session that finished opening now is
// closed at once.
func (s *shared) ending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// shutdown cancels the work in flight, waits for it and refuses more.
func (s *shared) shutdown() {
	s.mu.Lock()
	s.closed = true
	for _, cancel := range s.cancels {
		cancel()
	}
	s.mu.Unlock()
	s.work.Wait()
}

// model is the chat: one Bubble Tea model fed by a live session's events.
type model struct {
	opts   Options
	sh     *shared
	logger *slog.Logger
	// now is the clock of elapsed times shown while a tool runs; tests fix
	// it so frames are reproducible.
	now func() time.Time

	live *actors.Live
	// closing are the sessions left by a switch; the command switching
	// closes each, and Run closes them again (Close waits for the first)
	// so none outlives the chat.
	closing map[int]*actors.Live
	gen     int
	sub     *event.Subscription
	req     OpenRequest
	// opening says a session is being (re)opened; early holds the
	// prompts (shown, sent) submitted meanwhile.
	opening bool
	early   [][2]string
	// outgoing are the prompts not yet handed to the session, in order;
	// nextOut numbers those waiting for their @ references.
	outgoing []outgoing
	nextOut  int

	width, height int

	chat   chat
	status status

	composer textarea.Model
	menu     completionMenu
	complete completion
	fleet    fleetPanel
	goal     goalPanel

	approvals []*event.ApprovalRequested
	approval  approvalChoice
	modal     modal
	// forms are MCP elicitation requests waiting for an answer, first
	// shown first.
	forms []*formModal

	commands commandSet
	// hist is the prompt history; turnShown what the user typed for the
	// running turn, put back in the composer if the turn fails; sent the
	// prompts sent and not yet started (text as sent, as typed).
	hist      panel.History
	turnShown string
	// lastOutput is the last bash call's whole output or the last
	// error's raw reply, for ctrl+e, and lastOutputOf says which.
	lastOutput, lastOutputOf string
	// retry is the transient line of a request being retried; shownError
	// the error of the running turn already shown, so its end does not
	// say it again.
	retry, shownError string
	sent              [][2]string

	// quitArmed is set by a Ctrl-C on an idle prompt; the next one quits.
	quitArmed bool

	// outbox holds finished blocks not yet printed into the scrollback;
	// printing is set while one print is on its way, so blocks reach the
	// terminal in order.
	outbox   []string
	printing bool
	// printedWidth is the width the scrollback was last drawn at;
	// resizeGen counts width changes, so only the last one's settling
	// redraws; redrawWanted defers that redraw past a print on its way.
	printedWidth int
	resizeGen    int
	redrawWanted bool
	// linewise makes the next flush print a line at a time: a resumed
	// conversation is drawn when it opens, before the first frame.
	linewise bool

	// cmdCount counts the commands Update returned, for the idle test.
	cmdCount int
}

// status is what the status line shows.
type status struct {
	model   string
	posture string
	effort  string
	total   provider.Usage
	running bool
	queued  int
	// instructions are the project instruction files in the session's
	// system prompt.
	instructions []string
	// plan says the session is in plan mode, no plan approved yet.
	plan bool
	// profiles are the subagent profiles /<profile> task runs.
	profiles []string
}

func newModel(o Options, sh *shared) *model {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m := &model{
		opts:     o,
		sh:       sh,
		logger:   logger,
		now:      time.Now,
		req:      o.Initial,
		width:    defaultWidth,
		height:   defaultHeight,
		composer: newComposer(),
		menu:     newMenu(),
	}
	m.fleet, m.goal = newFleet(m.clock), newGoal(m.clock)
	if o.PromptsFile != "" {
		items, err := session.LoadPrompts(o.PromptsFile)
		if err != nil {
			logger.Warn("prompt history", "err", err)
		}
		m.hist = panel.NewHistory(items)
	}
	m.chat.showReasoning = false
	m.status.posture = o.Initial.PermissionMode
	if m.status.posture == "" {
		m.status.posture = "ask"
	}
	m.layout()
	return m
}

// clock reads m.now late, so a test that fixes the clock after the
// panels exist still fixes theirs.
func (m *model) clock() time.Time { return m.now() }

func newComposer() textarea.Model {
	ta := textarea.New()
	ta.Prompt = "› "
	ta.Placeholder = "Ask anything · / for commands · @ for files"
	ta.ShowLineNumbers = false
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 6
	ta.CharLimit = 0
	// The terminal draws the cursor: a virtual one blinks on a timer,
	// which would redraw an idle screen twice a second.
	ta.SetVirtualCursor(false)
	st := ta.Styles()
	st.Cursor.Blink = false
	st.Focused.CursorLine = st.Focused.Text
	ta.SetStyles(st)
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("shift+enter", "alt+enter", "ctrl+j"))
	ta.Focus()
	return ta
}

// Init opens the first session.
func (m *model) Init() tea.Cmd {
	return m.open(m.req, nil)
}

// Update applies one message. It never blocks: anything that waits runs in
// a command whose answer comes back as a message.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	cmd = tea.Batch(cmd, m.flush())
	if cmd != nil {
		m.cmdCount++
	}
	return m, cmd
}

func (m *model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		if msg.Width <= 0 || msg.Height <= 0 {
			// Not a terminal (a pipe): keep the default size.
			return nil
		}
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 8)
		m.layout()
		return m.resized()
	case resizedMsg:
		return m.settled(msg)
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		if m.activeModal() != nil {
			return nil
		}
		var cmd tea.Cmd
		m.composer, cmd = m.composer.Update(msg)
		m.layout()
		return tea.Batch(cmd, m.refreshCompletion())
	case openedMsg:
		return m.opened(msg)
	case eventsMsg:
		if msg.gen != m.gen {
			return nil
		}
		if msg.err != nil {
			// The subscription ended: the session closed under us.
			m.logger.Debug("event stream ended", "err", msg.err)
			return nil
		}
		var cmds []tea.Cmd
		for _, ev := range msg.events {
			cmds = append(cmds, m.apply(ev))
		}
		cmds = append(cmds, m.readEvents())
		return tea.Batch(cmds...)
	case snapshotMsg:
		if msg.gen != m.gen {
			return nil
		}
		m.rebuild(msg.snap, msg.lost)
		return nil
	case mcpMsg:
		if msg.gen != m.gen {
			return nil
		}
		if msg.err != nil {
			m.logger.Debug("mcp status", "err", msg.err)
			return nil
		}
		m.commands.setMCP(msg.st)
		return m.refreshCompletion()
	case commandsMsg:
		return m.commandsLoaded(msg)
	case promptReadyMsg:
		if msg.gen != m.gen || m.live == nil {
			return nil
		}
		m.expanded(msg)
		return nil
	case completionMsg:
		m.completed(msg)
		return nil
	case mcpServersMsg:
		if msg.gen == m.gen {
			m.modal = mcpModal(msg.servers)
		}
		return nil
	case sessionsMsg:
		return m.sessionsListed(msg)
	case noteMsg:
		m.notice(msg.level, msg.text)
	case printedMsg:
		m.printing = false
		if m.redrawWanted {
			return m.redrawAll()
		}
		return nil
	}
	return nil
}

// flush prints the finished blocks into the terminal's scrollback, one
// print at a time so they keep their order.
func (m *model) flush() tea.Cmd {
	if m.printing || len(m.outbox) == 0 {
		return nil
	}
	text := strings.Join(m.outbox, "\n")
	m.outbox = nil
	m.printing = true
	if m.linewise {
		// Printed before the renderer has flushed a frame, a print of
		// several lines keeps only its first (it knows no screen height
		// yet); a line at a time stacks right either way.
		m.linewise = false
		var cmds []tea.Cmd
		for _, line := range strings.Split(text, "\n") {
			cmds = append(cmds, tea.Println(line))
		}
		return tea.Sequence(append(cmds, func() tea.Msg { return printedMsg{} })...)
	}
	return tea.Sequence(tea.Println(text), func() tea.Msg { return printedMsg{} })
}

// commit moves a finished block into the scrollback.
func (m *model) commit(block string) {
	m.commitAt(func(int) string { return block })
}

// commitAt moves a finished block into the scrollback, drawn by render at
// the terminal's width; a resize draws it again at the new one.
func (m *model) commitAt(render func(width int) string) {
	block := strings.TrimRight(render(m.width), "\n")
	m.chat.history = append(m.chat.history, block)
	m.chat.redraw = append(m.chat.redraw, render)
	if len(m.chat.history) > maxHistory {
		m.chat.history = m.chat.history[len(m.chat.history)-maxHistory:]
		m.chat.redraw = m.chat.redraw[len(m.chat.redraw)-maxHistory:]
		m.chat.trimmed = true
	}
	m.outbox = append(m.outbox, block)
}

// maxHistory is how many printed blocks the model remembers (for a frame
// capture); the terminal's scrollback holds the rest.
const maxHistory = 500

// notice prints a one-line message of the given level.
func (m *model) notice(level, msg string) {
	m.commitAt(func(w int) string { return renderNotice(level, msg, w) })
}

// open closes the current session, if any, and opens the one req names.
func (m *model) open(req OpenRequest, old *actors.Live) tea.Cmd {
	m.gen++
	gen := m.gen
	if m.sub != nil {
		m.sub.Close()
		m.sub = nil
	}
	m.live = nil
	m.outgoing = nil
	m.opening = true
	m.req = req
	m.approvals, m.forms = nil, nil
	m.modal = nil
	m.status.running, m.status.queued = false, 0
	m.fleet, m.goal = newFleet(m.clock), newGoal(m.clock)
	if old != nil {
		if m.closing == nil {
			m.closing = map[int]*actors.Live{}
		}
		m.closing[gen] = old
	}
	open, sh, logger := m.opts.Open, m.sh, m.logger
	return func() tea.Msg {
		ctx, end, ok := sh.begin(openTimeout)
		if !ok {
			return nil
		}
		defer end()
		if old != nil {
			if err := old.Close(closeTimeout); err != nil {
				logger.Warn("close session", "err", err)
			}
		}
		live, warnings, err := open(ctx, req)
		if live != nil && sh.ending() {
			if cerr := live.Close(closeTimeout); cerr != nil {
				logger.Warn("close session", "err", cerr)
			}
			return nil
		}
		return openedMsg{gen: gen, live: live, warnings: warnings, err: err}
	}
}

func (m *model) opened(msg openedMsg) tea.Cmd {
	// The command that opened it closed the session it replaced first.
	delete(m.closing, msg.gen)
	if msg.gen != m.gen {
		// Opened for a switch the user has since replaced: close it, and
		// keep it for Run in case the chat ends first.
		if msg.live == nil {
			return nil
		}
		live, sh, logger := msg.live, m.sh, m.logger
		if m.closing == nil {
			m.closing = map[int]*actors.Live{}
		}
		m.closing[msg.gen] = live
		return func() tea.Msg {
			_, end, ok := sh.begin(closeTimeout)
			if !ok {
				return nil
			}
			defer end()
			if err := live.Close(closeTimeout); err != nil {
				logger.Warn("close session", "err", err)
			}
			return nil
		}
	}
	m.opening = false
	for _, w := range msg.warnings {
		m.notice("warn", w)
	}
	if msg.err != nil {
		m.notice("error", "open session: "+msg.err.Error())
		if len(m.early) > 0 {
			m.notice("warn", fmt.Sprintf("%d prompt(s) typed meanwhile not sent", len(m.early)))
			m.early = nil
		}
		return nil
	}
	m.live = msg.live
	b := m.live.Built()
	m.status.model = b.Model.Provider.Name + "/" + b.Model.Model
	m.status.effort = b.Effort
	m.status.instructions = b.Instructions
	m.status.profiles = b.Profiles
	if p := string(b.Spec.Agent.Permissions.Posture); p != "" {
		m.status.posture = p
	}
	m.status.total = provider.Usage{}
	for _, w := range b.Warnings {
		m.notice("warn", w)
	}
	m.status.plan = b.Spec.Agent.PlanMode
	if (m.req.Continue || m.req.Resume != "") && !m.req.Switch {
		// Continued or resumed, not a switch (whose conversation is on
		// the screen already): show where it left off.
		m.drawEarlier(b.Spec.Agent.History)
	}
	// The bus is the session's own and fresh: replaying it from the start
	// shows everything the session has said, session_started included.
	m.sub = m.live.Bus().SubscribeFrom(0, eventQueue)
	cmds := []tea.Cmd{m.readEvents(), m.queryMCP(), m.loadCommands()}
	for _, p := range m.early {
		cmds = append(cmds, m.prompt(p[0], p[1]))
	}
	m.early = nil
	return tea.Batch(cmds...)
}

// readEvents waits for the next events of the current session: one, then
// whatever else is already queued, up to eventBatch.
func (m *model) readEvents() tea.Cmd {
	sub, gen := m.sub, m.gen
	if sub == nil {
		return nil
	}
	return func() tea.Msg {
		ev, err := sub.Next(context.Background())
		if err != nil {
			return eventsMsg{gen: gen, err: err}
		}
		batch := []event.Event{ev}
		done, cancel := context.WithCancel(context.Background())
		cancel()
		for len(batch) < eventBatch {
			ev, err := sub.Next(done)
			if err != nil {
				break
			}
			batch = append(batch, ev)
			if _, ok := ev.(*event.Lagged); ok {
				break
			}
		}
		return eventsMsg{gen: gen, events: batch}
	}
}

// queryMCP asks the session for its MCP servers' prompts and resources,
// for /help and autocomplete.
func (m *model) queryMCP() tea.Cmd {
	live, gen := m.live, m.gen
	if live == nil {
		return nil
	}
	return func() tea.Msg {
		st, err := live.Session().MCPStatus(queryTimeout)
		return mcpMsg{gen: gen, st: st, err: err}
	}
}

// takeSnapshot rebuilds the model's view of the session after it lost
// events.
func (m *model) takeSnapshot(lost int64) tea.Cmd {
	live, gen := m.live, m.gen
	if live == nil {
		return nil
	}
	return func() tea.Msg {
		return snapshotMsg{gen: gen, snap: live.Snapshot(), lost: lost}
	}
}

// rebuild replaces what the lost events would have changed with what the
// snapshot says.
func (m *model) rebuild(s event.Snapshot, lost int64) {
	m.status.running = s.Running
	m.status.queued = len(s.Queued)
	if s.Posture != "" {
		m.status.posture = s.Posture
	}
	m.approvals = nil
	for _, a := range s.Approvals {
		m.approvals = append(m.approvals, &event.ApprovalRequested{
			Meta: event.Meta{Seq: a.Seq, Session: s.Session, Task: a.Task}, RequestID: a.RequestID,
			CallID: a.CallID, Tool: a.Tool, Args: a.Args, Reason: a.Reason, Suggestions: a.Suggestions})
	}
	m.approval = approvalChoice{}
	m.fleet = newFleet(m.clock)
	for _, t := range s.Tasks {
		meta := event.Meta{Session: s.Session, Task: t.ID}
		m.fleet.Apply(&event.TaskQueued{Meta: meta, Fleet: t.Fleet, Prompt: t.Prompt, Profile: t.Profile, Writer: t.Writer})
		if t.State != "queued" {
			m.fleet.Apply(&event.TaskStarted{Meta: meta, Fleet: t.Fleet, Model: t.Model})
		}
		if t.State == "done" {
			m.fleet.Apply(&event.TaskDone{Meta: meta, Fleet: t.Fleet, Status: t.Status, Error: t.Error})
		}
	}
	m.chat.flushAll(m)
	m.notice("warn", fmt.Sprintf("the screen fell %d events behind; rebuilt from the session's state", lost))
}

// layout sizes the composer to the terminal.
func (m *model) layout() {
	m.composer.SetWidth(max(m.width-1, 10))
}
