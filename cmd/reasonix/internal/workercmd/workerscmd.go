package workercmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"reasonix/actors/remote"
	"reasonix/assemble"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/config"
)

// WorkersOptions are the inputs of `reasonix workers`.
type WorkersOptions struct {
	cmdutil.GlobalOptions
	JSON bool
	// Timeout bounds each worker's answer.
	Timeout time.Duration
}

// WorkersTimeout is how long each worker is given to answer by default:
// a live worker answers in milliseconds, and a listing should not hang on
// a host that silently drops packets.
const WorkersTimeout = 3 * time.Second

// NewCmdWorkers builds `reasonix workers`. runF replaces the action in tests.
func NewCmdWorkers(f *cmdutil.Factory, runF func(*WorkersOptions) error) *cobra.Command {
	opts := &WorkersOptions{}
	cmd := &cobra.Command{
		Use:   "workers [flags]",
		Short: "List the configured workers, their state and load",
		Long: `Ask every worker host listed in [[workers]] of the config, all at once,
whether it is up and how loaded it is, and print one row per worker:

  NAME, ADDRESS  as configured
  STATE          up; unreachable (nothing answers at the address); bad token
                 (the worker refused the token); tls error (one end uses TLS
                 and the other does not, or the certificate is not trusted);
                 incompatible (another protocol version, or no Reasonix
                 worker); wrong workspace (it does not serve this workspace:
                 [[workers]] workspace, else the basename of the workspace
                 root); draining (stopping, takes no new task); no answer (it
                 took the connection but its answer never came back: it must
                 be able to reach this host at [remote] listen or advertise);
                 no token (neither REASONIX_WORKER_TOKEN nor [remote]
                 token_file gives one)
  CAPACITY       the worker's run slots, RUNNING the busy ones, FREE the rest
  RTT            the round trip of the connection check
  WORKSPACES     the workspace names the worker serves

Why a worker is not up is printed below the table. Each worker has --timeout
to answer. --json prints an array of objects with name, address, state,
capacity, running, free, rtt_ms, workspaces and error ("" when up); the load
fields are 0 when the worker did not say.

Exit codes: 0 when every worker is up (or none is configured), 1 when one is
not, 2 on a bad flag or config.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Timeout <= 0 {
				return cmdutil.UsageErrorf("--timeout %s: want a positive duration", opts.Timeout)
			}
			if runF != nil {
				return runF(opts)
			}
			return runWorkers(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.JSON, "json", false, "print JSON instead of a table")
	fl.DurationVar(&opts.Timeout, "timeout", WorkersTimeout, "how long each worker has to answer")
	cmdutil.AddGlobalFlags(cmd, &opts.GlobalOptions)
	return cmd
}

// The states of a worker in `reasonix workers` and doctor; part of the
// CLI contract (docs/SPEC.md).
const (
	WorkerStateUp             = "up"
	WorkerStateUnreachable    = "unreachable"
	workerStateBadToken       = "bad token"
	workerStateTLS            = "tls error"
	workerStateIncompatible   = "incompatible"
	workerStateWrongWorkspace = "wrong workspace"
	WorkerStateDraining       = "draining"
	WorkerStateNoAnswer       = "no answer"
	workerStateNoToken        = "no token"
	// workerStateError is any other failure (an address the probe cannot
	// even dial, a local endpoint that would not start).
	workerStateError = "error"
)

// WorkerJSON is one entry of `workers --json` (and one row of the table);
// its field names are part of the CLI contract (docs/SPEC.md).
type WorkerJSON struct {
	Name       string   `json:"name"`
	Address    string   `json:"address"`
	State      string   `json:"state"`
	Capacity   int      `json:"capacity"`
	Running    int      `json:"running"`
	Free       int      `json:"free"`
	RTTMS      float64  `json:"rtt_ms"`
	Workspaces []string `json:"workspaces"`
	Error      string   `json:"error"`
	// known says the worker reported its load, so the table shows it.
	known bool
}

func runWorkers(ctx context.Context, f *cmdutil.Factory, opts *WorkersOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cwd, err := opts.Workdir()
	if err != nil {
		return err
	}
	cfg, err := cmdutil.LoadConfig(f, &opts.GlobalOptions, cwd)
	if err != nil {
		return err
	}
	if len(cfg.Workers) == 0 {
		if opts.JSON {
			_, err := fmt.Fprintln(f.Stdout, "[]")
			return err
		}
		return printNoWorkers(f.Stdout, config.UserConfigPath(cfg.Home))
	}
	tok := LookupWorkerToken(f, cfg)
	rows, err := QueryWorkers(ctx, cfg, cwd, tok, opts.Timeout)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	if opts.JSON {
		if err := cmdutil.WriteJSON(f, rows); err != nil {
			return err
		}
	} else if err := printWorkers(f.Stdout, rows); err != nil {
		return err
	}
	for _, r := range rows {
		if r.State != WorkerStateUp {
			return cmdutil.ErrSilent
		}
	}
	return nil
}

func printNoWorkers(w io.Writer, userConfig string) error {
	_, err := fmt.Fprintf(w, `No workers configured. Add a [[workers]] table per worker host to %s:

  [[workers]]
  name = "build1"
  address = "build1.lan:7420"
  capacity = 4

start each with `+"`reasonix worker --listen ADDR`"+`, and give both ends the same
secret in REASONIX_WORKER_TOKEN (or a file named by [remote] token_file).
`, userConfig)
	return err
}

func printWorkers(w io.Writer, rows []WorkerJSON) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tADDRESS\tSTATE\tCAPACITY\tRUNNING\tFREE\tRTT\tWORKSPACES")
	for _, r := range rows {
		capacity, running, free, rtt, ws := "-", "-", "-", "-", "-"
		if r.known {
			capacity, running, free = strconv.Itoa(r.Capacity), strconv.Itoa(r.Running), strconv.Itoa(r.Free)
			if len(r.Workspaces) > 0 {
				ws = strings.Join(r.Workspaces, ", ")
			}
		}
		if r.RTTMS > 0 {
			rtt = FormatRTT(r.RTTMS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Address, r.State, capacity, running, free, rtt, ws)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	first := true
	for _, r := range rows {
		if r.Error == "" {
			continue
		}
		if first {
			fmt.Fprintln(w)
			first = false
		}
		fmt.Fprintf(w, "%s: %s\n", r.Name, r.Error)
	}
	return nil
}

// FormatRTT prints a round trip in milliseconds, with a decimal below 10.
func FormatRTT(ms float64) string {
	if ms < 10 {
		return strconv.FormatFloat(ms, 'f', 1, 64) + "ms"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + "ms"
}

// tokenLookup is the worker token and where it came from, or why there is
// none.
type tokenLookup struct {
	token string
	// file is the token file read, "" when the environment gave the token.
	File string
	Err  error
}

// LookupWorkerToken finds the shared worker secret the way a session does: the
// environment first, then [remote] token_file (which must not be readable
// by others).
func LookupWorkerToken(f *cmdutil.Factory, cfg *config.Config) tokenLookup {
	env, file := f.Env, cfg.Remote.TokenFile
	tok, err := config.WorkerTokenFrom(env, file)
	switch {
	case err != nil:
		return tokenLookup{File: file, Err: err}
	case strings.TrimSpace(env(config.WorkerTokenEnv)) != "":
		return tokenLookup{token: tok}
	}
	return tokenLookup{token: tok, File: file}
}

// workerWorkspace is the workspace name worker w must serve: its
// configured workspace, else the basename of this workspace's root.
func workerWorkspace(cfg *config.Config, cwd string, w config.Worker) string {
	if w.Workspace != "" {
		return w.Workspace
	}
	return filepath.Base(assemble.WorkspaceRoot(cfg, cwd))
}

// QueryOptions are the remote options of a listing's own endpoint: the
// configured credentials, on the configured listen host but a free port,
// so a listing works beside a running session that holds [remote] listen's
// port. With advertise set, its host is what workers dial back, on the
// port picked here.
func QueryOptions(r config.Remote, token string) (remote.RemoteOptions, error) {
	o := remote.RemoteOptions{Listen: "127.0.0.1:0", Token: token, TLSCert: r.TLSCert, TLSKey: r.TLSKey, TLSCA: r.TLSCA}
	host := "127.0.0.1"
	if r.Listen != "" {
		h, _, err := net.SplitHostPort(r.Listen)
		if err != nil {
			return o, fmt.Errorf("[remote] listen %q: %w", r.Listen, err)
		}
		host = h
		o.Listen = net.JoinHostPort(host, "0")
	}
	if r.Advertise == "" {
		return o, nil
	}
	advHost, _, err := net.SplitHostPort(r.Advertise)
	if err != nil {
		return o, fmt.Errorf("[remote] advertise %q: %w", r.Advertise, err)
	}
	// The advertised address must carry the port actually bound, so pick
	// it before starting: a free port now is free a moment later unless
	// something races for it, which StartRemote would then report.
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return o, fmt.Errorf("[remote] listen %s: %w", o.Listen, err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	if err := ln.Close(); err != nil {
		return o, err
	}
	o.Listen, o.Advertise = net.JoinHostPort(host, port), net.JoinHostPort(advHost, port)
	return o, nil
}

// QueryWorkers asks every configured worker for its state at once, each
// within timeout, and returns one row per worker in config order. The
// error is for a local endpoint that cannot start (bad TLS files, a listen
// host not of this machine): a configuration mistake.
func QueryWorkers(ctx context.Context, cfg *config.Config, cwd string, tok tokenLookup, timeout time.Duration) ([]WorkerJSON, error) {
	rows := make([]WorkerJSON, len(cfg.Workers))
	for i, w := range cfg.Workers {
		rows[i] = WorkerJSON{Name: w.Name, Address: w.Address, Workspaces: []string{}}
	}
	if tok.Err != nil {
		for i := range rows {
			rows[i].State, rows[i].Error = workerStateNoToken, tok.Err.Error()
		}
		return rows, nil
	}
	o, err := QueryOptions(cfg.Remote, tok.token)
	if err != nil {
		return nil, err
	}
	q, err := remote.NewWorkerQuerier(o)
	if err != nil {
		return nil, fmt.Errorf("[remote]: %w", err)
	}
	defer q.Close()
	var wg sync.WaitGroup
	for i, w := range cfg.Workers {
		wg.Go(func() {
			qctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			info, err := q.Query(qctx, w.Address)
			rows[i].fill(info, err, workerWorkspace(cfg, cwd, w))
		})
	}
	wg.Wait()
	return rows, nil
}

// fill sets a row from a query's answer; want is the workspace the worker
// must serve.
func (r *WorkerJSON) fill(info remote.WorkerInfo, err error, want string) {
	r.RTTMS = float64(info.RTT.Microseconds()) / 1000
	if info.Protocol != 0 {
		r.known = true
		r.Capacity, r.Running = info.Capacity, info.Running
		r.Free = max(info.Capacity-info.Running, 0)
		if info.Workspaces != nil {
			r.Workspaces = info.Workspaces
		}
	}
	switch {
	case err != nil:
		r.State, r.Error = workerErrorState(err), err.Error()
	case info.Refused == "draining":
		r.State, r.Error = WorkerStateDraining, "draining: it takes no new task"
	case info.Refused == "workspace" || !slices.Contains(info.Workspaces, want):
		r.State = workerStateWrongWorkspace
		r.Error = fmt.Sprintf("serves %s, not %q (set [[workers]] workspace, or serve it with reasonix worker --workspace %s=PATH)",
			ServedList(info.Workspaces), want, want)
	case info.Refused != "":
		r.State, r.Error = workerStateError, "refused: "+info.Refused
	default:
		r.State = WorkerStateUp
	}
}

func ServedList(ws []string) string {
	if len(ws) == 0 {
		return "no workspace"
	}
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = strconv.Quote(w)
	}
	return strings.Join(q, ", ")
}

// workerErrorState names the state a query error means.
func workerErrorState(err error) string {
	switch {
	case errors.Is(err, remote.ErrWorkerAuth):
		return workerStateBadToken
	case errors.Is(err, remote.ErrWorkerTLS):
		return workerStateTLS
	case errors.Is(err, remote.ErrWorkerIncompatible):
		return workerStateIncompatible
	case errors.Is(err, remote.ErrWorkerNoAnswer):
		return WorkerStateNoAnswer
	case errors.Is(err, remote.ErrWorkerUnreachable):
		return WorkerStateUnreachable
	}
	return workerStateError
}
