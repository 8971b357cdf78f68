package fleet

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/event"
)

// DefaultWarmWait bounds how long the siblings of a fan-out wait for the
// first one's first token.
const DefaultWarmWait = 5 * time.Second

// DefaultMinWarmPrefix is the smallest prefix, in estimated tokens, worth
// holding siblings for: OpenAI's prompt cache starts at 1024 tokens, and a
// smaller prefix saves less prefill than the wait costs.
const DefaultMinWarmPrefix = 1024

// minWarmPrefix is the prefix size below which a warmer releases its
// siblings at once.
func (f *fleetActor) minWarmPrefix() int {
	switch {
	case f.spec.MinWarmPrefix < 0:
		return 0
	case f.spec.MinWarmPrefix == 0:
		return DefaultMinWarmPrefix
	}
	return f.spec.MinWarmPrefix
}

// warmup is one shared prompt prefix of a fleet: siblings with the same
// profile, model and tool set send byte-identical system prompts and
// tools, so the first of them to start (the warmer) fills the provider's
// prompt cache, and the others are held, slots taken, until its first
// token arrives, its task ends or the wait runs out. They then start together
// and read the prefix from the cache.
type warmup struct {
	warmer string
	held   []string
	done   bool
	timer  *time.Timer
}

// prefixWarmed reports that a warmer's first request got its first token
// (or failed), so its held siblings may start.
type prefixWarmed struct {
	fleet, key string
}

// prefixKey groups the tasks of a fleet that share a prompt prefix.
func prefixKey(spec event.TaskSpec) string {
	w := "r"
	if spec.Writer {
		w = "w"
	}
	return spec.Profile + "\x00" + spec.Model + "\x00" + w
}

// warmWait is the bound on a held sibling's wait; zero when holding is off.
func (f *fleetActor) warmWait() time.Duration {
	switch {
	case f.spec.WarmWait < 0:
		return 0
	case f.spec.WarmWait == 0:
		return DefaultWarmWait
	}
	return f.spec.WarmWait
}

// hold decides whether an admitted task waits for its prefix to warm. The
// first task of each prefix starts at once, as the warmer; later ones are
// held while the warmer has not had its first token, and a local one is
// prepared meanwhile (see startAll), which takes building 63 agents off
// the moment the warmer's first token releases them. True means the
// caller must not start the task (it is held, or ended while being
// prepared).
func (f *fleetActor) hold(c actor.Context, t *runningTask, deadline time.Time) bool {
	fl := f.fleets[t.fleet]
	wait := f.warmWait()
	if fl == nil || len(fl.ids) < 2 || wait == 0 {
		return false
	}
	// Per node: each worker calls the provider with its own account, so
	// siblings on different nodes share no prompt cache.
	key := prefixKey(t.spec) + "\x00" + t.node
	if fl.warm == nil {
		fl.warm = map[string]*warmup{}
	}
	w := fl.warm[key]
	if w == nil {
		w = &warmup{warmer: t.spec.ID}
		fl.warm[key] = w
		sys, self, fleetID := f.sys, f.self, t.fleet
		w.timer = time.AfterFunc(wait, func() { sys.Send(self, &prefixWarmed{fleet: fleetID, key: key}) })
		t.warmKey = key
		return false
	}
	if w.done {
		return false
	}
	if t.node == "" {
		if t.prep = f.prepare(c, t, deadline); t.prep == nil {
			return true // it ended: no agent could be built for it
		}
	}
	t.held, t.heldDeadline = true, deadline
	w.held = append(w.held, t.spec.ID)
	return true
}

// warmed starts the siblings held behind a prefix.
func (f *fleetActor) warmed(c actor.Context, fleetID, key string) {
	fl := f.fleets[fleetID]
	if fl == nil {
		return
	}
	w := fl.warm[key]
	if w == nil || w.done {
		return
	}
	w.done = true
	w.timer.Stop()
	var (
		batch []toStart
		ready []*prepared
	)
	for _, id := range w.held {
		if t := f.tasks[id]; t != nil && t.held {
			t.held = false
			if t.prep != nil {
				ready = append(ready, t.prep)
				t.prep = nil
			} else {
				batch = append(batch, toStart{t, t.heldDeadline})
			}
		}
	}
	w.held = nil
	f.startAll(c, batch, ready)
	f.armTimer()
}

// releaseAll starts every held task, for a repair that may have lost the
// message that would have.
func (f *fleetActor) releaseAll(c actor.Context) {
	for fleetID, fl := range f.fleets {
		for key := range fl.warm {
			f.warmed(c, fleetID, key)
		}
	}
}
