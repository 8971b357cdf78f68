package memory

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"reasonix/core/atomicfile"
)

const (
	// MaxBodyBytes caps one memory's content. A memory is read back into
	// later sessions' context, so it should be a fact, not a document.
	MaxBodyBytes = 16 << 10
	// MaxDescriptionRunes caps the one-line summary.
	MaxDescriptionRunes = 200
	// ArchiveDir is the folder, inside a scope's directory, that forgotten
	// memories move to.
	ArchiveDir = "archive"
	// archiveStamp names an archived file after the moment it was
	// forgotten; it sorts in time order and holds no ':' (Windows).
	archiveStamp = "20060102T150405Z"
)

// ErrNotFound reports a memory that does not exist in the scope asked.
var ErrNotFound = errors.New("no such memory")

// Store reads and writes the memory files of one project and one user.
// It holds only paths, so it is safe for concurrent use; two processes
// saving the same memory at once leave one of the two versions, whole.
type Store struct {
	project string // <project>/.reasonix/memory, or "" when there is no project
	user    string // <home>/memory, or "" when there is no home
	now     func() time.Time
}

// NewStore returns the store for the project directory and the reasonix
// home. Either may be empty; the scope it would hold is then unavailable
// and using it is an error that says so.
func NewStore(projectDir, home string) *Store {
	s := &Store{now: time.Now}
	if projectDir != "" {
		s.project = filepath.Join(projectDir, ".reasonix", "memory")
	}
	if home != "" {
		s.user = filepath.Join(home, "memory")
	}
	return s
}

// Dir is the directory that holds sc's memories.
func (s *Store) Dir(sc Scope) (string, error) {
	switch sc {
	case Project:
		if s.project == "" {
			return "", errors.New("project memory needs a project directory, and this run has none")
		}
		return s.project, nil
	case User:
		if s.user == "" {
			return "", errors.New("user memory needs the reasonix home directory, and this run has none")
		}
		return s.user, nil
	default:
		return "", fmt.Errorf("unknown memory scope %q", sc)
	}
}

// Available lists the scopes this store can use, in precedence order.
func (s *Store) Available() []Scope {
	var out []Scope
	for _, sc := range Scopes {
		if _, err := s.Dir(sc); err == nil {
			out = append(out, sc)
		}
	}
	return out
}

// path is the file of sc's memory name, after validating both.
func (s *Store) path(sc Scope, name string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	dir, err := s.Dir(sc)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name+".md"), nil
}

// Saved reports what Save did.
type Saved struct {
	// Memory is the memory as it now stands.
	Memory Memory
	// Path is its file.
	Path string
	// Created is set when no memory of that name existed in the scope.
	Created bool
	// Unchanged is set when the memory already said exactly this, in
	// which case the file was not rewritten.
	Unchanged bool
}

// Save creates or replaces sc's memory name with body. An empty
// description keeps the existing memory's, or, for a new memory, is taken
// from the body's first line. The file is replaced atomically.
func (s *Store) Save(sc Scope, name, description, body string) (Saved, error) {
	path, err := s.path(sc, name)
	if err != nil {
		return Saved{}, err
	}
	body = strings.TrimSpace(body)
	switch {
	case body == "":
		return Saved{}, errors.New("memory content is empty: write the fact to remember")
	case len(body) > MaxBodyBytes:
		return Saved{}, fmt.Errorf("memory content is %d bytes; the limit is %d: save the fact itself and leave the details in the project's files", len(body), MaxBodyBytes)
	case !utf8.ValidString(body):
		return Saved{}, errors.New("memory content is not valid UTF-8")
	}
	description = oneLine(description)
	if n := utf8.RuneCountInString(description); n > MaxDescriptionRunes {
		return Saved{}, fmt.Errorf("description is %d characters; the limit is %d: keep it to one short line", n, MaxDescriptionRunes)
	}

	old, err := s.load(sc, name, path)
	created := errors.Is(err, ErrNotFound)
	if err != nil && !created {
		return Saved{}, err
	}
	if description == "" {
		description = old.Description
	}
	if description == "" {
		first, _, _ := strings.Cut(body, "\n")
		description = summarize(first)
	}
	if !created && old.Body == body && old.Description == description {
		return Saved{Memory: old, Path: path, Unchanged: true}, nil
	}
	m := Memory{Name: name, Description: description, Scope: sc, Updated: s.now().UTC().Truncate(time.Second), Body: body}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return Saved{}, fmt.Errorf("create memory directory: %w", err)
	}
	if err := atomicfile.Write(path, Format(m), 0o644); err != nil {
		return Saved{}, fmt.Errorf("save memory %s: %w", m.Ref(), err)
	}
	return Saved{Memory: m, Path: path, Created: created}, nil
}

// summarize makes a description from a line of the body: Markdown heading
// and list marks dropped, clipped on a word where it can be.
func summarize(line string) string {
	line = strings.TrimLeft(oneLine(line), "#*->` ")
	const max = 80
	if utf8.RuneCountInString(line) <= max {
		return line
	}
	r := []rune(line)[:max-1]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > max/2 {
		cut = cut[:i]
	}
	return cut + "…"
}

// Read returns sc's memory name, or an error wrapping ErrNotFound.
func (s *Store) Read(sc Scope, name string) (Memory, error) {
	path, err := s.path(sc, name)
	if err != nil {
		return Memory{}, err
	}
	return s.load(sc, name, path)
}

// load reads the memory file at path. Name and scope come from where the
// file is, whatever its frontmatter claims: that is where the tools find
// it, and a copied file must not pose as another memory.
func (s *Store) load(sc Scope, name, path string) (Memory, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Memory{}, fmt.Errorf("%s/%s: %w", sc, name, ErrNotFound)
	}
	if err != nil {
		return Memory{}, fmt.Errorf("read memory %s/%s: %w", sc, name, err)
	}
	m := Parse(data)
	m.Name, m.Scope = name, sc
	return m, nil
}

// Entry is a memory as seen across scopes.
type Entry struct {
	Memory
	// Hides is the scope of a same-named memory this one takes precedence
	// over, or "" when there is none.
	Hides Scope
}

// List returns the active memories of the given scopes (every available
// one when none are given), in scope precedence order, then by name. Where
// two scopes hold a name, only the one that wins is listed, with Hides
// set. Archived files, and files whose names are not valid memory names
// (the tools could not address them), are left out.
func (s *Store) List(scopes ...Scope) ([]Entry, error) {
	if len(scopes) == 0 {
		scopes = s.Available()
	}
	var out []Entry
	seen := map[string]int{}
	for _, sc := range Scopes {
		if !slices.Contains(scopes, sc) {
			continue
		}
		mems, err := s.scan(sc)
		if err != nil {
			return nil, err
		}
		for _, m := range mems {
			if i, dup := seen[m.Name]; dup {
				out[i].Hides = sc
				continue
			}
			seen[m.Name] = len(out)
			out = append(out, Entry{Memory: m})
		}
	}
	return out, nil
}

// scan reads every active memory of sc, sorted by name. A missing
// directory holds no memories.
func (s *Store) scan(sc Scope) ([]Memory, error) {
	dir, err := s.Dir(sc)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s memories: %w", sc, err)
	}
	var out []Memory
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok || !e.Type().IsRegular() || ValidateName(name) != nil {
			continue
		}
		m, err := s.load(sc, name, filepath.Join(dir, e.Name()))
		if errors.Is(err, ErrNotFound) {
			continue // forgotten between the listing and the read
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Archive forgets sc's memory name: its file moves to the scope's archive
// folder as <name>-<UTC time>.md (with a -2, -3… suffix if that is taken),
// and the new path is returned. The file is renamed, not copied, so the
// memory is either active or archived, never both or neither.
func (s *Store) Archive(sc Scope, name string) (string, error) {
	path, err := s.path(sc, name)
	if err != nil {
		return "", err
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s/%s: %w", sc, name, ErrNotFound)
	} else if err != nil {
		return "", fmt.Errorf("forget memory %s/%s: %w", sc, name, err)
	}
	archive := filepath.Join(filepath.Dir(path), ArchiveDir)
	if err := os.MkdirAll(archive, 0o755); err != nil {
		return "", fmt.Errorf("create memory archive: %w", err)
	}
	base := name + "-" + s.now().UTC().Format(archiveStamp)
	dst := filepath.Join(archive, base+".md")
	for n := 2; ; n++ {
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			break
		} else if err != nil {
			return "", fmt.Errorf("forget memory %s/%s: %w", sc, name, err)
		}
		dst = filepath.Join(archive, base+"-"+strconv.Itoa(n)+".md")
	}
	if err := os.Rename(path, dst); err != nil {
		return "", fmt.Errorf("forget memory %s/%s: %w", sc, name, err)
	}
	return dst, nil
}
