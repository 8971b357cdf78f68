package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/kernel"
	"reasonix/core/tool"
)

// toolRunner is a short-lived child that runs one tool call in a goroutine
// and replies with its ToolResult; its parent then stops it. It replies
// exactly once, and on its own timer when it has to: a tool that ignores
// its context past the timeout (or a cancel) plus the grace period is
// answered for — timed out or cancelled — and its goroutine abandoned
// (still counted by the System until it returns); the late outcome is
// dropped. A panicking tool becomes an error result; the runner is never
// restarted.
type toolRunner struct {
	sys     *kernel.System
	tool    tool.Tool
	timeout time.Duration
	grace   time.Duration

	replyTo *actor.PID
	call    RunTool
	cancel  context.CancelFunc
	start   time.Time
	g       *kernel.Goroutine
	// deadline fires at timeout + grace; graceTimer at cancel + grace.
	deadline, graceTimer *time.Timer
	// cancelled records a CancelTool so the result says so even when the
	// tool returns a plain error on a cancelled context.
	cancelled bool
	replied   bool
}

// runnerExpired is the runner's own deadline: the tool had its timeout and
// grace (cancelled says the grace after a cancel) and has not returned.
type runnerExpired struct{ cancelled bool }

// toolRunnerProps builds the props of a runner for t. A runner needs its
// tool: without one there is nothing that could answer the call.
func toolRunnerProps(sys *kernel.System, t tool.Tool, timeout, grace time.Duration, log *slog.Logger) (*actor.Props, error) {
	if t == nil {
		return nil, errors.New("no tool to run")
	}
	if grace <= 0 {
		grace = DefaultToolGrace
	}
	return kernel.Props("toolrunner", log, func() actor.Actor {
		return &toolRunner{sys: sys, tool: t, timeout: timeout, grace: grace}
	}), nil
}

// Receive implements actor.Actor.
func (r *toolRunner) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *RunTool:
		r.run(c, m)
	case *toolOutcome:
		r.finish(c, m)
	case *CancelTool:
		r.onCancel(c)
	case *runnerExpired:
		r.expire(c, m)
	case *kernel.Crashed:
		if lost, ok := m.Lost.(*RunTool); ok && r.replyTo == nil {
			r.call, r.replyTo = *lost, m.Sender // the call never started
		}
		r.reply(c, &ToolResult{CallID: r.call.CallID, Name: r.call.Name, IsError: true, Crashed: true,
			Output: "Error: " + m.Error()})
		r.cleanup()
	case *actor.Stopping:
		r.cleanup()
		// A tool that ignores its cancelled context must not hold the
		// System's Shutdown: give it the grace period, then abandon it.
		if g := r.g; g != nil {
			time.AfterFunc(r.grace, g.Abandon)
		}
	}
}

func (r *toolRunner) run(c actor.Context, m *RunTool) {
	if r.cancel != nil {
		return // one call per runner
	}
	r.replyTo, r.call, r.start = c.Sender(), *m, time.Now()
	var ctx context.Context
	var cancel context.CancelFunc
	if r.timeout > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), r.timeout)
		sys, self := r.sys, c.Self()
		r.deadline = time.AfterFunc(r.timeout+r.grace, func() { sys.Send(self, &runnerExpired{}) })
	} else {
		ctx, cancel = context.WithCancel(context.Background())
	}
	r.cancel = cancel
	ctx = tool.WithCallID(ctx, m.CallID)
	self, t := c.Self(), r.tool
	args := json.RawMessage(m.Args)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	r.g = r.sys.Go(func() {
		out, err := t.Execute(ctx, args)
		r.sys.Send(self, &toolOutcome{output: out, err: err, timedOut: errors.Is(ctx.Err(), context.DeadlineExceeded)})
	}, func(reason any, _ []byte) {
		r.sys.Send(self, &toolOutcome{err: fmt.Errorf("tool %s crashed: %v", t.Name(), reason), crashed: true})
	})
}

func (r *toolRunner) onCancel(c actor.Context) {
	if r.cancelled || r.replied {
		return
	}
	r.cancelled = true
	if r.cancel == nil {
		return
	}
	r.cancel()
	sys, self := r.sys, c.Self()
	r.graceTimer = time.AfterFunc(r.grace, func() { sys.Send(self, &runnerExpired{cancelled: true}) })
}

// expire answers for a tool that outlived its timeout or cancel by the
// grace period, and abandons its goroutine.
func (r *toolRunner) expire(c actor.Context, m *runnerExpired) {
	if r.replied {
		return
	}
	res := &ToolResult{CallID: r.call.CallID, Name: r.call.Name, IsError: true, Duration: time.Since(r.start)}
	if m.cancelled || r.cancelled {
		res.Cancelled = true
		res.Output = fmt.Sprintf("Error: cancelled by the user; tool %s did not stop within %s and was abandoned", r.call.Name, r.grace)
	} else {
		res.Output = fmt.Sprintf("Error: tool %s timed out after %s and did not stop within %s; it was abandoned", r.call.Name, r.timeout, r.grace)
	}
	if r.g != nil {
		r.g.Abandon()
	}
	r.reply(c, res)
	r.cleanup()
}

func (r *toolRunner) finish(c actor.Context, o *toolOutcome) {
	if r.replied {
		return // the runner already answered for this call
	}
	res := &ToolResult{
		CallID:    r.call.CallID,
		Name:      r.call.Name,
		Output:    o.output,
		Cancelled: r.cancelled,
		Crashed:   o.crashed,
		Duration:  time.Since(r.start),
	}
	switch {
	case o.timedOut:
		res.IsError = true
		res.Output = fmt.Sprintf("Error: tool %s timed out after %s", r.call.Name, r.timeout)
	case r.cancelled:
		res.IsError = true
		res.Output = "Error: cancelled by the user"
		if o.output != "" {
			res.Output += "\n" + o.output
		}
	case o.err != nil:
		res.IsError = true
		res.Output = "Error: " + o.err.Error()
	}
	r.reply(c, res)
	r.cleanup()
}

// reply sends the one result. The parent stops the runner once it has it:
// a runner that stopped itself would race its Terminated (a system
// message, handled first) against this reply.
func (r *toolRunner) reply(c actor.Context, res *ToolResult) {
	if r.replied {
		return
	}
	r.replied = true
	if r.replyTo != nil {
		c.Request(r.replyTo, res) // Request, so the parent sees which runner answered
	}
}

func (r *toolRunner) cleanup() {
	if r.cancel != nil {
		r.cancel()
	}
	if r.deadline != nil {
		r.deadline.Stop()
	}
	if r.graceTimer != nil {
		r.graceTimer.Stop()
	}
}
