package session

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// DefaultSystemPrompt is the standing instruction of the main agent when the
// config sets none. It never contains dynamic state (time, goal, todo): the
// system prompt is the head of every request, and any change to it resets
// the provider's prompt cache.
const DefaultSystemPrompt = `You are Reasonix, a coding agent working in the user's repository through tools.

How to work:
- Understand before you change: read the relevant files, search with grep and glob, and run the project's own commands (build, tests) with bash.
- Make the smallest change that does what was asked, in the style of the surrounding code. Prefer edit_file and multi_edit over rewriting whole files.
- Check your work: run the tests or the command that proves the change, and read the output.
- Tool results that start with "Error:" tell you what went wrong; adapt instead of repeating the same call. A "blocked" result means the user's permissions forbid that call.
- Independent read-only calls (read_file, grep, glob, ls) can be made in one step; they run in parallel.
- When you are done, answer briefly: what you changed, how you checked it, and anything left open.`

// probeTools are the commands whose presence the environment summary
// reports. Only presence is probed (a PATH lookup), not versions: running
// each tool would cost tens of milliseconds at every start.
var probeTools = []string{
	"bash", "cargo", "docker", "gcc", "git", "go", "java", "make", "node",
	"npm", "pip", "python3", "rg", "rustc",
}

// Environment describes the machine the agent works on.
type Environment struct {
	OS    string
	Arch  string
	Shell string
	Cwd   string
	Git   bool
	// Tools lists probed commands found on PATH, sorted.
	Tools []string
	// Extra maps configured tool names to their paths ([environment.tools]).
	Extra map[string]string
}

// ProbeEnvironment gathers the summary for cwd. extra comes from
// [environment.tools].
func ProbeEnvironment(cwd string, extra map[string]string) Environment {
	env := Environment{OS: runtime.GOOS, Arch: runtime.GOARCH, Cwd: cwd, Extra: extra}
	env.Shell = os.Getenv("SHELL")
	if env.Shell == "" && runtime.GOOS == "windows" {
		env.Shell = os.Getenv("ComSpec")
	}
	for dir := cwd; ; {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			env.Git = true
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	for _, name := range probeTools {
		if _, err := exec.LookPath(name); err == nil {
			env.Tools = append(env.Tools, name)
		}
	}
	return env
}

// Summary renders the environment as a deterministic block for the system
// prompt.
func (e Environment) Summary() string {
	var b strings.Builder
	b.WriteString("Environment:\n")
	fmt.Fprintf(&b, "- OS: %s/%s\n", e.OS, e.Arch)
	if e.Shell != "" {
		fmt.Fprintf(&b, "- Shell: %s\n", e.Shell)
	}
	fmt.Fprintf(&b, "- Working directory: %s\n", e.Cwd)
	if e.Git {
		b.WriteString("- The working directory is inside a git repository.\n")
	}
	if len(e.Tools) > 0 {
		fmt.Fprintf(&b, "- Commands on PATH: %s\n", strings.Join(e.Tools, ", "))
	}
	if len(e.Extra) > 0 {
		names := make([]string, 0, len(e.Extra))
		for n := range e.Extra {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(&b, "- %s: %s\n", n, e.Extra[n])
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// SystemPrompt joins the base prompt, the non-empty blocks (the project
// instructions, Instructions.Block) and, when given, the environment
// summary. All of it is fixed for the session, so the prompt cache holds.
func SystemPrompt(base string, env *Environment, blocks ...string) string {
	if strings.TrimSpace(base) == "" {
		base = DefaultSystemPrompt
	}
	for _, b := range blocks {
		if b != "" {
			base += "\n\n" + b
		}
	}
	if env == nil {
		return base
	}
	return base + "\n\n" + env.Summary()
}
