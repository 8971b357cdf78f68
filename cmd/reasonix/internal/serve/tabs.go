package serve

import (
	"log/slog"
	"time"

	"reasonix/actors/event"
)

// A session the page has left must not hold a call for an approval that
// nobody is there to give: a goal or a fleet would wait for as long as the
// server runs. So each session whose approvals may time out
// (approval_timeout_seconds above 0) has a warden. Once no event stream of
// the session has been open for that long, since the last one closed or
// since the session was opened, every approval still pending is denied
// with actors.NoFrontendLeft (a subagent's too, which has no timer of its
// own) and every MCP question declined, and so is each one asked after,
// until a tab follows the session again. With 0 approvals wait for the
// user, as the key says: a tab that comes back finds them in its snapshot.

// startWarden starts the session's warden when its approvals may time
// out. It runs until the entry is closed; close waits for it.
func (e *entry) startWarden(log *slog.Logger) {
	grace := e.live.Built().Spec.Agent.ApprovalTimeout
	if grace <= 0 {
		return
	}
	e.wardenDone = make(chan struct{})
	go e.warden(grace, log)
}

// attach counts an event stream of the session until the returned func
// is called.
func (e *entry) attach() (detach func()) {
	e.setTabs(+1)
	return func() { e.setTabs(-1) }
}

func (e *entry) setTabs(delta int) {
	e.mu.Lock()
	e.tabs += delta
	e.mu.Unlock()
	select {
	case e.tabsChanged <- struct{}{}:
	default: // a change not yet seen is pending: the warden reads the count then
	}
}

func (e *entry) tabCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.tabs
}

// warden reads every event of the session (from the start of its bus, so
// nothing asked before it started is missed) into an actors.Unattended,
// and tells it when the tabs have been gone for grace and when one is
// back. Its reader goroutine hands it the events, so that it can also
// wait for the tabs and the clock; both end with the entry.
func (e *entry) warden(grace time.Duration, log *slog.Logger) {
	defer close(e.wardenDone)
	sub := e.live.Bus().SubscribeFrom(0, 0)
	events := make(chan event.Event)
	read := make(chan struct{})
	go func() {
		defer close(read)
		for {
			ev, err := sub.Next(e.ctx)
			if err != nil {
				return
			}
			select {
			case events <- ev:
			case <-e.ctx.Done():
				return
			}
		}
	}()
	defer func() {
		sub.Close()
		<-read
	}()
	un := e.live.Session().Unattended()
	// No tab has followed the session yet: the clock runs from its opening.
	clock := time.NewTimer(grace)
	defer clock.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case ev := <-events:
			un.Observe(ev)
		case <-e.tabsChanged:
			switch {
			case e.tabCount() > 0:
				clock.Stop()
				un.Return()
			case !un.Gone():
				clock.Reset(grace)
			}
		case <-clock.C:
			if e.tabCount() == 0 && !un.Gone() {
				log.Info("serve: no tab follows the session; its approvals are denied until one does",
					"session", e.id, "after", grace)
				un.Leave()
			}
		}
	}
}
