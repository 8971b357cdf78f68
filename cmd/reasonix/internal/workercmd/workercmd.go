package workercmd

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"reasonix/actors/kernel"
	"reasonix/actors/remote"
	"reasonix/actors/worker"
	"reasonix/assemble"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/config"
	"reasonix/core/proc"
)

// DefaultWorkerCapacity is how many tasks a worker runs at once without
// --capacity.
const DefaultWorkerCapacity = 4

// workerDrainTimeout bounds a worker's clean stop: its cancelled tasks get
// the grace to stop (10 s) and are killed after it, so this leaves room
// for that and for the transcripts to close.
const workerDrainTimeout = 15 * time.Second

// WorkerOptions are the inputs of `reasonix worker`.
type WorkerOptions struct {
	cmdutil.GlobalOptions
	// Listen is the host:port the worker serves on; Advertise the one
	// schedulers dial back ("" = the bound address).
	Listen    string
	Advertise string
	// Name is the worker's name; empty means the host name.
	Name string
	// Workspaces are NAME=PATH checkouts served; none means the
	// workspace root of the working directory, named by its basename.
	Workspaces []string
	Capacity   int
	// TokenFile holds the shared secret (REASONIX_WORKER_TOKEN wins);
	// empty means [remote] token_file.
	TokenFile string
	// TLSCert, TLSKey and TLSCA override [remote]'s: cert and key turn
	// TLS on, the CA names whom to trust.
	TLSCert, TLSKey, TLSCA string
}

// NewCmdWorker builds `reasonix worker`. runF replaces the action in tests.
func NewCmdWorker(f *cmdutil.Factory, runF func(*WorkerOptions) error) *cobra.Command {
	opts := &WorkerOptions{}
	cmd := &cobra.Command{
		Use:   "worker --listen HOST:PORT [flags]",
		Short: "Host subagents for schedulers on other machines",
		Long: `Run subagent tasks for the schedulers of other reasonix processes. A
scheduler lists this worker in its [[workers]] config (name, address,
capacity, workspace, writes) and places fleet tasks here as it places them
on its own process; the task's events stream back to the parent as if the
task ran there.

The worker builds every task's agent from its own configuration (--config
and the reasonix home, as for any command): its providers and API keys, its
tools, sandbox and permissions, its subagent profiles. Only the task itself
crosses from the scheduler: the prompt, profile, model, write paths and
budget. A task runs in the checkout named by the scheduler's workspace,
which must be one this worker serves:

  --workspace NAME=PATH   serve the checkout at PATH as NAME (repeatable);
                          without it, the workspace root of the working
                          directory is served, named by its basename

Transcripts of the tasks run here are written to this worker's sessions
directory for that checkout, one file per task named after the parent
session and the task.

Both ends share a secret: REASONIX_WORKER_TOKEN, else the file given by
--token-file or [remote] token_file (mode 0600 or stricter). Without one
the worker does not start. With --tls-cert and --tls-key the connections
use TLS; --tls-ca names the authorities trusted for the peers' certificates
(default: the system roots). Schedulers are reached back at the address
they advertise, so this host must be able to dial them.

A scheduler holds a lease on the worker, renewed by its heartbeats. When
the lease lapses, the scheduler's connection breaks or it says goodbye,
the worker cancels that scheduler's tasks (killing any still running after
a 10 s grace) and sends it nothing more about them: by then the scheduler
has placed them again or failed them.

Once listening it prints one line to standard error:

  reasonix worker NAME listening on HOST:PORT

SIGINT, SIGTERM or SIGHUP drains it: new tasks are refused, every scheduler is
told goodbye, running tasks are cancelled, and the worker exits once they
have stopped.

Exit codes: 0 stopped cleanly, 1 failed, 2 usage or setup error (a bad
flag, no token, the address taken, unreadable TLS files, a config that
cannot build agents).`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkWorkerOptions(opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runWorker(f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Listen, "listen", "", "serve on HOST:PORT (port 0 picks a free one)")
	fl.StringVar(&opts.Advertise, "advertise", "", "the HOST:PORT schedulers reach this worker at (default: the listening address)")
	fl.StringVar(&opts.Name, "name", "", "the worker's name (default: the host name)")
	fl.StringArrayVar(&opts.Workspaces, "workspace", nil, "serve the checkout at PATH as NAME (NAME=PATH, repeatable)")
	fl.IntVar(&opts.Capacity, "capacity", DefaultWorkerCapacity, "how many tasks run at once (1-64)")
	fl.StringVar(&opts.TokenFile, "token-file", "", "file holding the shared secret (default: REASONIX_WORKER_TOKEN, else [remote] token_file)")
	fl.StringVar(&opts.TLSCert, "tls-cert", "", "TLS certificate (PEM); with --tls-key turns TLS on")
	fl.StringVar(&opts.TLSKey, "tls-key", "", "TLS private key (PEM)")
	fl.StringVar(&opts.TLSCA, "tls-ca", "", "PEM bundle of the authorities trusted for peers (default: the system roots)")
	cmdutil.AddGlobalFlags(cmd, &opts.GlobalOptions)
	return cmd
}

// checkWorkerOptions refuses what no config could make right.
func checkWorkerOptions(o *WorkerOptions) error {
	if o.Listen == "" {
		return cmdutil.UsageErrorf("--listen is required: the HOST:PORT to serve on")
	}
	if _, _, err := net.SplitHostPort(o.Listen); err != nil {
		return cmdutil.UsageErrorf("--listen %q: want HOST:PORT (%v)", o.Listen, err)
	}
	if o.Advertise != "" {
		if _, _, err := net.SplitHostPort(o.Advertise); err != nil {
			return cmdutil.UsageErrorf("--advertise %q: want HOST:PORT (%v)", o.Advertise, err)
		}
	}
	if o.Capacity < 1 || o.Capacity > 64 {
		return cmdutil.UsageErrorf("--capacity %d: want 1-64", o.Capacity)
	}
	if strings.ContainsAny(o.Name, " \t\n") {
		return cmdutil.UsageErrorf("--name %q: no spaces", o.Name)
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return cmdutil.UsageErrorf("--tls-cert and --tls-key go together")
	}
	if o.TLSCA != "" && o.TLSCert == "" {
		return cmdutil.UsageErrorf("--tls-ca goes with --tls-cert and --tls-key")
	}
	seen := map[string]bool{}
	for _, ws := range o.Workspaces {
		name, path, ok := strings.Cut(ws, "=")
		if !ok || name == "" || path == "" {
			return cmdutil.UsageErrorf("--workspace %q: want NAME=PATH", ws)
		}
		if seen[name] {
			return cmdutil.UsageErrorf("--workspace %q: %s is served twice", ws, name)
		}
		seen[name] = true
	}
	return nil
}

// workerWorkspaces resolves --workspace against cwd, each checkout an
// existing directory; none given serves cwd's workspace root.
func workerWorkspaces(cfg *config.Config, cwd string, given []string) (map[string]string, error) {
	out := map[string]string{}
	if len(given) == 0 {
		root := assemble.WorkspaceRoot(cfg, cwd)
		out[filepath.Base(root)] = root
		return out, nil
	}
	for _, ws := range given {
		name, path, _ := strings.Cut(ws, "=")
		if !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
		path = filepath.Clean(path)
		st, err := os.Stat(path)
		if err != nil {
			return nil, cmdutil.UsageErrorf("--workspace %s: %v", ws, err)
		}
		if !st.IsDir() {
			return nil, cmdutil.UsageErrorf("--workspace %s: %s is not a directory", ws, path)
		}
		out[name] = path
	}
	return out, nil
}

// workerRemote is the endpoint's options: the flags over [remote], the
// token from the environment or the token file.
func workerRemote(cfg *config.Config, o *WorkerOptions) (remote.RemoteOptions, error) {
	ro := remote.RemoteOptions{Listen: o.Listen, Advertise: o.Advertise,
		TLSCert: cfg.Remote.TLSCert, TLSKey: cfg.Remote.TLSKey, TLSCA: cfg.Remote.TLSCA}
	if o.TLSCert != "" {
		ro.TLSCert, ro.TLSKey, ro.TLSCA = o.TLSCert, o.TLSKey, o.TLSCA
	}
	file := o.TokenFile
	if file == "" {
		file = cfg.Remote.TokenFile
	}
	token, err := config.WorkerToken(file)
	if err != nil {
		return ro, &cmdutil.UsageError{Err: err}
	}
	ro.Token = token
	return ro, nil
}

func runWorker(f *cmdutil.Factory, o *WorkerOptions) error {
	// Signals are caught from the start: one that arrives while the
	// worker starts drains it as soon as it is up.
	sigs, stop := cmdutil.NotifyStop()
	defer stop()
	cwd, err := o.Workdir()
	if err != nil {
		return err
	}
	cfg, err := cmdutil.LoadConfig(f, &o.GlobalOptions, cwd)
	if err != nil {
		return err
	}
	spaces, err := workerWorkspaces(cfg, cwd, o.Workspaces)
	if err != nil {
		return err
	}
	ro, err := workerRemote(cfg, o)
	if err != nil {
		return err
	}
	logger, closeLog := cmdutil.OpenLogger(cfg.Home, f.Env)
	defer closeLog()

	sys := kernel.NewSystem(logger)
	shutdown := func() {
		ctx, cancel := context.WithTimeout(context.Background(), workerDrainTimeout)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			logger.Warn("worker: shutdown", "err", err)
		}
	}
	// The endpoint first: PIDs made before it would carry no address a
	// scheduler could answer.
	rem, err := remote.StartRemote(sys, ro)
	if err != nil {
		shutdown()
		return &cmdutil.UsageError{Err: err}
	}
	host, err := assemble.StartWorkerHost(sys, worker.HostSpec{Name: o.Name, Capacity: o.Capacity,
		Workspaces: spaces, Config: cfg, Logger: logger})
	if err != nil {
		rem.Stop(5 * time.Second)
		shutdown()
		return cmdutil.AsUsage(err)
	}
	return workUntilSignal(f, sigs, sys, rem, host, logger)
}

// workUntilSignal announces the worker, serves until SIGINT, SIGTERM or SIGHUP,
// then drains it and stops everything. A second signal stops waiting for
// the drain.
func workUntilSignal(f *cmdutil.Factory, sigs <-chan os.Signal, sys *kernel.System, rem *remote.Remote, host *worker.Host, logger *slog.Logger) error {
	fmt.Fprintf(f.Stderr, "reasonix worker %s listening on %s\n", host.Name(), rem.Address())
	logger.Info("worker: listening", "name", host.Name(), "addr", rem.Address())
	<-sigs
	logger.Info("worker: draining")

	ctx, cancel := context.WithTimeout(context.Background(), workerDrainTimeout)
	defer cancel()
	drained := make(chan error, 1)
	go func() { drained <- host.Drain(ctx) }()
	select {
	case err := <-drained:
		if err != nil {
			logger.Warn("worker: drain", "err", err)
		}
	case <-sigs:
		logger.Warn("worker: second signal: stopping without waiting for the tasks")
		cancel()
		<-drained
	}
	if err := host.Stop(5 * time.Second); err != nil {
		logger.Warn("worker: stop", "err", err)
	}
	rem.Stop(5 * time.Second)
	// What a tool that ignored its cancellation left running is killed
	// rather than orphaned.
	if err := proc.KillAll(cmdutil.ForceKillTimeout); err != nil {
		logger.Warn("worker: kill child processes", "err", err)
	}
	sctx, scancel := context.WithTimeout(context.Background(), workerDrainTimeout)
	defer scancel()
	if err := sys.Shutdown(sctx); err != nil {
		logger.Warn("worker: shutdown", "err", err)
	}
	return nil
}
