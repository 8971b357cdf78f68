package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// gitTimeout bounds every git call, whatever the caller's context allows:
// a git that hangs (a lock, a filter waiting for input) must not hold a
// writer's slot forever.
const gitTimeout = 60 * time.Second

// identity is who every commit made here is by, so that neither a missing
// nor a surprising user.name in the user's config changes the result.
var identity = []string{
	"GIT_AUTHOR_NAME=Reasonix", "GIT_AUTHOR_EMAIL=reasonix@localhost",
	"GIT_COMMITTER_NAME=Reasonix", "GIT_COMMITTER_EMAIL=reasonix@localhost",
}

// baseConfig is passed to every command. Hooks are off because a hook is a
// program the repository (or an agent that wrote to it) chose; the rest
// keep the user's config from changing what is recorded or written, and
// keep git from writing state we did not ask for.
var baseConfig = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.autocrlf=false",
	"-c", "core.safecrlf=false",
	"-c", "core.fsmonitor=false",
	"-c", "core.untrackedCache=false",
	"-c", "core.splitIndex=false",
	"-c", "core.trustctime=true",
	"-c", "gc.auto=0",
}

// repoEnv are the variables that point git at a repository, an index or an
// object store (`git rev-parse --local-env-vars`). Reasonix may itself run
// under git (an alias, a hook); those must not redirect our commands.
var repoEnv = []string{
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
	"GIT_CONFIG_COUNT", "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE",
	"GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE", "GIT_INDEX_FILE",
	"GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
	"GIT_SHALLOW_FILE", "GIT_COMMON_DIR",
}

// extraEnv is appended to every command's environment. It is nil in
// production; tests set it to keep the machine's git config out.
var extraEnv []string

// gitCmd says where and how one git command runs.
type gitCmd struct {
	dir      string    // the directory it runs in
	gitDir   string    // --git-dir: set for all but Find, so git never goes looking
	workTree string    // --work-tree, likewise
	index    string    // GIT_INDEX_FILE: a private index, never the real one
	ident    bool      // add the fixed commit identity
	stdin    io.Reader // nil: no input
}

// gitError is a git command that failed: its arguments, exit code and
// stderr, wrapping the *exec.ExitError (or the error that kept it from
// running).
type gitError struct {
	args   []string
	code   int
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := fmt.Sprintf("git %s: %v", strings.Join(e.args, " "), e.err)
	if e.stderr != "" {
		msg += ": " + e.stderr
	}
	return msg
}

func (e *gitError) Unwrap() error { return e.err }

// exitCode is the exit status of the git command behind err, or -1 when
// err is not a git command that ran and failed.
func exitCode(err error) int {
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.code
	}
	return -1
}

// run runs git with args as c says and returns its stdout.
func run(ctx context.Context, c gitCmd, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	full := append([]string(nil), baseConfig...)
	if c.gitDir != "" {
		full = append(full, "--git-dir="+c.gitDir)
	}
	if c.workTree != "" {
		full = append(full, "--work-tree="+c.workTree)
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = c.dir
	cmd.Env = env(c)
	cmd.Stdin = c.stdin
	// A filter or credential helper git started may keep the pipes open
	// after git itself is killed; do not wait for it past a moment.
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		ge := &gitError{args: args, code: -1, stderr: strings.TrimSpace(stderr.String()), err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ge.code = ee.ExitCode()
		}
		if errors.Is(err, exec.ErrNotFound) {
			ge.err = fmt.Errorf("%w: %w", ErrNoGit, err)
		}
		return stdout.Bytes(), ge
	}
	return stdout.Bytes(), nil
}

// env is the process environment without variables that redirect git,
// plus what c needs.
func env(c gitCmd) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(repoEnv, name) && name != "GIT_TERMINAL_PROMPT" && name != "LC_ALL" {
			out = append(out, kv)
		}
	}
	// LC_ALL=C keeps git's messages, which Find reads, in English.
	out = append(out, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	if c.index != "" {
		out = append(out, "GIT_INDEX_FILE="+c.index)
	}
	if c.ident {
		out = append(out, identity...)
	}
	return append(out, extraEnv...)
}

// line is the first line of out, for commands that print one value.
func line(out []byte) string {
	s, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(s)
}

// splitZ splits NUL-terminated output into its fields.
func splitZ(out []byte) []string {
	s := strings.TrimSuffix(string(out), "\x00")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}
