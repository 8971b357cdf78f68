package main

import (
	"bytes"
	"errors"
	"testing"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/cmd/reasonix/internal/fleetcmd"
)

func TestFleetCommandFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		args  []string
		usage bool
		want  fleetcmd.FleetOptions
	}{
		{name: "list", args: []string{"list", "--json"}, want: fleetcmd.FleetOptions{Action: "list", JSON: true}},
		{name: "status", args: []string{"status", "s1/f1-1"}, want: fleetcmd.FleetOptions{Action: "status", ID: "s1/f1-1"}},
		{name: "status needs an id", args: []string{"status"}, usage: true},
		{name: "resume", args: []string{"resume", "--running", "fail", "s1/f1-1"}, want: fleetcmd.FleetOptions{Action: "resume", ID: "s1/f1-1", Running: "fail"}},
		{name: "resume bad policy", args: []string{"resume", "--running", "maybe", "x"}, usage: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got *fleetcmd.FleetOptions
			f := &cmdutil.Factory{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
			cmd := fleetcmd.NewCmdFleet(f, func(o *fleetcmd.FleetOptions) error { got = o; return nil })
			cmd.SetArgs(tc.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			var ue *cmdutil.UsageError
			if tc.usage {
				if !errors.As(err, &ue) {
					t.Fatalf("err = %v, want a usage error", err)
				}
				return
			}
			if err != nil || got == nil {
				t.Fatalf("err = %v, got = %v", err, got)
			}
			if got.Action != tc.want.Action || got.ID != tc.want.ID || got.JSON != tc.want.JSON || got.Running != tc.want.Running {
				t.Errorf("options = %+v, want %+v", *got, tc.want)
			}
		})
	}
}
