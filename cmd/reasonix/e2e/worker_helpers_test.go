//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"reasonix/core/provider/providertest"
	"reasonix/core/testenv"
)

// The helpers in this file run a scheduler (`reasonix run`) and several
// `reasonix worker` processes of the e2e binary on loopback, all against
// one model fake. Each process leads its own process group and carries a
// marker in its environment, so the test can kill a worker with all it
// started and prove, by walking /proc, that nothing of the rig outlives
// the test.

// workerToken is the secret the rig's scheduler and its workers share.
const workerToken = "e2e-worker-token-5f1c9a"

// rigWorkspace is the checkout name every process of the rig serves: the
// scheduler's root is a directory of that name, so [[workers]] entries may
// leave workspace empty (its default is the root's basename).
const rigWorkspace = "repo"

// markerEnv names the environment variable every process of a rig carries;
// its value is unique to the rig.
const markerEnv = "REASONIX_E2E_RIG"

// rig is one scheduler workspace plus the workers started for it.
type rig struct {
	t      testing.TB
	e      *e2e
	marker string

	mu     sync.Mutex
	pgids  []int // every process group the rig started
	byName map[string]*rigProc
	// sameURL configures workers started from now on with the parent's
	// URL of the fake instead of their own (nodeURL): one endpoint, as
	// real workers on one provider have.
	sameURL bool
}

// rigProc is a process of the rig: the parent run or a worker.
type rigProc struct {
	name           string
	cmd            *exec.Cmd
	stdout, stderr *watchedBuffer
	exited         chan error
	// Worker only: the address it listens on, its own checkout and the
	// name it serves that under.
	addr, checkout, home, workspace string

	mu    sync.Mutex
	ended time.Time // when Wait returned
}

// exitedAt is when the process was seen to exit, zero while it runs.
func (p *rigProc) exitedAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended
}

// newRig makes a scheduler workspace named rigWorkspace with files in it,
// wired to a model fake answering with opts.
func newRig(t testing.TB, files map[string]string, opts ...providertest.Option) *rig {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		testenv.Missing(t, "the worker tests walk /proc to find left-over processes: %v", err)
	}
	e := newE2E(t, opts...)
	e.work = filepath.Join(t.TempDir(), rigWorkspace)
	if err := os.Mkdir(e.work, 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.WriteTree(t, e.work, files)
	r := &rig{t: t, e: e, marker: fmt.Sprintf("%d-%d", os.Getpid(), rand.Uint64()), byName: map[string]*rigProc{}}
	e.env = append(e.env, "REASONIX_WORKER_TOKEN="+workerToken, markerEnv+"="+r.marker)
	return r
}

// nodeURL is the fake's base URL as the process named node is configured
// with: the same server, with the node's name as a leading path segment,
// so the fake can tell which process asked (requestNode). The parent uses
// the plain URL.
func (r *rig) nodeURL(node string) string {
	if node == "" {
		return r.e.srv.URL()
	}
	return strings.TrimSuffix(r.e.srv.URL(), "/v1") + "/" + node + "/v1"
}

// requestNode is the worker a chat request came from, "" for the parent
// process (its own turns and its local subagents').
func requestNode(req providertest.Request) string {
	p := strings.TrimPrefix(req.Path, "/")
	if strings.HasPrefix(p, "v1/") {
		return ""
	}
	node, _, _ := strings.Cut(p, "/")
	return node
}

// fakeConfig is a user config whose default provider is the fake at url,
// as e2e.writeConfig writes it, plus extra.
func fakeConfig(url, extra string) string {
	return fmt.Sprintf(`default_model = "fake"

[[providers]]
name = "fake"
kind = "openai"
base_url = %q
model = "fake-model"
api_key_env = "FAKE_API_KEY"
context_window = 128000
%s`, url, extra)
}

// workerEntry is one [[workers]] table of the scheduler's config.
type workerEntry struct {
	name     string
	capacity int
	writes   []string
}

// writeParentConfig writes the scheduler's config: the fake, agentExtra
// (keys of [agent]), a [remote] on a free loopback port with remoteExtra,
// and one [[workers]] entry per entry, addressed at the worker of that
// name started with startWorker (or at addrs[name] when given, for a
// worker that is not running).
func (r *rig) writeParentConfig(agentExtra, remoteExtra string, entries ...workerEntry) {
	r.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "\n[agent]\n%s\n\n[remote]\nlisten = \"127.0.0.1:0\"\n%s\n", agentExtra, remoteExtra)
	for _, w := range entries {
		p := r.proc(w.name)
		if p == nil || p.addr == "" {
			r.t.Fatalf("no running worker %q for the config", w.name)
		}
		writes, _ := json.Marshal(append([]string{}, w.writes...))
		fmt.Fprintf(&b, "\n[[workers]]\nname = %q\naddress = %q\ncapacity = %d\nwrites = %s\n", w.name, p.addr, w.capacity, writes)
	}
	r.e.writeConfig(b.String())
}

func (r *rig) proc(name string) *rigProc {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byName[name]
}

// listening is the line a worker prints on stderr once it serves.
var listening = regexp.MustCompile(`(?m)^reasonix worker (\S+) listening on (\S+:\d+)$`)

// startWorker starts `reasonix worker` named name with capacity slots on a
// free loopback port, serving a copy of the scheduler's checkout (taken
// now) from a home of its own whose config points at the fake. token is
// its REASONIX_WORKER_TOKEN. It returns once the worker has printed the
// address it listens on.
func (r *rig) startWorker(name string, capacity int, token string) *rigProc {
	r.t.Helper()
	return r.startWorkerServing(name, capacity, token, rigWorkspace)
}

// startWorkerServing is startWorker with the checkout served under the
// name workspace, which the scheduler's tasks do not ask for unless it is
// rigWorkspace.
func (r *rig) startWorkerServing(name string, capacity int, token, workspace string) *rigProc {
	r.t.Helper()
	base := r.t.TempDir()
	home := filepath.Join(base, "home")
	checkout := filepath.Join(base, rigWorkspace)
	if err := os.MkdirAll(home, 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.CopyFS(checkout, os.DirFS(r.e.work)); err != nil {
		r.t.Fatal(err)
	}
	url := r.nodeURL(name)
	if r.sameURL {
		url = r.nodeURL("")
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(fakeConfig(url, "")), 0o600); err != nil {
		r.t.Fatal(err)
	}
	p := r.launchWorker(name, capacity, token, "127.0.0.1:0", home, checkout, workspace)
	return p
}

// restartWorker starts the worker named name again, after it was killed,
// on the address it had and with its home and checkout, as a host that
// comes back would.
func (r *rig) restartWorker(name string, capacity int, token string) *rigProc {
	r.t.Helper()
	old := r.proc(name)
	if old == nil || old.running() {
		r.t.Fatalf("worker %s is not a stopped worker of the rig", name)
	}
	p := r.launchWorker(name, capacity, token, old.addr, old.home, old.checkout, old.workspace)
	if p.addr != old.addr {
		r.t.Fatalf("worker %s came back on %s, not on %s", name, p.addr, old.addr)
	}
	return p
}

func (r *rig) launchWorker(name string, capacity int, token, listen, home, checkout, workspace string) *rigProc {
	r.t.Helper()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"REASONIX_HOME=" + home,
		"FAKE_API_KEY=" + e2eKey,
		"REASONIX_WORKER_TOKEN=" + token,
		markerEnv + "=" + r.marker,
	}
	p := r.start(name, checkout, env, "worker", "--listen", listen, "--name", name,
		"--workspace", workspace+"="+checkout, "--capacity", strconv.Itoa(capacity))
	p.checkout, p.home, p.workspace = checkout, home, workspace
	m := p.awaitLine(r.t, listening)
	if m[1] != name {
		r.t.Errorf("worker announced itself as %q, started as %q", m[1], name)
	}
	p.addr = m[2]
	return p
}

// startParent starts the scheduler: the binary with args in the
// scheduler's workspace and environment.
func (r *rig) startParent(args ...string) *rigProc {
	r.t.Helper()
	return r.start("parent", r.e.work, r.e.env, args...)
}

// start runs the binary as the leader of a new process group that the
// kernel kills should the test process die, and makes sure the group is
// gone when the test ends.
func (r *rig) start(name, dir string, env []string, args ...string) *rigProc {
	r.t.Helper()
	cmd := exec.Command(e2eBinary, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &rigProc{name: name, cmd: cmd, stdout: newWatchedBuffer(), stderr: newWatchedBuffer(), exited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.ended = time.Now()
		p.mu.Unlock()
		p.exited <- err
	}()
	r.mu.Lock()
	r.pgids = append(r.pgids, cmd.Process.Pid)
	r.byName[name] = p
	r.mu.Unlock()
	r.t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err := <-p.exited
		p.exited <- err
	})
	return p
}

// awaitLine waits for a line of stderr matching re and returns its
// submatches, failing the test if the process exits first or after
// e2eExitBound.
func (p *rigProc) awaitLine(t testing.TB, re *regexp.Regexp) []string {
	t.Helper()
	timer := time.NewTimer(e2eExitBound)
	defer timer.Stop()
	for {
		p.stderr.mu.Lock()
		s, changed := p.stderr.buf.String(), p.stderr.changed
		p.stderr.mu.Unlock()
		if m := re.FindStringSubmatch(s); m != nil {
			return m
		}
		select {
		case <-changed:
		case err := <-p.exited:
			p.exited <- err
			if m := re.FindStringSubmatch(p.stderr.String()); m != nil {
				return m
			}
			t.Fatalf("%s exited (%v) before printing a line matching %s:\n%s", p.name, err, re, p.stderr)
		case <-timer.C:
			t.Fatalf("%s printed no line matching %s within %s:\n%s", p.name, re, e2eExitBound, s)
		}
	}
}

// kill SIGKILLs the process's whole group and waits for the process.
func (p *rigProc) kill(t testing.TB) {
	t.Helper()
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %s: %v", p.name, err)
	}
	if _, code := p.waitExit(t); code != -1 {
		t.Fatalf("%s exited %d after SIGKILL, want killed by the signal", p.name, code)
	}
}

// terminateAll sends SIGTERM to the named processes at once, then waits
// for each; it returns their exit codes and how long each took.
func (r *rig) terminateAll(t testing.TB, names ...string) (map[string]int, map[string]time.Duration) {
	t.Helper()
	sent := time.Now()
	for _, n := range names {
		if err := r.proc(n).cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatalf("SIGTERM %s: %v", n, err)
		}
	}
	codes, took := map[string]int{}, map[string]time.Duration{}
	for _, n := range names {
		_, codes[n] = r.proc(n).waitExit(t)
		took[n] = r.proc(n).exitedAt().Sub(sent)
	}
	return codes, took
}

// waitExit waits (bounded) for the process to end and returns its error
// and exit code, -1 when a signal killed it.
func (p *rigProc) waitExit(t testing.TB) (error, int) {
	t.Helper()
	timer := time.NewTimer(2 * e2eExitBound)
	defer timer.Stop()
	select {
	case err := <-p.exited:
		p.exited <- err
		return err, p.cmd.ProcessState.ExitCode()
	case <-timer.C:
		t.Fatalf("%s still running after %s\n--- stdout (tail)\n%s\n--- stderr\n%s", p.name, 2*e2eExitBound, tail(p.stdout.String(), 3000), p.stderr)
		return nil, 0
	}
}

// running reports whether the process has not exited yet.
func (p *rigProc) running() bool {
	select {
	case err := <-p.exited:
		p.exited <- err
		return false
	default:
		return true
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// leftovers lists the live processes of the rig: those in a process group
// it started, or carrying its marker in their environment (which reaches
// the children of a group leader that put them in groups of their own).
func (r *rig) leftovers() []string {
	r.mu.Lock()
	pgids := slices.Clone(r.pgids)
	r.mu.Unlock()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []string
	for _, dir := range dirs {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil || pid == os.Getpid() {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		// The fields after the command, which is in parentheses and may
		// hold anything: state, ppid, pgrp.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue // a zombie has no environment and holds nothing
		}
		pgrp, _ := strconv.Atoi(f[2])
		ours := slices.Contains(pgids, pgrp)
		if !ours {
			env, _ := os.ReadFile(filepath.Join(dir, "environ"))
			ours = slices.Contains(strings.Split(string(env), "\x00"), markerEnv+"="+r.marker)
		}
		if ours {
			cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
			out = append(out, fmt.Sprintf("pid %d pgrp %d: %s", pid, pgrp, strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")))
		}
	}
	return out
}

// noLeftovers fails the test unless every process of the rig is gone
// (orphans are reaped by init, which the wait allows for).
func (r *rig) noLeftovers(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(e2eExitBound)
	for {
		left := r.leftovers()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of the test left after %s:\n%s", e2eExitBound, strings.Join(left, "\n"))
		}
		time.Sleep(20 * time.Millisecond) // state in /proc sends no notification
	}
}

// gate makes the fake's answers to subagents depend on which worker asks.
// Every turn asked from the worker named hold stalls after its first text
// until that worker goes away; every other subagent turn pauses after its
// first text until the worker named until has been asked by need distinct
// tasks, so that worker is sure to be running that many tasks at once
// before the rest of the fleet may finish. Both are events the test
// observes, not timings. The first text is let through because the
// scheduler holds a fan-out's siblings until the first of them has had
// its first output (prompt-cache warm-up), which a turn held before its
// headers would delay by the warm-up's bound.
type gate struct {
	hold, until string
	need        int

	mu      sync.Mutex
	asked   map[string]map[string]bool // node → tasks that asked from it
	reached chan struct{}
}

func newGate(hold, until string, need int) *gate {
	g := &gate{hold: hold, until: until, need: need, asked: map[string]map[string]bool{}, reached: make(chan struct{})}
	if until == "" || need == 0 {
		close(g.reached)
	}
	return g
}

// note records that task asked from node and reports whether the turn is
// one to stall.
func (g *gate) note(node, task string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.asked[node] == nil {
		g.asked[node] = map[string]bool{}
	}
	fresh := !g.asked[node][task]
	g.asked[node][task] = true
	if fresh && node == g.until && len(g.asked[node]) == g.need {
		close(g.reached)
	}
	return node == g.hold && g.hold != ""
}

// tasksAsked lists the tasks that asked from node.
func (g *gate) tasksAsked(node string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for task := range g.asked[node] {
		out = append(out, task)
	}
	slices.Sort(out)
	return out
}

// waitReached waits until the worker `until` has been asked by enough
// tasks, failing the test after bound.
func (g *gate) waitReached(t testing.TB, bound time.Duration, what func() string) {
	t.Helper()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case <-g.reached:
	case <-timer.C:
		t.Fatalf("worker %s was not asked by %d tasks within %s: %s", g.until, g.need, bound, what())
	}
}

// turn answers a subagent's request: on the held worker a stall, else
// reply's turn, paused until the gate opens if it is still shut.
func (g *gate) turn(req providertest.Request, reply func(node string) providertest.Turn) providertest.Turn {
	node := requestNode(req)
	if g.note(node, req.FirstUser()) {
		return providertest.Turn{Text: "holding", Stall: true, FaultAfterEvents: 2}
	}
	t := reply(node)
	select {
	case <-g.reached:
	default:
		if node != g.until {
			if t.Text == "" {
				t.Text = "waiting"
			}
			// Event 0 opens the message, event 1 is the first text.
			t.Hold, t.FaultAfterEvents = g.reached, 2
		}
	}
	return t
}

// decodeEvents decodes what a stream-json run printed (decodeStream,
// for benchmarks too).
func decodeEvents(t testing.TB, out string) []evt {
	t.Helper()
	var events []evt
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		ev := evt{line: line}
		if err := json.Unmarshal([]byte(line), &ev.fields); err != nil {
			t.Fatalf("stream-json line is not a JSON object: %v\n%s", err, line)
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Type == "" {
			t.Fatalf("stream-json line without a type (%v): %s", err, line)
		}
		events = append(events, ev)
	}
	return events
}

// field is a string field of an event, "" when absent.
func field(ev evt, name string) string {
	var s string
	if raw, ok := ev.fields[name]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// attemptOf is an event's attempt, 1 when the field is absent.
func attemptOf(ev evt) int {
	n := 1
	if raw, ok := ev.fields["attempt"]; ok {
		_ = json.Unmarshal(raw, &n)
	}
	return n
}

// eventTime parses an event's time.
func eventTime(t testing.TB, ev evt) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, ev.Time)
	if err != nil {
		t.Fatalf("event time %q: %v", ev.Time, err)
	}
	return at
}

// parentResult is the fleet tool's result as the parent's model read it:
// the tool message answering call id in the parent's last request.
func parentResult(t testing.TB, srv *providertest.Server, id string) string {
	t.Helper()
	var out string
	found := false
	for _, req := range srv.Requests() {
		if isSubagent(req) || requestNode(req) != "" {
			continue
		}
		for _, m := range toolResults(req) {
			if m.ToolCallID == id {
				out, found = m.Content, true
			}
		}
	}
	if !found {
		t.Fatalf("the parent's model never read the result of call %s", id)
	}
	return out
}
