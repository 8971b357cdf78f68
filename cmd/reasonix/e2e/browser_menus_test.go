package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"reasonix/core/provider/providertest"
)

// TestE2EBrowserSlashAndAtMenus: typing / opens the chat's command menu;
// choosing /compact runs the compact command, and /help lists the
// commands, neither as text for the model; @ completes a workspace file
// and the message shows it as a chip, not its block; a Markdown table in
// the answer renders as a table.
func TestE2EBrowserSlashAndAtMenus(t *testing.T) {
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		return providertest.Turn{Text: "| file | lines |\n|---|--:|\n| notes.txt | 1 |"}
	}))
	if err := os.WriteFile(filepath.Join(e.work, "notes.txt"), []byte("the notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, b := browserSignedIn(t, e)

	b.do("type /", chromedp.SendKeys(chromedp.CSS(`[data-testid=composer]`), "/"))
	b.waitJS("the command menu", `(() => { const m = document.querySelector('[data-testid=menu]'); return !m.hidden && [...m.querySelectorAll('[data-testid=menu-item]')].some((i) => i.dataset.value === '/compact'); })()`)
	b.shot("slash-menu")
	b.do("narrow it to /comp", chromedp.SendKeys(chromedp.CSS(`[data-testid=composer]`), "comp"))
	b.waitJS("/compact first", `document.querySelector('[data-testid=menu-item][aria-selected=true]').dataset.value === '/compact'`)
	b.do("choose it", chromedp.KeyEvent(kb.Enter))
	b.waitJS("the compaction's answer", `[...document.querySelectorAll('[data-testid=notice],[data-testid=page-error]')].some((n) => /compact/i.test(n.textContent))`)
	b.shot("compacted")
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("/compact on the page made %d model requests", n)
	}
	if v := pageEval[string](b, `document.querySelector('[data-testid=composer]').value`); v != "" {
		t.Errorf("after /compact the composer holds %q", v)
	}

	b.prompt("/help")
	b.waitJS("the help", `[...document.querySelectorAll('[data-testid=page-note]')].some((n) => n.textContent.includes('/compact') && n.textContent.includes('/goal'))`)
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("/help on the page made %d model requests", n)
	}

	b.do("type an @", chromedp.SendKeys(chromedp.CSS(`[data-testid=composer]`), "count @no"))
	b.waitJS("the file menu", `[...document.querySelectorAll('[data-testid=menu-item]')].some((i) => i.dataset.value === '@notes.txt')`)
	b.shot("at-menu")
	b.do("take it", chromedp.KeyEvent(kb.Tab))
	b.waitJS("the file in the box", `document.querySelector('[data-testid=composer]').value === 'count @notes.txt '`)
	b.do("send", chromedp.SendKeys(chromedp.CSS(`[data-testid=composer]`), "lines"+kb.Enter))
	b.waitJS("the table", `(() => { const t = document.querySelector('[data-testid=assistant-message] table'); return t && t.querySelectorAll('th').length === 2 && t.querySelector('td').textContent === 'notes.txt'; })()`)
	b.shot("table")
	if v := pageEval[shown](b, shownJS); v.Chip != "@notes.txt" || strings.Contains(v.Text, "<file") || !strings.Contains(v.Text, "count @notes.txt lines") {
		t.Errorf("the message shows %+v", v)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].LastUser(), `<file path="notes.txt">`) {
		t.Errorf("the model got %d requests, the last %q", len(reqs), reqs[len(reqs)-1].LastUser())
	}
	b.noExceptions()
}
