package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"reasonix/core/provider"
)

const modelsTOML = `
default_model = "ds"

[[providers]]
name = "ds"
kind = "openai"
base_url = "https://api.deepseek.com"
models = ["flash", "pro"]
default = "pro"
context_window = 1000
model_overrides = { flash = { context_window = 500 }, pro = { context_window = 0 } }

[[providers]]
name = "router"
kind = "openai"
base_url = "https://router.example"
models = ["flash", "qwen/qwen3"]
context_window = 0

[[providers]]
name = "local"
kind = "openai"
base_url = "http://127.0.0.1:8080"
model = "llama"
context_window = 4096

[[providers]]
name = "pro"
kind = "openai"
base_url = "http://127.0.0.1:8081"
model = "other"
`

func TestResolveModel(t *testing.T) {
	t.Parallel()
	c, _ := mustLoad(t, layout{user: modelsTOML})
	tests := []struct {
		name            string
		ref             string
		provider, model string
		contextWindow   int
		errWant         []string
	}{
		{name: "empty means default_model", ref: "", provider: "ds", model: "pro", contextWindow: 1000},
		{name: "provider name gives its default", ref: "ds", provider: "ds", model: "pro", contextWindow: 1000},
		{name: "single-model provider", ref: "local", provider: "local", model: "llama", contextWindow: 4096},
		{name: "list provider without default uses first", ref: "router", provider: "router", model: "flash"},
		{name: "bare unique model", ref: "llama", provider: "local", model: "llama", contextWindow: 4096},
		{name: "provider/model", ref: "ds/flash", provider: "ds", model: "flash", contextWindow: 500},
		{name: "override of zero inherits provider window", ref: "ds/pro", provider: "ds", model: "pro", contextWindow: 1000},
		{name: "provider window zero disables compaction", ref: "router/flash", provider: "router", model: "flash", contextWindow: 0},
		{name: "model containing a slash", ref: "qwen/qwen3", provider: "router", model: "qwen/qwen3"},
		{name: "provider/model with slash in model", ref: "router/qwen/qwen3", provider: "router", model: "qwen/qwen3"},
		{name: "provider name wins over a model name", ref: "pro", provider: "pro", model: "other"},
		{name: "ambiguous bare model", ref: "flash", errWant: []string{"several providers", "ds/flash", "router/flash"}},
		{name: "unknown model lists choices", ref: "gpt", errWant: []string{`unknown model "gpt"`, "ds/flash, ds/pro, router/flash, router/qwen/qwen3, local/llama, pro/other"}},
		{name: "provider without that model", ref: "local/flash", errWant: []string{`provider "local" does not offer model "flash"`, "local/llama"}},
		{name: "unknown provider", ref: "nope/flash", errWant: []string{`unknown model "nope/flash"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := c.ResolveModel(tt.ref)
			if tt.errWant != nil {
				if err == nil {
					t.Fatalf("ResolveModel(%q) = %+v, want an error", tt.ref, r)
				}
				for _, w := range tt.errWant {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ResolveModel(%q): %v", tt.ref, err)
			}
			if r.Provider.Name != tt.provider || r.Model != tt.model || r.ContextWindow != tt.contextWindow {
				t.Errorf("ResolveModel(%q) = %s/%s window %d, want %s/%s window %d",
					tt.ref, r.Provider.Name, r.Model, r.ContextWindow, tt.provider, tt.model, tt.contextWindow)
			}
		})
	}
}

func TestSetDefaultModel(t *testing.T) {
	t.Parallel()
	c, _ := mustLoad(t, layout{user: modelsTOML})
	if err := c.SetDefaultModel("flash"); err == nil {
		t.Error("ambiguous --model accepted")
	}
	if c.DefaultModel != "ds" {
		t.Errorf("a refused override changed default_model to %q", c.DefaultModel)
	}
	if err := c.SetDefaultModel("local"); err != nil {
		t.Fatal(err)
	}
	if r, _ := c.ResolveModel(""); r.Model != "llama" || c.SourceOf("default_model") != "flag" {
		t.Errorf("after override: model %q source %q", r.Model, c.SourceOf("default_model"))
	}
}

func TestResolveModelNoProviders(t *testing.T) {
	t.Parallel()
	var c Config
	_, err := c.ResolveModel("")
	if err == nil || !strings.Contains(err.Error(), "no providers configured") {
		t.Errorf("err = %v", err)
	}
}

func TestProviderConfig(t *testing.T) {
	t.Parallel()
	base := ProviderConfig{Name: "ds", Kind: "openai", BaseURL: "https://api.example", ChatURL: "https://chat.example",
		ModelsURL: "https://models.example", APIKeyEnv: "DS_KEY"}
	tests := []struct {
		name string
		edit func(*ProviderConfig)
		want provider.Config
	}{
		{
			name: "zero retries in config means none",
			want: provider.Config{Name: "ds", Kind: "openai", BaseURL: "https://api.example", ChatURL: "https://chat.example",
				ModelsURL: "https://models.example", Model: "pro", APIKey: "sk", MaxRetries: -1, OmitReasoning: true},
		},
		{
			name: "retries, stall timeout and reasoning carry over",
			edit: func(p *ProviderConfig) { p.MaxRetries, p.StallTimeoutSeconds, p.SendReasoning = 3, 45, true },
			want: provider.Config{Name: "ds", Kind: "openai", BaseURL: "https://api.example", ChatURL: "https://chat.example",
				ModelsURL: "https://models.example", Model: "pro", APIKey: "sk", MaxRetries: 3, StallTimeout: 45 * time.Second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := base
			if tt.edit != nil {
				tt.edit(&p)
			}
			got := Resolved{Provider: p, Model: "pro"}.ProviderConfig("sk")
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ProviderConfig = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestProviderConfigCarriesMaxInFlight: [[providers]] max_in_flight reaches
// the provider, whose limiter uses it as the window's ceiling.
func TestProviderConfigCarriesMaxInFlight(t *testing.T) {
	r := Resolved{Provider: ProviderConfig{Name: "p", Kind: "openai", MaxInFlight: 12}, Model: "m"}
	if got := r.ProviderConfig("k").MaxInFlight; got != 12 {
		t.Fatalf("MaxInFlight = %d, want 12", got)
	}
}
