package session

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MaxInstructionBytes caps the project instructions placed in the system
// prompt, all files together: they are sent with every request.
const MaxInstructionBytes = 32 << 10

// Instruction file names. In each directory AGENTS.md is read, or
// CLAUDE.md where there is no AGENTS.md, and then REASONIX.md, which comes
// later and so takes precedence where they disagree.
const (
	AgentsFile   = "AGENTS.md"
	ClaudeFile   = "CLAUDE.md"
	ReasonixFile = "REASONIX.md"
)

// Instruction is one instruction file read for the system prompt.
type Instruction struct {
	// Path is the file's absolute path.
	Path string
	// Text is what the prompt holds of it; Cut counts the bytes left out
	// to stay under MaxInstructionBytes.
	Text string
	Cut  int
}

// Instructions are the standing instructions of a workspace.
type Instructions struct {
	Files []Instruction
	// Skipped says why files that were found were not read (a symlink
	// leading out of its tree, an unreadable file).
	Skipped []string
}

// LoadInstructions finds the instruction files for a session in cwd:
// those of home (the Reasonix home) first, then of each directory from
// the repository root (the nearest parent holding .git; cwd alone outside
// a repository) down to cwd, so the most specific come last. A file that
// is a symlink must resolve inside its own tree (the repository, or the
// home), so a cloned repository cannot put ~/.ssh or /etc into the
// prompt; others are skipped with a reason. The total is capped at
// MaxInstructionBytes: a file past the cap is cut with a notice.
func LoadInstructions(cwd, home string) Instructions {
	var in Instructions
	budget := MaxInstructionBytes
	read := func(dir, root string) {
		names := []string{AgentsFile, ReasonixFile}
		if _, err := os.Lstat(filepath.Join(dir, AgentsFile)); errors.Is(err, fs.ErrNotExist) {
			names[0] = ClaudeFile
		}
		for _, name := range names {
			ins, skip, ok := readInstruction(filepath.Join(dir, name), root, budget)
			if skip != "" {
				in.Skipped = append(in.Skipped, skip)
			}
			if ok {
				budget -= len(ins.Text)
				in.Files = append(in.Files, ins)
			}
		}
	}
	if home != "" {
		if h, err := filepath.Abs(home); err == nil {
			read(h, h)
		}
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return in
	}
	root := repoRoot(cwd)
	var dirs []string
	for d := cwd; ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if d == root || filepath.Dir(d) == d {
			break
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		read(dirs[i], root)
	}
	return in
}

// repoRoot is the nearest directory from cwd up that holds .git, or cwd.
func repoRoot(cwd string) string {
	for d := cwd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return cwd
		}
	}
}

// readInstruction reads path within budget bytes. ok is false when there
// is no such file or it was skipped; skip then says why, if it exists.
func readInstruction(path, root string, budget int) (ins Instruction, skip string, ok bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ins, "", false
		}
		return ins, fmt.Sprintf("%s: %v", path, err), false
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return ins, fmt.Sprintf("%s: %v", path, err), false
		}
		realRoot, err := filepath.EvalSymlinks(root)
		if err != nil || !within(realRoot, target) {
			return ins, fmt.Sprintf("%s: a symlink to %s, outside %s", path, target, root), false
		}
		if fi, err = os.Stat(target); err != nil {
			return ins, fmt.Sprintf("%s: %v", path, err), false
		}
	}
	if !fi.Mode().IsRegular() {
		return ins, fmt.Sprintf("%s: not a regular file", path), false
	}
	f, err := os.Open(path)
	if err != nil {
		return ins, fmt.Sprintf("%s: %v", path, err), false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(max(budget, 0))+1))
	if err != nil {
		return ins, fmt.Sprintf("%s: %v", path, err), false
	}
	ins = Instruction{Path: path, Text: string(data)}
	if len(data) > budget {
		ins.Text = string(data[:max(budget, 0)])
		ins.Cut = int(fi.Size()) - len(ins.Text)
	}
	return ins, "", true
}

func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Block renders the instructions for the system prompt, or "" when there
// are none. Each file is headed by its path; a cut file ends with a line
// saying how much was left out.
func (in Instructions) Block() string {
	if len(in.Files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Project instructions (from the files below; later files take precedence over earlier ones):")
	for _, f := range in.Files {
		fmt.Fprintf(&b, "\n\n<instructions path=%q>\n%s", f.Path, strings.TrimRight(f.Text, "\n"))
		if f.Cut > 0 {
			fmt.Fprintf(&b, "\n[%d bytes of this file were left out: project instructions are capped at %d KiB]", f.Cut, MaxInstructionBytes>>10)
		}
		b.WriteString("\n</instructions>")
	}
	return b.String()
}

// Notices are the lines a frontend shows about the instructions: files cut
// to fit and files skipped.
func (in Instructions) Notices() []string {
	var out []string
	for _, f := range in.Files {
		if f.Cut > 0 {
			out = append(out, fmt.Sprintf("project instructions: %s cut by %d bytes (the cap is %d KiB for all files)", f.Path, f.Cut, MaxInstructionBytes>>10))
		}
	}
	for _, s := range in.Skipped {
		out = append(out, "project instructions: skipped "+s)
	}
	return out
}

// Paths lists the files read.
func (in Instructions) Paths() []string {
	out := make([]string, len(in.Files))
	for i, f := range in.Files {
		out[i] = f.Path
	}
	return out
}
