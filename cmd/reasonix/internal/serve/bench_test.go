//go:build unix

package serve

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"reasonix/core/provider/providertest"
)

// benchClients is how many browser tabs watch the one session.
const benchClients = 20

// benchDeltas is how many text deltas one turn streams.
const benchDeltas = 2000

// BenchmarkSSEFanout streams turns of benchDeltas deltas from one session
// to benchClients SSE clients over real HTTP on loopback. Every client must
// get every event of the bus in order, without a gap or a lagged event;
// the benchmark fails otherwise. It reports the events delivered per
// second over all clients, the process CPU time per turn (the server, the
// model fake and the clients share the process, so it is an upper bound on
// the server's) and the heap in use after the run.
func BenchmarkSSEFanout(b *testing.B) {
	h := newHarness(b, harnessOpts{})
	id := h.newSession()

	type result struct {
		events int
		// done is the turn_done's seq: the same for every client.
		done int64
		err  error
	}
	turnDone := make([]chan result, benchClients)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); wg.Wait() }()
	ready := make(chan struct{}, benchClients)
	for i := range benchClients {
		turnDone[i] = make(chan result, 1)
		req, err := http.NewRequestWithContext(ctx, "GET", h.base+"/api/sessions/"+id+"/events", nil)
		if err != nil {
			b.Fatal(err)
		}
		resp, err := noRedirect.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("client %d: %v %v", i, err, resp)
		}
		wg.Go(func() {
			defer resp.Body.Close()
			rd := bufio.NewReaderSize(resp.Body, 64<<10)
			var last int64 = -1
			n := 0
			ready <- struct{}{}
			for {
				line, err := rd.ReadSlice('\n')
				if err != nil {
					return
				}
				s := string(line)
				switch {
				case strings.HasPrefix(s, "id: "):
					seq, err := strconv.ParseInt(strings.TrimSpace(s[4:]), 10, 64)
					if err != nil {
						turnDone[i] <- result{err: err}
						return
					}
					if last >= 0 && seq != last+1 {
						turnDone[i] <- result{err: fmt.Errorf("client %d: seq %d after %d", i, seq, last)}
						return
					}
					last = seq
					n++
				case strings.HasPrefix(s, "data: "):
					if strings.Contains(s, `"type":"lagged"`) {
						turnDone[i] <- result{err: fmt.Errorf("client %d lagged: %s", i, s)}
						return
					}
					if last < 0 && strings.Contains(s, `"type":"snapshot"`) {
						// The first event after the snapshot is snapshot seq + 1.
						if j := strings.Index(s, `"seq":`); j >= 0 {
							k := j + len(`"seq":`)
							e := k
							for e < len(s) && s[e] >= '0' && s[e] <= '9' {
								e++
							}
							last, _ = strconv.ParseInt(s[k:e], 10, 64)
						}
					}
					if strings.HasPrefix(s, `data: {"type":"turn_done"`) {
						turnDone[i] <- result{events: n, done: last}
						n = 0
					}
				}
			}
		})
	}
	for range benchClients {
		<-ready
	}

	text := strings.Repeat("ab", benchDeltas)
	var before, after syscall.Rusage
	runtime.GC()
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &before); err != nil {
		b.Fatal(err)
	}
	total := 0
	start := time.Now()
	b.ResetTimer()
	for turn := range b.N {
		h.fake.Push(providertest.Turn{Text: text, ChunkBytes: 2})
		h.prompt(id, "stream")
		perTurn, doneSeq := -1, int64(-1)
		for i := range benchClients {
			select {
			case r := <-turnDone[i]:
				if r.err != nil {
					b.Fatal(r.err)
				}
				// Each client's seqs are consecutive (checked as they
				// come), so ending at the same turn_done means none missed
				// one. The first turn's counts may differ by what the
				// session published while the clients were connecting.
				if doneSeq >= 0 && r.done != doneSeq {
					b.Fatalf("client %d ended the turn at seq %d, another at %d", i, r.done, doneSeq)
				}
				if turn > 0 && perTurn >= 0 && r.events != perTurn {
					b.Fatalf("client %d got %d events, another %d", i, r.events, perTurn)
				}
				doneSeq = r.done
				if r.events < benchDeltas {
					b.Fatalf("client %d got %d events for %d deltas", i, r.events, benchDeltas)
				}
				perTurn = r.events
				total += r.events
			case <-time.After(2 * time.Minute):
				b.Fatalf("client %d: no turn_done", i)
			}
		}
	}
	b.StopTimer()
	elapsed := time.Since(start)
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &after); err != nil {
		b.Fatal(err)
	}
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(total)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/turn")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(total)/float64(b.N)/benchClients, "events/client/turn")
}
