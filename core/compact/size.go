package compact

import (
	"encoding/json"
	"math"

	"reasonix/core/provider"
)

// Fixed costs of a message's and a tool call's JSON framing in a request,
// in bytes: field names, quotes, braces.
const (
	messageOverhead = 48
	callOverhead    = 64
)

// Size is what m adds to a request, in bytes: its text fields plus its
// framing. It is the unit the Meter turns into tokens.
func Size(m provider.Message) int {
	n := messageOverhead + len(m.Content) + len(m.ReasoningContent) + len(m.ToolCallID) + len(m.Name)
	for _, c := range m.ToolCalls {
		n += callOverhead + len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	return n
}

// ListSize is the Size of every message of msgs.
func ListSize(msgs []provider.Message) int {
	n := 0
	for i := range msgs {
		n += Size(msgs[i])
	}
	return n
}

// SchemaSize is what the tool schemas add to a request, in bytes.
func SchemaSize(tools []provider.ToolSchema) int {
	if len(tools) == 0 {
		return 0
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return 0
	}
	return len(b)
}

// Tokens per byte: the starting rate is cautious (code and non-Latin text
// run about three bytes a token) until a provider's usage says otherwise;
// a measured rate is kept within the bounds.
const (
	defaultRate = 1.0 / 3
	minRate     = 1.0 / 8
	maxRate     = 1.0
)

// Meter turns request bytes into tokens at the rate the provider's usage
// last showed. The zero value uses a cautious default rate.
type Meter struct{ rate float64 }

// Tokens is bytes in tokens, rounded up.
func (m Meter) Tokens(bytes int) int {
	r := m.rate
	if r == 0 {
		r = defaultRate
	}
	return int(math.Ceil(float64(bytes) * r))
}

// Bytes is tokens in bytes at the meter's rate, rounded down: how much
// text fits in a token budget.
func (m Meter) Bytes(tokens int) int {
	r := m.rate
	if r == 0 {
		r = defaultRate
	}
	return int(float64(tokens) / r)
}

// Gauge tracks how many tokens the next request will take: the prompt
// tokens the provider reported for the last request, plus an estimate for
// what was appended since. After a compaction (or on a resumed session,
// which has no usage yet) the whole list is estimated until the next
// report.
type Gauge struct {
	Meter
	// known is what the provider counted for the first mark messages,
	// tools included; mark is 0 when there is no report to build on.
	known, mark int
}

// Observe records the prompt tokens the provider reported for a request
// that sent msgs and tool schemas of schemaBytes, and calibrates the rate.
func (g *Gauge) Observe(promptTokens int, msgs []provider.Message, schemaBytes int) {
	if promptTokens <= 0 {
		return
	}
	if b := ListSize(msgs) + schemaBytes; b > 0 {
		g.rate = min(maxRate, max(minRate, float64(promptTokens)/float64(b)))
	}
	g.known, g.mark = promptTokens, len(msgs)
}

// Tokens estimates a request sending msgs and schemas of schemaBytes.
func (g *Gauge) Tokens(msgs []provider.Message, schemaBytes int) int {
	if g.mark == 0 || g.mark > len(msgs) {
		return g.Meter.Tokens(ListSize(msgs) + schemaBytes)
	}
	return g.known + g.Meter.Tokens(ListSize(msgs[g.mark:]))
}

// Forget drops the last report: the list it counted has been rewritten.
func (g *Gauge) Forget() { g.known, g.mark = 0, 0 }
