package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/provider/providertest"
)

func TestE2EServeRefusesPublicBindWithoutAuth(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.run("serve", "--addr", "0.0.0.0:0")
	if r.code != cmdutil.ExitUsage || !strings.Contains(r.stderr, "without authentication") || !strings.Contains(r.stderr, "--auth token") {
		t.Fatalf("public bind without auth:\n%s", r)
	}
	if strings.Contains(r.stdout, "listening") {
		t.Fatal("it listened anyway")
	}
}

var (
	listeningRe = regexp.MustCompile(`listening on http://([^/ ]+)/`)
	openRe      = regexp.MustCompile(`open (http://\S+/\?token=([0-9a-f]+))`)
)

// TestE2EServe starts the real binary in token mode on a free port, opens
// the printed address as a browser would, runs a turn over the API and
// stops the server with SIGINT.
func TestE2EServe(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Push(providertest.Turn{Text: "served answer"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sp := startServe(ctx, t, e, "--addr", "127.0.0.1:0", "--auth", "token")
	addr, url, token, cmd, exited, stderr := sp.addr, sp.url, sp.token, sp.cmd, sp.exited, sp.stderr
	if strings.HasSuffix(addr, ":0") || !strings.HasPrefix(url, "http://"+addr+"/") {
		t.Fatalf("printed %q and %q", addr, url)
	}
	base := "http://" + addr
	client := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{DisableKeepAlives: true},
		Timeout:       time.Minute,
	}
	do := func(method, path, body string, hdr ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", base)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	if resp := do("GET", "/api/sessions", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the token: %d", resp.StatusCode)
	}
	resp := do("GET", strings.TrimPrefix(url, base), "")
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("opening the printed address: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookie string
	for _, c := range resp.Cookies() {
		if c.Name == "reasonix_auth" && c.HttpOnly {
			cookie = c.Name + "=" + c.Value
		}
	}
	if cookie == "" || strings.Contains(cookie, token) {
		t.Fatalf("cookie %q", cookie)
	}
	resp = do("POST", "/api/sessions", "{}", "Cookie", cookie)
	var opened struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&opened); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("open session: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	events := do("GET", "/api/sessions/"+opened.ID+"/events?since=0", "", "Authorization", "Bearer "+token)
	defer events.Body.Close()
	if events.StatusCode != http.StatusOK {
		t.Fatalf("events: %d", events.StatusCode)
	}
	resp = do("POST", "/api/sessions/"+opened.ID+"/commands", `{"type":"prompt","text":"hello server"}`, "Cookie", cookie)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("prompt: %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(events.Body)
	var answer string
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct{ Type, Text string }
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		if ev.Type == "turn_done" {
			answer = ev.Text
			break
		}
	}
	if answer != "served answer" {
		t.Fatalf("turn_done text %q", answer)
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// The stream ends with the session, closed by the shutdown.
	var closed bool
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"type":"session_closed"`) {
			closed = true
		}
	}
	if !closed {
		t.Error("the event stream ended without session_closed")
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("serve after SIGINT: %v\n%s", err, stderr)
		}
	case <-ctx.Done():
		t.Fatal("serve did not stop after SIGINT")
	}
	if ts := e.transcripts(); len(ts) != 1 {
		t.Fatalf("transcripts %v", ts)
	}
	data, err := os.ReadFile(e.transcripts()[0])
	if err != nil || !bytes.Contains(data, []byte("served answer")) {
		t.Fatalf("transcript does not hold the answer: %v", err)
	}
}

// served is a `reasonix serve` process started by a test.
type served struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	exited chan error
	// addr is the address it printed it listens on; url and token the
	// address to open in token mode.
	addr, url, token string
}

// startServe starts the binary with serve and args and waits for it to
// print its address (and, when wantURL, the token URL). It is killed at
// the end of the test if it is still running.
func startServe(ctx context.Context, t *testing.T, e *e2e, args ...string) *served {
	t.Helper()
	cmd, _, stderr := e.command(ctx, append([]string{"serve"}, args...)...)
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sp := &served{cmd: cmd, stderr: stderr, exited: make(chan error, 1)}
	go func() { sp.exited <- cmd.Wait(); pw.Close() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	wantURL := slices.Contains(args, "token")
	for sp.addr == "" || (wantURL && sp.url == "") {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("serve ended before printing its address; stderr:\n%s", stderr)
			}
			if m := listeningRe.FindStringSubmatch(line); m != nil {
				sp.addr = m[1]
			}
			if m := openRe.FindStringSubmatch(line); m != nil {
				sp.url, sp.token = m[1], m[2]
			}
		case <-ctx.Done():
			t.Fatalf("no address printed; stderr:\n%s", stderr)
		}
	}
	// The rest of stdout is drained so the process never blocks on it.
	go func() {
		for range lines {
		}
	}()
	return sp
}

// TestE2EServePassword starts the binary in password mode with a
// password for the run: the right one logs in, a wrong one does not, and
// SIGTERM stops it cleanly.
func TestE2EServePassword(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sp := startServe(ctx, t, e, "--addr", "127.0.0.1:0", "--password", "correct horse")
	base := "http://" + sp.addr
	login := func(pw string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/login", strings.NewReader(`{"password":"`+pw+`"}`))
		req.Header.Set("Origin", base)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := login("wrong"); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d", r.StatusCode)
	}
	r := login("correct horse")
	if r.StatusCode != http.StatusNoContent || len(r.Cookies()) != 1 || r.Cookies()[0].Name != "reasonix_auth" {
		t.Fatalf("right password: %d %v", r.StatusCode, r.Header.Values("Set-Cookie"))
	}
	if err := sp.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-sp.exited:
		if err != nil {
			t.Fatalf("serve after SIGTERM: %v\n%s", err, sp.stderr)
		}
	case <-ctx.Done():
		t.Fatal("serve did not stop after SIGTERM")
	}
}
