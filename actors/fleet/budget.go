package fleet

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/agent/team"
	"reasonix/actors/event"
	"reasonix/core/provider"
)

// PricedProvider carries its model's price to the scheduler.
type PricedProvider struct {
	provider.Provider
	// Cost is the model's price.
	Cost event.Price
}

// Price is the model's price.
func (p *PricedProvider) Price() event.Price { return p.Cost }

// Endpoint passes the wrapped provider's endpoint through.
func (p *PricedProvider) Endpoint() string {
	if ep, ok := p.Provider.(provider.Endpointer); ok {
		return ep.Endpoint()
	}
	return ""
}

// budgetRef is b as an optional event field: nil when b sets nothing.
func budgetRef(b event.Budget) *event.Budget {
	if b.IsZero() {
		return nil
	}
	return &b
}

// endpointStats is the current state of an endpoint's limiter, nil when
// there is none.
func endpointStats(endpoint string) *provider.LimiterStats {
	if endpoint == "" {
		return nil
	}
	l := provider.LookupLimiter(endpoint)
	if l == nil {
		return nil
	}
	st := l.Stats()
	st.Endpoint = endpoint
	return &st
}

// cacheHitPct is the share of prompt tokens served from the provider's
// cache, in percent with one decimal.
func cacheHitPct(u provider.Usage) float64 {
	if u.PromptTokens <= 0 {
		return 0
	}
	return math.Round(1000*float64(u.CacheHitTokens)/float64(u.PromptTokens)) / 10
}

// allot is the budget a task starts with: its explicit ceilings, and for
// each dimension it leaves open, an even share of what is left of its
// fleet's budget once finished tasks' use, running tasks' allotments and
// the explicit ceilings of tasks still waiting are taken off. Seconds are
// not shared (tasks run side by side): a task gets what is left of the
// fleet's time.
func (f *fleetActor) allot(t *runningTask) event.Budget {
	b := t.spec.Budget
	fl := f.fleets[t.fleet]
	if fl == nil || fl.budget.IsZero() {
		return b
	}
	share := func(total int, explicit func(*runningTask) int, used func(*runningTask, *event.TaskResult) int) int {
		if total <= 0 {
			return 0
		}
		left, open := total, 1
		for _, id := range fl.ids {
			if id == t.spec.ID {
				continue
			}
			if r, done := fl.results[id]; done {
				left -= used(nil, &r)
				continue
			}
			o := f.tasks[id]
			switch {
			case o == nil:
			case o.meter != nil: // running: its allotment is spoken for
				left -= used(o, nil)
			case explicit(o) > 0:
				left -= explicit(o)
			default:
				open++
			}
		}
		return max(1, left/open)
	}
	if b.Tokens == 0 {
		b.Tokens = share(fl.budget.Tokens, func(o *runningTask) int { return o.spec.Budget.Tokens },
			func(o *runningTask, r *event.TaskResult) int {
				if r != nil {
					return r.Usage.PromptTokens + r.Usage.CompletionTokens
				}
				return o.budget.Tokens
			})
	}
	if b.Turns == 0 {
		b.Turns = share(fl.budget.Turns, func(o *runningTask) int { return o.spec.Budget.Turns },
			func(o *runningTask, r *event.TaskResult) int {
				if r != nil {
					return r.Turns
				}
				return o.budget.Turns
			})
	}
	if b.Cost == 0 && fl.budget.Cost > 0 {
		left, open := fl.budget.Cost, 1
		for _, id := range fl.ids {
			if id == t.spec.ID {
				continue
			}
			if r, done := fl.results[id]; done {
				left -= r.Cost
				continue
			}
			switch o := f.tasks[id]; {
			case o == nil:
			case o.meter != nil:
				left -= o.budget.Cost
			case o.spec.Budget.Cost > 0:
				left -= o.spec.Budget.Cost
			default:
				open++
			}
		}
		b.Cost = max(fl.budget.Cost/1e6, left/float64(open))
	}
	if fl.budget.Seconds > 0 {
		left := int(math.Ceil(time.Until(fl.created.Add(time.Duration(fl.budget.Seconds) * time.Second)).Seconds()))
		left = max(1, left)
		if b.Seconds == 0 || left < b.Seconds {
			b.Seconds = left
		}
	}
	return b
}

// overBudget stops a running task that reached a ceiling. Its siblings
// carry on; its result will carry its partial answer.
func (f *fleetActor) overBudget(c actor.Context, id, what string) {
	t := f.tasks[id]
	if t == nil || t.pid == nil || t.stopping {
		return
	}
	t.over = what
	f.stopTask(c, id, "over its "+what+" budget")
}

// MeteredProvider holds a subagent to its budget at the source: once the
// task's meter has seen it reach a ceiling, no further request leaves for
// the endpoint, whatever the subagent does before its cancellation lands.
// It also tells the scheduler when a warmer's first request got its first
// token (onFirst): only then is its prompt prefilled and in the provider's
// cache. Stream returning says less: a provider sends its headers, and
// keep-alive comments, while the request is still queued.
//
// Waiting is skipped, and the siblings released before the first request
// is sent, when the request's cacheable prefix is smaller than minPrefix
// tokens (too small for the wait to pay: OpenAI caches nothing under 1024
// tokens) or was answered at the endpoint within provider.WarmTTL (by the
// parent's own requests or an earlier fleet's), so it is cached already.
type MeteredProvider struct {
	provider.Provider
	Meter     *team.TaskMeter
	onFirst   func()
	minPrefix int
	once      sync.Once
}

// Stream refuses a request past the task's ceiling.
func (p *MeteredProvider) Stream(ctx context.Context, req provider.Request) (<-chan provider.Chunk, error) {
	if what := p.Meter.Exhausted(); what != "" {
		return nil, fmt.Errorf("task stopped at its %s budget", what)
	}
	if p.onFirst != nil && p.noWait(req) {
		p.once.Do(p.onFirst)
	}
	ch, err := p.Provider.Stream(ctx, req)
	if p.onFirst == nil {
		return ch, err
	}
	if err != nil {
		p.once.Do(p.onFirst) // no reply is coming: nothing to wait for
		return ch, err
	}
	later := true
	p.once.Do(func() { later = false })
	if later {
		return ch, nil // the prefix was warmed by the first request
	}
	return firstToken(ctx, ch, p.onFirst), nil
}

// noWait reports whether req's prefix needs no warming: too small to be
// worth it, or cached at the endpoint already.
func (p *MeteredProvider) noWait(req provider.Request) bool {
	key, tokens := provider.PrefixOf(req)
	if tokens < p.minPrefix {
		return true
	}
	ep, ok := p.Provider.(provider.Endpointer)
	return ok && provider.PrefixWarm(ep.Endpoint(), key)
}

// firstToken relays ch and calls onFirst at its first token (text,
// reasoning or a tool call), or when it ends without one. The relay
// goroutine ends with ch, which the provider closes when the stream ends
// or ctx is cancelled; a reader that stopped reading after ctx ended does
// not hold it.
func firstToken(ctx context.Context, ch <-chan provider.Chunk, onFirst func()) <-chan provider.Chunk {
	out := make(chan provider.Chunk, cap(ch))
	go func() {
		defer close(out)
		fired := false
		fire := func() {
			if !fired {
				fired = true
				onFirst()
			}
		}
		defer fire()
		for c := range ch {
			switch c.Type {
			case provider.ChunkText, provider.ChunkReasoning, provider.ChunkToolCall, provider.ChunkError, provider.ChunkDone:
				fire()
			}
			select {
			case out <- c:
			case <-ctx.Done():
				// The reader is going away: drain ch so the provider's
				// sender can finish, and pass nothing more on.
				for range ch {
				}
				return
			}
		}
	}()
	return out
}
