package permission

import (
	"encoding/json"
	"sync"
)

// Grants is the set of rules a user approved for the rest of a session
// ("allow for the session"). The runtime consults it when the policy says
// Ask, before prompting again; it never overrides a Deny, because the
// runtime only asks it about calls the policy would prompt for.
//
// A grant matches like an allow rule, so a granted Bash(go test:*) covers
// go test ./... but not go test ./... && rm -rf tmp. Grants is safe for
// concurrent use; the zero value is not, use NewGrants.
type Grants struct {
	root, home string
	// resolve and places follow path arguments to where they really lead,
	// as a Policy with a Resolve does; nil matches paths as written.
	resolve func(string) (string, error)
	places  *placeCache

	mu    sync.RWMutex
	rules []Rule
}

// NewGrants returns an empty grant set whose path rules are read against
// the given workspace root and home directory, as a Policy's are.
func NewGrants(root, home string) *Grants {
	return &Grants{root: root, home: home, places: &placeCache{}}
}

// FollowLinks makes the grants match path arguments by their real paths
// too (see Policy.Resolve), so a grant of Edit(docs/**) does not cover a
// write through docs/lnk that leads out of docs. Call it before the
// grants are shared.
func (g *Grants) FollowLinks(resolve func(string) (string, error)) {
	g.resolve = resolve
}

// Add records a rule, usually one returned by Policy.Suggest. Adding a rule
// that is already present changes nothing.
func (g *Grants) Add(rule string) error {
	r, err := ParseRule(rule)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, have := range g.rules {
		if have == r {
			return nil
		}
	}
	g.rules = append(g.rules, r)
	return nil
}

// Covers reports whether a granted rule allows the call. A nil *Grants
// covers nothing, and a panic while matching covers nothing either.
func (g *Grants) Covers(toolName string, args json.RawMessage) (covered bool) {
	if g == nil {
		return false
	}
	defer func() {
		if recover() != nil {
			covered = false
		}
	}()
	g.mu.RLock()
	defer g.mu.RUnlock()
	if len(g.rules) == 0 {
		return false
	}
	c := newCall(toolName, args, g.root, g.home)
	c.place.resolve, c.place.cache = g.resolve, g.places
	_, _, ok := firstMatch(g.rules, c, true)
	return ok
}

// Rules returns a copy of the granted rules in the order they were added,
// for display.
func (g *Grants) Rules() []Rule {
	if g == nil {
		return nil
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	return append([]Rule(nil), g.rules...)
}
