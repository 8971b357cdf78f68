package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/core/tool"
)

// toolRunner is a short-lived child that runs one tool call in a goroutine
// and replies with its ToolResult; its parent then stops it. A panicking tool becomes an error
// result; the runner is never restarted.
type toolRunner struct {
	sys     *System
	tool    tool.Tool
	timeout time.Duration

	replyTo *actor.PID
	call    RunTool
	cancel  context.CancelFunc
	start   time.Time
	// cancelled records a CancelTool so the result says so even when the
	// tool returns a plain error on a cancelled context.
	cancelled bool
}

func toolRunnerProps(sys *System, t tool.Tool, timeout time.Duration) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &toolRunner{sys: sys, tool: t, timeout: timeout}
	})
}

// Receive implements actor.Actor.
func (r *toolRunner) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *RunTool:
		r.run(c, m)
	case *toolOutcome:
		r.finish(c, m)
	case *CancelTool:
		r.cancelled = true
		if r.cancel != nil {
			r.cancel()
		}
	case *actor.Stopping:
		if r.cancel != nil {
			r.cancel()
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
	r.sys.Go(func() {
		out, err := t.Execute(ctx, args)
		r.sys.Send(self, &toolOutcome{output: out, err: err, timedOut: errors.Is(ctx.Err(), context.DeadlineExceeded)})
	}, func(reason any, _ []byte) {
		r.sys.Send(self, &toolOutcome{err: fmt.Errorf("tool %s crashed: %v", t.Name(), reason), crashed: true})
	})
}

func (r *toolRunner) finish(c actor.Context, o *toolOutcome) {
	r.cancel()
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
	// The parent stops the runner once it has the result: a runner that
	// stopped itself would race its Terminated (a system message, handled
	// first) against this reply.
	if r.replyTo != nil {
		c.Request(r.replyTo, res) // Request, so the parent sees which runner answered
	}
}
