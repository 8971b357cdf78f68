package goal

import (
	"fmt"
	"strings"
	"unicode"
)

// Prompt is a /goal prompt, parsed.
type Prompt struct {
	// Action is "start", "clear" or "resume".
	Action    string
	Objective string
	// Strategy is what the prompt forces ("research" or "simple"), or
	// empty for the host to classify.
	Strategy string
}

// ParsePrompt reads a /goal prompt. ok is false for any other input, which
// is an ordinary turn.
func ParsePrompt(input string) (p Prompt, ok bool, err error) {
	s := strings.TrimSpace(input)
	rest, found := strings.CutPrefix(s, "/goal")
	if !found || (rest != "" && !unicode.IsSpace(rune(rest[0]))) {
		return Prompt{}, false, nil
	}
	rest = strings.TrimSpace(rest)
	switch rest {
	case "clear":
		return Prompt{Action: "clear"}, true, nil
	case "resume":
		return Prompt{Action: "resume"}, true, nil
	}
	p.Action = "start"
	for {
		switch {
		case strings.HasPrefix(rest, "--research"):
			p.Strategy, rest = StrategyResearch, strings.TrimSpace(strings.TrimPrefix(rest, "--research"))
			continue
		case strings.HasPrefix(rest, "--simple"):
			p.Strategy, rest = StrategySimple, strings.TrimSpace(strings.TrimPrefix(rest, "--simple"))
			continue
		}
		break
	}
	if rest == "" {
		return Prompt{}, true, fmt.Errorf("/goal: no objective (usage: /goal [--research|--simple] <objective>, /goal clear)")
	}
	p.Objective = rest
	return p, true, nil
}

// researchWords mark long-horizon work; goalStrategy needs one of them,
// StrongSignal needs more.
var researchWords = []string{"research", "investigate", "debug", "root cause", "optimi", "benchmark",
	"implement", "refactor", "migrate", "experiment", "profile", "long-running", "long term", "long-term", "iterate"}

// strongPhrases are what an ordinary prompt must say for the host to turn
// it into a research goal on its own: explicit requests for sustained,
// autonomous, iterative work.
var strongPhrases = []string{"autoresearch", "keep iterating until", "iterate until", "run experiments until",
	"autonomously until", "for as long as it takes", "do not stop until", "don't stop until"}

// Classify picks the strategy of a /goal without a forced one: research
// for long-horizon research, debugging, optimisation or implementation
// work, simple otherwise.
func Classify(objective string) string {
	o := strings.ToLower(objective)
	for _, w := range researchWords {
		if strings.Contains(o, w) {
			return StrategyResearch
		}
	}
	return StrategySimple
}

// StrongSignal reports whether an ordinary prompt (no /goal) asks so
// plainly for long autonomous research that the host upgrades it to
// /goal --research. It is stricter than Classify on purpose: a weak word
// such as "research" or "optimise" alone creates no durable state.
func StrongSignal(prompt string) bool {
	p := strings.ToLower(prompt)
	strong := 0
	for _, w := range strongPhrases {
		if strings.Contains(p, w) {
			strong++
		}
	}
	if strong == 0 {
		return false
	}
	for _, w := range researchWords {
		if strings.Contains(p, w) {
			return true
		}
	}
	return strong > 1
}

// contractSections are the headings that, present in an objective, bound
// the autonomous work.
var contractSections = []string{"Context", "Request", "Output format", "Constraints", "Pause policy"}

// Sections lists the contract sections the objective has, in the order of
// contractSections. A section is a line that starts with its name and a
// colon, or a Markdown heading of it.
func Sections(objective string) []string {
	var out []string
	for _, name := range contractSections {
		for _, line := range strings.Split(objective, "\n") {
			l := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#"))
			if len(l) >= len(name) && strings.EqualFold(l[:len(name)], name) {
				tail := strings.TrimSpace(l[len(name):])
				if tail == "" || strings.HasPrefix(tail, ":") {
					out = append(out, name)
					break
				}
			}
		}
	}
	return out
}

// Normalize is the blocked-state key: lower case, punctuation dropped,
// runs of space folded, so that wording drift of the same blocker does not
// reset the audit.
func Normalize(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		case r == '\'' || r == '’':
			// an apostrophe joins: "can't" is "cant"
		default:
			// other punctuation separates like a space: "deploy-token"
			// is "deploy token"
			space = true
		}
	}
	return b.String()
}

// BlockedRepeats is how many times in a row the same blocked state ends a
// goal.
const BlockedRepeats = 3

// Audit records a blocked report in r and reports whether it is the last
// one the goal takes. Any other report resets the audit.
func (r *Record) Audit(status, reason string) bool {
	if status != StatusBlocked {
		r.Blocked, r.BlockedCount = "", 0
		return false
	}
	key := Normalize(reason)
	if key == r.Blocked && r.BlockedCount > 0 {
		r.BlockedCount++
	} else {
		r.Blocked, r.BlockedCount = key, 1
	}
	return r.BlockedCount >= BlockedRepeats
}
