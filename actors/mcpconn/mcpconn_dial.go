package mcpconn

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/kernel"
	"reasonix/core/mcp"
	"reasonix/core/mcp/oauth"
)

// dialer holds what a connection goroutine needs; it never changes after
// the actor builds it, so the goroutine reads no actor state.
type dialer struct {
	sys            *kernel.System
	cfg            mcp.ServerConfig
	gate           *Latch
	log            *slog.Logger
	root           string
	info           mcp.Implementation
	connectTimeout time.Duration
	elicitor       mcp.Elicitor
	home           string
	jail           func(mcp.ServerConfig, mcp.StdioCommand) (mcp.StdioCommand, error)
}

// oauth is the OAuth handler of an http server: stored tokens only (a
// session never starts an authorization), or a grant without a person
// (client credentials, cross-app access) when the server is configured
// for one.
func (d *dialer) oauth() (*oauth.Handler, error) {
	cfg, err := d.cfg.OAuth.Config(d.cfg.Name, d.cfg.URL, nil)
	if err != nil {
		return nil, err
	}
	cfg.Authorize = oauth.AuthorizeNever
	if d.home != "" {
		cfg.Store = oauth.NewStore(d.home)
	}
	return oauth.New(cfg)
}

// run is one connection attempt and, when it succeeds, the life of that
// connection: it owns the client, closes it when ctx ends or the
// transport dies, and always reports the end with one connDown, sent
// after the client (and a stdio server's process) is gone.
func (d *dialer) run(ctx context.Context, self *actor.PID, epoch int) {
	var client *mcp.Client
	var errText string
	wasUp := false
	defer func() {
		if r := recover(); r != nil {
			d.log.Error("mcp connection panic", "server", d.cfg.Name, "reason", fmt.Sprint(r), "stack", string(debug.Stack()))
			errText = fmt.Sprintf("connection crashed: %v", r)
		}
		if client != nil {
			d.gate.detach(epoch, fmt.Sprintf("mcp server %q lost its connection", d.cfg.Name))
			_ = client.Close()
		}
		d.sys.Send(self, &ConnDown{epoch: epoch, err: errText, wasUp: wasUp})
	}()
	opts := mcp.OpenOptions{Logger: d.log, Dir: d.root}
	if d.cfg.Jailed() {
		if d.jail == nil {
			errText = fmt.Sprintf("mcp server %q runs in the bash jail, but no sandbox was configured for the session", d.cfg.Name)
			return
		}
		cfg := d.cfg
		opts.Wrap = func(c mcp.StdioCommand) (mcp.StdioCommand, error) { return d.jail(cfg, c) }
	}
	if d.cfg.Type == mcp.TypeHTTP {
		h, err := d.oauth()
		if err != nil {
			errText = err.Error()
			return
		}
		defer h.Close()
		opts.OAuth = h
	}
	t, err := mcp.Open(ctx, d.cfg, opts)
	if err != nil {
		errText = err.Error()
		return
	}
	pid := 0
	if s, ok := t.(*mcp.Stdio); ok {
		pid = s.Pid()
	}
	cctx, cancel := context.WithTimeoutCause(ctx, d.connectTimeout, fmt.Errorf("no answer within %s", d.connectTimeout))
	defer cancel()
	client, err = mcp.Connect(cctx, t, d.info, mcp.Options{
		Logger:   d.log,
		Root:     d.root,
		Elicitor: d.elicitor,
		OnListChanged: func(k mcp.ListKind) {
			d.sys.Send(self, &ListChanged{epoch: epoch, kind: k})
		},
	})
	if err != nil {
		client = nil
		errText = err.Error()
		return
	}
	up, err := listAll(cctx, client, d.log, d.cfg.Name)
	if err != nil {
		errText = err.Error()
		return
	}
	cancel()
	if !d.gate.attach(epoch, client) {
		return // a newer attempt took over
	}
	up.epoch, up.info, up.pid = epoch, client.ServerInfo(), pid
	wasUp = true
	d.sys.Send(self, up)
	select {
	case <-ctx.Done():
	case <-client.Done():
		if err := client.Err(); err != nil {
			errText = err.Error()
		}
	}
}

// listAll fetches what a freshly connected server offers. Tools are
// essential; prompts and resources are listed when the server declares
// them, and a failure there is logged rather than fatal.
func listAll(ctx context.Context, c *mcp.Client, log *slog.Logger, server string) (*ConnUp, error) {
	up := &ConnUp{}
	caps := c.Capabilities()
	if caps.Tools != nil {
		tools, err := c.ListTools(ctx)
		if err != nil {
			return nil, err
		}
		up.tools = tools
	}
	if caps.Prompts != nil {
		up.hasPrompt = true
		p, err := c.ListPrompts(ctx)
		if err != nil {
			log.Warn("mcp prompts/list failed", "server", server, "err", err)
		}
		up.prompts = p
	}
	if caps.Resources != nil {
		up.hasRes = true
		r, err := c.ListResources(ctx)
		if err != nil {
			log.Warn("mcp resources/list failed", "server", server, "err", err)
		}
		up.resources = r
	}
	return up, nil
}
