package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The page's pure parts (the Markdown renderer and the event fold) are
// checked here in Chromium against the files as they are embedded, served
// by a small test server; everything that needs the real server is in
// browser_test.go.

const pageWebDir = "../internal/serve/web"

// pageHarness loads the page's modules without the page itself.
const pageHarness = `<!doctype html><meta charset="utf-8"><title>harness</title><link rel="stylesheet" href="/assets/app.css"><body><div id="out"></div>
<script type="module">
import * as md from '/assets/markdown.js';
import * as fold from '/assets/fold.js';
window.md = md; window.foldlib = fold; window.ready = true;
</script>`

// openPageHarness serves the web directory plus the harness and opens it.
func openPageHarness(t *testing.T) *browserTab {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/assets/", http.FileServer(http.Dir(pageWebDir)))
	mux.HandleFunc("/harness.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(pageHarness))
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	b := newBrowserTab(t)
	b.do("open the harness", chromedp.Navigate(ts.URL+"/harness.html"))
	b.waitJS("the modules", "window.ready === true")
	return b
}

type pageRendered struct {
	HTML     string   `json:"html"`
	Text     string   `json:"text"`
	Tags     []string `json:"tags"`
	Attrs    []string `json:"attrs"`
	Hrefs    []string `json:"hrefs"`
	Executed bool     `json:"executed"`
}

// render runs the renderer on src in the page, puts its HTML into the
// document and reports what that created, after giving any injected
// handler (onerror of a broken image, a script) the chance to run.
func renderInPage(b *browserTab, src string) pageRendered {
	b.t.Helper()
	return pageEval[pageRendered](b, `(async () => {
  window.__x = false;
  const out = document.getElementById('out');
  out.innerHTML = md.renderMarkdown(`+jsLiteral(src)+`);
  // Broken images fire onerror within a task or two; wait for the load
  // attempts of whatever was created to settle.
  await Promise.all([...out.querySelectorAll('img,iframe,object,embed,video,audio,link')].map((el) => new Promise((ok) => { el.addEventListener('error', ok); el.addEventListener('load', ok); })));
  await new Promise((ok) => setTimeout(ok, 0));
  const els = [...out.querySelectorAll('*')];
  return {
    html: out.innerHTML,
    text: out.textContent,
    tags: els.map((e) => e.tagName.toLowerCase()),
    attrs: els.flatMap((e) => [...e.attributes].map((a) => a.name)),
    hrefs: [...out.querySelectorAll('a')].map((a) => a.getAttribute('href')),
    executed: window.__x === true,
  };
})()`)
}

// TestBrowserMarkdownEscapesModelText feeds HTML and script as model text:
// none of it may become an element, an attribute or a script that runs,
// and it reads back as the literal text the model wrote.
func TestBrowserMarkdownEscapesModelText(t *testing.T) {
	b := openPageHarness(t)
	allowed := map[string]bool{"p": true, "br": true, "pre": true, "code": true, "span": true, "strong": true, "em": true, "del": true, "a": true, "ul": true, "ol": true, "li": true, "blockquote": true, "hr": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true}
	allowedAttrs := map[string]bool{"href": true, "rel": true, "target": true, "class": true, "start": true}
	cases := []struct {
		name, src string
		text      string // a substring the pageRendered text must hold
	}{
		{"img onerror", `<img src=x onerror="window.__x=true">`, `<img src=x onerror="window.__x=true">`},
		{"script", `<script>window.__x=true</script>`, `<script>window.__x=true</script>`},
		{"svg onload", `<svg onload="window.__x=true"><circle/></svg>`, `<svg onload=`},
		{"iframe", `<iframe src="javascript:window.__x=true"></iframe>`, `<iframe src=`},
		{"inside bold", `**<img src=x onerror="window.__x=true">**`, `<img src=x`},
		{"inside a heading", "# <script>window.__x=true</script>", "<script>"},
		{"inside a list", "- <img src=x onerror=\"window.__x=true\">\n- two", "<img src=x"},
		{"inside a code block", "```html\n<img src=x onerror=\"window.__x=true\">\n```", `<img src=x onerror="window.__x=true">`},
		{"inside a Go string", "```go\nx := \"<img src=x onerror=\\\"window.__x=true\\\">\"\n```", `<img src=x onerror=`},
		{"span breakout in a comment", "```js\n// </span><img src=x onerror=\"window.__x=true\"><span>\nlet a = 1\n```", `</span><img src=x`},
		{"unclosed template literal", "```ts\nconst s = `<script>window.__x=true</script>\n```", "<script>window.__x"},
		{"python docstring", "```python\n\"\"\"<img src=x onerror=\"window.__x=true\">\n```", "<img src=x"},
		{"a diff line", "```diff\n+<img src=x onerror=\"window.__x=true\">\n```", "+<img src=x"},
		{"inside inline code", "`<img src=x onerror=\"window.__x=true\">`", `<img src=x onerror=`},
		{"in a link label", `[<img src=x onerror="window.__x=true">](https://example.com)`, `<img src=x`},
		{"javascript link", `[click](javascript:window.__x=true)`, "click"},
		{"javascript link with tab", "[click](java\tscript:window.__x=true)", "click"},
		{"data link", `[click](data:text/html,<script>window.__x=true</script>)`, "click"},
		{"attribute breakout in url", `[x](https://example.com/"onmouseover="window.__x=true)`, "x"},
		{"entity trick", `&lt;img src=x onerror=window.__x=true&gt; &#60;script&#62;`, `&lt;img src=x`},
		{"blockquote", "> <img src=x onerror=\"window.__x=true\">", "<img src=x"},
		{"NUL placeholder forgery", "\x000\x00 `a` \x000\x00", "a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := renderInPage(b, c.src)
			if r.Executed {
				t.Errorf("injected code ran; html %s", r.HTML)
			}
			for _, tag := range r.Tags {
				if !allowed[tag] {
					t.Errorf("created a <%s>; html %s", tag, r.HTML)
				}
			}
			for _, a := range r.Attrs {
				if !allowedAttrs[a] {
					t.Errorf("created attribute %s; html %s", a, r.HTML)
				}
			}
			for _, h := range r.Hrefs {
				if !strings.HasPrefix(h, "https://") && !strings.HasPrefix(h, "http://") {
					t.Errorf("link to %q; html %s", h, r.HTML)
				}
			}
			if !strings.Contains(r.Text, c.text) {
				t.Errorf("text %q does not show %q", r.Text, c.text)
			}
		})
	}
	b.noExceptions()
}

// TestBrowserCodeHighlighting: a fenced block of a known language has its
// comments, strings, numbers and keywords in token spans the stylesheet
// colours, its text unchanged; an unknown language stays plain.
func TestBrowserCodeHighlighting(t *testing.T) {
	b := openPageHarness(t)
	type tokens struct {
		Text   string              `json:"text"`
		Spans  map[string][]string `json:"spans"`
		Styled bool                `json:"styled"`
	}
	read := func(src string) tokens {
		t.Helper()
		return pageEval[tokens](b, `(() => {
  const out = document.getElementById('out');
  out.innerHTML = md.renderMarkdown(`+jsLiteral(src)+`);
  const spans = {};
  for (const s of out.querySelectorAll('code span')) (spans[s.className] ||= []).push(s.textContent);
  const code = out.querySelector('code'), k = out.querySelector('.tok-k');
  return { text: code.textContent, spans, styled: !!k && getComputedStyle(k).color !== getComputedStyle(code).color };
})()`)
	}
	src := "func main() {\n\t// say it\n\tfmt.Println(\"hi\", 42) /* done */\n\treturn\n}"
	got := read("```go\n" + src + "\n```")
	if got.Text != src {
		t.Errorf("highlighting changed the text: %q", got.Text)
	}
	want := map[string][]string{"tok-k": {"func", "return"}, "tok-c": {"// say it", "/* done */"}, "tok-s": {`"hi"`}, "tok-n": {"42"}}
	for cls, w := range want {
		if fmt.Sprint(got.Spans[cls]) != fmt.Sprint(w) {
			t.Errorf("%s spans = %q, want %q", cls, got.Spans[cls], w)
		}
	}
	if !got.Styled {
		t.Errorf("a keyword is not coloured by the stylesheet")
	}
	if py := read("```py\ndef f(x):  # twice\n    return 'a' * 2\n```"); fmt.Sprint(py.Spans["tok-k"]) != "[def return]" || fmt.Sprint(py.Spans["tok-c"]) != "[# twice]" {
		t.Errorf("python spans = %v", py.Spans)
	}
	if plain := read("```text\nfunc return \"x\" 42\n```"); len(plain.Spans) != 0 {
		t.Errorf("an unknown language was highlighted: %v", plain.Spans)
	}
	b.noExceptions()
}

// TestBrowserMarkdownRenders checks the Markdown the page understands.
func TestBrowserMarkdownRenders(t *testing.T) {
	b := openPageHarness(t)
	cases := []struct {
		name, src string
		html      []string // substrings of the HTML, in order
	}{
		{"paragraph and breaks", "one\ntwo\n\nthree", []string{"<p>one<br>two</p>", "<p>three</p>"}},
		{"bold and italic", "**b** and *i* and _j_ and snake_case_word", []string{"<strong>b</strong>", "<em>i</em>", "<em>j</em>", "snake_case_word"}},
		{"inline code keeps stars", "`a*b*c`", []string{"<code>a*b*c</code>"}},
		{"code block with language", "```go\nfunc main() {}\n```", []string{`<pre><code class="lang-go"><span class="tok-k">func</span> main() {}</code></pre>`}},
		{"unclosed fence while streaming", "```\npartial", []string{"<pre><code>partial</code></pre>"}},
		{"headings", "# One\n### Three", []string{"<h1>One</h1>", "<h3>Three</h3>"}},
		{"nested list", "- a\n- b\n  - c\n- d", []string{"<ul><li>a</li><li>b<ul><li>c</li></ul></li><li>d</li></ul>"}},
		{"ordered list from 3", "3. x\n4. y", []string{`<ol start="3"><li>x</li><li>y</li></ol>`}},
		{"link", "[docs](https://go.dev/doc)", []string{`<a href="https://go.dev/doc" rel="noopener noreferrer" target="_blank">docs</a>`}},
		{"bare url", "see https://go.dev/doc.", []string{`<a href="https://go.dev/doc" rel="noopener noreferrer" target="_blank">https://go.dev/doc</a>.`}},
		{"quote and rule", "> q\n\n---", []string{"<blockquote><p>q</p></blockquote>", "<hr>"}},
		{"table", "| name | n |\n|:--|--:|\n| a \\| b | **2** |\n| <b>x</b> |\n\nafter", []string{`<table><thead><tr><th class="al-left">name</th><th class="al-right">n</th></tr></thead><tbody>`,
			`<tr><td class="al-left">a | b</td><td class="al-right"><strong>2</strong></td></tr>`, `<tr><td class="al-left">&lt;b&gt;x&lt;/b&gt;</td><td class="al-right"></td></tr></tbody></table>`, "<p>after</p>"}},
		{"pipes without a delimiter row are text", "a | b\nc | d", []string{"<p>a | b<br>c | d</p>"}},
		// Hostile nesting is cut off at a fixed depth instead of
		// recursing once per marker.
		{"deep list", strings.Repeat("- ", 3000) + "end", []string{strings.Repeat("<ul><li>", 12) + "- - ", "end</li></ul>"}},
		{"deep quote", strings.Repeat("> ", 3000) + "end", []string{strings.Repeat("<blockquote>", 12) + "<p>&gt; &gt; ", "end</p></blockquote>"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := renderInPage(b, c.src)
			at := 0
			for _, want := range c.html {
				i := strings.Index(r.HTML[at:], want)
				if i < 0 {
					t.Fatalf("html %s\nlacks %s", r.HTML, want)
				}
				at += i + len(want)
			}
		})
	}
	b.noExceptions()
}

// foldedTasks is what the fleet view shows per task.
type pageFoldTask struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Status string `json:"status"`
	Tool   string `json:"tool"`
	Tokens int    `json:"tokens"`
}

type pageFoldResult struct {
	Tasks     []pageFoldTask `json:"tasks"`
	Approvals []string       `json:"approvals"`
	Items     []string       `json:"items"`
	Text      string         `json:"text"`
	Dups      int            `json:"dups"`
}

// runPageFold folds the snapshot (if any) and the events in a fresh state.
func runPageFold(b *browserTab, snapshot string, events []string) pageFoldResult {
	b.t.Helper()
	if snapshot == "" {
		snapshot = "null"
	}
	return pageEval[pageFoldResult](b, fmt.Sprintf(`(() => {
  const st = foldlib.newState();
  const snap = %s;
  if (snap) foldlib.fold(st, {...snap, type: 'snapshot'});
  let dups = 0;
  for (const ev of %s) if (!foldlib.fold(st, ev)) dups++;
  return {
    tasks: [...st.tasks.values()].map((r) => ({id: r.id, state: r.state, status: r.status, tool: r.tool, tokens: r.tokens})),
    approvals: [...st.approvals.keys()],
    items: st.items.map((i) => i.kind + (i.kind === 'tool' ? ':' + i.tool + ':' + i.state : '')),
    text: st.items.filter((i) => i.kind === 'assistant').map((i) => i.text).join('|'),
    dups,
  };
})()`, snapshot, "["+strings.Join(events, ",")+"]"))
}

// TestBrowserFoldRebuildsTheSameView: the view a page builds from the whole
// stream equals the one a page that loads later builds from the snapshot
// plus the replay, and a reconnect's repeated events change nothing.
func TestBrowserFoldRebuildsTheSameView(t *testing.T) {
	b := openPageHarness(t)
	events := []string{
		`{"type":"session_started","seq":1,"model":"m","cwd":"/w"}`,
		`{"type":"turn_started","seq":2,"prompt":"fan out"}`,
		`{"type":"reasoning_delta","seq":3,"text":"thinking"}`,
		`{"type":"text_delta","seq":4,"text":"Starting "}`,
		`{"type":"text_delta","seq":5,"text":"a fleet."}`,
		`{"type":"tool_started","seq":6,"call_id":"c1","tool":"fleet","args":"{\"tasks\":[{},{},{}]}"}`,
		`{"type":"task_queued","seq":7,"task":"f1.1","fleet":"f1","prompt":"task 1"}`,
		`{"type":"task_queued","seq":8,"task":"f1.2","fleet":"f1","prompt":"task 2"}`,
		`{"type":"task_queued","seq":9,"task":"f1.3","fleet":"f1","prompt":"task 3"}`,
		`{"type":"task_started","seq":10,"task":"f1.1","fleet":"f1","model":"m","time":"2026-01-01T00:00:00Z"}`,
		`{"type":"task_started","seq":11,"task":"f1.2","fleet":"f1","model":"m","time":"2026-01-01T00:00:00Z"}`,
		`{"type":"tool_started","seq":12,"task":"f1.2","call_id":"s1","tool":"ls","args":"{}"}`,
		`{"type":"usage","seq":13,"task":"f1.1","usage":{"total_tokens":50},"total":{"prompt_tokens":40,"total_tokens":50,"cache_hit_tokens":20}}`,
		`{"type":"task_done","seq":14,"task":"f1.1","fleet":"f1","status":"ok","duration_ms":900,"usage":{"prompt_tokens":40,"total_tokens":50}}`,
		`{"type":"approval_requested","seq":15,"task":"f1.2","request_id":"s/f1.2/s2","call_id":"s2","tool":"write_file","args":"{}","reason":"writes"}`,
	}
	whole := runPageFold(b, "", events)
	want := []pageFoldTask{{"f1.1", "done", "ok", "", 50}, {"f1.2", "running", "", "ls", 0}, {"f1.3", "queued", "", "", 0}}
	if fmt.Sprint(whole.Tasks) != fmt.Sprint(want) {
		t.Fatalf("tasks from the whole stream = %+v, want %+v", whole.Tasks, want)
	}
	if fmt.Sprint(whole.Approvals) != "[s/f1.2/s2]" || whole.Text != "Starting a fleet." {
		t.Fatalf("approvals %v, text %q", whole.Approvals, whole.Text)
	}
	if fmt.Sprint(whole.Items) != "[user assistant tool:fleet:running]" {
		t.Fatalf("items = %v", whole.Items)
	}

	// A late page: the snapshot as of seq 11, then the replay from 0, as
	// the server sends for ?since=0.
	snap := map[string]any{
		"seq": 11, "running": true, "prompt": "fan out",
		"tasks": []map[string]any{
			{"id": "f1.1", "fleet": "f1", "prompt": "task 1", "state": "running"},
			{"id": "f1.2", "fleet": "f1", "prompt": "task 2", "state": "running"},
			{"id": "f1.3", "fleet": "f1", "prompt": "task 3", "state": "queued"},
		},
		"approvals": []any{}, "mcp": []any{},
	}
	sj, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	late := runPageFold(b, string(sj), events)
	if fmt.Sprint(late.Tasks) != fmt.Sprint(whole.Tasks) || fmt.Sprint(late.Items) != fmt.Sprint(whole.Items) || late.Text != whole.Text || fmt.Sprint(late.Approvals) != fmt.Sprint(whole.Approvals) {
		t.Fatalf("late page folded %+v\nwhole stream folded %+v", late, whole)
	}

	// A reconnect repeats what the page already has: duplicates are dropped.
	again := runPageFold(b, "", append(events, events[3:]...))
	if again.Dups != len(events)-3 || again.Text != whole.Text || fmt.Sprint(again.Tasks) != fmt.Sprint(whole.Tasks) {
		t.Fatalf("after a repeated replay: %+v", again)
	}

	// A page rebuilt after a lag joins a turn mid-stream: the turn's end
	// carries the whole text, which replaces the part it saw; a page that
	// saw the turn start keeps what it streamed.
	joined := pageEval[[]string](b, `(() => {
  const out = [];
  for (const rebuilt of [true, false]) {
    const st = foldlib.newState();
    st.rebuilt = rebuilt;
    foldlib.fold(st, {type: 'snapshot', seq: 40, running: true, prompt: 'p'});
    foldlib.fold(st, {type: 'text_delta', seq: 41, text: 'end of it.'});
    foldlib.fold(st, {type: 'turn_done', seq: 42, status: 'ok', text: 'The start and the end of it.'});
    out.push(st.items.filter((i) => i.kind === 'assistant').map((i) => i.text).join('|'));
  }
  return out;
})()`)
	if fmt.Sprint(joined) != "[The start and the end of it. end of it.]" {
		t.Errorf("joined mid-turn: %q", joined)
	}

	// The snapshot alone (after a lag) still gives every row.
	alone := runPageFold(b, string(sj), nil)
	if len(alone.Tasks) != 3 || alone.Tasks[2].State != "queued" {
		t.Fatalf("snapshot alone = %+v", alone.Tasks)
	}
	b.noExceptions()
}

// TestBrowserFoldRequeuedTask: a task whose worker was lost goes back to
// queued on the page with its tool cleared and the approval its lost
// attempt asked for gone, as in the session's snapshot; its next start
// runs it again.
func TestBrowserFoldRequeuedTask(t *testing.T) {
	b := openPageHarness(t)
	events := []string{
		`{"type":"task_queued","seq":1,"task":"f1.1","fleet":"f1","prompt":"task 1"}`,
		`{"type":"task_started","seq":2,"task":"f1.1","fleet":"f1","model":"m","worker":"w1","time":"2026-01-01T00:00:00Z"}`,
		`{"type":"tool_started","seq":3,"task":"f1.1","call_id":"s1","tool":"ls","args":"{}"}`,
		`{"type":"approval_requested","seq":4,"task":"f1.1","request_id":"s/f1.1/s2","call_id":"s2","tool":"write_file","args":"{}","reason":"writes"}`,
		`{"type":"task_requeued","seq":5,"task":"f1.1","fleet":"f1","worker":"w1","attempt":2,"reason":"worker w1 lost"}`,
	}
	got := runPageFold(b, "", events)
	if want := []pageFoldTask{{"f1.1", "queued", "", "", 0}}; fmt.Sprint(got.Tasks) != fmt.Sprint(want) || len(got.Approvals) != 0 {
		t.Fatalf("after the requeue: tasks %+v approvals %v; want %+v and none", got.Tasks, got.Approvals, want)
	}
	events = append(events,
		`{"type":"task_started","seq":6,"task":"f1.1","fleet":"f1","model":"m","worker":"w2","attempt":2,"time":"2026-01-01T00:00:01Z"}`,
		`{"type":"task_done","seq":7,"task":"f1.1","fleet":"f1","status":"ok","worker":"w2","attempt":2,"duration_ms":900}`)
	got = runPageFold(b, "", events)
	if want := []pageFoldTask{{"f1.1", "done", "ok", "", 0}}; fmt.Sprint(got.Tasks) != fmt.Sprint(want) {
		t.Fatalf("after the second attempt: %+v, want %+v", got.Tasks, want)
	}
}
