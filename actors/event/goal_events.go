package event

import "reasonix/core/goal"

// Turn statuses of a goal's turn, beside those of events.go: the goal
// waits for the user (blocked three times, or paused on its lease), or a
// limit or budget ended it. A completed goal ends StatusOK.
const (
	StatusBlocked = "blocked"
	StatusLimit   = "limit"
)

// GoalStarted reports a goal taking over the session's turns, fresh or
// resumed.
type GoalStarted struct {
	Meta
	Goal      string `json:"goal"`
	Objective string `json:"objective"`
	Strategy  string `json:"strategy"`
	Resumed   bool   `json:"resumed,omitempty"`
	MaxTurns  int    `json:"max_turns"`
	MaxTokens int    `json:"max_tokens,omitempty"`
	MaxTimeMS int64  `json:"max_time_ms,omitempty"`
	// Research is the AutoResearch directory, for that strategy.
	Research string `json:"research,omitempty"`
}

// GoalProgressed reports one finished goal turn: what the goal has used
// of its budgets and what the model last reported.
type GoalProgressed struct {
	Meta
	Goal       string `json:"goal"`
	Turn       int    `json:"turn"`
	Tokens     int    `json:"tokens"`
	ElapsedMS  int64  `json:"elapsed_ms"`
	Report     string `json:"report,omitempty"`
	Summary    string `json:"summary,omitempty"`
	Todo       int    `json:"todo"`
	TodoDone   int    `json:"todo_done"`
	NoProgress int    `json:"no_progress"`
	// Nudged says this round's lack of progress brought the reassessment
	// nudge into the next turn.
	Nudged bool `json:"nudged,omitempty"`
}

// GoalEnded reports a goal's end, or its pause for the user. Status is a
// goal record status: complete, blocked, paused, limit, stopped or failed.
type GoalEnded struct {
	Meta
	Goal      string `json:"goal"`
	Status    string `json:"status"`
	Reason    string `json:"reason,omitempty"`
	Summary   string `json:"summary,omitempty"`
	Turns     int    `json:"turns"`
	Tokens    int    `json:"tokens"`
	ElapsedMS int64  `json:"elapsed_ms"`
}

// TodoUpdated reports the goal's todo list as the todo tool last set it
// (or as a resumed goal carries it over), so a frontend can show the plan
// while a goal turn is still running.
type TodoUpdated struct {
	Meta
	Items []goal.Item `json:"items"`
}

// Kind implementations: the wire names.
func (*TodoUpdated) Kind() string    { return "todo_updated" }
func (*GoalStarted) Kind() string    { return "goal_started" }
func (*GoalProgressed) Kind() string { return "goal_progress" }
func (*GoalEnded) Kind() string      { return "goal_ended" }
