package assemble

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"reasonix/core/mcp"
	"reasonix/core/testenv"
)

// TestProjectServerJail: the process of a stdio server the project
// declared runs in the bash jail with the workspace read-only and no
// network, unless its entry says network = true; a user's server that
// opted in (sandbox = true) may write the workspace. The server's command
// tries both; the jail decides.
func TestProjectServerJail(t *testing.T) {
	t.Parallel()
	testenv.NeedBwrap(t)
	bash := testenv.Need(t, "bash")
	cfg, cwd := buildConfig(t, "http://127.0.0.1:1", "")
	cfg.Sandbox.Bash = "enforce"
	sb, err := NewSandbox(cfg, cwd)
	if err != nil {
		t.Fatal(err)
	}
	jail := MCPJail(sb)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Each connection's first byte says whose it is: 'h' the jailed
	// command's, 'S' the test's own, dialled after the command ended, so
	// every connection of the command is accepted before it.
	firsts := make(chan byte, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b := make([]byte, 1)
			_, _ = c.Read(b)
			c.Close()
			firsts <- b[0]
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	for _, c := range []struct {
		name              string
		cfg               mcp.ServerConfig
		wrote, reachedNet bool
	}{
		{"project", mcp.ServerConfig{Project: true}, false, false},
		{"project with network", mcp.ServerConfig{Project: true, Network: true}, false, true},
		{"user sandbox", mcp.ServerConfig{Sandbox: true}, true, false},
	} {
		file := filepath.Join(cwd, "written")
		_ = os.Remove(file)
		script := "echo x > " + file + "; echo hi > /dev/tcp/127.0.0.1/" + strconv.Itoa(port) + "; exit 0"
		cmd, err := jail(c.cfg, mcp.StdioCommand{Command: bash, Args: []string{"-c", script}, Dir: cwd})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out, err := exec.Command(cmd.Command, cmd.Args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, out)
		}
		_, statErr := os.Stat(file)
		if wrote := statErr == nil; wrote != c.wrote {
			t.Errorf("%s: wrote the workspace = %v, want %v (%s)", c.name, wrote, c.wrote, out)
		}
		s, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = s.Write([]byte("S"))
		s.Close()
		got := false
		for b := range firsts {
			if b == 'S' {
				break
			}
			got = true
		}
		if got != c.reachedNet {
			t.Errorf("%s: reached the network = %v, want %v (%s)", c.name, got, c.reachedNet, out)
		}
	}
}
