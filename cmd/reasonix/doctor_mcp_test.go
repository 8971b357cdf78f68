package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"reasonix/core/config"
	"reasonix/core/provider/providertest"
	"reasonix/core/testenv"
)

// TestDoctorMCP: doctor starts each configured MCP server and reports a
// ready one with its tool count and start time, and one that fails to
// start with the last line it wrote to stderr; the failure fails doctor.
func TestDoctorMCP(t *testing.T) {
	t.Parallel()
	testenv.Need(t, "sh")
	home, cwd := t.TempDir(), t.TempDir()
	url := providertest.Start(t, providertest.WithModels("fake-model")).URL()
	user := fmt.Sprintf(`default_model = "fake"

[[providers]]
name = "fake"
kind = "openai"
base_url = %q
models = ["fake-model"]

[sandbox]
bash = "off"

[[plugins]]
name = "good"
command = %q

[[plugins]]
name = "broken"
command = "sh"
args = ["-c", "echo starting >&2; echo cannot open /var/db/broken.db >&2; exit 3"]

[[plugins]]
name = "resting"
command = "true"
disabled = true
`, url, pluginBinary(t))
	testenv.WriteFile(t, config.UserConfigPath(home), user, 0o600)
	r := runCLI(t, map[string]string{"REASONIX_HOME": home}, "", "doctor", "--cwd", cwd)
	if r.code != 1 {
		t.Fatalf("exit code %d, want 1 (a server failed)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var good, broken, resting string
	for _, l := range strings.Split(r.stdout, "\n") {
		switch {
		case strings.Contains(l, " good (user)"):
			good = l
		case strings.Contains(l, " broken (user)"):
			broken = l
		case strings.Contains(l, " resting (user)"):
			resting = l
		}
	}
	if !regexp.MustCompile(`^ok +mcp +good \(user\): ready, [1-9][0-9]* tools, started in [0-9]+ ms$`).MatchString(good) {
		t.Errorf("the ready server: %q\n%s", good, r.stdout)
	}
	if !strings.HasPrefix(broken, "FAIL") || !strings.Contains(broken, "cannot open /var/db/broken.db") || !strings.Contains(broken, "exit status 3") {
		t.Errorf("the server that fails to start: %q\n%s", broken, r.stdout)
	}
	if !strings.HasPrefix(resting, "skip") || !strings.Contains(resting, "disabled") {
		t.Errorf("the disabled server: %q", resting)
	}
}
