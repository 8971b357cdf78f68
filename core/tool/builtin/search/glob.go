package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"reasonix/core/gitignore"
	"reasonix/core/tool"
	"reasonix/core/tool/builtin/toolpath"
)

func init() {
	tool.RegisterBuiltin("glob", func(env tool.Env) tool.Tool { return &glob{env: env} })
}

// glob finds files by path pattern, honouring .gitignore.
type glob struct{ env tool.Env }

type globArgs struct {
	Pattern string `json:"pattern" arg:"required"`
	Path    string `json:"path"`
}

func (*glob) Name() string { return "glob" }

func (t *glob) Description() string {
	return fmt.Sprintf("Find files whose path matches a glob pattern, e.g. \"**/*.go\", \"cmd/*/main.go\" or \"src/**/*.{ts,tsx}\". "+
		"The pattern is matched against the whole path relative to the search directory: \"*\" and \"?\" stay within one "+
		"directory level, \"**\" matches any number of directories (including none), [abc] is a character class and "+
		"{a,b} is alternation, so \"*.go\" only matches files directly in the search directory. "+
		"Only files (and symbolic links) are listed, not directories. Files ignored by .gitignore and the .git directory "+
		"are skipped; symbolic links are not followed. Paths the sandbox does not let you read are left out and only "+
		"counted. Results are paths relative to the workspace root, sorted; at most %d "+
		"are listed and the rest are counted. No match is a normal result, not an error. "+
		"Fails on an invalid pattern or a path that is not a directory. Use grep to search file contents.",
		t.env.Limits.WithDefaults().ListEntries)
}

func (*glob) Schema() json.RawMessage {
	return json.RawMessage(`{
		"type": "object",
		"properties": {
			"pattern": {"type": "string", "description": "Glob pattern relative to the search directory, e.g. \"**/*_test.go\"."},
			"path": {"type": "string", "description": "Directory to search, relative to the workspace root or absolute. Defaults to the workspace root."}
		},
		"required": ["pattern"],
		"additionalProperties": false
	}`)
}

func (*glob) ReadOnly() bool { return true }

func (t *glob) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var args globArgs
	if err := tool.DecodeArgs("glob", raw, &args); err != nil {
		return "", err
	}
	set, err := compileGlob(args.Pattern, false)
	if err != nil {
		return "", fmt.Errorf("glob: %w", err)
	}
	base, shown, err := toolpath.ResolveDir(t.env, "glob", args.Path, "pass its directory as path")
	if err != nil {
		return "", err
	}

	tree := newSearchTree(t.env, base)
	limit := t.env.Limits.WithDefaults().ListEntries
	var kept []string
	total, skipped := 0, 0
	err = tree.m.Walk(tree.start, func(rel string, d fs.DirEntry, err error) error {
		sub, _ := tree.underStart(rel)
		if err != nil {
			if sub == "" {
				return err
			}
			return nil // an unreadable directory below the base is skipped
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			switch {
			case sub == "":
				return nil
			case !set.mayContain(sub):
				return fs.SkipDir
			case !tree.readable(rel):
				skipped++
				return fs.SkipDir
			}
			return nil
		}
		if !set.match(sub, "") {
			return nil
		}
		if !tree.readable(rel) {
			skipped++
			return nil
		}
		total++
		kept = append(kept, tree.display(rel))
		if len(kept) > 2*limit {
			// Keep only the smallest names so memory stays bounded by the cap.
			slices.Sort(kept)
			kept = kept[:limit]
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("glob: %w", err)
	}
	if total == 0 {
		return fmt.Sprintf("no files match %q under %s", args.Pattern, shown) + skippedNote(" ", skipped), nil
	}
	slices.Sort(kept)
	kept = kept[:min(len(kept), limit)]
	var b strings.Builder
	for _, p := range kept {
		b.WriteString(p)
		b.WriteByte('\n')
	}
	if omitted := total - len(kept); omitted > 0 {
		fmt.Fprintf(&b, "[%d more files not shown; the list is capped at %d. Narrow the pattern or path.]\n", omitted, limit)
	}
	b.WriteString(skippedNote("", skipped))
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// skippedNote is the line that tells the model how many paths a walk left
// out because the guard refused to let them be read, without naming any;
// lead goes before it. Nothing was skipped, nothing is said.
func skippedNote(lead string, n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return lead + "[1 path skipped by read restrictions]"
	}
	return fmt.Sprintf("%s[%d paths skipped by read restrictions]", lead, n)
}

// searchTree is the tree a glob or grep call walks. When the searched path
// lies inside the workspace the walk is rooted at the workspace root, so the
// workspace's .gitignore files apply and results read relative to it;
// otherwise it is rooted at the searched path itself.
type searchTree struct {
	env    tool.Env
	m      *gitignore.Matcher
	root   string // absolute root of the walk
	start  string // slash path of the searched path relative to root, "" for root
	inRoot bool   // root is the workspace root, so display paths are relative
}

func newSearchTree(env tool.Env, abs string) *searchTree {
	t := &searchTree{env: env}
	if env.Root != "" {
		roots := []string{env.Root}
		if real, err := filepath.EvalSymlinks(env.Root); err == nil && real != env.Root {
			roots = append(roots, real)
		}
		for _, r := range roots {
			if rel, ok := toolpath.RelUnder(r, abs); ok {
				t.m = gitignore.New(r)
				t.root = t.m.Root()
				t.inRoot = true
				if rel != "." {
					t.start = rel
				}
				return t
			}
		}
	}
	t.m = gitignore.New(abs)
	t.root = t.m.Root()
	return t
}

// underStart returns rel relative to the searched path ("" for the path
// itself) and whether rel lies inside it.
func (t *searchTree) underStart(rel string) (string, bool) {
	if rel == "." {
		rel = ""
	}
	if t.start == "" {
		return rel, true
	}
	if rel == t.start {
		return "", true
	}
	if strings.HasPrefix(rel, t.start) && rel[len(t.start)] == '/' {
		return rel[len(t.start)+1:], true
	}
	return "", false
}

// abs turns a walk path into an absolute filesystem path.
func (t *searchTree) abs(rel string) string {
	if rel == "" || rel == "." {
		return t.root
	}
	return filepath.Join(t.root, filepath.FromSlash(rel))
}

// display renders a walk path for a result: relative to the workspace root
// when the walk is rooted there, absolute otherwise.
func (t *searchTree) display(rel string) string {
	if t.inRoot {
		if rel == "" {
			return "."
		}
		return rel
	}
	return t.abs(rel)
}

// readable asks the guard, when there is one, whether rel may be inspected;
// paths it refuses are left out of results and only counted.
func (t *searchTree) readable(rel string) bool {
	if t.env.Guard == nil {
		return true
	}
	_, err := t.env.Guard.ReadPath(t.abs(rel))
	return err == nil
}

// globSet is a compiled glob: its brace alternatives, each split into path
// elements. A pattern without "/" compiled in basename mode matches the last
// element of a path at any depth, as grep's include filter wants.
type globSet struct {
	alts     [][]string
	basename []bool
}

// maxGlobAlternatives bounds brace expansion, which grows exponentially
// with nested or repeated braces.
const maxGlobAlternatives = 256

// compileGlob parses pattern: "*", "?", "[...]" and "\" escapes within a
// path element as in path.Match, "**" as a whole element for any number of
// directories, and "{a,b}" alternation (nestable). With basenameMode, an
// alternative without "/" matches the file name at any depth.
func compileGlob(pattern string, basenameMode bool) (*globSet, error) {
	if strings.TrimSpace(pattern) == "" {
		return nil, errors.New("pattern is empty")
	}
	alts, err := expandBraces(pattern)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	set := &globSet{}
	for _, alt := range alts {
		alt = strings.TrimPrefix(alt, "./")
		if strings.HasPrefix(alt, "/") || filepath.IsAbs(alt) {
			return nil, fmt.Errorf("pattern %q must be relative; put the directory in path instead", pattern)
		}
		els := strings.Split(alt, "/")
		els = slices.DeleteFunc(els, func(e string) bool { return e == "" || e == "." })
		if len(els) == 0 {
			return nil, fmt.Errorf("pattern %q matches no file", pattern)
		}
		for _, e := range els {
			if e == ".." {
				return nil, fmt.Errorf("pattern %q may not contain \"..\"; put the directory in path instead", pattern)
			}
			if _, err := path.Match(e, ""); err != nil {
				return nil, fmt.Errorf("pattern %q: malformed element %q (check [ ] and \\ escapes)", pattern, e)
			}
		}
		set.alts = append(set.alts, els)
		set.basename = append(set.basename, basenameMode && !strings.Contains(alt, "/"))
	}
	return set, nil
}

// match reports whether the slash path rel matches any alternative. A
// non-empty alt is a second spelling of the same path (relative to another
// base) that path-mode alternatives may match instead.
func (g *globSet) match(rel, alt string) bool {
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	for i, els := range g.alts {
		if g.basename[i] {
			if ok, _ := path.Match(els[0], name); ok {
				return true
			}
			continue
		}
		if matchElements(els, strings.Split(rel, "/"), false) {
			return true
		}
		if alt != "" && matchElements(els, strings.Split(alt, "/"), false) {
			return true
		}
	}
	return false
}

// mayContain reports whether some path below the directory dir could match,
// which lets a walk skip directories the pattern cannot reach.
func (g *globSet) mayContain(dir string) bool {
	for i, els := range g.alts {
		if g.basename[i] || matchElements(els, strings.Split(dir, "/"), true) {
			return true
		}
	}
	return false
}

// matchElements matches path elements against pattern elements. With
// prefix, name is a directory and the question is whether a path below it
// could match.
func matchElements(pat, name []string, prefix bool) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			if prefix {
				return true
			}
			for i := 0; i <= len(name); i++ {
				if matchElements(pat[1:], name[i:], false) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return prefix
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0 && !prefix
}

// expandBraces expands "{a,b}" alternation, nested or repeated, leaving
// backslash escapes in place for path.Match. A pattern without braces is
// returned as is; a "{" left open is an error, a stray "}" a literal.
func expandBraces(p string) ([]string, error) {
	open := -1
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue // a stray "}" is an ordinary character
			}
			depth--
			if depth > 0 {
				continue
			}
			// p[open:i+1] is the first top-level group: split its body on
			// top-level commas and expand each choice with the rest.
			var choices []string
			start, d := open+1, 0
			for j := open + 1; j < i; j++ {
				switch p[j] {
				case '\\':
					j++
				case '{':
					d++
				case '}':
					d--
				case ',':
					if d == 0 {
						choices = append(choices, p[start:j])
						start = j + 1
					}
				}
			}
			choices = append(choices, p[start:i])
			var out []string
			for _, c := range choices {
				more, err := expandBraces(p[:open] + c + p[i+1:])
				if err != nil {
					return nil, err
				}
				out = append(out, more...)
				if len(out) > maxGlobAlternatives {
					return nil, fmt.Errorf("braces expand to more than %d alternatives", maxGlobAlternatives)
				}
			}
			return out, nil
		}
	}
	if depth > 0 {
		return nil, errors.New("unbalanced \"{\"")
	}
	return []string{p}, nil
}
