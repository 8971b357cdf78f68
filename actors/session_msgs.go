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
