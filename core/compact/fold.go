package compact

import (
	"fmt"
	"strings"

	"reasonix/core/provider"
	"reasonix/core/text"
)

// DigestPrefix opens every digest a fold writes; a later fold recognises a
// digest by it and keeps it verbatim.
const DigestPrefix = "[Digest of earlier work in this session, written when the conversation was compacted. The original messages are archived; the history tool finds their exact wording.]\n\n"

// IsDigest says m is a digest an earlier fold wrote.
func IsDigest(m provider.Message) bool {
	return m.Role == provider.RoleUser && strings.HasPrefix(m.Content, DigestPrefix)
}

// FoldPlan is what a fold would do: replace messages [From, To) with the
// ones it keeps and a digest of the rest.
type FoldPlan struct {
	From, To int
	// Keep are the user turns within the pin budget and earlier digests.
	Keep []int
	// Folded are the messages the digest replaces.
	Folded []int
	// FoldedBytes is their Size.
	FoldedBytes int
	// Policy is the policy that made the plan.
	Policy Policy
}

// PlanFold finds the fold for msgs: everything between the system prompt
// and the recent tail, keeping user turns of at most PinTokens and earlier
// digests. ok is false when nothing would be folded.
func (p Policy) PlanFold(msgs []provider.Message, m Meter) (FoldPlan, bool) {
	plan := FoldPlan{From: 1, To: p.tailStart(msgs, m), Policy: p}
	pin := m.Bytes(p.PinTokens)
	for i := plan.From; i < plan.To; i++ {
		msg := msgs[i]
		if IsDigest(msg) || (msg.Role == provider.RoleUser && Size(msg) <= pin) {
			plan.Keep = append(plan.Keep, i)
			continue
		}
		plan.Folded = append(plan.Folded, i)
		plan.FoldedBytes += Size(msg)
	}
	return plan, len(plan.Folded) > 0
}

// summarySystem is the summariser's system prompt.
const summarySystem = `You compress the working history of a coding agent's session so the agent can continue without it. You are given part of the session's transcript: the agent's messages, the tools it called and what they returned (some results already shortened), and oversized user messages. Write a digest of it:
- what the user asked for, and any facts, names, numbers or constraints they gave;
- what the agent did: files read or changed (with paths), commands run and their outcomes, decisions made and why;
- errors met and how they were handled;
- what is done and what remains, with anything the agent needs to pick the work up.
Be concrete and brief. Keep exact identifiers, paths, values and error text. Write plain text, no preamble.`

// Request is the summariser request for the plan: the folded messages as
// text, cut to fit the window, with no tools. model and effort are the
// executor's.
func (fp FoldPlan) Request(msgs []provider.Message, m Meter, model string) provider.Request {
	p := fp.Policy
	var b strings.Builder
	for _, i := range fp.Folded {
		renderMessage(&b, msgs[i])
	}
	budget := m.Bytes(p.Window-p.summaryTokens()) - len(summarySystem) - 1024
	body := b.String()
	if len(body) > budget && budget > 0 {
		// Keep the start (the task) and the end (the latest state).
		head := text.Prefix(body, budget/3)
		tail := text.Suffix(body, budget-len(head))
		body = head + fmt.Sprintf("\n[... %d bytes of the middle left out ...]\n", len(body)-len(head)-len(tail)) + tail
	}
	return provider.Request{
		Model: model,
		Messages: []provider.Message{
			{Role: provider.RoleSystem, Content: summarySystem},
			{Role: provider.RoleUser, Content: "Transcript to digest:\n\n" + body + "\n\nWrite the digest now."},
		},
		MaxTokens: p.summaryTokens(),
	}
}

// renderMessage writes one message as transcript text.
func renderMessage(b *strings.Builder, m provider.Message) {
	switch m.Role {
	case provider.RoleTool:
		fmt.Fprintf(b, "[tool result: %s]\n%s\n\n", m.Name, m.Content)
	case provider.RoleAssistant:
		if m.Content != "" {
			fmt.Fprintf(b, "[assistant]\n%s\n\n", m.Content)
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(b, "[assistant calls %s] %s\n\n", c.Name, c.Arguments)
		}
	default:
		fmt.Fprintf(b, "[%s]\n%s\n\n", m.Role, m.Content)
	}
}

// Compaction is the fold with the summariser's digest; an empty digest
// (after trimming) gives nil, as a fold must never lose work for nothing.
func (fp FoldPlan) Compaction(msgs []provider.Message, digest string, tokens int, m Meter, trigger string) *Compaction {
	digest = strings.TrimSpace(digest)
	if digest == "" {
		return nil
	}
	d := provider.Message{Role: provider.RoleUser, Content: DigestPrefix + digest}
	after := tokens - m.Tokens(fp.FoldedBytes) + m.Tokens(Size(d))
	return &Compaction{Tier: TierFold, Trigger: trigger, TokensBefore: tokens, TokensAfter: after,
		Messages: len(msgs), Fold: &Fold{From: fp.From, To: fp.To, Keep: fp.Keep, Digest: d}}
}
