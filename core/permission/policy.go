package permission

import (
	"encoding/json"
	"errors"
	"fmt"

	"reasonix/core/text"
)

// Policy is the static permission policy of a session, built from the
// [permissions] config table. It is a plain value, safe to copy and to
// share between goroutines; evaluating it does no I/O of its own, only
// what Resolve does.
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
	// Resolve, when set, returns the path the kernel would reach for an
	// absolute path: symlinks followed, ".." taken after the symlink
	// before it. Path rules are then held against that real path as well
	// as the path as written, so a symlink can neither carry a call out of
	// an allow rule's reach nor into a denied place unseen. An error means
	// the real path is unknown: deny and ask rules with a path glob then
	// match the call and allow rules with one do not. Rule globs are
	// placed once per root, home and presence of a resolver, so replacing
	// one resolver with another after use is not noticed.
	Resolve func(abs string) (string, error)

	// places caches the rule globs anchored and resolved; a pointer, so
	// every copy of a policy built by NewPolicy shares it. A Policy
	// written as a literal has none and works them out on each call.
	places *placeCache
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

		places: &placeCache{},
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
	// FromFailure means the check itself failed (a bug in matching): the
	// call is denied, or left to a person under PostureAsk.
	FromFailure
)

// String names the source for logs: deny, ask, allow, read-only, mode or
// failure.
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
	case FromFailure:
		return "failure"
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
	// FromReadOnly, FromMode or FromFailure.
	Rule Rule
	// Detail says what the policy could not tell about the call when that
	// is why Rule applies, such as "cannot tell which program runs
	// ($X builds the program name at run time)"; for FromFailure it is
	// what went wrong. It is empty when the rule matched as written.
	Detail string
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
	detail := ""
	if v.Detail != "" {
		detail = ": " + v.Detail
	}
	switch v.Source {
	case FromDeny:
		return "blocked by deny rule " + v.Rule.String() + detail
	case FromAsk:
		if v.Relaxed {
			return fmt.Sprintf("ask rule %s waived by the %s posture%s", v.Rule, v.Posture, detail)
		}
		return fmt.Sprintf("ask rule %s requires approval%s", v.Rule, detail)
	case FromFailure:
		if v.Decision == Deny {
			return "blocked because the permission check failed" + detail
		}
		return "the permission check failed, so a person must decide" + detail
	case FromAllow:
		return "allowed by rule " + v.Rule.String()
	case FromReadOnly:
		return "read-only tool allowed by default"
	default:
		if v.Relaxed {
			if v.Detail != "" {
				return fmt.Sprintf("no rule matched; %s, allowed by the %s posture", v.Detail, v.Posture)
			}
			return fmt.Sprintf("no rule matched; writer allowed by the %s posture", v.Posture)
		}
		switch v.Decision {
		case Deny:
			return "no rule allows this call and permission mode is deny"
		case Ask:
			if v.Detail != "" {
				return "no rule matched; " + v.Detail + ", but shell commands require approval"
			}
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
// A bash command in which some program name, or some code handed to eval
// or another shell, is built at run time could run any program at all, so
// rules that name programs cannot judge it. No allow rule with a specifier
// covers it; when a Bash deny rule with a specifier exists the first such
// rule denies it, else the first Bash ask rule with a specifier asks, each
// with a Detail saying what could not be told.
//
// The posture then relaxes Ask outcomes only. Under PostureAuto a fallback
// Ask becomes Allow while ask rules still prompt; under PostureYolo every
// Ask becomes Allow. Deny is never relaxed, whether it comes from a deny
// rule or from Mode = deny. An unknown posture is treated as PostureAsk.
//
// A panic while matching never allows the call: the verdict is Deny, or
// Ask under PostureAsk so the person at hand can still decide, with Source
// FromFailure.
func (p Policy) Explain(posture Posture, toolName string, readOnly bool, args json.RawMessage) (v Verdict) {
	switch posture {
	case PostureAsk, PostureAuto, PostureYolo:
	default:
		posture = PostureAsk
	}
	defer func() {
		if r := recover(); r != nil {
			v = Verdict{Decision: Deny, Source: FromFailure, Mode: p.Mode, Posture: posture, Detail: text.OneLine(fmt.Sprint(r), 200)}
			if posture == PostureAsk {
				v.Decision = Ask
			}
		}
	}()
	return p.explain(posture, toolName, readOnly, args)
}

func (p Policy) explain(posture Posture, toolName string, readOnly bool, args json.RawMessage) Verdict {
	c := p.newCall(toolName, args)
	v := Verdict{Mode: p.Mode, Posture: posture}
	blind := c.blindCommand()
	if r, detail, ok := firstMatch(p.Deny, c, false); ok {
		v.Decision, v.Source, v.Rule, v.Detail = Deny, FromDeny, r, detail
		return v
	}
	if r, ok := firstSpecified(p.Deny, c, blind); ok {
		v.Decision, v.Source, v.Rule, v.Detail = Deny, FromDeny, r, blind
		return v
	}
	r, detail, ok := firstMatch(p.Ask, c, false)
	if !ok {
		r, ok = firstSpecified(p.Ask, c, blind)
		detail = blind
	}
	if ok {
		v.Decision, v.Source, v.Rule, v.Detail = Ask, FromAsk, r, detail
		if posture == PostureYolo {
			v.Decision, v.Relaxed = Allow, true
		}
		return v
	}
	if r, _, ok := firstMatch(p.Allow, c, true); ok {
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
	if toolFamily[toolName] == familyBash && c.args.Command != "" && c.bash().ReadsOnly() {
		// Labelled, not allowed: what it reads may still be private.
		v.Detail = "the command only reads"
	}
	if v.Decision == Ask && posture != PostureAsk {
		v.Decision, v.Relaxed = Allow, true
	}
	return v
}

// newCall prepares a call for matching under this policy's root, home and
// resolver.
func (p Policy) newCall(toolName string, args json.RawMessage) *call {
	c := newCall(toolName, args, p.Root, p.Home)
	c.place.resolve, c.place.cache = p.Resolve, p.places
	return c
}

// firstMatch returns the first rule of rules that matches the call, judged
// as an allow (all) or as a deny or ask (!all), and the detail of the
// match (see Verdict.Detail).
func firstMatch(rules []Rule, c *call, all bool) (Rule, string, bool) {
	for _, r := range rules {
		if ok, detail := r.match(c, all); ok {
			return r, detail, true
		}
	}
	return Rule{}, "", false
}

// firstSpecified returns, when blind says the call's command cannot be
// judged by name, the first rule with a specifier that applies to the
// call's tool: any of them might have matched the program that really
// runs. A bare rule needs no such help, it matches every call anyway.
func firstSpecified(rules []Rule, c *call, blind string) (Rule, bool) {
	if blind == "" {
		return Rule{}, false
	}
	for _, r := range rules {
		if r.kind != kindAny && r.appliesTo(c.tool) {
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
	ok, _ := r.match(c, all)
	return ok
}

// match is matches, also saying (for a deny or ask reading) when the rule
// holds only because part of the call could not be told, such as a path
// whose real location is unknown.
func (r Rule) match(c *call, all bool) (bool, string) {
	if !r.appliesTo(c.tool) {
		return false, ""
	}
	if r.kind == kindAny {
		return true, ""
	}
	switch r.family() {
	case familyBash:
		if c.args.Command == "" {
			return false, ""
		}
		if all {
			return c.bash().Allows(r.kind.bashMatch(), r.spec), ""
		}
		return c.bash().Touches(r.kind.bashMatch(), r.spec), ""
	case familyEdit, familyRead:
		return c.matchPaths(r.spec, all)
	default:
		s := c.literalSubject()
		return s != "" && s == r.spec, ""
	}
}
