package main

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"reasonix/cmd/reasonix/internal/cmdutil"
)

func TestSubagentFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		stdin io.Reader
		// want is the expected options when wantCode is 0.
		want     SubagentOptions
		wantCode int
		wantErr  string
	}{
		{
			name: "list",
			args: []string{"list"},
			want: SubagentOptions{Action: "list"},
		},
		{
			name: "list all with global flags",
			args: []string{"list", "--all", "--config", "x.toml", "--cwd", "/tmp"},
			want: SubagentOptions{Action: "list", All: true, GlobalOptions: cmdutil.GlobalOptions{ConfigFile: "x.toml", Cwd: "/tmp"}},
		},
		{
			name: "try joins the task",
			args: []string{"try", "explore", "find", "the", "parser"},
			want: SubagentOptions{Action: "try", Profile: "explore", Task: "find the parser", OutputFormat: "text", PermissionMode: "ask"},
		},
		{
			name:  "try reads the task from stdin",
			args:  []string{"try", "review"},
			stdin: strings.NewReader("  check main.go\n"),
			want:  SubagentOptions{Action: "try", Profile: "review", Task: "check main.go", OutputFormat: "text", PermissionMode: "ask"},
		},
		{
			name:  "dash means stdin",
			args:  []string{"run", "review", "-"},
			stdin: strings.NewReader("from stdin"),
			want:  SubagentOptions{Action: "run", Profile: "review", Task: "from stdin", OutputFormat: "text", PermissionMode: "ask"},
		},
		{
			name: "try flags",
			args: []string{"try", "-m", "fake/pro", "--effort", "high", "--max-steps", "3", "-o", "json", "--cwd", "/w", "explore", "go"},
			want: SubagentOptions{Action: "try", Profile: "explore", Task: "go", Model: "fake/pro", Effort: "high", MaxSteps: 3,
				OutputFormat: "json", PermissionMode: "ask", GlobalOptions: cmdutil.GlobalOptions{Cwd: "/w"}},
		},
		{
			name: "run flags",
			args: []string{"run", "--permission-mode", "yolo", "--deny", "Bash(git push:*)", "--deny", "Edit(secrets/**)", "-o", "stream-json", "audit", "fix", "it"},
			want: SubagentOptions{Action: "run", Profile: "audit", Task: "fix it", OutputFormat: "stream-json",
				PermissionMode: "yolo", Deny: []string{"Bash(git push:*)", "Edit(secrets/**)"}},
		},
		{name: "try without a profile", args: []string{"try"}, wantCode: cmdutil.ExitUsage, wantErr: "missing the profile name"},
		{name: "run without a task", args: []string{"run", "explore"}, stdin: strings.NewReader(" \n"), wantCode: cmdutil.ExitUsage, wantErr: "no task"},
		{name: "blank task", args: []string{"try", "explore", "  "}, wantCode: cmdutil.ExitUsage, wantErr: "no task"},
		{name: "unreadable stdin", args: []string{"try", "explore"}, stdin: failingReader{}, wantCode: cmdutil.ExitFailed, wantErr: "stdin broken"},
		{name: "bad output format", args: []string{"try", "-o", "yaml", "explore", "x"}, wantCode: cmdutil.ExitUsage, wantErr: `--output-format "yaml"`},
		{name: "negative max steps", args: []string{"run", "--max-steps", "-2", "explore", "x"}, wantCode: cmdutil.ExitUsage, wantErr: "--max-steps"},
		{name: "bad permission mode", args: []string{"run", "--permission-mode", "maybe", "explore", "x"}, wantCode: cmdutil.ExitUsage, wantErr: "--permission-mode"},
		{name: "bad deny rule", args: []string{"run", "--deny", "Bash(oops", "explore", "x"}, wantCode: cmdutil.ExitUsage, wantErr: "--deny"},
		{name: "try has no permission flags", args: []string{"try", "--permission-mode", "yolo", "explore", "x"}, wantCode: cmdutil.ExitUsage, wantErr: "unknown flag"},
		{name: "list takes no arguments", args: []string{"list", "explore"}, wantCode: cmdutil.ExitUsage, wantErr: "unknown command"},
		{name: "unknown subcommand", args: []string{"launch"}, wantCode: cmdutil.ExitUsage, wantErr: `unknown command "launch"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stdin := tt.stdin
			if stdin == nil {
				stdin = strings.NewReader("")
			}
			f := &cmdutil.Factory{Stdin: stdin, Stdout: io.Discard, Stderr: io.Discard}
			var got *SubagentOptions
			// Built under the real root so flag errors go through the
			// same usage-error path as in the binary.
			root := NewCmdRoot(f)
			for _, c := range root.Commands() {
				if c.Name() == "subagent" {
					root.RemoveCommand(c)
				}
			}
			root.AddCommand(NewCmdSubagent(f, func(o *SubagentOptions) error { got = o; return nil }))
			opts, ok := invoke(t, root, append([]string{"subagent"}, tt.args...), &got, tt.wantCode, tt.wantErr)
			if ok && !reflect.DeepEqual(opts, tt.want) {
				t.Errorf("options = %+v, want %+v", opts, tt.want)
			}
		})
	}
}
