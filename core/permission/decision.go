package permission

import (
	"fmt"
	"strings"
)

// Decision is what the policy says about one tool call. The zero value is
// Allow so that a Decision compares naturally with the order of severity:
// Allow < Ask < Deny.
type Decision int

const (
	// Allow lets the call run without asking anyone.
	Allow Decision = iota
	// Ask holds the call until the user (or another approver) answers.
	Ask
	// Deny blocks the call; the model receives a blocked result instead.
	Deny
)

// String returns the lower-case name used in config files and logs, so a
// Decision reads the same wherever it is shown.
func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	default:
		return fmt.Sprintf("Decision(%d)", int(d))
	}
}

// parseMode reads the [permissions] mode value. An empty mode is Ask, the
// documented default, so a config without the key stays cautious.
func parseMode(s string) (Decision, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "ask":
		return Ask, nil
	case "allow":
		return Allow, nil
	case "deny":
		return Deny, nil
	default:
		return Ask, fmt.Errorf("permission mode %q: want ask, allow or deny", s)
	}
}

// Posture is the user's runtime choice of how much to be asked. It is kept
// apart from the static rules so a user can relax prompting for one session
// without editing the config, while explicit deny rules keep holding.
type Posture string

const (
	// PostureAsk follows the policy as written: an Ask stays an Ask.
	PostureAsk Posture = "ask"
	// PostureAuto allows writers that no rule mentions, while explicit ask
	// and deny rules still apply.
	PostureAuto Posture = "auto"
	// PostureYolo turns every Ask into Allow; only Deny still blocks.
	PostureYolo Posture = "yolo"
)

// ParsePosture reads a posture name as written in flags, config or the UI,
// ignoring case and surrounding space. An empty name is PostureAsk, the
// cautious default.
func ParsePosture(s string) (Posture, error) {
	switch p := Posture(strings.ToLower(strings.TrimSpace(s))); p {
	case "":
		return PostureAsk, nil
	case PostureAsk, PostureAuto, PostureYolo:
		return p, nil
	default:
		return PostureAsk, fmt.Errorf("approval posture %q: want ask, auto or yolo", s)
	}
}
