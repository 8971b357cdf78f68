package team

// Deliver is a message for a running agent (send_message): it reads it at
// its next step boundary as a user message. An agent with no turn running
// answers Undelivered, so the sender's scheduler can start a follow-up
// instead of losing it. Raw says Text is the whole user message already.
// ID is the scheduler's name for the message: whoever holds it hands it
// over at most once by it, which is what lets a repair keep a message
// a crash interrupted without risking a second copy.
type Deliver struct {
	ID       string
	From     string
	FromName string
	Text     string
	Raw      bool
}

// Undelivered gives back a Deliver that came when the agent's turn had
// ended. Task is the agent's task id.
type Undelivered struct {
	Task    string
	Message *Deliver
}

// UserText is the user message a Deliver becomes.
func (d *Deliver) UserText() string {
	if d.Raw {
		return d.Text
	}
	return MessageText(d.From, d.FromName, d.Text)
}

// BackgroundWake is an executor's word to its session that background
// results wait for a conversation that has no turn running: the session
// starts a turn for them (RunTurn with Wake) unless one is under way.
type BackgroundWake struct{}

// QueryBackground asks an executor for its background work; the reply is
// a *BackgroundStatus.
type QueryBackground struct{}

// BackgroundStatus answers QueryBackground: Running lists the background
// agents with a run not ended, Undelivered counts the results and
// messages not yet given to the conversation.
type BackgroundStatus struct {
	Running     []string
	Undelivered int
}

// CancelBackground asks an executor to cancel every background task it
// started that is still running; their results (cancelled) still come.
type CancelBackground struct{}
