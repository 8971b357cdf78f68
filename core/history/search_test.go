package history

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/core/compact"
	"reasonix/core/provider"
	"reasonix/core/session"
)

func TestSearchFindsMessages(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	h.transcript(h.sessions, "s1", day,
		user("why does the build fail on the runner?"),
		provider.Message{Role: provider.RoleAssistant, Content: "Let me look.", ToolCalls: []provider.ToolCall{
			{ID: "c1", Name: "bash", Arguments: `{"command":"go test ./pkg/\u003cwidget\u003e"}`}}},
		toolResult("c1", "FAIL: TestWidgetFrobnicate: unexpected quux"),
		assistant("The frobnicate test fails because quux is unset."),
	)
	ix := h.open()

	t.Run("tool result", func(t *testing.T) {
		res := h.search(ix, "TestWidgetFrobnicate", ScopeProject)
		if got := refs(res); !slices.Equal(got, []string{"s1#3"}) {
			t.Fatalf("refs = %v, want [s1#3]", got)
		}
		hit := res.Hits[0]
		if hit.Role != "tool" || hit.Session != "s1" || hit.Source != session.Slug(h.project) || !hit.Time.Equal(day) {
			t.Errorf("hit = %+v", hit)
		}
		if !strings.Contains(hit.Snippet, "**TestWidgetFrobnicate**") {
			t.Errorf("snippet %q does not mark the match", hit.Snippet)
		}
		if hit.Path != filepath.Join(h.sessions, "s1.jsonl") {
			t.Errorf("path = %q", hit.Path)
		}
	})
	t.Run("tool call arguments, decoded", func(t *testing.T) {
		res := h.search(ix, "widget", ScopeProject)
		if got := refs(res); !slices.Contains(got, "s1#2") {
			t.Fatalf("refs = %v, want the call s1#2", got)
		}
		if res := h.search(ix, "u003cwidget", ScopeProject); len(res.Hits) != 0 {
			t.Errorf("JSON escapes were indexed as words: %v", refs(res))
		}
	})
	t.Run("tool name", func(t *testing.T) {
		if got := refs(h.search(ix, "bash", ScopeProject)); !slices.Equal(got, []string{"s1#2"}) {
			t.Errorf("refs = %v, want [s1#2]", got)
		}
	})
	t.Run("case and phrase", func(t *testing.T) {
		if got := refs(h.search(ix, `"QUUX IS unset"`, ScopeProject)); !slices.Equal(got, []string{"s1#4"}) {
			t.Errorf("refs = %v, want [s1#4]", got)
		}
		if got := refs(h.search(ix, `"unset quux"`, ScopeProject)); len(got) != 0 {
			t.Errorf("a phrase in the wrong order matched: %v", got)
		}
	})
	t.Run("prefix", func(t *testing.T) {
		if got := refs(h.search(ix, "frobni*", ScopeProject)); !slices.Equal(got, []string{"s1#4"}) {
			t.Errorf("refs = %v, want [s1#4]", got)
		}
		if got := refs(h.search(ix, "testwidg*", ScopeProject)); !slices.Equal(got, []string{"s1#3"}) {
			t.Errorf("refs = %v, want [s1#3]", got)
		}
	})
}

func TestSearchScopes(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	other := session.ProjectDir(h.home, filepath.Join(h.home, "work", "other"))
	h.transcript(h.sessions, "here", day, user("the marmalade ledger lives here"))
	h.transcript(other, "there", day.Add(-72*time.Hour), user("the marmalade ledger moved elsewhere"))
	archivedAt := day.Add(-48 * time.Hour)
	arch := h.archive(archivedAt, compact.ArchiveRecord{
		Session: "gone", Index: 4, Tier: "fold", Time: archivedAt,
		Message: toolResult("c9", "marmalade ledger output that was compacted away"),
	})
	ix := h.open()

	project := h.search(ix, "marmalade", ScopeProject)
	if got := refs(project); !slices.Equal(got, []string{"here#1"}) {
		t.Errorf("project scope refs = %v, want [here#1]", got)
	}
	global := h.search(ix, "marmalade", ScopeGlobal)
	got := refs(global)
	slices.Sort(got)
	stamp := strings.TrimSuffix(filepath.Base(arch), ".jsonl")
	want := []string{"archive/" + stamp + "#1", "here#1", "there#1"}
	if !slices.Equal(got, want) {
		t.Fatalf("global scope refs = %v, want %v", got, want)
	}
	for _, hit := range global.Hits {
		if hit.Ref.Archive {
			if hit.Source != ArchiveSource || hit.Session != "gone" || !hit.Time.Equal(archivedAt) || hit.Role != "tool" {
				t.Errorf("archive hit = %+v", hit)
			}
		}
	}
}

// TestProjectScopeKeepsScores: the project filter never changes a score.
func TestProjectScopeKeepsScores(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	h.transcript(h.sessions, "s", day, user("the heron flies"), assistant("heron heron"), user("other"))
	h.transcript(session.ProjectDir(h.home, "/x"), "o", day, user("a heron too"), user("more"))
	ix := h.open()
	global := map[string]float64{}
	for _, hit := range h.search(ix, "heron", ScopeGlobal).Hits {
		global[hit.Ref.String()] = hit.Score
	}
	project := h.search(ix, "heron", ScopeProject)
	if len(project.Hits) != 2 {
		t.Fatalf("refs = %v", refs(project))
	}
	for _, hit := range project.Hits {
		if math.Abs(global[hit.Ref.String()]-hit.Score) > 1e-9 {
			t.Errorf("%s: project score %f, global %f", hit.Ref, hit.Score, global[hit.Ref.String()])
		}
	}
}

func TestSearchNeedsTerms(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	ix := h.open()
	for _, q := range []string{"", "   ", "*", `"" ""`, "-- ++ ()"} {
		_, err := ix.Search(context.Background(), Query{Text: q, Scope: ScopeProject, Sessions: h.sessions})
		if !errors.Is(err, ErrNoTerms) {
			t.Errorf("Search(%q) = %v, want ErrNoTerms", q, err)
		}
	}
}

// TestQueryIsNeverFTSSyntax searches with FTS5 operators, column filters
// and stray quotes: none may fail, and each finds the words it contains.
func TestQueryIsNeverFTSSyntax(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	h.transcript(h.sessions, "s", day,
		user("NEAR the text column we said AND meant it"),
		assistant("role: tool OR not, the rowid is (secret)"),
		assistant("filler one"), assistant("filler two"), assistant("filler three"))
	ix := h.open()
	tests := []struct {
		query string
		want  []string
	}{
		{"NEAR(the text)", []string{"s#1"}},
		{"AND", []string{"s#1"}},
		{"OR", []string{"s#2"}},
		{"NOT meant", []string{"s#1", "s#2"}},
		{"text:column", []string{"s#1"}},
		{"role:tool", []string{"s#2"}},
		{"{role text}: secret", []string{"s#1", "s#2"}},
		{`"unclosed quote said`, nil},
		{`secret"`, []string{"s#2"}},
		{"^rowid", []string{"s#2"}},
		{"-secret +rowid", []string{"s#2"}},
		{"(secret", []string{"s#2"}},
		{"meant*)", []string{"s#1"}},
		{"a OR OR OR", []string{"s#2"}},
		{"rank bm25(messages)", nil},
		{"scope: s0123456789abcdef", nil},
		{"'; DROP TABLE files; --", nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			res, err := ix.Search(context.Background(), Query{Text: tt.query, Scope: ScopeProject, Sessions: h.sessions})
			if err != nil {
				t.Fatalf("Search(%q): %v", tt.query, err)
			}
			got := refs(res)
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Search(%q) = %v, want %v", tt.query, got, tt.want)
			}
		})
	}
	// The scope column's token is not text a query can find.
	if got := refs(h.search(ix, scopeToken(session.Slug(h.project)), ScopeProject)); len(got) != 0 {
		t.Errorf("the scope token matched %v", got)
	}
	if n := rowCount(t, ix); n != 5 {
		t.Errorf("index holds %d messages after the queries, want 5", n)
	}
}

func TestParseTerms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []term
	}{
		{"foo bar", []term{{text: "foo"}, {text: "bar"}}},
		{`"exact phrase" word`, []term{{text: "exact phrase"}, {text: "word"}}},
		{`foo"bar baz"`, []term{{text: "foo"}, {text: "bar baz"}}},
		{`"unclosed phrase`, []term{{text: "unclosed phrase"}}},
		{"pre* *", []term{{text: "pre", prefix: true}}},
		{"x.* busy_timeout", []term{{text: "x."}, {text: "busy_timeout"}}},
		{"Foo foo FOO", []term{{text: "Foo"}}},
		{"日本語 текст", []term{{text: "日本語"}, {text: "текст"}}},
		{"-- () ;", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			if got := parseTerms(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("parseTerms(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
	if got := parseTerms(many(100)); len(got) != maxTerms {
		t.Errorf("%d terms kept, want %d", len(got), maxTerms)
	}
}

func many(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "t%d ", i)
	}
	return b.String()
}

// TestRelativeFloor: a query of one rare and one common word keeps the
// messages with the rare word and drops those sharing only the common one.
func TestRelativeFloor(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	var msgs []provider.Message
	for i := range 60 {
		switch {
		case i == 7:
			msgs = append(msgs, assistant("the config loader failed with zanzibar on startup"))
		case i == 31:
			msgs = append(msgs, user("zanzibar again, see the log"))
		case i%3 == 0:
			msgs = append(msgs, assistant(fmt.Sprintf("the config loader ran step %d fine", i)))
		default:
			msgs = append(msgs, user(fmt.Sprintf("unrelated chatter number %d about lunch", i)))
		}
	}
	h.transcript(h.sessions, "s", day, msgs...)
	ix := h.open()
	res, err := ix.Search(context.Background(), Query{Text: "zanzibar config", Scope: ScopeProject, Sessions: h.sessions, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	got := refs(res)
	slices.Sort(got)
	if !slices.Equal(got, []string{"s#32", "s#8"}) {
		t.Fatalf("refs = %v, want the two messages with the rare word, s#8 and s#32", got)
	}
	if res.BelowFloor == 0 {
		t.Error("no weaker hit was counted as dropped")
	}
	for i := 1; i < len(res.Hits); i++ {
		if res.Hits[i].Score < FloorRatio*res.Hits[0].Score {
			t.Errorf("hit %d scores %f, under the floor of %f", i, res.Hits[i].Score, FloorRatio*res.Hits[0].Score)
		}
	}
	out := FormatSearch(Query{Text: "zanzibar config", Scope: ScopeProject}, res)
	if !strings.Contains(out, "weaker match") {
		t.Errorf("the dropped hits are not mentioned:\n%s", out)
	}

	// The best hit is kept even when nothing else is close.
	one, err := ix.Search(context.Background(), Query{Text: "config", Scope: ScopeProject, Sessions: h.sessions, Limit: 1})
	if err != nil || len(one.Hits) != 1 {
		t.Fatalf("limit 1: %v, %v", refs(one), err)
	}
}

// TestCommonTermsOnlyAddToScores: with a term too common to choose
// candidates, the hits are the messages with the rarer term, scored
// exactly as a plain OR of both terms scores them.
func TestCommonTermsOnlyAddToScores(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	var msgs []provider.Message
	for i := range 60 {
		switch {
		case i == 10:
			msgs = append(msgs, user("gecko and the ordinary word together"))
		case i == 40:
			msgs = append(msgs, assistant("gecko alone"))
		case i%3 == 0:
			msgs = append(msgs, assistant(fmt.Sprintf("ordinary line %d", i)))
		default:
			msgs = append(msgs, user(fmt.Sprintf("filler %d", i)))
		}
	}
	h.transcript(h.sessions, "s", day, msgs...)
	full := h.open()
	want := h.search(full, "ordinary gecko", ScopeProject)
	small := h.open()
	small.budget = 5
	got := h.search(small, "ordinary gecko", ScopeProject)

	if !slices.Equal(got.Common, []string{"ordinary"}) || got.Partial || len(got.Ignored) != 0 {
		t.Errorf("common = %v, ignored = %v, partial = %v; want [ordinary], none, false", got.Common, got.Ignored, got.Partial)
	}
	if r := refs(got); !slices.Equal(r, []string{"s#11", "s#41"}) && !slices.Equal(r, []string{"s#41", "s#11"}) {
		t.Fatalf("refs = %v, want the two gecko messages", r)
	}
	scores := map[string]float64{}
	for _, hit := range want.Hits {
		scores[hit.Ref.String()] = hit.Score
	}
	for _, hit := range got.Hits {
		if w, ok := scores[hit.Ref.String()]; !ok || math.Abs(w-hit.Score) > 1e-9 {
			t.Errorf("%s scores %f, want %f as for the full search", hit.Ref, hit.Score, w)
		}
	}
	if out := FormatSearch(Query{Text: "ordinary gecko"}, got); !strings.Contains(out, `common terms "ordinary" were not considered`) {
		t.Errorf("the common term is not named:\n%s", out)
	}
}

// TestStopWordsIgnored: a term in most messages is left out of a query
// that has others, and the answer says so; alone it is still searched.
func TestStopWordsIgnored(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	var msgs []provider.Message
	for i := range 100 {
		text := fmt.Sprintf("plain %d", i)
		if i%5 < 3 {
			text += " lorem"
		}
		if i%10 == 0 {
			text += " walrus"
		}
		msgs = append(msgs, user(text))
	}
	h.transcript(h.sessions, "s", day, msgs...)
	ix := h.open()
	ix.budget = 5
	res, err := ix.Search(context.Background(), Query{Text: "lorem walrus", Scope: ScopeProject, Sessions: h.sessions, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Ignored, []string{"lorem"}) {
		t.Errorf("ignored = %v, want [lorem]", res.Ignored)
	}
	for _, hit := range res.Hits {
		if !strings.Contains(hit.Snippet, "**walrus**") {
			t.Errorf("hit %s without the rare term: %q", hit.Ref, hit.Snippet)
		}
	}
	if out := FormatSearch(Query{Text: "lorem walrus"}, res); !strings.Contains(out, `"lorem" are in too many messages`) {
		t.Errorf("the stop word is not named:\n%s", out)
	}
	only, err := ix.Search(context.Background(), Query{Text: "lorem", Scope: ScopeProject, Sessions: h.sessions})
	if err != nil || len(only.Hits) == 0 || len(only.Ignored) != 0 {
		t.Errorf("a query of only a stop word: %v, ignored %v, %v", refs(only), only.Ignored, err)
	}
}

// TestTooCommonRanksNewest: when even the rarest term matches more than
// a search ranks, the newest matches are ranked and the result says so.
func TestTooCommonRanksNewest(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	for i, id := range []string{"c-old", "a-mid", "b-new"} {
		var msgs []provider.Message
		for j := range 6 {
			msgs = append(msgs, user(fmt.Sprintf("bison %d", j)), assistant("filler"))
		}
		path := h.transcript(h.sessions, id, day, msgs...)
		at := day.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	ix := h.open()
	ix.budget = 6
	res, err := ix.Search(context.Background(), Query{Text: "bison", Scope: ScopeProject, Sessions: h.sessions, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Partial || len(res.Hits) != 6 {
		t.Fatalf("partial = %v, %d hits; want true and 6", res.Partial, len(res.Hits))
	}
	for _, hit := range res.Hits {
		if hit.Session != "b-new" {
			t.Errorf("hit %s is not from the newest file", hit.Ref)
		}
	}
	if out := FormatSearch(Query{Text: "bison"}, res); !strings.Contains(out, "only the newest of those were ranked") {
		t.Errorf("the partial ranking is not mentioned:\n%s", out)
	}
}

func TestLimit(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	var msgs []provider.Message
	for i := range 80 {
		msgs = append(msgs, user(fmt.Sprintf("walrus note %d", i)))
	}
	for i := range 80 {
		msgs = append(msgs, assistant(fmt.Sprintf("other text %d", i)))
	}
	h.transcript(h.sessions, "s", day, msgs...)
	ix := h.open()
	for _, tt := range []struct{ limit, want int }{{0, DefaultLimit}, {3, 3}, {500, MaxLimit}} {
		res, err := ix.Search(context.Background(), Query{Text: "walrus", Scope: ScopeProject, Sessions: h.sessions, Limit: tt.limit})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != tt.want {
			t.Errorf("limit %d: %d hits, want %d", tt.limit, len(res.Hits), tt.want)
		}
	}
}

func TestZeroResultGuidance(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	h.transcript(h.sessions, "s", day, user("hello there"))
	ix := h.open()
	for _, scope := range []Scope{ScopeProject, ScopeGlobal} {
		t.Run(string(scope), func(t *testing.T) {
			q := Query{Text: "nonexistentword", Scope: scope, Sessions: h.sessions}
			res, err := ix.Search(context.Background(), q)
			if err != nil || len(res.Hits) != 0 {
				t.Fatalf("hits %v, err %v", refs(res), err)
			}
			out := FormatSearch(q, res)
			for _, want := range []string{"No matches", `"nonexistentword"`, "rarer", "identifiers", "error text"} {
				if !strings.Contains(out, want) {
					t.Errorf("guidance lacks %q:\n%s", want, out)
				}
			}
			if widen := strings.Contains(out, `scope="global"`); widen != (scope == ScopeProject) {
				t.Errorf("suggests widening = %v in scope %s:\n%s", widen, scope, out)
			}
		})
	}
}

// TestRelativeFloorBoundary holds the floor at a quarter of the best hit's
// score (docs/SPEC.md, History) from both sides. One term's hits, in
// messages of growing length, score in small steps down past a quarter of
// the best, so the hit just over a quarter must be kept and the one just
// under dropped, although each scores close to the hit before it: the
// floor is relative to the best hit, not to the neighbour. The unfloored
// ranking of the same expression is the reference.
func TestRelativeFloorBoundary(t *testing.T) {
	t.Parallel()
	const quarter = 0.25
	h := newTestHome(t)
	msgs := []provider.Message{user("ocelot ocelot ocelot ocelot")}
	for n := range 40 {
		words := []string{"ocelot"}
		for i := range 2 * n {
			words = append(words, fmt.Sprintf("pad%d", i))
		}
		msgs = append(msgs, assistant(strings.Join(words, " ")))
	}
	for i := range 100 {
		msgs = append(msgs, user(fmt.Sprintf("unrelated %d", i)))
	}
	h.transcript(h.sessions, "s", day, msgs...)
	ix := h.open()
	res, err := ix.Search(context.Background(), Query{Text: "ocelot", Scope: ScopeGlobal, Limit: MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := ix.query(context.Background(), phrase(term{text: "ocelot"}), 0, MaxLimit)
	if err == nil {
		err = ix.fillPaths(context.Background(), raw)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) < 2 || len(raw) >= MaxLimit {
		t.Fatalf("%d matches, want several and fewer than the limit of %d so that every one is ranked", len(raw), MaxLimit)
	}
	floor := quarter * raw[0].Score
	// above is the weakest hit at or over the floor, below the strongest
	// under it; both must be close to it for the boundary to be held.
	above, below := -1, -1
	for i, r := range raw {
		if r.Score >= floor {
			above = i
		} else if below < 0 {
			below = i
		}
	}
	if above < 1 || below < 0 || raw[above].Score > 1.05*floor || raw[below].Score < 0.95*floor {
		t.Fatalf("no hits close to either side of the floor %f: scores %v", floor, scores(raw))
	}
	kept := map[string]bool{}
	for _, hit := range res.Hits {
		kept[hit.Ref.String()] = true
	}
	if len(res.Hits) == 0 || res.Hits[0].Ref != raw[0].Ref {
		t.Fatalf("the best hit %s was not kept first: %v", raw[0].Ref, refs(res))
	}
	if !kept[raw[above].Ref.String()] {
		t.Errorf("hit %s at %.3f of the best was dropped; a quarter or more must be kept", raw[above].Ref, raw[above].Score/raw[0].Score)
	}
	if kept[raw[below].Ref.String()] {
		t.Errorf("hit %s at %.3f of the best was kept; under a quarter must be dropped", raw[below].Ref, raw[below].Score/raw[0].Score)
	}
	if len(res.Hits) != above+1 || res.BelowFloor != len(raw)-above-1 {
		t.Errorf("%d hits kept, %d counted below the floor; want %d and %d", len(res.Hits), res.BelowFloor, above+1, len(raw)-above-1)
	}
}

func scores(hits []Hit) []float64 {
	out := make([]float64, len(hits))
	for i, h := range hits {
		out[i] = h.Score
	}
	return out
}
