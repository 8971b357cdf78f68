package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestAppendAndRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	j, err := Open(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1700000000, 5)
	for i, r := range []Record{
		{Fleet: "s1/f1", Kind: KindSubmit, At: at, Data: json.RawMessage(`{"tasks":2}`)},
		{Fleet: "s1/f1", Kind: KindStart, Task: "f1.1", At: at.Add(time.Second)},
		{Fleet: "s2/f1", Kind: KindSubmit, At: at.Add(2 * time.Second)},
		{Fleet: "s1/f1", Kind: KindFinish, Task: "f1.1", At: at.Add(3 * time.Second), Data: json.RawMessage(`{"status":"ok"}`)},
		{Fleet: "s1/f1", Kind: KindReply, At: at.Add(4 * time.Second)},
	} {
		if _, err := j.Append(ctx, r); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	// A fresh open sees everything that was committed.
	j, err = Open(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	recs, err := j.Records(ctx, "s1/f1")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 || recs[0].Seq != 1 || recs[3].Seq != 4 || recs[2].Kind != KindFinish || string(recs[2].Data) != `{"status":"ok"}` ||
		!recs[0].At.Equal(at) || recs[1].Task != "f1.1" || recs[1].Data != nil {
		t.Fatalf("records: %+v", recs)
	}
	fleets, err := j.Fleets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(fleets) != 2 || fleets[0].Key != "s2/f1" || fleets[0].Replied || fleets[1].Key != "s1/f1" || !fleets[1].Replied || fleets[1].Records != 4 {
		t.Fatalf("fleets: %+v", fleets)
	}
	if _, err := j.Append(ctx, Record{Kind: KindStart}); err == nil {
		t.Fatal("a record without a fleet was accepted")
	}
}

// TestConcurrentAppends numbers every record of a fleet exactly once when
// writers race.
func TestConcurrentAppends(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				if _, err := j.Append(ctx, Record{Fleet: "s/f", Kind: KindStart, Task: fmt.Sprintf("%d.%d", w, i)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	recs, err := j.Records(ctx, "s/f")
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Fatalf("record %d has seq %d", i, r.Seq)
		}
	}
	if len(recs) != 40 {
		t.Fatalf("%d records, want 40", len(recs))
	}
}

// BenchmarkAppend is the cost of one journalled scheduler input: one
// synced transaction.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	j, err := Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	data := json.RawMessage(`{"TaskID":"f1.1","Status":"ok","Text":"a short answer of a few words"}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := j.Append(ctx, Record{Fleet: "s/f1", Kind: KindFinish, Task: "f1.1", Data: data}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAppendAll: a batch continues each fleet's sequence, in order, and a
// batch with one bad record writes none of them.
func TestAppendAll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, err := j.Append(ctx, Record{Fleet: "s/f1", Kind: KindSubmit}); err != nil {
		t.Fatal(err)
	}
	seqs, err := j.AppendAll(ctx, []Record{
		{Fleet: "s/f1", Kind: KindStart, Task: "f1.1"},
		{Fleet: "s/f2", Kind: KindSubmit},
		{Fleet: "s/f1", Kind: KindStart, Task: "f1.2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seqs) != "[2 1 3]" {
		t.Errorf("sequence numbers %v, want [2 1 3]", seqs)
	}
	if _, err := j.AppendAll(ctx, []Record{
		{Fleet: "s/f1", Kind: KindStart, Task: "f1.3"},
		{Fleet: "s/f1", Kind: KindFinish, Task: "f1.1", Data: json.RawMessage(`{not json`)},
	}); err == nil {
		t.Fatal("a batch with a record that is not JSON was written")
	}
	recs, err := j.Records(ctx, "s/f1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%d:%s:%s", r.Seq, r.Kind, r.Task))
	}
	if want := "[1:submit: 2:start:f1.1 3:start:f1.2]"; fmt.Sprint(got) != want {
		t.Errorf("records %v, want %s", got, want)
	}
}
