package permission

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"reasonix/core/permission/shell"
	"reasonix/core/text"
)

// callArgs holds the argument values rules can be written against. The
// fields are decoded with encoding/json into a struct, exactly as the
// built-in tools decode their own arguments, so a key spelled "Command" or
// given twice resolves to the same value the tool will act on.
type callArgs struct {
	Command     string `json:"command"`
	Path        string `json:"path"`
	FilePath    string `json:"file_path"`
	Destination string `json:"destination"`
	Pattern     string `json:"pattern"`
}

// decodeCallArgs extracts the subjects from raw tool arguments. Like the
// tools, it treats empty or null arguments as {} and unwraps an object that
// arrived double-encoded as a JSON string. Arguments that are not an object
// expose no subject.
func decodeCallArgs(raw json.RawMessage) callArgs {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var inner string
		if json.Unmarshal(raw, &inner) == nil {
			raw = bytes.TrimSpace([]byte(inner))
		}
	}
	var a callArgs
	if len(raw) == 0 || raw[0] != '{' {
		return a
	}
	// A mistyped key leaves the others decoded: the tool itself will refuse
	// such a call, so nothing is gained by discarding what did decode.
	_ = json.Unmarshal(raw, &a)
	return a
}

// call is one tool call as the matchers see it. The shell analysis and the
// resolution of each path are done at most once per call, however many
// rules look at them.
type call struct {
	tool  string
	args  callArgs
	root  string // slash-separated and clean, or ""
	home  string // slash-separated and clean, or ""
	place placer
	shell *shell.Command
	// readings caches resolveSubject by path argument.
	readings map[string]readings
}

// readings are the absolute forms a path argument may denote, or the
// reason its real path is unknown.
type readings struct {
	paths []string
	err   error
}

func newCall(tool string, args json.RawMessage, root, home string) *call {
	c := &call{tool: tool, args: decodeCallArgs(args), root: cleanDir(root), home: cleanDir(home)}
	c.place = placer{root: c.root, home: c.home}
	return c
}

// bash returns the analysis of the call's command, computing it once.
func (c *call) bash() *shell.Command {
	if c.shell == nil {
		c.shell = shell.Analyze(c.args.Command)
	}
	return c.shell
}

// blindCommand returns, for a bash call, why the program its command runs
// cannot be told from the text (see shell.Command.Dynamic), else "".
func (c *call) blindCommand() string {
	if toolFamily[c.tool] != familyBash || c.args.Command == "" {
		return ""
	}
	return c.bash().Dynamic()
}

// EditPaths returns the path arguments an Edit-family call (write_file,
// edit_file, multi_edit, move_file) writes, as written and decoded exactly
// as the rules read them: path, file_path and destination, blank ones left
// out. It returns nil for any other tool. It lets a caller find writes to
// files that need more than a rule, such as those that confer trust.
func EditPaths(tool string, args json.RawMessage) []string {
	if toolFamily[tool] != familyEdit {
		return nil
	}
	return newCall(tool, args, "", "").pathSubjects()
}

// pathSubjects lists the paths a file tool call touches. move_file touches
// both its source and its destination; glob lists what its pattern matches
// under its search directory.
func (c *call) pathSubjects() []string {
	var out []string
	for _, p := range []string{c.args.Path, c.args.FilePath, c.args.Destination} {
		if strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
	}
	if c.tool == "glob" && strings.TrimSpace(c.args.Pattern) != "" {
		base := c.args.Path
		if strings.TrimSpace(base) == "" {
			base = "."
		}
		out = append(out, base+"/"+c.args.Pattern)
	}
	return out
}

// literalSubject is what a specifier of a tool outside the families is
// compared with: the first of the known keys the arguments expose.
func (c *call) literalSubject() string {
	for _, s := range []string{c.args.Command, c.args.Path, c.args.FilePath, c.args.Pattern} {
		if s != "" {
			return s
		}
	}
	return ""
}

// foldPathCase is set where file systems usually ignore case, so a rule for
// .env also governs .ENV there.
var foldPathCase = runtime.GOOS == "windows" || runtime.GOOS == "darwin"

// resolveSubject returns the absolute, clean forms a path argument may
// denote. The built-in tools do not expand "~", but a path guard might, so
// a path starting with "~/" yields both readings and the matchers demand
// that an allow holds for all of them and a deny for any. With a resolver
// each reading's real path is one more; an error means the argument's real
// path is unknown.
func (c *call) resolveSubject(p string) ([]string, error) {
	if r, ok := c.readings[p]; ok {
		return r.paths, r.err
	}
	out := []string{c.absolute(p)}
	joined := []string{c.joined(p)}
	if s := filepath.ToSlash(p); c.home != "" && (s == "~" || strings.HasPrefix(s, "~/")) {
		out = append(out, path.Clean(c.home+s[1:]))
		joined = append(joined, filepath.FromSlash(c.home+s[1:]))
	}
	var err error
	if c.place.resolve != nil {
		for _, j := range joined {
			real, rerr := c.place.resolve(j)
			if rerr != nil {
				err = fmt.Errorf("cannot tell which file %s is: %w", text.OneLine(p, 40), rerr)
				break
			}
			if real = filepath.ToSlash(filepath.Clean(real)); !slices.Contains(out, real) {
				out = append(out, real)
			}
		}
	}
	if foldPathCase {
		for i := range out {
			out[i] = strings.ToLower(out[i])
		}
	}
	if c.readings == nil {
		c.readings = map[string]readings{}
	}
	c.readings[p] = readings{out, err}
	return out, err
}

// matchPaths applies a glob rule to the call's paths. An allow (all) needs
// every path, under every reading, to match one of the glob's spellings; a
// deny or ask (!all) needs one. A call that exposes no path matches
// neither way. A path whose real location is unknown matches as a deny or
// ask, with that as the detail, and never as an allow.
func (c *call) matchPaths(spec string, all bool) (bool, string) {
	subjects := c.pathSubjects()
	if len(subjects) == 0 {
		return false, ""
	}
	g, ok := c.place.spellings(spec)
	if !ok {
		return false, ""
	}
	for _, s := range subjects {
		names, err := c.resolveSubject(s)
		if err != nil {
			if all {
				return false, ""
			}
			return true, err.Error()
		}
		for _, n := range names {
			m := g.match(n)
			if m && !all {
				return true, ""
			}
			if !m && all {
				return false, ""
			}
		}
	}
	return all, ""
}

// absolute resolves a path argument the way the file tools do: against
// the root when it is relative, cleaned with the platform's rules (so a
// Windows volume survives ".."), and returned with forward slashes.
func (c *call) absolute(p string) string {
	native := filepath.FromSlash(p)
	if c.root != "" && !isAbs(filepath.ToSlash(p)) {
		native = filepath.Join(filepath.FromSlash(c.root), native)
	}
	return filepath.ToSlash(filepath.Clean(native))
}

// joined is a path argument made absolute against the root but not
// cleaned, in the platform's form, for a resolver: only a resolver that
// walks the path as the kernel does can say where a ".." after a symlink
// leads.
func (c *call) joined(p string) string {
	native := filepath.FromSlash(p)
	if c.root != "" && !isAbs(filepath.ToSlash(p)) {
		native = filepath.FromSlash(c.root) + string(filepath.Separator) + native
	}
	return native
}

// anchor makes a slash-separated glob absolute against root (when it is
// relative and root is known) and cleans it. Globs keep "/" semantics on
// every platform because a backslash in them is an escape.
func anchor(root, p string) string {
	if root == "" || isAbs(p) {
		return path.Clean(p)
	}
	return path.Clean(root + "/" + p)
}

// isAbs reports whether a slash-separated path is absolute on this
// platform or rooted ("/x" is rooted on the current drive on Windows).
func isAbs(p string) bool {
	return strings.HasPrefix(p, "/") || filepath.IsAbs(filepath.FromSlash(p))
}

// cleanDir normalises a root or home directory; "" stays "".
func cleanDir(d string) string {
	if d == "" {
		return ""
	}
	return path.Clean(filepath.ToSlash(d))
}

// matchGlob reports whether the slash-separated name matches pattern.
// Segments match as in path.Match; a segment that is exactly "**" matches
// zero or more whole segments, so "docs/**" covers docs itself and all
// below it. It runs in time proportional to segments(pattern) ×
// segments(name), however many "**" the pattern holds.
func matchGlob(pattern, name string) bool {
	return matchSegments(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

// matchSegments is matchGlob on a pattern and a name already split at "/".
func matchSegments(ps, ns []string) bool {
	cur := make([]bool, len(ns)+1)
	next := make([]bool, len(ns)+1)
	cur[0] = true
	for _, p := range ps {
		clear(next)
		if p == "**" {
			reached := false
			for j := range cur {
				reached = reached || cur[j]
				next[j] = reached
			}
		} else {
			for j := range ns {
				if cur[j] {
					if ok, _ := path.Match(p, ns[j]); ok {
						next[j+1] = true
					}
				}
			}
		}
		cur, next = next, cur
	}
	return cur[len(ns)]
}
