package team

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"reasonix/actors/event"
	"reasonix/actors/fleet/fleetmsg"
)

// Book is an agent's account of its background work: the background
// tasks it started (and the follow-ups its messages started), and what
// has come back for its conversation and not been given to it yet. It
// is bookkeeping alone, so that its promise is tested on its own: every
// result and message that comes in is handed out exactly once, by Take
// or Claim, or stays counted as undelivered; a run's second result is
// dropped.
type Book struct {
	agents map[string]*bgAgent
	names  map[string]string
	// seen holds the runs (task ids) whose result came in, and the
	// messages ("message <id>") taken.
	seen  map[string]bool
	inbox []Item
	seq   int
	// fleets are the background fleets (and follow-ups) not ended.
	fleets map[string]bool
}

// bgAgent is one background agent: runs counts its runs that have not
// ended (its own, then one per follow-up).
type bgAgent struct {
	id, name string
	runs     int
	// last is how its last run ended; empty while its first runs.
	last string
	// followups are the task ids of the runs messages started, in order.
	followups []string
}

// Item is one thing for the conversation: a task's result or a message.
// Text is the user message it becomes; ID a message's scheduler id.
type Item struct {
	Seq     int
	ID      string
	Agent   string
	Name    string
	Status  string // a task status, or StatusMessage
	Text    string
	Message bool
}

// StatusMessage is the status of a message item.
const StatusMessage = "message"

// NewBook returns an empty book.
func NewBook() *Book {
	return &Book{agents: map[string]*bgAgent{}, names: map[string]string{}, seen: map[string]bool{}, fleets: map[string]bool{}}
}

// Add records the tasks of background fleet fleet, running.
func (b *Book) Add(fleet string, specs []event.TaskSpec) {
	b.fleets[fleet] = true
	for _, s := range specs {
		b.agents[s.ID] = &bgAgent{id: s.ID, name: s.Name, runs: 1}
		if s.Name != "" {
			b.names[s.Name] = s.ID
		}
	}
}

// IsFleet reports whether id is a background fleet (or follow-up) still
// running.
func (b *Book) IsFleet(id string) bool { return b.fleets[id] }

// Fleets lists the background fleets still running, sorted.
func (b *Book) Fleets() []string {
	out := make([]string, 0, len(b.fleets))
	for id := range b.fleets {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// FleetEnded forgets a background fleet that has replied.
func (b *Book) FleetEnded(id string) { delete(b.fleets, id) }

// idLike reports whether s is shaped like a task or fleet id (f3, f3.2,
// f3.2+1), which a name may not be.
func idLike(s string) bool {
	if len(s) < 2 || s[0] != 'f' {
		return false
	}
	digit := false
	for _, r := range s[1:] {
		switch {
		case r >= '0' && r <= '9':
			digit = true
		case (r == '.' || r == '+') && digit:
			digit = false
		default:
			return false
		}
	}
	return digit
}

// CheckNames refuses task names that are reserved, used before in the
// session, or used twice in specs.
func (b *Book) CheckNames(specs []event.TaskSpec) error {
	seen := map[string]bool{}
	for _, s := range specs {
		if s.Name == "" {
			continue
		}
		if s.Name == "parent" || s.Name == "user" || idLike(s.Name) {
			return fmt.Errorf("task name %q is reserved (parent, user and task ids such as f1.2 address agents already)", s.Name)
		}
		if _, used := b.names[s.Name]; used || seen[s.Name] {
			return fmt.Errorf("task name %q is already used in this session", s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// Resolve is the task id to names (an id or a name), or "".
func (b *Book) Resolve(to string) string {
	if _, ok := b.agents[to]; ok {
		return to
	}
	return b.names[to]
}

// Followup counts run, one more run of agent id that a message started.
// An agent the book does not hold (a task that did not run in the
// background) is added, so its answer is expected. It is idempotent: the
// scheduler's word and the sender's reply may both tell of one run.
func (b *Book) Followup(id, run string) {
	a := b.agents[id]
	if a == nil {
		a = &bgAgent{id: id}
		b.agents[id] = a
	}
	if slices.Contains(a.followups, run) || b.seen[run] {
		return
	}
	a.runs++
	a.followups = append(a.followups, run)
	b.fleets[run] = true // a follow-up is a fleet of its own
}

// Followups lists the follow-up runs of agent id.
func (b *Book) Followups(id string) []string {
	if a := b.agents[id]; a != nil {
		return slices.Clone(a.followups)
	}
	return nil
}

// Ended takes a run's result, false when that run's result came before.
// agent is the agent the run was for; res.TaskID the run.
func (b *Book) Ended(agent, name string, res event.TaskResult) bool {
	run := res.TaskID
	if run == "" {
		run = agent
	}
	if b.seen[run] {
		return false
	}
	b.seen[run] = true
	a := b.agents[agent]
	if a == nil {
		a = &bgAgent{id: agent, name: name, runs: 1}
		b.agents[agent] = a
	}
	if a.runs > 0 {
		a.runs--
	}
	if slices.Contains(a.followups, run) {
		delete(b.fleets, run)
	}
	a.last = res.Status
	if name == "" {
		name = a.name
	}
	b.seq++
	b.inbox = append(b.inbox, Item{Seq: b.seq, Agent: agent, Name: name, Status: res.Status, Text: ResultText(agent, name, res)})
	return true
}

// Message takes a message for the conversation, false when the message
// with that id came before (an empty id is never a repeat).
func (b *Book) Message(id, from, name, text string) bool {
	if id != "" {
		if b.seen["message "+id] {
			return false
		}
		b.seen["message "+id] = true
	}
	b.seq++
	b.inbox = append(b.inbox, Item{Seq: b.seq, ID: id, Agent: from, Name: name, Status: StatusMessage, Text: text, Message: true})
	return true
}

// Keep takes what a background fleet's end or a crashed handler brings:
// a FleetResult (each run's result, the fleet then ended), a TaskEnded,
// a MessageToParent or a Deliver. Each is taken at most once, however
// often it comes, so a repair can hand in what the crashed handler may
// have taken already. It reports whether anything new was taken.
func (b *Book) Keep(msg any) bool {
	switch m := msg.(type) {
	case *fleetmsg.FleetResult:
		if !b.fleets[m.FleetID] {
			return false
		}
		delete(b.fleets, m.FleetID)
		took := false
		for _, r := range m.Results {
			took = b.Ended(r.TaskID, "", r) || took
		}
		return took
	case *fleetmsg.TaskEnded:
		return b.Ended(m.Agent, m.Name, m.Result)
	case *fleetmsg.MessageToParent:
		return b.Message(m.ID, m.From, m.Name, MessageText(m.From, m.Name, m.Text))
	case *Deliver:
		return b.Message(m.ID, m.From, m.FromName, m.UserText())
	}
	return false
}

// Unread hands out the messages waiting, as Delivers to give back to the
// scheduler, and drops the rest.
func (b *Book) Unread() []*Deliver {
	var out []*Deliver
	for _, it := range b.Take() {
		if it.Message {
			out = append(out, &Deliver{ID: it.ID, From: it.Agent, FromName: it.Name, Text: it.Text, Raw: true})
		}
	}
	return out
}

// Take hands out everything waiting, in arrival order.
func (b *Book) Take() []Item {
	out := b.inbox
	b.inbox = nil
	return out
}

// Claim hands out the waiting results of the agents in ids, leaving the
// rest (and every message) waiting.
func (b *Book) Claim(ids []string) []Item {
	var out, keep []Item
	for _, it := range b.inbox {
		if !it.Message && slices.Contains(ids, it.Agent) {
			out = append(out, it)
		} else {
			keep = append(keep, it)
		}
	}
	b.inbox = keep
	return out
}

// Running lists the agents with a run not ended, sorted.
func (b *Book) Running() []string {
	var out []string
	for id, a := range b.agents {
		if a.runs > 0 {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// Outstanding counts the runs not ended and the items not handed out.
func (b *Book) Outstanding() (runs, items int) {
	for _, a := range b.agents {
		runs += a.runs
	}
	return runs, len(b.inbox)
}

// WaitIDs is what a task_wait without ids waits for: every agent
// running, and every one whose result waits to be handed out.
func (b *Book) WaitIDs() []string {
	ids := b.Running()
	for _, it := range b.inbox {
		if !it.Message && !slices.Contains(ids, it.Agent) {
			ids = append(ids, it.Agent)
		}
	}
	return ids
}

// Ready reports whether a wait for ids can end: all of them have ended
// (or, with first, one of them has a result waiting).
func (b *Book) Ready(ids []string, first bool) bool {
	running := b.Running()
	waiting, ready := 0, 0
	for _, id := range ids {
		if slices.Contains(running, id) {
			waiting++
		}
		if slices.ContainsFunc(b.inbox, func(it Item) bool { return !it.Message && it.Agent == id }) {
			ready++
		}
	}
	if first {
		return ready > 0 || waiting == 0
	}
	return waiting == 0
}

// WaitFor is what a task_wait with args waits for: the agents it names
// (every one running or with a result waiting when it names none) and
// for how long at most.
func (b *Book) WaitFor(args Args) ([]string, time.Duration, error) {
	ids := b.WaitIDs()
	if len(args.IDs) > 0 {
		ids = nil
		for _, id := range args.IDs {
			r := b.Resolve(id)
			if r == "" {
				return nil, 0, fmt.Errorf("no background task %q", id)
			}
			ids = append(ids, r)
		}
	}
	timeout := args.Timeout
	if timeout <= 0 {
		timeout = DefaultWaitSeconds
	}
	return ids, time.Duration(min(timeout, MaxWaitSeconds)) * time.Second, nil
}

// SentText is the send_message result for the scheduler's answer m.
func SentText(m *fleetmsg.MessageSent) (string, bool) {
	switch {
	case m.Error != "":
		return "Error: " + m.Error, true
	case m.Followup != "":
		return fmt.Sprintf("Sent. %s had finished, so it continues its conversation with your message (run %s); its answer comes back as a background result.", m.Agent, m.Followup), false
	case m.Agent == "parent":
		return "Sent to your parent.", false
	}
	return fmt.Sprintf("Sent. %s reads it at its next step.", m.Agent), false
}

// WaitResult ends a wait for ids: it claims their results and renders
// them, then what still runs, after note.
func (b *Book) WaitResult(ids []string, note string) string {
	var out strings.Builder
	if note != "" {
		out.WriteString(note + "\n")
	}
	items := b.Claim(ids)
	for _, it := range items {
		out.WriteString(it.Text + "\n\n")
	}
	var still []string
	for _, id := range b.Running() {
		if slices.Contains(ids, id) {
			still = append(still, id)
		}
	}
	switch {
	case len(items) == 0 && len(still) == 0:
		out.WriteString("Nothing to wait for: those tasks have ended and their results were delivered already.")
	case len(still) > 0:
		fmt.Fprintf(&out, "Still running: %s.", strings.Join(still, ", "))
	}
	return strings.TrimRight(out.String(), "\n")
}

// StatusText renders task_status for ids (every agent when empty), with
// each running one's live state from st; why, when set, says why there
// is no live state.
func (b *Book) StatusText(st *fleetmsg.FleetStatus, ids []string, why string) string {
	live := map[string]fleetmsg.TaskState{}
	for _, ts := range st.Tasks {
		live[ts.TaskID] = ts
	}
	want := map[string]bool{}
	for _, id := range ids {
		if r := b.Resolve(id); r != "" {
			want[r] = true
		}
	}
	var list []string
	for id := range b.agents {
		if len(ids) == 0 || want[id] {
			list = append(list, id)
		}
	}
	sort.Strings(list)
	var out strings.Builder
	if why != "" {
		fmt.Fprintf(&out, "(live state unavailable: %s)\n", why)
	}
	for _, id := range list {
		a := b.agents[id]
		run := id
		if n := len(a.followups); n > 0 {
			run = a.followups[n-1]
		}
		fmt.Fprintf(&out, "%s: %s\n", Label(id, a.name), stateLine(a, live, run))
		if ts, ok := live[run]; ok && a.runs > 0 {
			for _, l := range ts.Lines {
				fmt.Fprintf(&out, "  | %s\n", l)
			}
		}
	}
	for _, id := range ids {
		if b.Resolve(id) == "" {
			fmt.Fprintf(&out, "%s: no such background task\n", id)
		}
	}
	if out.Len() == 0 {
		return "No background tasks."
	}
	return strings.TrimRight(out.String(), "\n")
}

// stateLine is one agent's state in task_status.
func stateLine(a *bgAgent, live map[string]fleetmsg.TaskState, run string) string {
	if a.runs == 0 {
		return "ended " + a.last
	}
	ts, ok := live[run]
	if !ok {
		return "running"
	}
	line := ts.State
	if ts.Tool != "" {
		line += ", last tool " + ts.Tool
	}
	if ts.Tokens > 0 {
		line += fmt.Sprintf(", %d tokens", ts.Tokens)
	}
	return line
}

// Label is how an agent is named in the conversation: its id, and its
// name in brackets when it has one.
func Label(id, name string) string {
	if name == "" {
		return id
	}
	return id + " (" + name + ")"
}

// ResultText is the user message that gives a background result to the
// conversation.
func ResultText(agent, name string, res event.TaskResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[Background task %s %s", Label(agent, name), res.Status)
	switch {
	case res.Status == event.TaskOverBudget:
		fmt.Fprintf(&b, ": stopped at its %s budget; the answer is partial", res.OverBudget)
	case res.Status != event.TaskOK && res.Error != "":
		fmt.Fprintf(&b, ": %s", res.Error)
	}
	b.WriteString("]")
	if res.Text != "" {
		b.WriteString("\n")
		b.WriteString(CapText(res.Text))
	}
	return b.String()
}

// MessageText is the user message a message from from (named name)
// becomes: "parent" and "user" are said as such.
func MessageText(from, name, text string) string {
	who := Label(from, name)
	switch from {
	case "parent":
		who = "your parent agent"
	case "user":
		who = "the user"
	}
	return "[Message from " + who + "]\n" + text
}
