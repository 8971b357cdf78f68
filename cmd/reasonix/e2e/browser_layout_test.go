package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"reasonix/core/provider/providertest"
	"reasonix/core/session"
)

// The page tested as a new user meets it: a long session that must not
// push the header and the composer off the screen, a landing page that
// takes the first message, prompt recall, titles and attachments.

// inView reports, for a 200-message session on the screen, whether the
// parts a user needs are inside the viewport: the composer, the Cancel
// button, the newest message, and the header at the top of the page
// (which itself does not scroll).
const inViewJS = `(() => {
  const vis = (el) => { if (!el) return false; const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && r.top >= 0 && r.bottom <= innerHeight + 1 && r.left >= 0 && r.right <= innerWidth + 1; };
  const log = document.querySelector('[data-testid=chat]');
  const msgs = log.querySelectorAll('[data-testid=user-message],[data-testid=assistant-message],[data-testid=history-user],[data-testid=history-assistant]');
  const last = msgs[msgs.length - 1];
  const lr = log.getBoundingClientRect(), mr = last ? last.getBoundingClientRect() : null;
  return {
    Composer: vis(document.querySelector('[data-testid=composer]')),
    Cancel: vis(document.querySelector('[data-testid=cancel-turn]')),
    Newest: !!mr && mr.bottom <= lr.bottom + 1 && mr.bottom > lr.top,
    HeaderTop: Math.round(document.querySelector('[data-testid=header]').getBoundingClientRect().top),
    PageScrolls: document.scrollingElement.scrollHeight > innerHeight + 1,
    Messages: msgs.length,
  };
})()`

type inView struct {
	Composer, Cancel, Newest, PageScrolls bool
	HeaderTop, Messages                   int
}

// TestE2EBrowserLongSessionStaysInView: a session of 200 messages (100
// turns made headless), resumed in the page at 1280×900 and at a phone's
// 390×844, opens at its newest message with the header, the Cancel button
// and the composer on the screen, and keeps them there while a new turn
// streams; scrolled up, the log stays put and offers a way back to the
// end. At the phone's width the side panels fold into header buttons.
func TestE2EBrowserLongSessionStaysInView(t *testing.T) {
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if req.LastUser() == "one more, slowly" {
			return providertest.Turn{Text: "streaming the last answer, which waits here", ChunkBytes: 6, FaultAfterEvents: 4, Stall: true}
		}
		return providertest.Turn{Text: "Answer to " + req.LastUser() + ".\n\nA second paragraph, so that each answer takes some room."}
	}))
	s := e.stream()
	for i := 1; i <= 100; i++ {
		s.send(fmt.Sprintf(`{"type":"prompt","text":"question %d"}`, i))
		s.expect("turn_done", nil)
	}
	if err := s.stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if r := <-s.exited; r.code != 0 {
		t.Fatalf("the headless session: %s", r)
	}

	srv := e.browserServe(t)
	b := newBrowserTab(t)
	b.do("a desktop window", chromedp.EmulateViewport(1280, 900))
	b.do("open the page", chromedp.Navigate(srv.url+"/?token="+srv.token), chromedp.WaitVisible(chromedp.CSS(`[data-testid=session-list][data-loaded=true]`)))
	b.do("resume the session", chromedp.Click(chromedp.CSS(`[data-testid=resume-session]`)))
	b.waitJS("the 200 messages", `document.querySelectorAll('[data-testid=history-user]').length === 100 && document.querySelectorAll('[data-testid=history-assistant]').length === 100 && !document.querySelector('[data-testid=composer]').disabled`)
	b.shot("opened-1280")
	check := func(when string, wantRunning bool) {
		t.Helper()
		v := pageEval[inView](b, inViewJS)
		if !v.Composer || !v.Cancel || !v.Newest || v.HeaderTop != 0 || v.PageScrolls || v.Messages < 200 {
			t.Errorf("%s: %+v, want the composer, Cancel and the newest message in view, the header at 0 and a page that does not scroll", when, v)
		}
		if running := pageEval[bool](b, `!document.querySelector('[data-testid=cancel-turn]').disabled`); running != wantRunning {
			t.Errorf("%s: Cancel enabled %v, want %v", when, running, wantRunning)
		}
	}
	check("opened at 1280×900", false)

	b.prompt("one more, slowly")
	b.waitJS("the answer streaming", `[...document.querySelectorAll('[data-testid=assistant-message]')].some((a) => a.textContent.includes('streaming the'))`)
	check("streaming at 1280×900", true)

	// Scrolled up, the log stays; new output does not pull it down.
	b.do("scroll up", chromedp.Evaluate[chromedp.Void](`(() => { const l = document.querySelector('[data-testid=chat]'); l.scrollTop = 0; l.dispatchEvent(new Event('scroll')); })()`))
	b.waitJS("the jump control", `!document.querySelector('[data-testid=jump-latest]').hidden`)
	b.shot("scrolled-up")
	if top := pageEval[int](b, `document.querySelector('[data-testid=chat]').scrollTop`); top != 0 {
		t.Errorf("scrolled to the top, the log is at %d", top)
	}
	b.do("jump to the latest", chromedp.Click(chromedp.CSS(`[data-testid=jump-latest]`)))
	b.waitJS("the log at its end", `(() => { const l = document.querySelector('[data-testid=chat]'); return l.scrollHeight - l.scrollTop - l.clientHeight < 2 && document.querySelector('[data-testid=jump-latest]').hidden; })()`)

	b.do("a phone", chromedp.EmulateViewport(390, 844))
	b.waitJS("the narrow layout", `getComputedStyle(document.querySelector('[data-testid=toggle-side]')).display !== 'none' && getComputedStyle(document.getElementById('side-pane')).display === 'none' && getComputedStyle(document.getElementById('sessions-pane')).display === 'none'`)
	// The narrower log is taller; the newest message is still at its end.
	b.waitJS("the log still at its end", `(() => { const l = document.querySelector('[data-testid=chat]'); return l.scrollHeight - l.scrollTop - l.clientHeight < 80; })()`)
	b.do("to the end", chromedp.Evaluate[chromedp.Void](`(() => { const l = document.querySelector('[data-testid=chat]'); l.scrollTop = l.scrollHeight; })()`))
	b.shot("phone")
	check("streaming at 390×844", true)
	b.do("open the side panels", chromedp.Click(chromedp.CSS(`[data-testid=toggle-side]`)))
	b.waitJS("the side panels over the chat", `getComputedStyle(document.getElementById('side-pane')).display !== 'none' && document.querySelector('[data-testid=toggle-side]').getAttribute('aria-expanded') === 'true'`)
	b.shot("phone-panels")
	b.do("Esc closes them", chromedp.KeyEvent(kb.Escape))
	b.waitJS("the panels folded", `getComputedStyle(document.getElementById('side-pane')).display === 'none'`)
	b.do("Esc cancels the turn", chromedp.KeyEvent(kb.Escape))
	b.waitJS("the turn cancelled", `document.querySelector('[data-testid=status]').dataset.state === 'idle'`)
	check("after Esc at 390×844", false)
	b.noExceptions()
}

// shown is the user's last message on the page: its text and its first
// chip.
type shown struct{ Text, Chip string }

const shownJS = `(() => { const all = document.querySelectorAll('[data-testid=history-user],[data-testid=user-message]'); const m = all[all.length - 1]; const c = m.querySelector('[data-testid=attachment]'); return { Text: m.textContent, Chip: c ? c.textContent : '' }; })()`

// TestE2EBrowserLandingTakesTheFirstMessage: on a server with no session
// the composer is ready: the first message typed, with no click, starts a
// session in the served workspace and goes to the model; the session's
// title is the words typed (plan mode's note and an attached file's block
// never show); ↑ recalls the prompt, also one typed in the chat earlier;
// after a reload the attached file is a chip, not its block.
func TestE2EBrowserLandingTakesTheFirstMessage(t *testing.T) {
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		return providertest.Turn{Text: "read it"}
	}))
	if err := os.WriteFile(filepath.Join(e.work, "notes.txt"), []byte("the notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The chat keeps what is typed in it here.
	if err := session.AppendPrompt(session.PromptsPath(e.home, e.work), "typed in the chat before"); err != nil {
		t.Fatal(err)
	}
	srv := e.browserServe(t)
	b := newBrowserTab(t)
	b.do("open the page", chromedp.Navigate(srv.url+"/?token="+srv.token), chromedp.WaitVisible(chromedp.CSS(`[data-testid=session-list][data-loaded=true]`)))
	b.waitJS("the composer ready and focused", `(() => { const c = document.querySelector('[data-testid=composer]'); return !c.disabled && document.activeElement === c; })()`)
	b.shot("landing")
	b.do("type the first message", chromedp.KeyEvent("please look at @notes.txt now"), chromedp.KeyEvent(kb.Enter))
	b.waitJS("the answer", `[...document.querySelectorAll('[data-testid=assistant-message]')].some((a) => a.textContent.includes('read it')) && document.querySelector('[data-testid=status]').dataset.state === 'idle'`)
	reqs := e.srv.Requests()
	if last := reqs[len(reqs)-1].LastUser(); !strings.Contains(last, `<file path="notes.txt">`) || !strings.HasSuffix(last, "please look at @notes.txt now") {
		t.Errorf("the model got %q", last)
	}
	b.waitJS("the session titled with the words typed", `document.querySelector('[data-testid=session-item].current .s-title').textContent === 'please look at @notes.txt now'`)
	v := pageEval[shown](b, shownJS)
	if v.Chip != "@notes.txt" || strings.Contains(v.Text, "<file") || !strings.Contains(v.Text, "please look at @notes.txt now") {
		t.Errorf("the message shows %+v, want a chip @notes.txt and the words typed", v)
	}

	b.do("↑ once", chromedp.KeyEvent(kb.ArrowUp))
	b.waitJS("the last prompt recalled", `document.querySelector('[data-testid=composer]').value === 'please look at @notes.txt now'`)
	b.do("↑ again", chromedp.KeyEvent(kb.ArrowUp))
	b.waitJS("the chat's prompt recalled", `document.querySelector('[data-testid=composer]').value === 'typed in the chat before'`)
	b.do("↓ twice", chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown))
	b.waitJS("back to the empty box", `document.querySelector('[data-testid=composer]').value === ''`)

	b.do("reload", chromedp.Reload())
	b.waitJS("the message again", `document.querySelectorAll('[data-testid=history-user],[data-testid=user-message]').length === 1`)
	b.shot("reloaded")
	if v := pageEval[shown](b, shownJS); v.Chip != "@notes.txt" || strings.Contains(v.Text, "<file") || !strings.Contains(v.Text, "please look at @notes.txt now") {
		t.Errorf("the reloaded message shows %+v, want a chip @notes.txt and the words typed", v)
	}
	b.noExceptions()
}
