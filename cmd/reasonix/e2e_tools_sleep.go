//go:build reasonix_e2e

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"

	"reasonix/core/proc"
	"reasonix/core/tool"
)

// This file, like e2e_tools.go, is compiled only into the end-to-end test
// binary. It adds a read-only tool, so subagents without a bash jail can
// run it, that starts a process and misbehaves on cancellation: it either
// returns and leaves the process running, or hangs and never returns. The
// tests prove that Ctrl-C still ends the run and that the process does not
// outlive it.
func init() {
	tool.RegisterBuiltin("e2e_sleep", func(tool.Env) tool.Tool { return sleepTool{} })
}

type sleepTool struct{}

type sleepArgs struct {
	Seconds string `json:"seconds"`
	// Hang makes the call never return, as a tool stuck on something
	// other than its process would; otherwise the call returns when its
	// context ends and abandons the sleep.
	Hang bool `json:"hang"`
}

func (sleepTool) Name() string { return "e2e_sleep" }
func (sleepTool) Description() string {
	return "Test-only tool that runs sleep SECONDS under a shell and mishandles cancellation."
}
func (sleepTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"string"},"hang":{"type":"boolean"}},"required":["seconds"]}`)
}
func (sleepTool) ReadOnly() bool { return true }

// Execute runs the sleep as the shell's child, not in its place, so only a
// group kill reaches it: the parent-death signal stops the shell alone.
func (sleepTool) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var args sleepArgs
	if err := json.Unmarshal(raw, &args); err != nil {
		return "", fmt.Errorf("e2e_sleep: %w", err)
	}
	cmd := exec.Command("sh", "-c", "sleep "+args.Seconds+"; true")
	if err := proc.Start(cmd); err != nil {
		return "", fmt.Errorf("e2e_sleep: %w", err)
	}
	// The waiter outlives an abandoning call on purpose: it is the leak
	// this tool stands for, and it still reaps the shell once killed.
	exited := make(chan error, 1)
	go func() { exited <- proc.Wait(cmd) }()
	if args.Hang {
		select {} // the process may end, the call never does
	}
	select {
	case err := <-exited:
		return "slept", err
	case <-ctx.Done():
		return "", errors.New("e2e_sleep: cancelled, the sleep was left running")
	}
}
