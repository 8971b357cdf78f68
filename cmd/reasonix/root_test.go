package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"reasonix/cmd/reasonix/internal/cmdutil"
)

// cliResult is what one in-process invocation of the CLI produced.
type cliResult struct {
	stdout, stderr string
	code           int
	err            error
}

// runCLI executes the real command tree the way run does, with stdin and
// the environment supplied by the test, and returns the output and the
// exit code. env replaces the process environment entirely.
func runCLI(t *testing.T, env map[string]string, stdin string, args ...string) cliResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	f := &cmdutil.Factory{
		Stdin:   strings.NewReader(stdin),
		Stdout:  &stdout,
		Stderr:  &stderr,
		Getenv:  func(k string) string { return env[k] },
		Version: "test",
	}
	root := NewCmdRoot(f)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil && !errors.Is(err, cmdutil.ErrSilent) && !errors.Is(err, cmdutil.ErrInterrupted) {
		fmt.Fprintln(f.Stderr, "reasonix:", err)
	}
	return cliResult{stdout: stdout.String(), stderr: stderr.String(), code: cmdutil.ExitCode(err), err: err}
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, cmdutil.ExitOK},
		{"usage error", cmdutil.UsageErrorf("bad flag %q", "x"), cmdutil.ExitUsage},
		{"wrapped usage error", fmt.Errorf("load: %w", cmdutil.UsageErrorf("bad")), cmdutil.ExitUsage},
		{"interrupted", cmdutil.ErrInterrupted, cmdutil.ExitInterrupted},
		{"wrapped interrupted", fmt.Errorf("run: %w", cmdutil.ErrInterrupted), cmdutil.ExitInterrupted},
		{"silent failure", cmdutil.ErrSilent, cmdutil.ExitFailed},
		{"plain error", errors.New("boom"), cmdutil.ExitFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := cmdutil.ExitCode(tt.err); got != tt.want {
				t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

// failingReader fails every read, standing in for a broken stdin.
type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("stdin broken") }

func TestRunFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		stdin io.Reader
		// want is the expected options when wantCode is 0.
		want     RunOptions
		wantCode int
		wantErr  string
	}{
		{
			name: "prompt from args",
			args: []string{"fix", "the", "bug"},
			want: RunOptions{Prompt: "fix the bug", OutputFormat: "text", InputFormat: "text"},
		},
		{
			name:  "prompt from stdin",
			stdin: strings.NewReader("  explain main.go\n"),
			want:  RunOptions{Prompt: "explain main.go", OutputFormat: "text", InputFormat: "text"},
		},
		{
			name:  "dash means stdin",
			args:  []string{"-"},
			stdin: strings.NewReader("from stdin"),
			want:  RunOptions{Prompt: "from stdin", OutputFormat: "text", InputFormat: "text"},
		},
		{
			name:  "args win over stdin",
			args:  []string{"from", "args"},
			stdin: strings.NewReader("from stdin"),
			want:  RunOptions{Prompt: "from args", OutputFormat: "text", InputFormat: "text"},
		},
		{
			name: "every flag",
			args: []string{"-m", "deepseek/deepseek-v4-pro", "--max-steps", "5", "-o", "stream-json", "--config", "x.toml", "--cwd", "/tmp",
				"--permission-mode", "yolo", "--deny", "Bash(git push:*)", "--deny", "Edit(secrets/**)", "go"},
			want: RunOptions{
				GlobalOptions: cmdutil.GlobalOptions{ConfigFile: "x.toml", Cwd: "/tmp"},
				Prompt:        "go", Model: "deepseek/deepseek-v4-pro", MaxSteps: 5, OutputFormat: "stream-json", InputFormat: "text",
				PermissionMode: "yolo", Deny: []string{"Bash(git push:*)", "Edit(secrets/**)"},
			},
		},
		{
			name: "trust the project for one run",
			args: []string{"--trust-project", "go"},
			want: RunOptions{GlobalOptions: cmdutil.GlobalOptions{TrustProject: true}, Prompt: "go", OutputFormat: "text", InputFormat: "text"},
		},
		{
			name:  "commands on stdin",
			args:  []string{"--input-format", "stream-json", "-o", "stream-json", "--continue"},
			stdin: strings.NewReader(`{"type":"prompt","text":"not read here"}`),
			want:  RunOptions{OutputFormat: "stream-json", InputFormat: "stream-json", Continue: true},
		},
		{
			name: "resume with a first prompt",
			args: []string{"--resume", "20261201-101010-abcd", "go", "on"},
			want: RunOptions{Prompt: "go on", OutputFormat: "text", InputFormat: "text", Resume: "20261201-101010-abcd"},
		},
		{name: "continue and resume", args: []string{"--continue", "--resume", "x", "hi"}, wantCode: cmdutil.ExitUsage, wantErr: "cannot be used together"},
		{name: "bad input format", args: []string{"--input-format", "xml", "hi"}, wantCode: cmdutil.ExitUsage, wantErr: `--input-format "xml"`},
		{name: "empty stdin", stdin: strings.NewReader(" \n\t"), wantCode: cmdutil.ExitUsage, wantErr: "no prompt"},
		{name: "blank argument", args: []string{"  "}, wantCode: cmdutil.ExitUsage, wantErr: "no prompt"},
		{name: "dash with empty stdin", args: []string{"-"}, stdin: strings.NewReader(""), wantCode: cmdutil.ExitUsage, wantErr: "no prompt"},
		{name: "unreadable stdin", stdin: failingReader{}, wantCode: cmdutil.ExitFailed, wantErr: "stdin broken"},
		{name: "bad output format", args: []string{"-o", "yaml", "hi"}, wantCode: cmdutil.ExitUsage, wantErr: `--output-format "yaml"`},
		{name: "negative max steps", args: []string{"--max-steps", "-1", "hi"}, wantCode: cmdutil.ExitUsage, wantErr: "--max-steps"},
		{name: "bad permission mode", args: []string{"--permission-mode", "sometimes", "hi"}, wantCode: cmdutil.ExitUsage, wantErr: "--permission-mode"},
		{name: "bad deny rule", args: []string{"--deny", "Bash(oops", "hi"}, wantCode: cmdutil.ExitUsage, wantErr: "--deny"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stdin := tt.stdin
			if stdin == nil {
				stdin = strings.NewReader("")
			}
			f := &cmdutil.Factory{Stdin: stdin, Stdout: io.Discard, Stderr: io.Discard}
			var got *RunOptions
			cmd := NewCmdRun(f, func(o *RunOptions) error { got = o; return nil })
			opts, ok := invoke(t, cmd, tt.args, &got, tt.wantCode, tt.wantErr)
			if !ok {
				return
			}
			want := tt.want
			if want.PermissionMode == "" {
				want.PermissionMode = "ask"
			}
			if !reflect.DeepEqual(opts, want) {
				t.Errorf("options = %+v, want %+v", opts, want)
			}
		})
	}
}

func TestRootFlagErrorsAreUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown flag on run", []string{"run", "--bogus", "hi"}, "unknown flag: --bogus"},
		{"bad flag value", []string{"run", "--max-steps", "many", "hi"}, "invalid argument"},
		{"unknown flag on doctor", []string{"doctor", "--bogus"}, "unknown flag: --bogus"},
		{"unknown flag on setup", []string{"setup", "--yes"}, "unknown flag: --yes"},
		{"unknown flag on config show", []string{"config", "show", "--bogus"}, "unknown flag: --bogus"},
		{"doctor in a missing directory", []string{"doctor", "--cwd", "/nonexistent/reasonix-test-dir"}, "--cwd"},
		{"unknown config command", []string{"config", "shwo"}, `unknown command "shwo"`},
		{"argument to setup", []string{"setup", "now"}, "unknown command"},
		{"unknown top-level command", []string{"rnu", "hi"}, `unknown command "rnu"`},
		{"argument to version", []string{"version", "extra"}, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, map[string]string{"REASONIX_HOME": t.TempDir()}, "", tt.args...)
			if r.code != cmdutil.ExitUsage {
				t.Errorf("exit code = %d (err %v), want %d", r.code, r.err, cmdutil.ExitUsage)
			}
			if !strings.Contains(r.stderr, tt.wantErr) {
				t.Errorf("stderr %q does not contain %q", r.stderr, tt.wantErr)
			}
		})
	}
}
