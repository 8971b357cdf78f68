package actors

import (
	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/mcpconn"
	"reasonix/core/mcp"
)

// NoFrontendLeft is the reason of an approval denied because no frontend
// is left to answer it: approval_resolved carries it, and the model reads
// it after "Blocked:".
const NoFrontendLeft = "no frontend left"

// Unattended answers a session's requests for the user once its frontends
// have gone: a stream-json input that ended, the last browser tab that
// closed. Without it a call waiting for approval holds its turn, and
// every prompt behind it, for as long as the process lives.
//
// The frontend feeds it every event it reads of the session, in order
// (Observe), so it knows what is pending without asking the session. Leave
// says nobody is left: each approval still pending is denied with
// NoFrontendLeft and each elicitation still open declined, and so is every
// one asked after, as Observe sees it, until Return says a frontend is
// back. An answer that crosses one the user gave names nothing pending by
// the time it arrives, and the session ignores it, as any late answer.
// An Unattended is not safe for concurrent use: the goroutine reading the
// events owns it.
type Unattended struct {
	sess *Session
	view *event.View
	gone bool
}

// Unattended returns the answerer for this session's requests, for the
// frontend reading its events.
func (s *Session) Unattended() *Unattended {
	return &Unattended{sess: s, view: event.NewView(s.id)}
}

// Observe folds in the next event; while no frontend is left, a request
// it asks is answered at once.
func (u *Unattended) Observe(ev event.Event) {
	u.view.Apply(ev)
	if !u.gone || event.MetaOf(ev).Session != u.sess.id {
		return
	}
	switch e := ev.(type) {
	case *event.ApprovalRequested:
		u.deny(e.RequestID)
	case *event.ElicitationRequested:
		u.decline(e.RequestID, e.Server)
	}
}

// Leave answers every request pending now and, until Return, every later
// one. Leaving twice is harmless.
func (u *Unattended) Leave() {
	if u.gone {
		return
	}
	u.gone = true
	snap := u.view.Snapshot()
	for _, a := range snap.Approvals {
		u.deny(a.RequestID)
	}
	for _, e := range snap.Elicitations {
		u.decline(e.RequestID, e.Server)
	}
}

// Return says a frontend is back: requests wait for it again.
func (u *Unattended) Return() { u.gone = false }

// Gone reports whether Leave is in force.
func (u *Unattended) Gone() bool { return u.gone }

func (u *Unattended) deny(requestID string) {
	u.sess.Approve(&agent.ApprovalResponse{RequestID: requestID, Choice: event.ApproveDeny, Reason: NoFrontendLeft})
}

func (u *Unattended) decline(requestID, server string) {
	u.sess.AnswerElicitation(&mcpconn.ElicitationResponse{RequestID: requestID, Server: server, Action: mcp.ElicitDecline})
}
