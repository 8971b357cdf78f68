package command

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// maxFileBytes bounds a command file: a template is a prompt, and a file
// of megabytes there is a mistake, not a command.
const maxFileBytes = 256 << 10

// mcpPrefix starts the names the session gives MCP prompts
// (/mcp__<server>__<prompt>); a custom command may not take one.
const mcpPrefix = "mcp__"

// Dirs returns the commands directories for a user and a workspace, in
// the order Load wants them: the user's <home>/commands, then the
// project's <cwd>/.reasonix/commands, so the project wins a clash. An
// empty home has no user directory; when both are the same directory (a
// workspace that is the home's parent) it is listed once, as the
// project's.
func Dirs(home, cwd string) []string {
	project := filepath.Join(cwd, ".reasonix", "commands")
	if home == "" {
		return []string{project}
	}
	user := filepath.Join(home, "commands")
	if filepath.Clean(user) == filepath.Clean(project) {
		return []string{project}
	}
	return []string{user, project}
}

// Load reads the custom commands of dirs, lowest precedence first: a name
// in a later directory replaces the same name in an earlier one. The last
// directory is the project's (Source "project"), as Dirs orders them;
// every earlier one is the user's. A directory that does not exist holds
// no commands and is no problem. The commands come back sorted by name.
func Load(dirs ...string) ([]Command, []Problem) {
	byName := map[string]Command{}
	var problems []Problem
	for i, dir := range dirs {
		source := SourceUser
		if i == len(dirs)-1 {
			source = SourceProject
		}
		cmds, probs := loadDir(dir, source)
		problems = append(problems, probs...)
		for _, c := range cmds {
			byName[c.Name] = c
		}
	}
	out := make([]Command, 0, len(byName))
	for _, c := range byName {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, problems
}

// loadDir reads one commands directory recursively. Hidden files and
// directories are passed over, as are files not ending in ".md"; a file
// named just ".md" is reported, since it looks meant as a command.
func loadDir(dir, source string) ([]Command, []Problem) {
	var cmds []Command
	var problems []Problem
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, []Problem{{Path: dir, Err: err}}
	case !info.IsDir():
		return nil, []Problem{{Path: dir, Err: errors.New("not a directory")}}
	}
	// The trailing separator makes the walk start from where a symlinked
	// commands directory (kept in a dotfiles repository, say) points;
	// symlinked directories below it are not followed.
	err = filepath.WalkDir(dir+string(filepath.Separator), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			problems = append(problems, Problem{Path: path, Err: err})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() && filepath.Clean(path) == filepath.Clean(dir) {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") && d.Name() != ".md" {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".md") {
			return nil
		}
		c, err := loadFile(dir, path)
		if err != nil {
			problems = append(problems, Problem{Path: path, Err: err})
			return nil
		}
		c.Source = source
		cmds = append(cmds, c)
		return nil
	})
	if err != nil {
		problems = append(problems, Problem{Path: dir, Err: err})
	}
	return cmds, problems
}

func loadFile(dir, path string) (Command, error) {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return Command{}, fmt.Errorf("name command: %w", err)
	}
	name, err := nameOf(rel)
	if err != nil {
		return Command{}, err
	}
	info, err := os.Stat(path)
	if err != nil {
		return Command{}, fmt.Errorf("read command: %w", err)
	}
	if info.Size() > maxFileBytes {
		return Command{}, fmt.Errorf("command file is %d bytes, over the %d byte limit", info.Size(), maxFileBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Command{}, fmt.Errorf("read command: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return Command{}, err
	}
	c.Name, c.Path = name, path
	return c, nil
}

// nameOf turns a file's path below its commands directory into the
// command's name, refusing names Split could not parse back and names
// that belong to something else.
func nameOf(rel string) (string, error) {
	segs := strings.Split(filepath.ToSlash(strings.TrimSuffix(rel, ".md")), "/")
	for _, s := range segs {
		if s == "" {
			return "", errors.New("empty command name")
		}
		for i := 0; i < len(s); i++ {
			if s[i] == ':' || !nameByte(s[i]) {
				return "", fmt.Errorf("command name %q: use only letters, digits, '_' and '-' in file and directory names", s)
			}
		}
	}
	name := strings.Join(segs, ":")
	if IsBuiltin(name) {
		return "", fmt.Errorf("command /%s would shadow the built-in /%s; rename the file", name, name)
	}
	if strings.HasPrefix(name, mcpPrefix) {
		return "", fmt.Errorf("command /%s: names starting %q are MCP prompts'", name, mcpPrefix)
	}
	return name, nil
}
