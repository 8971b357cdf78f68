//go:build linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/core/testenv"
)

// jailRun runs script with bash -c in s's jail, in dir.
func jailRun(t *testing.T, s *Sandbox, dir, script string) (string, error) {
	t.Helper()
	argv, err := s.Wrap(dir, []string{"bash", "-c", script})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	return string(out), err
}

// homeJail is a Reasonix home holding a config and every kind of secret, a
// worker token outside it, and a workspace, all in t.TempDir (so in /tmp,
// which the jail binds writable: the home's read-only bind has to win over
// it). The home lies one directory down, in h, so renaming its parent stays
// inside the test's directory.
type homeJail struct {
	base, root, home, token string
	secrets                 []string
}

func newHomeJail(t *testing.T) homeJail {
	t.Helper()
	testenv.NeedBwrap(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := homeJail{base: base, root: filepath.Join(base, "root"), home: filepath.Join(base, "h", "home"), token: filepath.Join(base, "worker.token")}
	mkdir(t, h.root)
	mkdir(t, filepath.Join(h.home, "mcp-oauth"))
	writeFile(t, filepath.Join(h.home, "config.toml"), "[sandbox]\nbash = \"enforce\"\n")
	writeFile(t, filepath.Join(h.home, ".env"), "DEEPSEEK_API_KEY=sk-env-secret\n")
	writeFile(t, filepath.Join(h.home, "mcp-grants.json"), `{"grant":"grants-secret"}`)
	writeFile(t, filepath.Join(h.home, "trust.json"), `{"trust":"trust-secret"}`)
	writeFile(t, filepath.Join(h.home, "mcp-oauth", "server.json"), `{"token":"oauth-secret"}`)
	writeFile(t, h.token, "worker-token-secret")
	h.secrets = []string{
		filepath.Join(h.home, ".env"), filepath.Join(h.home, "mcp-oauth"), filepath.Join(h.home, "mcp-grants.json"),
		filepath.Join(h.home, "trust.json"), h.token,
	}
	return h
}

func (h homeJail) sandbox(t *testing.T) *Sandbox {
	t.Helper()
	s, err := New(Options{
		Root: h.root, Home: h.home, Secrets: h.secrets, Bash: "enforce",
		LookupEnv: fakeEnv(map[string]string{"HOME": filepath.Join(h.base, "userhome")}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestJailHome runs real commands in the bubblewrap jail, as the whole
// workspace's sandbox and as a writer's, against the Reasonix home: they
// may read its config but change nothing in it, not even by renaming the
// directory above it, and they see none of the secrets.
func TestJailHome(t *testing.T) {
	t.Parallel()
	h := newHomeJail(t)
	whole := h.sandbox(t)
	mkdir(t, filepath.Join(h.root, "a"))
	writer, err := whole.Narrow([]string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(h.home, "config.toml")
	unchanged := func(t *testing.T) {
		t.Helper()
		if b, err := os.ReadFile(config); err != nil || string(b) != "[sandbox]\nbash = \"enforce\"\n" {
			t.Errorf("config.toml = %q, %v; want it unchanged", b, err)
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
		{name: "append to the config", script: `printf '[sandbox]\nbash = "off"\n' >> ` + config, check: unchanged},
		{name: "replace the config", script: "echo x > c.tmp && mv c.tmp " + config, check: unchanged},
		{name: "remove the config", script: "rm -f " + config, check: unchanged},
		{name: "create a file in the home", script: "echo x > " + filepath.Join(h.home, "new.toml"),
			check: absent(filepath.Join(h.home, "new.toml"))},
		{name: "rename the home's parent and plant a new home",
			script: "mv " + filepath.Dir(h.home) + " " + filepath.Join(h.base, "h2") + " && mkdir -p " + h.home +
				` && printf '[sandbox]\nbash = "off"\n' > ` + config,
			check: func(t *testing.T) {
				unchanged(t)
				absent(filepath.Join(h.base, "h2"))(t)
			}},
		{name: "the config may be read", script: "cat " + config, wantOK: true, wantOut: `bash = "enforce"`},
		// A secret file is covered by /dev/null, which reads as empty or,
		// on a mount without devices, not at all.
		{name: "the credentials read as nothing", script: "cat " + filepath.Join(h.home, ".env") + " | wc -c", wantOK: true,
			wantOut: "0", leak: "sk-env-secret"},
		{name: "the grants read as nothing", script: "cat " + filepath.Join(h.home, "mcp-grants.json") + " || true", wantOK: true,
			leak: "grants-secret"},
		{name: "the trust store reads as nothing", script: "cat " + filepath.Join(h.home, "trust.json") + " || true", wantOK: true,
			leak: "trust-secret"},
		{name: "the oauth tokens look empty", script: "ls -A " + filepath.Join(h.home, "mcp-oauth") + " | wc -l; cat " +
			filepath.Join(h.home, "mcp-oauth", "server.json"), leak: "oauth-secret"},
		{name: "a secret outside the home reads as nothing", script: "cat " + h.token + " || true", wantOK: true, leak: "worker-token-secret"},
		{name: "grep the home for keys", script: "grep -r secret " + h.home, leak: "secret\""},
	}
	for _, sb := range []struct {
		name string
		s    *Sandbox
	}{{"whole workspace", whole}, {"writer", writer}} {
		for _, tt := range tests {
			t.Run(sb.name+"/"+tt.name, func(t *testing.T) {
				out, err := jailRun(t, sb.s, h.root, tt.script)
				tt.verify(t, out, err)
			})
		}
	}
}

// TestJailHomeIsUserHome covers HOME being the Reasonix home itself: the
// home is bound read-only and the cache directory inside it writable
// again, after it.
func TestJailHomeIsUserHome(t *testing.T) {
	t.Parallel()
	h := newHomeJail(t)
	mkdir(t, filepath.Join(h.home, ".cache"))
	s, err := New(Options{
		Root: h.root, Home: h.home, Secrets: h.secrets, Bash: "enforce",
		LookupEnv: fakeEnv(map[string]string{"HOME": h.home}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := jailRun(t, s, h.root, "echo cached > "+filepath.Join(h.home, ".cache", "c")); err != nil {
		t.Fatalf("writing the cache in the home: %v\n%s", err, out)
	}
	if out, err := jailRun(t, s, h.root, "echo x >> "+filepath.Join(h.home, "config.toml")); err == nil {
		t.Fatalf("appending to the config succeeded:\n%s", out)
	}
	if out, _ := jailRun(t, s, h.root, "cat "+filepath.Join(h.home, ".env")); strings.Contains(out, "sk-env-secret") {
		t.Fatalf("the credentials leak: %s", out)
	}
}

// trustJail is a workspace in t.TempDir holding every trust-bearing path,
// with project memory beside them and .reasonix/autoresearch a symlink to
// .reasonix/commands.
func trustJail(t *testing.T, hooks bool) (string, *Sandbox) {
	t.Helper()
	testenv.NeedBwrap(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"reasonix.toml", ".mcp.json", ".reasonix/commands/x.md", ".reasonix/memory/m.md", ".git/config", "main.go"}
	if hooks {
		files = append(files, ".git/hooks/pre-commit")
	}
	for _, f := range files {
		mkdir(t, filepath.Dir(filepath.Join(root, f)))
		writeFile(t, filepath.Join(root, f), "original\n")
	}
	// A product-written directory that is a symlink into the commands
	// must not make them writable.
	symlink(t, "commands", filepath.Join(root, ".reasonix", "autoresearch"))
	s, err := New(Options{Root: root, Bash: "enforce"})
	if err != nil {
		t.Fatal(err)
	}
	return root, s
}

// TestJailTrustBearing runs real commands against the trust-bearing
// workspace paths: they are read-only, the project memory and ordinary
// files are not, and moving .git away to put a new one in its place fails.
func TestJailTrustBearing(t *testing.T) {
	t.Parallel()
	for _, hooks := range []bool{true, false} {
		name := "with a hooks directory"
		if !hooks {
			name = "without a hooks directory"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root, s := trustJail(t, hooks)
			unchanged := func(rel string) func(t *testing.T) {
				return func(t *testing.T) {
					if b, err := os.ReadFile(filepath.Join(root, rel)); err != nil || string(b) != "original\n" {
						t.Errorf("%s = %q, %v; want it unchanged", rel, b, err)
					}
				}
			}
			absent := func(rel string) func(t *testing.T) {
				return func(t *testing.T) {
					if _, err := os.Lstat(filepath.Join(root, rel)); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("%s exists on the host: %v", rel, err)
					}
				}
			}
			hook := func(t *testing.T) {
				if hooks {
					unchanged(".git/hooks/pre-commit")(t)
				} else {
					absent(".git/hooks/pre-commit")(t)
				}
			}
			tests := []struct {
				name   string
				script string
				wantOK bool
				check  func(t *testing.T)
			}{
				{name: "project config", script: "echo x >> reasonix.toml", check: unchanged("reasonix.toml")},
				{name: "project config edited in place", script: "sed -i s/original/evil/ reasonix.toml", check: unchanged("reasonix.toml")},
				{name: "project config removed", script: "rm -f reasonix.toml", check: unchanged("reasonix.toml")},
				{name: "mcp servers", script: "echo x > .mcp.json", check: unchanged(".mcp.json")},
				{name: "a command", script: "echo x > .reasonix/commands/x.md", check: unchanged(".reasonix/commands/x.md")},
				{name: "a new command", script: "echo x > .reasonix/commands/y.md", check: absent(".reasonix/commands/y.md")},
				{name: "a command through autoresearch", script: "echo x > .reasonix/autoresearch/x.md", check: unchanged(".reasonix/commands/x.md")},
				{name: "git config", script: "echo x >> .git/config", check: unchanged(".git/config")},
				{name: "git config through git", script: "git config --file .git/config core.hooksPath /tmp/evil", check: unchanged(".git/config")},
				{name: "a hook", script: "mkdir -p .git/hooks && echo 'rm -rf ~' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit", check: hook},
				{name: "another new hook", script: "mkdir -p .git/hooks && echo x > .git/hooks/post-checkout", check: absent(".git/hooks/post-checkout")},
				{name: "move .git away and make a new one",
					script: "mv .git .git-old && mkdir -p .git/hooks && echo x > .git/config && echo x > .git/hooks/pre-commit",
					check: func(t *testing.T) {
						unchanged(".git/config")(t)
						hook(t)
						absent(".git-old")(t)
					}},
				{name: "move .reasonix away", script: "mv .reasonix .r-old", check: absent(".r-old")},
				{name: "project memory", script: "echo note > .reasonix/memory/new.md", wantOK: true,
					check: func(t *testing.T) {
						if b, _ := os.ReadFile(filepath.Join(root, ".reasonix", "memory", "new.md")); string(b) != "note\n" {
							t.Errorf(".reasonix/memory/new.md = %q", b)
						}
					}},
				{name: "an ordinary file", script: "echo changed > main.go && mkdir -p pkg && echo x > pkg/p.go", wantOK: true,
					check: func(t *testing.T) {
						if b, _ := os.ReadFile(filepath.Join(root, "main.go")); string(b) != "changed\n" {
							t.Errorf("main.go = %q", b)
						}
					}},
				{name: "the rest of .git", script: "echo ref > .git/HEAD", wantOK: true},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					out, err := jailRun(t, s, root, tt.script)
					if tt.wantOK != (err == nil) {
						t.Fatalf("script %q: err = %v, want success %v; output:\n%s", tt.script, err, tt.wantOK, out)
					}
					if tt.check != nil {
						tt.check(t)
					}
				})
			}
		})
	}
}

// TestJailHomeInWorkspace covers a Reasonix home inside the workspace: the
// workspace is bound writable and the home read-only inside it.
func TestJailHomeInWorkspace(t *testing.T) {
	t.Parallel()
	testenv.NeedBwrap(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, ".reasonix-home")
	mkdir(t, home)
	writeFile(t, filepath.Join(home, "config.toml"), "original\n")
	writeFile(t, filepath.Join(home, ".env"), "KEY=sk-in-workspace\n")
	s, err := New(Options{Root: root, Home: home, Secrets: []string{filepath.Join(home, ".env")}, Bash: "enforce"})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := jailRun(t, s, root, "echo x > main.go"); err != nil {
		t.Fatalf("writing the workspace: %v\n%s", err, out)
	}
	for _, script := range []string{"echo x >> .reasonix-home/config.toml", "mv .reasonix-home h2", "rm -rf .reasonix-home"} {
		if out, err := jailRun(t, s, root, script); err == nil {
			t.Errorf("%q succeeded:\n%s", script, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(home, "config.toml")); err != nil || string(b) != "original\n" {
		t.Errorf("config.toml = %q, %v; want it unchanged", b, err)
	}
	if out, _ := jailRun(t, s, root, "cat .reasonix-home/.env; grep -r sk- . 2>&1"); strings.Contains(out, "sk-in-workspace") {
		t.Errorf("the credentials leak:\n%s", out)
	}
}
