//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"reasonix/core/testenv"
)

// failAfter bounds a blocking wait in the jail tests. It is not how long
// anything is expected to take: reaching it means the test failed.
const failAfter = 30 * time.Second

// jail is a real directory tree and a sandbox enforcing with the real
// bubblewrap. outside is a directory no bind makes writable: it lives in
// /var/tmp because the jail binds /tmp, where t.TempDir usually is.
type jail struct {
	root, home, extra, outside, secretDir, secretFile string
	s                                                 *Sandbox
}

func newJail(t *testing.T, network bool) jail {
	t.Helper()
	testenv.NeedBwrap(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside, err := os.MkdirTemp("/var/tmp", "reasonix-sandbox-test-")
	if err != nil {
		t.Fatalf("the jail tests need a directory outside /tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	if outside, err = filepath.EvalSymlinks(outside); err != nil {
		t.Fatal(err)
	}
	j := jail{
		root:       filepath.Join(base, "root"),
		home:       filepath.Join(base, "home"),
		extra:      filepath.Join(base, "extra"),
		outside:    outside,
		secretDir:  filepath.Join(base, "secret"),
		secretFile: filepath.Join(base, "secretfile"),
	}
	for _, d := range []string{j.root, j.home, j.extra, j.secretDir} {
		mkdir(t, d)
	}
	writeFile(t, filepath.Join(j.secretDir, "key"), "secret-in-dir")
	writeFile(t, j.secretFile, "secret-file")
	writeFile(t, filepath.Join(j.root, ".env"), "secret-env")
	writeFile(t, filepath.Join(j.outside, "victim"), "victim")
	symlink(t, j.outside, filepath.Join(j.root, "link"))
	symlink(t, filepath.Join(j.secretDir, "key"), filepath.Join(j.root, "keylink"))
	j.s, err = New(Options{
		Root:       j.root,
		Home:       j.home,
		AllowWrite: []string{j.extra},
		ForbidRead: []string{j.secretDir, j.secretFile, ".env"},
		Bash:       "enforce",
		Network:    network,
		LookupEnv:  fakeEnv(map[string]string{"HOME": filepath.Join(base, "userhome")}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if j.s.Mode() != ModeEnforce {
		t.Fatalf("Mode() = %q with bwrap installed", j.s.Mode())
	}
	for _, w := range j.s.writableDirs(true) {
		if within(w, j.outside) {
			t.Fatalf("test setup: %s is writable in the jail through %s", j.outside, w)
		}
	}
	return j
}

// run runs script with bash -c in the jail, in the workspace root.
func (j jail) run(t *testing.T, script string) (string, error) {
	t.Helper()
	argv, err := j.s.Wrap(j.root, []string{"bash", "-c", script})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	return string(out), err
}

func TestJail(t *testing.T) {
	t.Parallel()
	j := newJail(t, false)
	if err := j.s.Check(t.Context()); err != nil {
		t.Fatalf("Check: %v", err)
	}
	exists := func(p string) func(t *testing.T) {
		return func(t *testing.T) {
			if _, err := os.Lstat(p); err != nil {
				t.Errorf("%s was not written: %v", p, err)
			}
		}
	}
	absent := func(p string) func(t *testing.T) {
		return func(t *testing.T) {
			if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s exists on the host: %v", p, err)
			}
		}
	}
	tests := []scriptCase{
		{name: "write inside the root", script: "echo hi > made.txt", wantOK: true,
			check: exists(filepath.Join(j.root, "made.txt"))},
		{name: "new nested file inside the root", script: "mkdir -p a/b && echo hi > a/b/c.txt", wantOK: true,
			check: exists(filepath.Join(j.root, "a", "b", "c.txt"))},
		{name: "write to the reasonix home", script: "echo hi > " + filepath.Join(j.home, "h.txt"),
			check: absent(filepath.Join(j.home, "h.txt"))},
		{name: "write to an allow_write root", script: "echo hi > " + filepath.Join(j.extra, "e.txt"), wantOK: true,
			check: exists(filepath.Join(j.extra, "e.txt"))},
		{name: "write outside", script: "echo hi > " + filepath.Join(j.outside, "escaped.txt"),
			check: absent(filepath.Join(j.outside, "escaped.txt"))},
		{name: "write outside through a symlink in the root", script: "echo hi > link/escaped-link.txt",
			check: absent(filepath.Join(j.outside, "escaped-link.txt"))},
		{name: "overwrite a file outside", script: "echo changed > " + filepath.Join(j.outside, "victim"),
			check: func(t *testing.T) {
				if b, _ := os.ReadFile(filepath.Join(j.outside, "victim")); string(b) != "victim" {
					t.Errorf("victim now holds %q", b)
				}
			}},
		{name: "hard link to a file outside", script: "ln " + filepath.Join(j.outside, "victim") + " hl",
			check: absent(filepath.Join(j.root, "hl"))},
		{name: "remount the root read-write", script: "mount -o remount,rw,bind / ; echo hi > " + filepath.Join(j.outside, "remounted.txt"),
			check: absent(filepath.Join(j.outside, "remounted.txt"))},
		{name: "unmount a hidden directory", script: "umount " + j.secretDir + " ; cat " + filepath.Join(j.secretDir, "key"),
			leak: "secret-in-dir"},
		{name: "read a forbidden file", script: "cat " + j.secretFile, leak: "secret-file"},
		{name: "read in a forbidden directory", script: "cat " + filepath.Join(j.secretDir, "key"), leak: "secret-in-dir"},
		{name: "forbidden directory looks empty", script: "ls -A " + j.secretDir + " | wc -l", wantOK: true, wantOut: "0"},
		{name: "read a forbidden file inside the root", script: "cat .env", leak: "secret-env"},
		{name: "read a forbidden file through a symlink", script: "cat keylink", leak: "secret-in-dir"},
		{name: "overwrite a forbidden file inside the root", script: "echo changed > .env",
			check: func(t *testing.T) {
				if b, _ := os.ReadFile(filepath.Join(j.root, ".env")); string(b) != "secret-env" {
					t.Errorf(".env now holds %q", b)
				}
			}},
		{name: "read outside is allowed", script: "cat " + filepath.Join(j.outside, "victim"), wantOK: true, wantOut: "victim"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := j.run(t, tt.script)
			tt.verify(t, out, err)
		})
	}
}

func TestJailNetwork(t *testing.T) {
	t.Parallel()
	for _, network := range []bool{false, true} {
		t.Run(fmt.Sprintf("network=%v", network), func(t *testing.T) {
			t.Parallel()
			j := newJail(t, network)
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			port := l.Addr().(*net.TCPAddr).Port
			out, runErr := j.run(t, fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port))
			if network != (runErr == nil) {
				t.Fatalf("connect from the jail: err = %v with network = %v; output:\n%s", runErr, network, out)
			}
			// A connection the jail made was queued before the command
			// ended, so it is accepted before this sentinel, made now.
			sentinel, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer sentinel.Close()
			first, err := l.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer first.Close()
			fromJail := first.RemoteAddr().String() != sentinel.LocalAddr().String()
			if fromJail != network {
				t.Fatalf("listener saw a connection from the jail = %v with network = %v", fromJail, network)
			}
		})
	}
}

// TestJailGroupKill starts a jailed command the way the bash tool does (its
// own process group) and kills the group while two background sleeps run.
// Every process in the jail holds the output pipe, so the pipe reaching
// end of file proves none survived. The control case drops the flags that
// tie the jail's life to bubblewrap's and shows the harness sees the
// survivors --new-session would otherwise leave.
func TestJailGroupKill(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		sig          syscall.Signal
		drop         []string // bubblewrap flags removed from the wrapped argv
		wantSurvivor bool
	}{
		{name: "SIGKILL", sig: syscall.SIGKILL},
		{name: "SIGTERM", sig: syscall.SIGTERM},
		{name: "control without the PID namespace and parent death signal", sig: syscall.SIGKILL,
			drop: []string{"--unshare-pid", "--die-with-parent"}, wantSurvivor: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := newJail(t, false)
			marker := fmt.Sprintf("1000.%d%d", os.Getpid(), i)
			t.Cleanup(func() { killAll(marker) })
			script := fmt.Sprintf(`sleep %s & a=$!; sleep %s & echo "pids $$ $a $!"; wait`, marker, marker)
			argv, err := j.s.Wrap(j.root, []string{"bash", "-c", script})
			if err != nil {
				t.Fatal(err)
			}
			argv = slices.DeleteFunc(argv, func(a string) bool { return slices.Contains(tt.drop, a) })

			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stdout, cmd.Stderr = pw, pw
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				pw.Close()
				t.Fatal(err)
			}
			pw.Close()
			out := bufio.NewReader(pr)
			line, err := out.ReadString('\n')
			fields := strings.Fields(line)
			if err != nil || len(fields) != 4 || fields[0] != "pids" {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				t.Fatalf("jailed command did not start: %q, %v", line, err)
			}

			if err := syscall.Kill(-cmd.Process.Pid, tt.sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()

			if tt.wantSurvivor {
				// Without a PID namespace the printed PIDs are the host's.
				alive := 0
				for _, f := range fields[1:] {
					pid, _ := strconv.Atoi(f)
					if pid > 0 && syscall.Kill(pid, 0) == nil {
						alive++
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
				if alive == 0 {
					t.Fatal("control: no process survived the group kill, so the harness cannot see survivors")
				}
			}
			drained := make(chan error, 1)
			go func() {
				_, err := io.Copy(io.Discard, out)
				drained <- err
			}()
			select {
			case err := <-drained:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(failAfter):
				pr.Close()
				t.Fatalf("a jailed process still holds the output pipe %s after the group was killed; running: %q",
					failAfter, processesWith(marker))
			}
			// A process closes its files after releasing its memory, so
			// once the pipe is closed none can still show the marker.
			if left := processesWith(marker); len(left) > 0 {
				t.Fatalf("processes survived: %q", left)
			}
		})
	}
}

// processesWith lists, as "pid: command line", the processes in /proc
// whose command line contains marker.
func processesWith(marker string) []string {
	var found []string
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		if cmd := string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})); strings.Contains(cmd, marker) {
			found = append(found, filepath.Base(filepath.Dir(d))+": "+cmd)
		}
	}
	return found
}

// killAll kills the processes a failed test left behind, found by marker.
func killAll(marker string) {
	for _, p := range processesWith(marker) {
		pid, _ := strconv.Atoi(p[:strings.IndexByte(p, ':')])
		if pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	testenv.NeedBwrap(t)
	root := t.TempDir()
	tests := []struct {
		name    string
		bwrap   string
		wantErr string
	}{
		{name: "real bubblewrap", bwrap: ""},
		{name: "a bwrap that cannot start a jail", bwrap: "/bin/false", wantErr: "cannot run a jailed command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			look := exec.LookPath
			if tt.bwrap != "" {
				look = func(string) (string, error) { return tt.bwrap, nil }
			}
			s, err := New(Options{Root: root, Bash: "enforce", GOOS: "linux", LookPath: look})
			if err != nil {
				t.Fatal(err)
			}
			err = s.Check(t.Context())
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Check = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

// scriptCase is one script run in a jail and what must come of it.
type scriptCase struct {
	name    string
	script  string
	wantOK  bool
	wantOut string // substring of the output, when set
	leak    string // text that must not appear in the output
	check   func(t *testing.T)
}

// verify checks the outcome of the case's script: out and err of its run.
func (tt scriptCase) verify(t *testing.T, out string, err error) {
	t.Helper()
	if tt.wantOK != (err == nil) {
		t.Fatalf("script %q: err = %v, want success %v; output:\n%s", tt.script, err, tt.wantOK, out)
	}
	if tt.wantOut != "" && !strings.Contains(out, tt.wantOut) {
		t.Errorf("output %q does not contain %q", out, tt.wantOut)
	}
	if tt.leak != "" && strings.Contains(out, tt.leak) {
		t.Errorf("output leaks %q:\n%s", tt.leak, out)
	}
	if tt.check != nil {
		tt.check(t)
	}
}
