package actors

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/kernel"
	"reasonix/actors/mcpconn"
	"reasonix/core/mcp"
	"reasonix/core/provider"
	"reasonix/core/provider/openai"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

// waitBound is how long a test waits for something that should happen;
// it only bounds a failure, it never paces a success.
const waitBound = 30 * time.Second

// mcpHarness is a quiet actor system with one session that has MCP
// servers, against the model fake.
type mcpHarness struct {
	t    *testing.T
	srv  *providertest.Server
	sys  *kernel.System
	bus  *event.Bus
	sub  *event.Subscription
	sess *Session
	reg  *tool.Registry
	id   string
	seen []event.Event
	once sync.Once
}

// testSpec is an MCP spec with quick reconnection for tests.
func testSpec(t *testing.T, servers ...mcpconn.MCPServer) mcpconn.MCPSpec {
	return mcpconn.MCPSpec{
		Servers:        servers,
		StartupTimeout: waitBound,
		ConnectTimeout: waitBound,
		Backoff:        mcpconn.Backoff{Base: 20 * time.Millisecond, Max: 200 * time.Millisecond, GiveUp: 3},
		Root:           t.TempDir(),
		Client:         mcp.Implementation{Name: "reasonix-test", Version: "0"},
	}
}

func newMCPHarness(t *testing.T, spec mcpconn.MCPSpec, tools ...tool.Tool) *mcpHarness {
	t.Helper()
	return newMCPHarnessWith(t, spec, agent.Permissions{}, tools...)
}

// newMCPHarnessWith is newMCPHarness with a permission gate.
func newMCPHarnessWith(t *testing.T, spec mcpconn.MCPSpec, perms agent.Permissions, tools ...tool.Tool) *mcpHarness {
	t.Helper()
	srv := providertest.Start(t)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	p, err := openai.New(provider.Config{Name: "fake", Kind: "openai", BaseURL: srv.URL(), Model: "fake-model",
		MaxRetries: -1, HTTPClient: &http.Client{Transport: tr}})
	must(t, err)
	reg, err := tool.NewRegistry(tools...)
	must(t, err)
	sys := kernel.NewSystem(nil)
	bus := event.NewBus()
	h := &mcpHarness{t: t, srv: srv, sys: sys, bus: bus, sub: bus.Subscribe(), reg: reg, id: "m1"}
	h.sess, err = StartSession(sys, SessionSpec{Agent: agent.AgentSpec{
		Session: h.id, Provider: p, Model: "fake-model", Tools: reg, System: "sys",
		ToolTimeout: waitBound, Bus: bus, Permissions: perms,
	}, MCP: spec})
	must(t, err)
	t.Cleanup(h.close)
	return h
}

// close stops the session and the system; a test may call it before its
// cleanup does, to look at what the stop left behind.
func (h *mcpHarness) close() {
	h.once.Do(h.stop)
}

func (h *mcpHarness) stop() {
	h.sub.Close()
	if err := h.sess.Close(10 * time.Second); err != nil {
		h.t.Errorf("close session: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := h.sys.Shutdown(ctx); err != nil {
		h.t.Errorf("shutdown: %v", err)
	}
}

// next reads events until match accepts one; every event read is kept in
// h.seen.
func (h *mcpHarness) next(what string, match func(event.Event) bool) event.Event {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	for {
		e, err := h.sub.Next(ctx)
		if err != nil {
			h.t.Fatalf("waiting for %s: %v", what, err)
		}
		h.seen = append(h.seen, e)
		if match(e) {
			return e
		}
	}
}

// waitServer waits for the server to report state.
func (h *mcpHarness) waitServer(name, state string) *event.MCPServerUpdated {
	h.t.Helper()
	return h.next(name+" "+state, func(e event.Event) bool {
		u, ok := e.(*event.MCPServerUpdated)
		return ok && u.Server == name && u.State == state
	}).(*event.MCPServerUpdated)
}

func (h *mcpHarness) turn(input string) *event.TurnDone {
	h.t.Helper()
	h.sess.Run(input)
	return h.next("turn_done", func(e event.Event) bool {
		td, ok := e.(*event.TurnDone)
		return ok && td.Session == h.id
	}).(*event.TurnDone)
}

func (h *mcpHarness) status(name string) event.MCPServerStatus {
	h.t.Helper()
	st, err := h.sess.MCPStatus(5 * time.Second)
	must(h.t, err)
	for _, s := range st.Servers {
		if s.Name == name {
			return s
		}
	}
	h.t.Fatalf("no status for %q in %+v", name, st)
	return event.MCPServerStatus{}
}

// call runs a registered tool as a tool runner would.
func (h *mcpHarness) call(name, args string) (string, error) {
	h.t.Helper()
	tl, ok := h.reg.Get(name)
	if !ok {
		h.t.Fatalf("tool %s not registered; have %v", name, h.reg.Names())
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	return tl.Execute(ctx, json.RawMessage(args))
}

func seenOf[T event.Event](h *mcpHarness) []T { return eventsOf[T](h.seen) }

// child is the PID of server's connection actor.
func (h *mcpHarness) child(server string) *actor.PID {
	return actor.NewPID(h.sys.ActorSystem().Address(), h.sess.pid.Id+"/mcp/"+server)
}

// scripted is a server running this test binary in the given mode.
func scripted(t *testing.T, name, mode string, env map[string]string) mcpconn.MCPServer {
	t.Helper()
	exe, err := os.Executable()
	must(t, err)
	all := map[string]string{testServerEnv: mode}
	for k, v := range env {
		all[k] = v
	}
	return mcpconn.MCPServer{Config: mcp.ServerConfig{Name: name, Type: mcp.TypeStdio, Command: exe, Env: all}, Source: mcp.SourceUser}
}

func TestBackoffDelay(t *testing.T) {
	t.Parallel()
	b := mcpconn.Backoff{Base: 100 * time.Millisecond, Max: 2 * time.Second, Jitter: 0.2}
	tests := []struct {
		name string
		b    mcpconn.Backoff
		n    int
		r    float64
		want time.Duration
	}{
		{"first retry, no jitter", b, 1, 0.5, 100 * time.Millisecond},
		{"doubles", b, 2, 0.5, 200 * time.Millisecond},
		{"doubles again", b, 3, 0.5, 400 * time.Millisecond},
		{"not linear", b, 5, 0.5, 1600 * time.Millisecond},
		{"capped", b, 6, 0.5, 2 * time.Second},
		{"no overflow", b, 200, 0.5, 2 * time.Second},
		{"jitter low", b, 2, 0, 160 * time.Millisecond},
		{"jitter high", b, 2, 1, 240 * time.Millisecond},
		{"jitter on the cap", b, 9, 0, 1600 * time.Millisecond},
		{"n below one", b, 0, 0.5, 100 * time.Millisecond},
		{"defaults", mcpconn.Backoff{}, 1, 0.5, 200 * time.Millisecond},
		{"default cap", mcpconn.Backoff{}, 30, 0.5, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.b.Delay(tt.n, tt.r); got != tt.want {
				t.Errorf("Delay(%d, %v) = %v, want %v", tt.n, tt.r, got, tt.want)
			}
		})
	}
	d := mcpconn.Backoff{}.WithDefaults()
	if d.GiveUp != 5 || d.Stable != time.Minute || d.Jitter != 0.2 || d.Max != 10*time.Second {
		t.Errorf("defaults = %+v", d)
	}
	// Jitter stays within ±20% for every r.
	for r := 0.0; r < 1; r += 0.01 {
		got := mcpconn.Backoff{}.Delay(3, r)
		if got < 640*time.Millisecond || got > 960*time.Millisecond {
			t.Fatalf("Delay(3, %v) = %v, outside 800ms ± 20%%", r, got)
		}
	}
}

func TestFindMCPRefs(t *testing.T) {
	t.Parallel()
	servers := []string{"docs", "fs"}
	tests := []struct {
		in   string
		want []event.MCPRef
	}{
		{"read @docs:readme please", []event.MCPRef{{Server: "docs", URI: "readme"}}},
		{"@fs:file:///tmp/a.txt.", []event.MCPRef{{Server: "fs", URI: "file:///tmp/a.txt"}}},
		{"(see @docs:x/y), and @fs:z", []event.MCPRef{{Server: "docs", URI: "x/y"}, {Server: "fs", URI: "z"}}},
		{"twice @docs:a @docs:a", []event.MCPRef{{Server: "docs", URI: "a"}}},
		{"mail ada@docs:io", nil},
		{"unknown @other:thing", nil},
		{"no uri @docs: here", nil},
		{"@docs", nil},
		// What an attached file or listing says is not a reference.
		{"<file path=\"n.md\">\nsee @docs:secret\n</file>\n\nsummarise @n.md and @docs:a", []event.MCPRef{{Server: "docs", URI: "a"}}},
		{"<dir path=\"d\">\n@fs:x/\n</dir>\n<file path=\"b\" binary=\"true\" size=\"3\"/>\n@fs:y", []event.MCPRef{{Server: "fs", URI: "y"}}},
		{"text first\n<file path=\"x\">\n@docs:inline\n</file>", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			if got := mcpconn.FindMCPRefs(tt.in, servers); !slices.Equal(got, tt.want) {
				t.Errorf("FindMCPRefs(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestWithResources(t *testing.T) {
	t.Parallel()
	refs := []event.MCPRef{{Server: "a", URI: `x"y`}, {Server: "b", URI: "missing"}}
	got := mcpconn.WithResources("question @a:x", refs, map[event.MCPRef]string{refs[0]: "body\n"})
	want := "<resource ref=\"a:x&quot;y\">\nbody\n</resource>\n\nquestion @a:x"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := mcpconn.WithResources("plain", refs, nil); got != "plain" {
		t.Errorf("nothing fetched: %q", got)
	}
}

func TestParseMCPCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, name, args string
		ok             bool
	}{
		{"/mcp__s__greet Ada Lovelace", "mcp__s__greet", "Ada Lovelace", true},
		{"  /mcp__s__p  ", "mcp__s__p", "", true},
		{"/mcp__s__p\tx", "mcp__s__p", "x", true},
		{"/review", "", "", false},
		{"hello /mcp__s__p", "", "", false},
	}
	for _, tt := range tests {
		name, args, ok := mcpconn.ParseMCPCommand(tt.in)
		if name != tt.name || args != tt.args || ok != tt.ok {
			t.Errorf("ParseMCPCommand(%q) = %q, %q, %v", tt.in, name, args, ok)
		}
	}
}

func TestPromptArguments(t *testing.T) {
	t.Parallel()
	two := mcp.Prompt{Name: "weather", Arguments: []mcp.PromptArgument{{Name: "city", Required: true}, {Name: "state"}}}
	tests := []struct {
		name    string
		p       mcp.Prompt
		args    string
		want    map[string]string
		wantErr string
	}{
		{"positional", two, "Paris", map[string]string{"city": "Paris"}, ""},
		{"last takes the rest", two, "Austin Texas USA", map[string]string{"city": "Austin", "state": "Texas USA"}, ""},
		{"named", two, "state=TX city=Austin", map[string]string{"city": "Austin", "state": "TX"}, ""},
		{"named and positional", two, "state=TX Austin", map[string]string{"city": "Austin", "state": "TX"}, ""},
		{"missing required", two, "", nil, "missing required argument city"},
		{"no arguments", mcp.Prompt{Name: "p"}, "", map[string]string{}, ""},
		{"unexpected arguments", mcp.Prompt{Name: "p"}, "x", nil, "takes no arguments"},
		{"one argument takes the line", mcp.Prompt{Name: "p", Arguments: []mcp.PromptArgument{{Name: "q"}}}, "a b  c", map[string]string{"q": "a b c"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := mcpconn.PromptArguments(tt.p, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestElicitDefaults(t *testing.T) {
	t.Parallel()
	content, missing := mcpconn.FormDefaults(json.RawMessage(`{"type":"object","properties":{"a":{"default":"x"},"b":{"type":"string"},"c":{"default":3}},"required":["a","b"]}`))
	if content["a"] != "x" || content["c"] != float64(3) || len(content) != 2 || !slices.Equal(missing, []string{"b"}) {
		t.Errorf("content %v missing %v", content, missing)
	}
	if c, m := mcpconn.FormDefaults(nil); c != nil || m != nil {
		t.Errorf("no schema: %v %v", c, m)
	}
}

// TestMCPScripted covers the connection actor against the scripted
// server: registration, calls, prompts and resources through the session,
// held turns with a prompt command and @references, list_changed,
// elicitation and a panic in the actor.
func TestMCPScripted(t *testing.T) {
	t.Parallel()
	plain := scripted(t, "t", "serve", nil)
	asker := scripted(t, "asker", "serve", nil)
	h := newMCPHarness(t, testSpec(t, plain, asker))
	h.waitServer("t", event.MCPReady)

	t.Run("tools registered with read-only flags", func(t *testing.T) {
		for name, ro := range map[string]bool{"mcp__t__echo": true, "mcp__t__hang": false, "mcp__t__die": false} {
			tl, ok := h.reg.Get(name)
			if !ok {
				t.Fatalf("%s missing from %v", name, h.reg.Names())
			}
			if tl.ReadOnly() != ro {
				t.Errorf("%s ReadOnly = %v", name, tl.ReadOnly())
			}
		}
		st := h.status("t")
		if st.State != event.MCPReady || len(st.Tools) != 5 || len(st.Prompts) != 1 || len(st.Resources) != 1 || st.Pid == 0 || st.ServerInfo.Name != "actors-test" {
			t.Errorf("status = %+v", st)
		}
	})
	t.Run("call through the registry", func(t *testing.T) {
		out, err := h.call("mcp__t__echo", `{"text":"hi"}`)
		if err != nil || out != "echo: hi" {
			t.Fatalf("echo = %q, %v", out, err)
		}
	})
	t.Run("prompt and resource through the session", func(t *testing.T) {
		text, err := h.sess.GetMCPPrompt("t", "greet", map[string]string{"name": "Ada"}, 10*time.Second)
		if err != nil || text != "Hello, Ada!" {
			t.Errorf("prompt = %q, %v", text, err)
		}
		text, err = h.sess.ReadMCPResource("t", "test://hello", 10*time.Second)
		if err != nil || text != "hello from the resource" {
			t.Errorf("resource = %q, %v", text, err)
		}
		if _, err := h.sess.ReadMCPResource("t", "test://nope", 10*time.Second); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("missing resource: %v", err)
		}
		if _, err := h.sess.GetMCPPrompt("nope", "greet", nil, 10*time.Second); err == nil || !strings.Contains(err.Error(), "unknown mcp server") {
			t.Errorf("unknown server: %v", err)
		}
	})
	t.Run("prompt command runs the prompt as the turn", func(t *testing.T) {
		h.srv.Push(providertest.Turn{Text: "hi Ada"})
		done := h.turn("/mcp__t__greet Ada")
		if done.Status != event.StatusOK {
			t.Fatalf("turn = %+v", done)
		}
		reqs := h.srv.Requests()
		if got := reqs[len(reqs)-1].LastUser(); got != "Hello, Ada!" {
			t.Errorf("user message = %q", got)
		}
	})
	t.Run("bad prompt command fails the turn", func(t *testing.T) {
		before := h.srv.Count()
		done := h.turn("/mcp__t__greet")
		if done.Status != event.StatusFailed || !strings.Contains(done.Error, "missing required argument name") {
			t.Errorf("turn = %+v", done)
		}
		done = h.turn("/mcp__t__nope x")
		if done.Status != event.StatusFailed || !strings.Contains(done.Error, "unknown command") {
			t.Errorf("turn = %+v", done)
		}
		if h.srv.Count() != before {
			t.Error("a failed command reached the model")
		}
	})
	t.Run("references are prepended; a failed one is a notice", func(t *testing.T) {
		h.srv.Push(providertest.Turn{Text: "ok"})
		done := h.turn("summarise @t:test://hello and @t:test://nope, mail ada@t:x")
		if done.Status != event.StatusOK {
			t.Fatalf("turn = %+v", done)
		}
		reqs := h.srv.Requests()
		got := reqs[len(reqs)-1].LastUser()
		want := "<resource ref=\"t:test://hello\">\nhello from the resource\n</resource>\n\nsummarise @t:test://hello and @t:test://nope, mail ada@t:x"
		if got != want {
			t.Errorf("user message = %q, want %q", got, want)
		}
		var noticed bool
		for _, n := range seenOf[*event.Notice](h) {
			noticed = noticed || strings.Contains(n.Message, "could not read @t:test://nope")
		}
		if !noticed {
			t.Error("no notice for the failed reference")
		}
	})
	t.Run("list_changed updates the registry", func(t *testing.T) {
		if _, ok := h.reg.Get("mcp__t__added"); ok {
			t.Fatal("added before the call")
		}
		if out, err := h.call("mcp__t__add", `{}`); err != nil || out != "added" {
			t.Fatalf("add = %q, %v", out, err)
		}
		h.next("six tools", func(e event.Event) bool {
			u, ok := e.(*event.MCPServerUpdated)
			return ok && u.Server == "t" && u.Tools == 6
		})
		if _, ok := h.reg.Get("mcp__t__added"); !ok {
			t.Errorf("mcp__t__added missing from %v", h.reg.Names())
		}
	})
	t.Run("headless elicitation is declined", func(t *testing.T) {
		out, err := h.call("mcp__asker__ask", `{}`)
		if err != nil || !strings.Contains(out, `"action":"decline"`) {
			t.Errorf("ask = %q, %v", out, err)
		}
	})
	t.Run("a panic in the actor is repaired as a connection failure", func(t *testing.T) {
		pid := h.child("asker")
		h.sys.Send(pid, (*mcpconn.GetMCPPrompt)(nil))
		u := h.waitServer("asker", event.MCPRestarting)
		if !strings.Contains(u.Error, "internal error") || u.Failures != 1 {
			t.Errorf("update = %+v", u)
		}
		// The session and the other server are unaffected.
		if out, err := h.call("mcp__t__echo", `{"text":"still"}`); err != nil || out != "echo: still" {
			t.Errorf("other server: %q, %v", out, err)
		}
		h.waitServer("asker", event.MCPReady)
		if out, err := h.call("mcp__asker__echo", `{"text":"back"}`); err != nil || out != "echo: back" {
			t.Errorf("call after the repair: %q, %v", out, err)
		}
		h.srv.Push(providertest.Turn{Text: "fine"})
		if done := h.turn("still there?"); done.Status != event.StatusOK {
			t.Errorf("turn = %+v", done)
		}
	})
}

func TestMCPElicitation(t *testing.T) {
	t.Parallel()
	t.Run("interactive", func(t *testing.T) {
		t.Parallel()
		spec := testSpec(t, scripted(t, "t", "serve", nil))
		spec.Interactive = true
		h := newMCPHarness(t, spec)
		h.waitServer("t", event.MCPReady)
		type outcome struct {
			out string
			err error
		}
		done := make(chan outcome, 1)
		tl, _ := h.reg.Get("mcp__t__ask")
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), waitBound)
			defer cancel()
			out, err := tl.Execute(ctx, json.RawMessage(`{}`))
			done <- outcome{out, err}
		}()
		req := h.next("elicitation", func(e event.Event) bool { _, ok := e.(*event.ElicitationRequested); return ok }).(*event.ElicitationRequested)
		if req.Server != "t" || req.Message != "What is your name?" || !strings.Contains(string(req.Schema), `"default":"Grace"`) {
			t.Errorf("request = %+v", req)
		}
		h.sess.AnswerElicitation(&mcpconn.ElicitationResponse{RequestID: req.RequestID, Server: "t", Action: mcp.ElicitAccept, Content: map[string]any{"name": "Ada"}})
		select {
		case o := <-done:
			if o.err != nil || !strings.Contains(o.out, `"action":"accept"`) || !strings.Contains(o.out, `"Ada"`) {
				t.Errorf("ask = %q, %v", o.out, o.err)
			}
		case <-time.After(waitBound):
			t.Fatal("the call never returned")
		}
	})
	t.Run("headless defaults", func(t *testing.T) {
		t.Parallel()
		spec := testSpec(t, scripted(t, "t", "serve", nil))
		spec.Elicitation = mcpconn.ElicitDefaults
		h := newMCPHarness(t, spec)
		h.waitServer("t", event.MCPReady)
		out, err := h.call("mcp__t__ask", `{}`)
		if err != nil || !strings.Contains(out, `"action":"accept"`) || !strings.Contains(out, `"Grace"`) {
			t.Errorf("ask = %q, %v", out, err)
		}
	})
}

// TestMCPCallTimeout: a server that accepts calls and never answers them
// makes the call time out, and the turn goes on.
func TestMCPCallTimeout(t *testing.T) {
	t.Parallel()
	srv := scripted(t, "t", "serve", nil)
	srv.Config.ToolTimeouts = map[string]time.Duration{"hang": 300 * time.Millisecond}
	h := newMCPHarness(t, testSpec(t, srv))
	h.waitServer("t", event.MCPReady)
	h.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("mcp__t__hang", `{}`)}},
		providertest.Turn{Text: "it timed out, moving on"},
	)
	done := h.turn("call hang")
	if done.Status != event.StatusOK || done.Text != "it timed out, moving on" {
		t.Fatalf("turn = %+v", done)
	}
	tm := toolMessages(h.srv.Requests()[1])
	if len(tm) != 1 || !strings.Contains(tm[0].Content, "timed out after 300ms") {
		t.Errorf("tool result = %+v", tm)
	}
	// The connection survived the abandoned call.
	if out, err := h.call("mcp__t__echo", `{"text":"after"}`); err != nil || out != "echo: after" {
		t.Errorf("echo after the timeout: %q, %v", out, err)
	}
}

// TestMCPStartupTimeout: a server that never answers the handshake holds
// the first turn only until the startup timeout.
func TestMCPStartupTimeout(t *testing.T) {
	t.Parallel()
	spec := testSpec(t, scripted(t, "slow", "hang-init", nil))
	spec.StartupTimeout = 200 * time.Millisecond
	h := newMCPHarness(t, spec)
	h.srv.Push(providertest.Turn{Text: "answered without the server"})
	done := h.turn("hello")
	if done.Status != event.StatusOK {
		t.Fatalf("turn = %+v", done)
	}
	// The handshake bound is far away: the turn did not wait for it.
	if st := h.status("slow"); st.State != event.MCPConnecting {
		t.Errorf("server state = %s, want still connecting", st.State)
	}
	if got := h.srv.Requests()[0].Tools; slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "mcp__") }) {
		t.Errorf("request tools = %v", got)
	}
}

// TestMCPGiveUp: a server that connects once and then keeps failing is
// marked failed after Backoff.GiveUp failures; its tools fail fast.
func TestMCPGiveUp(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "started")
	h := newMCPHarness(t, testSpec(t, scripted(t, "t", "once", map[string]string{testMarkerEnv: marker})))
	h.waitServer("t", event.MCPReady)
	if _, err := h.call("mcp__t__die", `{}`); err == nil {
		t.Fatal("die returned no error")
	}
	u := h.waitServer("t", event.MCPFailed)
	if u.Failures != 3 || !strings.Contains(u.Error, "exit") {
		t.Errorf("update = %+v", u)
	}
	var restarts int
	for _, e := range seenOf[*event.MCPServerUpdated](h) {
		if e.State == event.MCPRestarting {
			restarts++
		}
	}
	if restarts != 2 {
		t.Errorf("%d restarting updates, want 2", restarts)
	}
	start := time.Now()
	_, err := h.call("mcp__t__echo", `{"text":"x"}`)
	if err == nil || !strings.Contains(err.Error(), `mcp server "t" failed`) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("call on a failed server: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("failing took %v", took)
	}
	if st := h.status("t"); st.State != event.MCPFailed || st.Failures != 3 || st.Pid != 0 {
		t.Errorf("status = %+v", st)
	}
}

// TestMCPUntrusted: an untrusted server is reported and never started,
// while a trusted one with the same command is.
func TestMCPUntrusted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trusted := scripted(t, "trusted", "marker", map[string]string{testMarkerEnv: filepath.Join(dir, "trusted")})
	untrusted := scripted(t, "proj", "marker", map[string]string{testMarkerEnv: filepath.Join(dir, "untrusted")})
	untrusted.Source = mcp.SourceProject
	untrusted.Untrusted = "untrusted: identity changed since it was approved; rerun with --trust-project-mcp"
	disabled := scripted(t, "off", "marker", map[string]string{testMarkerEnv: filepath.Join(dir, "disabled")})
	disabled.Disabled = true
	invalid := scripted(t, "bad", "marker", map[string]string{testMarkerEnv: filepath.Join(dir, "invalid")})
	invalid.Error = `mcp server "bad": url "" is not an absolute http or https url`
	h := newMCPHarness(t, testSpec(t, trusted, untrusted, disabled, invalid))
	h.waitServer("trusted", event.MCPReady)
	if _, err := os.Stat(filepath.Join(dir, "trusted")); err != nil {
		t.Fatalf("the trusted server did not start: %v", err)
	}
	for _, name := range []string{"untrusted", "disabled", "invalid"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s server started: %v", name, err)
		}
	}
	if st := h.status("proj"); st.State != event.MCPUntrusted || !strings.Contains(st.LastError, "identity changed") || len(st.Tools) != 0 {
		t.Errorf("proj status = %+v", st)
	}
	if st := h.status("off"); st.State != event.MCPDisabled {
		t.Errorf("off status = %+v", st)
	}
	if st := h.status("bad"); st.State != event.MCPFailed || !strings.Contains(st.LastError, "not an absolute") {
		t.Errorf("bad status = %+v", st)
	}
	for _, n := range h.reg.Names() {
		if strings.HasPrefix(n, "mcp__proj__") || strings.HasPrefix(n, "mcp__off__") {
			t.Errorf("tool %s registered", n)
		}
	}
	var noticed bool
	for _, n := range seenOf[*event.Notice](h) {
		noticed = noticed || strings.Contains(n.Message, `"proj"`) && strings.Contains(n.Message, "--trust-project-mcp")
	}
	if !noticed {
		t.Error("no notice about the untrusted server")
	}
}

// TestToolSchemasFixedWithinTurn: a tool registered while a turn runs
// (an MCP server connecting late) does not change that turn's requests;
// the next turn sees it.
func TestToolSchemasFixedWithinTurn(t *testing.T) {
	t.Parallel()
	var reg *tool.Registry
	late := &funcTool{name: "late", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) { return "", nil }}
	connect := &funcTool{name: "connect", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) {
		return "registered", reg.Replace(late)
	}}
	h := newMCPHarness(t, mcpconn.MCPSpec{}, connect)
	reg = h.reg
	h.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("connect", `{}`)}},
		providertest.Turn{Text: "done"},
		providertest.Turn{Text: "second"},
	)
	if done := h.turn("first"); done.Status != event.StatusOK {
		t.Fatalf("turn = %+v", done)
	}
	if done := h.turn("second"); done.Status != event.StatusOK {
		t.Fatalf("turn = %+v", done)
	}
	reqs := h.srv.Requests()
	if !slices.Equal(reqs[0].Tools, []string{"connect"}) || !slices.Equal(reqs[1].Tools, []string{"connect"}) {
		t.Errorf("tools within the first turn: %v then %v", reqs[0].Tools, reqs[1].Tools)
	}
	if !slices.Equal(reqs[2].Tools, []string{"connect", "late"}) {
		t.Errorf("tools of the second turn: %v", reqs[2].Tools)
	}
}

// TestMCPPluginExample runs the reference plugin through the session: a
// model turn calls its wordcount tool.
func TestMCPPluginExample(t *testing.T) {
	t.Parallel()
	bin := pluginExample(t, t.TempDir())
	h := newMCPHarness(t, testSpec(t, mcpconn.MCPServer{Config: mcp.ServerConfig{Name: "example", Type: mcp.TypeStdio, Command: bin}, Source: mcp.SourceUser}))
	h.waitServer("example", event.MCPReady)
	for _, name := range []string{"mcp__example__echo", "mcp__example__wordcount"} {
		if tl, ok := h.reg.Get(name); !ok || !tl.ReadOnly() {
			t.Fatalf("%s: registered %v", name, ok)
		}
	}
	h.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{call("mcp__example__wordcount", `{"text":"one two three"}`)}},
		providertest.Turn{Text: "three words"},
	)
	done := h.turn("count the words")
	if done.Status != event.StatusOK || done.Text != "three words" {
		t.Fatalf("turn = %+v", done)
	}
	reqs := h.srv.Requests()
	if !slices.Contains(reqs[0].Tools, "mcp__example__wordcount") {
		t.Errorf("request tools = %v", reqs[0].Tools)
	}
	if tm := toolMessages(reqs[1]); len(tm) != 1 || tm[0].Content != "3" {
		t.Errorf("tool result = %+v", tm)
	}
	if st := h.status("example"); st.State != event.MCPReady || len(st.Tools) != 2 || st.ServerInfo.Name != "reasonix-plugin-example" {
		t.Errorf("status = %+v", st)
	}
}

// TestMCPStableResetsFailures: once a connection has lasted the stable
// period, earlier failures no longer count towards giving up.
func TestMCPStableResetsFailures(t *testing.T) {
	t.Parallel()
	spec := testSpec(t, scripted(t, "t", "serve", nil))
	spec.Backoff.Stable = 50 * time.Millisecond
	h := newMCPHarness(t, spec)
	h.waitServer("t", event.MCPReady)
	if _, err := h.call("mcp__t__die", `{}`); err == nil {
		t.Fatal("die returned no error")
	}
	if u := h.waitServer("t", event.MCPRestarting); u.Failures != 1 {
		t.Errorf("restarting = %+v", u)
	}
	if u := h.waitServer("t", event.MCPReady); u.Failures != 1 {
		t.Errorf("reconnected = %+v", u)
	}
	h.next("failures reset", func(e event.Event) bool {
		u, ok := e.(*event.MCPServerUpdated)
		return ok && u.Server == "t" && u.State == event.MCPReady && u.Failures == 0
	})
	if st := h.status("t"); st.Failures != 0 {
		t.Errorf("status = %+v", st)
	}
}

// TestMCPHeldTurnCancelled: a turn held for a server that is still
// connecting can be cancelled; the model is never called.
func TestMCPHeldTurnCancelled(t *testing.T) {
	t.Parallel()
	h := newMCPHarness(t, testSpec(t, scripted(t, "slow", "hang-init", nil)))
	h.sess.Run("hello")
	h.sess.Cancel()
	done := h.next("turn_done", func(e event.Event) bool { _, ok := e.(*event.TurnDone); return ok }).(*event.TurnDone)
	if done.Status != event.StatusCancelled {
		t.Errorf("turn = %+v", done)
	}
	if h.srv.Count() != 0 {
		t.Error("the model was called")
	}
	// The cancel did not wait for the server.
	if st := h.status("slow"); st.State != event.MCPConnecting {
		t.Errorf("state = %s", st.State)
	}
}

func TestMCPStatusListings(t *testing.T) {
	t.Parallel()
	st := &event.MCPStatus{Servers: []event.MCPServerStatus{
		{Name: "b", State: event.MCPReady, Prompts: []mcp.Prompt{{Name: "z"}, {Name: "a"}}, Resources: []mcp.Resource{{URI: "b://1"}}},
		{Name: "a", State: event.MCPReady, Prompts: []mcp.Prompt{{Name: "p q"}}},
		{Name: "down", State: event.MCPRestarting, Prompts: []mcp.Prompt{{Name: "x"}}, Resources: []mcp.Resource{{URI: "d://1"}}},
	}}
	var cmds []string
	for _, p := range st.MCPPrompts() {
		cmds = append(cmds, p.Command())
	}
	if !slices.Equal(cmds, []string{"mcp__a__p_q", "mcp__b__a", "mcp__b__z"}) {
		t.Errorf("prompts = %v", cmds)
	}
	if res := st.Resources(); len(res) != 1 || res[0].Ref.String() != "b:b://1" {
		t.Errorf("resources = %+v", res)
	}
	if ref, ok := mcpconn.FindMCPPrompt(st, "mcp__a__p_q"); !ok || ref.Server != "a" || ref.Prompt.Name != "p q" {
		t.Errorf("FindMCPPrompt = %+v, %v", ref, ok)
	}
	if _, ok := mcpconn.FindMCPPrompt(st, "mcp__a__nope"); ok {
		t.Error("found a prompt that does not exist")
	}
}
