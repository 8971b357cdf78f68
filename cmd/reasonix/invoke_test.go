package main

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"reasonix/cmd/reasonix/internal/cmdutil"
)

// invoke runs cmd with args, its action replaced by one that stores the
// options in *got, and checks the exit code. For an invocation meant to
// fail it checks that the error says wantErr and that the action never
// ran, and reports false; otherwise it returns the options the action got.
func invoke[T any](t *testing.T, cmd *cobra.Command, args []string, got **T, wantCode int, wantErr string) (T, bool) {
	t.Helper()
	var zero T
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.Execute()
	if code := cmdutil.ExitCode(err); code != wantCode {
		t.Fatalf("exit code = %d (err %v), want %d", code, err, wantCode)
	}
	if wantCode != cmdutil.ExitOK {
		if !strings.Contains(fmt.Sprint(err), wantErr) {
			t.Errorf("error %q does not contain %q", err, wantErr)
		}
		if *got != nil {
			t.Errorf("the action ran with %+v after a bad invocation", **got)
		}
		return zero, false
	}
	if *got == nil {
		t.Fatal("the action did not run")
	}
	return **got, true
}
