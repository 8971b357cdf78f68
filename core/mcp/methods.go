package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxPages bounds pagination against a server that never stops.
const maxPages = 1000

// Ping checks that the server answers.
func (c *Client) Ping(ctx context.Context) error {
	if err := c.cs.Ping(ctx, nil); err != nil {
		return c.ctxFail(ctx, "ping", err)
	}
	return nil
}

// ListTools returns every tool, following pagination.
func (c *Client) ListTools(ctx context.Context) ([]Tool, error) {
	return paginate[Tool](ctx, c, "tools/list", func(ctx context.Context, cursor string) (any, string, error) {
		r, err := c.cs.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return r.Tools, r.NextCursor, nil
	})
}

// ListPrompts returns every prompt, following pagination.
func (c *Client) ListPrompts(ctx context.Context) ([]Prompt, error) {
	return paginate[Prompt](ctx, c, "prompts/list", func(ctx context.Context, cursor string) (any, string, error) {
		r, err := c.cs.ListPrompts(ctx, &sdk.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return r.Prompts, r.NextCursor, nil
	})
}

// ListResources returns every resource, following pagination.
func (c *Client) ListResources(ctx context.Context) ([]Resource, error) {
	return paginate[Resource](ctx, c, "resources/list", func(ctx context.Context, cursor string) (any, string, error) {
		r, err := c.cs.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return r.Resources, r.NextCursor, nil
	})
}

// CallTool calls the named tool with args, a JSON object (nil or null
// means no arguments). When onProgress is set the request carries a
// progress token and the server's progress notifications reach it until
// the call returns. A failure the tool reports is a result with IsError
// set; an error means the call itself failed.
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage, onProgress ProgressFunc) (*CallToolResult, error) {
	const method = "tools/call"
	if len(args) == 0 || isNull(args) {
		args = json.RawMessage(`{}`)
	}
	if !json.Valid(args) {
		return nil, fmt.Errorf("%s %s: arguments are not valid JSON", method, name)
	}
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	if onProgress != nil {
		tok := fmt.Sprintf("reasonix-%d", c.nextToken.Add(1))
		params.SetProgressToken(tok)
		cctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		sink := &progressSink{fn: onProgress, cancel: cancel}
		c.mu.Lock()
		c.progress[tok] = sink
		c.mu.Unlock()
		r, err := c.cs.CallTool(cctx, params)
		c.mu.Lock()
		delete(c.progress, tok)
		c.mu.Unlock()
		if perr := sink.finish(); perr != nil {
			return nil, fmt.Errorf("%s: %w", method, perr)
		}
		return c.toolResult(ctx, r, err)
	}
	r, err := c.cs.CallTool(ctx, params)
	return c.toolResult(ctx, r, err)
}

// toolResult converts the SDK's answer to a tools/call.
func (c *Client) toolResult(ctx context.Context, r *sdk.CallToolResult, err error) (*CallToolResult, error) {
	const method = "tools/call"
	if err != nil {
		return nil, c.ctxFail(ctx, method, err)
	}
	var res CallToolResult
	if err := convert(r, &res); err != nil {
		return nil, fmt.Errorf("decode %s result: %w", method, err)
	}
	return &res, nil
}

// GetPrompt renders the named prompt with args.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*GetPromptResult, error) {
	r, err := c.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return nil, c.ctxFail(ctx, "prompts/get", err)
	}
	var res GetPromptResult
	if err := convert(r, &res); err != nil {
		return nil, fmt.Errorf("decode prompts/get result: %w", err)
	}
	return &res, nil
}

// ReadResource reads the resource at uri.
func (c *Client) ReadResource(ctx context.Context, uri string) (*ReadResourceResult, error) {
	r, err := c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, c.ctxFail(ctx, "resources/read", err)
	}
	var res ReadResourceResult
	if err := convert(r, &res); err != nil {
		return nil, fmt.Errorf("decode resources/read result: %w", err)
	}
	return &res, nil
}

// paginate calls a list method until the server gives no nextCursor and
// converts the items of every page. A cursor seen twice is an error
// rather than an endless loop.
func paginate[T any](ctx context.Context, c *Client, method string, page func(context.Context, string) (any, string, error)) ([]T, error) {
	var out []T
	seen := map[string]bool{}
	cursor := ""
	for range maxPages {
		items, next, err := page(ctx, cursor)
		if err != nil {
			return nil, c.ctxFail(ctx, method, err)
		}
		var ours []T
		if err := convert(items, &ours); err != nil {
			return nil, fmt.Errorf("decode %s result: %w", method, err)
		}
		out = append(out, ours...)
		if next == "" {
			return out, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("%s: server repeated cursor %q", method, next)
		}
		seen[next] = true
		cursor = next
	}
	return nil, fmt.Errorf("%s: more than %d pages", method, maxPages)
}

// isNull reports whether raw is the JSON literal null.
func isNull(raw json.RawMessage) bool {
	return string(raw) == "null"
}

// compact is raw without insignificant whitespace, or raw itself when it
// is not valid JSON.
func compact(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}
