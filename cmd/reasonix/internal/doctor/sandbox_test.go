package doctor

import (
	"errors"
	"strings"
	"testing"

	"reasonix/core/config"
)

func TestDoctorSandbox(t *testing.T) {
	t.Parallel()
	found := func(program string) (string, error) { return "/usr/bin/" + program, nil }
	missing := func(string) (string, error) { return "", errors.New("not found") }
	tests := []struct {
		name        string
		goos        string
		mode        string
		network     bool
		noConfig    bool
		lookPath    func(string) (string, error)
		wantProgram string
		wantStatus  CheckStatus
		want        []string
	}{
		{"linux enforce with bwrap", "linux", "enforce", false, false, found, "bwrap", CheckOK, []string{`bash = "enforce", network = false`, "confined by /usr/bin/bwrap"}},
		{"linux enforce without bwrap", "linux", "enforce", false, false, missing, "bwrap", CheckWarn, []string{"bwrap was not found", "apt install bubblewrap", `[sandbox] bash = "off"`}},
		{"linux off without bwrap", "linux", "off", false, false, missing, "bwrap", CheckOK, []string{`bash = "off"`, "unconfined", "bwrap not found"}},
		{"linux off with bwrap", "linux", "off", true, false, found, "bwrap", CheckOK, []string{"network = true", "unconfined"}},
		{"no config assumes enforce", "linux", "", false, true, missing, "bwrap", CheckWarn, []string{`bash = "enforce"`}},
		{"macos enforce", "darwin", "enforce", false, false, found, "sandbox-exec", CheckOK, []string{"confined by /usr/bin/sandbox-exec"}},
		{"windows enforce is ignored", "windows", "enforce", false, false, nil, "", CheckWarn, []string{"unconfined"}},
		{"windows off", "windows", "off", false, false, nil, "", CheckOK, []string{"unconfined"}},
		{"unsupported platform", "plan9", "enforce", false, false, nil, "", CheckWarn, []string{"no shell sandbox on plan9"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var asked []string
			opts := &DoctorOptions{Goos: tt.goos, LookPath: func(p string) (string, error) {
				asked = append(asked, p)
				if tt.lookPath == nil {
					t.Errorf("looked up %q on %s", p, tt.goos)
					return "", errors.New("unexpected")
				}
				return tt.lookPath(p)
			}}
			d := &Doctor{Opts: opts}
			if !tt.noConfig {
				d.Cfg = &config.Config{Sandbox: config.Sandbox{Bash: tt.mode, Network: tt.network}}
			}
			c := d.CheckSandbox()
			if c.Status != tt.wantStatus {
				t.Errorf("status = %s, want %s (%s)", c.Status, tt.wantStatus, c.Detail)
			}
			text := c.Detail + "\n" + strings.Join(c.Notes, "\n")
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("%q does not contain %q", text, w)
				}
			}
			if tt.wantProgram != "" && (len(asked) != 1 || asked[0] != tt.wantProgram) {
				t.Errorf("looked up %q, want [%s]", asked, tt.wantProgram)
			}
		})
	}
}
