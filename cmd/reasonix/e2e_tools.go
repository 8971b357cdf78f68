//go:build reasonix_e2e

package main

import (
	"context"
	"encoding/json"

	"reasonix/core/tool"
)

// This file is compiled only into the binary the end-to-end tests build
// (-tags reasonix_e2e). It adds a tool that panics, so the tests can prove a
// crashing tool becomes an error result in the real process.
func init() {
	tool.RegisterBuiltin("e2e_panic", func(tool.Env) tool.Tool { return panicTool{} })
}

type panicTool struct{}

func (panicTool) Name() string            { return "e2e_panic" }
func (panicTool) Description() string     { return "Test-only tool that panics." }
func (panicTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (panicTool) ReadOnly() bool          { return true }
func (panicTool) Execute(context.Context, json.RawMessage) (string, error) {
	panic("e2e_panic tool exploded")
}
