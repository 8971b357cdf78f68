package actors

import (
	"context"
	"encoding/json"
	"testing"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

// previewingTool is a writer whose preview is what preview returns.
type previewingTool struct {
	funcTool
	preview func(ctx context.Context) string
}

func (p *previewingTool) Preview(ctx context.Context, _ json.RawMessage) (string, error) {
	return p.preview(ctx), nil
}

// TestApprovalCarriesThePreview: a writer that can preview its call has
// the preview on its approval request; one whose preview never comes back
// still asks, without it, once the preview's time is up (and the preview
// is told to stop), and the call runs when approved.
func TestApprovalCarriesThePreview(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, want string
		preview    func(ctx context.Context) string
	}{
		{"ready", "--- a/x\n+++ b/x", func(context.Context) string { return "--- a/x\n+++ b/x" }},
		{"never ready", "", func(ctx context.Context) string { <-ctx.Done(); return "late" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := func(context.Context, json.RawMessage) (string, error) { return "written", nil }
			tl := &previewingTool{funcTool: funcTool{name: "write_x", run: run}, preview: tc.preview}
			h := newHarness(t, harnessOpts{tools: []tool.Tool{tl},
				perms: agent.Permissions{Policy: policy(t, "ask", nil, nil, nil), Interactive: true}})
			h.srv.Push(providertest.Turn{ToolCalls: []providertest.ToolCall{call("write_x", `{}`)}}, providertest.Turn{Text: "ok"})
			h.sess.Run("go")
			ev := h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.ApprovalRequested); return ok }).(*event.ApprovalRequested)
			if ev.Preview != tc.want {
				t.Errorf("preview %q, want %q", ev.Preview, tc.want)
			}
			h.sess.Approve(&agent.ApprovalResponse{RequestID: ev.RequestID, Choice: event.ApproveOnce})
			if done, _ := h.wait(); done.Status != event.StatusOK {
				t.Fatalf("turn %+v", done)
			}
		})
	}
}
