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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"reasonix/core/panics"
)

const (
	// cancelNoticeTimeout bounds sending notifications/cancelled for a
	// call whose context ended.
	cancelNoticeTimeout = 2 * time.Second
	// replyTimeout bounds sending the answer to a server's request.
	replyTimeout = 10 * time.Second
)

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
	// not advertised and any such request is declined.
	Elicitor Elicitor
	// OnListChanged is told when the server announces that its tools,
	// prompts or resources changed. It runs on the receive loop and must
	// return promptly without calling the Client. A panic in it is logged
	// and the connection carries on.
	OnListChanged func(ListKind)
}

// Client is one MCP connection after the handshake. Its methods are safe
// for concurrent use. A Client whose transport fails stays failed: Done is
// closed, Err says why, and every call returns that error; reconnecting
// means a new Connect.
type Client struct {
	t       Transport
	log     *slog.Logger
	opts    Options
	rootURI string
	rootDir string
	nextID  atomic.Int64

	mu       sync.Mutex
	pending  map[string]chan reply
	progress map[string]ProgressFunc
	inbound  map[string]context.CancelFunc
	err      error
	done     chan struct{}

	stopLoop  context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	// Set by the handshake, read-only once Connect returns.
	protocolVersion string
	serverInfo      Implementation
	capabilities    ServerCapabilities
	instructions    string
}

// Connect performs the MCP handshake over t and returns the ready Client.
// It asks for LatestProtocolVersion, accepts any of
// SupportedProtocolVersions, advertises roots (and elicitation when an
// Elicitor is set), then sends notifications/initialized. The Client owns
// t from here on: Close closes it, and so does a failed Connect.
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
		rootDir:  root,
		rootURI:  fileURI(root),
		pending:  make(map[string]chan reply),
		progress: make(map[string]ProgressFunc),
		inbound:  make(map[string]context.CancelFunc),
		done:     make(chan struct{}),
	}
	loopCtx, stop := context.WithCancel(context.Background())
	c.stopLoop = stop
	// A panic in the loop (a transport's Receive, a logger) leaves nobody
	// to read the server, so it ends the connection with the panic, stack
	// included, as the reason. It is not logged here: the logger may be
	// what panicked.
	panics.GoGroup(&c.wg, func() { c.readLoop(loopCtx) }, func(err error) {
		c.shutdown(fmt.Errorf("mcp read loop: %w", err))
	})
	if err := c.handshake(ctx, info); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Client) handshake(ctx context.Context, info Implementation) error {
	caps := map[string]any{"roots": map[string]any{"listChanged": false}}
	if c.opts.Elicitor != nil {
		caps["elicitation"] = map[string]any{}
	}
	var res initializeResult
	err := c.Call(ctx, "initialize", initializeParams{ProtocolVersion: LatestProtocolVersion, Capabilities: caps, ClientInfo: info}, &res)
	if err != nil {
		return fmt.Errorf("mcp handshake: %w", err)
	}
	if !supportedVersion(res.ProtocolVersion) {
		return fmt.Errorf("mcp handshake: server %q chose protocol version %q; this client asked for %q and supports %s",
			res.ServerInfo.Name, res.ProtocolVersion, LatestProtocolVersion, strings.Join(SupportedProtocolVersions, ", "))
	}
	c.protocolVersion = res.ProtocolVersion
	c.serverInfo = res.ServerInfo
	c.capabilities = res.Capabilities
	c.instructions = res.Instructions
	obs, _ := c.t.(HandshakeObserver)
	if obs != nil {
		obs.Negotiated(res.ProtocolVersion)
	}
	if err := c.Notify(ctx, "notifications/initialized", nil); err != nil {
		return fmt.Errorf("mcp handshake: %w", err)
	}
	if obs != nil {
		obs.Initialized()
	}
	return nil
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
// Close does.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.shutdown(ErrClosed)
		c.closeErr = c.t.Close()
		c.stopLoop()
		c.wg.Wait()
	})
	return c.closeErr
}

// shutdown records why the connection ended, once, and releases every
// waiting call and server request.
func (c *Client) shutdown(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	close(c.done)
	for _, cancel := range c.inbound {
		cancel()
	}
}

// Call sends a request and decodes its result into result, which may be
// nil to discard it. A JSON-RPC error from the server is returned as an
// *Error. When ctx ends first, the server is told with
// notifications/cancelled and Call returns ctx's error.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	return c.request(ctx, c.nextID.Add(1), method, params, result, nil)
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	msg, err := NewNotification(method, params)
	if err != nil {
		return err
	}
	if err := c.Err(); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if err := c.t.Send(ctx, msg); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// reply is what ends a pending call: the server's response, or err when
// the client gave up on it (its progress callback panicked).
type reply struct {
	msg Message
	err error
}

func (c *Client) request(ctx context.Context, id int64, method string, params, result any, onProgress ProgressFunc) error {
	msg, err := NewRequest(id, method, params)
	if err != nil {
		return err
	}
	key := strconv.FormatInt(id, 10)
	// Whoever removes the entry from pending sends the one reply, so a
	// buffer of one never blocks the sender.
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, err)
	}
	c.pending[key] = ch
	if onProgress != nil {
		c.progress[key] = onProgress
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, key)
		delete(c.progress, key)
		c.mu.Unlock()
	}()

	if err := c.t.Send(ctx, msg); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r := <-ch:
		return c.finish(ctx, method, msg.ID, r, result)
	case <-ctx.Done():
		// The protocol forbids cancelling initialize.
		if method != "initialize" {
			c.cancelRemote(ctx, msg.ID, context.Cause(ctx))
		}
		return ctxError(method, ctx)
	case <-c.done:
		select {
		case r := <-ch:
			return c.finish(ctx, method, msg.ID, r, result)
		default:
		}
		return fmt.Errorf("%s: %w", method, c.Err())
	}
}

// finish turns a call's reply into its outcome. A call the client gave up
// on is cancelled at the server, which would otherwise work on for nobody.
func (c *Client) finish(ctx context.Context, method string, id json.RawMessage, r reply, result any) error {
	if r.err != nil {
		c.cancelRemote(ctx, id, r.err)
		return fmt.Errorf("%s: %w", method, r.err)
	}
	return decodeResult(method, r.msg, result)
}

// ctxError reports a call abandoned because ctx ended, keeping both the
// context error (for errors.Is) and a custom cause, when one was given.
func ctxError(method string, ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause != nil && cause != err {
		return fmt.Errorf("%s: %w: %w", method, cause, err)
	}
	return fmt.Errorf("%s: %w", method, err)
}

func decodeResult(method string, resp Message, result any) error {
	if resp.Error != nil {
		return fmt.Errorf("%s: %w", method, resp.Error)
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(resp.Result, result); err != nil {
		return fmt.Errorf("decode %s result: %w", method, err)
	}
	return nil
}

// cancelRemote tells the server to stop working on a request nobody waits
// for any more. It is best effort and bounded.
func (c *Client) cancelRemote(ctx context.Context, id json.RawMessage, cause error) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelNoticeTimeout)
	defer cancel()
	reason := "cancelled"
	if cause != nil {
		reason = cause.Error()
	}
	err := c.Notify(sctx, "notifications/cancelled", map[string]any{"requestId": id, "reason": reason})
	if err != nil {
		c.log.Debug("mcp cancel notice not sent", "err", err)
	}
}

// readLoop is the only reader of the transport. It resolves responses,
// hands server requests to their own goroutines and runs notification
// callbacks in order.
func (c *Client) readLoop(ctx context.Context) {
	for {
		m, err := c.t.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				err = ErrClosed
			}
			c.shutdown(err)
			return
		}
		switch m.Kind() {
		case KindResponse:
			c.resolve(m)
		case KindRequest:
			c.serve(ctx, m)
		case KindNotification:
			c.notified(m)
		}
	}
}

func (c *Client) resolve(m Message) {
	c.mu.Lock()
	ch, ok := c.pending[idKey(m.ID)]
	delete(c.pending, idKey(m.ID))
	c.mu.Unlock()
	if !ok {
		c.log.Debug("mcp response to no pending call", "id", string(m.ID))
		return
	}
	ch <- reply{msg: m}
}

// serve answers a server's request on a goroutine of its own, so that a
// slow answer (an Elicitor waiting for the user) does not hold up the
// receive loop.
func (c *Client) serve(ctx context.Context, m Message) {
	hctx, cancel := context.WithCancel(ctx)
	key := idKey(m.ID)
	c.mu.Lock()
	c.inbound[key] = cancel
	c.mu.Unlock()
	// answer already turns a panicking Elicitor into an error response;
	// what is left to panic is the transport's Send, which leaves the
	// connection unusable.
	panics.GoGroup(&c.wg, func() {
		defer func() {
			c.mu.Lock()
			delete(c.inbound, key)
			c.mu.Unlock()
			cancel()
		}()
		resp := c.answer(hctx, m)
		if hctx.Err() != nil {
			// Cancelled by the server, or the connection is gone: the
			// protocol wants no response then.
			return
		}
		sctx, scancel := context.WithTimeout(context.Background(), replyTimeout)
		defer scancel()
		if err := c.t.Send(sctx, resp); err != nil {
			c.log.Debug("mcp answer to server request not sent", "method", m.Method, "err", err)
		}
	}, func(err error) {
		c.shutdown(fmt.Errorf("mcp answer to %s: %w", m.Method, err))
	})
}

// answer computes the response to one server request. It never leaves a
// request unanswered: unknown methods get "method not found", and a
// panicking Elicitor an internal error.
func (c *Client) answer(ctx context.Context, m Message) (resp Message) {
	defer panics.Recover(func(err error) {
		resp = NewErrorResponse(m.ID, CodeInternalError, fmt.Sprintf("client failed handling %s", m.Method))
		c.logPanic("mcp server request handler panicked", err, "method", m.Method)
	})
	reply := func(result any) Message {
		r, err := NewResponse(m.ID, result)
		if err != nil {
			return NewErrorResponse(m.ID, CodeInternalError, err.Error())
		}
		return r
	}
	switch m.Method {
	case "ping":
		return reply(struct{}{})
	case "roots/list":
		return reply(map[string]any{"roots": []map[string]string{{"uri": c.rootURI, "name": filepath.Base(c.rootDir)}}})
	case "elicitation/create":
		if c.opts.Elicitor == nil {
			return reply(ElicitResult{Action: ElicitDecline})
		}
		var req ElicitRequest
		if err := json.Unmarshal(m.Params, &req); err != nil || len(m.Params) == 0 {
			return NewErrorResponse(m.ID, CodeInvalidParams, "elicitation/create: invalid params")
		}
		res, err := c.opts.Elicitor(ctx, req)
		if err != nil {
			return NewErrorResponse(m.ID, CodeInternalError, "elicitation failed: "+err.Error())
		}
		switch res.Action {
		case ElicitAccept, ElicitDecline, ElicitCancel:
		default:
			return NewErrorResponse(m.ID, CodeInternalError, fmt.Sprintf("elicitation failed: invalid action %q", res.Action))
		}
		if res.Action != ElicitAccept {
			res.Content = nil
		}
		return reply(res)
	case "sampling/createMessage":
		return NewErrorResponse(m.ID, CodeMethodNotFound, "sampling is not supported by this client")
	}
	return NewErrorResponse(m.ID, CodeMethodNotFound, "method not found: "+m.Method)
}

// notified handles a notification from the server.
func (c *Client) notified(m Message) {
	switch m.Method {
	case "notifications/progress":
		var p Progress
		if err := json.Unmarshal(m.Params, &p); err != nil || len(p.Token) == 0 {
			c.log.Debug("mcp progress notification without a token", "err", err)
			return
		}
		key := idKey(p.Token)
		c.mu.Lock()
		fn := c.progress[key]
		c.mu.Unlock()
		if fn != nil {
			c.progressed(key, fn, p)
		}
	case "notifications/tools/list_changed":
		c.listChanged(ListTools)
	case "notifications/prompts/list_changed":
		c.listChanged(ListPrompts)
	case "notifications/resources/list_changed":
		c.listChanged(ListResources)
	case "notifications/message":
		c.serverLog(m.Params)
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil || len(p.RequestID) == 0 {
			return
		}
		c.mu.Lock()
		cancel := c.inbound[idKey(p.RequestID)]
		c.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	default:
		c.log.Debug("mcp notification ignored", "method", m.Method)
	}
}

// progressed hands p to the callback of the call with the given key. A
// callback that panics fails its own call with the panic and hears no more;
// the connection and every other call carry on.
func (c *Client) progressed(key string, fn ProgressFunc, p Progress) {
	defer panics.Recover(func(err error) {
		c.mu.Lock()
		ch := c.pending[key]
		delete(c.pending, key)
		delete(c.progress, key)
		c.mu.Unlock()
		if ch != nil {
			ch <- reply{err: fmt.Errorf("progress callback: %w", err)}
		}
		c.logPanic("mcp progress callback panicked", err)
	})
	fn(p)
}

// listChanged tells OnListChanged. A panic in it has no call to fail, so
// it is logged and the receive loop carries on.
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
// panicked. A panicking logger then reaches the read loop's own recovery
// and ends the connection.
func (c *Client) logPanic(msg string, err error, attrs ...any) {
	attrs = append(attrs, "err", err)
	if pe, ok := errors.AsType[*panics.Error](err); ok {
		attrs = append(attrs, "stack", string(pe.Stack))
	}
	c.log.Error(msg, attrs...)
}

// serverLog forwards a notifications/message to the logger at the
// matching level.
func (c *Client) serverLog(params json.RawMessage) {
	var p struct {
		Level  string          `json:"level"`
		Logger string          `json:"logger"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return
	}
	level := slog.LevelInfo
	switch p.Level {
	case "debug":
		level = slog.LevelDebug
	case "warning":
		level = slog.LevelWarn
	case "error", "critical", "alert", "emergency":
		level = slog.LevelError
	}
	data := string(p.Data)
	var s string
	if json.Unmarshal(p.Data, &s) == nil {
		data = s
	}
	attrs := []any{"level", p.Level, "data", data}
	if p.Logger != "" {
		attrs = append(attrs, "logger", p.Logger)
	}
	c.log.Log(context.Background(), level, "mcp server log", attrs...)
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
