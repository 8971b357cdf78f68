package compact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"reasonix/core/provider"
)

// millionTokenSession is a conversation of about a million tokens at the
// meter's rate: 1000 steps of a 3.7 KB tool result each, a user turn every
// 20 steps.
func millionTokenSession() []provider.Message {
	msgs := []provider.Message{{Role: provider.RoleSystem, Content: strings.Repeat("system prompt ", 400)}}
	for i := 0; i < 1000; i++ {
		if i%20 == 0 {
			msgs = append(msgs, provider.Message{Role: provider.RoleUser, Content: fmt.Sprintf("next: part %d of the job", i/20)})
		}
		id := fmt.Sprintf("call_%04d", i)
		msgs = append(msgs,
			provider.Message{Role: provider.RoleAssistant, Content: "reading the next file",
				ToolCalls: []provider.ToolCall{{ID: id, Name: "read_file", Arguments: fmt.Sprintf(`{"path":"src/f%04d.go"}`, i)}}},
			provider.Message{Role: provider.RoleTool, ToolCallID: id, Name: "read_file",
				Content: strings.Repeat(fmt.Sprintf("%04d: some source line of the file\n", i), 100)})
	}
	return msgs
}

// BenchmarkCompact1M is the harness time of compacting a session of about
// a million tokens (model time excluded): deciding, archiving the
// originals, applying, and encoding the transcript record. The fold's
// digest is given, as the model would write it.
func BenchmarkCompact1M(b *testing.B) {
	msgs := millionTokenSession()
	m := Meter{rate: 0.25}
	tok := m.Tokens(ListSize(msgs))
	p := Policy{Window: 1_050_000}.WithDefaults()
	b.Logf("session: %d messages, %d tokens, %.2f of the window", len(msgs), tok, float64(tok+p.Reserve)/float64(p.Window))
	for _, tc := range []struct {
		name   string
		tokens int
	}{
		{"snip", int(0.65 * float64(p.Window))},
		{"prune+fold", int(0.85 * float64(p.Window))},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			now := time.Now()
			for b.Loop() {
				d := p.Decide(msgs, tc.tokens, m, false)
				if d.Trim == nil {
					b.Fatal("nothing to compact")
				}
				cur := msgs
				steps := []*Compaction{d.Trim}
				if d.Fold != nil {
					pruned, err := d.Trim.Apply(cur)
					if err != nil {
						b.Fatal(err)
					}
					_ = d.Fold.Request(pruned, m, "model")
					steps = append(steps, d.Fold.Compaction(pruned, "the digest", tc.tokens, m, TriggerAuto))
				}
				for _, c := range steps {
					if _, err := WriteArchive(dir, now, c.Records(cur, "s", "", now)); err != nil {
						b.Fatal(err)
					}
					next, err := c.Apply(cur)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := json.Marshal(c); err != nil {
						b.Fatal(err)
					}
					cur = next
				}
			}
		})
	}
}
