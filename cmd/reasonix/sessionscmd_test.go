package main

import (
	"io"
	"strings"
	"testing"

	"reasonix/cmd/reasonix/internal/cmdutil"
)

func TestSessionsListFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		want     SessionsListOptions
		wantCode int
	}{
		{"defaults", []string{"list"}, SessionsListOptions{}, cmdutil.ExitOK},
		{"json", []string{"list", "--json"}, SessionsListOptions{JSON: true}, cmdutil.ExitOK},
		{"config and cwd", []string{"list", "--config", "a.toml", "--cwd", "/w"},
			SessionsListOptions{GlobalOptions: cmdutil.GlobalOptions{ConfigFile: "a.toml", Cwd: "/w"}}, cmdutil.ExitOK},
		{"positional argument", []string{"list", "extra"}, SessionsListOptions{}, cmdutil.ExitUsage},
		{"unknown subcommand", []string{"lsit"}, SessionsListOptions{}, cmdutil.ExitUsage},
		{"unknown flag", []string{"list", "--yaml"}, SessionsListOptions{}, cmdutil.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &cmdutil.Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
			var got *SessionsListOptions
			root := NewCmdRoot(f)
			// The real root, for its flag-error handling, with the
			// sessions command swapped for one that records its options.
			old, _, err := root.Find([]string{"sessions"})
			if err != nil || old.Name() != "sessions" {
				t.Fatalf("root has no sessions command: %v", err)
			}
			root.RemoveCommand(old)
			root.AddCommand(NewCmdSessions(f, func(o *SessionsListOptions) error { got = o; return nil }))
			root.SetArgs(append([]string{"sessions"}, tt.args...))
			err = root.Execute()
			if code := cmdutil.ExitCode(err); code != tt.wantCode {
				t.Fatalf("exit code = %d (err %v), want %d", code, err, tt.wantCode)
			}
			if tt.wantCode != cmdutil.ExitOK {
				return
			}
			if got == nil || *got != tt.want {
				t.Errorf("options = %+v, want %+v", got, tt.want)
			}
		})
	}
}
