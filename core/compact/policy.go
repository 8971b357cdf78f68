package compact

import (
	"fmt"
	"strings"

	"reasonix/core/provider"
	"reasonix/core/text"
)

// Policy is when and how hard a conversation is compacted. The ratios are
// fractions of Window; a request needs its prompt plus Reserve.
type Policy struct {
	// Window is the model's context window in tokens; 0 disables
	// compaction.
	Window int
	// Reserve is the output budget each request leaves room for: the
	// max_tokens sent, or a default share of the window when none is.
	Reserve int
	// SnipRatio, CompactRatio and ForceRatio are the tiers
	// (agent.tool_result_snip_ratio, compact_ratio, compact_force_ratio).
	SnipRatio, CompactRatio, ForceRatio float64
	// PinTokens is the largest user turn a fold keeps verbatim.
	PinTokens int
	// TailTokens is how much of the end of the conversation compaction
	// leaves alone (at least the last step, whatever its size).
	TailTokens int
}

// Enabled says the policy compacts at all.
func (p Policy) Enabled() bool { return p.Window > 0 }

// WithDefaults fills the fields left zero: ratios 0.6 / 0.8 / 0.9, a
// reserve of a tenth of the window (256 to 8192 tokens), a pin budget of
// a fiftieth (256 to 8192) and a tail of an eighth of the window.
func (p Policy) WithDefaults() Policy {
	if p.SnipRatio <= 0 {
		p.SnipRatio = 0.6
	}
	if p.CompactRatio <= 0 {
		p.CompactRatio = 0.8
	}
	if p.ForceRatio <= 0 {
		p.ForceRatio = 0.9
	}
	if p.Reserve <= 0 {
		p.Reserve = min(8192, max(256, p.Window/10))
	}
	if p.PinTokens <= 0 {
		p.PinTokens = min(8192, max(256, p.Window/50))
	}
	if p.TailTokens <= 0 {
		p.TailTokens = p.Window / 8
	}
	return p
}

func (p Policy) at(ratio float64) int { return int(ratio * float64(p.Window)) }

// minSaving is the least a snip, a prune or a fold below the force ratio
// must save to be worth changing the prefix: an eighth of the window, so
// the cache is reset rarely and by much rather than a little every step.
func (p Policy) minSaving() int { return p.Window / 8 }

// summaryTokens bounds the digest a fold asks for.
func (p Policy) summaryTokens() int { return min(4096, max(256, p.Window/16)) }

// Fits says a request of tokens prompt tokens, plus the reserve, fits the
// window.
func (p Policy) Fits(tokens int) bool { return !p.Enabled() || tokens+p.Reserve <= p.Window }

// Decision is what Decide found to do before the next request.
type Decision struct {
	// Trim, when set, is the snip or prune to apply now.
	Trim *Compaction
	// Fold, when set, is the fold to run after Trim, planned on the list
	// Trim leaves.
	Fold *FoldPlan
	// Force says the fold runs at the force ratio, past its economics.
	Force bool
}

// Decide picks the tiers for the next request, which would send msgs at
// tokens prompt tokens. manual is the user's /compact: prune and fold
// everything before the last step, whatever the ratios say.
func (p Policy) Decide(msgs []provider.Message, tokens int, m Meter, manual bool) Decision {
	if !p.Enabled() {
		return Decision{}
	}
	need := tokens + p.Reserve
	if need < p.at(p.SnipRatio) && !manual {
		return Decision{}
	}
	trigger := TriggerAuto
	if manual {
		trigger = TriggerManual
		p.TailTokens = 0 // the tail is the last step alone
	}
	tail := p.tailStart(msgs, m)
	if need < p.at(p.CompactRatio) && !manual {
		edits, saved := trimEdits(msgs, tail, TierSnip)
		if len(edits) == 0 || m.Tokens(saved) < p.minSaving() {
			return Decision{}
		}
		return Decision{Trim: &Compaction{Tier: TierSnip, Trigger: trigger, TokensBefore: tokens,
			TokensAfter: tokens - m.Tokens(saved), Messages: len(msgs), Edits: edits}}
	}
	edits, saved := trimEdits(msgs, tail, TierPrune)
	var trim *Compaction
	after := tokens
	if len(edits) > 0 {
		after = tokens - m.Tokens(saved)
		trim = &Compaction{Tier: TierPrune, Trigger: trigger, TokensBefore: tokens, TokensAfter: after,
			Messages: len(msgs), Edits: edits}
	}
	d := Decision{Trim: trim}
	force := need >= p.at(p.ForceRatio)
	if manual || after+p.Reserve >= p.at(p.CompactRatio) {
		pruned := msgs
		if trim != nil {
			pruned, _ = trim.Apply(msgs)
		}
		if plan, ok := p.PlanFold(pruned, m); ok {
			worth := m.Tokens(plan.FoldedBytes)-p.summaryTokens() >= p.minSaving()
			if manual || worth || force {
				d.Fold, d.Force = &plan, !worth && force
			}
		}
	}
	// A small prune alone is not worth a cache reset below the force
	// ratio; it waits to be joined by more.
	if trim != nil && d.Fold == nil && !force && !manual && m.Tokens(saved) < p.minSaving() {
		d.Trim = nil
	}
	return d
}

// tailStart is the index where the recent tail begins: at least the last
// step (the last user turn, or the last assistant message and the tool
// results after it), then earlier steps while they fit TailTokens. It
// never starts on a tool result, and never before message 1 (0 is the
// system prompt).
func (p Policy) tailStart(msgs []provider.Message, m Meter) int {
	step := func(end int) int { // start of the step ending before end
		i := end - 1
		for i > 1 && msgs[i].Role == provider.RoleTool {
			i--
		}
		return i
	}
	if len(msgs) <= 1 {
		return len(msgs)
	}
	start := step(len(msgs))
	used := ListSize(msgs[start:])
	budget := m.Bytes(p.TailTokens)
	for start > 1 {
		k := step(start)
		cost := ListSize(msgs[k:start])
		if used+cost > budget {
			break
		}
		used += cost
		start = k
	}
	return max(start, 1)
}

// The marks compaction leaves in a tool result. They are fixed text, so a
// compaction is deterministic and a later one can tell what it did.
const (
	snipOpen  = "\n[... snipped "
	snipMark  = " bytes by compaction; the full result is archived and the history tool can find it ...]\n"
	pruneMark = "[tool result pruned by compaction: "
	// Sizes kept by a snip, and the least a result must have for cutting
	// it to be worth a change.
	snipHead     = 768
	snipTail     = 384
	snipMinBytes = 2 * (snipHead + snipTail)
	pruneMin     = 256
	// snipMax bounds a snipped result: head, tail, and the mark with its
	// two numbers.
	snipMax = snipHead + snipTail + len(snipOpen) + len(snipMark) + 48
)

// state of a tool result.
const (
	stateRaw = iota
	stateSnipped
	statePruned
)

func resultState(content string) int {
	switch {
	case strings.HasPrefix(content, pruneMark):
		return statePruned
	// A snipped result is short, so a long one is not searched.
	case len(content) <= snipMax && strings.Contains(content, snipMark):
		return stateSnipped
	}
	return stateRaw
}

// kept says a tool result stays whole: errors and blocked calls explain
// what went wrong, and are short.
func kept(content string) bool {
	return strings.HasPrefix(content, "Error") || strings.HasPrefix(content, "Blocked:")
}

// Snipped is content cut to its head and tail around the snip mark, which
// records how much was cut of how much.
func Snipped(content string) string {
	head := text.Prefix(content, snipHead)
	tail := text.Suffix(content[len(head):], snipTail)
	cut := len(content) - len(head) - len(tail)
	return fmt.Sprintf("%s%s%d of %d%s%s", head, snipOpen, cut, len(content), snipMark, tail)
}

// Pruned is the placeholder for a result of n bytes.
func Pruned(n int) string {
	return fmt.Sprintf("%s%d bytes archived; the history tool can find it]", pruneMark, n)
}

// originalSize is the size of a tool result before any compaction.
func originalSize(content string) int {
	i := strings.LastIndex(content, snipOpen)
	if i < 0 || !strings.Contains(content[i:], snipMark) {
		return len(content)
	}
	var cut, total int
	if _, err := fmt.Sscanf(content[i+len(snipOpen):], "%d of %d", &cut, &total); err != nil {
		return len(content)
	}
	return total
}

// trimEdits are the edits of tier for the stale tool results before tail,
// and the bytes they save.
func trimEdits(msgs []provider.Message, tail int, tier string) ([]Edit, int) {
	var edits []Edit
	saved := 0
	for i := 1; i < tail; i++ {
		msg := msgs[i]
		if msg.Role != provider.RoleTool || kept(msg.Content) {
			continue
		}
		st := resultState(msg.Content)
		var content string
		switch {
		case tier == TierSnip && st == stateRaw && len(msg.Content) >= snipMinBytes:
			content = Snipped(msg.Content)
		case tier == TierPrune && st != statePruned && len(msg.Content) >= pruneMin:
			content = Pruned(originalSize(msg.Content))
		default:
			continue
		}
		edits = append(edits, Edit{Index: i, Content: content})
		saved += len(msg.Content) - len(content)
	}
	return edits, saved
}

// Squeeze is the last resort when a request would not fit, or a fold
// failed: every tool result but those of the last step is pruned, errors
// included, and the last step's results are snipped. It returns nil when
// there is nothing left to cut.
func Squeeze(msgs []provider.Message, tokens int, m Meter) *Compaction {
	last := len(msgs)
	for last > 1 && msgs[last-1].Role == provider.RoleTool {
		last--
	}
	var edits []Edit
	saved := 0
	for i := 1; i < len(msgs); i++ {
		msg := msgs[i]
		if msg.Role != provider.RoleTool {
			continue
		}
		st := resultState(msg.Content)
		var content string
		switch {
		case i < last && st != statePruned && len(msg.Content) >= pruneMin:
			content = Pruned(originalSize(msg.Content))
		case i >= last && st == stateRaw && len(msg.Content) >= snipMinBytes:
			content = Snipped(msg.Content)
		default:
			continue
		}
		edits = append(edits, Edit{Index: i, Content: content})
		saved += len(msg.Content) - len(content)
	}
	if len(edits) == 0 {
		return nil
	}
	return &Compaction{Tier: TierPrune, Trigger: TriggerFallback, TokensBefore: tokens,
		TokensAfter: tokens - m.Tokens(saved), Messages: len(msgs), Edits: edits}
}
