package config

import (
	"fmt"
	"strings"
	"time"

	"reasonix/core/provider"
)

// Resolved is a model reference resolved against the configured providers.
type Resolved struct {
	// Provider is the config entry offering the model.
	Provider ProviderConfig
	// Model is the model ID to send.
	Model string
	// ContextWindow is the window in tokens for this model; 0 disables
	// compaction.
	ContextWindow int
	// MaxTokens is the answer cap sent with each request; 0 sends none.
	MaxTokens int
}

// ProviderConfig is the provider.Config that builds r's provider with
// key, so every command that talks to a provider (a session, its subagents,
// doctor) reads the config the same way.
func (r Resolved) ProviderConfig(key string) provider.Config {
	p := r.Provider
	pc := provider.Config{
		Name:          p.Name,
		Kind:          p.Kind,
		BaseURL:       p.BaseURL,
		ChatURL:       p.ChatURL,
		ModelsURL:     p.ModelsURL,
		Model:         r.Model,
		APIKey:        key,
		MaxRetries:    p.MaxRetries,
		OmitReasoning: !p.SendReasoning,
		MaxInFlight:   p.MaxInFlight,
	}
	if pc.MaxRetries == 0 {
		// In config 0 means "no retries"; provider.Config reserves 0 for
		// "the kind's default" and uses a negative count for none.
		pc.MaxRetries = -1
	}
	if s := p.StallTimeoutSeconds; s > 0 {
		pc.StallTimeout = time.Duration(s) * time.Second
	}
	return pc
}

// ResolveModel turns a model reference into a provider and model. ref is a
// provider name (its default model), a model name offered by exactly one
// provider, or provider/model; empty means cfg.DefaultModel. A provider
// name wins over a model of the same name. When the text before the first
// "/" is not a provider name, the whole ref is tried as a model name, so
// model IDs that contain "/" still resolve. Errors list every valid choice.
func (c *Config) ResolveModel(ref string) (Resolved, error) {
	if ref == "" {
		ref = c.DefaultModel
	}
	if ref == "" {
		return Resolved{}, fmt.Errorf("no model given and default_model is not set; choices: %s", c.choices())
	}
	if p, ok := c.provider(ref); ok {
		m := p.DefaultModel()
		if m == "" {
			return Resolved{}, fmt.Errorf("provider %q declares no model", ref)
		}
		return c.resolved(p, m), nil
	}
	if name, model, ok := strings.Cut(ref, "/"); ok {
		if p, ok := c.provider(name); ok {
			if !p.Offers(model) {
				return Resolved{}, fmt.Errorf("provider %q does not offer model %q; choices: %s", name, model, c.choices())
			}
			return c.resolved(p, model), nil
		}
	}
	var found []ProviderConfig
	for _, p := range c.Providers {
		if p.Offers(ref) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return Resolved{}, fmt.Errorf("unknown model %q; choices: %s", ref, c.choices())
	case 1:
		return c.resolved(found[0], ref), nil
	}
	names := make([]string, len(found))
	for i, p := range found {
		names[i] = p.Name + "/" + ref
	}
	return Resolved{}, fmt.Errorf("model %q is offered by several providers; pick one of %s", ref, strings.Join(names, ", "))
}

// SetDefaultModel applies a --model style override: ref must resolve, and
// Sources records "flag" for default_model.
func (c *Config) SetDefaultModel(ref string) error {
	if _, err := c.ResolveModel(ref); err != nil {
		return err
	}
	c.DefaultModel = ref
	c.SetSource("default_model", "flag")
	return nil
}

// SetSource records that key (a dotted key as in Sources) was set by
// source, such as "flag" or "flag --sandbox", for keys changed after Load.
func (c *Config) SetSource(key, source string) {
	if c.Sources == nil {
		c.Sources = map[string]string{}
	}
	c.Sources[key] = source
}

// Provider returns the provider entry called name.
func (c *Config) Provider(name string) (ProviderConfig, bool) {
	return c.provider(name)
}

func (c *Config) provider(name string) (ProviderConfig, bool) {
	for _, p := range c.Providers {
		if p.Name == name {
			return p, true
		}
	}
	return ProviderConfig{}, false
}

func (c *Config) resolved(p ProviderConfig, model string) Resolved {
	cw, mt := p.ContextWindow, p.MaxTokens
	if o, ok := p.ModelOverrides[model]; ok {
		if o.ContextWindow > 0 {
			cw = o.ContextWindow
		}
		if o.MaxTokens > 0 {
			mt = o.MaxTokens
		}
	}
	return Resolved{Provider: p, Model: model, ContextWindow: cw, MaxTokens: mt}
}

// choices lists every provider/model pair in declaration order.
func (c *Config) choices() string {
	var out []string
	for _, p := range c.Providers {
		for _, m := range p.ModelList() {
			out = append(out, p.Name+"/"+m)
		}
	}
	if len(out) == 0 {
		return "(no providers configured)"
	}
	return strings.Join(out, ", ")
}
