package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"reasonix/actors/event"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/cmd/reasonix/internal/fleetcmd"
	"reasonix/core/journal"
	"reasonix/scheduler"
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

// TestFleetStatusNamesWorkers: for a fleet whose tasks ran on worker
// hosts, `fleet status` says where each task's last attempt ran and which
// attempt that was, from the journal's start records.
func TestFleetStatusNamesWorkers(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	ctx := context.Background()
	j, err := journal.Open(ctx, e.home)
	if err != nil {
		t.Fatal(err)
	}
	const key = "s1/f1-1"
	sub := scheduler.Submission{Tasks: []scheduler.Task{{ID: "f1.1", Fleet: "f1"}, {ID: "f1.2", Fleet: "f1"}, {ID: "f1.3", Fleet: "f1"}}}
	for _, id := range []string{"f1.1", "f1.2", "f1.3"} {
		b, _ := json.Marshal(event.TaskSpec{ID: id, Prompt: "do " + id})
		sub.Specs = append(sub.Specs, b)
	}
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	recs := []journal.Record{
		{Kind: journal.KindSubmit, Data: raw(sub)},
		{Kind: journal.KindStart, Task: "f1.1", Data: raw(map[string]any{"worker": "w1"})},
		{Kind: journal.KindStart, Task: "f1.2"},
		{Kind: journal.KindStart, Task: "f1.3", Data: raw(map[string]any{"worker": "w1"})},
		{Kind: journal.KindRequeue, Task: "f1.3", Data: raw(map[string]any{"worker": "w1", "attempt": 2, "why": "worker w1 lost"})},
		{Kind: journal.KindStart, Task: "f1.3", Data: raw(map[string]any{"worker": "w2", "attempt": 2})},
	}
	for _, r := range recs {
		r.Fleet, r.At = key, time.Now()
		if _, err := j.Append(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	must(t, j.Close())

	r := e.run("fleet", "status", key, "--json")
	var st fleetcmd.FleetStatusJSON
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil || len(st.Tasks) != 3 {
		t.Fatalf("fleet status --json:\n%s", r)
	}
	want := []struct {
		worker  string
		attempt int
	}{{"w1", 0}, {"", 0}, {"w2", 2}}
	for i, w := range want {
		if got := st.Tasks[i]; got.Worker != w.worker || got.Attempt != w.attempt || got.State != "running" {
			t.Errorf("task %d = %+v, want running on %q attempt %d", i, got, w.worker, w.attempt)
		}
	}
	r = e.run("fleet", "status", key)
	if r.code != 0 || !strings.Contains(r.stdout, "WORKER") || !regexp.MustCompile(`f1\.3\s+running\s+0\s+w2\s+2\s`).MatchString(r.stdout) ||
		!regexp.MustCompile(`f1\.2\s+running\s+0\s+-\s+1\s`).MatchString(r.stdout) {
		t.Errorf("fleet status:\n%s", r)
	}
}
