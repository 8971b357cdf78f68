package skill

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// maxFileBytes bounds one SKILL.md; a larger file is skipped, since its
// body would be sent whole as a system prompt.
const maxFileBytes = 1 << 20

// ErrUnknownProfile is wrapped by the error Profile returns for a name that
// is not a visible subagent profile.
var ErrUnknownProfile = errors.New("unknown subagent profile")

// Options say where Load looks for skills.
type Options struct {
	// Workspace is the project directory: its skills live in
	// <Workspace>/.reasonix/skills, the highest-precedence root. Relative
	// Paths and ExcludedPaths resolve against it. Empty skips the root.
	Workspace string
	// Home is the Reasonix home: its skills live in <Home>/skills. Empty
	// skips the root.
	Home string
	// UserHome replaces a leading "~" in Paths and ExcludedPaths.
	UserHome string
	// Paths are extra roots ([skills] paths), below the user root, the
	// earlier one winning a clash.
	Paths []string
	// ExcludedPaths hide every root, and every skill directory, at or
	// below one of them ([skills] excluded_paths).
	ExcludedPaths []string
	// Disabled hides skills by name, built-ins included ([skills]
	// disabled_skills).
	Disabled []string
}

// ProjectDir is the project skill root of a workspace.
func ProjectDir(workspace string) string {
	return filepath.Join(workspace, ".reasonix", "skills")
}

// UserDir is the user skill root inside the Reasonix home.
func UserDir(home string) string {
	return filepath.Join(home, "skills")
}

// Store is the set of visible skills, one per name.
type Store struct {
	skills   []Skill // sorted by name
	disabled map[string]bool
}

// root is one directory searched for skills.
type root struct {
	dir    string
	source Source
}

// Load finds every skill the options point at. Problems with single files
// or roots come back as warnings and never stop the load; the Store holds
// everything that could be read.
func Load(opts Options) (*Store, []Warning) {
	var warns []Warning
	warn := func(path string, err error) { warns = append(warns, Warning{Path: path, Err: err}) }

	var excluded []string
	for _, p := range opts.ExcludedPaths {
		abs, err := expand(p, opts)
		if err != nil {
			warn(p, fmt.Errorf("[skills] excluded_paths: %w", err))
			continue
		}
		if abs != "" {
			excluded = append(excluded, canonical(abs))
		}
	}
	hidden := func(dir string) bool {
		c := canonical(dir)
		return slices.ContainsFunc(excluded, func(ex string) bool { return within(c, ex) })
	}

	var roots []root
	if opts.Workspace != "" {
		roots = append(roots, root{ProjectDir(opts.Workspace), SourceProject})
	}
	if opts.Home != "" {
		roots = append(roots, root{UserDir(opts.Home), SourceUser})
	}
	for _, p := range opts.Paths {
		abs, err := expand(p, opts)
		if err != nil {
			warn(p, fmt.Errorf("[skills] paths: %w", err))
			continue
		}
		if abs != "" {
			roots = append(roots, root{abs, SourcePath})
		}
	}

	byName := map[string]Skill{}
	seenRoots := map[string]bool{}
	for _, r := range roots {
		c := canonical(r.dir)
		if seenRoots[c] || hidden(r.dir) {
			continue
		}
		seenRoots[c] = true
		found := map[string]string{} // name → file, within this root
		for _, s := range readRoot(r, hidden, warn) {
			if prev, dup := found[s.Name]; dup {
				warn(s.Path, fmt.Errorf("name %q is already used by %s", s.Name, prev))
				continue
			}
			found[s.Name] = s.Path
			if _, shadowed := byName[s.Name]; !shadowed {
				byName[s.Name] = s
			}
		}
	}
	for _, s := range builtins() {
		if _, shadowed := byName[s.Name]; !shadowed {
			byName[s.Name] = s
		}
	}

	st := &Store{disabled: map[string]bool{}}
	for _, name := range opts.Disabled {
		st.disabled[strings.TrimSpace(name)] = true
	}
	for name, s := range byName {
		if !st.disabled[name] {
			st.skills = append(st.skills, s)
		}
	}
	sort.Slice(st.skills, func(i, j int) bool { return st.skills[i].Name < st.skills[j].Name })
	return st, warns
}

// readRoot parses the skills directly under one root, in directory order.
// A root that does not exist is simply empty.
func readRoot(r root, hidden func(string) bool, warn func(string, error)) []Skill {
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			warn(r.dir, fmt.Errorf("read %s skill root: %w", r.source, err))
		}
		return nil
	}
	var out []Skill
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(r.dir, e.Name())
		if !e.IsDir() {
			// A symlink to a directory counts; anything else is not a skill.
			st, err := os.Stat(dir)
			if err != nil || !st.IsDir() {
				continue
			}
		}
		if hidden(dir) {
			continue
		}
		path := filepath.Join(dir, FileName)
		data, err := readFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			warn(path, err)
			continue
		}
		s, err := Parse(data, e.Name())
		if err != nil {
			warn(path, fmt.Errorf("skipped: %w", err))
			continue
		}
		s.Source, s.Path = r.source, path
		out = append(out, s)
	}
	return out
}

// readFile reads path, refusing files above maxFileBytes.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("skipped: larger than %d bytes", maxFileBytes)
	}
	return data, nil
}

// expand turns a configured path into an absolute one: a leading "~" is
// the user's home directory, and a relative path is taken from the
// workspace. A blank entry expands to "".
func expand(p string, opts Options) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", nil
	}
	if p == "~" || strings.HasPrefix(p, "~/") || (filepath.Separator == '\\' && strings.HasPrefix(p, `~\`)) {
		if opts.UserHome == "" {
			return "", fmt.Errorf("%q: ~ needs a home directory", p)
		}
		p = filepath.Join(opts.UserHome, p[1:])
	}
	if !filepath.IsAbs(p) {
		if opts.Workspace == "" {
			return "", fmt.Errorf("%q: a relative path needs a workspace", p)
		}
		p = filepath.Join(opts.Workspace, p)
	}
	return filepath.Clean(p), nil
}

// canonical resolves symbolic links when it can, so one directory reached
// two ways compares equal.
func canonical(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Skills lists every visible skill, profiles included, sorted by name.
func (s *Store) Skills() []Skill {
	return slices.Clone(s.skills)
}

// Skill returns the visible skill of that name.
func (s *Store) Skill(name string) (Skill, bool) {
	i, ok := slices.BinarySearchFunc(s.skills, name, func(sk Skill, n string) int { return strings.Compare(sk.Name, n) })
	if !ok {
		return Skill{}, false
	}
	return s.skills[i], true
}

// Profiles lists the visible subagent profiles, sorted by name.
func (s *Store) Profiles() []Profile {
	var out []Profile
	for _, sk := range s.skills {
		if sk.IsProfile() {
			out = append(out, Profile{Skill: sk})
		}
	}
	return out
}

// Profile returns the named subagent profile. For any other name the error
// wraps ErrUnknownProfile, says why the name does not qualify and lists the
// profiles that do.
func (s *Store) Profile(name string) (Profile, error) {
	sk, ok := s.Skill(name)
	if ok && sk.IsProfile() {
		return Profile{Skill: sk}, nil
	}
	names := make([]string, 0, len(s.skills))
	for _, p := range s.Profiles() {
		names = append(names, p.Name)
	}
	available := "none"
	if len(names) > 0 {
		available = strings.Join(names, ", ")
	}
	switch {
	case ok:
		return Profile{}, fmt.Errorf("%w %q: the skill in %s does not set runAs: subagent (available: %s)", ErrUnknownProfile, name, sk.Path, available)
	case s.disabled[name]:
		return Profile{}, fmt.Errorf("%w %q: disabled by [skills] disabled_skills (available: %s)", ErrUnknownProfile, name, available)
	default:
		return Profile{}, fmt.Errorf("%w %q (available: %s)", ErrUnknownProfile, name, available)
	}
}
