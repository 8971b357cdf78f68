package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/event"
	"reasonix/core/tool"
)

// previewTimeout bounds the wait for an approval's preview (a file read
// and a diff): past it the request goes out without one.
const previewTimeout = 2 * time.Second

// previewReady carries an approval request with its preview back to the
// executor.
type previewReady struct {
	req  *event.ApprovalRequested
	text string
}

// askApproval publishes req. For a tool that can show what the call would
// change (tool.Previewer: a diff for a file write or edit), the preview is
// made first on a goroutine, since it reads the file, and the request goes
// out with it.
func (e *executor) askApproval(c actor.Context, req *event.ApprovalRequested, tl tool.Tool) {
	pv, ok := tl.(tool.Previewer)
	if !ok {
		e.publish(req)
		return
	}
	sys, self, args := e.sys, c.Self(), json.RawMessage(req.Args)
	// Whichever comes first, the preview or the timer, sends the one
	// previewReady: a slow diff never holds the question back. The timer is
	// the preview's only deadline: a context with a deadline of its own
	// could end the preview first and let its late answer win the race.
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(previewTimeout, func() {
		cancel()
		sys.Send(self, &previewReady{req: req})
	})
	sys.Go(func() {
		defer cancel()
		text, err := pv.Preview(ctx, args)
		if err != nil {
			text = ""
		}
		if timer.Stop() {
			sys.Send(self, &previewReady{req: req, text: text})
		}
	}, func(any, []byte) {
		if timer.Stop() {
			sys.Send(self, &previewReady{req: req})
		}
	})
}

// onPreviewReady publishes the request unless it was settled meanwhile (a
// cancelled turn, a timeout).
func (e *executor) onPreviewReady(m *previewReady) {
	if e.turn == nil {
		return
	}
	if _, waiting := e.turn.approvals[m.req.RequestID]; !waiting {
		return
	}
	m.req.Preview = m.text
	e.publish(m.req)
}
