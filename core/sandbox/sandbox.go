package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
)

// The effective bash modes Mode reports.
const (
	// ModeEnforce means Wrap jails every command.
	ModeEnforce = "enforce"
	// ModeOff means Wrap returns commands unchanged: bash runs unconfined,
	// by the user's choice or because the platform has no backend.
	ModeOff = "off"
	// ModeUnavailable means enforce was asked for but no backend exists,
	// so Wrap refuses every command instead of running it unconfined.
	ModeUnavailable = "unavailable"
)

// sandboxExec is the only sandbox-exec Wrap uses: a copy found on PATH could
// be anyone's.
const sandboxExec = "/usr/bin/sandbox-exec"

// Options are the inputs of New: the [sandbox] settings plus what the
// caller knows about the environment, injectable so tests can describe
// another platform.
type Options struct {
	// Root is the workspace root ([sandbox] workspace_root, or the working
	// directory when that is empty). Relative model paths resolve against
	// it; empty means the process working directory.
	Root string
	// Home is the Reasonix home directory: the user's configuration,
	// credentials, sessions and memory. It is the user's, not the
	// agent's: file tools may neither read nor write anything in it, and
	// jailed commands see it read-only, so the agent cannot rewrite the
	// settings that confine it. Empty means no home.
	Home string
	// AllowWrite lists extra writable directories. Entries are expanded
	// like ForbidRead.
	AllowWrite []string
	// ForbidRead lists files and directories that no tool and no jailed
	// command may read. Entries support ${VAR}, ${VAR:-default} and a
	// leading ~/; a relative entry is taken relative to Root.
	ForbidRead []string
	// Secrets lists absolute paths of files and directories holding
	// credentials (the home's .env, OAuth tokens, grants, a worker's
	// token file). Jailed commands cannot see them at all, as with
	// ForbidRead, and file tools refuse them like forbid_read entries,
	// which matters for those outside the home.
	Secrets []string
	// PathRule, when set, is asked by ReadPath, WritePath and Forbidden,
	// after their own checks, about each spelling of the path (the
	// resolved one and the absolute one as given); op is "read" or
	// "write". A denial by either spelling refuses the path with reason.
	// It is how the permission policy's deny rules reach every file tool,
	// walks included. A panic in it counts as a denial.
	PathRule func(op, resolved string) (reason string, denied bool)
	// Bash is "enforce" (the default when empty) or "off".
	Bash string
	// Network lets jailed commands use the network.
	Network bool
	// GOOS selects the backend; empty means runtime.GOOS.
	GOOS string
	// LookPath finds the bubblewrap binary and checks for sandbox-exec;
	// nil means exec.LookPath.
	LookPath func(string) (string, error)
	// LookupEnv reads the environment for path expansion and for the
	// temporary and cache directories jailed commands may write; nil
	// means os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Sandbox confines file tools (it is a tool.PathGuard) and jails shell
// commands (it is a tool.CommandWrapper). It holds no open resources and is
// safe for concurrent use.
type Sandbox struct {
	root     string        // resolved workspace root
	writable []string      // resolved writable roots: root, allow_write; a writer task's claims after Narrow
	allow    []string      // resolved allow_write roots, which Narrow keeps writable for jailed commands
	claims   []string      // the write_paths a Narrow sandbox holds, as the task gave them; nil otherwise
	readonly []string      // paths jailed commands see read-only even in a scratch directory: a Rooted sandbox's workspace
	home     forbidEntry   // the Reasonix home; given is "" without one
	forbid   []forbidEntry // forbid_read entries, then the secrets
	scratch  []string      // temporary and cache directories for jailed commands
	mode     string
	backend  string // bwrap or sandbox-exec path when mode is enforce
	goos     string
	network  bool
	notes    []string

	rule func(op, resolved string) (string, bool) // Options.PathRule; nil asks nothing
}

// forbidEntry is one forbid_read entry, or one secret, in two spellings:
// as configured (expanded, absolute, clean) and resolved when the sandbox
// was built. A path is forbidden when either covers it, so an entry that
// becomes a symlink later still protects the name the user wrote.
type forbidEntry struct {
	given    string
	resolved string
	secret   bool // from Options.Secrets, which refusals name differently
}

// New resolves the roots in o and settles the bash mode. It fails when a
// root or forbid_read entry cannot be expanded or resolved, or when Bash
// is neither "enforce" nor "off"; a root that does not exist yet is fine.
func New(o Options) (*Sandbox, error) {
	if o.GOOS == "" {
		o.GOOS = runtime.GOOS
	}
	if o.LookPath == nil {
		o.LookPath = exec.LookPath
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	s := &Sandbox{goos: o.GOOS, network: o.Network, rule: o.PathRule}

	rootAbs := o.Root
	if rootAbs == "" {
		rootAbs = "."
	}
	rootAbs, err := filepath.Abs(rootAbs)
	if err != nil {
		return nil, fmt.Errorf("sandbox: workspace root: %w", err)
	}
	if s.root, err = resolve(rootAbs); err != nil {
		return nil, fmt.Errorf("sandbox: workspace root %s: %w", rootAbs, err)
	}
	s.addWritable(s.root)
	if o.Home != "" {
		given, err := s.absolute(o.Home, nil)
		if err != nil {
			return nil, fmt.Errorf("sandbox: reasonix home: %w", err)
		}
		resolved, err := resolve(given)
		if err != nil {
			return nil, fmt.Errorf("sandbox: reasonix home %q: %w", o.Home, err)
		}
		s.home = forbidEntry{given: given, resolved: resolved}
		if s.inHome(s.root, s.root) {
			s.notes = append(s.notes, fmt.Sprintf("the workspace root %s lies in the Reasonix home %s, "+
				"which file tools may not touch: they refuse every path in the workspace", s.root, resolved))
		}
	}
	for _, p := range o.AllowWrite {
		w, err := s.configured(p, o.LookupEnv)
		if err != nil {
			return nil, fmt.Errorf("sandbox: allow_write: %w", err)
		}
		s.addWritable(w)
		s.allow = append(s.allow, w)
		if s.inHome(w, w) {
			s.notes = append(s.notes, fmt.Sprintf("[sandbox] allow_write entry %s lies in the Reasonix home %s, "+
				"which stays closed to file tools and read-only to bash", w, s.home.resolved))
		}
	}
	for _, p := range o.ForbidRead {
		given, err := s.absolute(p, o.LookupEnv)
		if err != nil {
			return nil, fmt.Errorf("sandbox: forbid_read: %w", err)
		}
		resolved, err := resolve(given)
		if err != nil {
			return nil, fmt.Errorf("sandbox: forbid_read %q: %w", p, err)
		}
		s.forbid = append(s.forbid, forbidEntry{given: given, resolved: resolved})
	}
	for _, p := range o.Secrets {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("sandbox: secret %q is not an absolute path", p)
		}
		given := filepath.Clean(p)
		resolved, err := resolve(given)
		if err != nil {
			return nil, fmt.Errorf("sandbox: secret %q: %w", p, err)
		}
		s.forbid = append(s.forbid, forbidEntry{given: given, resolved: resolved, secret: true})
	}
	s.scratch = scratchDirs(o.GOOS, o.LookupEnv)

	if err := s.settleMode(o); err != nil {
		return nil, err
	}
	return s, nil
}

// configured expands (when lookup is not nil), anchors and resolves one
// configured directory.
func (s *Sandbox) configured(p string, lookup func(string) (string, bool)) (string, error) {
	abs, err := s.absolute(p, lookup)
	if err != nil {
		return "", err
	}
	r, err := resolve(abs)
	if err != nil {
		return "", fmt.Errorf("%q: %w", p, err)
	}
	return r, nil
}

// absolute expands p (when lookup is not nil) and anchors it at the
// workspace root when relative. An entry that expands to nothing is an
// error rather than the root itself, which would silently widen or hide
// the whole workspace.
func (s *Sandbox) absolute(p string, lookup func(string) (string, bool)) (string, error) {
	e := p
	if lookup != nil {
		var err error
		if e, err = expandPath(p, lookup); err != nil {
			return "", err
		}
	}
	if e == "" {
		return "", fmt.Errorf("%q expands to an empty path; give a default with ${VAR:-/path}", p)
	}
	if !filepath.IsAbs(e) {
		e = filepath.Join(s.root, e)
	}
	return filepath.Clean(e), nil
}

// addWritable records a writable root once.
func (s *Sandbox) addWritable(p string) {
	if !slices.Contains(s.writable, p) {
		s.writable = append(s.writable, p)
	}
}

// scratchDirs lists the temporary and cache directories a jailed command
// may write besides the roots: /tmp, $TMPDIR, the user cache directory
// ($XDG_CACHE_HOME or ~/.cache, and ~/Library/Caches on macOS) and Go's
// build and module caches when GOCACHE or GOMODCACHE name them. The list
// is short on purpose; a tool that needs more writes to a directory the
// user adds to allow_write.
func scratchDirs(goos string, lookup func(string) (string, bool)) []string {
	dirs := []string{"/tmp"}
	env := func(name string) {
		if v, ok := lookup(name); ok && filepath.IsAbs(v) {
			dirs = append(dirs, v)
		}
	}
	env("TMPDIR")
	home := userHome(lookup)
	if v, ok := lookup("XDG_CACHE_HOME"); ok && filepath.IsAbs(v) {
		dirs = append(dirs, v)
	} else if filepath.IsAbs(home) {
		dirs = append(dirs, filepath.Join(home, ".cache"))
	}
	if goos == "darwin" && filepath.IsAbs(home) {
		dirs = append(dirs, filepath.Join(home, "Library", "Caches"))
	}
	env("GOCACHE")
	env("GOMODCACHE")
	return dirs
}

// settleMode decides the effective bash mode and the notes that explain it.
func (s *Sandbox) settleMode(o Options) error {
	switch o.Bash {
	case "", ModeEnforce:
	case ModeOff:
		s.mode = ModeOff
		s.notes = append(s.notes, `bash runs unconfined: [sandbox] bash = "off"`)
		return nil
	default:
		return fmt.Errorf("sandbox: bash = %q: want \"enforce\" or \"off\"", o.Bash)
	}
	switch o.GOOS {
	case "windows":
		s.mode = ModeOff
		s.notes = append(s.notes, `[sandbox] bash = "enforce" is ignored on Windows, which has no bash sandbox: `+
			`commands run unconfined; file tools still enforce workspace_root, allow_write and forbid_read`)
	case "linux":
		if p, err := o.LookPath("bwrap"); err == nil {
			s.mode, s.backend = ModeEnforce, p
			return nil
		}
		s.mode = ModeUnavailable
		s.notes = append(s.notes, "bash commands are refused: "+s.unavailableReason())
	case "darwin":
		if _, err := o.LookPath(sandboxExec); err == nil {
			s.mode, s.backend = ModeEnforce, sandboxExec
			return nil
		}
		s.mode = ModeUnavailable
		s.notes = append(s.notes, "bash commands are refused: "+s.unavailableReason())
	default:
		s.mode = ModeUnavailable
		s.notes = append(s.notes, "bash commands are refused: "+s.unavailableReason())
	}
	return nil
}

// ErrUnavailable is wrapped by the error Wrap returns when bash = "enforce"
// but the platform's sandbox backend is missing, so callers can tell a
// refusal for that reason (and offer the user a way out) from others.
var ErrUnavailable = errors.New("bash sandbox unavailable")

// unavailableReason says what is missing and how to fix it or opt out.
func (s *Sandbox) unavailableReason() string {
	const optOut = `or set [sandbox] bash = "off" in the user config to run commands unconfined`
	switch s.goos {
	case "linux":
		return "bubblewrap (bwrap) is not on PATH; install the bubblewrap package " +
			"(for example: apt install bubblewrap, dnf install bubblewrap or pacman -S bubblewrap) " + optOut
	case "darwin":
		return sandboxExec + " is missing; it ships with macOS, so restore it " + optOut
	}
	return "there is no bash sandbox for " + s.goos + "; " + optOut
}

// Mode reports the effective bash mode: ModeEnforce, ModeOff or
// ModeUnavailable.
func (s *Sandbox) Mode() string { return s.mode }

// Roots returns the writable roots, resolved: the workspace root first,
// then the allow_write entries, without duplicates. The Reasonix home is
// never one. For a sandbox built by Narrow they are the task's claims.
func (s *Sandbox) Roots() []string { return slices.Clone(s.writable) }

// Root returns the workspace root, resolved.
func (s *Sandbox) Root() string { return s.root }

// Notes returns human-readable lines about settings that did not take the
// effect their value suggests (an ignored or unusable enforce, an explicit
// off), for reasonix doctor to show.
func (s *Sandbox) Notes() []string { return slices.Clone(s.notes) }
