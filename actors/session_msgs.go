package actors

// The session supervisor accepts RunTurn and CancelTurn (see
// executor_msgs.go) from frontends; it replies to RunTurn with the
// executor's TurnFinished and publishes TurnDone.
