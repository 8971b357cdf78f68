package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"reasonix/core/testenv"
)

// The browser tests drive the page in a real headless Chromium through the
// DevTools protocol. Every wait is on a DOM condition with a deadline;
// screenshots of each step go to $REASONIX_TEST_ARTIFACTS/<test> (or a
// temporary directory) and their paths are logged.

// browserWait bounds one wait for the page; the machine is shared and slow.
const browserWait = 60 * time.Second

// browser is one headless Chromium with one tab, owned by a test.
type browserTab struct {
	t         *testing.T
	ctx       context.Context // the tab's chromedp context
	artifacts string
	shots     int

	mu         sync.Mutex
	exceptions []string // uncaught page exceptions, in order
}

// newBrowserTab starts Chromium for t; t.Cleanup closes it and waits for it.
func newBrowserTab(t *testing.T) *browserTab {
	t.Helper()
	exe := testenv.Need(t, "chromium")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")),
		chromedp.WindowSize(1400, 900),
	)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(func(string, ...any) {}))
	b := &browserTab{t: t, ctx: ctx, artifacts: browserArtifactDir(t)}
	// The first action starts the browser; it must not carry a timeout, which
	// would stop the browser with it.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		cancel()
		acancel()
		t.Fatalf("start chromium: %v", err)
	}
	exceptions := chromedp.Events(ctx, runtime.ExceptionThrown)
	// Console errors and the browser's own error entries (a CSP
	// violation, a deprecated feature) count as the page's errors; a
	// refused request (a 401 a test asks for) is the test's business.
	consoleErrs := chromedp.Events(ctx, runtime.ConsoleAPICalled)
	entries := chromedp.Events(ctx, cdplog.EntryAdded)
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("enable the browser log: %v", err)
	}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		for ev, err := range consoleErrs {
			if err != nil {
				return
			}
			if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
				continue
			}
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, strings.Trim(string(a.Value), `"`)+a.Description)
			}
			b.mu.Lock()
			b.exceptions = append(b.exceptions, "console."+string(ev.Type)+": "+strings.Join(parts, " "))
			b.mu.Unlock()
		}
	}()
	go func() {
		defer wg.Done()
		for ev, err := range entries {
			if err != nil {
				return
			}
			if e := ev.Entry; e != nil && e.Level == cdplog.EntryLevelError && e.Source != cdplog.EntrySourceNetwork {
				b.mu.Lock()
				b.exceptions = append(b.exceptions, fmt.Sprintf("browser %s error: %s (%s)", e.Source, e.Text, e.URL))
				b.mu.Unlock()
			}
		}
	}()
	go func() {
		defer wg.Done()
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.exceptions = append(b.exceptions, pageExceptionText(ev.ExceptionDetails))
			b.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
		defer ccancel()
		_ = chromedp.Cancel(cctx)
		cancel()
		acancel()
		wg.Wait()
	})
	return b
}

func pageExceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "exception"
	}
	s := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		s += " " + d.Exception.Description
	}
	return fmt.Sprintf("%s (%s:%d)", s, d.URL, d.LineNumber+1)
}

// noExceptions fails the test when the page threw anything uncaught, wrote
// an error to the console or made the browser log one (a blocked inline
// style, say).
func (b *browserTab) noExceptions() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.exceptions) > 0 {
		b.t.Errorf("the page threw:\n%s", strings.Join(b.exceptions, "\n"))
	}
}

// browserArtifactDir is where a test's screenshots go.
func browserArtifactDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("REASONIX_TEST_ARTIFACTS")
	if root == "" {
		return t.TempDir()
	}
	dir := filepath.Join(root, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("artifacts: %v", err)
	}
	return dir
}

// do runs steps with the wait deadline, failing the test with what.
func (b *browserTab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserWait)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.shot("failed-" + what)
		b.t.Fatalf("%s: %v\npage text:\n%s", what, err, b.text())
	}
}

// waitJS waits until expr is truthy in the page.
func (b *browserTab) waitJS(what, expr string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserWait+5*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(browserWait), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		b.shot("failed-" + what)
		b.t.Fatalf("waiting for %s (%s): %v\npage text:\n%s", what, expr, err, b.text())
	}
}

// text is what the page shows, for a failure's message.
func (b *browserTab) text() string {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return s
}

// eval evaluates expr in the page and decodes its value into T.
func pageEval[T any](b *browserTab, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserWait)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// shot saves a full-page screenshot named after the step and logs its path.
func (b *browserTab) shot(step string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot %s: %v", step, err)
		return
	}
	b.shots++
	path := filepath.Join(b.artifacts, fmt.Sprintf("%02d-%s.png", b.shots, strings.NewReplacer("/", "_", " ", "-").Replace(step)))
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		b.t.Errorf("screenshot %s: %v", step, err)
		return
	}
	b.t.Logf("screenshot: %s", path)
}

// sel quotes s as a CSS attribute value.
func cssString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// jsLiteral quotes s as a JavaScript string literal.
func jsLiteral(s string) string {
	return "`" + strings.NewReplacer("\\", "\\\\", "`", "\\`", "$", "\\$").Replace(s) + "`"
}

// browserServer is a running `reasonix serve`.
type browserServer struct {
	url   string // the root URL, without a token
	token string
	cmd   *exec.Cmd

	mu  sync.Mutex
	out strings.Builder // everything it printed
}

func (s *browserServer) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// browserListenRE finds the URL the server prints when it is ready.
var browserListenRE = regexp.MustCompile(`https?://[^\s"'<>]+`)

// browserServe starts the binary as a server on a free loopback port of
// e's workspace and waits for the address it prints: token-protected with a
// known token, or with the auth flags given. t.Cleanup interrupts it (it
// saves transcripts on the way out) and kills it if it does not stop.
func (e *e2e) browserServe(t *testing.T, auth ...string) *browserServer {
	t.Helper()
	token := ""
	if len(auth) == 0 {
		token = "browser-test-token-0123456789"
		auth = []string{"--auth", "token", "--token", token}
	}
	args := append([]string{"serve", "--addr", "127.0.0.1:0"}, auth...)
	cmd := exec.Command(e2eBinary, args...)
	cmd.Dir = e.work
	cmd.Env = e.env
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("start serve: %v", err)
	}
	s := &browserServer{token: token, cmd: cmd}
	found := make(chan string, 1)
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.out.WriteString(line + "\n")
			s.mu.Unlock()
			if u := browserListenRE.FindString(line); u != "" && !sent && (strings.Contains(strings.ToLower(line), "listen") || strings.Contains(u, "token=") || strings.Contains(strings.ToLower(line), "serving")) {
				found <- u
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		_ = pw.Close()
		exited <- err
	}()
	stopped := false
	var exitErr error
	t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Signal(os.Interrupt)
			select {
			case exitErr = <-exited:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				exitErr = <-exited
				t.Errorf("serve did not stop within 15 s of an interrupt; killed")
			}
		}
		readers.Wait()
		if t.Failed() {
			t.Logf("serve output:\n%s", s.output())
		}
		var ee *exec.ExitError
		if exitErr != nil && !errors.As(exitErr, &ee) {
			t.Logf("serve: %v", exitErr)
		}
	})
	select {
	case u := <-found:
		if i := strings.Index(u, "?"); i >= 0 {
			u = u[:i]
		}
		s.url = strings.TrimSuffix(u, "/")
	case exitErr = <-exited:
		stopped = true
		t.Fatalf("serve exited before it listened: %v\n%s", exitErr, s.output())
	case <-time.After(60 * time.Second):
		t.Fatalf("serve printed no address within a minute:\n%s", s.output())
	}
	return s
}
