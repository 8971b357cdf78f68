package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"reasonix/actors"
	"reasonix/core/session"
)

// OpenRequest asks Options.Open for a session: a new one, or the saved
// session Resume names. Model is a model reference; empty means the
// configured default.
type OpenRequest struct {
	Resume string
	Model  string
	// Plan opens the session in plan mode.
	Plan bool
	// Posture is the approval posture to start with; empty means the
	// configured one. A session reopened in or out of plan mode keeps the
	// posture it had.
	Posture string
}

// ErrInvalid marks an Open failure that is the request's fault (an unknown
// model, a session that cannot be resumed as asked): it is answered 400,
// any other failure 500.
var ErrInvalid = errors.New("invalid request")

// Options is what the server needs from its command.
type Options struct {
	// Open starts a session and returns it with the warnings to show. The
	// server owns what it returns and closes it.
	Open func(ctx context.Context, req OpenRequest) (*actors.Live, []string, error)
	// Sessions lists the workspace's saved sessions, newest first.
	Sessions func() ([]session.Summary, error)
	// Cwd is the served workspace, absolute.
	Cwd string
	// Home is the reasonix home, where the user's custom commands live.
	Home string
	// AuthMode is none, token or password.
	AuthMode string
	// Token is token mode's secret; it must not be empty in that mode.
	Token string
	// PasswordHash is password mode's bcrypt hash.
	PasswordHash string
	// BehindProxy trusts X-Forwarded-For, -Proto and -Host.
	BehindProxy bool
	// Assets is the page: index.html and assets/. Nil means the embedded
	// page.
	Assets fs.FS
	// Logger receives the server's diagnostics; nil discards them.
	Logger *slog.Logger
	// PingInterval is how often an idle event stream gets a comment line;
	// zero means 15 s.
	PingInterval time.Duration
	// CloseTimeout bounds the closing of one session; zero means 10 s.
	CloseTimeout time.Duration
	// StreamBound is how many unread events one event stream holds before
	// it lags; zero means DefaultStreamBound.
	StreamBound int
	// Now is the clock of the login rate limit; nil means time.Now.
	Now func() time.Time
}

// Auth modes.
const (
	AuthNone     = "none"
	AuthToken    = "token"
	AuthPassword = "password"
)

// Server is one `reasonix serve` instance. Create it with New, run it with
// Serve and stop it with Shutdown.
type Server struct {
	opts   Options
	log    *slog.Logger
	auth   *authenticator
	assets fs.FS

	// hosts is set by Serve from the listener, before the first request.
	hosts hostPolicy
	http  *http.Server

	mu      sync.Mutex
	lives   map[string]*entry
	closing bool
	// titles are the first prompts of saved transcripts, by path.
	titles map[string]string
}

// New checks opts and returns a server that is not yet listening.
func New(opts Options) (*Server, error) {
	if opts.Open == nil || opts.Sessions == nil {
		return nil, errors.New("serve: Open and Sessions are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.PingInterval <= 0 {
		opts.PingInterval = 15 * time.Second
	}
	if opts.CloseTimeout <= 0 {
		opts.CloseTimeout = 10 * time.Second
	}
	if opts.StreamBound <= 0 {
		opts.StreamBound = DefaultStreamBound
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	auth, err := newAuthenticator(opts)
	if err != nil {
		return nil, err
	}
	assets := opts.Assets
	if assets == nil {
		if assets, err = fs.Sub(embedded, "web"); err != nil {
			return nil, fmt.Errorf("serve: page assets: %w", err)
		}
	}
	s := &Server{opts: opts, log: opts.Logger, auth: auth, assets: assets, lives: map[string]*entry{}, titles: map[string]string{}}
	s.http = &http.Server{
		Handler: s.routes(),
		// No ReadTimeout or WriteTimeout: they would cut event streams.
		// Each handler sets its own deadlines instead (see limited).
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// Serve answers requests on ln until Shutdown; it then returns nil. The
// Host check takes the bound address from ln.
func (s *Server) Serve(ln net.Listener) error {
	hosts, err := newHostPolicy(ln.Addr().String(), s.opts.BehindProxy)
	if err != nil {
		return err
	}
	s.hosts = hosts
	if err := s.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// Shutdown closes every session (saving its transcript), which ends their
// event streams, then stops the HTTP server, waiting for the handlers
// still running until ctx ends; after that it drops their connections.
// Sessions opened while it runs are closed as they arrive.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	var all []*entry
	for _, e := range s.lives {
		all = append(all, e)
	}
	clear(s.lives)
	s.mu.Unlock()

	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, e := range all {
		wg.Go(func() { errs[i] = e.close(s.opts.CloseTimeout) })
	}
	wg.Wait()
	if err := s.http.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("serve: shutdown: %w", err), s.http.Close())
	}
	return errors.Join(errs...)
}

// isClosing reports whether Shutdown has begun.
func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// routes is the server's one handler: every request passes the Host check,
// then the Origin check for a state-changing method, then authentication
// for everything but the page, /healthz and the login endpoints.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok"))
	})
	mux.Handle("GET /{$}", s.page(http.HandlerFunc(s.handleIndex)))
	mux.Handle("GET /assets/", s.page(http.FileServerFS(s.assets)))

	mux.Handle("GET /api/auth", limited(s.handleAuthState))
	mux.Handle("POST /api/login", limited(s.handleLogin))
	mux.Handle("POST /api/logout", limited(s.handleLogout))

	api := func(pattern string, h http.HandlerFunc) {
		mux.Handle(pattern, s.require(limited(h)))
	}
	api("GET /api/sessions", s.handleList)
	api("POST /api/sessions", s.handleOpen)
	api("GET /api/sessions/{id}", s.handleSession)
	api("DELETE /api/sessions/{id}", s.handleDelete)
	api("GET /api/sessions/{id}/messages", s.handleMessages)
	api("GET /api/sessions/{id}/fleet", s.handleFleet)
	api("POST /api/sessions/{id}/commands", s.handleCommand)
	api("GET /api/prompts", s.handlePrompts)
	api("GET /api/commands", s.handleCommands)
	api("GET /api/complete", s.handleComplete)
	// The event stream sets its own deadlines, write by write.
	mux.Handle("GET /api/sessions/{id}/events", s.require(http.HandlerFunc(s.handleEvents)))
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
	})
	return s.guard(mux)
}

// requestTimeout bounds every request but an event stream: its handler's
// context, and the reading of its body and writing of its answer.
const requestTimeout = 30 * time.Second

// limited gives a request its deadline.
func limited(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadline := time.Now().Add(requestTimeout)
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(deadline)
		_ = rc.SetWriteDeadline(deadline)
		ctx, cancel := context.WithDeadline(r.Context(), deadline)
		defer cancel()
		h(w, r.WithContext(ctx))
	})
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":"encode answer"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeError answers {"error": msg} with status.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
