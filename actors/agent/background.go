package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/actors/fleet/fleetmsg"
	"reasonix/core/provider"
	"reasonix/core/tool"
)

// Background work (the tools are in team). A background delegation call
// is answered at once; each task's result comes back as a TaskEnded and
// waits in the executor's book until a step boundary appends it to the
// conversation, once. With no turn running the executor asks its session
// for one (team.BackgroundWake).

// messageDeadline bounds the wait for the scheduler's word on a message
// or a status.
const messageDeadline = 5 * time.Second

// bgWait is a task_wait call waiting in the turn.
type bgWait struct {
	index int
	ids   []string
	first bool
	timer *time.Timer
}

// waitExpired ends a task_wait at its timeout.
type waitExpired struct {
	callID string
}

// statusKey and messageKey name the ledger entries of a task_status or
// send_message call.
func statusKey(callID string) string  { return "status/" + callID }
func messageKey(callID string) string { return "msg/" + callID }

// delegateBackground submits a background fleet and answers the call at
// once with its ids. The session's ledger guarantees the fleet its
// FleetResult, so the executor keeps no wait of its own on it: nothing of
// the turn (a cancel, its end) touches it.
func (e *executor) delegateBackground(c actor.Context, i int, id string, specs []event.TaskSpec) {
	t := e.turn
	call := t.calls[i]
	e.bg.Add(id, specs)
	c.Request(e.spec.Scheduler, &fleetmsg.SubmitFleet{FleetID: id, Tasks: specs, Background: true})
	ids := make([]string, len(specs))
	for k, s := range specs {
		ids[k] = s.ID
	}
	out, _ := json.Marshal(struct {
		Background bool     `json:"background"`
		Fleet      string   `json:"fleet"`
		Tasks      []string `json:"tasks"`
	}{true, id, ids})
	t.pending--
	e.record(&ToolResult{CallID: call.ID, Name: call.Name, Output: string(out)}, i)
}

// onBackgroundFleet takes a background fleet's FleetResult: any result it
// holds that no TaskEnded brought (the scheduler failed them all at once)
// comes in now.
func (e *executor) onBackgroundFleet(c actor.Context, m *fleetmsg.FleetResult) {
	if e.bg.Keep(m) {
		e.backgroundChanged(c)
	}
}

// onMessage takes a message for this agent's conversation. A subagent
// with no turn running gives it back (back), so it is not lost.
func (e *executor) onMessage(c actor.Context, id, from, name, text string, back func()) {
	if e.turn == nil && e.spec.Task != "" {
		back()
		return
	}
	if e.bg.Message(id, from, name, text) {
		e.backgroundChanged(c)
	}
}

// keepLost takes into the book what a crashed handler was given, which
// would otherwise be lost with it (Book.Keep); a message for a subagent
// whose run is over goes back to its sender, as onMessage does (the
// scheduler drops a second copy from the same run). It reports whether
// the book took anything.
func (e *executor) keepLost(c actor.Context, lost any, sender *actor.PID) bool {
	if d, ok := lost.(*team.Deliver); ok && e.turn == nil && e.spec.Task != "" {
		if sender != nil {
			c.Send(sender, &team.Undelivered{Task: e.spec.Task, Message: d})
		}
		return false
	}
	return e.bg.Keep(lost)
}

// returnMessages gives the scheduler back the messages a subagent's
// turn ended without reading (it was cancelled, failed or crashed), so
// they reach the agent in a follow-up or are reported lost, never
// dropped in silence. It runs before the turn's end is reported, so the
// scheduler still sees the run they were for.
func (e *executor) returnMessages(c actor.Context) {
	if e.spec.Task != "" && e.spec.Mailer != nil {
		for _, d := range e.bg.Unread() {
			c.Send(e.spec.Mailer, &team.Undelivered{Task: e.spec.Task, Message: d})
		}
	}
}

// backgroundChanged settles the waits the news satisfies and, with no
// turn running, asks the session for one.
func (e *executor) backgroundChanged(c actor.Context) {
	if e.turn != nil {
		e.settleWaits(c)
		return
	}
	if _, items := e.bg.Outstanding(); items > 0 && !e.spec.NoWakeup && e.spec.Task == "" && e.spec.Scheduler != nil {
		c.Send(e.spec.Scheduler, &team.BackgroundWake{})
	}
}

// deliverBackground appends what came back to the conversation, one user
// message each, in arrival order. It runs at step boundaries only, so
// every request extends the one before it.
func (e *executor) deliverBackground() {
	for _, it := range e.bg.Take() {
		e.append(provider.Message{Role: provider.RoleUser, Content: it.Text})
		out := it.Text
		if len(out) > event.MaxEventOutput {
			out = out[:event.MaxEventOutput]
		}
		e.publish(&event.BackgroundResult{Agent: it.Agent, Name: it.Name, Status: it.Status, Text: out})
	}
}

// runBackgroundTool runs task_status, task_wait, task_cancel or
// send_message; the caller has counted the call in t.pending.
func (e *executor) runBackgroundTool(c actor.Context, i int) {
	t := e.turn
	call := t.calls[i]
	done := func(out string, isErr bool) {
		t.pending--
		e.record(&ToolResult{CallID: call.ID, Name: call.Name, Output: out, IsError: isErr}, i)
	}
	var args team.Args
	if err := tool.DecodeArgs(call.Name, json.RawMessage(orEmpty(call.Arguments)), &args); err != nil {
		done("Error: "+err.Error(), true)
		return
	}
	sub := e.spec.Task != ""
	switch {
	case e.spec.Scheduler == nil && e.spec.Mailer == nil:
		done("Error: background agents are not available in this session", true)
	case sub && call.Name != team.ToolSendMessage:
		done("Error: "+call.Name+" is the parent's", true)
	case call.Name == team.ToolTaskStatus:
		e.ledger.Request(c, statusKey(call.ID), e.spec.Scheduler, &fleetmsg.QueryFleet{Ref: statusKey(call.ID)}, messageDeadline,
			func(c actor.Context, why string) { e.onStatus(c, &fleetmsg.FleetStatus{Ref: statusKey(call.ID)}, why) })
	case call.Name == team.ToolTaskWait:
		e.startWait(c, i, args)
	case call.Name == team.ToolTaskCancel:
		done(e.cancelBackground(c, args.ID))
	case strings.TrimSpace(args.To) == "" || strings.TrimSpace(args.Text) == "":
		done("Error: send_message needs to and text", true)
	default:
		target, from, to := e.spec.Scheduler, "parent", strings.TrimSpace(args.To)
		if sub {
			target, from = e.spec.Mailer, e.spec.Task
		}
		if id := e.bg.Resolve(to); id != "" {
			to = id
		}
		key := messageKey(call.ID)
		e.ledger.Request(c, key, target, &fleetmsg.SendMessage{Ref: key, From: from, To: to, Text: args.Text}, messageDeadline,
			func(c actor.Context, why string) {
				e.onMessageSent(c, &fleetmsg.MessageSent{Ref: key, Error: "no word from the scheduler: " + why})
			})
	}
}

func orEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	return s
}

// callByKey finds the turn's open call whose ledger key is key.
func (e *executor) callByKey(key string, of func(string) string) int {
	if t := e.turn; t != nil {
		for i, call := range t.calls {
			if of(call.ID) == key && i < len(t.results) && t.results[i] == nil {
				return i
			}
		}
	}
	return -1
}

// finishCall records the result of call i of the turn and goes on when
// it was the last one pending.
func (e *executor) finishCall(c actor.Context, i int, out string, isErr bool) {
	t := e.turn
	call := t.calls[i]
	t.pending--
	e.record(&ToolResult{CallID: call.ID, Name: call.Name, Output: out, IsError: isErr}, i)
	if t.pending == 0 {
		e.nextGroup(c)
	}
}

// onMessageSent ends a send_message call.
func (e *executor) onMessageSent(c actor.Context, m *fleetmsg.MessageSent) {
	i := e.callByKey(m.Ref, messageKey)
	if i < 0 {
		return
	}
	if m.Followup != "" {
		e.bg.Followup(m.Agent, m.Followup)
	}
	out, isErr := team.SentText(m)
	e.finishCall(c, i, out, isErr)
}

// onStatus ends a task_status call with the scheduler's status (or
// without it: why says why).
func (e *executor) onStatus(c actor.Context, st *fleetmsg.FleetStatus, why string) {
	i := e.callByKey(st.Ref, statusKey)
	if i < 0 {
		return
	}
	var args team.Args
	_ = json.Unmarshal([]byte(orEmpty(e.turn.calls[i].Arguments)), &args)
	e.finishCall(c, i, e.bg.StatusText(st, args.IDs, why), false)
}

// startWait parks a task_wait until its tasks end or its time is up.
func (e *executor) startWait(c actor.Context, i int, args team.Args) {
	t := e.turn
	call := t.calls[i]
	ids, timeout, err := e.bg.WaitFor(args)
	if err != nil {
		t.pending--
		e.record(&ToolResult{CallID: call.ID, Name: call.Name, IsError: true, Output: "Error: " + err.Error()}, i)
		return
	}
	if t.waits == nil {
		t.waits = map[string]*bgWait{}
	}
	w := &bgWait{index: i, ids: ids, first: args.First}
	sys, self, id := e.sys, c.Self(), call.ID
	w.timer = time.AfterFunc(timeout, func() { sys.Send(self, &waitExpired{callID: id}) })
	t.waits[call.ID] = w
	e.settleWaits(c)
}

// settleWaits ends the turn's task_wait calls whose tasks have ended. A
// wait ends with the results it claims, which are then not appended
// again.
func (e *executor) settleWaits(c actor.Context) {
	t := e.turn
	if t == nil || len(t.waits) == 0 {
		return
	}
	ended := false
	for _, callID := range sortedKeys(t.waits) {
		if w := t.waits[callID]; e.bg.Ready(w.ids, w.first) {
			e.endWait(callID, "")
			ended = true
		}
	}
	if ended && t.pending == 0 {
		e.nextGroup(c)
	}
}

// endWait answers a task_wait: the results it claims, then what still
// runs.
func (e *executor) endWait(callID, note string) {
	t := e.turn
	w := t.waits[callID]
	delete(t.waits, callID)
	w.timer.Stop()
	call := t.calls[w.index]
	t.pending--
	e.record(&ToolResult{CallID: call.ID, Name: call.Name, Output: e.bg.WaitResult(w.ids, note)}, w.index)
}

// onWaitExpired ends a task_wait whose time is up.
func (e *executor) onWaitExpired(c actor.Context, m *waitExpired) {
	t := e.turn
	if t == nil || t.waits[m.callID] == nil {
		return
	}
	e.endWait(m.callID, "Timed out waiting.")
	if t.pending == 0 {
		e.nextGroup(c)
	}
}

// cancelWaits ends every task_wait of the turn: with a cancelled result
// when answer is set (a cancel), silently when the turn is aborted (its
// open calls are closed for it).
func (e *executor) cancelWaits(answer bool) {
	t := e.turn
	for _, id := range sortedKeys(t.waits) {
		w := t.waits[id]
		w.timer.Stop()
		delete(t.waits, id)
		if answer {
			t.pending--
			call := t.calls[w.index]
			e.record(&ToolResult{CallID: call.ID, Name: call.Name, IsError: true, Cancelled: true, Output: "Error: cancelled while waiting"}, w.index)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// cancelBackground asks the scheduler to stop a background task (its
// follow-ups too) or fleet.
func (e *executor) cancelBackground(c actor.Context, id string) (string, bool) {
	id = strings.TrimSpace(id)
	if e.bg.IsFleet(id) {
		c.Send(e.spec.Scheduler, &fleetmsg.CancelFleet{FleetID: id})
		return fmt.Sprintf("Cancelling %s; its results follow.", id), false
	}
	r := e.bg.Resolve(id)
	if r == "" {
		return fmt.Sprintf("Error: no background task %q", id), true
	}
	running := e.bg.Running()
	if !slices.Contains(running, r) {
		return fmt.Sprintf("Error: %s has ended already", r), true
	}
	for _, run := range append([]string{r}, e.bg.Followups(r)...) {
		c.Send(e.spec.Scheduler, &fleetmsg.CancelTask{TaskID: run})
	}
	return fmt.Sprintf("Cancelling %s; its result follows.", r), false
}

// cancelAllBackground cancels every background fleet still running.
func (e *executor) cancelAllBackground(c actor.Context) {
	if e.spec.Scheduler == nil {
		return
	}
	for _, id := range e.bg.Fleets() {
		c.Send(e.spec.Scheduler, &fleetmsg.CancelFleet{FleetID: id})
	}
}
