package actors

// QueryBusy asks a session whether it has work: a running turn or queued
// prompts. The reply is a *BusyStatus. Because a session handles messages
// in order, the reply also covers every prompt the asker sent before it.
type QueryBusy struct{}

// BusyStatus answers QueryBusy.
type BusyStatus struct {
	Running bool
	Queued  int
}

// The session supervisor accepts RunTurn and CancelTurn (see
// executor_msgs.go) from frontends; it replies to RunTurn with the
// executor's TurnFinished and publishes TurnDone.

// StatusIncomplete ends a turn that did its work but could not save all of
// it: its transcript, a fleet journal, a compaction archive or a
// subagent's transcript was not written. Its error says
// "incomplete: <what> not saved: <cause>" for each; a headless run that
// ends so exits 1.
const StatusIncomplete = "incomplete"

// turnSaved answers the session's wait for a turn's records (its
// transcript barrier, or the wait's deadline): written says the barrier
// found every record in the file, cause why they are not all there. seq
// names the wait.
type turnSaved struct {
	seq     int
	written bool
	cause   string
}
