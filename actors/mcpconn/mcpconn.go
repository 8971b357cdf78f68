package mcpconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/kernel"
	"reasonix/core/mcp"
	"reasonix/core/text"
	"reasonix/core/tool"
)

// Backoff is the reconnection policy of an MCP connection: real
// exponential backoff with jitter, a give-up point, and a reset once a
// connection proves stable. Zero fields take the defaults.
type Backoff struct {
	// Base is the delay before the first reconnection (200 ms).
	Base time.Duration
	// Max caps any delay (10 s).
	Max time.Duration
	// Jitter spreads each delay by up to this fraction either way (0.2).
	Jitter float64
	// GiveUp is how many failures in a row mark the server failed (5).
	GiveUp int
	// Stable is how long a connection must last for the failure count to
	// reset (60 s).
	Stable time.Duration
}

// The defaults of Backoff.
const (
	defaultBackoffBase   = 200 * time.Millisecond
	defaultBackoffMax    = 10 * time.Second
	defaultBackoffJitter = 0.2
	defaultGiveUp        = 5
	defaultStable        = 60 * time.Second
)

// WithDefaults fills the zero fields of b with the defaults.
func (b Backoff) WithDefaults() Backoff {
	if b.Base <= 0 {
		b.Base = defaultBackoffBase
	}
	if b.Max <= 0 {
		b.Max = defaultBackoffMax
	}
	if b.Max < b.Base {
		b.Max = b.Base
	}
	if b.Jitter <= 0 {
		b.Jitter = defaultBackoffJitter
	}
	if b.Jitter > 1 {
		b.Jitter = 1
	}
	if b.GiveUp <= 0 {
		b.GiveUp = defaultGiveUp
	}
	if b.Stable <= 0 {
		b.Stable = defaultStable
	}
	return b
}

// Delay is the wait before reconnecting after the n-th failure in a row
// (n ≥ 1): min(Max, Base·2^(n-1)), scaled by a factor in [1-Jitter,
// 1+Jitter] that r, uniform in [0, 1), picks. It is pure so that the
// policy can be tested without clocks or randomness.
func (b Backoff) Delay(n int, r float64) time.Duration {
	b = b.WithDefaults()
	d := b.Max
	if n < 1 {
		n = 1
	}
	// Base·2^(n-1) reaches any sane Max long before 62 doublings.
	if n-1 < 62 {
		if exp := b.Base << (n - 1); exp > 0 && exp < b.Max && exp>>(n-1) == b.Base {
			d = exp
		}
	}
	r = min(max(r, 0), 1)
	return time.Duration(float64(d) * (1 + b.Jitter*(2*r-1)))
}

// Default timeouts of the MCP part of a session.
const (
	defaultMCPStartup  = 10 * time.Second
	defaultMCPConnect  = 30 * time.Second
	defaultMCPRequest  = 60 * time.Second
	maxResourceText    = 256 << 10
	elicitNoticeMaxLen = 200
)

// Latch is the ToolCaller every adapted tool of one server calls
// through. The connection actor controls it: while the server is up calls
// reach the current client; otherwise they fail at once with the reason.
// It is safe for concurrent use by tool goroutines.
type Latch struct {
	server  string
	bus     *event.Bus
	session string

	mu      sync.Mutex
	epoch   int
	client  *mcp.Client
	reason  string
	elicits map[string]chan mcp.ElicitResult
	nextID  atomic.Int64
}

var _ mcp.ToolCaller = (*Latch)(nil)

// NewLatch is the latch of server in session, closed (calls fail with
// "connecting") until the server is up.
func NewLatch(server, session string, bus *event.Bus) *Latch {
	return &Latch{server: server, session: session, bus: bus,
		reason:  fmt.Sprintf("mcp server %q is connecting", server),
		elicits: map[string]chan mcp.ElicitResult{}}
}

// begin starts connection attempt epoch: calls fail with reason until
// the attempt attaches its client.
func (g *Latch) begin(epoch int, reason string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.epoch, g.client, g.reason = epoch, nil, reason
}

// down makes calls fail with reason.
func (g *Latch) down(reason string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.client, g.reason = nil, reason
}

// attach publishes the client of attempt epoch, unless a newer attempt
// started meanwhile.
func (g *Latch) attach(epoch int, c *mcp.Client) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.epoch != epoch {
		return false
	}
	g.client = c
	return true
}

// detach withdraws the client of attempt epoch before it is closed.
func (g *Latch) detach(epoch int, reason string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.epoch == epoch && g.client != nil {
		g.client, g.reason = nil, reason
	}
}

// current is the connected client, or nil and why there is none.
func (g *Latch) current() (*mcp.Client, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.client == nil {
		return nil, errors.New(g.reason)
	}
	return g.client, nil
}

// CallTool implements mcp.ToolCaller. Progress the server reports is
// published as ToolProgress events unless the caller takes it.
func (g *Latch) CallTool(ctx context.Context, name string, args json.RawMessage, onProgress mcp.ProgressFunc) (*mcp.CallToolResult, error) {
	c, err := g.current()
	if err != nil {
		return nil, err
	}
	if onProgress == nil && g.bus != nil {
		full := mcp.ToolName(g.server, name)
		callID := tool.CallID(ctx)
		onProgress = func(p mcp.Progress) {
			g.bus.Publish(&event.ToolProgress{Meta: event.Meta{Session: g.session}, CallID: callID, Server: g.server, Tool: full,
				Progress: p.Progress, Total: p.Total, Message: p.Message})
		}
	}
	return c.CallTool(ctx, name, args, onProgress)
}

func (g *Latch) notice(level, msg string) {
	if g.bus != nil {
		g.bus.Publish(&event.Notice{Meta: event.Meta{Session: g.session}, Level: level, Message: msg})
	}
}

// elicitor is how the server's elicitation requests are answered: by the
// frontend when there is one, else by policy: the form's defaults, or a
// decline.
func (g *Latch) elicitor(interactive bool, policy string) mcp.Elicitor {
	switch {
	case interactive && g.bus != nil:
		return g.askFrontend
	case policy == ElicitDefaults:
		return g.acceptDefaults
	}
	return g.decline
}

// decline answers every elicitation with a decline and says so.
func (g *Latch) decline(_ context.Context, req mcp.ElicitRequest) (mcp.ElicitResult, error) {
	g.notice("warn", fmt.Sprintf("mcp server %q asked for input (%s); declined: no one to ask", g.server, text.Clip(req.Message, elicitNoticeMaxLen)))
	return mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
}

// askFrontend publishes the request and waits for the frontend's answer;
// the server cancelling, or the connection ending, cancels it.
func (g *Latch) askFrontend(ctx context.Context, req mcp.ElicitRequest) (mcp.ElicitResult, error) {
	id := fmt.Sprintf("%s-%d", g.server, g.nextID.Add(1))
	ch := make(chan mcp.ElicitResult, 1)
	g.mu.Lock()
	g.elicits[id] = ch
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.elicits, id)
		g.mu.Unlock()
	}()
	g.bus.Publish(&event.ElicitationRequested{Meta: event.Meta{Session: g.session}, RequestID: id, Server: g.server,
		Message: req.Message, Mode: req.Mode, Schema: req.RequestedSchema, URL: req.URL})
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		return mcp.ElicitResult{Action: mcp.ElicitCancel}, nil
	}
}

// answer hands a frontend's response to the waiting request, if any.
func (g *Latch) answer(m *ElicitationResponse) {
	g.mu.Lock()
	ch := g.elicits[m.RequestID]
	g.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case ch <- mcp.ElicitResult{Action: m.Action, Content: m.Content}:
	default:
	}
}

// acceptDefaults answers a form with the defaults of its schema, and
// declines when a required field has none (or for a URL).
func (g *Latch) acceptDefaults(_ context.Context, req mcp.ElicitRequest) (mcp.ElicitResult, error) {
	content, missing := FormDefaults(req.RequestedSchema)
	if req.Mode == "url" || len(missing) > 0 || content == nil {
		g.notice("warn", fmt.Sprintf("mcp server %q asked for input (%s); declined: no defaults for %v", g.server, text.Clip(req.Message, elicitNoticeMaxLen), missing))
		return mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
	}
	g.notice("info", fmt.Sprintf("mcp server %q asked for input (%s); answered with the form's defaults", g.server, text.Clip(req.Message, elicitNoticeMaxLen)))
	return mcp.ElicitResult{Action: mcp.ElicitAccept, Content: content}, nil
}

// FormDefaults is mcp.FormDefaults.
func FormDefaults(schema json.RawMessage) (content map[string]any, missing []string) {
	return mcp.FormDefaults(schema)
}

// mcpConn is the connection actor of one MCP server, spawned by the
// session as mcp/<server>. It owns the connection (through a goroutine
// per attempt), tells its session which tools the server offers (the
// session owns the registry and registers them as mcp__<server>__<tool>),
// reconnects with exponential backoff and jitter, and gives up after
// Backoff.GiveUp failures in a row. It is never restarted by its
// supervisor: a panic in a handler becomes a *Crashed for repair, which
// treats it as one more connection failure.
type mcpConn struct {
	sys     *kernel.System
	srv     MCPServer
	spec    MCPSpec
	backoff Backoff
	log     *slog.Logger
	gate    *Latch

	state    string
	failures int
	lastErr  string
	info     mcp.Implementation
	pid      int
	// epoch numbers connection attempts; live says attempt epoch has not
	// reported its end yet.
	epoch  int
	live   bool
	cancel context.CancelFunc

	retry, stable, startup *time.Timer
	settled                bool

	// tools is what the server listed last; the session registers them.
	tools     []mcp.Tool
	prompts   []mcp.Prompt
	resources []mcp.Resource

	// Answers records whether the message being handled has its answer,
	// for the repair of a crash in its handler.
	kernel.Answers
}

// McpConnProps builds the connection actor of srv. gate is the server's
// tool caller, made by the session, which wraps it into the tools it
// registers; the actor attaches and detaches clients on it.
func McpConnProps(sys *kernel.System, srv MCPServer, spec MCPSpec, agent agent.AgentSpec, gate *Latch) *actor.Props {
	log := agent.Logger
	if log == nil {
		log = sys.Logger()
	}
	log = log.With("mcp", srv.Config.Name)
	return kernel.Props("mcp", log, func() actor.Actor {
		return &mcpConn{
			sys: sys, srv: srv, spec: spec, backoff: spec.Backoff.WithDefaults(),
			log: log, gate: gate, state: event.MCPConnecting,
		}
	})
}

// Receive implements actor.Actor.
func (a *mcpConn) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		a.start(c)
	case *kernel.Crashed:
		a.repair(c, m)
	case *ConnUp:
		a.onUp(c, m)
	case *ConnDown:
		a.onDown(c, m)
	case *Reconnect:
		if m.epoch == a.epoch && a.state == event.MCPRestarting {
			a.connect(c)
		}
	case *connStable:
		if m.epoch == a.epoch && a.state == event.MCPReady && a.failures > 0 {
			a.failures = 0
			a.push(c)
		}
	case *startupOver:
		if !a.settled {
			a.settled = true
			a.push(c)
		}
	case *ListChanged:
		a.relist(c, m)
	case *Relisted:
		a.onRelisted(c, m)
	case *McpResync:
		a.sendTools(c)
		a.push(c)
	case *QueryMCP:
		c.Respond(&event.MCPStatus{Servers: []event.MCPServerStatus{a.status()}})
		a.Answer()
	case *GetMCPPrompt:
		a.getPrompt(c, m)
	case *ReadMCPResource:
		a.readResource(c, m)
	case *ElicitationResponse:
		a.gate.answer(m)
	case *actor.Stopping:
		a.stop()
	}
}

func (a *mcpConn) start(c actor.Context) {
	self, sys := c.Self(), a.sys
	d := a.spec.StartupTimeout
	if d <= 0 {
		d = defaultMCPStartup
	}
	a.startup = time.AfterFunc(d, func() { sys.Send(self, &startupOver{}) })
	a.connect(c)
}

// connect starts a connection attempt in a goroutine.
func (a *mcpConn) connect(c actor.Context) {
	a.stopTimer(&a.retry)
	if a.cancel != nil {
		a.cancel()
	}
	a.epoch++
	epoch := a.epoch
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel, a.live = cancel, true
	reason := fmt.Sprintf("mcp server %q is connecting", a.srv.Config.Name)
	if a.failures > 0 {
		reason = a.restartingReason()
	}
	a.gate.begin(epoch, reason)
	timeout := a.spec.ConnectTimeout
	if timeout <= 0 {
		timeout = defaultMCPConnect
	}
	d := &dialer{
		sys: a.sys, cfg: a.srv.Config, gate: a.gate, log: a.log, root: a.spec.Root,
		info: a.spec.Client, connectTimeout: timeout, home: a.spec.Home, jail: a.spec.Jail,
		elicitor: a.gate.elicitor(a.spec.Interactive, a.spec.Elicitation),
	}
	if d.info.Name == "" {
		d.info = mcp.Implementation{Name: "reasonix", Version: "dev"}
	}
	self := c.Self()
	a.sys.Go(func() { d.run(ctx, self, epoch) }, nil)
}

func (a *mcpConn) restartingReason() string {
	return fmt.Sprintf("mcp server %q is restarting (attempt %d of %d) after: %s",
		a.srv.Config.Name, a.failures+1, a.backoff.GiveUp, a.lastErr)
}

func (a *mcpConn) onUp(c actor.Context, m *ConnUp) {
	if m.epoch != a.epoch || !a.live {
		return
	}
	a.state, a.lastErr, a.info, a.pid = event.MCPReady, "", m.info, m.pid
	a.tools, a.prompts, a.resources = m.tools, m.prompts, m.resources
	a.sendTools(c)
	self, epoch, sys := c.Self(), a.epoch, a.sys
	a.stopTimer(&a.stable)
	a.stable = time.AfterFunc(a.backoff.Stable, func() { sys.Send(self, &connStable{epoch: epoch}) })
	a.settle()
	a.push(c)
}

func (a *mcpConn) onDown(c actor.Context, m *ConnDown) {
	if m.epoch != a.epoch || !a.live {
		return
	}
	a.failed(c, m.err)
}

// failed counts one connection failure: the server is restarting after
// the backoff delay, or failed once Backoff.GiveUp failures came in a
// row. Calls fail fast with the reason meanwhile.
func (a *mcpConn) failed(c actor.Context, why string) {
	a.live, a.pid = false, 0
	a.stopTimer(&a.stable)
	a.stopTimer(&a.retry)
	a.lastErr = why
	if a.lastErr == "" {
		a.lastErr = "the connection ended"
	}
	a.failures++
	name := a.srv.Config.Name
	if a.failures >= a.backoff.GiveUp {
		a.state = event.MCPFailed
		a.gate.down(fmt.Sprintf("mcp server %q failed: %s", name, a.lastErr))
		a.gate.notice("error", fmt.Sprintf("mcp server %q failed after %d attempts in a row: %s", name, a.failures, a.lastErr))
	} else {
		if a.failures == 1 {
			a.gate.notice("warn", fmt.Sprintf("mcp server %q: %s; reconnecting", name, a.lastErr))
		}
		a.state = event.MCPRestarting
		a.gate.down(a.restartingReason())
		delay := a.backoff.Delay(a.failures, rand.Float64())
		self, epoch, sys := c.Self(), a.epoch, a.sys
		a.retry = time.AfterFunc(delay, func() { sys.Send(self, &Reconnect{epoch: epoch}) })
		a.log.Info("mcp server down; reconnecting", "err", a.lastErr, "failures", a.failures, "delay", delay)
	}
	a.settle()
	a.push(c)
}

// repair handles a panic in one of the actor's handlers as a connection
// failure, since the handler may have left the connection state half
// changed: the current attempt is retired (its goroutine closes the
// client, and whatever it still reports is stale), the failure counts
// towards giving up, and the server reconnects after the backoff like
// after any other failure. The request whose handler panicked, if its
// reply was not handed on yet, is answered with the crash.
func (a *mcpConn) repair(c actor.Context, crash *kernel.Crashed) {
	if crash.Message == fmt.Sprintf("%T", (*actor.Stopping)(nil)) {
		a.stop() // the actor is going away: no reconnection
	} else {
		if a.cancel != nil {
			a.cancel()
			a.cancel = nil
		}
		// A new epoch makes the retired attempt's late attach and reports
		// stale; connect starts the next one.
		a.epoch++
		a.gate.begin(a.epoch, fmt.Sprintf("mcp server %q is recovering from an internal error", a.srv.Config.Name))
		a.failed(c, crash.Error())
	}
	if !a.Answered() && crash.Sender != nil {
		if reply := a.crashReply(crash.Lost, crash); reply != nil {
			c.Send(crash.Sender, reply)
		}
	}
}

// crashReply is the answer to a request whose handler panicked.
func (a *mcpConn) crashReply(msg any, crash *kernel.Crashed) any {
	why := fmt.Sprintf("mcp server %q: %s", a.srv.Config.Name, crash.Error())
	switch m := msg.(type) {
	case *QueryMCP:
		return &event.MCPStatus{Servers: []event.MCPServerStatus{a.status()}}
	case *GetMCPPrompt:
		if m == nil {
			return &MCPPromptResult{Server: a.srv.Config.Name, Error: why}
		}
		return &MCPPromptResult{ID: m.ID, Server: a.srv.Config.Name, Prompt: m.Prompt, Error: why}
	case *ReadMCPResource:
		if m == nil {
			return &MCPResourceResult{Server: a.srv.Config.Name, Error: why}
		}
		return &MCPResourceResult{ID: m.ID, Server: a.srv.Config.Name, URI: m.URI, Error: why}
	}
	return nil
}

// settle records that the first attempt is over: a held turn need not
// wait for this server any longer.
func (a *mcpConn) settle() {
	a.settled = true
	a.stopTimer(&a.startup)
}

// sendTools tells the session, which owns the tool registry, the tools
// the server lists now. It goes before the status push of the same
// change, so the session has applied it when it publishes the update.
func (a *mcpConn) sendTools(c actor.Context) {
	if p := c.Parent(); p != nil {
		c.Send(p, &McpToolsListed{Server: a.srv.Config.Name, Tools: a.tools})
	}
}

// relist fetches a changed list again, in a goroutine.
func (a *mcpConn) relist(c actor.Context, m *ListChanged) {
	if m.epoch != a.epoch || a.state != event.MCPReady {
		return
	}
	client, err := a.gate.current()
	if err != nil {
		return
	}
	self, epoch, kind, sys := c.Self(), m.epoch, m.kind, a.sys
	timeout := a.requestTimeout()
	sys.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		r := &Relisted{epoch: epoch, kind: kind}
		var err error
		switch kind {
		case mcp.ListTools:
			r.tools, err = client.ListTools(ctx)
		case mcp.ListPrompts:
			r.prompts, err = client.ListPrompts(ctx)
		case mcp.ListResources:
			r.resources, err = client.ListResources(ctx)
		}
		if err != nil {
			r.err = err.Error()
		}
		sys.Send(self, r)
	}, func(reason any, _ []byte) {
		sys.Send(self, &Relisted{epoch: epoch, kind: kind, err: fmt.Sprintf("list crashed: %v", reason)})
	})
}

func (a *mcpConn) onRelisted(c actor.Context, m *Relisted) {
	if m.epoch != a.epoch || a.state != event.MCPReady {
		return
	}
	if m.err != "" {
		a.log.Warn("mcp list refresh failed", "kind", m.kind, "err", m.err)
		return
	}
	switch m.kind {
	case mcp.ListTools:
		a.tools = m.tools
		a.sendTools(c)
	case mcp.ListPrompts:
		a.prompts = m.prompts
	case mcp.ListResources:
		a.resources = m.resources
	}
	a.push(c)
}

func (a *mcpConn) requestTimeout() time.Duration {
	if d := a.srv.Config.Timeout("", a.spec.CallTimeout); d > 0 {
		return d
	}
	return defaultMCPRequest
}

// getPrompt renders a prompt in a goroutine; the requester gets exactly
// one MCPPromptResult.
func (a *mcpConn) getPrompt(c actor.Context, m *GetMCPPrompt) {
	res := &MCPPromptResult{ID: m.ID, Server: a.srv.Config.Name, Prompt: m.Prompt}
	name, args := m.Prompt, m.Args
	a.serve(c, "prompts/get", res, &res.Error, func(ctx context.Context, client *mcp.Client) error {
		p, err := client.GetPrompt(ctx, name, args)
		if err != nil {
			return err
		}
		res.Text = p.Text()
		return nil
	})
}

// readResource reads a resource in a goroutine; the requester gets
// exactly one MCPResourceResult.
func (a *mcpConn) readResource(c actor.Context, m *ReadMCPResource) {
	res := &MCPResourceResult{ID: m.ID, Server: a.srv.Config.Name, URI: m.URI}
	uri := m.URI
	a.serve(c, "resources/read", res, &res.Error, func(ctx context.Context, client *mcp.Client) error {
		r, err := client.ReadResource(ctx, uri)
		if err != nil {
			return err
		}
		res.Text = resourceText(r)
		return nil
	})
}

// serve answers the sender of the current message with res exactly once.
// do runs in a goroutine under the request timeout and fills res; the
// reply goes out when it returns, with its error, the missing connection
// or a panic of method written to *errText. res belongs to that goroutine
// until it is sent.
func (a *mcpConn) serve(c actor.Context, method string, res any, errText *string, do func(context.Context, *mcp.Client) error) {
	replyTo, sys := c.Sender(), a.sys
	reply := func() {
		if replyTo != nil {
			sys.Send(replyTo, res)
		}
	}
	// From here the reply is this method's to send, not repair's.
	a.Answer()
	client, err := a.gate.current()
	if err != nil {
		*errText = err.Error()
		reply()
		return
	}
	timeout := a.requestTimeout()
	sys.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := do(ctx, client); err != nil {
			*errText = err.Error()
		}
		reply()
	}, func(reason any, _ []byte) {
		*errText = fmt.Sprintf("%s crashed: %v", method, reason)
		reply()
	})
}

// status is the server's current status. Tools are the names the server
// lists; the session reports the ones it registered instead. Its slices
// are never changed in place afterwards, so it can be shared.
func (a *mcpConn) status() event.MCPServerStatus {
	tools := make([]string, 0, len(a.tools))
	for _, t := range a.tools {
		tools = append(tools, mcp.ToolName(a.srv.Config.Name, t.Name))
	}
	slices.Sort(tools)
	return event.MCPServerStatus{
		Name: a.srv.Config.Name, Source: a.srv.Source, Type: a.srv.Config.Type,
		State: a.state, Tools: tools, Prompts: a.prompts, Resources: a.resources,
		LastError: a.lastErr, Failures: a.failures, Pid: a.pid, ServerInfo: a.info,
	}
}

// push tells the session the new status; the session publishes it to
// observers once it has applied the tools that came with it.
func (a *mcpConn) push(c actor.Context) {
	if p := c.Parent(); p != nil {
		c.Send(p, &McpUpdate{Status: a.status(), Settled: a.settled})
	}
}

// ServerUpdated is the mcp_server event for st.
func ServerUpdated(session string, st event.MCPServerStatus) *event.MCPServerUpdated {
	return &event.MCPServerUpdated{Meta: event.Meta{Session: session}, Server: st.Name, Source: st.Source, State: st.State,
		Tools: len(st.Tools), Prompts: len(st.Prompts), Resources: len(st.Resources), Error: st.LastError, Failures: st.Failures}
}

func (a *mcpConn) stopTimer(t **time.Timer) {
	if *t != nil {
		(*t).Stop()
		*t = nil
	}
}

// stop ends the connection: its goroutine closes the client (killing a
// stdio server) and the system waits for it.
func (a *mcpConn) stop() {
	a.stopTimer(&a.retry)
	a.stopTimer(&a.stable)
	a.stopTimer(&a.startup)
	if a.cancel != nil {
		a.cancel()
	}
	a.gate.down(fmt.Sprintf("mcp server %q stopped", a.srv.Config.Name))
}

// resourceText renders a read resource for the model: text parts as
// they are, binary parts as a note; at most maxResourceText bytes.
func resourceText(r *mcp.ReadResourceResult) string {
	var parts []string
	for _, c := range r.Contents {
		if c.Blob != "" || c.Text == "" && c.MIMEType != "" && !isTextMIME(c.MIMEType) {
			mime := c.MIMEType
			if mime == "" {
				mime = "unknown type"
			}
			parts = append(parts, fmt.Sprintf("[binary content of %s: %s, not shown]", c.URI, mime))
			continue
		}
		parts = append(parts, c.Text)
	}
	text := joinParts(parts)
	if len(text) > maxResourceText {
		text = text[:maxResourceText] + fmt.Sprintf("\n[truncated: %d of %d bytes shown]", maxResourceText, len(text))
	}
	return text
}
