package fleet

import (
	"fmt"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/actors/fleet/fleetmsg"
	"reasonix/core/journal"
)

// Agents that talk to each other. The scheduler knows every agent of the
// session it ever started, running or ended, by task id and by name: a
// message to a running one goes to its executor, which reads it at its
// next step boundary; a message to one that ended starts a follow-up, a
// one-task fleet that continues the agent's own transcript with the
// message and whose answer reaches the parent as that agent's result.

// MaxMessage caps one message's text, as a task's answer is capped in
// the parent's context.
const MaxMessage = 8 << 10

// agentRec is one agent of the session as messages see it.
type agentRec struct {
	id, name string
	// fleet is the fleet it was submitted in, key that fleet's journal
	// key ("" when not journalled); replyTo its submitter, who hears of
	// its follow-ups too.
	fleet, key string
	replyTo    *actor.PID
	spec       event.TaskSpec
	// run is the task id of its current run (its own id, or a
	// follow-up's) while one is queued or running; empty once it ended.
	run string
	// ended is how its last run ended, transcript where its conversation
	// is, node the worker it ran on ("" for this process).
	ended      string
	transcript string
	node       string
	followups  int
	// inbox holds messages that came before its run started; they are
	// handed over as it starts.
	inbox []*team.Deliver
	// pid is its last local subagent's PID id; while that one is still
	// stopping (its transcript still open) a follow-up waits in deferred.
	pid      string
	deferred *deferredRun
}

// deferredRun is a follow-up waiting for the agent's last subagent to
// stop.
type deferredRun struct {
	id string
	d  *team.Deliver
}

// register records the agents of a submitted fleet. A follow-up's run is
// its agent's, not a new agent.
func (f *fleetActor) register(fleetID, key string, spec event.TaskSpec, replyTo *actor.PID) {
	if f.agents == nil {
		f.agents, f.names, f.runOf = map[string]*agentRec{}, map[string]string{}, map[string]string{}
	}
	if spec.Of != "" {
		if a := f.agents[spec.Of]; a != nil {
			a.run = spec.ID
			f.runOf[spec.ID] = a.id
		}
		return
	}
	a := &agentRec{id: spec.ID, name: spec.Name, fleet: fleetID, key: key, replyTo: replyTo, spec: spec, run: spec.ID}
	f.agents[spec.ID] = a
	if spec.Name != "" {
		f.names[spec.Name] = spec.ID
	}
}

// agentOf is the agent a task id runs for.
func (f *fleetActor) agentOf(taskID string) *agentRec {
	if a := f.agents[taskID]; a != nil {
		return a
	}
	return f.agents[f.runOf[taskID]]
}

// lookup finds an agent by task id or name.
func (f *fleetActor) lookup(to string) *agentRec {
	if a := f.agents[to]; a != nil {
		return a
	}
	if id, ok := f.names[to]; ok {
		return f.agents[id]
	}
	return nil
}

// agentStarted notes where a run's conversation lives and hands it the
// messages that waited for its start.
func (f *fleetActor) agentStarted(c actor.Context, t *runningTask, transcript string) {
	a := f.agentOf(t.spec.ID)
	if a == nil {
		return
	}
	if transcript != "" {
		a.transcript = transcript
	}
	a.node = t.node
	if t.pid != nil {
		a.pid = t.pid.Id
	}
	for _, d := range a.inbox {
		if t.pid != nil {
			c.Request(t.pid, d) // a Request: an agent whose turn just ended answers Undelivered to the sender
		}
	}
	a.inbox = nil
}

// agentEnded records how an agent's run ended and, for a background fleet,
// tells its submitter at once. It runs before the task's task_done is
// published, so whoever reads that event and then asks the submitter
// finds the result there.
func (f *fleetActor) agentEnded(c actor.Context, fleetID string, res event.TaskResult) {
	a := f.agentOf(res.TaskID)
	if a != nil && a.run == res.TaskID {
		a.run, a.ended = "", res.Status
	}
	fl := f.fleets[fleetID]
	if fl == nil || !fl.background || fl.replyTo == nil {
		return
	}
	ended := &fleetmsg.TaskEnded{FleetID: fleetID, Agent: res.TaskID, Result: res}
	if a != nil {
		ended.Agent, ended.Name = a.id, a.name
	}
	c.Send(fl.replyTo, ended)
}

// sendMessage routes a SendMessage and answers it.
func (f *fleetActor) sendMessage(c actor.Context, m *fleetmsg.SendMessage) {
	reply := func(r *fleetmsg.MessageSent) {
		r.Ref = m.Ref
		if c.Sender() != nil {
			c.Respond(r)
		}
		f.Answer()
	}
	text := strings.TrimSpace(m.Text)
	switch {
	case text == "":
		reply(&fleetmsg.MessageSent{Error: "the message is empty"})
		return
	case len(m.Text) > MaxMessage:
		reply(&fleetmsg.MessageSent{Error: fmt.Sprintf("the message is %d bytes; at most %d", len(m.Text), MaxMessage)})
		return
	}
	if m.To == "parent" {
		f.toParent(c, m, reply)
		return
	}
	a := f.lookup(m.To)
	if a == nil {
		reply(&fleetmsg.MessageSent{Error: fmt.Sprintf("no agent %q in this session", m.To)})
		return
	}
	if m.From == a.id {
		reply(&fleetmsg.MessageSent{Agent: a.id, Error: "an agent cannot send a message to itself"})
		return
	}
	f.msgSeq++
	d := &team.Deliver{ID: fmt.Sprintf("m%d", f.msgSeq), From: m.From, FromName: f.nameOf(m.From), Text: m.Text}
	if a.run != "" {
		t := f.tasks[a.run]
		switch {
		case t == nil:
		case t.node != "":
			reply(&fleetmsg.MessageSent{Agent: a.id, Error: fmt.Sprintf("agent %s runs on worker %s, which takes no messages", a.id, t.node)})
			return
		case t.stopping:
			reply(&fleetmsg.MessageSent{Agent: a.id, Error: fmt.Sprintf("agent %s is being stopped", a.id)})
			return
		case t.pid == nil:
			a.inbox = append(a.inbox, d) // queued: read as it starts
			reply(&fleetmsg.MessageSent{Agent: a.id})
			return
		default:
			c.Request(t.pid, d) // a Request: an agent whose turn just ended answers Undelivered to the sender
			reply(&fleetmsg.MessageSent{Agent: a.id})
			return
		}
	}
	id, err := f.followUp(c, a, d)
	if err != nil {
		reply(&fleetmsg.MessageSent{Agent: a.id, Error: err.Error()})
		return
	}
	reply(&fleetmsg.MessageSent{Agent: a.id, Followup: id})
}

// toParent passes a subagent's message to the agent that delegated it.
func (f *fleetActor) toParent(c actor.Context, m *fleetmsg.SendMessage, reply func(*fleetmsg.MessageSent)) {
	a := f.agentOf(m.From)
	if a == nil || a.replyTo == nil {
		reply(&fleetmsg.MessageSent{Error: "only a subagent has a parent to write to"})
		return
	}
	f.msgSeq++
	msg := &fleetmsg.MessageToParent{ID: fmt.Sprintf("m%d", f.msgSeq), From: a.id, Name: a.name, Text: m.Text}
	if a.key != "" {
		// Journalled before it is passed on: one the parent never read
		// (the process died first) reaches it on resume.
		if err := f.write(a.key, journal.KindMessage, a.id, msg); err != nil {
			f.log.Warn("fleet journal: message to parent not journalled", "from", a.id, "err", err)
		}
	}
	c.Send(a.replyTo, msg)
	reply(&fleetmsg.MessageSent{Agent: "parent"})
}

// nameOf is the name of the agent with task id id, or "".
func (f *fleetActor) nameOf(id string) string {
	if a := f.agentOf(id); a != nil {
		return a.name
	}
	return ""
}

// undelivered takes back a message whose agent's turn had ended when it
// came: the agent runs a follow-up with it instead, so it is not lost.
func (f *fleetActor) undelivered(c actor.Context, m *team.Undelivered) {
	a := f.agentOf(m.Task)
	if a == nil {
		return
	}
	d := m.Message
	if d.ID != "" {
		// A run gives a message back once; a second copy (a repair that
		// returned what the handler had returned already) is dropped. A
		// later run of the agent may give it back again.
		key := d.ID + "@" + m.Task
		if f.returned[key] {
			return
		}
		if f.returned == nil {
			f.returned = map[string]bool{}
		}
		f.returned[key] = true
	}
	if a.run != "" {
		if t := f.tasks[a.run]; t != nil && t.pid == nil {
			a.inbox = append(a.inbox, d)
			return
		}
		if a.run != m.Task {
			// A later run of the agent is under way: it reads it there.
			if t := f.tasks[a.run]; t != nil && t.pid != nil {
				c.Request(t.pid, d) // a Request: an agent whose turn just ended answers Undelivered to the sender
				return
			}
		}
		// Its own run is ending: the follow-up waits for that end.
		a.inbox = append(a.inbox, d)
		return
	}
	if _, err := f.followUp(c, a, d); err != nil {
		f.lost(a, d, err)
	}
}

// lost reports a message that cannot reach agent a, quoting it, so that
// whoever reads the events can tell which one and why.
func (f *fleetActor) lost(a *agentRec, d *team.Deliver, err error) {
	text := d.UserText()
	if len(text) > 240 {
		text = text[:240] + "…"
	}
	f.publish(&event.Notice{Level: "warn", Message: fmt.Sprintf("message to %s lost (%v): %q", a.id, err, text)}, a.id)
}

// followUp starts one more turn of an agent that ended, with d as its
// prompt, continuing its own conversation. Its answer reaches the parent
// as the agent's result.
func (f *fleetActor) followUp(c actor.Context, a *agentRec, d *team.Deliver) (string, error) {
	switch {
	case a.ended == event.TaskCancelled:
		return "", fmt.Errorf("agent %s was cancelled", a.id)
	case a.node != "":
		return "", fmt.Errorf("agent %s ran on worker %s; only agents that ran here take follow-ups", a.id, a.node)
	case a.transcript == "":
		return "", fmt.Errorf("agent %s has no conversation to continue (it never started)", a.id)
	case f.stoppingAll:
		return "", fmt.Errorf("the scheduler is stopping")
	}
	if r := a.deferred; r != nil {
		// One follow-up at a time: this message joins the one waiting.
		r.d = &team.Deliver{From: r.d.From, FromName: r.d.FromName, Raw: true, Text: r.d.UserText() + "\n\n" + d.UserText()}
		return r.id, nil
	}
	a.followups++
	id := fmt.Sprintf("%s+%d", a.id, a.followups)
	if a.replyTo != nil {
		c.Send(a.replyTo, &fleetmsg.FollowupStarted{Agent: a.id, Run: id})
	}
	if _, busy := f.stopping[a.pid]; busy && a.pid != "" {
		a.deferred = &deferredRun{id: id, d: d}
		return id, nil
	}
	f.startFollowUp(c, a, id, d)
	return id, nil
}

// startFollowUp submits the follow-up id of agent a with d as its prompt.
func (f *fleetActor) startFollowUp(c actor.Context, a *agentRec, id string, d *team.Deliver) {
	spec := a.spec
	spec.ID, spec.Of, spec.Continue, spec.Prompt = id, a.id, a.transcript, d.UserText()
	spec.Budget, spec.FleetBudget = event.Budget{}, event.Budget{}
	sub := &fleetmsg.SubmitFleet{FleetID: id, Tasks: []event.TaskSpec{spec}, Background: true}
	// The follow-up's submitter is the agent's: it hears of the end.
	f.submitFrom(c, sub, a.replyTo)
}

// agentStopped starts the follow-up that waited for an agent's subagent
// to stop.
func (f *fleetActor) agentStopped(c actor.Context, pidID string) {
	for _, a := range f.agents {
		if a.pid != pidID {
			continue
		}
		a.pid = ""
		if r := a.deferred; r != nil {
			a.deferred = nil
			f.startFollowUp(c, a, r.id, r.d)
		}
		return
	}
}

// pendingFollowUps starts the follow-up of an agent whose run ended with
// messages still waiting for it.
func (f *fleetActor) pendingFollowUps(c actor.Context, taskID string) {
	a := f.agentOf(taskID)
	if a == nil || a.run != "" || len(a.inbox) == 0 {
		return
	}
	inbox := a.inbox
	d := inbox[0]
	for _, more := range inbox[1:] {
		d = &team.Deliver{From: d.From, FromName: d.FromName, Text: d.UserText() + "\n\n" + more.UserText(), Raw: true}
	}
	a.inbox = nil
	if _, err := f.followUp(c, a, d); err != nil {
		for _, m := range inbox {
			f.lost(a, m, err)
		}
	}
}
