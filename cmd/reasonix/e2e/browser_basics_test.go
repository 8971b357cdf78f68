package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"reasonix/core/provider/providertest"
)

// shiftObserverJS, run before any of the page's own scripts, records every
// layout shift of the document's life with the nodes that moved.
const shiftObserverJS = `window.__shifts = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const r = (x) => Math.round(x.x) + ',' + Math.round(x.y) + ' ' + Math.round(x.width) + 'x' + Math.round(x.height);
    window.__shifts.push({ value: e.value, recent: e.hadRecentInput, at: Math.round(e.startTime), nodes: (e.sources || []).map((s) => (!s.node ? '?' : (s.node.dataset && s.node.dataset.testid) || s.node.id || s.node.nodeName + ':' + JSON.stringify((s.node.textContent || '').slice(0, 40)) + ' in ' + (s.node.parentElement ? s.node.parentElement.id || s.node.parentElement.className : '')) + ' ' + r(s.previousRect) + ' -> ' + r(s.currentRect)) });
  }
}).observe({ type: 'layout-shift', buffered: true });`

type layoutShift struct {
	Value  float64
	Recent bool
	At     int
	Nodes  []string
}

// controlsJS lists the page's visible, enabled controls: what a mouse can
// operate (the elements a pointer cursor marks, and the form controls),
// each named as the focus walk names the element focused.
const controlsJS = `(() => {
  const name = (el) => (el.dataset && el.dataset.testid ? el.dataset.testid : '') + '#' + (el.id || '') + '@' + (el.getAttribute('aria-label') || el.textContent.trim().slice(0, 30));
  const shown = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden' && !el.closest('[hidden]'); };
  const interactive = 'button, input, select, textarea, a[href], summary, [tabindex]';
  const all = [...document.querySelectorAll('body *')].filter((el) => {
    if (!shown(el) || el.disabled || el.closest('[aria-hidden=true]')) return false;
    if (el.matches(interactive)) return el.getAttribute('tabindex') !== '-1';
    // An element the stylesheet marks as clickable, not inside one that is.
    return getComputedStyle(el).cursor === 'pointer' && !el.parentElement.closest(interactive) && getComputedStyle(el.parentElement).cursor !== 'pointer';
  });
  return all.map(name);
})()`

// focusedJS names the focused element as controlsJS names controls.
const focusedJS = `(() => { const el = document.activeElement; if (!el || el === document.body) return ''; return (el.dataset && el.dataset.testid ? el.dataset.testid : '') + '#' + (el.id || '') + '@' + (el.getAttribute('aria-label') || el.textContent.trim().slice(0, 30)); })()`

// TestE2EBrowserPageBasics checks the basics an audit of the page would:
// opening a saved session and working in it (a reply with code and a
// table, a fleet with its approval and rows) moves nothing on the screen
// that the user did not move, and every control on the screen is reached
// with Tab, the fleet's approval answered and a fleet row opened from the
// keyboard alone.
func TestE2EBrowserPageBasics(t *testing.T) {
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if isSubagent(req) {
			if req.FirstUser() == "task 2" {
				return providertest.Turn{Text: "still working", Stall: true}
			}
			return providertest.Turn{Text: "done with " + req.FirstUser()}
		}
		switch {
		case req.LastUser() == "fan out" && len(toolResults(req)) == 0:
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet", Arguments: fleetArgs(2, nil)}}}
		case len(toolResults(req)) > 0:
			return providertest.Turn{Text: "the fleet is back"}
		}
		return providertest.Turn{Text: "Answer to " + req.LastUser() + ":\n\n```go\nfunc f() int { return 42 } // the answer\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |"}
	}))
	s := e.stream()
	var started map[string]any
	for i := 1; i <= 3; i++ {
		s.send(fmt.Sprintf(`{"type":"prompt","text":"question %d"}`, i))
		if i == 1 {
			started = s.expect("session_started", nil)
		}
		s.expect("turn_done", nil)
	}
	if err := s.stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if r := <-s.exited; r.code != 0 {
		t.Fatalf("the headless session: %s", r)
	}
	id, _ := started["session"].(string)

	srv := e.browserServe(t)
	b := newBrowserTab(t)
	b.do("a desktop window", chromedp.EmulateViewport(1280, 900))
	if _, err := chromedp.Call(b.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: shiftObserverJS}); err != nil {
		t.Fatalf("watch for layout shifts: %v", err)
	}
	b.do("open the saved session by its address", chromedp.Navigate(srv.url+"/?token="+srv.token+"#s="+id))
	b.waitJS("the session resumed", `document.querySelectorAll('[data-testid=history-assistant] table').length === 3 && !document.querySelector('[data-testid=composer]').disabled`)
	b.shot("resumed")

	b.do("ask for a fleet", chromedp.Focus(chromedp.CSS(`[data-testid=composer]`)), chromedp.KeyEvent("fan out"+kb.Enter))
	b.waitJS("the fleet's approval", `document.querySelector('[data-testid=approval][data-tool=fleet]') !== null`)

	// Every control is reached with Tab: walk the focus once round the page.
	tabs := func() []string {
		t.Helper()
		b.do("focus the start", chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`))
		var seen []string
		for range 300 {
			b.do("Tab", chromedp.KeyEvent(kb.Tab))
			f := pageEval[string](b, focusedJS)
			if f != "" && slices.Contains(seen, f) && f == seen[0] {
				break
			}
			if f != "" && !slices.Contains(seen, f) {
				seen = append(seen, f)
			}
		}
		return seen
	}
	reached := tabs()
	for _, c := range pageEval[[]string](b, controlsJS) {
		if !slices.Contains(reached, c) {
			t.Errorf("control %q is not reached with Tab (reached %q)", c, reached)
		}
	}
	// tabTo presses Tab until the focus is on the control whose name
	// matches.
	tabTo := func(what string, match func(string) bool) {
		t.Helper()
		for range 300 {
			b.do("Tab", chromedp.KeyEvent(kb.Tab))
			if match(pageEval[string](b, focusedJS)) {
				return
			}
		}
		t.Fatalf("Tab never reaches %s", what)
	}
	// Answer the approval from the keyboard: Tab to it, Enter.
	tabTo("the fleet's Allow button", func(f string) bool { return strings.HasPrefix(f, "approve-once#") })
	b.do("Enter on Allow", chromedp.KeyEvent(kb.Enter))
	b.waitJS("the fleet running", `document.querySelector('[data-testid=fleet-row][data-task="f1.2"]')?.dataset.state === 'running'`)

	reached = tabs()
	for _, c := range pageEval[[]string](b, controlsJS) {
		if !slices.Contains(reached, c) {
			t.Errorf("with the fleet running, control %q is not reached with Tab (reached %q)", c, reached)
		}
	}
	tabTo("the running task's row", func(f string) bool { return strings.HasPrefix(f, "fleet-row#") && strings.Contains(f, "f1.2") })
	b.do("Enter on the row", chromedp.KeyEvent(kb.Enter))
	b.waitJS("its detail", `(() => { const d = document.querySelector('[data-testid=task-detail]'); return !d.hidden && d.querySelector('h3').textContent === 'f1.2'; })()`)
	b.shot("keyboard-detail")

	// Let the last frames paint, then read every shift of the page's life.
	shifts := pageEval[[]layoutShift](b, `new Promise((ok) => requestAnimationFrame(() => setTimeout(() => ok(window.__shifts), 100)))`)
	for _, sh := range shifts {
		if !sh.Recent {
			t.Errorf("layout shift %.4f without user input at %d ms, moving %v", sh.Value, sh.At, sh.Nodes)
		}
	}
	b.noExceptions()
}
