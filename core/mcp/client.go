package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"reasonix/core/panics"
)

// Error is a JSON-RPC error the server answered a request with.
type Error = jsonrpc.Error

// Elicitor answers a server's elicitation/create request, usually by
// asking the user. ctx ends when the server cancels the request or the
// Client closes; an Elicitor must return then, since Close waits for it.
type Elicitor func(ctx context.Context, req ElicitRequest) (ElicitResult, error)

// Options are the client-side settings of a connection.
type Options struct {
	// Logger receives server log notifications and diagnostics; nil
	// discards them.
	Logger *slog.Logger
	// Root is the workspace directory offered to the server through
	// roots/list; empty means the current directory at Connect.
	Root string
	// Elicitor answers elicitation requests. When nil the capability is
	// not advertised and any such request is answered with an error.
	Elicitor Elicitor
	// OnListChanged is told when the server announces that its tools,
	// prompts or resources changed. It must return promptly without
	// calling the Client. A panic in it is logged and the connection
	// carries on.
	OnListChanged func(ListKind)
}

// Client is one MCP connection after the handshake, a thin layer over the
// SDK's client session that speaks our types. Its methods are safe for
// concurrent use. A Client whose transport fails stays failed: Done is
// closed, Err says why, and every call returns that error; reconnecting
// means a new Connect.
type Client struct {
	t    Transport
	cs   *sdk.ClientSession
	log  *slog.Logger
	opts Options

	nextToken atomic.Int64
	mu        sync.Mutex
	progress  map[string]*progressSink
	err       error
	done      chan struct{}

	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	// Set by the handshake, read-only once Connect returns.
	protocolVersion string
	serverInfo      Implementation
	capabilities    ServerCapabilities
	instructions    string
}

// failer is implemented by transports that know why their connection
// ended (a stdio server's exit status).
type failer interface{ failure() error }

// explainer is implemented by transports that can say why a handshake was
// refused (an HTTP status).
type explainer interface{ explain(error) error }

// Connect performs the MCP handshake over t and returns the ready Client.
// It asks for LatestProtocolVersion, accepts any of the versions the SDK
// supports, advertises roots (and elicitation when an Elicitor is set),
// then sends notifications/initialized. The Client owns t from here on:
// Close closes it, and so does a failed Connect.
func Connect(ctx context.Context, t Transport, info Implementation, opts Options) (*Client, error) {
	root := opts.Root
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			_ = t.Close()
			return nil, fmt.Errorf("mcp connect: workspace root: %w", err)
		}
		root = wd
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	c := &Client{
		t:        t,
		log:      logger(opts.Logger),
		opts:     opts,
		progress: make(map[string]*progressSink),
		done:     make(chan struct{}),
	}
	co := &sdk.ClientOptions{
		LoggingMessageHandler:      c.serverLog,
		ToolListChangedHandler:     func(context.Context, *sdk.ToolListChangedRequest) { c.listChanged(ListTools) },
		PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) { c.listChanged(ListPrompts) },
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { c.listChanged(ListResources) },
		Capabilities:               &sdk.ClientCapabilities{RootsV2: &sdk.RootCapabilities{}},
	}
	if opts.Elicitor != nil {
		co.ElicitationHandler = c.elicit
	}
	// Progress is read in line with the responses, so every update of a
	// call reaches it before its result; the SDK's own handler runs apart
	// from its read loop and would race the result.
	var st sdk.Transport = t
	switch tt := t.(type) {
	case *Stdio:
		st = inlineProgress{t: t, c: c}
	case progressObserver:
		tt.observeProgress(c.progressParams)
	default:
		co.ProgressNotificationHandler = c.progressed
	}
	sc := sdk.NewClient(&sdk.Implementation{Name: info.Name, Title: info.Title, Version: info.Version}, co)
	sc.AddRoots(&sdk.Root{URI: fileURI(root), Name: filepath.Base(root)})
	cs, err := sc.Connect(ctx, st, &sdk.ClientSessionOptions{ProtocolVersion: LatestProtocolVersion})
	if err != nil {
		if e, ok := t.(explainer); ok {
			err = e.explain(err)
		}
		if f, ok := t.(failer); ok {
			if ferr := f.failure(); ferr != nil && !errors.Is(err, ferr) {
				err = fmt.Errorf("%w: %w", ferr, err)
			}
		}
		_ = t.Close()
		if strings.Contains(err.Error(), "unsupported protocol version") {
			return nil, fmt.Errorf("mcp handshake: %w; this client asked for %q and supports %s", err,
				LatestProtocolVersion, strings.Join(sdk.SupportedProtocolVersions(), ", "))
		}
		return nil, fmt.Errorf("mcp handshake: %w", err)
	}
	c.cs = cs
	if res := cs.InitializeResult(); res != nil {
		c.protocolVersion = res.ProtocolVersion
		if res.ServerInfo != nil {
			c.serverInfo = Implementation{Name: res.ServerInfo.Name, Title: res.ServerInfo.Title, Version: res.ServerInfo.Version}
		}
		c.instructions = res.Instructions
		if res.Capabilities != nil {
			if err := convert(res.Capabilities, &c.capabilities); err != nil {
				c.log.Warn("mcp server capabilities unreadable", "err", err)
			}
		}
	}
	panics.GoGroup(&c.wg, func() {
		werr := cs.Wait()
		c.shutdown(c.reason(werr))
	}, func(err error) {
		c.shutdown(fmt.Errorf("mcp session: %w", err))
	})
	return c, nil
}

// reason is why the session ended: the transport's own failure when it
// knows one, else what the SDK reported, else ErrClosed.
func (c *Client) reason(err error) error {
	if f, ok := c.t.(failer); ok {
		if ferr := f.failure(); ferr != nil {
			return ferr
		}
	}
	if err == nil {
		return ErrClosed
	}
	return err
}

// ProtocolVersion is the protocol revision agreed in the handshake.
func (c *Client) ProtocolVersion() string { return c.protocolVersion }

// ServerInfo is the server's name and version.
func (c *Client) ServerInfo() Implementation { return c.serverInfo }

// Capabilities are what the server declared it offers.
func (c *Client) Capabilities() ServerCapabilities { return c.capabilities }

// Instructions is the server's advice for using it, meant for the model's
// context; often empty.
func (c *Client) Instructions() string { return c.instructions }

// Done is closed when the connection ends, by Close or by failure.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err is why the connection ended: ErrClosed after Close, the transport's
// failure (such as an *ExitError) otherwise; nil while it is open.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close ends the connection: calls still waiting fail with ErrClosed, the
// transport is closed, and every goroutine of the Client has returned when
// Close does. The transport goes first: the SDK's own close would wait for
// calls in flight.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.shutdown(ErrClosed)
		c.closeErr = c.t.Close()
		if err := c.cs.Close(); c.closeErr == nil && !errors.Is(err, ErrClosed) {
			c.closeErr = err
		}
		if errors.Is(c.closeErr, ErrClosed) {
			c.closeErr = nil
		}
		c.wg.Wait()
	})
	return c.closeErr
}

// shutdown records why the connection ended, once.
func (c *Client) shutdown(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	close(c.done)
}

// fail explains a failed call: once the connection is gone, its reason
// (ErrClosed, a server's exit status) is part of every error.
func (c *Client) fail(method string, err error) error {
	reason := c.Err()
	if f, ok := c.t.(failer); ok {
		if ferr := f.failure(); ferr != nil {
			reason = ferr
		}
	}
	if reason != nil && !errors.Is(err, reason) {
		return fmt.Errorf("%s: %w: %w", method, reason, err)
	}
	return fmt.Errorf("%s: %w", method, err)
}

// ctxFail reports a call abandoned because ctx ended, keeping both the
// context error (for errors.Is) and a custom cause, when one was given.
func (c *Client) ctxFail(ctx context.Context, method string, err error) error {
	if ctx.Err() == nil {
		return c.fail(method, err)
	}
	cerr, cause := ctx.Err(), context.Cause(ctx)
	if cause != nil && cause != cerr {
		return fmt.Errorf("%s: %w: %w", method, cause, cerr)
	}
	return fmt.Errorf("%s: %w", method, cerr)
}

// elicit adapts the Elicitor to the SDK's handler. A panicking Elicitor
// becomes an error answer, never an unanswered request.
func (c *Client) elicit(ctx context.Context, req *sdk.ElicitRequest) (res *sdk.ElicitResult, err error) {
	defer panics.Recover(func(perr error) {
		c.logPanic("mcp server request handler panicked", perr, "method", "elicitation/create")
		res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "client failed handling elicitation/create"}
	})
	var our ElicitRequest
	if req.Params != nil {
		if err := convert(req.Params, &our); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "elicitation/create: invalid params"}
		}
	}
	r, err := c.opts.Elicitor(ctx, our)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "elicitation failed: " + err.Error()}
	}
	switch r.Action {
	case ElicitAccept, ElicitDecline, ElicitCancel:
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("elicitation failed: invalid action %q", r.Action)}
	}
	out := &sdk.ElicitResult{Action: r.Action}
	if r.Action == ElicitAccept {
		out.Content = r.Content
		if out.Content == nil {
			out.Content = map[string]any{}
		}
	}
	return out, nil
}

// progressSink is the progress callback of one call. The SDK delivers
// notifications on its own goroutines, so an update can race the call's
// result; the sink's lock makes sure none reaches the callback once the
// call has returned.
type progressSink struct {
	mu     sync.Mutex
	fn     ProgressFunc
	done   bool
	cancel context.CancelCauseFunc // ends the call when fn panics
	err    error                   // the panic, once fn panicked
}

// deliver runs the callback unless the call is over or the callback
// panicked before.
func (s *progressSink) deliver(c *Client, p Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	defer panics.Recover(func(err error) {
		s.done = true
		s.err = fmt.Errorf("progress callback: %w", err)
		s.cancel(s.err)
		c.logPanic("mcp progress callback panicked", err)
	})
	s.fn(p)
}

// finish ends the sink: no update reaches the callback after it returns.
// It returns the callback's panic, if it panicked.
func (s *progressSink) finish() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	return s.err
}

// inlineProgress is a transport whose connection hands progress
// notifications to their calls as they are read, in order with the
// responses, before the SDK sees them. It only suits connections the SDK
// needs nothing else from (stdio); the SDK's own handler, which runs
// apart from the read loop, serves the others.
type inlineProgress struct {
	t Transport
	c *Client
}

// Connect implements the SDK's Transport.
func (p inlineProgress) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := p.t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return inlineConn{Connection: conn, c: p.c}, nil
}

type inlineConn struct {
	sdk.Connection
	c *Client
}

// Read implements the SDK's Connection.
func (ic inlineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := ic.Connection.Read(ctx)
	if req, ok := m.(*jsonrpc.Request); ok && err == nil && !req.ID.IsValid() && req.Method == "notifications/progress" {
		ic.c.progressParams(req.Params)
	}
	return m, err
}

// progressObserver is implemented by transports that can show the Client
// progress notifications as they read them (HTTP).
type progressObserver interface {
	observeProgress(fn func(params json.RawMessage))
}

// progressParams delivers a progress notification read off the wire.
func (c *Client) progressParams(raw json.RawMessage) {
	var params sdk.ProgressNotificationParams
	if json.Unmarshal(raw, &params) == nil {
		c.progressed(context.Background(), &sdk.ProgressNotificationClientRequest{Params: &params})
	}
}

// progressed hands a progress notification to the sink of its call. An
// update that arrives after the call returned is dropped: the result
// supersedes it. A callback that panics fails its own call with the panic
// and hears no more; the connection and every other call carry on.
func (c *Client) progressed(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	if req == nil || req.Params == nil {
		return
	}
	key := fmt.Sprint(req.Params.ProgressToken)
	c.mu.Lock()
	sink := c.progress[key]
	c.mu.Unlock()
	if sink == nil {
		return
	}
	tok, _ := json.Marshal(req.Params.ProgressToken)
	sink.deliver(c, Progress{Token: tok, Progress: req.Params.Progress, Total: req.Params.Total, Message: req.Params.Message})
}

// listChanged tells OnListChanged. A panic in it has no call to fail, so
// it is logged and the connection carries on.
func (c *Client) listChanged(kind ListKind) {
	if c.opts.OnListChanged == nil {
		return
	}
	defer panics.Recover(func(err error) {
		c.logPanic("mcp list-changed callback panicked", err, "kind", kind)
	})
	c.opts.OnListChanged(kind)
}

// logPanic logs a recovered panic with the stack of the goroutine that
// panicked.
func (c *Client) logPanic(msg string, err error, attrs ...any) {
	attrs = append(attrs, "err", err)
	if pe, ok := errors.AsType[*panics.Error](err); ok {
		attrs = append(attrs, "stack", string(pe.Stack))
	}
	c.log.Error(msg, attrs...)
}

// serverLog forwards a notifications/message to the logger at the
// matching level.
func (c *Client) serverLog(ctx context.Context, req *sdk.LoggingMessageRequest) {
	if req == nil || req.Params == nil {
		return
	}
	p := req.Params
	level := slog.LevelInfo
	switch p.Level {
	case "debug":
		level = slog.LevelDebug
	case "warning":
		level = slog.LevelWarn
	case "error", "critical", "alert", "emergency":
		level = slog.LevelError
	}
	data, ok := p.Data.(string)
	if !ok {
		b, _ := json.Marshal(p.Data)
		data = string(b)
	}
	attrs := []any{"level", string(p.Level), "data", data}
	if p.Logger != "" {
		attrs = append(attrs, "logger", p.Logger)
	}
	c.log.Log(context.WithoutCancel(ctx), level, "mcp server log", attrs...)
}

// convert copies an SDK value into one of ours through its JSON form; the
// two follow the same wire schema.
func convert(from, to any) error {
	b, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, to)
}

// fileURI turns an absolute path into a file:// URI; a Windows path
// C:\x becomes file:///C:/x.
func fileURI(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}
