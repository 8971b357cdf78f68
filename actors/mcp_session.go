package actors

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/mcpconn"
	"reasonix/core/mcp"
)

// mcpSession is the MCP part of a session supervisor: its connection
// actors, the last status each reported, the tools of each server in the
// session's registry, and the turn held until the servers have had their
// first chance to connect.
//
// The session is the only writer of the tool registry: connection actors
// send it their servers' tool lists (mcpToolsListed) and it applies them
// between its other messages, so a registry change never races a reader
// on another actor's goroutine.
type mcpSession struct {
	spec     mcpconn.MCPSpec
	order    []string
	children map[string]*actor.PID
	status   map[string]event.MCPServerStatus
	// servers and gates are each started server's configuration and the
	// tool caller its registered tools call through.
	servers map[string]mcpconn.MCPServer
	gates   map[string]*mcpconn.Latch
	// registered are the registry names each server's tools hold, sorted.
	registered map[string][]string
	// pending are the servers whose first attempt is not settled yet.
	pending map[string]bool

	// held is the turn waiting for the servers or for its references.
	held *agent.RunTurn
	prep *mcpPrep
	seq  int
}

// mcpPrep is a held turn whose prompt command or @references are being
// fetched.
type mcpPrep struct {
	// command is the prompt a /mcp__ command runs ("" for none).
	command string
	refs    []event.MCPRef
	// waiting maps a request ID to its reference (or to the command).
	waiting map[string]event.MCPRef
	texts   map[event.MCPRef]string
	prompt  string
	err     string
}

// startMCP spawns a connection actor for every server that may start and
// records the others. The supervisor never restarts them: each manages
// its own reconnection.
func (s *sessionActor) startMCP(c actor.Context) {
	spec := s.spec.MCP
	if len(spec.Servers) == 0 {
		return
	}
	m := &mcpSession{spec: spec, children: map[string]*actor.PID{}, status: map[string]event.MCPServerStatus{}, pending: map[string]bool{},
		servers: map[string]mcpconn.MCPServer{}, gates: map[string]*mcpconn.Latch{}, registered: map[string][]string{}}
	s.mcp = m
	a := s.spec.Agent
	for _, srv := range spec.Servers {
		name := srv.Config.Name
		if _, dup := m.status[name]; dup {
			continue
		}
		m.order = append(m.order, name)
		for _, w := range srv.Warnings {
			s.publishMCP(&event.Notice{Level: "warn", Message: fmt.Sprintf("mcp server %q: %s", name, w)})
		}
		st := event.MCPServerStatus{Name: name, Source: srv.Source, Type: srv.Config.Type, State: event.MCPConnecting}
		switch {
		case srv.Disabled:
			st.State = event.MCPDisabled
		case srv.Untrusted != "":
			st.State, st.LastError = event.MCPUntrusted, srv.Untrusted
			s.publishMCP(&event.Notice{Level: "warn", Message: fmt.Sprintf("mcp server %q (%s) not started: %s", name, srv.Source, srv.Untrusted)})
		case srv.Error != "":
			st.State, st.LastError = event.MCPFailed, srv.Error
			s.publishMCP(&event.Notice{Level: "error", Message: fmt.Sprintf("mcp server %q not started: %s", name, srv.Error)})
		default:
			gate := mcpconn.NewLatch(name, a.Session, a.Bus)
			pid, err := c.SpawnNamed(mcpconn.McpConnProps(s.sys, srv, spec, a, gate), "mcp/"+name)
			if err != nil {
				st.State, st.LastError = event.MCPFailed, err.Error()
				break
			}
			m.children[name], m.servers[name], m.gates[name] = pid, srv, gate
			m.pending[name] = true
		}
		m.status[name] = st
		if st.State != event.MCPConnecting {
			s.publishMCP(mcpconn.ServerUpdated(a.Session, st))
		}
	}
}

func (s *sessionActor) publishMCP(e event.Event) {
	if bus := s.spec.Agent.Bus; bus != nil {
		e.EventMeta().Session = s.spec.Agent.Session
		bus.Publish(e)
	}
}

// receiveMCP handles the MCP messages of a session.
func (s *sessionActor) receiveMCP(c actor.Context, msg mcpconn.McpMessage) {
	m := s.mcp
	switch msg := msg.(type) {
	case *mcpconn.QueryMCP:
		c.Respond(s.mcpStatus())
		s.Answer()
	case *mcpconn.McpToolsListed:
		if m != nil {
			s.registerMCPTools(msg.Server, msg.Tools)
		}
	case *mcpconn.McpUpdate:
		if m == nil {
			return
		}
		st := msg.Status
		st.Tools = m.registered[st.Name]
		m.status[st.Name] = st
		s.publishMCP(mcpconn.ServerUpdated(s.spec.Agent.Session, st))
		if msg.Settled && m.pending[msg.Status.Name] {
			delete(m.pending, msg.Status.Name)
			s.advanceMCP(c)
		}
	case *mcpconn.GetMCPPrompt:
		if pid, why := s.mcpChild(msg.Server); pid != nil {
			c.Forward(pid)
		} else {
			c.Respond(&mcpconn.MCPPromptResult{ID: msg.ID, Server: msg.Server, Prompt: msg.Prompt, Error: why})
		}
	case *mcpconn.ReadMCPResource:
		if pid, why := s.mcpChild(msg.Server); pid != nil {
			c.Forward(pid)
		} else {
			c.Respond(&mcpconn.MCPResourceResult{ID: msg.ID, Server: msg.Server, URI: msg.URI, Error: why})
		}
	case *mcpconn.ElicitationResponse:
		if pid, _ := s.mcpChild(msg.Server); pid != nil {
			c.Send(pid, msg)
		}
	case *mcpconn.MCPPromptResult:
		if s.ledger.Settle(mcpFetchKey(msg.ID)) {
			s.prepReply(c, msg.ID, msg.Text, msg.Error)
		}
	case *mcpconn.MCPResourceResult:
		if s.ledger.Settle(mcpFetchKey(msg.ID)) {
			s.prepReply(c, msg.ID, msg.Text, msg.Error)
		}
	}
}

// registerMCPTools makes the registry hold exactly the tools server
// lists: each is registered as mcp__<server>__<tool> (replacing the
// previous version), and the server's tools it no longer lists are
// removed. A name that a built-in or another server already holds is
// reported and skipped. A turn in progress works on its own snapshot of
// the registry, so a change here only reaches the next turn.
func (s *sessionActor) registerMCPTools(server string, tools []mcp.Tool) {
	m := s.mcp
	srv, ok := m.servers[server]
	if !ok {
		return
	}
	reg, gate := s.spec.Agent.Tools, m.gates[server]
	keep := map[string]bool{}
	for _, t := range tools {
		rt := mcp.NewRemoteTool(gate, srv.Config, t, m.spec.CallTimeout)
		name := rt.Name()
		if prev, ok := reg.Get(name); ok {
			if other, ok := prev.(mcp.Remote); !ok || other.Server() != server {
				s.publishMCP(&event.Notice{Level: "warn", Message: fmt.Sprintf("mcp server %q: tool %q skipped: the name %s is taken", server, t.Name, name)})
				continue
			}
		}
		if err := reg.Replace(rt); err != nil {
			s.publishMCP(&event.Notice{Level: "warn", Message: fmt.Sprintf("mcp server %q: tool %q skipped: %v", server, t.Name, err)})
			continue
		}
		keep[name] = true
	}
	for _, old := range m.registered[server] {
		if !keep[old] {
			reg.Remove(old)
		}
	}
	s.sharePlannerMCP(server, keep)
	names := make([]string, 0, len(keep))
	for n := range keep {
		names = append(names, n)
	}
	slices.Sort(names)
	m.registered[server] = names
	s.shareMCPTools()
}

// repairMCP brings the session's MCP part back to a known state after a
// panic in one of the session's handlers; the session's repair calls it
// with the crash as reason. A turn held for the servers fails with
// reason (which also ends its pending prompt and resource requests:
// their replies are ignored when they come), and every connection actor
// is asked to send its tools and status again, so that the registry,
// the status table and the servers still awaited are rebuilt from the
// connections' own state rather than from what the handler left half
// done. Prompt and resource requests from outside the session are
// answered by the connection actors directly and need nothing here.
func (s *sessionActor) repairMCP(c actor.Context, reason string) {
	m := s.mcp
	if m == nil {
		return
	}
	if m.held != nil {
		if s.running {
			s.failHeld(c, "the session recovered from an internal error while preparing the turn: "+reason)
		} else {
			m.held, m.prep = nil, nil
		}
	}
	for _, name := range m.order {
		if pid := m.children[name]; pid != nil {
			c.Send(pid, &mcpconn.McpResync{})
		}
	}
}

// mcpChild is the connection actor of server, or why there is none.
func (s *sessionActor) mcpChild(server string) (*actor.PID, string) {
	if s.mcp == nil {
		return nil, fmt.Sprintf("unknown mcp server %q", server)
	}
	if pid := s.mcp.children[server]; pid != nil {
		return pid, ""
	}
	st, ok := s.mcp.status[server]
	if !ok {
		return nil, fmt.Sprintf("unknown mcp server %q", server)
	}
	why := fmt.Sprintf("mcp server %q is %s", server, st.State)
	if st.LastError != "" {
		why += ": " + st.LastError
	}
	return nil, why
}

func (s *sessionActor) mcpStatus() *event.MCPStatus {
	out := &event.MCPStatus{}
	if s.mcp == nil {
		return out
	}
	for _, name := range s.mcp.order {
		out.Servers = append(out.Servers, s.mcp.status[name])
	}
	return out
}

// mcpChildStopped handles the end of a connection actor: it is marked
// failed and nothing waits for it any more.
func (s *sessionActor) mcpChildStopped(c actor.Context, who *actor.PID) {
	m := s.mcp
	if m == nil || who == nil {
		return
	}
	for name, pid := range m.children {
		if !pid.Equal(who) {
			continue
		}
		delete(m.children, name)
		delete(m.pending, name)
		if len(m.children) == 0 {
			unshareMCPTools(s.spec.Agent.Session)
		}
		st := m.status[name]
		if st.State != event.MCPFailed {
			st.State, st.LastError = event.MCPFailed, "the connection actor stopped"
			m.status[name] = st
		}
		// Its fetches for the held turn were ended by the ledger.
		s.advanceMCP(c)
		return
	}
}

// holdForMCP takes a new turn while the session has MCP servers: the
// turn waits for their first connection attempts (or the startup
// timeout), then for its prompt command or @references to be fetched.
func (s *sessionActor) holdForMCP(c actor.Context, m *agent.RunTurn) bool {
	if s.mcp == nil {
		return false
	}
	s.mcp.held, s.mcp.prep = m, nil
	s.advanceMCP(c)
	return true
}

// cancelHeldTurn ends a held turn as cancelled.
func (s *sessionActor) cancelHeldTurn(c actor.Context) bool {
	if s.mcp == nil || s.mcp.held == nil {
		return false
	}
	s.mcp.held, s.mcp.prep = nil, nil
	s.finish(c, &agent.TurnFinished{Session: s.spec.Agent.Session, Status: event.StatusCancelled})
	return true
}

// advanceMCP moves a held turn on when it can.
func (s *sessionActor) advanceMCP(c actor.Context) {
	m := s.mcp
	if !s.running {
		m.held, m.prep = nil, nil // the turn ended some other way
	}
	if m.held == nil || m.prep != nil || len(m.pending) > 0 {
		return
	}
	input := m.held.Input
	p := &mcpPrep{waiting: map[string]event.MCPRef{}, texts: map[event.MCPRef]string{}}
	if name, args, ok := mcpconn.ParseMCPCommand(input); ok {
		ref, found := mcpconn.FindMCPPrompt(s.mcpStatus(), name)
		if !found {
			s.failHeld(c, fmt.Sprintf("unknown command /%s: no connected mcp server offers that prompt", name))
			return
		}
		values, err := mcpconn.PromptArguments(ref.Prompt, args)
		if err != nil {
			s.failHeld(c, fmt.Sprintf("/%s: %v", name, err))
			return
		}
		pid, why := s.mcpChild(ref.Server)
		if pid == nil {
			s.failHeld(c, fmt.Sprintf("/%s: %s", name, why))
			return
		}
		p.command = "/" + name
		m.prep = p
		id := s.nextMCPID()
		p.waiting[id] = event.MCPRef{Server: ref.Server}
		s.fetchMCP(c, id, pid, &mcpconn.GetMCPPrompt{ID: id, Server: ref.Server, Prompt: ref.Prompt.Name, Args: values})
		return
	}
	var servers []string
	for name := range m.children {
		servers = append(servers, name)
	}
	p.refs = mcpconn.FindMCPRefs(input, servers)
	if len(p.refs) == 0 {
		s.forwardHeld(c, input)
		return
	}
	m.prep = p
	for _, r := range p.refs {
		id := s.nextMCPID()
		p.waiting[id] = r
		s.fetchMCP(c, id, m.children[r.Server], &mcpconn.ReadMCPResource{ID: id, Server: r.Server, URI: r.URI})
	}
}

// fetchMCP asks a connection actor for a prompt or resource of the held
// turn, through the session's ledger: the wait ends with the reply, or
// with an error when the connection actor stops first or the reply is
// later than the server's call timeout allows.
func (s *sessionActor) fetchMCP(c actor.Context, id string, pid *actor.PID, msg any) {
	var within time.Duration
	if t := s.mcp.spec.CallTimeout; t > 0 {
		within = 2*t + mcpFetchMargin
	}
	s.ledger.Request(c, mcpFetchKey(id), pid, msg, within, func(c actor.Context, why string) {
		s.prepReply(c, id, "", "the connection actor "+why)
	})
}

// mcpFetchMargin is added to a fetch's deadline beyond the server's own
// call timeout (which the connection actor enforces first, with a better
// error), so that only a connection actor that no longer answers meets it.
const mcpFetchMargin = 5 * time.Second

// mcpFetchKey is the session's ledger entry for one fetch of a held turn.
func mcpFetchKey(id string) string { return "mcp/" + id }

func (s *sessionActor) nextMCPID() string {
	s.mcp.seq++
	return "turn-" + strconv.Itoa(s.mcp.seq)
}

// prepReply records one fetched prompt or resource of the held turn and
// starts the turn once nothing is missing. A resource that could not be
// read becomes a notice; a prompt that could not be rendered fails the
// turn, since there is nothing else to run.
func (s *sessionActor) prepReply(c actor.Context, id, text, errText string) {
	m := s.mcp
	if m == nil || m.prep == nil || m.held == nil || !s.running {
		return
	}
	p := m.prep
	ref, ok := p.waiting[id]
	if !ok {
		return
	}
	delete(p.waiting, id)
	switch {
	case p.command != "" && errText != "":
		p.err = errText
	case p.command != "":
		p.prompt = text
	case errText != "":
		s.publishMCP(&event.Notice{Level: "warn", Message: fmt.Sprintf("could not read @%s: %s", ref, errText)})
	default:
		p.texts[ref] = text
	}
	if len(p.waiting) > 0 {
		return
	}
	if p.command != "" {
		if p.err != "" {
			s.failHeld(c, fmt.Sprintf("%s: %s", p.command, p.err))
			return
		}
		s.forwardHeld(c, p.prompt)
		return
	}
	s.forwardHeld(c, mcpconn.WithResources(m.held.Input, p.refs, p.texts))
}

// forwardHeld hands the held turn, with its final input, to the executor.
func (s *sessionActor) forwardHeld(c actor.Context, input string) {
	held := *s.mcp.held
	s.mcp.held, s.mcp.prep = nil, nil
	if s.executor == nil {
		s.finish(c, &agent.TurnFinished{Session: s.spec.Agent.Session, Status: event.StatusFailed, Error: "the session has no executor"})
		return
	}
	held.Input = input
	s.forward(c, &held)
}

func (s *sessionActor) failHeld(c actor.Context, msg string) {
	s.mcp.held, s.mcp.prep = nil, nil
	s.publishMCP(&event.ErrorOccurred{Message: msg})
	s.finish(c, &agent.TurnFinished{Session: s.spec.Agent.Session, Status: event.StatusFailed, Error: msg})
}

// MCPStatus returns the state of the session's MCP servers.
func (s *Session) MCPStatus(timeout time.Duration) (*event.MCPStatus, error) {
	res, err := s.sys.Root().RequestFuture(s.pid, &mcpconn.QueryMCP{}, timeout).Result()
	if err != nil {
		return nil, fmt.Errorf("mcp status: %w", err)
	}
	st, ok := res.(*event.MCPStatus)
	if !ok {
		return nil, fmt.Errorf("mcp status: unexpected reply %T", res)
	}
	return st, nil
}

// GetMCPPrompt renders a server's prompt, for a /mcp__<server>__<prompt>
// command.
func (s *Session) GetMCPPrompt(server, prompt string, args map[string]string, timeout time.Duration) (string, error) {
	res, err := s.sys.Root().RequestFuture(s.pid, &mcpconn.GetMCPPrompt{Server: server, Prompt: prompt, Args: args}, timeout).Result()
	if err != nil {
		return "", fmt.Errorf("mcp prompt %s/%s: %w", server, prompt, err)
	}
	r, ok := res.(*mcpconn.MCPPromptResult)
	if !ok {
		return "", fmt.Errorf("mcp prompt %s/%s: unexpected reply %T", server, prompt, res)
	}
	if r.Error != "" {
		return "", errors.New(r.Error)
	}
	return r.Text, nil
}

// ReadMCPResource reads a server's resource, for an @<server>:<uri>
// reference.
func (s *Session) ReadMCPResource(server, uri string, timeout time.Duration) (string, error) {
	res, err := s.sys.Root().RequestFuture(s.pid, &mcpconn.ReadMCPResource{Server: server, URI: uri}, timeout).Result()
	if err != nil {
		return "", fmt.Errorf("mcp resource %s:%s: %w", server, uri, err)
	}
	r, ok := res.(*mcpconn.MCPResourceResult)
	if !ok {
		return "", fmt.Errorf("mcp resource %s:%s: unexpected reply %T", server, uri, res)
	}
	if r.Error != "" {
		return "", errors.New(r.Error)
	}
	return r.Text, nil
}

// AnswerElicitation answers an ElicitationRequested event.
func (s *Session) AnswerElicitation(r *mcpconn.ElicitationResponse) {
	s.sys.Send(s.pid, r)
}

// sharePlannerMCP gives a two-model run's planner the server's tools the
// user audited as read-only (trusted_read_only_tools), and takes back
// those the server no longer lists or no longer trusts: the planner never
// sees an MCP tool on its readOnlyHint alone.
func (s *sessionActor) sharePlannerMCP(server string, keep map[string]bool) {
	p := s.spec.Planner
	if p == nil || p.Agent.Tools == nil {
		return
	}
	main, planner := s.spec.Agent.Tools, p.Agent.Tools
	for _, old := range s.mcp.registered[server] {
		if !keep[old] {
			planner.Remove(old)
		}
	}
	for name := range keep {
		t, ok := main.Get(name)
		if tr, trusted := t.(agent.TrustedReader); ok && trusted && tr.TrustedReadOnly() {
			if err := planner.Replace(t); err != nil {
				s.publishMCP(&event.Notice{Level: "warn", Message: fmt.Sprintf("mcp server %q: tool %s not given to the planner: %v", server, name, err)})
			}
		} else {
			planner.Remove(name)
		}
	}
}
