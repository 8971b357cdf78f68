package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"reasonix/core/tool"
)

// stubCaller is a ToolCaller that answers from a function.
type stubCaller func(ctx context.Context, name string, args json.RawMessage) (*CallToolResult, error)

func (s stubCaller) CallTool(ctx context.Context, name string, args json.RawMessage, _ ProgressFunc) (*CallToolResult, error) {
	return s(ctx, name, args)
}

func TestRemoteToolOverStdio(t *testing.T) {
	t.Parallel()
	c, _, _ := connectFake(t, nil, Options{})
	tools, err := c.ListTools(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg := ServerConfig{Name: "fake server", ToolTimeouts: map[string]time.Duration{"hang": 100 * time.Millisecond}}
	adapted := map[string]Remote{}
	for _, tl := range tools {
		rt := NewRemoteTool(c, cfg, tl, 0)
		adapted[tl.Name] = rt
	}
	reg, err := tool.NewRegistry(adapted["echo"], adapted["fail"], adapted["hang"], adapted["delete things"])
	if err != nil {
		t.Fatalf("registry rejects adapted tools: %v", err)
	}
	if got := reg.Names(); strings.Join(got, ",") != "mcp__fake_server__delete_things,mcp__fake_server__echo,mcp__fake_server__fail,mcp__fake_server__hang" {
		t.Errorf("registry names = %v", got)
	}
	if _, ok := adapted["delete things"].(tool.FreshApproval); !ok {
		t.Error("a destructive tool does not need a fresh approval")
	}
	if _, ok := adapted["echo"].(tool.FreshApproval); ok {
		t.Error("a read-only tool needs a fresh approval")
	}
	echo := adapted["echo"]
	if !echo.ReadOnly() || adapted["fail"].ReadOnly() || adapted["delete things"].ReadOnly() {
		t.Error("ReadOnly does not follow readOnlyHint")
	}
	if echo.Description() != "Echo text back" || echo.Server() != "fake server" || !echo.Info().ReadOnly() {
		t.Errorf("echo adapter = %q %q", echo.Description(), echo.Server())
	}
	tests := []struct {
		name    string
		tool    string
		args    string
		want    string
		wantErr string
	}{
		{name: "result text", tool: "echo", args: `{"text":"hi"}`, want: "hi"},
		{name: "tool error becomes error", tool: "fail", args: `{}`, wantErr: "it failed"},
		{name: "per-tool timeout", tool: "hang", args: `{}`, wantErr: "timed out after 100ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := adapted[tt.tool].Execute(testCtx(t), json.RawMessage(tt.args))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Execute = %q, %v", got, err)
			}
		})
	}
}

func TestRemoteToolDefaults(t *testing.T) {
	t.Parallel()
	var deadline time.Time
	caller := stubCaller(func(ctx context.Context, name string, _ json.RawMessage) (*CallToolResult, error) {
		deadline, _ = ctx.Deadline()
		if name == "broken" {
			return nil, errors.New("connection lost")
		}
		return &CallToolResult{IsError: true}, nil
	})
	cfg := ServerConfig{Name: "s", CallTimeout: time.Hour}
	rt := NewRemoteTool(caller, cfg, Tool{Name: "t", Title: "Nice Title"}, time.Minute)
	if rt.Description() != "Nice Title" {
		t.Errorf("Description = %q", rt.Description())
	}
	_, err := rt.Execute(context.Background(), nil)
	if err == nil || err.Error() != "the tool reported an error without details" {
		t.Errorf("error = %v", err)
	}
	if time.Until(deadline) < 59*time.Minute {
		t.Errorf("call deadline %v is not the server cap", deadline)
	}
	_, err = NewRemoteTool(caller, cfg, Tool{Name: "broken"}, 0).Execute(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), `mcp server "s" tool "broken": connection lost`) {
		t.Errorf("error = %v", err)
	}
}
