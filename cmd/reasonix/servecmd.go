package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/bcrypt"

	"reasonix/actors"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/cmd/reasonix/internal/serve"
	"reasonix/core/config"
	"reasonix/core/proc"
	"reasonix/core/session"
)

// defaultServeAddr is where `serve` listens without --addr or [serve]
// addr: loopback only, where auth none is safe.
const defaultServeAddr = "127.0.0.1:8787"

// serveShutdownTimeout bounds a clean stop: closing every session and
// letting the last requests finish.
const serveShutdownTimeout = 15 * time.Second

// ServeOptions are the inputs of `reasonix serve`.
type ServeOptions struct {
	cmdutil.GlobalOptions
	// Addr, Auth and Token override [serve] addr, auth_mode and token;
	// empty keeps the config's value.
	Addr  string
	Auth  string
	Token string
	// Password is password mode's password for this run (hashed at
	// start), or what --hash-password hashes.
	Password string
	// HashPassword prints a bcrypt hash of the password and exits.
	HashPassword bool
}

// NewCmdServe builds `reasonix serve`. runF replaces the action in tests.
func NewCmdServe(f *cmdutil.Factory, runF func(*ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{}
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Serve the browser frontend for this workspace",
		Long: `Serve the chat in a browser: open the address it prints. Sessions are
started, resumed and closed from the page, several at once; stopping the
server (Ctrl-C) closes them all with their transcripts saved.

Authentication (--auth or [serve] auth_mode):
  none      no login; only allowed on a loopback address
  token     a secret token; without --token or [serve] token one is made
            at start and the address to open, with it, is printed
  password  a password; [serve] password_hash holds its bcrypt hash
            (reasonix serve --hash-password), or --password gives one for
            this run

--hash-password prints the bcrypt hash of --password (or of the first line
of standard input) for [serve] password_hash, and exits.

Exit codes: 0 stopped cleanly, 1 failed (the address is taken), 2 usage or
config error (no authentication on a non-loopback address).`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Auth != "" && !validAuth(opts.Auth) {
				return cmdutil.UsageErrorf("--auth %q: want none, token or password", opts.Auth)
			}
			if runF != nil {
				return runF(opts)
			}
			return runServe(f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Addr, "addr", "", "listen on HOST:PORT (default: [serve] addr, else "+defaultServeAddr+")")
	fl.StringVar(&opts.Auth, "auth", "", "none, token or password (default: [serve] auth_mode, else none)")
	fl.StringVar(&opts.Token, "token", "", "token mode's token (default: [serve] token, else a new one)")
	fl.StringVar(&opts.Password, "password", "", "password mode's password for this run; with --hash-password, the password to hash")
	fl.BoolVar(&opts.HashPassword, "hash-password", false, "print a bcrypt hash of the password for [serve] password_hash and exit")
	cmdutil.AddGlobalFlags(cmd, &opts.GlobalOptions)
	return cmd
}

func validAuth(mode string) bool {
	return mode == serve.AuthNone || mode == serve.AuthToken || mode == serve.AuthPassword
}

// serveSettings is what the server runs with, flags over config.
type serveSettings struct {
	addr, auth, token, hash string
	// generated says the token was made at start: only then is the
	// address with the token printed, since a configured one is known.
	generated bool
}

// resolveServe merges the flags over [serve] and checks the result: a
// non-loopback address needs authentication, password mode a password.
func resolveServe(c config.Serve, o *ServeOptions) (serveSettings, error) {
	s := serveSettings{addr: c.Addr, auth: c.AuthMode, token: c.Token, hash: c.PasswordHash}
	if s.addr == "" {
		s.addr = defaultServeAddr
	}
	if o.Addr != "" {
		s.addr = o.Addr
	}
	switch {
	case o.Auth != "":
		s.auth = o.Auth
	case o.Password != "":
		s.auth = serve.AuthPassword
	case o.Token != "":
		s.auth = serve.AuthToken
	}
	if s.auth == "" {
		s.auth = serve.AuthNone
	}
	if !validAuth(s.auth) {
		return s, cmdutil.UsageErrorf("[serve] auth_mode %q: want none, token or password", s.auth)
	}
	if o.Token != "" && s.auth != serve.AuthToken {
		return s, cmdutil.UsageErrorf("--token goes with --auth token")
	}
	if o.Password != "" && s.auth != serve.AuthPassword {
		return s, cmdutil.UsageErrorf("--password goes with --auth password")
	}
	host, _, err := net.SplitHostPort(s.addr)
	if err != nil {
		return s, cmdutil.UsageErrorf("--addr %q: want HOST:PORT (%v)", s.addr, err)
	}
	if s.auth == serve.AuthNone && !cmdutil.IsLoopback(host) {
		return s, cmdutil.UsageErrorf("refusing to serve %s without authentication: anyone who can reach it could run commands here; use --auth token or --auth password, or a loopback address such as 127.0.0.1", s.addr)
	}
	switch s.auth {
	case serve.AuthToken:
		if o.Token != "" {
			s.token = o.Token
		}
		if s.token == "" {
			var b [24]byte
			if _, err := rand.Read(b[:]); err != nil {
				return s, fmt.Errorf("make a token: %w", err)
			}
			s.token, s.generated = hex.EncodeToString(b[:]), true
		}
	case serve.AuthPassword:
		if o.Password != "" {
			h, err := bcrypt.GenerateFromPassword([]byte(o.Password), bcrypt.DefaultCost)
			if err != nil {
				return s, cmdutil.UsageErrorf("--password: %v", err)
			}
			s.hash = string(h)
		}
		if s.hash == "" {
			return s, cmdutil.UsageErrorf("password mode needs [serve] password_hash (make one with reasonix serve --hash-password) or --password")
		}
		if _, err := bcrypt.Cost([]byte(s.hash)); err != nil {
			return s, cmdutil.UsageErrorf("[serve] password_hash is not a bcrypt hash (make one with reasonix serve --hash-password): %v", err)
		}
	}
	return s, nil
}

// hashPassword prints the bcrypt hash of --password, or of the first line
// of stdin.
func hashPassword(f *cmdutil.Factory, o *ServeOptions) error {
	pw := o.Password
	if pw == "" {
		line, err := bufio.NewReader(f.Stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read the password: %w", err)
		}
		pw = strings.TrimRight(line, "\r\n")
	}
	if pw == "" {
		return cmdutil.UsageErrorf("--hash-password: no password (give --password or one line on stdin)")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
	if err != nil {
		return cmdutil.UsageErrorf("--hash-password: %v", err)
	}
	_, err = fmt.Fprintln(f.Stdout, string(h))
	return err
}

func runServe(f *cmdutil.Factory, o *ServeOptions) error {
	if o.HashPassword {
		return hashPassword(f, o)
	}
	cwd, err := o.Workdir()
	if err != nil {
		return err
	}
	cfg, err := cmdutil.LoadConfig(f, &o.GlobalOptions, cwd)
	if err != nil {
		return err
	}
	if trusted, err := askTrust(f, cfg, cwd); err != nil {
		return err
	} else if trusted {
		// Its warnings were printed already; only the notices go.
		quiet := *f
		quiet.Stderr = io.Discard
		if cfg, err = cmdutil.LoadConfig(&quiet, &o.GlobalOptions, cwd); err != nil {
			return err
		}
	}
	st, err := resolveServe(cfg.Serve, o)
	if err != nil {
		return err
	}
	logger, closeLog := cmdutil.OpenLogger(cfg.Home, f.Env)
	defer closeLog()

	g := o.GlobalOptions
	g.Cwd = cwd
	srv, err := serve.New(serve.Options{
		Open: func(ctx context.Context, req serve.OpenRequest) (*actors.Live, []string, error) {
			live, warns, err := openLive(f, g, liveRequest{Cwd: cwd, Model: req.Model, Resume: req.Resume, PlanMode: req.Plan, PermissionMode: req.Posture}, logger)
			if _, ok := errors.AsType[*cmdutil.UsageError](err); ok {
				err = fmt.Errorf("%w: %w", serve.ErrInvalid, err)
			}
			return live, warns, err
		},
		Sessions: func() ([]session.Summary, error) {
			return session.List(session.ProjectDir(cfg.Home, cwd))
		},
		Cwd: cwd, Home: cfg.Home,
		AuthMode: st.auth, Token: st.token, PasswordHash: st.hash,
		BehindProxy: cfg.Serve.BehindProxy,
		Logger:      logger,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", st.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", st.addr, err)
	}
	return serveUntilSignal(f, srv, ln, st, logger)
}

// serveUntilSignal prints where the server listens, serves until SIGINT or
// SIGTERM, then stops cleanly: every session closed, transcripts saved,
// and whatever child processes are left killed by process group. A second
// signal stops waiting for the clean stop.
func serveUntilSignal(f *cmdutil.Factory, srv *serve.Server, ln net.Listener, st serveSettings, logger *slog.Logger) error {
	sigs, stop := cmdutil.NotifyStop()
	defer stop()

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	addr := ln.Addr().String()
	fmt.Fprintf(f.Stdout, "reasonix serve: listening on http://%s/ (auth %s)\n", addr, st.auth)
	if st.generated {
		fmt.Fprintf(f.Stdout, "reasonix serve: open http://%s/?token=%s\n", browsable(addr), st.token)
	}
	logger.Info("serve: listening", "addr", addr, "auth", st.auth)

	select {
	case err := <-served:
		return err
	case <-sigs:
	}
	logger.Info("serve: stopping")
	ctx, cancel := context.WithTimeout(context.Background(), serveShutdownTimeout)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- srv.Shutdown(ctx) }()
	var err error
	select {
	case err = <-stopped:
	case <-sigs:
		// The user does not want to wait: the tools a closing session
		// waits for are killed, and so are the last requests.
		logger.Warn("serve: second interrupt: killing child processes and exiting")
		if kerr := proc.KillAll(cmdutil.ForceKillTimeout); kerr != nil {
			logger.Warn("serve: kill child processes", "err", kerr)
		}
		cancel()
		err = <-stopped
	}
	// What a tool that ignored its cancellation left running is killed
	// rather than orphaned.
	if kerr := proc.KillAll(cmdutil.ForceKillTimeout); kerr != nil {
		logger.Warn("serve: kill child processes", "err", kerr)
	}
	if serr := <-served; serr != nil {
		err = errors.Join(err, serr)
	}
	if err != nil {
		logger.Warn("serve: shutdown", "err", err)
	}
	fmt.Fprintln(f.Stdout, "reasonix serve: stopped")
	return nil
}

// browsable is addr as a browser on this machine opens it: a wildcard
// address is reached at loopback.
func browsable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}
