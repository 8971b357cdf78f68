package testenv

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records a skip or a failure instead of
// ending the calling goroutine.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Skip(args ...any) { r.skipped = fmt.Sprint(args...) }

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestNeed(t *testing.T) {
	tests := []struct {
		name        string
		strict      string
		program     string
		wantPath    bool
		wantSkip    string
		wantFailure string
	}{
		{name: "present", program: "go", wantPath: true},
		{name: "missing skips", program: "bwrap", wantSkip: "apt install bubblewrap"},
		{name: "missing fails under strict", strict: "1", program: "rg", wantFailure: "apt install ripgrep"},
		{name: "only 1 is strict", strict: "true", program: "node", wantSkip: "apt install nodejs"},
		{name: "unknown program names itself", program: "reasonix-no-such-tool", wantSkip: "apt install reasonix-no-such-tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(StrictEnv, tt.strict)
			if !tt.wantPath {
				// An empty PATH hides every program, whatever this machine has.
				t.Setenv("PATH", "")
			}
			r := &recorder{TB: t}
			path := Need(r, tt.program)
			if tt.wantPath != (path != "") {
				t.Errorf("path = %q, want one: %t", path, tt.wantPath)
			}
			if !strings.Contains(r.skipped, tt.wantSkip) || (tt.wantSkip == "") != (r.skipped == "") {
				t.Errorf("skipped with %q, want %q", r.skipped, tt.wantSkip)
			}
			if !strings.Contains(r.failed, tt.wantFailure) || (tt.wantFailure == "") != (r.failed == "") {
				t.Errorf("failed with %q, want %q", r.failed, tt.wantFailure)
			}
		})
	}
}
