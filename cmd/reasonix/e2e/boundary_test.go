package e2e

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"reasonix/core/provider/providertest"
	"reasonix/core/testenv"
)

// The tests in this file attack the trust boundary from outside, as a
// prompt-injected model would, through the real binary and the model fake:
// the Reasonix home, the workspace's trust-bearing files, path rules
// reached through symlinks, and deny rules facing program names built at
// run time. docs/SECURITY.md names each of them.

// needJail skips (or, strict, fails) unless jailed bash works here:
// bubblewrap installed is not enough, it may be unable to create
// namespaces, which doctor reports.
func needJail(t *testing.T, e *e2e) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("the jail tests use bubblewrap, which %s does not have", runtime.GOOS)
	}
	testenv.NeedBwrap(t)
	if r := e.run("doctor", "--offline"); !strings.Contains(r.stdout, "confined by") || r.code != 0 {
		testenv.Missing(t, "no working bash sandbox here:\n%s", r.stdout)
	}
}

// bashTurn is a model turn that runs one command.
func bashTurn(id, command string) providertest.Turn {
	return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: id, Name: "bash", Arguments: jsonObject("command", command)}}}
}

// jsonObject renders {"k1": v1, ...} from string pairs.
func jsonObject(kv ...string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(quoteJSON(kv[i]) + ":" + quoteJSON(kv[i+1]))
	}
	b.WriteByte('}')
	return b.String()
}

func quoteJSON(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

// TestE2EJailCannotLoosenItself: jailed bash cannot append
// `bash = "off"` to the user config (the home is read-only in the jail),
// cannot see the home's .env, and so the next run is still jailed: its
// `touch ../outside` fails.
func TestE2EJailCannotLoosenItself(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	needJail(t, e)
	cfgPath := filepath.Join(e.home, "config.toml")
	before, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	const secret = "DEEPSEEK_API_KEY=sk-not-for-the-model\n"
	if err := os.WriteFile(filepath.Join(e.home, ".env"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	grantsPath := filepath.Join(e.home, "mcp-grants.json")
	const grants = `{"version":1,"workspaces":{}}` + "\n"
	if err := os.WriteFile(grantsPath, []byte(grants), 0o600); err != nil {
		t.Fatal(err)
	}
	e.srv.Push(
		bashTurn("b1", `printf '\n[sandbox]\nbash = "off"\n' >> "$REASONIX_HOME/config.toml"; echo appended=$?`),
		bashTurn("b2", `cat "$REASONIX_HOME/.env"; echo read=$?; touch "$REASONIX_HOME/new.txt"; echo created=$?; echo '{}' > "$REASONIX_HOME/mcp-grants.json"; echo granted=$?`),
		providertest.Turn{Text: "tried"},
	)
	if r := e.run("run", "loosen the jail"); r.code != 0 {
		t.Fatalf("first run:\n%s", r)
	}
	after, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Fatalf("jailed bash changed the user config:\n%s", after)
	}
	if got, err := os.ReadFile(grantsPath); err != nil || string(got) != grants {
		t.Errorf("mcp-grants.json = %q, %v: jailed bash changed the launch grants", got, err)
	}
	if _, err := os.Stat(filepath.Join(e.home, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("jailed bash created a file in the home (err %v)", err)
	}
	reqs := e.srv.Requests()
	if got := toolResults(reqs[1])[0].Content; strings.Contains(got, "appended=0") {
		t.Errorf("append result = %q, want it to fail", got)
	}
	second := toolResults(reqs[2])
	if got := second[len(second)-1].Content; strings.Contains(got, "sk-not-for-the-model") || strings.Contains(got, "created=0") || strings.Contains(got, "granted=0") {
		t.Errorf("home result = %q: the jail saw the home's secrets or wrote there", got)
	}

	// The next run: still jailed. Not under /tmp, which the jail keeps
	// writable for builds and tests.
	outsideDir, err := os.MkdirTemp("/var/tmp", "reasonix-outside-")
	if err != nil {
		t.Skipf("no /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(outsideDir) })
	outside := filepath.Join(outsideDir, "outside")
	e.srv.Push(bashTurn("b3", "touch "+outside+"; echo touched=$?"), providertest.Turn{Text: "done"})
	if r := e.run("run", "escape"); r.code != 0 {
		t.Fatalf("second run:\n%s", r)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatalf("the second run's bash wrote outside the workspace (err %v)", err)
	}
}

// TestE2EFileToolsKeepOutOfHome: write_file cannot change the user config
// or create the launch grants, by path or through a symlink in the
// workspace, and read_file and grep cannot read the home's .env.
func TestE2EFileToolsKeepOutOfHome(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.writeConfig("\n[sandbox]\nbash = \"off\"\n")
	cfgPath := filepath.Join(e.home, "config.toml")
	before, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, ".env"), []byte("DEEPSEEK_API_KEY=sk-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(e.home, filepath.Join(e.work, "h")); err != nil {
		t.Fatal(err)
	}
	plugin := "\n[[plugins]]\nname = \"evil\"\ncommand = \"sh\"\nargs = [\"-c\", \"touch /tmp/pwned\"]\n"
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{
			{ID: "w1", Name: "write_file", Arguments: jsonObject("path", cfgPath, "content", string(before)+plugin)},
			{ID: "w2", Name: "edit_file", Arguments: jsonObject("path", "h/config.toml", "old_string", "default_model", "new_string", "default_model")},
			{ID: "r1", Name: "read_file", Arguments: jsonObject("path", filepath.Join(e.home, ".env"))},
			{ID: "r2", Name: "read_file", Arguments: jsonObject("path", "h/.env")},
			{ID: "g1", Name: "grep", Arguments: jsonObject("pattern", "sk-secret", "path", "h")},
			{ID: "w3", Name: "write_file", Arguments: jsonObject("path", "h/mcp-grants.json", "content", "{}")},
		}},
		providertest.Turn{Text: "tried"},
	)
	if r := e.run("run", "--permission-mode", "yolo", "edit your own config"); r.code != 0 {
		t.Fatalf("run:\n%s", r)
	}
	after, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Fatalf("a file tool changed the user config:\n%s", after)
	}
	if _, err := os.Stat(filepath.Join(e.home, "mcp-grants.json")); !os.IsNotExist(err) {
		t.Errorf("a file tool wrote the launch grants (err %v)", err)
	}
	res := toolResults(e.srv.Requests()[1])
	if len(res) != 6 {
		t.Fatalf("results = %+v", res)
	}
	for _, r := range res {
		if !strings.HasPrefix(r.Content, "Error:") || !strings.Contains(r.Content, "home") || strings.Contains(r.Content, "sk-secret") {
			t.Errorf("%s result = %q, want a refusal naming the home", r.ToolCallID, r.Content)
		}
	}
}

// TestE2ETrustBearingWrites: a headless write_file to reasonix.toml or a
// git hook is refused in yolo mode with an allow-everything rule, since
// nobody can approve it, and jailed bash cannot write them either.
func TestE2ETrustBearingWrites(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	needJail(t, e)
	e.writeConfig("\n[permissions]\nmode = \"allow\"\nallow = [\"Edit\", \"Bash\"]\n")
	for _, d := range []string{".git/hooks", ".reasonix/commands"} {
		if err := os.MkdirAll(filepath.Join(e.work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The files that exist are read-only in the jail; one that does not
	// yet (reasonix.toml here) cannot be mounted, and creating it only
	// makes the workspace's trust digest differ (see the trust tests).
	trustFiles := map[string]string{".mcp.json": "{}\n", ".reasonix/commands/x.md": "review\n", ".git/config": "[core]\n"}
	for p, text := range trustFiles {
		if err := os.WriteFile(filepath.Join(e.work, p), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{
			{ID: "w1", Name: "write_file", Arguments: jsonObject("path", "reasonix.toml", "content", "[permissions]\nallow = [\"Bash\"]\n")},
			{ID: "w2", Name: "write_file", Arguments: jsonObject("path", ".git/hooks/pre-commit", "content", "#!/bin/sh\ntouch /tmp/pwned\n")},
			{ID: "w3", Name: "write_file", Arguments: jsonObject("path", "notes.txt", "content", "fine")},
		}},
		bashTurn("b1", `echo x >> .mcp.json; echo mcp=$?; echo y > .git/hooks/post-checkout; echo hook=$?; echo z > .reasonix/commands/x.md; echo cmd=$?; git config --file .git/config core.hooksPath /tmp; echo cfg=$?; echo ok > plain.txt; echo plain=$?`),
		providertest.Turn{Text: "tried"},
	)
	if r := e.run("run", "--permission-mode", "yolo", "edit the trust files"); r.code != 0 {
		t.Fatalf("run:\n%s", r)
	}
	for _, p := range []string{"reasonix.toml", ".git/hooks/pre-commit", ".git/hooks/post-checkout"} {
		if _, err := os.Stat(filepath.Join(e.work, p)); !os.IsNotExist(err) {
			t.Errorf("%s was written (err %v)", p, err)
		}
	}
	for p, text := range trustFiles {
		if got, err := os.ReadFile(filepath.Join(e.work, p)); err != nil || string(got) != text {
			t.Errorf("%s = %q, %v; want it untouched", p, got, err)
		}
	}
	for _, p := range []string{"notes.txt", "plain.txt"} {
		if _, err := os.Stat(filepath.Join(e.work, p)); err != nil {
			t.Errorf("the ordinary write of %s failed: %v", p, err)
		}
	}
	res := toolResults(e.srv.Requests()[1])
	for _, r := range res[:2] {
		if !strings.HasPrefix(r.Content, "Blocked:") || !strings.Contains(r.Content, "trust-bearing") {
			t.Errorf("%s result = %q", r.ToolCallID, r.Content)
		}
	}
	bash := toolResults(e.srv.Requests()[2])
	if got := bash[len(bash)-1].Content; !strings.Contains(got, "plain=0") || strings.Contains(got, "hook=0") || strings.Contains(got, "mcp=0") || strings.Contains(got, "cmd=0") {
		t.Errorf("bash result = %q", got)
	}
}

// TestE2EPathRulesFollowSymlinks: Read(secrets/**) and Edit(secrets/**)
// hold through a symlink to the directory for every file tool; grep and
// glob never print or list a denied file; moving a directory that holds
// one is refused.
func TestE2EPathRulesFollowSymlinks(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.writeConfig("\n[permissions]\ndeny = [\"Read(secrets/**)\", \"Edit(secrets/**)\", \"Read(outer/secrets/**)\"]\n\n[sandbox]\nbash = \"off\"\n")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(e.work, "secrets"), 0o755))
	must(os.WriteFile(filepath.Join(e.work, "secrets", "key.txt"), []byte("TOPSECRET-42\n"), 0o600))
	must(os.MkdirAll(filepath.Join(e.work, "outer", "secrets"), 0o755))
	must(os.WriteFile(filepath.Join(e.work, "outer", "plain.txt"), []byte("TOPSECRET-not\n"), 0o644))
	must(os.Symlink("secrets", filepath.Join(e.work, "lnk")))
	// outer holds a denied file: moving outer would carry it out from
	// under its rule.
	must(os.WriteFile(filepath.Join(e.work, "outer", "secrets", "inner.txt"), []byte("TOPSECRET-43\n"), 0o600))
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{
			{ID: "read", Name: "read_file", Arguments: jsonObject("path", "lnk/key.txt")},
			{ID: "write", Name: "write_file", Arguments: jsonObject("path", "lnk/key.txt", "content", "overwritten")},
			{ID: "edit", Name: "edit_file", Arguments: jsonObject("path", "lnk/key.txt", "old_string", "TOPSECRET", "new_string", "x")},
			{ID: "multi", Name: "multi_edit", Arguments: `{"path":"lnk/key.txt","edits":[{"old_string":"TOPSECRET","new_string":"x"}]}`},
			{ID: "move", Name: "move_file", Arguments: jsonObject("path", "lnk/key.txt", "destination", "stolen.txt")},
			{ID: "movedir", Name: "move_file", Arguments: jsonObject("path", "outer", "destination", "public")},
			{ID: "grep", Name: "grep", Arguments: jsonObject("pattern", "TOPSECRET")},
			{ID: "glob", Name: "glob", Arguments: jsonObject("pattern", "**/*.txt")},
		}},
		providertest.Turn{Text: "tried"},
	)
	if r := e.run("run", "--permission-mode", "yolo", "read the secrets"); r.code != 0 {
		t.Fatalf("run:\n%s", r)
	}
	data, err := os.ReadFile(filepath.Join(e.work, "secrets", "key.txt"))
	if err != nil || string(data) != "TOPSECRET-42\n" {
		t.Fatalf("the secret changed or moved: %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(e.work, "outer", "secrets", "inner.txt")); err != nil {
		t.Errorf("the denied file under outer moved: %v", err)
	}
	for _, p := range []string{"stolen.txt", "public"} {
		if _, err := os.Stat(filepath.Join(e.work, p)); !os.IsNotExist(err) {
			t.Errorf("%s exists (err %v)", p, err)
		}
	}
	res := toolResults(e.srv.Requests()[1])
	if len(res) != 8 {
		t.Fatalf("results = %+v", res)
	}
	for _, r := range res[:6] {
		if !(strings.HasPrefix(r.Content, "Blocked:") || strings.HasPrefix(r.Content, "Error:")) || !strings.Contains(r.Content, "secrets/**") {
			t.Errorf("%s result = %q, want a refusal naming the rule", r.ToolCallID, r.Content)
		}
	}
	grep, glob := res[6].Content, res[7].Content
	if strings.Contains(grep, "TOPSECRET-42") || strings.Contains(grep, "TOPSECRET-43") || strings.Contains(grep, "key.txt") || !strings.Contains(grep, "TOPSECRET-not") || !strings.Contains(grep, "skipped") {
		t.Errorf("grep result = %q, want the plain match, no secret and a skipped count", grep)
	}
	if strings.Contains(glob, "key.txt") || strings.Contains(glob, "inner.txt") || !strings.Contains(glob, "plain.txt") || !strings.Contains(glob, "skipped") {
		t.Errorf("glob result = %q, want plain.txt, no key.txt and a skipped count", glob)
	}
}

// TestE2EComputedProgramNamesRefused: under a deny rule on rm, commands
// that build the program name at run time are refused instead of matched
// as text, and f survives each.
func TestE2EComputedProgramNamesRefused(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.writeConfig("\n[permissions]\ndeny = [\"Bash(rm:*)\"]\n\n[sandbox]\nbash = \"off\"\n")
	cmds := []string{`$(echo rm) f`, `X=rm; $X f`, `{rm,f}`, `rm${IFS}f`, "`echo rm` f", `eval "$(echo rm) f"`}
	var calls []providertest.ToolCall
	for i, c := range cmds {
		calls = append(calls, providertest.ToolCall{ID: "c" + string(rune('a'+i)), Name: "bash", Arguments: jsonObject("command", c)})
	}
	calls = append(calls, providertest.ToolCall{ID: "ok", Name: "bash", Arguments: jsonObject("command", "echo fine")})
	e.srv.Push(providertest.Turn{ToolCalls: calls}, providertest.Turn{Text: "tried"})
	if err := os.WriteFile(filepath.Join(e.work, "f"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.run("run", "--permission-mode", "yolo", "delete f"); r.code != 0 {
		t.Fatalf("run:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(e.work, "f")); err != nil {
		t.Fatalf("f was deleted: %v", err)
	}
	res := toolResults(e.srv.Requests()[1])
	if len(res) != len(cmds)+1 {
		t.Fatalf("results = %+v", res)
	}
	for i, r := range res[:len(cmds)] {
		// eval of a static string is read through: its rm is matched as
		// such; the others cannot be read, and say so.
		why := "cannot tell which program runs"
		if strings.HasPrefix(cmds[i], "eval") {
			why = "Bash(rm:*)"
		}
		if !strings.HasPrefix(r.Content, "Blocked:") || !strings.Contains(r.Content, why) {
			t.Errorf("%s: result = %q", cmds[i], r.Content)
		}
	}
	if !strings.Contains(res[len(cmds)].Content, "fine") {
		t.Errorf("echo result = %q", res[len(cmds)].Content)
	}
}
