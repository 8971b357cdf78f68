package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/actors/kernel"
	"reasonix/actors/remote"
	"reasonix/actors/worker"
	"reasonix/assemble"
	"reasonix/cmd/reasonix/internal/clitest"
	"reasonix/cmd/reasonix/internal/cmdutil"
	"reasonix/cmd/reasonix/internal/workercmd"
	"reasonix/core/config"
	"reasonix/core/provider/providertest"
	"reasonix/core/testenv"
)

func TestWorkersFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		want     workercmd.WorkersOptions
		wantCode int
		wantErr  string
	}{
		{"defaults", nil, workercmd.WorkersOptions{Timeout: workercmd.WorkersTimeout}, cmdutil.ExitOK, ""},
		{
			"every flag",
			[]string{"--json", "--timeout", "500ms", "--config", "c.toml", "--cwd", "/w"},
			workercmd.WorkersOptions{GlobalOptions: cmdutil.GlobalOptions{ConfigFile: "c.toml", Cwd: "/w"}, JSON: true, Timeout: 500 * time.Millisecond},
			cmdutil.ExitOK, "",
		},
		{"zero timeout", []string{"--timeout", "0s"}, workercmd.WorkersOptions{}, cmdutil.ExitUsage, "--timeout"},
		{"positional argument", []string{"build1"}, workercmd.WorkersOptions{}, cmdutil.ExitUsage, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &cmdutil.Factory{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
			var got *workercmd.WorkersOptions
			cmd := workercmd.NewCmdWorkers(f, func(o *workercmd.WorkersOptions) error { got = o; return nil })
			opts, ok := invoke(t, cmd, tt.args, &got, tt.wantCode, tt.wantErr)
			if ok && !reflect.DeepEqual(opts, tt.want) {
				t.Errorf("options = %+v, want %+v", opts, tt.want)
			}
		})
	}
}

// workersTestToken is the secret the in-process workers and the parent
// configs of these tests share.
const workersTestToken = "workers-test-token"

// startTestWorker serves a real worker host named name on a loopback
// endpoint of its own, guarded by token, serving one checkout per
// workspace name. It returns the address; everything stops at cleanup.
func startTestWorker(t *testing.T, name, token string, capacity int, workspaces ...string) string {
	t.Helper()
	return startTestWorkerWith(t, name, remote.RemoteOptions{Listen: "127.0.0.1:0", Token: token}, capacity, workspaces...)
}

// startTestWorkerWith is startTestWorker with the endpoint's options.
func startTestWorkerWith(t *testing.T, name string, o remote.RemoteOptions, capacity int, workspaces ...string) string {
	t.Helper()
	home := t.TempDir()
	testenv.WriteFile(t, config.UserConfigPath(home), providertest.ConfigText("http://127.0.0.1:1/v1", ""), 0o600)
	cfg, err := config.Load(config.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]string{}
	for _, ws := range workspaces {
		served[ws] = t.TempDir()
	}
	sys := kernel.NewSystem(nil)
	r, err := remote.StartRemote(sys, o)
	if err != nil {
		t.Fatal(err)
	}
	host, err := assemble.StartWorkerHost(sys, worker.HostSpec{Name: name, Capacity: capacity, Workspaces: served, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := host.Stop(5 * time.Second); err != nil {
			t.Error(err)
		}
		r.Stop(5 * time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return r.Address()
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	return strings.TrimSuffix(strings.TrimPrefix(closedURL(t), "http://"), "/v1")
}

// workersConfig is a parent's user config listing entries, each a TOML
// [[workers]] body.
func workersConfig(extra string, entries ...string) string {
	var b strings.Builder
	b.WriteString(providertest.ConfigText("http://127.0.0.1:1/v1", extra))
	for _, e := range entries {
		b.WriteString("\n[[workers]]\n" + e + "\n")
	}
	return b.String()
}

// workersRig is a parent home and a workspace named "proj" to run
// `reasonix workers` in.
type workersRig struct {
	home, cwd string
	env       map[string]string
}

func newWorkersRig(t *testing.T, configText string) *workersRig {
	t.Helper()
	home := t.TempDir()
	cwd := filepath.Join(t.TempDir(), "proj")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.WriteFile(t, config.UserConfigPath(home), configText, 0o600)
	return &workersRig{home: home, cwd: cwd, env: map[string]string{"REASONIX_HOME": home, config.WorkerTokenEnv: workersTestToken}}
}

func (r *workersRig) run(t *testing.T, args ...string) cliResult {
	t.Helper()
	return runCLI(t, r.env, "", append([]string{"workers", "--cwd", r.cwd}, args...)...)
}

func TestWorkersCommand(t *testing.T) {
	t.Parallel()
	up := startTestWorker(t, "build1", workersTestToken, 4, "proj", "docs")
	strange := startTestWorker(t, "strange", "another-token", 2, "proj")
	down := closedAddr(t)
	entries := []string{
		`name = "build1"` + "\naddress = \"" + up + "\"\ncapacity = 4",
		`name = "down"` + "\naddress = \"" + down + "\"",
		`name = "elsewhere"` + "\naddress = \"" + up + "\"\nworkspace = \"site\"",
		`name = "badtoken"` + "\naddress = \"" + strange + "\"",
	}

	t.Run("all up", func(t *testing.T) {
		t.Parallel()
		r := newWorkersRig(t, workersConfig("", entries[0]))
		res := r.run(t)
		if res.code != cmdutil.ExitOK {
			t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
		}
		rows := clitest.TableRows(t, res.stdout)
		got := rows["build1"]
		if len(got) != 8 || got[1] != up || got[2] != "up" || got[3] != "4" || got[4] != "0" || got[5] != "4" ||
			!strings.HasSuffix(got[6], "ms") || got[7] != "docs, proj" && got[7] != "proj, docs" {
			t.Errorf("row = %q\n%s", got, res.stdout)
		}
	})

	t.Run("one of each", func(t *testing.T) {
		t.Parallel()
		r := newWorkersRig(t, workersConfig("", entries...))
		res := r.run(t)
		if res.code != cmdutil.ExitFailed {
			t.Fatalf("exit %d, want %d\n%s\n%s", res.code, cmdutil.ExitFailed, res.stdout, res.stderr)
		}
		rows := clitest.TableRows(t, res.stdout)
		for name, state := range map[string]string{"build1": "up", "down": "unreachable", "elsewhere": "wrong workspace", "badtoken": "bad token"} {
			if got := rows[name]; len(got) < 3 || got[2] != state {
				t.Errorf("%s = %q, want state %q\n%s", name, got, state, res.stdout)
			}
		}
		if got := rows["down"]; len(got) == 8 && (got[3] != "-" || got[6] != "-") {
			t.Errorf("an unreachable worker shows a load: %q", got)
		}
		for _, w := range []string{
			"down: worker unreachable: " + down,
			`elsewhere: serves "`, `not "site"`,
			"badtoken: worker refused the token",
		} {
			if !strings.Contains(res.stdout, w) {
				t.Errorf("stdout does not contain %q:\n%s", w, res.stdout)
			}
		}
		// Rows keep the config's order.
		if i, j := strings.Index(res.stdout, "\ndown "), strings.Index(res.stdout, "\nelsewhere "); i < 0 || j < i {
			t.Errorf("rows out of config order:\n%s", res.stdout)
		}
	})

	t.Run("json", func(t *testing.T) {
		t.Parallel()
		r := newWorkersRig(t, workersConfig("", entries...))
		res := r.run(t, "--json")
		if res.code != cmdutil.ExitFailed {
			t.Fatalf("exit %d, want %d\n%s\n%s", res.code, cmdutil.ExitFailed, res.stdout, res.stderr)
		}
		var raw []map[string]any
		if err := json.Unmarshal([]byte(res.stdout), &raw); err != nil {
			t.Fatalf("not a JSON array: %v\n%s", err, res.stdout)
		}
		if len(raw) != 4 {
			t.Fatalf("%d entries, want 4:\n%s", len(raw), res.stdout)
		}
		keys := []string{"address", "capacity", "error", "free", "name", "rtt_ms", "running", "state", "workspaces"}
		for _, e := range raw {
			var got []string
			for k := range e {
				got = append(got, k)
			}
			slices.Sort(got)
			if !slices.Equal(got, keys) {
				t.Errorf("fields %q, want %q", got, keys)
			}
		}
		var rows []workercmd.WorkerJSON
		if err := json.Unmarshal([]byte(res.stdout), &rows); err != nil {
			t.Fatal(err)
		}
		b := rows[0]
		slices.Sort(b.Workspaces)
		if b.Name != "build1" || b.Address != up || b.State != "up" || b.Capacity != 4 || b.Running != 0 || b.Free != 4 ||
			b.RTTMS <= 0 || !slices.Equal(b.Workspaces, []string{"docs", "proj"}) || b.Error != "" {
			t.Errorf("build1 = %+v", b)
		}
		if d := rows[1]; d.Name != "down" || d.State != "unreachable" || d.Capacity != 0 || d.Workspaces == nil || len(d.Workspaces) != 0 || d.Error == "" {
			t.Errorf("down = %+v", d)
		}
		if e := rows[2]; e.State != "wrong workspace" || e.Capacity != 4 || !strings.Contains(e.Error, `"site"`) {
			t.Errorf("elsewhere = %+v", e)
		}
		if bt := rows[3]; bt.State != "bad token" || !strings.Contains(bt.Error, "token") {
			t.Errorf("badtoken = %+v", bt)
		}
	})

	t.Run("no token", func(t *testing.T) {
		t.Parallel()
		r := newWorkersRig(t, workersConfig("", entries[0]))
		delete(r.env, config.WorkerTokenEnv)
		res := r.run(t, "--json")
		if res.code != cmdutil.ExitFailed {
			t.Fatalf("exit %d, want %d\n%s", res.code, cmdutil.ExitFailed, res.stdout)
		}
		var rows []workercmd.WorkerJSON
		if err := json.Unmarshal([]byte(res.stdout), &rows); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].State != "no token" || !strings.Contains(rows[0].Error, config.WorkerTokenEnv) {
			t.Errorf("rows = %+v", rows)
		}
	})

	t.Run("token file", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		tokenFile := filepath.Join(dir, "worker.token")
		testenv.WriteFile(t, tokenFile, workersTestToken+"\n", 0o600)
		r := newWorkersRig(t, workersConfig("\n[remote]\ntoken_file = \""+tokenFile+"\"\n", entries[0]))
		delete(r.env, config.WorkerTokenEnv)
		if res := r.run(t); res.code != cmdutil.ExitOK {
			t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
		}
	})
}

func TestWorkersNoneOrBadConfig(t *testing.T) {
	t.Parallel()
	r := newWorkersRig(t, providertest.ConfigText("http://127.0.0.1:1/v1", ""))
	res := r.run(t)
	if res.code != cmdutil.ExitOK || !strings.Contains(res.stdout, "No workers configured") ||
		!strings.Contains(res.stdout, "[[workers]]") || !strings.Contains(res.stdout, config.UserConfigPath(r.home)) ||
		!strings.Contains(res.stdout, "reasonix worker --listen") {
		t.Errorf("no workers: exit %d\n%s", res.code, res.stdout)
	}
	if res := r.run(t, "--json"); res.code != cmdutil.ExitOK || strings.TrimSpace(res.stdout) != "[]" {
		t.Errorf("no workers, --json: exit %d, %q", res.code, res.stdout)
	}

	bad := newWorkersRig(t, workersConfig("", "name = \"w\"\naddress = \"127.0.0.1:7420\"\ncapacity = 65"))
	res = bad.run(t)
	if res.code != cmdutil.ExitUsage || !strings.Contains(res.stderr, "capacity") {
		t.Errorf("bad config: exit %d, stderr %q", res.code, res.stderr)
	}
}

func TestWorkersQueryOptions(t *testing.T) {
	t.Parallel()
	port := func(addr string) string {
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatalf("%q: %v", addr, err)
		}
		return p
	}
	o, err := workercmd.QueryOptions(config.Remote{}, "tok")
	if err != nil || o.Listen != "127.0.0.1:0" || o.Advertise != "" || o.Token != "tok" {
		t.Errorf("no [remote]: %+v, %v", o, err)
	}
	// A fixed port is left to the session that owns it.
	o, err = workercmd.QueryOptions(config.Remote{Listen: "127.0.0.1:7420", TLSCert: "c.pem", TLSKey: "k.pem", TLSCA: "ca.pem"}, "tok")
	if err != nil || o.Listen != "127.0.0.1:0" || o.Advertise != "" || o.TLSCert != "c.pem" || o.TLSKey != "k.pem" || o.TLSCA != "ca.pem" {
		t.Errorf("fixed port: %+v, %v", o, err)
	}
	// With advertise, workers dial its host on the port bound here.
	o, err = workercmd.QueryOptions(config.Remote{Listen: "0.0.0.0:7420", Advertise: "sched.lan:7420"}, "tok")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(o.Listen, "0.0.0.0:") || !strings.HasPrefix(o.Advertise, "sched.lan:") || port(o.Listen) != port(o.Advertise) || port(o.Listen) == "0" {
		t.Errorf("advertise: %+v", o)
	}
	if _, err := workercmd.QueryOptions(config.Remote{Listen: "nonsense"}, "tok"); err == nil {
		t.Error("a listen address without a port was accepted")
	}
}

// TestWorkersTLS lists a worker that serves TLS: a plaintext listing is a
// tls error; with [remote] TLS trusting the worker's certificate it is up,
// which takes the worker's answer coming back over TLS to the listing's
// own endpoint.
func TestWorkersTLS(t *testing.T) {
	t.Parallel()
	cert, key := testenv.SelfSignedCert(t, t.TempDir(), "node")
	addr := startTestWorkerWith(t, "secure",
		remote.RemoteOptions{Listen: "127.0.0.1:0", Token: workersTestToken, TLSCert: cert, TLSKey: key, TLSCA: cert}, 2, "proj")
	entry := "name = \"secure\"\naddress = \"" + addr + "\""

	plain := newWorkersRig(t, workersConfig("", entry))
	res := plain.run(t, "--json")
	var rows []workercmd.WorkerJSON
	if err := json.Unmarshal([]byte(res.stdout), &rows); err != nil {
		t.Fatalf("%v\n%s\n%s", err, res.stdout, res.stderr)
	}
	if res.code != cmdutil.ExitFailed || len(rows) != 1 || rows[0].State != "tls error" || rows[0].Error == "" {
		t.Errorf("plaintext listing of a TLS worker: exit %d, %+v", res.code, rows)
	}

	secure := newWorkersRig(t, workersConfig("\n[remote]\ntls_cert = \""+cert+"\"\ntls_key = \""+key+"\"\ntls_ca = \""+cert+"\"\n", entry))
	res = secure.run(t, "--json")
	rows = nil
	if err := json.Unmarshal([]byte(res.stdout), &rows); err != nil {
		t.Fatalf("%v\n%s\n%s", err, res.stdout, res.stderr)
	}
	if res.code != cmdutil.ExitOK || len(rows) != 1 || rows[0].State != "up" || rows[0].Capacity != 2 {
		t.Errorf("TLS listing of a TLS worker: exit %d, %+v\n%s", res.code, rows, res.stderr)
	}
}
