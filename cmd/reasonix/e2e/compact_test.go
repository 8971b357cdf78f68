package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"reasonix/core/compact"
	"reasonix/core/provider/providertest"
)

// needleModel scripts a long session for the fake: a FACT prompt is
// acknowledged, a WORK prompt is carried out as stepsPerWork read_file
// steps, and a summary request (no tools, the compaction summariser's
// system prompt) gets a short digest.
type needleModel struct {
	mu           sync.Mutex
	step, folds  int
	stepsPerWork int
	files        int
}

func (n *needleModel) respond(req providertest.Request) providertest.Turn {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(req.Tools) == 0 && len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Content, "You compress") {
		n.folds++
		return providertest.Turn{Text: fmt.Sprintf("Digest %d: read the work files in turn and noted their contents.", n.folds)}
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role == "user" {
		if strings.HasPrefix(last.Content, "FACT") {
			return providertest.Turn{Text: "Noted."}
		}
		n.step = 0
		if !strings.HasPrefix(last.Content, "WORK") {
			return providertest.Turn{Text: "All done."}
		}
	}
	if n.step >= n.stepsPerWork {
		return providertest.Turn{Text: "Work finished."}
	}
	n.step++
	return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "read_file",
		Arguments: fmt.Sprintf(`{"path":"data/f%02d.txt"}`, n.step%n.files)}}}
}

// wireRequest is the part of a recorded request body the needle test
// checks byte for byte: each message as the raw JSON that was sent.
type wireRequest struct {
	Messages []json.RawMessage `json:"messages"`
}

type wireMessage struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID string `json:"id"`
	} `json:"tool_calls"`
}

// TestE2ECompactionNeedle is the long-session contract through the real
// binary: 300 steps of large tool results in a small window, with facts
// stated in early user turns. Every request stays inside the window with
// its calls paired, every fact reaches the last request verbatim, at
// least five compactions happen and between them each request extends the
// previous one byte for byte, every dropped original is in the archive,
// and a resume rebuilds the compacted conversation exactly.
func TestE2ECompactionNeedle(t *testing.T) {
	t.Parallel()
	model := &needleModel{stepsPerWork: 100, files: 12}
	e := newE2E(t, providertest.WithResponder(model.respond))
	must(t, os.MkdirAll(filepath.Join(e.work, "data"), 0o755))
	for i := 0; i < model.files; i++ {
		var b strings.Builder
		for j := 0; b.Len() < 3000+i*150; j++ {
			fmt.Fprintf(&b, "file %02d line %03d: payload %d\n", i, j, i*1000+j)
		}
		must(t, os.WriteFile(filepath.Join(e.work, "data", fmt.Sprintf("f%02d.txt", i)), []byte(b.String()), 0o644))
	}

	// The window: what a request with no history costs (system prompt
	// and tool schemas, as the fake counts them) plus room for about
	// a dozen steps.
	if r := e.run("run", "FACT probe"); r.code != 0 {
		t.Fatalf("probe run:\n%s", r)
	}
	base := len(e.srv.Requests()[0].Body) / 4
	const maxTokens = 400
	window := base + 24000
	cfg := fmt.Sprintf(`default_model = "fake"

[[providers]]
name = "fake"
kind = "openai"
base_url = %q
model = "fake-model"
api_key_env = "FAKE_API_KEY"
context_window = %d
max_tokens = %d
`, e.srv.URL(), window, maxTokens)
	must(t, os.WriteFile(filepath.Join(e.home, "config.toml"), []byte(cfg), 0o600))
	skip := e.srv.Count()

	facts := []string{
		"FACT one: the launch code is AZURE-1729.",
		"FACT two: the staging database lives on host db-7.internal, port 6543.",
		"FACT three: never touch the vendor directory.",
	}
	s := e.stream()
	for _, f := range facts {
		s.send(`{"type":"prompt","text":` + quote(f) + `}`)
	}
	for i := 1; i <= 3; i++ {
		s.send(fmt.Sprintf(`{"type":"prompt","text":"WORK batch %d: read the data files one by one"}`, i))
	}
	for i := 0; i < len(facts)+3; i++ {
		done := s.expect("turn_done", nil)
		if done["status"] != "ok" {
			t.Fatalf("turn %d: %v", i, done)
		}
	}
	reqs := e.srv.Requests()[skip:]
	var main []providertest.Request
	for _, r := range reqs {
		if len(r.Tools) > 0 {
			main = append(main, r)
		}
	}
	if len(main) < 300 {
		t.Fatalf("only %d model requests", len(main))
	}

	// Inside the window, calls paired, extended byte for byte between
	// compactions.
	firstSeen := map[string]string{} // tool_call_id -> the result as first sent
	breaks := 0
	var prev wireRequest
	for i, r := range main {
		if tok := len(r.Body)/4 + maxTokens; tok > window {
			t.Fatalf("request %d takes %d tokens (with max_tokens), window %d", i, tok, window)
		}
		if r.MaxTokens != maxTokens {
			t.Fatalf("request %d max_tokens = %d", i, r.MaxTokens)
		}
		var w wireRequest
		must(t, json.Unmarshal(r.Body, &w))
		if !pairedWire(w.Messages) {
			t.Fatalf("request %d: tool calls and results are not paired", i)
		}
		for _, raw := range w.Messages {
			var m wireMessage
			must(t, json.Unmarshal(raw, &m))
			if m.Role == "tool" {
				if _, ok := firstSeen[m.ToolCallID]; !ok {
					firstSeen[m.ToolCallID] = m.Content
				}
			}
		}
		if i > 0 && !extends(prev.Messages, w.Messages) {
			breaks++
		}
		prev = w
	}

	// Every fact, verbatim, in the last request.
	last := main[len(main)-1]
	for _, f := range facts {
		found := false
		for _, m := range last.Messages {
			found = found || (m.Role == "user" && m.Content == f)
		}
		if !found {
			t.Errorf("fact %q is missing from the last request", f)
		}
	}

	// /compact on demand, then one more prompt: the compacted list the
	// resume must rebuild.
	s.send(`{"type":"compact"}`)
	s.expect("turn_done", nil)
	s.send(`{"type":"prompt","text":"anything else?"}`)
	s.expect("turn_done", nil)
	res := s.finish()
	if res.code != 0 {
		t.Fatalf("stream session: %s", res)
	}
	var compactions []map[string]any
	var sessionPath string
	for _, ev := range s.seen {
		switch ev["type"] {
		case "compaction":
			compactions = append(compactions, ev)
		case "session_started":
			sessionPath, _ = ev["transcript"].(string)
		}
	}
	if len(compactions) < 5 || breaks < 5 {
		t.Fatalf("%d compaction events, %d prefix changes; want at least 5 of each", len(compactions), breaks)
	}
	if breaks > len(compactions) {
		t.Fatalf("the prefix changed %d times but only %d compactions happened", breaks, len(compactions))
	}
	tiers := map[string]int{}
	manual := false
	for _, c := range compactions {
		tiers[c["tier"].(string)]++
		manual = manual || c["trigger"] == "manual"
		if p, _ := c["archive"].(string); p == "" {
			t.Fatalf("compaction without an archive: %v", c)
		} else if _, err := os.Stat(p); err != nil {
			t.Fatalf("archive %s: %v", p, err)
		}
	}
	t.Logf("window %d tokens (base %d); %d requests; %d compactions %v; %d prefix changes; %d folds asked",
		window, base, len(main), len(compactions), tiers, breaks, model.folds)
	if tiers["fold"] == 0 || tiers["snip"]+tiers["prune"] == 0 || !manual {
		t.Fatalf("tiers %v, manual %v: want folds, snips or prunes, and the manual one", tiers, manual)
	}

	// Every original that the last request no longer carries whole is in
	// the archive.
	archived := readArchives(t, filepath.Join(e.home, "archive"))
	afterCompact := e.srv.Requests()[len(e.srv.Requests())-1]
	inLast := map[string]string{}
	for _, m := range afterCompact.Messages {
		if m.Role == "tool" {
			inLast[m.ToolCallID] = m.Content
		}
	}
	missing := 0
	for id, orig := range firstSeen {
		if inLast[id] == orig {
			continue
		}
		if !archived[id+"\x00"+orig] {
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d dropped tool results are not in the archive", missing, len(firstSeen))
	}

	// Resume: the first request repeats the live session's last one,
	// message for message, byte for byte.
	id := strings.TrimSuffix(filepath.Base(sessionPath), ".jsonl")
	before := e.srv.Count()
	if r := e.run("run", "--resume", id, "are you still there?"); r.code != 0 {
		t.Fatalf("resume:\n%s", r)
	}
	resumed := e.srv.Requests()[before]
	var live, again wireRequest
	must(t, json.Unmarshal(afterCompact.Body, &live))
	must(t, json.Unmarshal(resumed.Body, &again))
	if !extends(live.Messages, again.Messages) {
		t.Fatalf("the resumed request does not extend the live session's last request:\nlive %d messages, resumed %d", len(live.Messages), len(again.Messages))
	}
}

// extends says next begins with every message of prev, byte for byte.
func extends(prev, next []json.RawMessage) bool {
	if len(next) < len(prev) {
		return false
	}
	for i := range prev {
		if !bytes.Equal(prev[i], next[i]) {
			return false
		}
	}
	return true
}

// pairedWire says every assistant's tool calls are answered right after
// it and every tool result answers one of them.
func pairedWire(raw []json.RawMessage) bool {
	msgs := make([]wireMessage, len(raw))
	for i := range raw {
		if json.Unmarshal(raw[i], &msgs[i]) != nil {
			return false
		}
	}
	for i := 0; i < len(msgs); i++ {
		if msgs[i].Role == "tool" {
			return false
		}
		if msgs[i].Role != "assistant" || len(msgs[i].ToolCalls) == 0 {
			continue
		}
		want := map[string]bool{}
		for _, c := range msgs[i].ToolCalls {
			want[c.ID] = true
		}
		j := i + 1
		for ; j < len(msgs) && msgs[j].Role == "tool"; j++ {
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

// readArchives indexes every archived tool result as id NUL content.
func readArchives(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	must(t, err)
	out := map[string]bool{}
	for _, f := range files {
		fh, err := os.Open(f)
		must(t, err)
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var rec compact.ArchiveRecord
			must(t, json.Unmarshal(sc.Bytes(), &rec))
			if rec.Message.Role == "tool" {
				out[rec.Message.ToolCallID+"\x00"+rec.Message.Content] = true
			}
		}
		must(t, sc.Err())
		fh.Close()
	}
	return out
}

// TestE2ECompactCommandText: `/compact` as a prompt is a built-in action:
// on a fresh session there is nothing to compact and no model request is
// made; continued after some work, it folds and says so on stderr.
func TestE2ECompactCommandText(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.run("run", "/compact")
	if r.code != 0 || !strings.Contains(r.stderr, "nothing to compact") || e.srv.Count() != 0 {
		t.Fatalf("/compact on a fresh session (%d requests):\n%s", e.srv.Count(), r)
	}
	must(t, os.WriteFile(filepath.Join(e.work, "big.txt"), []byte(strings.Repeat("a line of the big file\n", 300)), 0o644))
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "read_file", Arguments: `{"path":"big.txt"}`}}},
		providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "read_file", Arguments: `{"path":"big.txt"}`}}},
		providertest.Turn{Text: "read it twice"},
		providertest.Turn{Text: "Digest: the big file was read twice."},
	)
	if r := e.run("run", "read big.txt twice"); r.code != 0 {
		t.Fatalf("work run:\n%s", r)
	}
	r = e.run("run", "--continue", "/compact")
	if r.code != 0 || !strings.Contains(r.stderr, "• compacted (fold, manual)") {
		t.Fatalf("/compact after work:\n%s", r)
	}
	reqs := e.srv.Requests()
	if sum := reqs[len(reqs)-1]; len(sum.Tools) != 0 || !strings.HasPrefix(sum.Messages[0].Content, "You compress") {
		t.Fatalf("the last request is not the summary request: %+v", sum.Messages)
	}
}
