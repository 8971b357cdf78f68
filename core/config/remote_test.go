package config

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

const workersUser = `
[remote]
listen = "0.0.0.0:7420"
advertise = "laptop.lan:7420"
token_file = "worker.token"
tls_cert = "tls/node.crt"
tls_key = "tls/node.key"
tls_ca = "/etc/reasonix/ca.pem"
heartbeat_ms = 500
miss_limit = 4
run_local = false

[[workers]]
name = "build1"
address = "build1.lan:7420"
capacity = 8
workspace = "reasonix"
writes = ["services/api", "docs"]

[[workers]]
name = "gpu_2"
address = "[fd00::2]:7421"
`

func TestRemoteDefaults(t *testing.T) {
	t.Parallel()
	c, _ := mustLoad(t, layout{})
	r := c.Remote
	if r.Listen != "127.0.0.1:0" || r.Advertise != "" || r.TokenFile != "" || r.HeartbeatMS != 1000 || r.MissLimit != 3 {
		t.Errorf("remote defaults = %+v", r)
	}
	if r.RunLocal == nil || !*r.RunLocal {
		t.Errorf("run_local default = %v, want true", r.RunLocal)
	}
	if len(c.Workers) != 0 {
		t.Errorf("workers = %+v, want none", c.Workers)
	}
	for _, k := range []string{"remote.listen", "remote.heartbeat_ms", "remote.miss_limit", "remote.run_local"} {
		if c.SourceOf(k) != SourceDefault {
			t.Errorf("source of %s = %q", k, c.SourceOf(k))
		}
	}
}

func TestRemoteAndWorkersLoad(t *testing.T) {
	t.Parallel()
	c, f := mustLoad(t, layout{user: workersUser})
	wantWarnings(t, c.Warnings)
	dir := filepath.Dir(f.user)
	want := Remote{
		Listen: "0.0.0.0:7420", Advertise: "laptop.lan:7420",
		TokenFile: filepath.Join(dir, "worker.token"),
		TLSCert:   filepath.Join(dir, "tls", "node.crt"), TLSKey: filepath.Join(dir, "tls", "node.key"),
		TLSCA:       "/etc/reasonix/ca.pem",
		HeartbeatMS: 500, MissLimit: 4,
	}
	got := c.Remote
	if got.RunLocal == nil || *got.RunLocal {
		t.Errorf("run_local = %v, want false", got.RunLocal)
	}
	got.RunLocal = nil
	if got != want {
		t.Errorf("remote =\n %+v\nwant\n %+v", got, want)
	}
	if len(c.Workers) != 2 {
		t.Fatalf("workers = %+v", c.Workers)
	}
	b, g := c.Workers[0], c.Workers[1]
	if b.Name != "build1" || b.Address != "build1.lan:7420" || b.Capacity != 8 || b.Workspace != "reasonix" ||
		strings.Join(b.Writes, ",") != "services/api,docs" {
		t.Errorf("build1 = %+v", b)
	}
	if g.Name != "gpu_2" || g.Address != "[fd00::2]:7421" || g.Capacity != 4 || g.Workspace != "" || len(g.Writes) != 0 {
		t.Errorf("gpu_2 = %+v (capacity defaults to 4)", g)
	}
	if s := c.SourceOf(EntryKey("workers", "build1") + ".capacity"); s != f.user {
		t.Errorf("build1 capacity source = %q", s)
	}
	if s := c.SourceOf(EntryKey("workers", "gpu_2") + ".capacity"); s != SourceDefault {
		t.Errorf("gpu_2 capacity source = %q", s)
	}
}

func TestWorkersMergeByName(t *testing.T) {
	t.Parallel()
	c, f := mustLoad(t, layout{
		user:     workersUser,
		explicit: "[[workers]]\nname = \"build1\"\naddress = \"build1.vpn:7420\"\n\n[[workers]]\nname = \"extra\"\naddress = \"10.0.0.9:7420\"\n",
	})
	var names []string
	for _, w := range c.Workers {
		names = append(names, w.Name)
	}
	if strings.Join(names, ",") != "build1,gpu_2,extra" {
		t.Fatalf("workers = %v", names)
	}
	// The explicit file's entry replaces the user's whole entry.
	if b := c.Workers[0]; b.Address != "build1.vpn:7420" || b.Capacity != 4 || len(b.Writes) != 0 {
		t.Errorf("merged build1 = %+v", b)
	}
	if s := c.SourceOf(EntryKey("workers", "build1") + ".address"); s != f.explicit {
		t.Errorf("source = %q", s)
	}
}

func TestProjectCannotConfigureWorkers(t *testing.T) {
	t.Parallel()
	// A cloned repository must not send tasks (and the worker token) to
	// hosts of its choosing, nor open the scheduler's port.
	c, _ := mustLoad(t, layout{
		project: "[remote]\nlisten = \"0.0.0.0:7000\"\nadvertise = \"evil.example:7000\"\n\n[[workers]]\nname = \"evil\"\naddress = \"evil.example:7420\"\n",
	})
	if len(c.Workers) != 0 || c.Remote.Listen != "127.0.0.1:0" || c.Remote.Advertise != "" {
		t.Errorf("project layer took effect: remote %+v, workers %+v", c.Remote, c.Workers)
	}
	wantWarnings(t, c.Warnings,
		"remote.advertise is ignored: only the user config may set it",
		"remote.listen is ignored",
		"workers is ignored")
}

func TestRemoteValidate(t *testing.T) {
	t.Parallel()
	worker := "\n[[workers]]\nname = \"w\"\naddress = \"w.lan:7420\"\n"
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"listen not host:port", "[remote]\nlisten = \"7420\"\n", []string{"remote.listen", "host:port"}},
		{"listen port", "[remote]\nlisten = \"127.0.0.1:99999\"\n", []string{"remote.listen", "0 to 65535"}},
		{"every interface without advertise", "[remote]\nlisten = \"0.0.0.0:7420\"\n" + worker, []string{"remote.listen", "set remote.advertise"}},
		{"empty host without advertise", "[remote]\nlisten = \":7420\"\n" + worker, []string{"remote.listen", "set remote.advertise"}},
		{"advertise port zero", "[remote]\nadvertise = \"me.lan:0\"\n", []string{"remote.advertise", "1 to 65535"}},
		{"advertise without host", "[remote]\nadvertise = \":7420\"\n", []string{"remote.advertise", "no host"}},
		{"blank token file", "[remote]\ntoken_file = \"  \"\n", []string{"remote.token_file", "blank"}},
		{"cert without key", "[remote]\ntls_cert = \"c.pem\"\n", []string{"remote.tls_cert", "without tls_key"}},
		{"key without cert", "[remote]\ntls_key = \"k.pem\"\n", []string{"remote.tls_key", "without tls_cert"}},
		{"CA alone", "[remote]\ntls_ca = \"ca.pem\"\n", []string{"remote.tls_ca", "only with tls_cert and tls_key"}},
		{"heartbeat too fast", "[remote]\nheartbeat_ms = 99\n", []string{"remote.heartbeat_ms", "100 to 60000"}},
		{"heartbeat too slow", "[remote]\nheartbeat_ms = 60001\n", []string{"remote.heartbeat_ms", "100 to 60000"}},
		{"miss limit zero", "[remote]\nmiss_limit = 0\n", []string{"remote.miss_limit", "1 to 10"}},
		{"miss limit high", "[remote]\nmiss_limit = 11\n", []string{"remote.miss_limit", "1 to 10"}},
		{"nowhere to run", "[remote]\nrun_local = false\n", []string{"remote.run_local", "at least one [[workers]]"}},
		{"worker name case", "[[workers]]\nname = \"Build1\"\naddress = \"b:1\"\n", []string{"workers[Build1].name", "a-z, 0-9, _ and -"}},
		{"worker name dot", "[[workers]]\nname = \"b.1\"\naddress = \"b:1\"\n", []string{`workers["b.1"].name`, "a-z"}},
		{"worker without address", "[[workers]]\nname = \"b\"\n", []string{"workers[b].address", "missing"}},
		{"worker address without port", "[[workers]]\nname = \"b\"\naddress = \"build1.lan\"\n", []string{"workers[b].address", "host:port"}},
		{"worker address port zero", "[[workers]]\nname = \"b\"\naddress = \"build1.lan:0\"\n", []string{"workers[b].address", "1 to 65535"}},
		{"worker address without host", "[[workers]]\nname = \"b\"\naddress = \":7420\"\n", []string{"workers[b].address", "no host"}},
		{"capacity zero", "[[workers]]\nname = \"b\"\naddress = \"b:1\"\ncapacity = 0\n", []string{"workers[b].capacity", "1 to 64"}},
		{"capacity high", "[[workers]]\nname = \"b\"\naddress = \"b:1\"\ncapacity = 65\n", []string{"workers[b].capacity", "1 to 64"}},
		{"workspace path", "[[workers]]\nname = \"b\"\naddress = \"b:1\"\nworkspace = \"src/reasonix\"\n", []string{"workers[b].workspace", "is a path"}},
		{"absolute write", "[[workers]]\nname = \"b\"\naddress = \"b:1\"\nwrites = [\"/etc\"]\n", []string{"workers[b].writes", `"/etc" is absolute`}},
		{"escaping write", "[[workers]]\nname = \"b\"\naddress = \"b:1\"\nwrites = [\"src/../../x\"]\n", []string{"workers[b].writes", "leaves the workspace root"}},
		{"parent write", "[[workers]]\nname = \"b\"\naddress = \"b:1\"\nwrites = [\"..\"]\n", []string{"workers[b].writes", "leaves the workspace root"}},
		{"empty write", "[[workers]]\nname = \"b\"\naddress = \"b:1\"\nwrites = [\"\"]\n", []string{"workers[b].writes", "is empty"}},
		{"worker without name", "[[workers]]\naddress = \"b:1\"\n", []string{"workers: entry 1 has no name"}},
		{"worker twice in a file", "[[workers]]\nname = \"b\"\naddress = \"b:1\"\n[[workers]]\nname = \"b\"\naddress = \"c:1\"\n", []string{"workers: name \"b\" is declared twice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, opts := writeLayout(t, layout{user: tt.text})
			_, err := Load(opts)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Load error = %v, want a ValidationError", err)
			}
			if len(ve.Problems) != 1 {
				t.Fatalf("problems = %q, want exactly one", ve.Problems)
			}
			got := ve.Problems[0]
			if !strings.HasPrefix(got, f.user+": ") {
				t.Errorf("problem %q does not start with the file %q", got, f.user)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("problem %q does not contain %q", got, w)
				}
			}
		})
	}
}

func TestRemoteValidAccepted(t *testing.T) {
	t.Parallel()
	for name, text := range map[string]string{
		"full":                        workersUser,
		"loopback without advertise":  "[remote]\nlisten = \"127.0.0.1:7420\"\n[[workers]]\nname = \"w\"\naddress = \"127.0.0.1:7421\"\n",
		"every interface, no workers": "[remote]\nlisten = \"0.0.0.0:0\"\n",
		"whole workspace":             "[[workers]]\nname = \"w\"\naddress = \"w:1\"\nwrites = [\".\", \"./src\", \"a/../b\"]\n",
		"limits":                      "[remote]\nheartbeat_ms = 100\nmiss_limit = 10\n[[workers]]\nname = \"w\"\naddress = \"w:65535\"\ncapacity = 64\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, opts := writeLayout(t, layout{user: text})
			if _, err := Load(opts); err != nil {
				t.Fatalf("Load: %v", err)
			}
		})
	}
}

func TestRemotePathsResolved(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	t.Parallel()
	c, f := mustLoad(t, layout{explicit: "[remote]\ntoken_file = \"~/.reasonix/worker.token\"\ntls_cert = \"certs/a.crt\"\ntls_key = \"/abs/a.key\"\n"})
	if want := filepath.Join(home, ".reasonix", "worker.token"); c.Remote.TokenFile != want {
		t.Errorf("token_file = %q, want %q", c.Remote.TokenFile, want)
	}
	if want := filepath.Join(filepath.Dir(f.explicit), "certs", "a.crt"); c.Remote.TLSCert != want {
		t.Errorf("tls_cert = %q, want %q", c.Remote.TLSCert, want)
	}
	if c.Remote.TLSKey != "/abs/a.key" {
		t.Errorf("tls_key = %q", c.Remote.TLSKey)
	}
}

func TestShowRemoteAndWorkers(t *testing.T) {
	t.Parallel()
	c, f := mustLoad(t, layout{user: workersUser})
	out, err := c.Show()
	if err != nil {
		t.Fatal(err)
	}
	from := func(s string) string { return "  # from " + s }
	dir := filepath.Dir(f.user)
	for _, w := range []string{
		"\n[remote]\n",
		`listen = "0.0.0.0:7420"` + from(f.user),
		// Paths are shown, not redacted: the secret is in the file.
		`token_file = ` + QuoteString(filepath.Join(dir, "worker.token")) + from(f.user),
		`tls_key = ` + QuoteString(filepath.Join(dir, "tls", "node.key")) + from(f.user),
		`heartbeat_ms = 500` + from(f.user),
		`run_local = false` + from(f.user),
		"\n[[workers]]\nname = \"build1\"" + from(f.user),
		`writes = ["services/api", "docs"]` + from(f.user),
		"\n[[workers]]\nname = \"gpu_2\"" + from(f.user),
		`capacity = 4` + from("default"),
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	var back Config
	if _, err := toml.Decode(out, &back); err != nil {
		t.Fatalf("output does not parse: %v", err)
	}
	if len(back.Workers) != 2 || back.Workers[0].Capacity != 8 || back.Remote.RunLocal == nil || *back.Remote.RunLocal {
		t.Errorf("round trip lost values: %+v %+v", back.Remote, back.Workers)
	}
}

func TestWorkerToken(t *testing.T) {
	// Not parallel: it sets the environment.
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "  tok-from-file\n", 0o600)
	strict := write("strict", "tok-400", 0o400)
	open := write("open", "tok", 0o644)
	group := write("group", "tok", 0o640)
	empty := write("empty", " \n\t", 0o600)
	missing := filepath.Join(dir, "missing")

	tests := []struct {
		name, env, file string
		want            string
		err             []string
		unixOnly        bool
	}{
		{name: "env wins over the file", env: " tok-env \n", file: good, want: "tok-env"},
		{name: "env wins over a bad file", env: "tok-env", file: open, want: "tok-env"},
		{name: "file trimmed", file: good, want: "tok-from-file"},
		{name: "read-only file", file: strict, want: "tok-400"},
		{name: "blank env falls back to the file", env: "  ", file: good, want: "tok-from-file"},
		{name: "file readable by others", file: open, err: []string{"chmod 600", open, "0644"}, unixOnly: true},
		{name: "file readable by group", file: group, err: []string{"chmod 600", "0640"}, unixOnly: true},
		{name: "nothing set", err: []string{WorkerTokenEnv, "token_file"}},
		{name: "missing file", file: missing, err: []string{WorkerTokenEnv, missing, "does not exist"}},
		{name: "empty file", file: empty, err: []string{WorkerTokenEnv, empty, "empty"}},
		{name: "directory", file: dir, err: []string{"not a regular file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.unixOnly && runtime.GOOS == "windows" {
				t.Skip("no Unix permissions")
			}
			t.Setenv(WorkerTokenEnv, tt.env)
			got, err := WorkerToken(tt.file)
			if tt.err == nil {
				if err != nil || got != tt.want {
					t.Fatalf("WorkerToken = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("WorkerToken = %q, want an error", got)
			}
			if got != "" {
				t.Errorf("a token came with the error: %q", got)
			}
			for _, w := range tt.err {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestWorkerTokenFromOwnEnvironment: WorkerTokenFrom reads the variable
// through the getenv it is given, never the process environment.
func TestWorkerTokenFromOwnEnvironment(t *testing.T) {
	t.Setenv(WorkerTokenEnv, "tok-process")
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("tok-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	got, err := WorkerTokenFrom(func(k string) string { return env[k] }, file)
	if err != nil || got != "tok-file" {
		t.Errorf("without the variable: %q, %v; want the file's tok-file", got, err)
	}
	env[WorkerTokenEnv] = "tok-own"
	got, err = WorkerTokenFrom(func(k string) string { return env[k] }, file)
	if err != nil || got != "tok-own" {
		t.Errorf("with the variable: %q, %v; want tok-own", got, err)
	}
}

// TestPluginKeyFileResolved: a plugin's OAuth key file is found from any
// working directory: "~/" is the home, a relative path is beside the
// config that names it.
func TestPluginKeyFileResolved(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	t.Parallel()
	c, f := mustLoad(t, layout{explicit: `
[[plugins]]
name = "a"
type = "http"
url = "https://a.example/mcp"
oauth_grant = "client_credentials"
oauth_client_id = "c"
oauth_private_key_file = "~/keys/a.pem"
[[plugins]]
name = "b"
type = "http"
url = "https://b.example/mcp"
oauth_grant = "client_credentials"
oauth_client_id = "c"
oauth_private_key_file = "keys/b.pem"
`})
	if len(c.Plugins) != 2 {
		t.Fatalf("plugins: %+v", c.Plugins)
	}
	if want := filepath.Join(home, "keys", "a.pem"); c.Plugins[0].OAuthPrivateKeyFile != want {
		t.Errorf("a: %q, want %q", c.Plugins[0].OAuthPrivateKeyFile, want)
	}
	if want := filepath.Join(filepath.Dir(f.explicit), "keys", "b.pem"); c.Plugins[1].OAuthPrivateKeyFile != want {
		t.Errorf("b: %q, want %q", c.Plugins[1].OAuthPrivateKeyFile, want)
	}
}
