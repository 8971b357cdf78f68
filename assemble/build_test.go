package assemble

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/actors"
	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/kernel"
	"reasonix/core/config"
	"reasonix/core/provider"
	"reasonix/core/provider/providertest"
	"reasonix/core/session"
	"reasonix/core/skill"
)

// buildConfig writes a user config pointing at url into a fresh home and
// loads it for a fresh workspace. extra is appended to the config text.
func buildConfig(t *testing.T, url, extra string) (*config.Config, string) {
	t.Helper()
	home, cwd := t.TempDir(), t.TempDir()
	text := providertest.ConfigText(url, extra)
	if err := os.WriteFile(config.UserConfigPath(home), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Options{Home: home, ProjectDir: cwd})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, cwd
}

// runBuilt starts b's session on a quiet system, runs one turn of input
// and stops everything again.
func runBuilt(t *testing.T, b *actors.Built, input string) *event.TurnDone {
	t.Helper()
	sys := kernel.NewSystem(nil)
	bus := event.NewBus()
	sub := bus.Subscribe()
	defer sub.Close()
	b.Spec.Agent.Bus = bus
	sess, err := actors.StartSession(sys, b.Spec)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := sess.Close(5 * time.Second); err != nil {
			t.Errorf("close session: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	sess.Run(input)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done, err := actors.WaitTurn(ctx, sub, b.Spec.Agent.Session, nil)
	if err != nil {
		t.Fatalf("wait for turn: %v", err)
	}
	return done
}

func TestBuildRunsATurn(t *testing.T) {
	t.Parallel()
	srv := providertest.Start(t)
	srv.Push(providertest.Turn{Text: "hello back"})
	cfg, cwd := buildConfig(t, srv.URL(), "[agent]\nsystem_prompt = \"be brief\"\n")

	b, err := Build(cfg, BuildOptions{Cwd: cwd, MaxSteps: 3})
	if err != nil {
		t.Fatal(err)
	}
	if b.Spec.Fleet == nil || b.Spec.Fleet.NewAgent == nil {
		t.Error("a top-level session has no scheduler")
	}
	if b.Model.Provider.Name != "fake" || b.Model.Model != "fake-model" {
		t.Errorf("model = %s/%s, want fake/fake-model", b.Model.Provider.Name, b.Model.Model)
	}
	if dir := session.ProjectDir(cfg.Home, cwd); filepath.Dir(b.Spec.Transcript) != dir {
		t.Errorf("transcript %s is not in %s", b.Spec.Transcript, dir)
	}
	done := runBuilt(t, b, "hi")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if done.Status != event.StatusOK || done.Text != "hello back" {
		t.Errorf("turn = %s %q (%s), want ok %q", done.Status, done.Text, done.Error, "hello back")
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Model != "fake-model" || !strings.Contains(reqs[0].Messages[0].Content, "be brief") {
		t.Errorf("requests = %+v, want one to fake-model with the configured system prompt", reqs)
	}
	// The transcript format is core/session's; that the answer reached
	// the file is what matters here.
	data, err := os.ReadFile(b.Spec.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "hello back") {
		t.Errorf("transcript %s does not hold the answer:\n%s", b.Spec.Transcript, data)
	}
}

func TestBuildResumesASession(t *testing.T) {
	t.Parallel()
	srv := providertest.Start(t)
	srv.Push(providertest.Turn{Text: "second answer"})
	cfg, cwd := buildConfig(t, srv.URL(), "")
	const id = "20240101-000000-resumed"
	store, err := session.Create(session.ProjectDir(cfg.Home, cwd), session.Header{ID: id, Created: time.Now().UTC(), Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	history := []provider.Message{
		{Role: provider.RoleSystem, Content: "old system"},
		{Role: provider.RoleUser, Content: "first question"},
		{Role: provider.RoleAssistant, Content: "first answer"},
	}
	b, err := Build(cfg, BuildOptions{Cwd: cwd, Resume: &Resume{ID: id, Transcript: store, History: history}})
	if err != nil {
		_ = store.Close()
		t.Fatal(err)
	}
	if b.Spec.Agent.Session != id || b.Transcript != store || b.Spec.Transcript != store.Path() {
		t.Errorf("resumed session %q on %s, want %q on %s", b.Spec.Agent.Session, b.Spec.Transcript, id, store.Path())
	}
	done := runBuilt(t, b, "second question")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if done.Status != event.StatusOK {
		t.Fatalf("turn = %s (%s)", done.Status, done.Error)
	}
	var got []string
	for _, m := range srv.Requests()[0].Messages {
		got = append(got, m.Content)
	}
	want := []string{"old system", "first question", "first answer", "second question"}
	if !slices.Equal(got, want) {
		t.Errorf("request messages = %q, want %q", got, want)
	}
}

func TestBuildRefusesABadResume(t *testing.T) {
	t.Parallel()
	cfg, cwd := buildConfig(t, "http://127.0.0.1:1/v1", "")
	for _, tt := range []struct {
		name   string
		resume *Resume
	}{
		{"no id", &Resume{Transcript: &session.Store{}}},
		{"no transcript", &Resume{ID: "x"}},
		{"history without the system message", &Resume{ID: "x", Transcript: &session.Store{},
			History: []provider.Message{{Role: provider.RoleUser, Content: "q"}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Build(cfg, BuildOptions{Cwd: cwd, Resume: tt.resume})
			if err == nil {
				t.Fatal("Build accepted it")
			}
			if _, ok := errors.AsType[*SetupError](err); ok {
				t.Errorf("%v is a SetupError; a bad resume is the caller's bug", err)
			}
		})
	}
}

func TestBuildSetupErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		extra string
		opts  BuildOptions
		want  string
	}{
		{name: "unknown model", opts: BuildOptions{Model: "nope"}, want: `model: unknown model "nope"`},
		{name: "bad posture", opts: BuildOptions{PermissionMode: "sometimes"}, want: "--permission-mode: "},
		{name: "bad deny rule", opts: BuildOptions{Deny: []string{"Bash("}}, want: "[permissions]: "},
		{name: "unknown tool", extra: "[tools]\nenabled = [\"no_such_tool\"]\n", want: "[tools] enabled: "},
		{name: "missing prompt file", extra: "[agent]\nsystem_prompt_file = \"missing.md\"\n", want: "agent.system_prompt_file: "},
		{
			name:  "missing key",
			extra: "[[providers]]\nname = \"keyed\"\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\napi_key_env = \"RX_BUILD_TEST_UNSET_KEY_4D1\"\n",
			opts:  BuildOptions{Model: "keyed"},
			want:  "RX_BUILD_TEST_UNSET_KEY_4D1 is not set",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, cwd := buildConfig(t, "http://127.0.0.1:1/v1", tt.extra)
			o := tt.opts
			o.Cwd = cwd
			b, err := Build(cfg, o)
			if err == nil {
				_ = b.Close()
				t.Fatal("Build succeeded")
			}
			if _, ok := errors.AsType[*SetupError](err); !ok || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v (%T), want a SetupError containing %q", err, err, tt.want)
			}
			entries, _ := os.ReadDir(session.ProjectDir(cfg.Home, cwd))
			if len(entries) > 0 {
				t.Errorf("a refused session left %d transcript files", len(entries))
			}
		})
	}
}

func TestBuildProfile(t *testing.T) {
	t.Parallel()
	cfg, cwd := buildConfig(t, "http://127.0.0.1:1/v1", "")
	store, _ := skill.Load(SkillOptions(cfg, cwd))
	prof, err := store.Profile("explore")
	if err != nil {
		t.Fatal(err)
	}
	prof.Tools = append(slices.Clone(prof.Tools), "not_a_tool")
	b, err := Build(cfg, BuildOptions{Cwd: cwd, Profile: &prof, ReadOnly: true, Effort: "high"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Spec.Fleet != nil || len(b.Spec.MCP.Servers) > 0 {
		t.Error("a profile session has subagents or MCP servers of its own")
	}
	for _, name := range b.Spec.Agent.Tools.Names() {
		if tl, _ := b.Spec.Agent.Tools.Get(name); !tl.ReadOnly() || !prof.Allows(name) {
			t.Errorf("tool %q kept in a read-only %s session", name, prof.Name)
		}
	}
	if b.Effort != "high" || b.Spec.Agent.Effort != "high" {
		t.Errorf("effort = %q/%q, want the call's high", b.Effort, b.Spec.Agent.Effort)
	}
	if len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0], `"not_a_tool", which is not enabled`) {
		t.Errorf("warnings = %q", b.Warnings)
	}
	if !strings.Contains(b.Spec.Agent.System, prof.SystemPrompt()) {
		t.Error("the system prompt is not the profile's")
	}
}

func TestBuildSubagentFactory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, ask                string
		interactive, denyUnasked bool
	}{
		{name: "parent asks through the frontend", ask: "parent", interactive: true},
		{name: "allow", ask: "allow"},
		{name: "deny", ask: "deny", denyUnasked: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, cwd := buildConfig(t, "http://127.0.0.1:1/v1", "[agent]\nsubagent_ask = \""+tt.ask+"\"\n")
			b, err := Build(cfg, BuildOptions{Cwd: cwd, Interactive: true})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			reader, err := b.Spec.Fleet.NewAgent(event.TaskSpec{ID: "f1.1", Prompt: "look"})
			if err != nil {
				t.Fatal(err)
			}
			defer closeTranscript(t, reader)
			if reader.Provider != b.Spec.Agent.Provider {
				t.Error("a task on the parent's model opened a provider of its own")
			}
			for _, name := range reader.Tools.Names() {
				if tl, _ := reader.Tools.Get(name); !tl.ReadOnly() {
					t.Errorf("reader task has %q, which writes", name)
				}
			}
			if p := reader.Permissions; p.Interactive != tt.interactive || p.DenyUnasked != tt.denyUnasked {
				t.Errorf("permissions interactive=%t denyUnasked=%t, want %t %t", p.Interactive, p.DenyUnasked, tt.interactive, tt.denyUnasked)
			}

			writer, err := b.Spec.Fleet.NewAgent(event.TaskSpec{ID: "f1.2", Writer: true, WritePaths: []string{"src"}, Model: "other-model"})
			if err != nil {
				t.Fatal(err)
			}
			defer closeTranscript(t, writer)
			if writer.Model != "other-model" || writer.Provider == b.Spec.Agent.Provider {
				t.Errorf("writer task on %q shares the parent's provider", writer.Model)
			}
			again, err := b.Spec.Fleet.NewAgent(event.TaskSpec{ID: "f1.3", Model: "other-model"})
			if err != nil {
				t.Fatal(err)
			}
			defer closeTranscript(t, again)
			if again.Provider != writer.Provider {
				t.Error("a second task on the same model opened another provider")
			}
			if _, ok := writer.Tools.Get("write_file"); !ok {
				t.Error("writer task has no write_file")
			}
			if _, err := b.Spec.Fleet.NewAgent(event.TaskSpec{ID: "f1.4", Writer: true, WritePaths: []string{"../outside"}}); err == nil || !strings.Contains(err.Error(), "write_paths") {
				t.Errorf("a claim outside the workspace: err = %v", err)
			}
			if _, err := b.Spec.Fleet.NewAgent(event.TaskSpec{ID: "f1.5", Model: "nope"}); err == nil {
				t.Error("a task on an unknown model was built")
			} else if _, ok := errors.AsType[*SetupError](err); ok {
				t.Errorf("a task's bad model is a SetupError: %v", err)
			}
		})
	}
}

func closeTranscript(t *testing.T, a agent.AgentSpec) {
	t.Helper()
	if c, ok := a.Transcript.(interface{ Close() error }); ok {
		if err := c.Close(); err != nil {
			t.Errorf("close subagent transcript: %v", err)
		}
	}
}
