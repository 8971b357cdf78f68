package permission

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// placer puts a rule's path glob in place: anchored at the workspace root
// or the home directory, and, given a resolver, spelled a second and third
// way through the real paths of the root and of the glob's fixed leading
// directories. A path's real spelling then meets the rule's real spelling
// even where the root itself lies behind a symlink (/var -> /private/var
// on macOS) or the rule names a directory that is one.
type placer struct {
	root, home string // slash-separated and clean, or ""
	resolve    func(string) (string, error)
	cache      *placeCache
}

// placeCache keeps placed globs for the life of a policy, so placing them,
// and the I/O of resolving them, happens once per rule.
type placeCache struct {
	mu    sync.RWMutex
	globs map[placeKey]placed
}

// placeKey names one placing; whether a resolver was at hand is part of it
// so a policy that gains its resolver late does not keep globs placed
// without one.
type placeKey struct {
	spec, root, home string
	resolved         bool
}

type placed struct {
	g  globSet
	ok bool
}

// globSet is one rule glob in each spelling it is matched in, split at "/".
type globSet [][]string

// match reports whether a slash-separated absolute name matches any
// spelling.
func (g globSet) match(name string) bool {
	return g.matchSplit(strings.Split(name, "/"))
}

func (g globSet) matchSplit(ns []string) bool {
	for _, ps := range g {
		if matchSegments(ps, ns) {
			return true
		}
	}
	return false
}

// spellings returns the placed forms of a rule's glob, from the cache when
// there is one. It reports false for a "~/" glob when the policy knows no
// home, since such a rule cannot be placed.
func (pl placer) spellings(spec string) (globSet, bool) {
	if pl.cache == nil {
		return pl.place(spec)
	}
	key := placeKey{spec, pl.root, pl.home, pl.resolve != nil}
	pl.cache.mu.RLock()
	e, ok := pl.cache.globs[key]
	pl.cache.mu.RUnlock()
	if ok {
		return e.g, e.ok
	}
	g, ok := pl.place(spec)
	pl.cache.mu.Lock()
	if pl.cache.globs == nil {
		pl.cache.globs = map[placeKey]placed{}
	}
	pl.cache.globs[key] = placed{g, ok}
	pl.cache.mu.Unlock()
	return g, ok
}

// place turns a rule's glob into absolute ones: "~/" is the user's home, a
// relative glob hangs off the workspace root and a trailing "/" means
// everything below the directory. A spelling whose resolution fails is
// left out; the glob as written always remains.
func (pl placer) place(spec string) (globSet, bool) {
	if strings.HasSuffix(spec, "/") {
		spec += "**"
	}
	var pat, base string
	switch {
	case spec == "~" || strings.HasPrefix(spec, "~/"):
		if pl.home == "" {
			return nil, false
		}
		pat, base = path.Clean(pl.home+spec[1:]), pl.home
	case pl.root != "" && !isAbs(spec):
		pat, base = anchor(pl.root, spec), pl.root
	default:
		pat = anchor(pl.root, spec)
	}
	pats := []string{pat}
	if pl.resolve != nil {
		if rest, ok := below(pat, base); ok && base != "/" {
			if real, err := pl.resolve(filepath.FromSlash(base)); err == nil {
				pats = append(pats, joinSlash(filepath.ToSlash(filepath.Clean(real)), rest))
			}
		}
		if lit, rest := literalPrefix(pat); lit != "" {
			if real, err := pl.resolve(filepath.FromSlash(lit)); err == nil {
				pats = append(pats, joinSlash(filepath.ToSlash(filepath.Clean(real)), rest))
			}
		}
	}
	var g globSet
	seen := map[string]bool{}
	for _, p := range pats {
		if foldPathCase {
			p = strings.ToLower(p)
		}
		if !seen[p] {
			seen[p] = true
			g = append(g, strings.Split(p, "/"))
		}
	}
	return g, true
}

// below returns what follows dir in the clean pattern pat.
func below(pat, dir string) (string, bool) {
	if dir == "" {
		return "", false
	}
	if pat == dir {
		return "", true
	}
	return strings.CutPrefix(pat, strings.TrimSuffix(dir, "/")+"/")
}

// literalPrefix splits a clean absolute pattern into its longest leading
// run of segments free of glob syntax and the rest. It returns "" for the
// prefix when that run is only the file system root.
func literalPrefix(pat string) (lit, rest string) {
	segs := strings.Split(pat, "/")
	n := slices.IndexFunc(segs, func(s string) bool { return strings.ContainsAny(s, `*?[\`) })
	if n < 0 {
		n = len(segs)
	}
	lit = strings.Join(segs[:n], "/")
	if lit == "" || !isAbs(lit) || strings.Trim(lit, "/") == "" {
		return "", ""
	}
	return lit, strings.Join(segs[n:], "/")
}

func joinSlash(dir, rest string) string {
	switch {
	case rest == "":
		return dir
	case strings.HasSuffix(dir, "/"):
		return dir + rest
	default:
		return dir + "/" + rest
	}
}

// PathDenied reports the first deny rule that forbids an operation on a
// path that is absolute and already resolved, as a path guard has it after
// following symlinks. For op "read" that is a Read deny rule, the bare
// Read included; for "write", and for any other op, an Edit or a Read deny
// rule: a file the user forbade reading must not be replaced either, and
// moving a directory that holds one would take it out from under the
// rule. Only rules for a whole family count; a rule naming one tool, such
// as read_file(...), is left to Explain, which knows the tool.
//
// The guard calls it for every path a file tool touches and every entry a
// directory walk visits, so it does no I/O but the first time a rule is
// placed (see Resolve), and matches the rule globs in their lexical and
// their resolved spellings. A panic inside reports the zero Rule and true.
func (p Policy) PathDenied(op string, resolved string) (rule Rule, denied bool) {
	defer func() {
		if recover() != nil {
			rule, denied = Rule{}, true
		}
	}()
	pl := placer{root: cleanDir(p.Root), home: cleanDir(p.Home), resolve: p.Resolve, cache: p.places}
	name := filepath.ToSlash(filepath.Clean(resolved))
	if !isAbs(name) {
		name = anchor(pl.root, name)
	}
	if foldPathCase {
		name = strings.ToLower(name)
	}
	ns := strings.Split(name, "/")
	for _, r := range p.Deny {
		switch f, ok := familyNames[r.tool]; {
		case !ok:
			continue
		case f == familyRead, f == familyEdit && op != "read":
		default:
			continue
		}
		if r.kind == kindAny {
			return r, true
		}
		if g, ok := pl.spellings(r.spec); ok && g.matchSplit(ns) {
			return r, true
		}
	}
	return Rule{}, false
}
