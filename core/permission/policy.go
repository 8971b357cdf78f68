package permission

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Policy is the static permission policy of a session, built from the
// [permissions] config table. It is a plain value: evaluating it does no
// I/O and it is safe to share between goroutines.
//
// The zero Policy allows every call, because the zero Decision is Allow;
// build policies with NewPolicy, which defaults Mode to Ask.
type Policy struct {
	// Mode is the decision for a writer that no rule matches.
	Mode Decision
	// Allow, Ask and Deny are the rule lists; see Explain for precedence.
	Allow, Ask, Deny []Rule
	// Root is the workspace root; relative path globs and relative path
	// arguments are taken from it.
	Root string
	// Home is the user's home directory, which "~/" in a path glob means.
	// When it is empty such globs match nothing.
	Home string
}

// NewPolicy builds a Policy from the config's [permissions] values. mode is
// ask, allow or deny ("" is ask). Every malformed rule is reported in one
// joined error that names its list and position, so a user fixes the
// config in one pass; on error the returned Policy is the zero value and
// must not be used, since silently dropping a deny rule would loosen it.
func NewPolicy(mode string, allow, ask, deny []string, root, home string) (Policy, error) {
	var errs []error
	m, err := parseMode(mode)
	if err != nil {
		errs = append(errs, err)
	}
	parse := func(list string, texts []string) []Rule {
		rules := make([]Rule, 0, len(texts))
		for i, s := range texts {
			r, err := ParseRule(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("permissions.%s[%d]: %w", list, i, err))
				continue
			}
			rules = append(rules, r)
		}
		return rules
	}
	p := Policy{
		Mode:  m,
		Allow: parse("allow", allow),
		Ask:   parse("ask", ask),
		Deny:  parse("deny", deny),
		Root:  root,
		Home:  home,
	}
	if len(errs) > 0 {
		return Policy{}, errors.Join(errs...)
	}
	return p, nil
}

// Source says which part of the policy produced a Verdict.
type Source int

const (
	// FromDeny means a deny rule matched.
	FromDeny Source = iota
	// FromAsk means an ask rule matched.
	FromAsk
	// FromAllow means an allow rule matched.
	FromAllow
	// FromReadOnly means no rule matched and the tool only reads.
	FromReadOnly
	// FromMode means no rule matched and the writer fallback (Mode)
	// decided.
	FromMode
)

// String names the source for logs: deny, ask, allow, read-only or mode.
func (s Source) String() string {
	switch s {
	case FromDeny:
		return "deny"
	case FromAsk:
		return "ask"
	case FromAllow:
		return "allow"
	case FromReadOnly:
		return "read-only"
	case FromMode:
		return "mode"
	default:
		return fmt.Sprintf("Source(%d)", int(s))
	}
}

// Verdict is a Decision with the reason for it, so that a blocked or
// prompted call can tell the model and the user which rule is responsible.
type Verdict struct {
	// Decision is what to do with the call.
	Decision Decision
	// Source is the part of the policy that decided.
	Source Source
	// Rule is the rule that matched; it is the zero Rule when Source is
	// FromReadOnly or FromMode.
	Rule Rule
	// Mode is the policy's writer fallback, reported for FromMode.
	Mode Decision
	// Posture is the posture the call was judged under.
	Posture Posture
	// Relaxed is set when the posture turned an Ask into Allow.
	Relaxed bool
}

// Reason is a one-line explanation fit for a blocked tool result or an
// approval prompt, such as `blocked by deny rule Bash(rm:*)`.
func (v Verdict) Reason() string {
	switch v.Source {
	case FromDeny:
		return "blocked by deny rule " + v.Rule.String()
	case FromAsk:
		if v.Relaxed {
			return fmt.Sprintf("ask rule %s waived by the %s posture", v.Rule, v.Posture)
		}
		return fmt.Sprintf("ask rule %s requires approval", v.Rule)
	case FromAllow:
		return "allowed by rule " + v.Rule.String()
	case FromReadOnly:
		return "read-only tool allowed by default"
	default:
		if v.Relaxed {
			return fmt.Sprintf("no rule matched; writer allowed by the %s posture", v.Posture)
		}
		switch v.Decision {
		case Deny:
			return "no rule allows this call and permission mode is deny"
		case Ask:
			return "no rule matched; writers require approval"
		default:
			return "no rule matched; permission mode allows writers"
		}
	}
}

// Decide evaluates a call under PostureAsk; it is Explain without the
// reason.
func (p Policy) Decide(toolName string, readOnly bool, args json.RawMessage) Decision {
	return p.Explain(PostureAsk, toolName, readOnly, args).Decision
}

// DecideWith evaluates a call under a runtime posture; it is Explain
// without the reason.
func (p Policy) DecideWith(posture Posture, toolName string, readOnly bool, args json.RawMessage) Decision {
	return p.Explain(posture, toolName, readOnly, args).Decision
}

// Explain evaluates one tool call and says why. Precedence is deny > ask >
// allow > fallback: the first list with a matching rule decides, and within
// a list the first matching rule is reported. The fallback is Allow for a
// read-only tool and Mode for a writer; Bash and the Edit family are always
// writers, whatever readOnly says.
//
// The posture then relaxes Ask outcomes only. Under PostureAuto a fallback
// Ask becomes Allow while ask rules still prompt; under PostureYolo every
// Ask becomes Allow. Deny is never relaxed, whether it comes from a deny
// rule or from Mode = deny. An unknown posture is treated as PostureAsk.
func (p Policy) Explain(posture Posture, toolName string, readOnly bool, args json.RawMessage) Verdict {
	switch posture {
	case PostureAsk, PostureAuto, PostureYolo:
	default:
		posture = PostureAsk
	}
	c := newCall(toolName, args, p.Root, p.Home)
	v := Verdict{Mode: p.Mode, Posture: posture}
	if r, ok := firstMatch(p.Deny, c, false); ok {
		v.Decision, v.Source, v.Rule = Deny, FromDeny, r
		return v
	}
	if r, ok := firstMatch(p.Ask, c, false); ok {
		v.Decision, v.Source, v.Rule = Ask, FromAsk, r
		if posture == PostureYolo {
			v.Decision, v.Relaxed = Allow, true
		}
		return v
	}
	if r, ok := firstMatch(p.Allow, c, true); ok {
		v.Decision, v.Source, v.Rule = Allow, FromAllow, r
		return v
	}
	switch toolFamily[toolName] {
	case familyBash, familyEdit:
		readOnly = false
	}
	if readOnly {
		v.Decision, v.Source = Allow, FromReadOnly
		return v
	}
	v.Decision, v.Source = p.Mode, FromMode
	if v.Decision == Ask && posture != PostureAsk {
		v.Decision, v.Relaxed = Allow, true
	}
	return v
}

// firstMatch returns the first rule of rules that matches the call, judged
// as an allow (all) or as a deny or ask (!all).
func firstMatch(rules []Rule, c *call, all bool) (Rule, bool) {
	for _, r := range rules {
		if r.matches(c, all) {
			return r, true
		}
	}
	return Rule{}, false
}

// matches applies the rule to a call. all selects the allow reading, which
// must hold for everything the call does (each path it touches, the whole
// shell command); otherwise the deny and ask reading applies, which needs
// to hold for any part of it. A specifier never matches a call whose
// arguments do not expose its subject.
func (r Rule) matches(c *call, all bool) bool {
	if !r.appliesTo(c.tool) {
		return false
	}
	if r.kind == kindAny {
		return true
	}
	switch r.family() {
	case familyBash:
		if c.args.Command == "" {
			return false
		}
		if all {
			return c.bash().allowsBash(r)
		}
		return c.bash().touchesBash(r)
	case familyEdit, familyRead:
		return c.matchPaths(r.spec, all)
	default:
		s := c.literalSubject()
		return s != "" && s == r.spec
	}
}
