package history

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"reasonix/core/compact"
)

// Scope says which files a search covers.
type Scope string

const (
	// ScopeProject is the current project's session directory.
	ScopeProject Scope = "project"
	// ScopeGlobal is every project's sessions under the home plus the
	// compaction archives.
	ScopeGlobal Scope = "global"
)

// ArchiveSource is the Source of every message read from a compaction
// archive; a message from a transcript has its project's slug instead.
const ArchiveSource = "archive"

// ParseScope accepts "project", "global" and "" (project).
func ParseScope(s string) (Scope, error) {
	switch Scope(strings.ToLower(strings.TrimSpace(s))) {
	case "", ScopeProject:
		return ScopeProject, nil
	case ScopeGlobal:
		return ScopeGlobal, nil
	}
	return "", fmt.Errorf("scope must be %q or %q, got %q", ScopeProject, ScopeGlobal, s)
}

// Dirs lists the directories a scope covers. sessions is the project's
// transcript directory; it is part of the global scope too, even when it
// lies outside the home. Directories that do not exist yet are listed all
// the same: they hold no files.
func Dirs(home, sessions string, scope Scope) ([]string, error) {
	if scope == ScopeProject {
		if sessions == "" {
			return nil, errors.New("no project session directory")
		}
		return []string{filepath.Clean(sessions)}, nil
	}
	if home == "" {
		return nil, errors.New("no reasonix home")
	}
	projects := filepath.Join(home, "projects")
	entries, err := os.ReadDir(projects)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	var dirs []string
	seen := map[string]bool{}
	add := func(d string) {
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	for _, e := range entries {
		if e.IsDir() {
			add(filepath.Join(projects, e.Name(), "sessions"))
		}
	}
	if sessions != "" {
		add(sessions)
	}
	add(compact.ArchiveDir(home))
	return dirs, nil
}

// sourceOf names the source of the files in dir: ArchiveSource for the
// archive, the project's slug for <home>/projects/<slug>/sessions, and the
// directory itself for anything else.
func sourceOf(home, dir string) string {
	dir = filepath.Clean(dir)
	if home != "" {
		if dir == filepath.Clean(compact.ArchiveDir(home)) {
			return ArchiveSource
		}
		projects := filepath.Join(filepath.Clean(home), "projects")
		if filepath.Base(dir) == "sessions" && filepath.Dir(filepath.Dir(dir)) == projects {
			return filepath.Base(filepath.Dir(dir))
		}
	}
	return dir
}

// scopeToken is the single token that stands for a source in the index's
// scope column: "s" and the 16 hex digits of the source's FNV-1a hash,
// one word for the tokenizer whatever the source's characters.
func scopeToken(source string) string {
	h := fnv.New64a()
	h.Write([]byte(source))
	return fmt.Sprintf("s%016x", h.Sum64())
}

// A Ref names one message of one file: "<session id>#<n>" for the n-th
// message (from 1) of a transcript, "archive/<name>#<n>" for the n-th
// record of the archive file <name>.jsonl.
type Ref struct {
	// Archive is set for an archive file.
	Archive bool
	// Name is the file name without .jsonl: the session id of a
	// transcript, the timestamp of an archive.
	Name    string
	Ordinal int
}

const archiveRefPrefix = "archive/"

// String renders the ref as the tool shows it.
func (r Ref) String() string {
	s := r.Name + "#" + strconv.Itoa(r.Ordinal)
	if r.Archive {
		return archiveRefPrefix + s
	}
	return s
}

// refFor is the ref of message ordinal of the file at path.
func refFor(path string, archive bool, ordinal int) Ref {
	return Ref{Archive: archive, Name: strings.TrimSuffix(filepath.Base(path), ".jsonl"), Ordinal: ordinal}
}

// ParseRef reads a ref as String writes it. Names are restricted to the
// characters session ids and archive stamps use, so a ref can never point
// outside the directories it is looked up in.
func ParseRef(s string) (Ref, error) {
	s = strings.TrimSpace(s)
	name, num, ok := strings.Cut(s, "#")
	if !ok {
		return Ref{}, fmt.Errorf("ref %q has no \"#<message number>\"; pass a ref exactly as a search hit shows it", s)
	}
	var r Ref
	if rest, ok := strings.CutPrefix(name, archiveRefPrefix); ok {
		r.Archive, name = true, rest
	}
	if !validName(name) {
		return Ref{}, fmt.Errorf("ref %q does not name a session or archive file; pass a ref exactly as a search hit shows it", s)
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 {
		return Ref{}, fmt.Errorf("ref %q: the message number after \"#\" must be a whole number from 1", s)
	}
	r.Name, r.Ordinal = name, n
	return r, nil
}

// validName accepts the file names refs may carry: letters, digits, dot,
// dash and underscore, not starting with a dot.
func validName(s string) bool {
	if s == "" || s[0] == '.' || len(s) > 200 {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// resolve finds the file a ref names: an archive under the home, or a
// transcript in the project's directory first and then in any project's.
func (r Ref) resolve(home, sessions string) (string, error) {
	file := r.Name + ".jsonl"
	if r.Archive {
		if home == "" {
			return "", errors.New("no reasonix home")
		}
		p := filepath.Join(compact.ArchiveDir(home), file)
		if isFile(p) {
			return p, nil
		}
		return "", fmt.Errorf("ref %s: no archive file %s", r, file)
	}
	if sessions != "" {
		if p := filepath.Join(sessions, file); isFile(p) {
			return p, nil
		}
	}
	dirs, err := Dirs(home, sessions, ScopeGlobal)
	if err != nil {
		return "", fmt.Errorf("ref %s: %w", r, err)
	}
	for _, d := range dirs {
		if sourceOf(home, d) == ArchiveSource {
			continue
		}
		if p := filepath.Join(d, file); isFile(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("ref %s: no saved session %s", r, r.Name)
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
