package event

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"
)

// describe renders what a read returned: a seq, or a Lagged's count and
// range.
func describe(e Event) string {
	if l, ok := e.(*Lagged); ok {
		return fmt.Sprintf("lagged %d %d..%d", l.Dropped, l.SinceSeq, l.UntilSeq)
	}
	return strconv.FormatInt(e.EventMeta().Seq, 10)
}

func publishN(b *Bus, n int) {
	for i := 0; i < n; i++ {
		b.Publish(&Notice{Meta: Meta{Session: "s"}, Level: "info", Message: "m" + strconv.Itoa(i)})
	}
}

// readN reads n events, failing the test rather than hanging when they do
// not come.
func readN(t *testing.T, sub *Subscription, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []string
	for range n {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("Next after %v: %v", got, err)
		}
		got = append(got, describe(e))
	}
	return got
}

// noMore fails when sub has anything left to read.
func noMore(t *testing.T, sub *Subscription) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if e, err := sub.Next(ctx); err == nil {
		t.Fatalf("unexpected event %s", describe(e))
	}
}

func equal(a, b []string) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

func TestSubscribeBoundedLagged(t *testing.T) {
	t.Parallel()
	seqs := func(from, to int) []string {
		var s []string
		for i := from; i <= to; i++ {
			s = append(s, strconv.Itoa(i))
		}
		return s
	}
	type step struct {
		publish int      // events published before reading
		want    []string // the reads that follow, in order
		unread  bool     // events are left queued after want
	}
	cases := []struct {
		name  string
		bound int // 0: Subscribe, lossless
		steps []step
	}{
		{"lossless keeps everything", 0, []step{{1000, seqs(1, 1000), false}}},
		{"within the bound", 4, []step{{4, seqs(1, 4), false}}},
		{"overflow drops the oldest", 4, []step{{10, append([]string{"lagged 6 1..6"}, seqs(7, 10)...), false}}},
		{"bound of one", 1, []step{{3, []string{"lagged 2 1..2", "3"}, false}, {1, []string{"4"}, false}}},
		{"lags again after reading", 3, []step{
			{5, []string{"lagged 2 1..2", "3"}, true},
			{4, []string{"lagged 3 4..6", "7", "8", "9"}, false},
			{2, []string{"10", "11"}, false},
		}},
		{"reading in step never lags", 2, []step{{2, seqs(1, 2), false}, {2, seqs(3, 4), false}, {2, seqs(5, 6), false}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := NewBus()
			sub := b.Subscribe()
			if tc.bound > 0 {
				sub = b.SubscribeBounded(tc.bound)
			}
			defer sub.Close()
			for i, st := range tc.steps {
				publishN(b, st.publish)
				if got := readN(t, sub, len(st.want)); !equal(got, st.want) {
					t.Fatalf("step %d: read %v, want %v", i, got, st.want)
				}
				if !st.unread {
					noMore(t, sub)
				}
			}
		})
	}
}

func TestSubscribeFromReplay(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name             string
		history, publish int
		since            int64
		limit            int
		want             []string // what comes before the live stream
	}{
		{"from zero replays all", 10, 5, 0, 0, []string{"1", "2", "3", "4", "5"}},
		{"from the middle", 10, 5, 3, 0, []string{"4", "5"}},
		{"from the last is live only", 10, 5, 5, 0, nil},
		{"beyond the last is live only", 10, 5, 99, 0, nil},
		{"negative is from zero", 10, 5, -3, 0, []string{"1", "2", "3", "4", "5"}},
		{"empty bus", 10, 0, 0, 0, nil},
		{"older than the history", 3, 8, 2, 0, []string{"lagged 3 3..5", "6", "7", "8"}},
		{"from zero past the history", 3, 8, 0, 0, []string{"lagged 5 1..5", "6", "7", "8"}},
		{"no history", 0, 4, 1, 0, []string{"lagged 3 2..4"}},
		{"no history and nothing missed", 0, 4, 4, 0, nil},
		{"bounded replay keeps the newest", 10, 8, 0, 3, []string{"lagged 5 1..5", "6", "7", "8"}},
		{"bounded replay merges both gaps", 4, 8, 1, 2, []string{"lagged 5 2..6", "7", "8"}},
		{"bounded replay within the bound", 10, 8, 6, 3, []string{"7", "8"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := NewBus(WithHistory(tc.history))
			publishN(b, tc.publish)
			sub := b.SubscribeFrom(tc.since, tc.limit)
			defer sub.Close()
			if got := readN(t, sub, len(tc.want)); !equal(got, tc.want) {
				t.Fatalf("replay %v, want %v", got, tc.want)
			}
			noMore(t, sub)
			publishN(b, 1)
			if got, want := readN(t, sub, 1), []string{strconv.Itoa(tc.publish + 1)}; !equal(got, want) {
				t.Fatalf("live %v, want %v", got, want)
			}
		})
	}
}

// TestSubscribeFromConcurrentNoGapNoDuplicate is a property: whatever the
// history size, queue bound and moment of subscribing, a subscription from
// seq accounts for every seq in (seq, last] exactly once and in order,
// either delivered or inside a Lagged, while publishers keep publishing.
// Without a history bound that holds everything and without a queue bound,
// nothing is lagged at all.
func TestSubscribeFromConcurrentNoGapNoDuplicate(t *testing.T) {
	t.Parallel()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	const publishers, each, trials = 4, 100, 200
	const total = publishers * each
	for trial := range trials {
		history := []int{total, r.IntN(total)}[r.IntN(2)]
		limit := []int{0, 1 + r.IntN(64)}[r.IntN(2)]
		b := NewBus(WithHistory(history))
		watch := b.Subscribe()
		var wg sync.WaitGroup
		for range publishers {
			wg.Go(func() { publishN(b, each) })
		}
		// Subscribe at a random point of the publishing, from a random
		// seq no later than what is already published.
		if target := r.IntN(total + 1); target > 0 {
			readN(t, watch, target)
		}
		since := r.Int64N(b.LastSeq() + 1)
		sub := b.SubscribeFrom(since, limit)
		watch.Close()

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		next, lagged := since+1, false
		for next <= total {
			e, err := sub.Next(ctx)
			if err != nil {
				t.Fatalf("trial %d (history %d, limit %d, since %d): at %d: %v", trial, history, limit, since, next, err)
			}
			if l, ok := e.(*Lagged); ok {
				if l.SinceSeq != next || l.UntilSeq < l.SinceSeq || l.Dropped != l.UntilSeq-l.SinceSeq+1 || l.Seq != l.UntilSeq {
					t.Fatalf("trial %d (history %d, limit %d, since %d): want %d, got %+v", trial, history, limit, since, next, l)
				}
				if limit == 0 && (history >= total || next != since+1) {
					t.Fatalf("trial %d (history %d, since %d): lossless subscription lagged at %d: %+v", trial, history, since, next, l)
				}
				next, lagged = l.UntilSeq+1, true
				continue
			}
			if e.EventMeta().Seq != next {
				t.Fatalf("trial %d (history %d, limit %d, since %d, lagged %v): got seq %d, want %d", trial, history, limit, since, lagged, e.EventMeta().Seq, next)
			}
			next++
		}
		cancel()
		wg.Wait()
		noMore(t, sub)
		sub.Close()
	}
}

// TestBusConcurrentReadersShareImmutableEvents runs under -race: readers
// encode every event while publishers publish, and all of them must see
// the same bytes for each seq.
func TestBusConcurrentReadersShareImmutableEvents(t *testing.T) {
	t.Parallel()
	const publishers, each, readers = 4, 200, 4
	const total = publishers * each
	b := NewBus()
	subs := make([]*Subscription, readers)
	for i := range subs {
		subs[i] = b.Subscribe()
	}
	// One reader replays the history instead, while the publishing runs.
	seen := make([]map[int64]string, readers+1)
	var rg sync.WaitGroup
	read := func(i int, sub *Subscription) {
		defer rg.Done()
		defer sub.Close()
		seen[i] = map[int64]string{}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for len(seen[i]) < total {
			e, err := sub.Next(ctx)
			if err != nil {
				t.Errorf("reader %d after %d events: %v", i, len(seen[i]), err)
				return
			}
			data, err := Encode(e)
			if err != nil {
				t.Errorf("reader %d: %v", i, err)
				return
			}
			seen[i][e.EventMeta().Seq] = string(data)
		}
	}
	rg.Add(readers + 1)
	for i, sub := range subs {
		go read(i, sub)
	}
	var pg sync.WaitGroup
	for p := range publishers {
		pg.Go(func() {
			for i := range each {
				switch i % 3 {
				case 0:
					b.Publish(&TextDelta{Meta: Meta{Session: "s", Task: strconv.Itoa(p)}, Text: "t"})
				case 1:
					b.Publish(&SessionStarted{Meta: Meta{Session: "s"}, Model: "m", Tools: []string{"bash", "read_file"}})
				default:
					b.Publish(&ToolFinished{Meta: Meta{Session: "s"}, CallID: "c", Tool: "bash", Output: "out", OutputBytes: 3})
				}
			}
		})
		if p == publishers/2 {
			go read(readers, b.SubscribeFrom(0, 0))
		}
	}
	pg.Wait()
	rg.Wait()
	for i := 1; i < len(seen); i++ {
		for seq, want := range seen[0] {
			if got := seen[i][seq]; got != want {
				t.Fatalf("seq %d: reader %d encoded %s, reader 0 %s", seq, i, got, want)
			}
		}
	}
}

func TestEncodeIdenticalAcrossSubscribers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		ev   Event
	}{
		{"text delta", &TextDelta{Meta: Meta{Session: "s"}, Text: "héllo"}},
		{"session started", &SessionStarted{Meta: Meta{Session: "s"}, Model: "m", Cwd: "/w", Tools: []string{"a", "b"}}},
		{"approval requested", &ApprovalRequested{Meta: Meta{Session: "s", Task: "t1"}, RequestID: "r", Tool: "bash", Suggestions: []string{"Bash(ls)"}}},
		{"turn done", &TurnDone{Meta: Meta{Session: "s"}, Status: StatusOK, Text: "done", Steps: 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := NewBus()
			b.now = func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }
			a, c := b.Subscribe(), b.SubscribeBounded(8)
			defer a.Close()
			defer c.Close()
			b.Publish(tc.ev)
			var enc []string
			for _, sub := range []*Subscription{a, c} {
				e, err := sub.Next(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				data, err := Encode(e)
				if err != nil {
					t.Fatal(err)
				}
				enc = append(enc, string(data))
			}
			if enc[0] != enc[1] {
				t.Fatalf("encodings differ:\n%s\n%s", enc[0], enc[1])
			}
			if !json.Valid([]byte(enc[0])) {
				t.Fatalf("invalid JSON %s", enc[0])
			}
		})
	}
}

// TestPublishTwiceStampsACopy: re-publishing an event must not change the
// value a reader already holds.
func TestPublishTwiceStampsACopy(t *testing.T) {
	t.Parallel()
	b := NewBus()
	sub := b.Subscribe()
	defer sub.Close()
	ev := &Notice{Meta: Meta{Session: "s"}, Level: "info", Message: "again"}
	b.Publish(ev)
	first, err := sub.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	before, _ := Encode(first)
	b.Publish(ev)
	second, err := sub.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	after, _ := Encode(first)
	if string(before) != string(after) || first.EventMeta().Seq != 1 {
		t.Fatalf("first read changed: %s, then %s", before, after)
	}
	if second.EventMeta().Seq != 2 || second == first {
		t.Fatalf("second read: seq %d, same value %v", second.EventMeta().Seq, second == first)
	}
}

func TestSubscriptionCloseUnblocksNext(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		open   func(*Bus) *Subscription
		queued int // events published before Close, unread
	}{
		{"lossless waiting", (*Bus).Subscribe, 0},
		{"bounded waiting", func(b *Bus) *Subscription { return b.SubscribeBounded(2) }, 0},
		{"replaying waiting", func(b *Bus) *Subscription { return b.SubscribeFrom(0, 0) }, 0},
		{"lossless with queued events", (*Bus).Subscribe, 3},
		{"bounded with a pending lag", func(b *Bus) *Subscription { return b.SubscribeBounded(2) }, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := NewBus()
			sub := tc.open(b)
			publishN(b, tc.queued)
			errc := make(chan error, 1)
			if tc.queued == 0 {
				// The reader is (or soon will be) waiting in Next; Close
				// must wake it. The timeout only turns a hang into a failure.
				started := make(chan struct{})
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					close(started)
					_, err := sub.Next(ctx)
					errc <- err
				}()
				<-started
				sub.Close()
			} else {
				sub.Close()
				_, err := sub.Next(context.Background())
				errc <- err
			}
			if err := <-errc; !errors.Is(err, ErrClosed) || !errors.Is(err, context.Canceled) {
				t.Fatalf("Next = %v, want ErrClosed", err)
			}
			sub.Close()
			publishN(b, 1)
			if _, err := sub.Next(context.Background()); !errors.Is(err, ErrClosed) {
				t.Fatalf("Next after a later publish = %v, want ErrClosed", err)
			}
			b.mu.Lock()
			n := len(b.subs)
			b.mu.Unlock()
			if n != 0 {
				t.Fatalf("%d subscriptions still registered", n)
			}
		})
	}
}

// TestBusMemoryBounded: a bounded subscriber that never reads, and the
// history, hold no more slots than their bounds however much is published;
// a lossless subscriber that catches up lets its backlog go.
func TestBusMemoryBounded(t *testing.T) {
	t.Parallel()
	const published = 20000
	cases := []struct {
		name    string
		history int
		open    func(*Bus) *Subscription
		drain   bool
		maxBuf  int // slots the subscriber's queue may hold at the end
		maxHist int
	}{
		{"bounded reader asleep", 100, func(b *Bus) *Subscription { return b.SubscribeBounded(16) }, false, 16, 100},
		{"bounded replay asleep", 100, func(b *Bus) *Subscription { return b.SubscribeFrom(0, 5) }, false, 5, 100},
		{"lossless reader caught up", 0, (*Bus).Subscribe, true, 0, 0},
		{"default history", DefaultHistory, func(b *Bus) *Subscription { return b.SubscribeBounded(1) }, false, 1, DefaultHistory},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := NewBus(WithHistory(tc.history))
			publishN(b, 1)
			sub := tc.open(b)
			defer sub.Close()
			publishN(b, published)
			if tc.drain {
				readN(t, sub, published)
			}
			sub.mu.Lock()
			buf := len(sub.queue.buf)
			sub.mu.Unlock()
			b.mu.Lock()
			hist := len(b.hist.buf)
			b.mu.Unlock()
			if buf > tc.maxBuf || hist > tc.maxHist {
				t.Fatalf("queue holds %d slots (max %d), history %d (max %d)", buf, tc.maxBuf, hist, tc.maxHist)
			}
		})
	}
}

func TestBusLastSeq(t *testing.T) {
	t.Parallel()
	b := NewBus(WithHistory(2))
	if got := b.LastSeq(); got != 0 {
		t.Fatalf("LastSeq of a new bus = %d", got)
	}
	publishN(b, 5)
	if got := b.LastSeq(); got != 5 {
		t.Fatalf("LastSeq = %d, want 5", got)
	}
	// A frontend's snapshot records LastSeq; subscribing from it then
	// delivers exactly what came after.
	seq := b.LastSeq()
	publishN(b, 1)
	sub := b.SubscribeFrom(seq, 0)
	defer sub.Close()
	if got := readN(t, sub, 1); !equal(got, []string{"6"}) {
		t.Fatalf("after LastSeq %d read %v", seq, got)
	}
}

func TestLaggedEncode(t *testing.T) {
	t.Parallel()
	b := NewBus()
	sub := b.SubscribeBounded(1)
	defer sub.Close()
	publishN(b, 4)
	e, err := sub.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	data, err := Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"type": "lagged", "seq": 3.0, "dropped": 3.0, "since_seq": 1.0, "until_seq": 3.0} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v in %s", k, got[k], want, data)
		}
	}
}

func TestMetaOf(t *testing.T) {
	want := Meta{Seq: 7, Session: "s1", Task: "f1.2", Role: RoleExecutor}
	if got := MetaOf(&TodoUpdated{Meta: want}); got != want {
		t.Fatalf("MetaOf = %+v, want %+v", got, want)
	}
	var nilEvent *TextDelta
	if got := MetaOf(nilEvent); got != (Meta{}) {
		t.Fatalf("MetaOf(nil *TextDelta) = %+v", got)
	}
	if got := MetaOf(nil); got != (Meta{}) {
		t.Fatalf("MetaOf(nil) = %+v", got)
	}
}
