package compact

import (
	"fmt"
	"slices"

	"reasonix/core/provider"
)

// The tiers, as compaction events and records name them.
const (
	TierSnip  = "snip"
	TierPrune = "prune"
	TierFold  = "fold"
)

// What started a compaction.
const (
	// TriggerAuto is the executor reaching a tier's ratio.
	TriggerAuto = "auto"
	// TriggerManual is the user asking (/compact).
	TriggerManual = "manual"
	// TriggerFallback is the harder prune that replaces a fold that
	// failed or came back empty, or that keeps a request inside the
	// window when the tiers alone did not.
	TriggerFallback = "fallback"
)

// Compaction is one rewrite of a conversation, recorded in the transcript
// so that a resume replays it (Apply) and rebuilds the same list.
type Compaction struct {
	Tier    string `json:"tier"`
	Trigger string `json:"trigger"`
	// TokensBefore and TokensAfter are the estimated request sizes.
	TokensBefore int `json:"tokens_before"`
	TokensAfter  int `json:"tokens_after"`
	// Messages is the length of the list the compaction applies to.
	Messages int `json:"messages"`
	// Archive is the file holding the originals it replaced.
	Archive string `json:"archive,omitempty"`
	// Edits replace the content of messages, by index (snip and prune).
	Edits []Edit `json:"edits,omitempty"`
	// Fold, applied after Edits, replaces a run of messages with the
	// ones it keeps and a digest.
	Fold *Fold `json:"fold,omitempty"`
}

// Edit replaces one message's content.
type Edit struct {
	Index   int    `json:"index"`
	Content string `json:"content"`
}

// Fold replaces messages [From, To) with the messages of Keep (indices in
// that range, in order) followed by Digest.
type Fold struct {
	From   int              `json:"from"`
	To     int              `json:"to"`
	Keep   []int            `json:"keep,omitempty"`
	Digest provider.Message `json:"digest"`
}

// Apply returns msgs with c applied; msgs itself is not changed. It fails
// when c does not fit msgs (a transcript that was tampered with), so a
// resume never rebuilds a list the session did not have.
func (c *Compaction) Apply(msgs []provider.Message) ([]provider.Message, error) {
	if c.Messages != len(msgs) {
		return nil, fmt.Errorf("compaction: made for %d messages, the conversation has %d", c.Messages, len(msgs))
	}
	out := slices.Clone(msgs)
	for _, e := range c.Edits {
		if e.Index < 1 || e.Index >= len(out) {
			return nil, fmt.Errorf("compaction: edit of message %d out of range", e.Index)
		}
		out[e.Index].Content = e.Content
	}
	f := c.Fold
	if f == nil {
		return out, nil
	}
	if f.From < 1 || f.From > f.To || f.To > len(out) {
		return nil, fmt.Errorf("compaction: fold [%d,%d) out of range", f.From, f.To)
	}
	if f.To < len(out) && out[f.To].Role == provider.RoleTool {
		return nil, fmt.Errorf("compaction: fold ends before a tool result (message %d)", f.To)
	}
	folded := make([]provider.Message, 0, len(out)-(f.To-f.From)+len(f.Keep)+1)
	folded = append(folded, out[:f.From]...)
	last := f.From - 1
	for _, k := range f.Keep {
		if k <= last || k >= f.To {
			return nil, fmt.Errorf("compaction: fold keeps message %d outside [%d,%d) or out of order", k, f.From, f.To)
		}
		if out[k].Role == provider.RoleTool || out[k].Role == provider.RoleAssistant {
			return nil, fmt.Errorf("compaction: fold keeps message %d, a %s message", k, out[k].Role)
		}
		folded = append(folded, out[k])
		last = k
	}
	folded = append(folded, f.Digest)
	return append(folded, out[f.To:]...), nil
}
