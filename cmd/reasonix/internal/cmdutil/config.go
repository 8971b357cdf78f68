package cmdutil

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"reasonix/actors"
	"reasonix/assemble"
	"reasonix/core/config"
	"reasonix/core/mcp"
	"reasonix/core/provider"
	"reasonix/core/trust"
)

// GlobalOptions are the flags every command that reads config shares.
type GlobalOptions struct {
	ConfigFile string
	Cwd        string
	// TrustProject honours the project's files for this process without
	// recording trust (run --trust-project).
	TrustProject bool
}

// Workdir resolves --cwd (default: the process working directory) to an
// absolute, existing directory.
func (g *GlobalOptions) Workdir() (string, error) {
	dir := g.Cwd
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("working directory: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", UsageErrorf("--cwd %q: %v", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", UsageErrorf("--cwd %q: %v", dir, err)
	}
	if !st.IsDir() {
		return "", UsageErrorf("--cwd %q is not a directory", dir)
	}
	return abs, nil
}

// LoadConfig loads the merged configuration for cwd, whose project files
// count in full only when the workspace is trusted (workspaceTrusted), and
// prints the config's warnings and, when the project set something that
// was left out, one notice saying what and how to trust it. Any problem is
// a usage error (exit 2): nothing can run on a config we do not
// understand.
func LoadConfig(f *Factory, g *GlobalOptions, cwd string) (*config.Config, error) {
	home, err := f.Home()
	if err != nil {
		return nil, &UsageError{Err: fmt.Errorf("config: %w", err)}
	}
	trusted, warning, err := WorkspaceTrusted(home, cwd, g.TrustProject)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(config.Options{Home: home, ProjectDir: cwd, File: g.ConfigFile, TrustProject: trusted, Getenv: f.Env})
	if err != nil {
		return nil, &UsageError{Err: fmt.Errorf("config: %w", err)}
	}
	for _, w := range cfg.Warnings {
		f.Warn(w)
	}
	if warning != "" {
		f.Warn(warning)
	}
	for _, n := range UntrustedNotices(cfg, cwd) {
		f.Notice(n)
	}
	// Endpoint limiters start from what earlier runs learned of their
	// endpoint's concurrency limit; the scheduler saves it after a fleet.
	provider.UseLearned(filepath.Join(home, filepath.FromSlash(provider.LearnedFile)))
	return cfg, nil
}

// WorkspaceTrusted decides whether cwd's project files are honoured in
// full: always with --trust-project (force), else when the trust store
// holds a trust whose digest still matches the files. A store that cannot
// be read is a usage error naming its repair; files that cannot be
// digested leave the workspace untrusted, with the reason as a warning,
// since a stranger's unreadable file must not stop the user's own work.
func WorkspaceTrusted(home, cwd string, force bool) (trusted bool, warning string, err error) {
	if force {
		return true, "", nil
	}
	store, err := trust.Open(home)
	if err != nil {
		return false, "", &UsageError{Err: err}
	}
	state, err := store.Check(cwd)
	if err != nil {
		return false, fmt.Sprintf("workspace trust: %v; the project's files count as untrusted", err), nil
	}
	return state == trust.Trusted, "", nil
}

// UntrustedNotices are the lines that say what an untrusted workspace's
// files set that was left out: the project file's keys in one line, and
// the .mcp.json that was not read.
func UntrustedNotices(cfg *config.Config, cwd string) []string {
	var out []string
	if n := cfg.UntrustedNotice(); n != "" {
		out = append(out, n)
	}
	if n := mcpJSONNotice(cfg, cwd); n != "" {
		out = append(out, n)
	}
	return out
}

// mcpJSONNotice says that cwd's .mcp.json declares servers nothing will
// start while the workspace is untrusted, or is "".
func mcpJSONNotice(cfg *config.Config, cwd string) string {
	if cfg.ProjectTrusted {
		return ""
	}
	path := filepath.Join(cwd, mcp.MCPJSONFile)
	if !Exists(path) {
		return ""
	}
	return fmt.Sprintf("%s: its MCP servers are ignored until you trust this workspace (run \"reasonix trust\" to trust it)", path)
}

// BuildSession builds a session with actors.Build. When that fails it
// closes the transcript of o.Resume, which Build leaves to its caller.
func BuildSession(cfg *config.Config, o assemble.BuildOptions) (*actors.Built, error) {
	b, err := assemble.Build(cfg, o)
	if err != nil {
		if o.Resume != nil {
			_ = o.Resume.Transcript.Close()
		}
		return nil, AsUsage(err)
	}
	return b, nil
}

// AsUsage makes an *actors.SetupError, a mistake in the configuration or
// the flags, a usage error (exit 2). The message stays the builder's, with
// whatever context it was wrapped in.
func AsUsage(err error) error {
	if _, ok := errors.AsType[*assemble.SetupError](err); ok {
		return &UsageError{Err: err}
	}
	return err
}

// MCPClient names this program to MCP servers.
func MCPClient(f *Factory) mcp.Implementation {
	return mcp.Implementation{Name: "reasonix", Version: f.Version}
}

// OpenLogger opens the log file under the reasonix home. Nothing else of a
// run writes diagnostics, so a TUI or piped output stays clean. When the
// file cannot be opened, logging is discarded rather than failing the run.
func OpenLogger(home string, getenv func(string) string) (*slog.Logger, func()) {
	level := slog.LevelInfo
	if strings.EqualFold(getenv("REASONIX_LOG_LEVEL"), "debug") {
		level = slog.LevelDebug
	}
	dir := filepath.Join(home, "logs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return slog.New(slog.DiscardHandler), func() {}
	}
	file, err := os.OpenFile(filepath.Join(dir, "reasonix.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return slog.New(slog.DiscardHandler), func() {}
	}
	logger := slog.New(slog.NewTextHandler(file, &slog.HandlerOptions{Level: level})).With("pid", os.Getpid())
	return logger, func() { _ = file.Close() }
}

// ErrNoPrompt is a run or prompt command given nothing to do.
var ErrNoPrompt = errors.New("no prompt: pass it as an argument or on stdin")

// Exists reports whether anything, a dangling link included, is at path.
func Exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
