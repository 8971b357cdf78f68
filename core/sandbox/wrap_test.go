package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeLookPath finds only the given absolute paths, keyed by the name asked
// for, and records every name asked.
type fakeLookPath struct {
	mu    sync.Mutex
	found map[string]string
	asked []string
}

func (f *fakeLookPath) look(name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, name)
	if p, ok := f.found[name]; ok {
		return p, nil
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", name)
}

func TestMode(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	argv := []string{"bash", "-c", "echo hi"}
	tests := []struct {
		name      string
		goos      string
		bash      string
		found     map[string]string
		wantMode  string
		wantAsked []string
		wantArgv0 string   // first element of the wrapped argv; "" when Wrap refuses
		wantErr   []string // substrings of Wrap's refusal
		wantNote  string   // substring of a note; "" means no notes
	}{
		{name: "linux with bwrap", goos: "linux", bash: "enforce", found: map[string]string{"bwrap": "/usr/bin/bwrap"},
			wantMode: ModeEnforce, wantAsked: []string{"bwrap"}, wantArgv0: "/usr/bin/bwrap"},
		{name: "linux default is enforce", goos: "linux", bash: "", found: map[string]string{"bwrap": "/opt/bin/bwrap"},
			wantMode: ModeEnforce, wantAsked: []string{"bwrap"}, wantArgv0: "/opt/bin/bwrap"},
		{name: "linux without bwrap", goos: "linux", bash: "enforce",
			wantMode: ModeUnavailable, wantAsked: []string{"bwrap"},
			wantErr:  []string{"bubblewrap", "apt install bubblewrap", `[sandbox] bash = "off"`},
			wantNote: "apt install bubblewrap"},
		{name: "linux off", goos: "linux", bash: "off", found: map[string]string{"bwrap": "/usr/bin/bwrap"},
			wantMode: ModeOff, wantArgv0: "bash", wantNote: `bash = "off"`},
		{name: "darwin with sandbox-exec", goos: "darwin", bash: "enforce", found: map[string]string{sandboxExec: sandboxExec},
			wantMode: ModeEnforce, wantAsked: []string{sandboxExec}, wantArgv0: sandboxExec},
		{name: "darwin ignores a sandbox-exec on PATH", goos: "darwin", bash: "enforce", found: map[string]string{"sandbox-exec": "/tmp/evil/sandbox-exec"},
			wantMode: ModeUnavailable, wantAsked: []string{sandboxExec},
			wantErr: []string{sandboxExec, `[sandbox] bash = "off"`}, wantNote: sandboxExec},
		{name: "windows enforce is ignored", goos: "windows", bash: "enforce", found: map[string]string{"bwrap": "/usr/bin/bwrap"},
			wantMode: ModeOff, wantArgv0: "bash", wantNote: "ignored on Windows"},
		{name: "windows default is ignored too", goos: "windows", bash: "",
			wantMode: ModeOff, wantArgv0: "bash", wantNote: "ignored on Windows"},
		{name: "windows off", goos: "windows", bash: "off",
			wantMode: ModeOff, wantArgv0: "bash", wantNote: `bash = "off"`},
		{name: "other systems have no backend", goos: "freebsd", bash: "enforce", found: map[string]string{"bwrap": "/usr/bin/bwrap"},
			wantMode: ModeUnavailable, wantErr: []string{"no bash sandbox for freebsd", `bash = "off"`}, wantNote: "freebsd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			look := &fakeLookPath{found: tt.found}
			s, err := New(Options{Root: root, Bash: tt.bash, GOOS: tt.goos, LookPath: look.look, LookupEnv: fakeEnv(nil)})
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Mode(); got != tt.wantMode {
				t.Errorf("Mode() = %q, want %q", got, tt.wantMode)
			}
			if !slices.Equal(look.asked, tt.wantAsked) {
				t.Errorf("LookPath asked for %q, want %q", look.asked, tt.wantAsked)
			}
			notes := strings.Join(s.Notes(), "\n")
			if (tt.wantNote == "") != (notes == "") || !strings.Contains(notes, tt.wantNote) {
				t.Errorf("Notes() = %q, want a note containing %q", notes, tt.wantNote)
			}
			got, err := s.Wrap(root, argv)
			if tt.wantArgv0 == "" {
				if !errors.Is(err, ErrUnavailable) {
					t.Fatalf("Wrap = %q, %v; want ErrUnavailable", got, err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Wrap refusal %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != tt.wantArgv0 || !slices.Equal(got[len(got)-len(argv):], argv) {
				t.Fatalf("Wrap = %q; want it to start with %q and end with %q", got, tt.wantArgv0, argv)
			}
			if tt.wantMode == ModeOff && !slices.Equal(got, argv) {
				t.Fatalf("Wrap in mode off = %q, want %q unchanged", got, argv)
			}
		})
	}
	t.Run("empty command", func(t *testing.T) {
		t.Parallel()
		s, err := New(Options{Root: root, Bash: "off"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Wrap(root, nil); err == nil {
			t.Fatal("Wrap accepted an empty command")
		}
	})
}

// bwrapFixture is a sandbox over real directories with a fake bwrap path,
// for checking the command line Wrap builds.
type bwrapFixture struct {
	base, root, home, extra, tmpdir, gocache, userCache, missingModcache, secrets, keyFile, outside string
}

func newBwrapFixture(t *testing.T, network bool) (bwrapFixture, *Sandbox) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := bwrapFixture{
		base:            base,
		root:            filepath.Join(base, "ws"),
		home:            filepath.Join(base, "rhome"),
		extra:           filepath.Join(base, "extra"),
		tmpdir:          filepath.Join(base, "tmpdir"),
		gocache:         filepath.Join(base, "gocache"),
		userCache:       filepath.Join(base, "uhome", ".cache"),
		missingModcache: filepath.Join(base, "modcache"),
		secrets:         filepath.Join(base, "ws", "secrets"),
		keyFile:         filepath.Join(base, "key"),
		outside:         filepath.Join(base, "outside"),
	}
	for _, d := range []string{f.root, f.home, f.extra, f.tmpdir, f.gocache, f.userCache, f.secrets, f.outside, filepath.Join(f.root, "sub")} {
		mkdir(t, d)
	}
	writeFile(t, f.keyFile, "k")
	s, err := New(Options{
		Root:       f.root,
		Home:       f.home,
		AllowWrite: []string{f.extra, filepath.Join(f.root, "sub")},
		ForbidRead: []string{f.secrets, f.keyFile, filepath.Join(base, "nope")},
		Network:    network,
		GOOS:       "linux",
		LookPath:   (&fakeLookPath{found: map[string]string{"bwrap": "/opt/bwrap"}}).look,
		LookupEnv: fakeEnv(map[string]string{
			"HOME": filepath.Join(base, "uhome"), "TMPDIR": f.tmpdir, "GOCACHE": f.gocache, "GOMODCACHE": f.missingModcache,
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return f, s
}

// flagArgs returns the operands of every occurrence of flag in argv (before
// "--"), n operands each, with the index of each occurrence.
func flagArgs(argv []string, flag string, n int) (ops [][]string, at []int) {
	for i := 0; i < len(argv); i++ {
		if argv[i] == "--" {
			break
		}
		if argv[i] == flag && i+n < len(argv) {
			ops = append(ops, argv[i+1:i+1+n])
			at = append(at, i)
			i += n
		}
	}
	return ops, at
}

func TestBwrapArgs(t *testing.T) {
	t.Parallel()
	for _, network := range []bool{false, true} {
		t.Run(fmt.Sprintf("network=%v", network), func(t *testing.T) {
			t.Parallel()
			f, s := newBwrapFixture(t, network)
			cmd := []string{"bash", "-c", "make test"}
			argv, err := s.Wrap("", cmd)
			if err != nil {
				t.Fatal(err)
			}
			if argv[0] != "/opt/bwrap" {
				t.Fatalf("argv[0] = %q", argv[0])
			}
			for _, flag := range []string{"--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"} {
				if !slices.Contains(argv, flag) {
					t.Errorf("argv lacks %s: %q", flag, argv)
				}
			}
			if caps, _ := flagArgs(argv, "--cap-drop", 1); len(caps) != 1 || caps[0][0] != "ALL" {
				t.Errorf("argv does not drop every capability: %q", argv)
			}
			if got := slices.Contains(argv, "--unshare-net"); got == network {
				t.Errorf("--unshare-net present = %v with network = %v", got, network)
			}
			wantTail := append([]string{"--chdir", f.root, "--"}, cmd...)
			if !slices.Equal(argv[len(argv)-len(wantTail):], wantTail) {
				t.Errorf("argv ends %q, want %q", argv[len(argv)-len(wantTail):], wantTail)
			}

			ro, roAt := flagArgs(argv, "--ro-bind", 2)
			binds, bindAt := flagArgs(argv, "--bind", 2)
			tmpfs, tmpfsAt := flagArgs(argv, "--tmpfs", 1)
			remount, _ := flagArgs(argv, "--remount-ro", 1)
			if len(ro) == 0 || !slices.Equal(ro[0], []string{"/", "/"}) {
				t.Fatalf("the first --ro-bind is %q, want / /", ro)
			}
			var bound []string
			for _, b := range binds {
				if b[0] != b[1] {
					t.Errorf("bind %q maps a path elsewhere", b)
				}
				bound = append(bound, b[0])
			}
			covered := func(p string) bool {
				return slices.ContainsFunc(bound, func(b string) bool { return within(b, p) })
			}
			for _, w := range []string{f.root, filepath.Join(f.root, "sub"), f.extra, f.tmpdir, f.gocache, f.userCache, "/tmp"} {
				if !covered(w) {
					t.Errorf("%s is not writable; binds %q", w, bound)
				}
			}
			// The home lies in /tmp, bound writable, so it is bound
			// read-only after it, and each directory between the two is
			// pinned by a bind onto itself so the home cannot be renamed
			// away and replaced.
			homeAt := slices.IndexFunc(ro, func(b []string) bool { return slices.Equal(b, []string{f.home, f.home}) })
			if homeAt < 0 || roAt[homeAt] < bindAt[slices.Index(bound, "/tmp")] {
				t.Errorf("the Reasonix home %s is not bound read-only after /tmp: %q", f.home, argv)
			}
			var pins []string
			for d := filepath.Dir(f.home); d != "/tmp"; d = filepath.Dir(d) {
				pins = append(pins, d)
			}
			for _, pin := range pins {
				if at := slices.Index(bound, pin); at < 0 || bindAt[at] > roAt[homeAt] {
					t.Errorf("%s, between /tmp and the home, is not pinned before the home's bind: %q", pin, argv)
				}
			}
			for _, b := range bound {
				if !slices.Contains(append([]string{f.root, f.extra, f.tmpdir, f.gocache, f.userCache, "/tmp"}, pins...), b) {
					t.Errorf("unexpected writable bind %s", b)
				}
				if b != "/tmp" && within("/tmp", b) && !slices.Contains(pins, b) {
					t.Errorf("%s is bound although /tmp, bound too, covers it", b)
				}
			}
			if slices.Contains(bound, filepath.Join(f.root, "sub")) || slices.Contains(bound, f.missingModcache) {
				t.Errorf("binds %q include a nested or missing directory", bound)
			}
			if len(tmpfs) != 1 || tmpfs[0][0] != f.secrets || len(remount) != 1 || remount[0][0] != f.secrets {
				t.Errorf("forbidden directory: --tmpfs %q --remount-ro %q, want %s", tmpfs, remount, f.secrets)
			}
			if !slices.ContainsFunc(ro, func(b []string) bool { return slices.Equal(b, []string{"/dev/null", f.keyFile}) }) {
				t.Errorf("forbidden file %s is not covered by /dev/null: %q", f.keyFile, ro)
			}
			if slices.ContainsFunc(ro, func(b []string) bool { return strings.HasSuffix(b[1], "nope") }) {
				t.Errorf("a missing forbid_read entry is mounted over: %q", ro)
			}
			// Order: read-only root, then writable binds, then hiding.
			lastBind := bindAt[len(bindAt)-1]
			if roAt[0] > bindAt[0] || lastBind > tmpfsAt[0] || lastBind > roAt[len(roAt)-1] {
				t.Errorf("mount order wrong: ro-bind at %v, bind at %v, tmpfs at %v", roAt, bindAt, tmpfsAt)
			}
		})
	}
}

func TestSeatbeltProfile(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, `we"ird\ws`)
	secret := filepath.Join(base, "ssh")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, secret, outside} {
		mkdir(t, d)
	}
	tmp, err := filepath.EvalSymlinks("/tmp")
	if err != nil {
		t.Skipf("no /tmp here: %v", err)
	}
	for _, network := range []bool{false, true} {
		t.Run(fmt.Sprintf("network=%v", network), func(t *testing.T) {
			t.Parallel()
			s, err := New(Options{
				Root: root, Home: filepath.Join(base, "rhome"), AllowWrite: []string{filepath.Join(base, "extra")},
				ForbidRead: []string{secret}, Network: network, GOOS: "darwin",
				LookPath:  (&fakeLookPath{found: map[string]string{sandboxExec: sandboxExec}}).look,
				LookupEnv: fakeEnv(map[string]string{"HOME": filepath.Join(base, "uhome")}),
			})
			if err != nil {
				t.Fatal(err)
			}
			p := s.SeatbeltProfile()
			if !strings.HasPrefix(p, "(version 1)\n(allow default)\n(deny file-write*)\n(allow file-write*") {
				t.Errorf("profile does not deny writes before allowing some:\n%s", p)
			}
			allowAt := strings.Index(p, "(allow file-write*")
			denyReadAt := strings.Index(p, "(deny file-read* file-write*")
			if denyReadAt < allowAt {
				t.Errorf("forbid_read denial missing or before the write allowances (last match wins):\n%s", p)
			}
			allow, deny := p[allowAt:denyReadAt], p[denyReadAt:]
			for _, w := range []string{
				root, filepath.Join(base, "extra"), tmp,
				filepath.Join(base, "uhome", ".cache"), filepath.Join(base, "uhome", "Library", "Caches"),
			} {
				if !strings.Contains(allow, "(subpath "+sbplString(w)+")") {
					t.Errorf("writes to %s are not allowed:\n%s", w, p)
				}
			}
			if !strings.Contains(allow, `(literal "/dev/null")`) {
				t.Errorf("writes to /dev/null are not allowed:\n%s", p)
			}
			if !strings.Contains(allow, `we\"ird\\ws`) {
				t.Errorf("quote and backslash in a path are not escaped:\n%s", p)
			}
			if strings.Contains(p, "(allow file-write*\n  (subpath "+sbplString(filepath.Join(base, "rhome"))) {
				t.Errorf("writes to the Reasonix home are allowed:\n%s", p)
			}
			if strings.Contains(p, sbplString(outside)) {
				t.Errorf("profile mentions %s, which is no root", outside)
			}
			if !strings.Contains(deny, "(subpath "+sbplString(secret)+")") {
				t.Errorf("reads of %s are not denied:\n%s", secret, p)
			}
			if got := strings.Contains(p, "(deny network*)"); got == network {
				t.Errorf("network denied = %v with network = %v:\n%s", got, network, p)
			}
			if err := balanced(p); err != nil {
				t.Errorf("profile is not well formed: %v\n%s", err, p)
			}
			argv, err := s.Wrap(root, []string{"bash", "-c", "x"})
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{sandboxExec, "-p", p, "--", "bash", "-c", "x"}; !slices.Equal(argv, want) {
				t.Errorf("Wrap = %q, want %q", argv, want)
			}
		})
	}
}

// balanced checks that the profile's parentheses pair up outside string
// and regex literals, the first thing sandbox-exec would reject.
func balanced(p string) error {
	depth := 0
	inString := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case inString && c == '\\':
			i++
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				return fmt.Errorf("unmatched ) at %d", i)
			}
		}
	}
	if inString || depth != 0 {
		return fmt.Errorf("unterminated: in string %v, depth %d", inString, depth)
	}
	return nil
}

func TestWritableDirsSkipsMissing(t *testing.T) {
	t.Parallel()
	f, s := newBwrapFixture(t, false)
	if err := os.Remove(f.gocache); err != nil {
		t.Fatal(err)
	}
	for _, d := range s.writableDirs(true) {
		if d == f.gocache {
			t.Fatalf("writableDirs(true) = %q includes the removed %s", s.writableDirs(true), f.gocache)
		}
	}
	if !slices.ContainsFunc(s.writableDirs(false), func(d string) bool { return within(d, f.gocache) }) {
		t.Fatalf("writableDirs(false) = %q leaves out %s", s.writableDirs(false), f.gocache)
	}
}

// TestSeatbeltProtections checks the profile's rules for the Reasonix home
// (here also HOME, so its cache is writable again), secrets and the
// trust-bearing workspace paths, and their order: Seatbelt applies the
// last rule that matches.
func TestSeatbeltProtections(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, home, token := filepath.Join(base, "ws"), filepath.Join(base, "rhome"), filepath.Join(base, "worker.token")
	for _, d := range []string{".git", ".reasonix/memory", "src"} {
		mkdir(t, filepath.Join(root, d))
	}
	writeFile(t, filepath.Join(root, "reasonix.toml"), "x")
	writeFile(t, filepath.Join(root, ".git", "config"), "x")
	mkdir(t, filepath.Join(home, ".cache"))
	writeFile(t, filepath.Join(home, ".env"), "k")
	writeFile(t, token, "t")
	s, err := New(Options{
		Root: root, Home: home, Secrets: []string{filepath.Join(home, ".env"), token}, GOOS: "darwin",
		LookPath:  (&fakeLookPath{found: map[string]string{sandboxExec: sandboxExec}}).look,
		LookupEnv: fakeEnv(map[string]string{"HOME": home}),
	})
	if err != nil {
		t.Fatal(err)
	}
	sub := func(p string) string { return "(subpath " + sbplString(p) + ")" }
	lit := func(p string) string { return "(literal " + sbplString(p) + ")" }
	// at returns the position, among the profile's rules, of the first
	// rule after the one at from with head that names every filter, or -1.
	at := func(p string, from int, head string, filters ...string) int {
		for i, r := range strings.Split(p, "\n(") {
			r = "(" + strings.TrimPrefix(r, "(")
			if i <= from || !strings.HasPrefix(r, "("+head+"\n") && !strings.HasPrefix(r, "("+head+" ") {
				continue
			}
			if !slices.ContainsFunc(filters, func(f string) bool { return !strings.Contains(r, f) }) {
				return i
			}
		}
		return -1
	}
	n, err := s.Narrow([]string{"src"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		s      *Sandbox
		memory bool
		pins   []string // directories that may not be removed or renamed
	}{
		{"whole workspace", s, true, []string{lit(base), lit(root), lit(filepath.Join(root, ".git"))}},
		// The workspace is not writable for a writer, so only what lies
		// above it needs pinning.
		{"writer of src", n, false, []string{lit(base)}},
	} {
		p := tt.s.SeatbeltProfile()
		if err := balanced(p); err != nil {
			t.Fatalf("%s: profile is not well formed: %v\n%s", tt.name, err, p)
		}
		allow := at(p, -1, "allow file-write*")
		homeDeny := at(p, allow, "deny file-write*", sub(home))
		cache := at(p, homeDeny, "allow file-write*", sub(filepath.Join(home, ".cache")))
		trust := at(p, cache, "deny file-write*", sub(filepath.Join(root, "reasonix.toml")), sub(filepath.Join(root, ".git", "config")),
			sub(filepath.Join(root, ".git", "hooks")), sub(filepath.Join(root, ".reasonix")))
		memory := at(p, trust, "allow file-write*", sub(filepath.Join(root, ".reasonix", "memory")))
		pins := at(p, trust, "deny file-write-unlink", tt.pins...)
		secrets := at(p, pins, "deny file-read* file-write*", sub(filepath.Join(home, ".env")), sub(token))
		if allow < 0 || homeDeny < 0 || cache < 0 || trust < 0 || pins < 0 || secrets < 0 {
			t.Errorf("%s: rules missing or out of order (allow %d, home %d, cache %d, trust %d, pins %d, secrets %d):\n%s",
				tt.name, allow, homeDeny, cache, trust, pins, secrets, p)
		}
		if tt.memory != (memory >= 0) {
			t.Errorf("%s: project memory allowed at %d, trust-bearing paths denied at %d; want it writable again = %v:\n%s",
				tt.name, memory, trust, tt.memory, p)
		}
		if strings.Contains(p, sbplString(filepath.Join(root, ".mcp.json"))) {
			t.Errorf("%s: the profile names .mcp.json, which does not exist (the jail cannot bind it either):\n%s", tt.name, p)
		}
	}
}
