package history

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/core/compact"
	"reasonix/core/provider"
	"reasonix/core/session"
)

// The benchmarks share one generated home of benchSessions saved
// sessions, built and indexed once per test binary run, outside any
// timed part.
const (
	benchSessions = 10_000
	benchProjects = 50
	benchArchives = 200
)

var (
	benchOnce sync.Once
	benchH    *benchHome
	benchErr  error
)

type benchHome struct {
	home     string
	sessions string // the current project's transcript directory
	// target is a transcript of the current project the update
	// benchmark appends to.
	target   string
	messages int
	bytes    int64
	build    time.Duration
}

// benchHomeEnv names a directory to keep the generated home in between
// runs (it takes minutes to build); without it the home is a temporary
// directory removed at exit.
const benchHomeEnv = "REASONIX_BENCH_HISTORY_HOME"

func TestMain(m *testing.M) {
	code := m.Run()
	if benchH != nil && os.Getenv(benchHomeEnv) == "" {
		os.RemoveAll(benchH.home)
	}
	os.Exit(code)
}

// sharedBenchHome generates the home and indexes it, once.
func sharedBenchHome(b *testing.B) *benchHome {
	b.Helper()
	benchOnce.Do(func() {
		benchH, benchErr = generateBenchHome()
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchH
}

func generateBenchHome() (*benchHome, error) {
	home := os.Getenv(benchHomeEnv)
	if home != "" {
		if h, err := loadBenchHome(home); err == nil {
			return h, nil
		}
		if err := os.RemoveAll(home); err != nil {
			return nil, err
		}
	} else {
		var err error
		if home, err = os.MkdirTemp("", "reasonix-history-bench-"); err != nil {
			return nil, err
		}
	}
	h := &benchHome{home: home}
	g := newGen(1)
	start := day.Add(-400 * 24 * time.Hour)
	for p := range benchProjects {
		dir := session.ProjectDir(home, fmt.Sprintf("/home/dev/src/project-%02d", p))
		if p == 0 {
			h.sessions = dir
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		for s := range benchSessions / benchProjects {
			created := start.Add(time.Duration(p*benchSessions/benchProjects+s) * 55 * time.Minute)
			id := session.NewID(created)
			path := filepath.Join(dir, id+".jsonl")
			n, size, err := g.writeSession(path, id, created)
			if err != nil {
				return nil, err
			}
			h.messages += n
			h.bytes += size
			if p == 0 && s == 0 {
				h.target = path
			}
		}
	}
	for a := range benchArchives {
		at := start.Add(time.Duration(a) * 47 * time.Hour)
		var recs []compact.ArchiveRecord
		for i := range 10 + g.r.IntN(30) {
			recs = append(recs, compact.ArchiveRecord{Session: "s", Index: i, Tier: "fold", Time: at, Message: g.message(i)})
		}
		if _, err := compact.WriteArchive(compact.ArchiveDir(home), at, recs); err != nil {
			return nil, err
		}
		h.messages += len(recs)
	}
	t0 := time.Now()
	ix, err := Open(context.Background(), home)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	dirs, err := Dirs(home, h.sessions, ScopeGlobal)
	if err != nil {
		return nil, err
	}
	if _, err := ix.Sync(context.Background(), dirs...); err != nil {
		return nil, err
	}
	h.build = time.Since(t0)
	if os.Getenv(benchHomeEnv) != "" {
		b, _ := json.Marshal(benchMeta{Sessions: h.sessions, Target: h.target, Messages: h.messages, Bytes: h.bytes, Build: h.build})
		if err := os.WriteFile(filepath.Join(home, "bench.json"), b, 0o644); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// benchMeta describes a kept home (see benchHomeEnv).
type benchMeta struct {
	Sessions, Target string
	Messages         int
	Bytes            int64
	Build            time.Duration
}

func loadBenchHome(home string) (*benchHome, error) {
	b, err := os.ReadFile(filepath.Join(home, "bench.json"))
	if err != nil {
		return nil, err
	}
	var m benchMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return &benchHome{home: home, sessions: m.Sessions, target: m.Target, messages: m.Messages, bytes: m.Bytes, build: m.Build}, nil
}

// gen makes plausible session text: words drawn from a Zipf
// distribution over a fixed vocabulary, identifiers, paths, commands and
// tool output.
type gen struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newGen(seed uint64) *gen {
	r := rand.New(rand.NewPCG(seed, seed))
	syll := []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "dor", "len", "mar", "tis",
		"ver", "gal", "pon", "shi", "tran", "ex", "in", "con", "fig", "ser", "ch", "ing", "ed", "ly", "er"}
	common := strings.Fields("the a to of and in is it that for on with this as be at by not from or are was " +
		"file test function error return value config build run change code line go package type string " +
		"need should will can use now then fix add check look see make sure")
	vocab := slices.Clone(common)
	seen := map[string]bool{}
	for _, w := range common {
		seen[w] = true
	}
	for len(vocab) < 20_000 {
		var b strings.Builder
		for range 1 + r.IntN(4) {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	return &gen{r: r, zipf: rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1)), vocab: vocab}
}

func (g *gen) word() string { return g.vocab[g.zipf.Uint64()] }

func (g *gen) words(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch g.r.IntN(40) {
		case 0:
			b.WriteString(g.ident())
		case 1:
			b.WriteString(g.path())
		default:
			b.WriteString(g.word())
		}
		if g.r.IntN(12) == 0 {
			b.WriteString(".\n")
		}
	}
	return b.String()
}

func (g *gen) ident() string {
	w := g.word()
	return strings.ToUpper(w[:1]) + w[1:] + strings.ToUpper(g.word()[:1]) + fmt.Sprint(g.r.IntN(100))
}

func (g *gen) path() string {
	return fmt.Sprintf("%s/%s/%s.go", g.word(), g.word(), g.word())
}

// message is the i-th message of a session: user, assistant with a tool
// call, tool result, assistant, repeating.
func (g *gen) message(i int) provider.Message {
	switch i % 4 {
	case 0:
		return provider.Message{Role: provider.RoleUser, Content: g.words(10 + g.r.IntN(50))}
	case 1:
		args, _ := json.Marshal(map[string]string{"path": g.path()})
		if g.r.IntN(2) == 0 {
			args, _ = json.Marshal(map[string]string{"command": "go test ./" + g.word() + "/... -run " + g.ident()})
		}
		return provider.Message{Role: provider.RoleAssistant, Content: g.words(10 + g.r.IntN(60)),
			ToolCalls: []provider.ToolCall{{ID: fmt.Sprintf("call_%d", i), Name: "bash", Arguments: string(args)}}}
	case 2:
		var b strings.Builder
		for range 5 + g.r.IntN(40) {
			fmt.Fprintf(&b, "%s:%d: %s\n", g.path(), g.r.IntN(900), g.words(4+g.r.IntN(10)))
		}
		return provider.Message{Role: provider.RoleTool, ToolCallID: fmt.Sprintf("call_%d", i-1), Content: b.String()}
	default:
		return provider.Message{Role: provider.RoleAssistant, Content: g.words(20 + g.r.IntN(120))}
	}
}

func (g *gen) writeSession(path, id string, created time.Time) (int, int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, err
	}
	w := bufio.NewWriter(f)
	w.Write(record("header", session.Header{Version: 1, ID: id, Created: created, Model: "deepseek-chat"}))
	n := 20 + g.r.IntN(41)
	for i := range n {
		w.Write(record("message", g.message(i)))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return 0, 0, err
	}
	return n, st.Size(), f.Close()
}

// benchQueries mix what an agent asks for: rare identifiers and paths,
// phrases, and queries of common words that match a large share of all
// messages.
func benchQueries(g *gen) []string {
	qs := []string{
		"config error", "the test", "fix build error", `"return value"`, "check*",
		"function returns wrong value in config loader", "go test package",
	}
	for range 13 {
		switch g.r.IntN(3) {
		case 0:
			qs = append(qs, g.ident())
		case 1:
			qs = append(qs, g.path())
		default:
			qs = append(qs, g.word()+" "+g.word()+" "+g.vocab[1000+g.r.IntN(10_000)])
		}
	}
	return qs
}

// BenchmarkSearch is one history search over the generated home, its
// sync included (every file statted, none changed). It reports the
// median time per search across the query mix.
func BenchmarkSearch(b *testing.B) {
	bh := sharedBenchHome(b)
	b.Logf("home: %d sessions, %d messages, %d MiB of transcripts, indexed in %s",
		benchSessions, bh.messages, bh.bytes>>20, bh.build.Round(time.Millisecond))
	queries := benchQueries(newGen(2))
	for _, scope := range []Scope{ScopeGlobal, ScopeProject} {
		b.Run(string(scope), func(b *testing.B) {
			ix, err := Open(context.Background(), bh.home)
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			var times []time.Duration
			hits := 0
			i := 0
			for b.Loop() {
				q := Query{Text: queries[i%len(queries)], Scope: scope, Sessions: bh.sessions}
				i++
				t0 := time.Now()
				res, err := ix.Search(context.Background(), q)
				times = append(times, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				if res.Sync.Read != 0 {
					b.Fatalf("search read %d files of an unchanged home", res.Sync.Read)
				}
				hits += len(res.Hits)
			}
			reportMedian(b, times)
			b.ReportMetric(float64(hits)/float64(i), "hits/search")
		})
	}
}

// BenchmarkOpenSearch is what one tool call costs: open the index,
// search the global scope, close.
func BenchmarkOpenSearch(b *testing.B) {
	bh := sharedBenchHome(b)
	queries := benchQueries(newGen(2))
	var times []time.Duration
	i := 0
	for b.Loop() {
		t0 := time.Now()
		ix, err := Open(context.Background(), bh.home)
		if err != nil {
			b.Fatal(err)
		}
		_, err = ix.Search(context.Background(), Query{Text: queries[i%len(queries)], Scope: ScopeGlobal, Sessions: bh.sessions})
		if cerr := ix.Close(); err == nil {
			err = cerr
		}
		times = append(times, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
	reportMedian(b, times)
}

// BenchmarkAppendTurn appends one exchange (a user message, an
// assistant message with a tool call and its result) to one transcript
// of the generated home and measures bringing the index up to date:
// with a sync of the project's directory (200 transcripts statted), of
// the whole home, or with Update on the one file.
func BenchmarkAppendTurn(b *testing.B) {
	bh := sharedBenchHome(b)
	g := newGen(3)
	for _, mode := range []string{"sync-project", "sync-global", "update"} {
		b.Run(mode, func(b *testing.B) {
			ix, err := Open(context.Background(), bh.home)
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			dirs := []string{bh.sessions}
			if mode == "sync-global" {
				if dirs, err = Dirs(bh.home, bh.sessions, ScopeGlobal); err != nil {
					b.Fatal(err)
				}
			}
			var times []time.Duration
			for b.Loop() {
				b.StopTimer()
				f, err := os.OpenFile(bh.target, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					b.Fatal(err)
				}
				for i := range 3 {
					f.Write(record("message", g.message(i)))
				}
				f.Close()
				b.StartTimer()
				t0 := time.Now()
				added := 0
				if mode == "update" {
					added, err = ix.Update(context.Background(), bh.target)
				} else {
					var st SyncStats
					st, err = ix.Sync(context.Background(), dirs...)
					added = st.Messages
				}
				times = append(times, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				if added != 3 {
					b.Fatalf("indexed %d messages, want 3", added)
				}
			}
			reportMedian(b, times)
		})
	}
}

func reportMedian(b *testing.B, times []time.Duration) {
	if len(times) == 0 {
		return
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
}
