package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"reasonix/actors"
	"reasonix/core/config"
	"reasonix/core/permission"
	"reasonix/core/provider"
	"reasonix/core/sandbox"
	"reasonix/core/tool"

	// Built-in providers and tools register themselves.
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

// openProvider resolves ref (empty: default_model) and builds its provider.
// A missing key is a usage error that says how to fix it.
func openProvider(cfg *config.Config, ref string) (provider.Provider, config.Resolved, error) {
	res, err := cfg.ResolveModel(ref)
	if err != nil {
		return nil, res, &usageError{err: fmt.Errorf("model: %w", err)}
	}
	key, err := cfg.APIKey(res.Provider, cfg.Home)
	if err != nil {
		return nil, res, &usageError{err: err}
	}
	p, err := provider.New(res.ProviderConfig(key))
	if err != nil {
		return nil, res, &usageError{err: err}
	}
	return p, res, nil
}

// toolEnv is the built-in tools' view of the run, without confinement
// (for listing tools).
func toolEnv(cfg *config.Config, cwd string) tool.Env {
	return tool.Env{
		Root:        workspaceRoot(cfg, cwd),
		BashTimeout: time.Duration(cfg.Tools.BashTimeoutSeconds) * time.Second,
	}
}

// workspaceRoot is [sandbox] workspace_root, else cwd.
func workspaceRoot(cfg *config.Config, cwd string) string {
	root := cfg.Sandbox.WorkspaceRoot
	if root == "" {
		return cwd
	}
	if !filepath.IsAbs(root) {
		root = filepath.Join(cwd, root)
	}
	return filepath.Clean(root)
}

// buildSandbox confines file writers to the workspace, the reasonix home
// and allow_write, hides forbid_read, and jails bash when enforced.
func buildSandbox(cfg *config.Config, cwd string) (*sandbox.Sandbox, error) {
	sb, err := sandbox.New(sandbox.Options{
		Root:       workspaceRoot(cfg, cwd),
		Home:       cfg.Home,
		AllowWrite: cfg.Sandbox.AllowWrite,
		ForbidRead: cfg.Sandbox.ForbidRead,
		Bash:       cfg.Sandbox.Bash,
		Network:    cfg.Sandbox.Network,
	})
	if err != nil {
		return nil, &usageError{err: fmt.Errorf("[sandbox]: %w", err)}
	}
	return sb, nil
}

// confinedEnv is toolEnv with the sandbox as path guard and bash jail.
func confinedEnv(cfg *config.Config, cwd string, sb *sandbox.Sandbox) tool.Env {
	env := toolEnv(cfg, cwd)
	env.Guard, env.Shell = sb, sb
	return env
}

// buildPermissions turns [permissions] plus --permission-mode and --deny
// into the session's gate. interactive says a frontend answers prompts.
func buildPermissions(cfg *config.Config, cwd, posture string, deny []string, interactive bool) (actors.Permissions, error) {
	p, err := permission.ParsePosture(posture)
	if err != nil {
		return actors.Permissions{}, usageErrorf("--permission-mode: %v", err)
	}
	userHome, _ := os.UserHomeDir()
	root := workspaceRoot(cfg, cwd)
	rules := append(slices.Clone(cfg.Permissions.Deny), deny...)
	policy, err := permission.NewPolicy(cfg.Permissions.Mode, cfg.Permissions.Allow, cfg.Permissions.Ask, rules, root, userHome)
	if err != nil {
		return actors.Permissions{}, &usageError{err: fmt.Errorf("[permissions]: %w", err)}
	}
	return actors.Permissions{
		Policy:      &policy,
		Posture:     p,
		Grants:      permission.NewGrants(root, userHome),
		Interactive: interactive,
		ProjectFile: config.ProjectConfigPath(cwd),
	}, nil
}

// buildTools assembles the run's registry from the enabled built-ins.
func buildTools(cfg *config.Config, env tool.Env) (*tool.Registry, error) {
	tools, err := tool.NewBuiltins(env, cfg.Tools.Enabled)
	if err != nil {
		return nil, &usageError{err: fmt.Errorf("[tools] enabled: %w", err)}
	}
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		return nil, fmt.Errorf("tool registry: %w", err)
	}
	return reg, nil
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

// systemPromptText is the configured system prompt text, read from
// system_prompt_file when set.
func systemPromptText(cfg *config.Config, cwd string) (string, error) {
	if cfg.Agent.SystemPromptFile == "" {
		return cfg.Agent.SystemPrompt, nil
	}
	path := cfg.Agent.SystemPromptFile
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", &usageError{err: fmt.Errorf("agent.system_prompt_file: %w", err)}
	}
	return string(data), nil
}

var errNoPrompt = errors.New("no prompt: pass it as an argument or on stdin")
