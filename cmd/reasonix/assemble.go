package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"reasonix/actors"
	"reasonix/core/config"
	"reasonix/core/mcp"

	// Built-in providers and tools register themselves.
	_ "reasonix/core/history"
	_ "reasonix/core/memory"
	_ "reasonix/core/provider/openai"
	_ "reasonix/core/tool/builtin"
)

// globalOptions are the flags every command that reads config shares.
type globalOptions struct {
	ConfigFile string
	Cwd        string
}

// workdir resolves --cwd (default: the process working directory) to an
// absolute, existing directory.
func (g *globalOptions) workdir() (string, error) {
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
		return "", usageErrorf("--cwd %q: %v", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", usageErrorf("--cwd %q: %v", dir, err)
	}
	if !st.IsDir() {
		return "", usageErrorf("--cwd %q is not a directory", dir)
	}
	return abs, nil
}

// loadConfig loads the merged configuration for cwd. Any problem is a usage
// error (exit 2): nothing can run on a config we do not understand.
func loadConfig(f *Factory, g *globalOptions, cwd string) (*config.Config, error) {
	cfg, err := config.Load(config.Options{ProjectDir: cwd, File: g.ConfigFile})
	if err != nil {
		return nil, &usageError{err: fmt.Errorf("config: %w", err)}
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintln(f.Stderr, "reasonix: warning:", w)
	}
	return cfg, nil
}

// buildSession builds a session with actors.Build. When that fails it
// closes the transcript of o.Resume, which Build leaves to its caller.
func buildSession(cfg *config.Config, o actors.BuildOptions) (*actors.Built, error) {
	b, err := actors.Build(cfg, o)
	if err != nil {
		if o.Resume != nil {
			_ = o.Resume.Transcript.Close()
		}
		return nil, asUsage(err)
	}
	return b, nil
}

// asUsage makes an *actors.SetupError, a mistake in the configuration or
// the flags, a usage error (exit 2). The message stays the builder's, with
// whatever context it was wrapped in.
func asUsage(err error) error {
	if _, ok := errors.AsType[*actors.SetupError](err); ok {
		return &usageError{err: err}
	}
	return err
}

// mcpClient names this program to MCP servers.
func mcpClient(f *Factory) mcp.Implementation {
	return mcp.Implementation{Name: "reasonix", Version: f.Version}
}

// openLogger opens the log file under the reasonix home. Nothing else of a
// run writes diagnostics, so a TUI or piped output stays clean. When the
// file cannot be opened, logging is discarded rather than failing the run.
func openLogger(home string, getenv func(string) string) (*slog.Logger, func()) {
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

var errNoPrompt = errors.New("no prompt: pass it as an argument or on stdin")
