package main

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/core/config"
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
			ServeOptions{Addr: "0.0.0.0:9000", Auth: "token", Token: "t", GlobalOptions: cmdutil.GlobalOptions{Cwd: "/tmp", ConfigFile: "c.toml"}}, 0},
		{"hash", []string{"--hash-password", "--password", "p"}, ServeOptions{HashPassword: true, Password: "p"}, 0},
		{"bad auth", []string{"--auth", "basic"}, ServeOptions{}, cmdutil.ExitUsage},
		{"argument", []string{"now"}, ServeOptions{}, cmdutil.ExitUsage},
		{"unknown flag", []string{"--port", "1"}, ServeOptions{}, cmdutil.ExitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *ServeOptions
			f := &cmdutil.Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
			root := NewCmdRoot(f)
			if c, _, err := root.Find([]string{"serve"}); err == nil {
				root.RemoveCommand(c)
			}
			root.AddCommand(NewCmdServe(f, func(o *ServeOptions) error { got = o; return nil }))
			root.SetArgs(append([]string{"serve"}, tc.args...))
			err := root.Execute()
			if code := cmdutil.ExitCode(err); code != tc.code {
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
				if _, ok := errors.AsType[*cmdutil.UsageError](err); !ok || !strings.Contains(err.Error(), tc.usage) {
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
			f := &cmdutil.Factory{Stdin: strings.NewReader(tc.stdin), Stdout: &out, Stderr: io.Discard, Getenv: func(string) string { return "" }}
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
	f := &cmdutil.Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
	root := NewCmdRoot(f)
	root.SetArgs([]string{"serve", "--hash-password"})
	if code := cmdutil.ExitCode(root.Execute()); code != cmdutil.ExitUsage {
		t.Fatalf("no password: exit %d", code)
	}
}
