package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"reasonix/assemble"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/config"
	"reasonix/core/provider/openai"
	"reasonix/core/session"
	"reasonix/core/tool"
)

// DoctorOptions are the inputs of `reasonix doctor`.
type DoctorOptions struct {
	cmdutil.GlobalOptions
	// Model is the model reference to check instead of default_model.
	Model string
	// Offline skips every check that needs the network.
	Offline bool

	// lookPath and goos stand in for exec.LookPath and runtime.GOOS, so
	// the sandbox check can be tested for every platform and PATH.
	LookPath func(string) (string, error)
	Goos     string
}

// doctorProbeTimeout bounds the reachability request, so doctor answers
// promptly even when the network silently drops packets.
const doctorProbeTimeout = 10 * time.Second

// NewCmdDoctor builds `reasonix doctor`. runF replaces the action in tests.
func NewCmdDoctor(f *cmdutil.Factory, runF func(*DoctorOptions) error) *cobra.Command {
	opts := &DoctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor [flags]",
		Short: "Check the configuration, API key, provider and sandbox",
		Long: `Check that Reasonix can run here and print one line per check:
ok, warn (works, but something deserves attention), skip, or FAIL.

Checks: the config files and their warnings, the model, the API key (its
variable and where it was found, never the key), that the provider answers
(skipped with --offline), the shell sandbox, the enabled tools, and where the
log and the session transcripts are written.

With [[workers]] configured: where the worker token comes from
(REASONIX_WORKER_TOKEN, or [remote] token_file and its mode), whether workers
on other hosts could answer a loopback [remote] listen, and one line per
worker with the state reasonix workers reports (skipped with --offline). A
worker that is unreachable, not answering or draining is a warning (tasks run
elsewhere meanwhile); a refused token, a TLS mismatch, another protocol or a
workspace it does not serve fails.

Exit codes: 0 when nothing failed, 1 when a check failed, 2 on a bad flag.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runDoctor(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Model, "model", "m", "", "model to check: a provider name, a model name or provider/model (default: default_model)")
	fl.BoolVar(&opts.Offline, "offline", false, "skip the checks that need the network")
	cmdutil.AddGlobalFlags(cmd, &opts.GlobalOptions)
	return cmd
}

// CheckStatus grades one check; the order is by severity.
type CheckStatus int

const (
	CheckOK CheckStatus = iota
	checkSkip
	CheckWarn
	checkFail
)

func (s CheckStatus) String() string {
	switch s {
	case CheckOK:
		return "ok"
	case checkSkip:
		return "skip"
	case CheckWarn:
		return "warn"
	default:
		return "FAIL"
	}
}

// check is the outcome of one doctor check: a one-line detail, plus notes
// printed indented below it (config warnings, the lines of a validation
// error).
type check struct {
	Status CheckStatus
	name   string
	Detail string
	Notes  []string
}

func (c check) write(w io.Writer) {
	fmt.Fprintf(w, "%-4s  %-9s %s\n", c.Status, c.name, c.Detail)
	for _, n := range c.Notes {
		fmt.Fprintf(w, "%16s- %s\n", "", n)
	}
}

// Doctor holds what the checks learn, so a later check can build on an
// earlier one (the model needs the config, the probe needs the key) and
// be skipped with a reason when it cannot.
type Doctor struct {
	f    *cmdutil.Factory
	Opts *DoctorOptions
	home string
	cwd  string

	Cfg      *config.Config
	resolved *config.Resolved
	key      string
	keyOK    bool
}

func runDoctor(ctx context.Context, f *cmdutil.Factory, opts *DoctorOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cwd, err := opts.Workdir()
	if err != nil {
		return err
	}
	home, err := f.Home()
	if err != nil {
		return err
	}
	d := &Doctor{f: f, Opts: opts, home: home, cwd: cwd}
	fmt.Fprintf(f.Stdout, "reasonix %s (%s, %s/%s)\n", f.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(f.Stdout, "home: %s\ncwd:  %s\n\n", home, cwd)

	checks := []check{
		d.checkConfig(),
		d.checkModel(),
		d.checkAPIKey(),
		d.checkProvider(ctx),
		d.CheckSandbox(),
		d.checkTools(),
		d.checkLog(),
		d.checkSessions(),
		d.checkInstructions(),
	}
	checks = append(checks, d.checkMCP()...)
	checks = append(checks, d.checkWorkers(ctx)...)
	var warned, failed int
	for _, c := range checks {
		c.write(f.Stdout)
		switch c.Status {
		case CheckWarn:
			warned++
		case checkFail:
			failed++
		}
	}
	fmt.Fprintf(f.Stdout, "\n%s, %s\n", plural(failed, "failure"), plural(warned, "warning"))
	if failed > 0 {
		return cmdutil.ErrSilent
	}
	return nil
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func (d *Doctor) checkConfig() check {
	c := check{name: "config"}
	trusted, trustWarning, err := cmdutil.WorkspaceTrusted(d.home, d.cwd, false)
	if err != nil {
		c.Status = checkFail
		c.Detail = err.Error()
		return c
	}
	cfg, err := config.Load(config.Options{Home: d.home, ProjectDir: d.cwd, File: d.Opts.ConfigFile, TrustProject: trusted})
	if err != nil {
		c.Status = checkFail
		lines := strings.Split(err.Error(), "\n")
		c.Detail = strings.TrimSpace(lines[0])
		for _, l := range lines[1:] {
			c.Notes = append(c.Notes, strings.TrimSpace(l))
		}
		return c
	}
	d.Cfg = cfg
	if len(cfg.Files) == 0 {
		c.Status = CheckWarn
		c.Detail = fmt.Sprintf("no config file; built-in defaults in use (`reasonix setup` writes %s)", config.UserConfigPath(d.home))
	} else {
		c.Detail = "read " + strings.Join(cfg.Files, ", ")
	}
	var why []string
	if len(cfg.Warnings) > 0 {
		why = append(why, plural(len(cfg.Warnings), "ignored key"))
		c.Notes = cfg.Warnings
	}
	// What an untrusted workspace set is not a mistake, but it is why a
	// project's settings seem to do nothing.
	if notices := cmdutil.UntrustedNotices(cfg, d.cwd); len(notices) > 0 || trustWarning != "" {
		why = append(why, "the workspace is not trusted")
		if trustWarning != "" {
			c.Notes = append(c.Notes, trustWarning)
		}
		c.Notes = append(c.Notes, notices...)
	}
	if len(why) > 0 {
		c.Status = CheckWarn
		c.Detail += "; " + strings.Join(why, "; ") + ":"
	}
	return c
}

func (d *Doctor) checkModel() check {
	c := check{name: "model"}
	if d.Cfg == nil {
		return c.skipped("needs a valid config")
	}
	res, err := d.Cfg.ResolveModel(d.Opts.Model)
	if err != nil {
		c.Status = checkFail
		c.Detail = err.Error()
		return c
	}
	d.resolved = &res
	endpoint := res.Provider.BaseURL
	if endpoint == "" {
		endpoint = res.Provider.ChatURL
	}
	c.Detail = fmt.Sprintf("%s/%s at %s", res.Provider.Name, res.Model, endpoint)
	if res.ContextWindow > 0 {
		c.Detail += fmt.Sprintf(" (context window %d tokens)", res.ContextWindow)
	} else {
		c.Detail += " (no context window: compaction off)"
	}
	return c
}

// checkAPIKey follows the lookup order of config.APIKey (environment, then
// <home>/.env) so it reports the source a run would use, never the key.
func (d *Doctor) checkAPIKey() check {
	c := check{name: "api key"}
	if d.resolved == nil {
		return c.skipped("needs a model")
	}
	p := d.resolved.Provider
	name := p.APIKeyEnv
	if name == "" {
		d.keyOK = true
		c.Detail = fmt.Sprintf("provider %q needs no key (api_key_env is empty)", p.Name)
		return c
	}
	if v := d.f.Env(name); v != "" {
		d.key, d.keyOK = v, true
		c.Detail = name + " from the environment"
		return c
	}
	path := config.DotEnvPath(d.home)
	vars, err := config.ReadDotEnv(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.Status = checkFail
		c.Detail = err.Error()
		return c
	}
	if v := vars[name]; v != "" {
		d.key, d.keyOK = v, true
		c.Detail = name + " from " + path
		if st, err := os.Stat(path); err == nil && d.goos() != "windows" && st.Mode().Perm()&0o077 != 0 {
			c.Status = CheckWarn
			c.Detail += fmt.Sprintf("; the file is readable by others (mode %04o): chmod 600 %s", st.Mode().Perm(), path)
		}
		return c
	}
	c.Status = checkFail
	c.Detail = fmt.Sprintf("%s is not set in the environment or in %s; export it or run `reasonix setup --api-key-stdin`", name, path)
	return c
}

// checkProvider lists the provider's models, which proves the endpoint is
// reachable and accepts the key without spending tokens.
func (d *Doctor) checkProvider(ctx context.Context) check {
	c := check{name: "provider"}
	switch {
	case d.Opts.Offline:
		return c.skipped("--offline")
	case d.resolved == nil:
		return c.skipped("needs a model")
	case !d.keyOK:
		return c.skipped("needs an api key")
	}
	res := d.resolved
	pc := res.ProviderConfig(d.key)
	pc.MaxRetries = -1 // a diagnosis reports the first answer
	ctx, cancel := context.WithTimeout(ctx, doctorProbeTimeout)
	defer cancel()
	models, err := openai.ListModels(ctx, pc)
	url := modelsURL(res.Provider)
	if err != nil {
		c.Status = checkFail
		// A transport error already names the URL; a status does not.
		c.Detail = err.Error()
		var se *openai.StatusError
		if errors.As(err, &se) {
			c.Detail = fmt.Sprintf("GET %s: %v", url, se)
			if se.StatusCode == http.StatusUnauthorized || se.StatusCode == http.StatusForbidden {
				c.Notes = append(c.Notes, fmt.Sprintf("the endpoint refused the key in %s", res.Provider.APIKeyEnv))
			}
		}
		return c
	}
	c.Detail = fmt.Sprintf("GET %s: %s", url, plural(len(models), "model"))
	listed := false
	for _, m := range models {
		if m == res.Model {
			listed = true
			break
		}
	}
	if !listed {
		c.Status = CheckWarn
		c.Detail += fmt.Sprintf(", %q not among them", res.Model)
	}
	return c
}

// modelsURL is the model-listing URL ListModels requests, for display:
// models_url, else base_url + "/models", else the chat URL's API root.
func modelsURL(p config.ProviderConfig) string {
	switch {
	case p.ModelsURL != "":
		return p.ModelsURL
	case p.BaseURL != "":
		return strings.TrimRight(p.BaseURL, "/") + "/models"
	}
	return strings.TrimSuffix(strings.TrimRight(p.ChatURL, "/"), "/chat/completions") + "/models"
}

// CheckSandbox reports the [sandbox] bash mode and whether this platform's
// sandbox program is installed. A missing program only matters when the
// mode is enforce, because then shell commands are refused.
func (d *Doctor) CheckSandbox() check {
	c := check{name: "sandbox"}
	mode := "enforce"
	if d.Cfg != nil {
		mode = d.Cfg.Sandbox.Bash
	}
	network := d.Cfg != nil && d.Cfg.Sandbox.Network
	setting := fmt.Sprintf("bash = %q, network = %t", mode, network)
	goos := d.goos()
	var program, install string
	switch goos {
	case "linux":
		program, install = "bwrap", "apt install bubblewrap (or your distribution's bubblewrap package)"
	case "darwin":
		program, install = "sandbox-exec", "sandbox-exec ships with macOS; check PATH"
	case "windows":
		if mode == "enforce" {
			c.Status = CheckWarn
			c.Detail = setting + ": Windows has no shell sandbox, so shell commands run unconfined"
			return c
		}
		c.Detail = setting + ": shell commands run unconfined"
		return c
	default:
		if mode == "enforce" {
			c.Status = CheckWarn
			c.Detail = fmt.Sprintf("%s: no shell sandbox on %s; shell commands will be refused unless [sandbox] bash = \"off\"", setting, goos)
			return c
		}
		c.Detail = setting + ": shell commands run unconfined"
		return c
	}
	lookPath := d.Opts.LookPath
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	path, err := lookPath(program)
	switch {
	case err == nil && mode == "enforce":
		c.Detail = fmt.Sprintf("%s: shell commands confined by %s", setting, path)
		if d.Opts.LookPath == nil && d.Cfg != nil {
			// Installed is not enough: bwrap may be unable to create
			// namespaces here, and then every command would fail.
			if err := d.tryJail(); err != nil {
				c.Status = checkFail
				c.Notes = []string{err.Error(), `fix the sandbox, or set [sandbox] bash = "off" to run shell commands unconfined`}
			}
		}
	case err == nil:
		c.Detail = fmt.Sprintf("%s: shell commands run unconfined (%s is available)", setting, path)
	case mode == "enforce":
		c.Status = CheckWarn
		c.Detail = fmt.Sprintf("%s but %s was not found, so shell commands will be refused", setting, program)
		c.Notes = []string{install, `or set [sandbox] bash = "off" to run shell commands unconfined`}
	default:
		c.Detail = fmt.Sprintf("%s: shell commands run unconfined (%s not found)", setting, program)
	}
	return c
}

// tryJail runs `true` inside the configured jail.
func (d *Doctor) tryJail() error {
	sb, err := assemble.NewSandbox(d.Cfg, d.cwd)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return sb.Check(ctx)
}

func (d *Doctor) checkTools() check {
	c := check{name: "tools"}
	if d.Cfg == nil {
		return c.skipped("needs a valid config")
	}
	tools, err := tool.NewBuiltins(assemble.ToolEnv(d.Cfg, d.cwd), d.Cfg.Tools.Enabled)
	if err != nil {
		c.Status = checkFail
		c.Detail = "[tools] enabled: " + err.Error()
		return c
	}
	if len(tools) == 0 {
		c.Status = CheckWarn
		c.Detail = "no built-in tools"
		return c
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name()
	}
	c.Detail = fmt.Sprintf("%d enabled: %s", len(names), strings.Join(names, ", "))
	return c
}

func (d *Doctor) checkLog() check {
	path := filepath.Join(d.home, "logs", "reasonix.log")
	return check{name: "log", Detail: path + existsNote(path)}
}

func (d *Doctor) checkSessions() check {
	dir := session.ProjectDir(d.home, d.cwd)
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return check{name: "sessions", Detail: dir + " (none yet)"}
	case err != nil:
		return check{Status: CheckWarn, name: "sessions", Detail: err.Error()}
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl") {
			n++
		}
	}
	return check{name: "sessions", Detail: fmt.Sprintf("%s (%s)", dir, plural(n, "transcript"))}
}

// checkInstructions lists the project instruction files a new session
// puts in its system prompt, with what was cut or skipped.
func (d *Doctor) checkInstructions() check {
	c := check{name: "project"}
	in := session.LoadInstructions(d.cwd, d.home)
	c.Notes = in.Notices()
	if len(c.Notes) > 0 {
		c.Status = CheckWarn
	}
	if len(in.Files) == 0 {
		c.Detail = "no instructions (" + session.AgentsFile + ", " + session.ClaudeFile + " or " + session.ReasonixFile + ")"
		return c
	}
	size := 0
	for _, f := range in.Files {
		size += len(f.Text)
	}
	c.Detail = fmt.Sprintf("instructions from %s (%.1f of %d KiB)", strings.Join(in.Paths(), ", "), float64(size)/1024, session.MaxInstructionBytes>>10)
	return c
}

func (d *Doctor) goos() string {
	if d.Opts.Goos != "" {
		return d.Opts.Goos
	}
	return runtime.GOOS
}

func (c check) skipped(reason string) check {
	c.Status = checkSkip
	c.Detail = reason
	return c
}

// existsNote tells the reader of a listing that a path is not there yet.
func existsNote(path string) string {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return " (not created yet)"
	}
	return ""
}
