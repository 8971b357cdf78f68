package tool

import (
	"context"
	"encoding/json"
	"time"
)

// Tool is one capability the model can call.
type Tool interface {
	Name() string
	Description() string
	// Schema is the JSON Schema of the parameters object.
	Schema() json.RawMessage
	// ReadOnly reports that the tool has no side effects, which lets the
	// runtime run it in parallel with its batch and lets the permission
	// layer allow it by default.
	ReadOnly() bool
	// Execute runs the call. args is the raw JSON the model produced; the
	// tool parses it itself. A returned error becomes the result text the
	// model reads.
	Execute(ctx context.Context, args json.RawMessage) (string, error)
}

// Previewer is a tool that can show what a call would change without
// changing anything: a unified diff for a file write or edit. An approval
// shows it, so the person sees what they allow. Preview resolves and
// checks paths as Execute does; an error means no preview, not a refusal.
// It must return once ctx ends: past its time the approval goes out
// without it.
type Previewer interface {
	Preview(ctx context.Context, args json.RawMessage) (string, error)
}

// PathGuard confines what file tools may touch. The sandbox package provides
// the real one; Open allows everything under the filesystem.
type PathGuard interface {
	// WritePath resolves p (relative to the workspace) to the absolute path
	// a writer may modify, or returns an error explaining the refusal.
	WritePath(p string) (string, error)
	// ReadPath resolves p to the absolute path a reader may inspect, or
	// returns an error explaining the refusal.
	ReadPath(p string) (string, error)
}

// CommandWrapper turns a shell command line into the argv that actually
// runs, so the sandbox can jail it (bubblewrap on Linux). A nil wrapper runs
// the command directly.
type CommandWrapper interface {
	// Wrap returns the argv (argv[0] is the program) that runs the given
	// shell program with the given argv in dir, or an error that refuses
	// the command.
	Wrap(dir string, argv []string) ([]string, error)
}

// Env is what built-in tools need from the run they are part of.
type Env struct {
	// Root is the workspace directory; relative paths resolve against it.
	Root string
	// Guard confines file access; nil means resolve against Root with no
	// confinement.
	Guard PathGuard
	// Shell jails bash commands; nil runs them directly.
	Shell CommandWrapper
	// BashTimeout caps a bash command; zero means no tool-local cap.
	BashTimeout time.Duration
	// Limits caps what tools return to the model.
	Limits Limits
	// Home is the Reasonix home: sessions, archives, indexes and the
	// user's memory live under it. Empty for a run without one.
	Home string
	// Project is the project directory (where the session started); its
	// .reasonix holds the project's memory.
	Project string
	// Sessions is the project's transcript directory.
	Sessions string
}

// FreshApproval is implemented by tools every call of which needs a
// person's approval at that moment, whatever the posture, the session's
// grants or an "always" rule say: remember and forget, which change what
// every later session is told. Where nobody can approve (a headless run,
// a subagent) the call is refused.
type FreshApproval interface {
	// Preview is a short description of what the call would do, shown in
	// the approval request.
	Preview(args json.RawMessage) string
}

// Limits are the caps that keep one tool result from flooding the context.
// Zero fields take the defaults of DefaultLimits.
type Limits struct {
	ReadBytes   int // read_file: bytes returned from one file
	OutputBytes int // bash: combined stdout/stderr kept
	GrepMatches int // grep: matching lines returned
	ListEntries int // ls and glob: entries returned
}

// DefaultLimits are the caps used when Env.Limits leaves a field zero.
var DefaultLimits = Limits{
	ReadBytes:   256 << 10,
	OutputBytes: 64 << 10,
	GrepMatches: 500,
	ListEntries: 1000,
}

// WithDefaults returns l with zero fields replaced by DefaultLimits.
func (l Limits) WithDefaults() Limits {
	if l.ReadBytes <= 0 {
		l.ReadBytes = DefaultLimits.ReadBytes
	}
	if l.OutputBytes <= 0 {
		l.OutputBytes = DefaultLimits.OutputBytes
	}
	if l.GrepMatches <= 0 {
		l.GrepMatches = DefaultLimits.GrepMatches
	}
	if l.ListEntries <= 0 {
		l.ListEntries = DefaultLimits.ListEntries
	}
	return l
}

type callIDKey struct{}

// WithCallID returns ctx carrying the ID of the tool call being executed,
// so a tool that reports progress (an MCP tool) can say which call it is
// about. It is request-scoped data, which is what context values are for.
func WithCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

// CallID is the tool call ID WithCallID stored, or "".
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}
