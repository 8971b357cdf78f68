package main

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/cmd/reasonix/internal/workercmd"
)

func TestWorkerFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		want     workercmd.WorkerOptions
		wantCode int
		wantErr  string
	}{
		{
			name: "listen only",
			args: []string{"--listen", "127.0.0.1:0"},
			want: workercmd.WorkerOptions{Listen: "127.0.0.1:0", Capacity: workercmd.DefaultWorkerCapacity},
		},
		{
			name: "every flag",
			args: []string{"--listen", "0.0.0.0:7420", "--advertise", "build1.lan:7420", "--name", "build1",
				"--workspace", "reasonix=/src/reasonix", "--workspace", "docs=../docs", "--capacity", "64",
				"--token-file", "/etc/reasonix/token", "--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-ca", "ca.pem",
				"--config", "w.toml", "--cwd", "/src"},
			want: workercmd.WorkerOptions{Listen: "0.0.0.0:7420", Advertise: "build1.lan:7420", Name: "build1",
				Workspaces: []string{"reasonix=/src/reasonix", "docs=../docs"}, Capacity: 64, TokenFile: "/etc/reasonix/token",
				TLSCert: "c.pem", TLSKey: "k.pem", TLSCA: "ca.pem", GlobalOptions: cmdutil.GlobalOptions{ConfigFile: "w.toml", Cwd: "/src"}},
		},
		{name: "no listen", args: nil, wantCode: cmdutil.ExitUsage, wantErr: "--listen is required"},
		{name: "listen without a port", args: []string{"--listen", "localhost"}, wantCode: cmdutil.ExitUsage, wantErr: `--listen "localhost"`},
		{name: "bad advertise", args: []string{"--listen", ":0", "--advertise", "host"}, wantCode: cmdutil.ExitUsage, wantErr: "--advertise"},
		{name: "capacity 0", args: []string{"--listen", ":0", "--capacity", "0"}, wantCode: cmdutil.ExitUsage, wantErr: "--capacity 0"},
		{name: "capacity 65", args: []string{"--listen", ":0", "--capacity", "65"}, wantCode: cmdutil.ExitUsage, wantErr: "--capacity 65"},
		{name: "capacity not a number", args: []string{"--listen", ":0", "--capacity", "many"}, wantCode: cmdutil.ExitUsage, wantErr: "--capacity"},
		{name: "workspace without a path", args: []string{"--listen", ":0", "--workspace", "reasonix"}, wantCode: cmdutil.ExitUsage, wantErr: "NAME=PATH"},
		{name: "workspace without a name", args: []string{"--listen", ":0", "--workspace", "=/src"}, wantCode: cmdutil.ExitUsage, wantErr: "NAME=PATH"},
		{name: "workspace twice", args: []string{"--listen", ":0", "--workspace", "a=/x", "--workspace", "a=/y"}, wantCode: cmdutil.ExitUsage, wantErr: "served twice"},
		{name: "cert without key", args: []string{"--listen", ":0", "--tls-cert", "c.pem"}, wantCode: cmdutil.ExitUsage, wantErr: "go together"},
		{name: "ca alone", args: []string{"--listen", ":0", "--tls-ca", "ca.pem"}, wantCode: cmdutil.ExitUsage, wantErr: "--tls-ca goes with"},
		{name: "a name with a space", args: []string{"--listen", ":0", "--name", "build 1"}, wantCode: cmdutil.ExitUsage, wantErr: "--name"},
		{name: "positional argument", args: []string{"--listen", ":0", "extra"}, wantCode: cmdutil.ExitUsage, wantErr: "unknown command"},
		{name: "unknown flag", args: []string{"--listen", ":0", "--port", "1"}, wantCode: cmdutil.ExitUsage, wantErr: "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &cmdutil.Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
			var got *workercmd.WorkerOptions
			// Under the real root, so flag errors take the binary's
			// usage-error path.
			root := NewCmdRoot(f)
			for _, c := range root.Commands() {
				if c.Name() == "worker" {
					root.RemoveCommand(c)
				}
			}
			root.AddCommand(workercmd.NewCmdWorker(f, func(o *workercmd.WorkerOptions) error { got = o; return nil }))
			opts, ok := invoke(t, root, append([]string{"worker"}, tt.args...), &got, tt.wantCode, tt.wantErr)
			if ok && !reflect.DeepEqual(opts, tt.want) {
				t.Errorf("options = %+v, want %+v", opts, tt.want)
			}
		})
	}
}

// workerLine is the line `reasonix worker` prints once it serves.
var workerLine = regexp.MustCompile(`^reasonix worker (\S+) listening on (\S+):(\d+)\n$`)

// startWorkerBinary runs `reasonix worker` with args in e's workspace and
// environment plus env, returning the command and its stderr.
func startWorkerBinary(t *testing.T, e *e2e, env []string, args ...string) (*exec.Cmd, *watchedBuffer, chan error) {
	t.Helper()
	cmd := exec.Command(e2eBinary, append([]string{"worker"}, args...)...)
	cmd.Dir, cmd.Env = e.work, append(append([]string{}, e.env...), env...)
	stderr := newWatchedBuffer()
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err := <-exited
		exited <- err
	})
	return cmd, stderr, exited
}

// exitOf waits for the process to exit and returns its code.
func exitOf(t *testing.T, exited chan error, stderr *watchedBuffer) int {
	t.Helper()
	select {
	case err := <-exited:
		exited <- err
		return exitStatus(t, err)
	case <-time.After(e2eExitBound):
		t.Fatalf("the worker did not exit within %s; stderr:\n%s", e2eExitBound, stderr.String())
		return -1
	}
}

func TestE2EWorkerListensAndDrains(t *testing.T) {
	t.Parallel()
	skipWithoutSignals(t)
	e := newE2E(t)
	cmd, stderr, exited := startWorkerBinary(t, e, []string{"REASONIX_WORKER_TOKEN=secret"},
		"--listen", "127.0.0.1:0", "--name", "w1", "--capacity", "2")
	stderr.waitFor(t, "listening line", func(s string) bool { return strings.HasSuffix(s, "\n") })
	m := workerLine.FindStringSubmatch(stderr.String())
	if m == nil || m[1] != "w1" || m[2] != "127.0.0.1" || m[3] == "0" {
		t.Fatalf("stderr = %q, want exactly the listening line with the port chosen", stderr.String())
	}
	// The port is really served.
	conn, err := net.DialTimeout("tcp", m[2]+":"+m[3], 5*time.Second)
	if err != nil {
		t.Fatalf("dial the announced address: %v", err)
	}
	_ = conn.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, exited, stderr); code != cmdutil.ExitOK {
		t.Fatalf("exit %d after SIGTERM; stderr:\n%s", code, stderr.String())
	}
	if s := stderr.String(); s != m[0] {
		t.Errorf("stderr after the drain = %q, want only the listening line", s)
	}
}

func TestE2EWorkerRefusesToStart(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = taken.Close() })
	bad := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	loose := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(loose, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	token := []string{"REASONIX_WORKER_TOKEN=secret"}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"no token", nil, []string{"--listen", "127.0.0.1:0"}, "REASONIX_WORKER_TOKEN"},
		{"a token file others can read", nil, []string{"--listen", "127.0.0.1:0", "--token-file", loose}, "token"},
		{"the port taken", token, []string{"--listen", taken.Addr().String()}, taken.Addr().String()},
		{"bad TLS files", token, []string{"--listen", "127.0.0.1:0", "--tls-cert", bad, "--tls-key", bad}, "tls"},
		{"a workspace that is not there", token, []string{"--listen", "127.0.0.1:0", "--workspace", "ws=" + filepath.Join(e.work, "gone")}, "gone"},
		{"no listen", token, nil, "--listen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd, _, stderr := e.command(ctx, append([]string{"worker"}, tc.args...)...)
			cmd.Env = append(append([]string{}, e.env...), tc.env...)
			code := exitStatus(t, cmd.Run())
			if code != cmdutil.ExitUsage || !strings.Contains(strings.ToLower(stderr.String()), strings.ToLower(tc.want)) {
				t.Errorf("exit %d, stderr %q; want exit 2 naming %q", code, stderr.String(), tc.want)
			}
			if strings.Contains(stderr.String(), "listening on") {
				t.Errorf("a worker that did not start announced itself: %q", stderr.String())
			}
		})
	}
}
