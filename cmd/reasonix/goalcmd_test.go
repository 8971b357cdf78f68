package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"reasonix/cmd/reasonix/internal/cmdutil"
)

// TestRunGoalFlags: goal flags parse into GoalOptions, and combinations
// that mean nothing are usage errors.
func TestRunGoalFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
		want     GoalOptions
		prompt   string
	}{
		{name: "goal with budgets", args: []string{"--goal", "fix it", "--research", "--max-turns", "9", "--max-tokens", "100", "--max-time", "5m"},
			want: GoalOptions{Objective: "fix it", Research: true, MaxTurns: 9, MaxTokens: 100, MaxTime: 5 * time.Minute}, prompt: "/goal --research fix it"},
		{name: "simple", args: []string{"--goal", "rename", "--simple"}, want: GoalOptions{Objective: "rename", Simple: true}, prompt: "/goal --simple rename"},
		{name: "both strategies", args: []string{"--goal", "x", "--research", "--simple"}, wantCode: cmdutil.ExitUsage, wantErr: "cannot be used together"},
		{name: "budget without goal", args: []string{"--max-turns", "3", "hi"}, wantCode: cmdutil.ExitUsage, wantErr: "go with --goal"},
		{name: "negative budget", args: []string{"--goal", "x", "--max-tokens", "-1"}, wantCode: cmdutil.ExitUsage, wantErr: "negative"},
		{name: "prompt beside goal", args: []string{"--goal", "x", "and more"}, wantCode: cmdutil.ExitUsage, wantErr: "no prompt argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &cmdutil.Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
			var got *RunOptions
			cmd := NewCmdRun(f, func(o *RunOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if code := cmdutil.ExitCode(err); code != tt.wantCode {
				t.Fatalf("exit code %d (err %v), want %d", code, err, tt.wantCode)
			}
			if tt.wantCode != cmdutil.ExitOK {
				if !strings.Contains(fmt.Sprint(err), tt.wantErr) || got != nil {
					t.Fatalf("err %v, runF called %v", err, got != nil)
				}
				return
			}
			if got.Goal != tt.want || got.Prompt != tt.prompt {
				t.Fatalf("goal %+v prompt %q", got.Goal, got.Prompt)
			}
		})
	}
}

// TestGoalExitCodes: a goal's end maps to its exit code in the one place
// exit codes are made.
func TestGoalExitCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want int
	}{
		{&goalExit{code: exitGoalPaused}, 3},
		{fmt.Errorf("wrapped: %w", &goalExit{code: exitGoalLimit}), 4},
		{cmdutil.ErrSilent, cmdutil.ExitFailed},
		{errors.Join(cmdutil.ErrInterrupted), cmdutil.ExitInterrupted},
	} {
		if got := cmdutil.ExitCode(tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
