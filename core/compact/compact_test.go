package compact

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/core/provider"
)

// convo builds a system prompt then steps of (user?) assistant call + a
// tool result of resultBytes.
func convo(steps, resultBytes int, userEvery int) []provider.Message {
	msgs := []provider.Message{{Role: provider.RoleSystem, Content: "system prompt"}}
	for i := 0; i < steps; i++ {
		if userEvery > 0 && i%userEvery == 0 {
			msgs = append(msgs, provider.Message{Role: provider.RoleUser, Content: fmt.Sprintf("user fact %d: the code word is w%d", i, i)})
		}
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs,
			provider.Message{Role: provider.RoleAssistant, Content: fmt.Sprintf("step %d", i),
				ToolCalls: []provider.ToolCall{{ID: id, Name: "read_file", Arguments: `{"path":"f"}`}}},
			provider.Message{Role: provider.RoleTool, ToolCallID: id, Name: "read_file",
				Content: fmt.Sprintf("result %d ", i) + strings.Repeat("x", resultBytes)})
	}
	return msgs
}

var meter = Meter{rate: 0.25}

func TestDecideBelowSnipDoesNothing(t *testing.T) {
	p := Policy{Window: 100000}.WithDefaults()
	msgs := convo(10, 4000, 3)
	tok := meter.Tokens(ListSize(msgs))
	if d := p.Decide(msgs, tok, meter, false); d.Trim != nil || d.Fold != nil {
		t.Fatalf("tokens %d of %d: %+v", tok, p.Window, d)
	}
}

func TestSnipShortensStaleResultsOnly(t *testing.T) {
	msgs := convo(30, 4000, 5)
	const errAt = 3 // the first tool result
	msgs[errAt].Content = "Error: no such file " + strings.Repeat("e", 5000)
	tok := meter.Tokens(ListSize(msgs))
	p := Policy{Window: int(float64(tok+2000) / 0.7)}.WithDefaults() // ~0.7 of the window with the reserve
	p.Reserve = 2000
	d := p.Decide(msgs, tok, meter, false)
	if d.Trim == nil || d.Trim.Tier != TierSnip || d.Fold != nil {
		t.Fatalf("want a snip, got %+v", d)
	}
	out, err := d.Trim.Apply(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(msgs) {
		t.Fatalf("snip changed the message count: %d -> %d", len(msgs), len(out))
	}
	tail := p.tailStart(msgs, meter)
	for i := range msgs {
		changed := out[i].Content != msgs[i].Content
		switch {
		case i >= tail && changed:
			t.Errorf("message %d in the tail (from %d) was rewritten", i, tail)
		case i == errAt && changed:
			t.Errorf("the error result was snipped")
		case msgs[i].Role != provider.RoleTool && changed:
			t.Errorf("non-tool message %d rewritten", i)
		case msgs[i].Role == provider.RoleTool && i < tail && i != errAt && !changed:
			t.Errorf("stale result %d not snipped", i)
		}
		if changed {
			if !strings.HasPrefix(out[i].Content, msgs[i].Content[:snipHead]) || !strings.HasSuffix(out[i].Content, msgs[i].Content[len(msgs[i].Content)-snipTail:]) {
				t.Errorf("snip of %d lost its head or tail", i)
			}
			if originalSize(out[i].Content) != len(msgs[i].Content) {
				t.Errorf("snip of %d records %d bytes, was %d", i, originalSize(out[i].Content), len(msgs[i].Content))
			}
		}
	}
	if !paired(out) {
		t.Fatal("calls unpaired")
	}
	// Deterministic: the same input gives the same edits.
	d2 := p.Decide(msgs, tok, meter, false)
	if fmt.Sprint(d2.Trim.Edits) != fmt.Sprint(d.Trim.Edits) {
		t.Fatal("snip is not deterministic")
	}
}

func TestPruneUpgradesSnippedAndLeavesPruned(t *testing.T) {
	msgs := convo(30, 4000, 0)
	msgs[2].Content = Snipped(msgs[2].Content)
	orig2 := 4000 + len("result 0 ")
	msgs[4].Content = Pruned(777)
	tok := meter.Tokens(ListSize(msgs))
	p := Policy{Window: int(float64(tok) / 0.85), Reserve: 1}.WithDefaults()
	d := p.Decide(msgs, tok, meter, false)
	if d.Trim == nil || d.Trim.Tier != TierPrune {
		t.Fatalf("want a prune, got %+v", d)
	}
	out, _ := d.Trim.Apply(msgs)
	if out[2].Content != Pruned(orig2) {
		t.Errorf("snipped result became %q, want %q", out[2].Content, Pruned(orig2))
	}
	if out[4].Content != Pruned(777) {
		t.Errorf("pruned result rewritten: %q", out[4].Content)
	}
	for _, e := range d.Trim.Edits {
		if e.Index == 4 {
			t.Errorf("an edit for the pruned result")
		}
	}
}

// TestTrimKeepsErrorsAndBlocked: snip and prune leave error and blocked
// results whole (docs/SPEC.md, Compaction), however large, as they say
// what went wrong; the other stale results beside them are still cut.
func TestTrimKeepsErrorsAndBlocked(t *testing.T) {
	t.Parallel()
	for _, tier := range []string{TierSnip, TierPrune} {
		t.Run(tier, func(t *testing.T) {
			t.Parallel()
			msgs := convo(4, 4000, 0)
			whole := map[int]string{
				2: "Error: no such file " + strings.Repeat("e", 5000),
				4: "Blocked: blocked by deny rule Bash(rm:*) " + strings.Repeat("b", 5000),
			}
			for i, c := range whole {
				msgs[i].Content = c
			}
			edits, _ := trimEdits(msgs, len(msgs), tier)
			cut := map[int]bool{}
			for _, e := range edits {
				cut[e.Index] = true
			}
			for i := range whole {
				if cut[i] {
					t.Errorf("%s cut the result %.20q", tier, msgs[i].Content)
				}
			}
			for i, m := range msgs {
				if _, ok := whole[i]; !ok && m.Role == provider.RoleTool && !cut[i] {
					t.Errorf("%s left the stale result %d whole", tier, i)
				}
			}
		})
	}
}

func TestSmallSnipWaits(t *testing.T) {
	// Only one stale result, worth far less than a tenth of the window:
	// the prefix is not reset for it.
	msgs := convo(3, 3000, 0)
	tok := meter.Tokens(ListSize(msgs))
	p := Policy{Window: 100000, Reserve: 1, TailTokens: 10}.WithDefaults()
	d := p.Decide(msgs, int(0.65*float64(p.Window)), meter, false)
	if d.Trim != nil {
		t.Fatalf("tokens %d: a small snip ran: %+v", tok, d.Trim)
	}
}

func TestFoldKeepsUsersAndDigestsAndAligns(t *testing.T) {
	msgs := convo(40, 400, 4)
	big := provider.Message{Role: provider.RoleUser, Content: strings.Repeat("paste ", 2000)}
	msgs = append(msgs[:7], append([]provider.Message{big}, msgs[7:]...)...)
	digest := provider.Message{Role: provider.RoleUser, Content: DigestPrefix + "earlier digest " + strings.Repeat("d", 4000)}
	msgs = append(msgs[:3], append([]provider.Message{digest}, msgs[3:]...)...)
	p := Policy{Window: 20000, Reserve: 500}.WithDefaults()
	plan, ok := p.PlanFold(msgs, meter)
	if !ok {
		t.Fatal("nothing to fold")
	}
	if msgs[plan.To].Role == provider.RoleTool {
		t.Fatalf("fold ends on a tool result at %d", plan.To)
	}
	c := plan.Compaction(msgs, "  the digest  ", 10000, meter, TriggerAuto)
	out, err := c.Apply(msgs)
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, m := range msgs[:plan.To] {
		if m.Role == provider.RoleUser && (Size(m) <= meter.Bytes(p.PinTokens) || IsDigest(m)) {
			users = append(users, m.Content)
		}
	}
	have := map[string]bool{}
	for _, m := range out {
		have[m.Content] = true
	}
	for _, u := range users {
		if !have[u] {
			t.Errorf("kept message lost: %.40q", u)
		}
	}
	if have[big.Content] {
		t.Error("the oversized paste was kept verbatim")
	}
	if !have[DigestPrefix+"the digest"] {
		t.Error("no new digest")
	}
	if !paired(out) {
		t.Fatal("calls unpaired after the fold")
	}
	for i, m := range out {
		if m.Role == provider.RoleTool && (i == 0 || !answers(out, i)) {
			t.Fatalf("orphan tool result at %d", i)
		}
	}
	if plan.Compaction(msgs, " \n ", 1, meter, TriggerAuto) != nil {
		t.Error("an empty digest made a fold")
	}
}

// TestFoldPinBoundary holds both sides of the pin budget: a user turn of
// exactly PinTokens (in the meter's bytes) is a turn of "at most" the
// budget and stays verbatim, one byte more is folded into the digest.
func TestFoldPinBoundary(t *testing.T) {
	t.Parallel()
	p := Policy{Window: 20000}.WithDefaults()
	pin := meter.Bytes(p.PinTokens)
	framing := Size(provider.Message{Role: provider.RoleUser})
	tests := []struct {
		name   string
		size   int
		pinned bool
	}{
		{name: "exactly the pin budget", size: pin, pinned: true},
		{name: "one byte over", size: pin + 1, pinned: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			turn := provider.Message{Role: provider.RoleUser, Content: strings.Repeat("p", tc.size-framing)}
			if Size(turn) != tc.size {
				t.Fatalf("turn has size %d, want %d", Size(turn), tc.size)
			}
			const at = 1
			msgs := convo(10, 4000, 0)
			msgs = append(msgs[:at], append([]provider.Message{turn}, msgs[at:]...)...)
			plan, ok := p.PlanFold(msgs, meter)
			if !ok {
				t.Fatal("nothing to fold")
			}
			if at < plan.From || at >= plan.To {
				t.Fatalf("the turn at %d is outside the fold [%d,%d)", at, plan.From, plan.To)
			}
			if kept := slices.Contains(plan.Keep, at); kept != tc.pinned {
				t.Errorf("turn of %d bytes (pin %d) kept = %v, want %v", tc.size, pin, kept, tc.pinned)
			}
			if folded := slices.Contains(plan.Folded, at); folded == tc.pinned {
				t.Errorf("turn of %d bytes (pin %d) folded = %v, want %v", tc.size, pin, folded, !tc.pinned)
			}
			out, err := plan.Compaction(msgs, "digest", 10000, meter, TriggerAuto).Apply(msgs)
			if err != nil {
				t.Fatal(err)
			}
			verbatim := slices.ContainsFunc(out, func(m provider.Message) bool { return m.Content == turn.Content })
			if verbatim != tc.pinned {
				t.Errorf("after the fold the turn is verbatim = %v, want %v", verbatim, tc.pinned)
			}
		})
	}
}

// answers says the tool message at i answers a call of the assistant
// message before its run of results.
func answers(msgs []provider.Message, i int) bool {
	j := i
	for j > 0 && msgs[j].Role == provider.RoleTool {
		j--
	}
	for _, c := range msgs[j].ToolCalls {
		if c.ID == msgs[i].ToolCallID {
			return true
		}
	}
	return false
}

func TestApplyRefusesWhatDoesNotFit(t *testing.T) {
	msgs := convo(3, 10, 0)
	for _, c := range []*Compaction{
		{Messages: len(msgs) + 1},
		{Messages: len(msgs), Edits: []Edit{{Index: 0}}},
		{Messages: len(msgs), Edits: []Edit{{Index: len(msgs)}}},
		{Messages: len(msgs), Fold: &Fold{From: 0, To: 2}},
		{Messages: len(msgs), Fold: &Fold{From: 1, To: 2}}, // ends before a tool result
		{Messages: len(msgs), Fold: &Fold{From: 1, To: 3, Keep: []int{1}}},
	} {
		if _, err := c.Apply(msgs); err == nil {
			t.Errorf("%+v applied", c)
		}
	}
}

// TestRepeatedCompactionInvariants grows random conversations and
// compacts them whenever Decide says so, as the executor does, checking
// after each round that calls stay paired, every pinned user turn is still
// there verbatim, and the list fits.
func TestRepeatedCompactionInvariants(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		p := Policy{Window: 8000 + r.IntN(8000), Reserve: 300}.WithDefaults()
		msgs := []provider.Message{{Role: provider.RoleSystem, Content: "sys"}}
		var facts []string
		compactions := 0
		for step := 0; step < 300; step++ {
			if r.IntN(6) == 0 {
				f := fmt.Sprintf("fact-%d-%d", seed, step)
				facts = append(facts, f)
				msgs = append(msgs, provider.Message{Role: provider.RoleUser, Content: "remember " + f})
			}
			n := 1 + r.IntN(3)
			a := provider.Message{Role: provider.RoleAssistant, Content: "working"}
			var results []provider.Message
			for k := 0; k < n; k++ {
				id := fmt.Sprintf("s%d-%d", step, k)
				a.ToolCalls = append(a.ToolCalls, provider.ToolCall{ID: id, Name: "bash", Arguments: "{}"})
				content := strings.Repeat("o", r.IntN(1500))
				if r.IntN(10) == 0 {
					content = "Error: failed"
				}
				results = append(results, provider.Message{Role: provider.RoleTool, ToolCallID: id, Name: "bash", Content: content})
			}
			msgs = append(append(msgs, a), results...)
			tok := meter.Tokens(ListSize(msgs))
			d := p.Decide(msgs, tok, meter, false)
			if d.Trim != nil {
				var err error
				if msgs, err = d.Trim.Apply(msgs); err != nil {
					t.Fatal(err)
				}
				compactions++
			}
			if d.Fold != nil {
				c := d.Fold.Compaction(msgs, "digest of round", tok, meter, TriggerAuto)
				var err error
				if msgs, err = c.Apply(msgs); err != nil {
					t.Fatal(err)
				}
				compactions++
			}
			tok = meter.Tokens(ListSize(msgs))
			if !p.Fits(tok) {
				if c := Squeeze(msgs, tok, meter); c != nil {
					msgs, _ = c.Apply(msgs)
				}
			}
			if !paired(msgs) {
				t.Fatalf("seed %d step %d: unpaired calls", seed, step)
			}
		}
		all := map[string]bool{}
		for _, m := range msgs {
			all[m.Content] = true
		}
		for _, f := range facts {
			if !all["remember "+f] {
				t.Fatalf("seed %d: fact %s lost", seed, f)
			}
		}
		if compactions < 3 {
			t.Fatalf("seed %d: only %d compactions", seed, compactions)
		}
	}
}

func TestWriteArchiveAndRecords(t *testing.T) {
	dir := t.TempDir()
	msgs := convo(2, 10, 0)
	c := &Compaction{Tier: TierPrune, Messages: len(msgs), Edits: []Edit{{Index: 2, Content: "x"}}}
	now := time.Date(2026, 12, 1, 12, 0, 0, 5, time.UTC)
	recs := c.Records(msgs, "s1", "", now)
	if len(recs) != 1 || recs[0].Message.Content != msgs[2].Content || recs[0].Index != 2 {
		t.Fatalf("records %+v", recs)
	}
	p1, err := WriteArchive(dir, now, recs)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := WriteArchive(dir, now, recs)
	if err != nil || p1 == p2 {
		t.Fatalf("second archive at the same instant: %q %q %v", p1, p2, err)
	}
	if !strings.HasSuffix(p1, "20261201-120000.000000005.jsonl") {
		t.Errorf("archive name %s", p1)
	}
}

// paired says every assistant's tool calls are answered, in the messages
// right after it, and every tool result answers such a call.
func paired(msgs []provider.Message) bool {
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == provider.RoleTool {
			return false // not consumed by an assistant's calls
		}
		if m.Role != provider.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		want := map[string]bool{}
		for _, c := range m.ToolCalls {
			want[c.ID] = true
		}
		j := i + 1
		for ; j < len(msgs) && msgs[j].Role == provider.RoleTool; j++ {
			if !want[msgs[j].ToolCallID] {
				return false
			}
			delete(want, msgs[j].ToolCallID)
		}
		if len(want) > 0 {
			return false
		}
		i = j - 1
	}
	return true
}
