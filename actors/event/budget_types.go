package event

import "reasonix/core/provider"

// Budget is the ceilings of one task: tokens (input plus output), model
// turns, wall time and cost (in the currency of the configured prices). A
// zero field is no ceiling. A task that reaches one is stopped and ends
// over_budget with its partial answer.
type Budget struct {
	Tokens  int     `json:"tokens,omitempty"`
	Turns   int     `json:"turns,omitempty"`
	Seconds int     `json:"seconds,omitempty"`
	Cost    float64 `json:"cost,omitempty"`
}

// Price is what a model costs per million tokens: prompt tokens the cache
// missed (Input), those it served (CacheHit) and completion tokens.
type Price struct {
	Input, CacheHit, Output float64
}

// Cost is what u cost at p.
func (p Price) Cost(u provider.Usage) float64 {
	hit := p.CacheHit
	if hit == 0 {
		hit = p.Input
	}
	miss := max(0, u.PromptTokens-u.CacheHitTokens)
	return (float64(miss)*p.Input + float64(u.CacheHitTokens)*hit + float64(u.CompletionTokens)*p.Output) / 1e6
}

// IsZero reports whether b sets no ceiling.
func (b Budget) IsZero() bool { return b == Budget{} }
