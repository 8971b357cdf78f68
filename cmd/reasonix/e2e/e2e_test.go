package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"reasonix/core/provider/providertest"
)

// e2eBinary is the reasonix binary TestMain builds from the package one
// directory up (cmd/reasonix), with the reasonix_e2e tag, which adds the
// test-only tools of e2e_tools.go and e2e_tools_sleep.go there.
var e2eBinary string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "reasonix-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	e2eBinary = filepath.Join(dir, "reasonix")
	if runtime.GOOS == "windows" {
		e2eBinary += ".exe"
	}
	build := exec.Command("go", "build", "-tags", "reasonix_e2e", "-o", e2eBinary, "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build reasonix for e2e tests: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// e2e is one isolated reasonix home and workspace wired to a model fake.
type e2e struct {
	t    testing.TB
	srv  *providertest.Server
	home string
	work string
	env  []string
}

const e2eKey = "sk-e2e-test"

func newE2E(t testing.TB, opts ...providertest.Option) *e2e {
	t.Helper()
	srv := providertest.Start(t, append([]providertest.Option{providertest.WithAPIKey(e2eKey)}, opts...)...)
	e := &e2e{t: t, srv: srv, home: t.TempDir(), work: t.TempDir()}
	e.writeConfig("")
	e.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + e.home,
		"REASONIX_HOME=" + e.home,
		"FAKE_API_KEY=" + e2eKey,
	}
	return e
}

// writeConfig writes the user config: the fake provider plus extra TOML.
func (e *e2e) writeConfig(extra string) {
	e.t.Helper()
	cfg := fmt.Sprintf(`default_model = "fake"

[[providers]]
name = "fake"
kind = "openai"
base_url = %q
model = "fake-model"
api_key_env = "FAKE_API_KEY"
context_window = 128000
%s`, e.srv.URL(), extra)
	if err := os.WriteFile(filepath.Join(e.home, "config.toml"), []byte(cfg), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s\n--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// command prepares the binary with args in the workspace.
func (e *e2e) command(ctx context.Context, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, e2eBinary, args...)
	cmd.Dir = e.work
	cmd.Env = e.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

// run executes the binary to completion (bounded at a minute).
func (e *e2e) run(args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, stdout, stderr := e.command(ctx, args...)
	err := cmd.Run()
	return result{stdout: stdout.String(), stderr: stderr.String(), code: exitStatus(e.t, err)}
}

func exitStatus(t testing.TB, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	t.Fatalf("run reasonix: %v", err)
	return -1
}

// transcripts lists the session files written under the home.
func (e *e2e) transcripts() []string {
	e.t.Helper()
	files, err := filepath.Glob(filepath.Join(e.home, "projects", "*", "sessions", "*.jsonl"))
	if err != nil {
		e.t.Fatal(err)
	}
	return files
}

func TestE2EPlainAnswer(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(providertest.Turn{Text: "Forty-two."})
	r := e.run("run", "what is the answer?")
	if r.code != 0 || r.stdout != "Forty-two.\n" {
		t.Fatalf("unexpected result:\n%s", r)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 1 || reqs[0].LastUser() != "what is the answer?" || reqs[0].Model != "fake-model" {
		t.Fatalf("requests = %+v", reqs)
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+e2eKey {
		t.Errorf("authorization header = %q", got)
	}
	if ts := e.transcripts(); len(ts) != 1 {
		t.Errorf("transcripts = %v", ts)
	}
}

func TestE2EPromptFromStdin(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(providertest.Turn{Text: "ok"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, stdout, stderr := e.command(ctx, "run", "--output-format", "json")
	cmd.Stdin = strings.NewReader("from stdin\n")
	code := exitStatus(t, cmd.Run())
	if code != 0 || !strings.Contains(stdout.String(), `"status":"ok"`) || !strings.Contains(stdout.String(), `"text":"ok"`) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if got := e.srv.Requests()[0].LastUser(); got != "from stdin" {
		t.Errorf("prompt = %q", got)
	}
}

func TestE2EMissingKeyFailsFast(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "REASONIX_HOME=" + e.home}
	r := e.run("run", "hello")
	if r.code != 2 || !strings.Contains(r.stderr, "FAKE_API_KEY") || !strings.Contains(r.stderr, "reasonix setup") {
		t.Fatalf("unexpected result:\n%s", r)
	}
	if e.srv.Count() != 0 {
		t.Error("a request was sent without a key")
	}
}
