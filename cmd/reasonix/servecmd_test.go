package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"reasonix/core/config"
	"reasonix/core/provider/providertest"
)

func TestServeFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want ServeOptions
		code int
	}{
		{"defaults", nil, ServeOptions{}, 0},
		{"all", []string{"--addr", "0.0.0.0:9000", "--auth", "token", "--token", "t", "--cwd", "/tmp", "--config", "c.toml"},
			ServeOptions{Addr: "0.0.0.0:9000", Auth: "token", Token: "t", globalOptions: globalOptions{Cwd: "/tmp", ConfigFile: "c.toml"}}, 0},
		{"hash", []string{"--hash-password", "--password", "p"}, ServeOptions{HashPassword: true, Password: "p"}, 0},
		{"bad auth", []string{"--auth", "basic"}, ServeOptions{}, exitUsage},
		{"argument", []string{"now"}, ServeOptions{}, exitUsage},
		{"unknown flag", []string{"--port", "1"}, ServeOptions{}, exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *ServeOptions
			f := &Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
			root := NewCmdRoot(f)
			if c, _, err := root.Find([]string{"serve"}); err == nil {
				root.RemoveCommand(c)
			}
			root.AddCommand(NewCmdServe(f, func(o *ServeOptions) error { got = o; return nil }))
			root.SetArgs(append([]string{"serve"}, tc.args...))
			err := root.Execute()
			if code := exitCode(err); code != tc.code {
				t.Fatalf("exit %d (%v), want %d", code, err, tc.code)
			}
			if tc.code == 0 && *got != tc.want {
				t.Fatalf("options %+v, want %+v", *got, tc.want)
			}
		})
	}
}

func TestResolveServe(t *testing.T) {
	t.Parallel()
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  config.Serve
		o    ServeOptions
		// check looks at the result; usage is the error wanted instead.
		check func(t *testing.T, s serveSettings)
		usage string
	}{
		{name: "defaults", check: func(t *testing.T, s serveSettings) {
			if s.addr != defaultServeAddr || s.auth != "none" {
				t.Fatalf("%+v", s)
			}
		}},
		{name: "config", cfg: config.Serve{Addr: "127.0.0.1:9", AuthMode: "token", Token: "fixed"}, check: func(t *testing.T, s serveSettings) {
			if s.addr != "127.0.0.1:9" || s.auth != "token" || s.token != "fixed" || s.generated {
				t.Fatalf("%+v", s)
			}
		}},
		{name: "flags over config", cfg: config.Serve{Addr: "127.0.0.1:9", AuthMode: "token", Token: "fixed"},
			o: ServeOptions{Addr: "[::1]:10", Token: "mine"}, check: func(t *testing.T, s serveSettings) {
				if s.addr != "[::1]:10" || s.token != "mine" {
					t.Fatalf("%+v", s)
				}
			}},
		{name: "generated token", o: ServeOptions{Auth: "token"}, check: func(t *testing.T, s serveSettings) {
			if !s.generated || len(s.token) < 32 {
				t.Fatalf("%+v", s)
			}
		}},
		{name: "password flag", o: ServeOptions{Password: "hunter2"}, check: func(t *testing.T, s serveSettings) {
			if s.auth != "password" || bcrypt.CompareHashAndPassword([]byte(s.hash), []byte("hunter2")) != nil {
				t.Fatalf("%+v", s)
			}
		}},
		{name: "password hash", cfg: config.Serve{AuthMode: "password", PasswordHash: string(hash), Addr: "0.0.0.0:1"}, check: func(t *testing.T, s serveSettings) {
			if s.hash != string(hash) {
				t.Fatalf("%+v", s)
			}
		}},
		{name: "public bind without auth", o: ServeOptions{Addr: "0.0.0.0:8787"}, usage: "without authentication"},
		{name: "all interfaces without auth", o: ServeOptions{Addr: ":8787"}, usage: "without authentication"},
		{name: "a name without auth", o: ServeOptions{Addr: "box.lan:8787"}, usage: "without authentication"},
		{name: "localhost without auth", o: ServeOptions{Addr: "localhost:0"}, check: func(t *testing.T, s serveSettings) {}},
		{name: "no port", o: ServeOptions{Addr: "127.0.0.1"}, usage: "HOST:PORT"},
		{name: "password mode without password", o: ServeOptions{Auth: "password"}, usage: "password_hash"},
		{name: "bad hash", cfg: config.Serve{AuthMode: "password", PasswordHash: "plain"}, usage: "not a bcrypt hash"},
		{name: "token with password mode", o: ServeOptions{Auth: "password", Token: "t", Password: "p"}, usage: "--token goes with --auth token"},
		{name: "bad config mode", cfg: config.Serve{AuthMode: "basic"}, usage: "auth_mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := resolveServe(tc.cfg, &tc.o)
			if tc.usage != "" {
				if _, ok := errors.AsType[*usageError](err); !ok || !strings.Contains(err.Error(), tc.usage) {
					t.Fatalf("error %v, want a usage error about %q", err, tc.usage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, s)
		})
	}
}

func TestServeHashPassword(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, stdin string
		args        []string
	}{
		{"flag", "", []string{"--password", "open sesame"}},
		{"stdin", "open sesame\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			f := &Factory{Stdin: strings.NewReader(tc.stdin), Stdout: &out, Stderr: io.Discard, Getenv: func(string) string { return "" }}
			root := NewCmdRoot(f)
			root.SetArgs(append([]string{"serve", "--hash-password"}, tc.args...))
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			hash := strings.TrimSpace(out.String())
			if err := bcrypt.CompareHashAndPassword([]byte(hash), []byte("open sesame")); err != nil {
				t.Fatalf("printed %q: %v", hash, err)
			}
		})
	}
	f := &Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
	root := NewCmdRoot(f)
	root.SetArgs([]string{"serve", "--hash-password"})
	if code := exitCode(root.Execute()); code != exitUsage {
		t.Fatalf("no password: exit %d", code)
	}
}

func TestE2EServeRefusesPublicBindWithoutAuth(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.run("serve", "--addr", "0.0.0.0:0")
	if r.code != exitUsage || !strings.Contains(r.stderr, "without authentication") || !strings.Contains(r.stderr, "--auth token") {
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
	cmd, _, stderr := e.command(ctx, "serve", "--addr", "127.0.0.1:0", "--auth", "token")
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); pw.Close() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var addr, url, token string
	for addr == "" || url == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("serve ended before printing its address; stderr:\n%s", stderr)
			}
			if m := listeningRe.FindStringSubmatch(line); m != nil {
				addr = m[1]
			}
			if m := openRe.FindStringSubmatch(line); m != nil {
				url, token = m[1], m[2]
			}
		case <-ctx.Done():
			t.Fatalf("no address printed; stderr:\n%s", stderr)
		}
	}
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
