package actors

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"reasonix/actors/agent"
	"reasonix/actors/event"
	"reasonix/actors/kernel"
	"reasonix/core/compact"
	"reasonix/core/provider"
	"reasonix/core/provider/openai"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

const benchSteps = 50

// loopResponder asks for one read_file per step until the current turn
// holds benchSteps-1 tool results, then answers: benchSteps requests a turn.
func loopResponder(req providertest.Request) providertest.Turn {
	results := 0
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			results = 0
		case "tool":
			results++
		}
	}
	if results >= benchSteps-1 {
		return providertest.Turn{Text: "done"}
	}
	return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "read_file", Arguments: `{"path":"a.txt"}`}}}
}

func benchProvider(b *testing.B, srv *providertest.Server) provider.Provider {
	tr := &http.Transport{}
	b.Cleanup(tr.CloseIdleConnections)
	p, err := openai.New(provider.Config{Name: "fake", Kind: "openai", BaseURL: srv.URL(), Model: "fake-model",
		MaxRetries: -1, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkAgentLoop runs whole 50-step turns (one read_file per step)
// through the actor tree against the fake at zero latency. Compare its
// ns/step with BenchmarkProviderBaseline's: the difference is the harness
// (actors, events, tool runners, the tool itself).
func BenchmarkAgentLoop(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	srv := providertest.Start(b, providertest.WithResponder(loopResponder))
	tools, err := tool.NewBuiltins(tool.Env{Root: dir}, []string{"read_file"})
	if err != nil {
		b.Fatal(err)
	}
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		b.Fatal(err)
	}
	p := benchProvider(b, srv)
	sys := kernel.NewSystem(nil)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = sys.Shutdown(ctx)
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Each round is a fresh session, so every round sends the same
		// 50 requests as the baseline does.
		bus := event.NewBus()
		sub := bus.Subscribe()
		id := fmt.Sprintf("bench-%d", i)
		sess, err := StartSession(sys, SessionSpec{Agent: agent.AgentSpec{
			Session: id, Provider: p, Model: "fake-model", Tools: reg, System: "sys",
			ToolTimeout: time.Minute, Bus: bus,
			// The built-in DeepSeek window: every step is measured for
			// compaction, as in a real run.
			Compaction: compact.Policy{Window: 1_000_000}.WithDefaults(),
		}})
		if err != nil {
			b.Fatal(err)
		}
		sess.Run("go")
		done, err := WaitTurn(context.Background(), sub, id, nil)
		sub.Close()
		if err != nil || done.Status != event.StatusOK || done.Steps != benchSteps {
			b.Fatalf("turn: %+v %v", done, err)
		}
		if err := sess.Close(5 * time.Second); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchSteps), "ns/step")
}

// BenchmarkProviderBaseline sends the same 50 requests per round straight
// through the provider (the same model, messages and read_file schema),
// with no actors and no tool runs: the floor that BenchmarkAgentLoop is
// compared against.
func BenchmarkProviderBaseline(b *testing.B) {
	srv := providertest.Start(b, providertest.WithResponder(loopResponder))
	p := benchProvider(b, srv)
	tools, err := tool.NewBuiltins(tool.Env{Root: b.TempDir()}, []string{"read_file"})
	if err != nil {
		b.Fatal(err)
	}
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		b.Fatal(err)
	}
	schemas := reg.Schemas()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		history := []provider.Message{{Role: provider.RoleSystem, Content: "sys"}, {Role: provider.RoleUser, Content: "go"}}
		for step := 0; step < benchSteps; step++ {
			ch, err := p.Stream(context.Background(), provider.Request{Model: "fake-model", Messages: history, Tools: schemas})
			if err != nil {
				b.Fatal(err)
			}
			var calls []provider.ToolCall
			for c := range ch {
				switch c.Type {
				case provider.ChunkToolCall:
					calls = append(calls, *c.ToolCall)
				case provider.ChunkError:
					b.Fatal(c.Err)
				}
			}
			history = append(history, provider.Message{Role: provider.RoleAssistant, ToolCalls: calls})
			for _, c := range calls {
				history = append(history, provider.Message{Role: provider.RoleTool, ToolCallID: c.ID, Content: "     1\talpha\n     2\tbeta\n"})
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchSteps), "ns/step")
}
