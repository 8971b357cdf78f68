package mcp

import (
	"context"
	"encoding/json"
	"fmt"
)

// maxPages bounds pagination against a server that never stops.
const maxPages = 1000

// Ping checks that the server answers.
func (c *Client) Ping(ctx context.Context) error {
	return c.Call(ctx, "ping", nil, nil)
}

// ListTools returns every tool, following pagination.
func (c *Client) ListTools(ctx context.Context) ([]Tool, error) {
	return paginate[Tool](ctx, c, "tools/list", "tools")
}

// ListPrompts returns every prompt, following pagination.
func (c *Client) ListPrompts(ctx context.Context) ([]Prompt, error) {
	return paginate[Prompt](ctx, c, "prompts/list", "prompts")
}

// ListResources returns every resource, following pagination.
func (c *Client) ListResources(ctx context.Context) ([]Resource, error) {
	return paginate[Resource](ctx, c, "resources/list", "resources")
}

type requestMeta struct {
	ProgressToken json.RawMessage `json:"progressToken,omitempty"`
}

type callToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      *requestMeta    `json:"_meta,omitempty"`
}

// CallTool calls the named tool with args, a JSON object (nil or null
// means no arguments). When onProgress is set the request carries a
// progress token and the server's progress notifications reach it until
// the call returns. A failure the tool reports is a result with IsError
// set; an error means the call itself failed.
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage, onProgress ProgressFunc) (*CallToolResult, error) {
	if len(args) == 0 || isNull(args) {
		args = json.RawMessage(`{}`)
	}
	if !json.Valid(args) {
		return nil, fmt.Errorf("tools/call %s: arguments are not valid JSON", name)
	}
	id := c.nextID.Add(1)
	params := callToolParams{Name: name, Arguments: args}
	if onProgress != nil {
		// The request id doubles as the token: it is unique per call.
		params.Meta = &requestMeta{ProgressToken: json.RawMessage(fmt.Sprint(id))}
	}
	var res CallToolResult
	if err := c.request(ctx, id, "tools/call", params, &res, onProgress); err != nil {
		return nil, err
	}
	return &res, nil
}

// GetPrompt renders the named prompt with args.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*GetPromptResult, error) {
	params := map[string]any{"name": name}
	if len(args) > 0 {
		params["arguments"] = args
	}
	var res GetPromptResult
	if err := c.Call(ctx, "prompts/get", params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ReadResource reads the resource at uri.
func (c *Client) ReadResource(ctx context.Context, uri string) (*ReadResourceResult, error) {
	var res ReadResourceResult
	if err := c.Call(ctx, "resources/read", map[string]string{"uri": uri}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// paginate calls a list method until the server gives no nextCursor and
// concatenates the key member of every page. A cursor seen twice is an
// error rather than an endless loop.
func paginate[T any](ctx context.Context, c *Client, method, key string) ([]T, error) {
	var out []T
	seen := map[string]bool{}
	cursor := ""
	for range maxPages {
		var params any
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		var page map[string]json.RawMessage
		if err := c.Call(ctx, method, params, &page); err != nil {
			return nil, err
		}
		if raw := page[key]; len(raw) > 0 && !isNull(raw) {
			var items []T
			if err := json.Unmarshal(raw, &items); err != nil {
				return nil, fmt.Errorf("decode %s result: %w", method, err)
			}
			out = append(out, items...)
		}
		var next string
		if raw := page["nextCursor"]; len(raw) > 0 && !isNull(raw) {
			if err := json.Unmarshal(raw, &next); err != nil {
				return nil, fmt.Errorf("decode %s cursor: %w", method, err)
			}
		}
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
