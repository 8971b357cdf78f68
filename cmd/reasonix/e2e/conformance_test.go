//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"reasonix/core/mcp/mcptest"
)

// conformancePasses are the client scenarios of the pinned MCP conformance
// suite that reasonix passes, driven through `reasonix mcp` by
// testdata/conformance-client.sh. docs/SPEC.md lists them too.
var conformancePasses = []string{
	"initialize",
	"tools_call",
	"elicitation-sep1034-client-defaults",
	"sse-retry",
	"auth/metadata-default",
	"auth/metadata-var1",
	"auth/metadata-var2",
	"auth/metadata-var3",
	"auth/basic-cimd",
	"auth/scope-from-www-authenticate",
	"auth/scope-from-scopes-supported",
	"auth/scope-omitted-when-undefined",
	"auth/scope-step-up",
	"auth/scope-retry-limit",
	"auth/token-endpoint-auth-basic",
	"auth/token-endpoint-auth-post",
	"auth/token-endpoint-auth-none",
	"auth/pre-registration",
	"auth/2025-03-26-oauth-endpoint-fallback",
	"auth/2025-03-26-oauth-metadata-backcompat",
	"auth/resource-mismatch",
	"auth/offline-access-scope",
	"auth/offline-access-not-supported",
	"auth/client-credentials-basic",
	"auth/client-credentials-jwt",
	"auth/cross-app-access-complete-flow",
}

// conformanceGaps are the scenarios left, with why. Each is still run: one
// that starts passing fails the test until it moves to conformancePasses.
// None is left today.
var conformanceGaps = map[string]string{}

// conformanceScenarios is how many client scenarios the pinned suite
// (0.1.16) has; the test checks the suite's own list against it and
// against conformancePasses and conformanceGaps, so none goes unrun.
const conformanceScenarios = 26

// TestMCPConformance runs the official client conformance suite against
// `reasonix mcp`, one scenario at a time, each with its own reasonix home.
func TestMCPConformance(t *testing.T) {
	t.Parallel()
	node, cli := mcptest.Conformance(t)
	script, err := filepath.Abs(filepath.Join("testdata", "conformance-client.sh"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, scenario string) (bool, string) {
		home, out := t.TempDir(), t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, cli, "client", "--command", script, "--scenario", scenario, "--timeout", "30000", "-o", out)
		cmd.Env = append(os.Environ(), "REASONIX_BIN="+e2eBinary, "REASONIX_HOME="+home)
		// The suite signals only its shell: a group of its own lets the
		// deadline take everything down.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		log, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("%s: suite did not finish: %v\n%s", scenario, ctx.Err(), log)
		}
		return err == nil, string(log) + failedChecks(t, out)
	}
	listed := suiteScenarios(t, node, cli)
	if len(listed) != conformanceScenarios || len(conformancePasses)+len(conformanceGaps) != conformanceScenarios {
		t.Errorf("the suite lists %d client scenarios, this test knows %d passes and %d gaps; want %d in each",
			len(listed), len(conformancePasses), len(conformanceGaps), conformanceScenarios)
	}
	for _, s := range listed {
		if _, gap := conformanceGaps[s]; !gap && !slices.Contains(conformancePasses, s) {
			t.Errorf("scenario %s is neither a pass nor a gap here", s)
		}
	}
	for _, s := range conformancePasses {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			if ok, log := run(t, s); !ok {
				t.Errorf("scenario %s failed:\n%s", s, log)
			}
		})
	}
	for s, why := range conformanceGaps {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			if ok, _ := run(t, s); ok {
				t.Errorf("scenario %s passes now (it was left because %s): move it to conformancePasses and docs/SPEC.md", s, why)
			}
		})
	}
}

// suiteScenarios are the client scenarios the suite lists
// ("  - name [versions]" lines of `list --client`).
func suiteScenarios(t *testing.T, node, cli string) []string {
	t.Helper()
	out, err := exec.Command(node, cli, "list", "--client").CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list --client: %v\n%s", err, out)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
			names = append(names, strings.Fields(rest)[0])
		}
	}
	return names
}

// failedChecks summarises the failed and warning checks the suite wrote
// under dir, with the client's stderr.
func failedChecks(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	more, _ := filepath.Glob(filepath.Join(dir, "*", "*", "checks.json"))
	for _, f := range append(files, more...) {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var checks []struct {
			ID, Status, ErrorMessage string
		}
		_ = json.Unmarshal(data, &checks)
		for _, c := range checks {
			if c.Status == "FAILURE" || c.Status == "WARNING" {
				b.WriteString(c.Status + " " + c.ID + ": " + c.ErrorMessage + "\n")
			}
		}
		if stderr, err := os.ReadFile(filepath.Join(filepath.Dir(f), "stderr.txt")); err == nil {
			b.WriteString("client stderr:\n" + string(stderr))
		}
	}
	return b.String()
}
