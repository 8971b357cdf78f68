package config

import (
	"strings"
	"testing"
)

// TestAgentMaxSteps: agent.max_steps is a live key with a generous default,
// 0 turns the guard off, a negative value is refused, and an untrusted
// project may only make the guard stricter.
func TestAgentMaxSteps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		l       layout
		want    int
		held    bool
		problem string
	}{
		{name: "default", l: layout{}, want: 200},
		{name: "user sets it", l: layout{user: "[agent]\nmax_steps = 50\n"}, want: 50},
		{name: "zero turns it off", l: layout{user: "[agent]\nmax_steps = 0\n"}, want: 0},
		{name: "negative", l: layout{user: "[agent]\nmax_steps = -1\n"}, problem: "agent.max_steps"},
		{name: "untrusted project tightens", l: layout{project: "[agent]\nmax_steps = 20\n"}, want: 20},
		{name: "untrusted project raises", l: layout{project: "[agent]\nmax_steps = 5000\n"}, want: 200, held: true},
		{name: "untrusted project turns it off", l: layout{project: "[agent]\nmax_steps = 0\n"}, want: 200, held: true},
		{name: "trusted project turns it off", l: layout{project: "[agent]\nmax_steps = 0\n", trusted: true}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, opts := writeLayout(t, tt.l)
			c, err := Load(opts)
			if tt.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tt.problem) {
					t.Fatalf("Load error %v, want one naming %s", err, tt.problem)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if c.Agent.MaxSteps != tt.want {
				t.Errorf("agent.max_steps = %d, want %d", c.Agent.MaxSteps, tt.want)
			}
			held := false
			for _, k := range c.Untrusted {
				held = held || k == "agent.max_steps"
			}
			if held != tt.held {
				t.Errorf("held back = %v, want %v (untrusted %v)", held, tt.held, c.Untrusted)
			}
			for _, w := range c.Warnings {
				if strings.Contains(w, "max_steps") {
					t.Errorf("warning %q (%s)", w, f.user)
				}
			}
		})
	}
}
