package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/event"
	"reasonix/core/compact"
	"reasonix/core/provider"
)

// foldState is a fold waiting for its digest.
type foldState struct {
	plan    compact.FoldPlan
	tokens  int
	trigger string
}

// foldDone carries the summariser's answer back to the executor.
type foldDone struct {
	epoch int
	text  string
	usage *provider.Usage
	err   error
}

// tokens estimates the next request of the running turn.
func (e *executor) tokens() int { return e.gauge.Tokens(e.msgs, e.turn.schemaBytes) }

// maintain runs the compaction tiers before a step's request and reports
// whether the request may go now: false when a fold has started (its
// answer resumes the step) or when the turn had to end because even a
// compacted conversation does not fit the window.
func (e *executor) maintain(c actor.Context) bool {
	if !e.spec.Compaction.Enabled() {
		return true
	}
	if _, folding := e.runTiers(c, false); folding {
		return false
	}
	return e.ensureFits(c)
}

// runTiers applies the tiers Decide picks for the next request (manual:
// the user's /compact) and reports whether it trimmed and whether a fold
// has started.
func (e *executor) runTiers(c actor.Context, manual bool) (trimmed, folding bool) {
	tok := e.tokens()
	d := e.spec.Compaction.Decide(e.msgs, tok, e.gauge.Meter, manual)
	if d.Trim != nil {
		e.applyCompaction(d.Trim)
		tok = e.tokens()
	}
	if d.Fold != nil {
		trigger := compact.TriggerAuto
		if manual {
			trigger = compact.TriggerManual
		}
		e.startFold(c, *d.Fold, tok, trigger)
	}
	return d.Trim != nil, d.Fold != nil
}

// ensureFits squeezes the conversation when the next request would not
// fit the window, and ends the turn as failed when even that is not
// enough: a request is never sent past the window.
func (e *executor) ensureFits(c actor.Context) bool {
	pol := e.spec.Compaction
	tok := e.tokens()
	if pol.Fits(tok) {
		return true
	}
	if sq := compact.Squeeze(e.msgs, tok, e.gauge.Meter); sq != nil {
		e.applyCompaction(sq)
		if tok = e.tokens(); pol.Fits(tok) {
			return true
		}
	}
	msg := fmt.Sprintf("the conversation needs about %d tokens plus %d for the answer even after compaction, more than the model's context window of %d; start a new session, or raise context_window if the model allows more",
		tok, pol.Reserve, pol.Window)
	e.publish(&event.ErrorOccurred{Message: msg})
	e.endTurn(c, event.StatusFailed, msg)
	return false
}

// compactNow is the user's /compact: prune and fold what is stale,
// whatever the ratios say, then end the turn.
func (e *executor) compactNow(c actor.Context) {
	pol := e.spec.Compaction
	if !pol.Enabled() {
		e.publish(&event.Notice{Level: "info", Message: "compaction is off for this model (context_window = 0)"})
		e.endTurn(c, event.StatusOK, "")
		return
	}
	trimmed, folding := e.runTiers(c, true)
	if folding {
		return
	}
	if !trimmed {
		e.publish(&event.Notice{Level: "info", Message: "nothing to compact: the conversation is all recent"})
	}
	e.endTurn(c, event.StatusOK, "")
}

// startFold asks the executor's own model, with no tools, for a digest of
// the older work plan covers; its answer comes back as foldDone.
func (e *executor) startFold(c actor.Context, plan compact.FoldPlan, tokens int, trigger string) {
	t := e.turn
	t.fold = &foldState{plan: plan, tokens: tokens, trigger: trigger}
	e.epoch++
	epoch := e.epoch
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	e.publish(&event.CompactionStarted{Tier: compact.TierFold, Trigger: trigger, Tokens: tokens, Messages: len(plan.Folded)})
	req := plan.Request(e.msgs, e.gauge.Meter, e.spec.Model)
	req.Temperature = e.spec.Temperature
	self, p := c.Self(), e.spec.Provider
	e.sys.Go(func() {
		done := &foldDone{epoch: epoch}
		defer func() { e.sys.Send(self, done) }()
		ch, err := p.Stream(ctx, req)
		if err != nil {
			done.err = err
			return
		}
		var b strings.Builder
		for ch := range ch {
			switch ch.Type {
			case provider.ChunkText:
				b.WriteString(ch.Text)
			case provider.ChunkUsage:
				done.usage = ch.Usage
			case provider.ChunkError:
				done.err = ch.Err
			}
		}
		done.text = b.String()
	}, func(reason any, _ []byte) {
		e.sys.Send(self, &foldDone{epoch: epoch, err: fmt.Errorf("summary request crashed: %v", reason)})
	})
}

// onFoldDone applies the digest, or, when the summary failed or came back
// empty, prunes harder instead, and goes on with the step (or ends the
// /compact turn).
func (e *executor) onFoldDone(c actor.Context, m *foldDone) {
	t := e.turn
	if t == nil || t.fold == nil || m.epoch != e.epoch {
		return
	}
	f := t.fold
	t.fold = nil
	t.cancel()
	if m.usage != nil {
		t.usage.Add(*m.usage)
		e.total.Add(*m.usage)
		e.publish(&event.UsageReported{Usage: *m.usage, Total: e.total})
	}
	if t.canceled {
		e.endTurn(c, event.StatusCancelled, "")
		return
	}
	var cp *compact.Compaction
	if m.err == nil {
		cp = f.plan.Compaction(e.msgs, m.text, f.tokens, e.gauge.Meter, f.trigger)
	}
	if cp != nil {
		e.applyCompaction(cp)
	} else {
		why := "came back empty"
		if m.err != nil {
			why = "failed: " + m.err.Error()
		}
		e.publish(&event.Notice{Level: "warn", Message: "compaction: the summary request " + why + "; pruned old tool results harder instead"})
		if sq := compact.Squeeze(e.msgs, e.tokens(), e.gauge.Meter); sq != nil {
			e.applyCompaction(sq)
		}
	}
	if t.manual {
		e.endTurn(c, event.StatusOK, "")
		return
	}
	if e.ensureFits(c) {
		e.request(c)
	}
}

// applyCompaction archives what cp replaces, rewrites the message list,
// records cp in the transcript so a resume replays it, and reports it.
func (e *executor) applyCompaction(cp *compact.Compaction) {
	now := time.Now()
	if dir := e.spec.ArchiveDir; dir != "" {
		path, err := compact.WriteArchive(dir, now, cp.Records(e.msgs, e.spec.Session, e.spec.Task, now))
		if err != nil {
			// The originals are still in the transcript; the archive is
			// the second copy, so the compaction goes on, but the turn
			// does not end ok: what it promised to keep is not kept.
			e.log.Warn("compaction archive", "err", err)
			if e.spec.Saves != nil {
				e.spec.Saves.Fail("compaction archive", err, false)
			} else {
				e.publish(&event.Notice{Level: "warn", Message: "compaction archive not saved: " + SaveCause(err)})
			}
		}
		cp.Archive = path
	}
	out, err := cp.Apply(e.msgs)
	if err != nil {
		e.log.Error("compaction does not fit the conversation", "err", err)
		return
	}
	before := len(e.msgs)
	e.msgs = out
	e.gauge.Forget()
	cp.TokensAfter = e.tokens()
	if tr, ok := e.spec.Transcript.(interface {
		AppendCompaction(compact.Compaction) error
	}); ok {
		if err := tr.AppendCompaction(*cp); err != nil {
			e.log.Error("transcript compaction append failed", "err", err)
			e.publish(&event.Notice{Level: "warn", Message: "transcript not saved: " + err.Error()})
		}
	}
	e.publish(&event.Compacted{Tier: cp.Tier, Trigger: cp.Trigger, TokensBefore: cp.TokensBefore, TokensAfter: cp.TokensAfter,
		Window: e.spec.Compaction.Window, MessagesBefore: before, MessagesAfter: len(out), Archive: cp.Archive})
}
