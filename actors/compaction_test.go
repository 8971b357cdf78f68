package actors

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"reasonix/actors/event"
	"reasonix/core/compact"
	"reasonix/core/provider/providertest"
	"reasonix/core/tool"
)

// bigTool returns a large result, so a few steps give a fold something to
// fold.
func bigTool() *funcTool {
	return &funcTool{name: "dump", readOnly: true, run: func(context.Context, json.RawMessage) (string, error) {
		return strings.Repeat("output line of the dump tool\n", 200), nil
	}}
}

// workTurns scripts n dump steps and a final answer.
func workTurns(n int) []providertest.Turn {
	var turns []providertest.Turn
	for i := 0; i < n; i++ {
		turns = append(turns, providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "dump", Arguments: "{}"}}})
	}
	return append(turns, providertest.Turn{Text: "dumped"})
}

// compactionHarness is a session with a window large enough that nothing
// compacts by itself, so /compact decides what happens.
func compactionHarness(t *testing.T, window int) (*harness, string) {
	archive := t.TempDir()
	pol := compact.Policy{}
	if window > 0 {
		pol = compact.Policy{Window: window}.WithDefaults()
	}
	return newHarness(t, harnessOpts{tools: []tool.Tool{bigTool()}, compaction: pol, archive: archive}), archive
}

// TestCompactFolds: /compact prunes and folds the older work with the
// session's model and no tools; the next request carries the digest and
// the pinned prompt, and the archive holds the originals.
func TestCompactFolds(t *testing.T) {
	h, archive := compactionHarness(t, 200000)
	h.srv.Push(workTurns(6)...)
	h.srv.Push(providertest.Turn{Text: "the digest of the dumps"}, providertest.Turn{Text: "next answer"})
	if done, _ := h.turn("dump six times"); done.Status != event.StatusOK {
		t.Fatalf("work turn: %+v", done)
	}
	done, evs := h.turn("/compact")
	if done.Status != event.StatusOK {
		t.Fatalf("/compact: %+v", done)
	}
	started := eventsOf[*event.CompactionStarted](evs)
	comps := eventsOf[*event.Compacted](evs)
	if len(started) != 1 || len(comps) != 2 || comps[0].Tier != compact.TierPrune || comps[1].Tier != compact.TierFold ||
		comps[1].Trigger != compact.TriggerManual || comps[1].TokensAfter >= comps[0].TokensBefore {
		t.Fatalf("compaction events: started %+v, done %+v", started, comps)
	}
	reqs := h.srv.Requests()
	sum := reqs[len(reqs)-1]
	if len(sum.Tools) != 0 || !strings.HasPrefix(sum.Messages[0].Content, "You compress") || !strings.Contains(sum.Messages[1].Content, "[assistant calls dump]") {
		t.Fatalf("summary request: tools %v, messages %+v", sum.Tools, sum.Messages)
	}
	for _, c := range comps {
		if _, err := os.Stat(c.Archive); err != nil || !strings.HasPrefix(c.Archive, archive) {
			t.Fatalf("archive %q: %v", c.Archive, err)
		}
	}
	h.turn("and now?")
	reqs = h.srv.Requests()
	next := reqs[len(reqs)-1]
	var digest, prompt bool
	for _, m := range next.Messages {
		digest = digest || strings.Contains(m.Content, compact.DigestPrefix+"the digest of the dumps")
		prompt = prompt || (m.Role == "user" && m.Content == "dump six times")
		if m.Role == "tool" && strings.Contains(m.Content, "output line") && !strings.Contains(m.Content, "snipped") {
			t.Errorf("a stale result survived whole")
		}
	}
	if !digest || !prompt {
		t.Fatalf("after /compact: digest %v, pinned prompt %v: %+v", digest, prompt, next.Messages)
	}
}

// TestCompactFoldFailsSoft: a summary request that fails, or comes back
// empty, does not fail the turn: a notice says so and the conversation
// is squeezed instead.
func TestCompactFoldFailsSoft(t *testing.T) {
	for name, reply := range map[string]providertest.Turn{
		"error": {Status: 500},
		"empty": {Text: "  "},
	} {
		t.Run(name, func(t *testing.T) {
			h, _ := compactionHarness(t, 200000)
			h.srv.Push(workTurns(4)...)
			h.srv.Push(reply)
			h.turn("dump")
			done, evs := h.turn("/compact")
			if done.Status != event.StatusOK {
				t.Fatalf("/compact ended %+v", done)
			}
			var warned bool
			for _, n := range eventsOf[*event.Notice](evs) {
				warned = warned || (n.Level == "warn" && strings.Contains(n.Message, "pruned old tool results harder"))
			}
			comps := eventsOf[*event.Compacted](evs)
			if !warned || len(comps) == 0 || comps[len(comps)-1].Tier == compact.TierFold {
				t.Fatalf("notice %v, compactions %+v", warned, comps)
			}
		})
	}
}

// TestCompactCancelDuringFold: a cancel while the summary request hangs
// ends the turn as cancelled, and the hung request is let go.
func TestCompactCancelDuringFold(t *testing.T) {
	h, _ := compactionHarness(t, 200000)
	h.srv.Push(workTurns(4)...)
	h.srv.Push(providertest.Turn{Latency: -1})
	h.turn("dump")
	h.sess.Run("/compact")
	h.waitEvent(func(e event.Event) bool { _, ok := e.(*event.CompactionStarted); return ok })
	h.sess.Cancel()
	done, evs := h.wait()
	if done.Status != event.StatusCancelled {
		t.Fatalf("turn %+v", done)
	}
	for _, c := range eventsOf[*event.Compacted](evs) {
		if c.Tier == compact.TierFold {
			t.Fatalf("a cancelled fold was applied: %+v", c)
		}
	}
}

// TestCompactWithoutWindow: /compact on a model with no context window
// says compaction is off and sends nothing to the model.
func TestCompactWithoutWindow(t *testing.T) {
	h, _ := compactionHarness(t, 0)
	h.srv.Push(providertest.Turn{Text: "hi"})
	h.turn("hello")
	before := h.srv.Count()
	done, evs := h.turn("/compact")
	if done.Status != event.StatusOK || h.srv.Count() != before {
		t.Fatalf("turn %+v, %d requests sent", done, h.srv.Count()-before)
	}
	notices := eventsOf[*event.Notice](evs)
	if len(notices) != 1 || !strings.Contains(notices[0].Message, "compaction is off") {
		t.Fatalf("notices %+v", notices)
	}
}

// TestAutoCompactionKeepsRequestsInWindow: with a small window, a long
// turn compacts by itself and no request goes past the window, also when
// every summary request fails and the fallback squeeze has to do.
func TestAutoCompactionKeepsRequestsInWindow(t *testing.T) {
	for name, summary := range map[string]providertest.Turn{
		"fold":     {Text: "digest"},
		"fallback": {Status: 500},
	} {
		t.Run(name, func(t *testing.T) {
			const window, reserve = 9000, 300
			pol := compact.Policy{Window: window, Reserve: reserve}.WithDefaults()
			h := newHarness(t, harnessOpts{tools: []tool.Tool{bigTool()}, compaction: pol, archive: t.TempDir(),
				server: []providertest.Option{providertest.WithResponder(func(r providertest.Request) providertest.Turn {
					if len(r.Tools) == 0 {
						return summary
					}
					// The text is work only a fold can shorten.
					return providertest.Turn{Text: strings.Repeat("thinking about the dump. ", 24),
						ToolCalls: []providertest.ToolCall{{Name: "dump", Arguments: "{}"}}}
				})}, maxSteps: 60})
			done, evs := h.turn("dump until stopped")
			// Without folds the texts outgrow the window at last: the turn
			// then fails, saying so, rather than send too much.
			if done.Status != event.StatusMaxSteps && (summary.Status == 0 || !strings.Contains(done.Error, "context window")) {
				t.Fatalf("turn %+v", done)
			}
			tiers := map[string]int{}
			for _, c := range eventsOf[*event.Compacted](evs) {
				tiers[c.Tier+"/"+c.Trigger]++
			}
			want := "fold/auto"
			if summary.Status != 0 {
				want = "prune/fallback"
			}
			if tiers[want] == 0 {
				t.Fatalf("compactions %v: none %s", tiers, want)
			}
			for i, r := range h.srv.Requests() {
				if tok := len(r.Body)/4 + reserve; tok > window {
					t.Fatalf("request %d: %d tokens with the reserve, window %d", i, tok, window)
				}
			}
		})
	}
}
