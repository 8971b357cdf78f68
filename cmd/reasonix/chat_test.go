package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/spf13/cobra"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/config"
)

// TestChatFlags parses bare reasonix's flags apart from the chat: the
// options the chat would get, or the usage error (exit 2) it fails with.
func TestChatFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		want     ChatOptions
		wantCode int
		wantErr  string
	}{
		{name: "bare", args: nil, want: ChatOptions{PermissionMode: "ask"}},
		{
			name: "every flag",
			args: []string{"-m", "fake/fake-model", "--permission-mode", "auto", "--config", "x.toml", "--cwd", "/tmp", "--resume", "20261201-101010-abcd"},
			want: ChatOptions{GlobalOptions: cmdutil.GlobalOptions{ConfigFile: "x.toml", Cwd: "/tmp"},
				Model: "fake/fake-model", PermissionMode: "auto", Resume: "20261201-101010-abcd"},
		},
		{name: "continue", args: []string{"-c", "--model", "fake"}, want: ChatOptions{Model: "fake", Continue: true, PermissionMode: "ask"}},
		{name: "continue and resume", args: []string{"--continue", "--resume", "x"}, wantCode: cmdutil.ExitUsage, wantErr: "--continue and --resume cannot be used together"},
		{name: "bad permission mode", args: []string{"--permission-mode", "sometimes"}, wantCode: cmdutil.ExitUsage, wantErr: `--permission-mode: approval posture "sometimes"`},
		{name: "a prompt is not a command", args: []string{"fix", "the", "bug"}, wantCode: cmdutil.ExitUsage, wantErr: `unknown command "fix"`},
		{name: "unknown flag", args: []string{"--max-steps", "3"}, wantCode: cmdutil.ExitUsage, wantErr: "unknown flag: --max-steps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &cmdutil.Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
			root := &cobra.Command{Use: "reasonix", SilenceUsage: true, SilenceErrors: true}
			root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &cmdutil.UsageError{Err: err} })
			var got *ChatOptions
			setupChat(root, f, func(o *ChatOptions) error { got = o; return nil })
			opts, ok := invoke(t, root, tt.args, &got, tt.wantCode, tt.wantErr)
			if ok && !reflect.DeepEqual(opts, tt.want) {
				t.Errorf("options = %+v, want %+v", opts, tt.want)
			}
		})
	}
}

// TestChatNeedsTerminal runs the real command tree without a terminal:
// bare reasonix refuses with exit 2 and points at `reasonix run`, flags
// are still checked first, and a subcommand is unaffected.
func TestChatNeedsTerminal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{name: "bare", wantCode: cmdutil.ExitUsage, want: "the chat needs a terminal"},
		{name: "with flags", args: []string{"-c", "-m", "fake"}, wantCode: cmdutil.ExitUsage, want: `reasonix run "…"`},
		{name: "bad flag first", args: []string{"--permission-mode", "never"}, wantCode: cmdutil.ExitUsage, want: "--permission-mode"},
		{name: "mistyped command", args: []string{"rnu"}, wantCode: cmdutil.ExitUsage, want: `unknown command "rnu"`},
		{name: "help still works", args: []string{"--help"}, wantCode: cmdutil.ExitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, map[string]string{"REASONIX_HOME": t.TempDir()}, "", tt.args...)
			if r.code != tt.wantCode {
				t.Fatalf("exit code = %d (err %v), want %d\nstderr: %s", r.code, r.err, tt.wantCode, r.stderr)
			}
			if tt.wantCode == cmdutil.ExitOK {
				if !strings.Contains(r.stdout, "--continue") || !strings.Contains(r.stdout, "Available Commands") {
					t.Errorf("help does not show the chat's flags and the commands:\n%s", r.stdout)
				}
				return
			}
			if !strings.Contains(r.stderr, tt.want) {
				t.Errorf("stderr %q does not contain %q", r.stderr, tt.want)
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
		})
	}
}

// TestIsTerminal checks the TTY rule on a real pseudo-terminal: both
// stdin and stdout must be one.
func TestIsTerminal(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no pseudo-terminals on windows")
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	tests := []struct {
		name string
		in   io.Reader
		out  io.Writer
		want bool
	}{
		{"both terminals", tty, tty, true},
		{"stdout piped", tty, pw, false},
		{"stdin piped", pr, tty, false},
		{"not files", strings.NewReader(""), io.Discard, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isTerminal(&cmdutil.Factory{Stdin: tt.in, Stdout: tt.out}); got != tt.want {
				t.Errorf("isTerminal = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestModelRefs(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Providers: []config.ProviderConfig{
		{Name: "deepseek", Models: []string{"deepseek-v4-flash", "deepseek-v4-pro"}},
		{Name: "local", Model: "qwen"},
		{Name: "empty"},
	}}
	want := []string{"deepseek/deepseek-v4-flash", "deepseek/deepseek-v4-pro", "local/qwen"}
	if got := modelRefs(cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("modelRefs = %q, want %q", got, want)
	}
}

// TestRunUntil drives the signal handling of the chat with signals sent
// on a channel: the chat's own end passes through, a signal cancels the
// chat's context and waits for it to close, and a chat that does not close
// is left behind after a second signal or the close timeout.
func TestRunUntil(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.DiscardHandler)
	boom := errors.New("boom")
	// stuck ignores its context until released, as a session that will
	// not close would.
	stuck := func(release <-chan struct{}) func(context.Context) error {
		return func(context.Context) error { <-release; return nil }
	}
	tests := []struct {
		name    string
		signals int
		timeout time.Duration
		// chat gets started, a channel closed once the chat runs.
		chat func(started chan<- struct{}, release <-chan struct{}) func(context.Context) error
		want error
	}{
		{name: "the chat ends by itself", chat: func(started chan<- struct{}, _ <-chan struct{}) func(context.Context) error {
			return func(context.Context) error { close(started); return boom }
		}, want: boom},
		{name: "a signal closes the chat", signals: 1, timeout: time.Hour, chat: func(started chan<- struct{}, _ <-chan struct{}) func(context.Context) error {
			return func(ctx context.Context) error { close(started); <-ctx.Done(); return ctx.Err() }
		}, want: cmdutil.ErrInterrupted},
		{name: "a second signal leaves a stuck chat", signals: 2, timeout: time.Hour, chat: func(started chan<- struct{}, release <-chan struct{}) func(context.Context) error {
			return func(ctx context.Context) error { close(started); return stuck(release)(ctx) }
		}, want: cmdutil.ErrInterrupted},
		{name: "the close timeout leaves a stuck chat", signals: 1, timeout: time.Millisecond, chat: func(started chan<- struct{}, release <-chan struct{}) func(context.Context) error {
			return func(ctx context.Context) error { close(started); return stuck(release)(ctx) }
		}, want: cmdutil.ErrInterrupted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			started, release := make(chan struct{}), make(chan struct{})
			defer close(release) // the stuck chat ends with the test
			sigs := make(chan os.Signal, 2)
			got := make(chan error, 1)
			go func() { got <- runUntil(logger, sigs, tt.timeout, tt.chat(started, release)) }()
			<-started
			for range tt.signals {
				sigs <- syscall.SIGTERM
			}
			select {
			case err := <-got:
				if !errors.Is(err, tt.want) {
					t.Errorf("runUntil = %v, want %v", err, tt.want)
				}
			case <-time.After(time.Minute):
				t.Fatal("runUntil did not return")
			}
		})
	}
}
