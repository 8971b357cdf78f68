package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"reasonix/core/provider/providertest"
)

// These tests run the real binary as `reasonix serve` against the model
// fake and drive the page it serves in headless Chromium, as a user would:
// sign in with the token, start a session, type, click.

// browserSignedIn starts serve for e, opens the page in a fresh browser, signs in
// with the token (after one wrong try) and starts a new session.
func browserSignedIn(t *testing.T, e *e2e) (*browserServer, *browserTab) {
	t.Helper()
	s := e.browserServe(t)
	b := newBrowserTab(t)
	b.do("open the page", chromedp.Navigate(s.url+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=login-form]`)))
	b.shot("login")
	b.do("a wrong token", chromedp.SendKeys(chromedp.CSS(`[data-testid=login-input]`), "not-the-token"), chromedp.Click(chromedp.CSS(`[data-testid=login-submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=login-error]`)))
	if msg := pageEval[string](b, `document.querySelector('[data-testid=login-error]').textContent`); !strings.Contains(msg, "not accepted") {
		t.Errorf("wrong token message = %q", msg)
	}
	b.do("sign in", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid=login-input]').value = ''`), chromedp.SendKeys(chromedp.CSS(`[data-testid=login-input]`), s.token),
		chromedp.Click(chromedp.CSS(`[data-testid=login-submit]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=session-list][data-loaded=true]`)))
	b.do("new session", chromedp.Click(chromedp.CSS(`[data-testid=new-session]`)))
	b.waitJS("the session to open", `!document.querySelector('[data-testid=composer]').disabled && document.querySelector('[data-testid=session-item].current') !== null`)
	b.shot("new-session")
	return s, b
}

// TestE2EBrowserTokenAddress: opening the address with ?token= signs in
// and drops the token from the address bar; signing out brings the login
// form back, also after a reload.
func TestE2EBrowserTokenAddress(t *testing.T) {
	e := newE2E(t)
	s := e.browserServe(t)
	b := newBrowserTab(t)
	b.do("open the token address", chromedp.Navigate(s.url+"/?token="+s.token), chromedp.WaitVisible(chromedp.CSS(`[data-testid=new-session]`)))
	b.shot("signed-in")
	if loc := pageEval[string](b, `location.href`); strings.Contains(loc, "token") {
		t.Errorf("the address still holds the token: %s", loc)
	}
	b.do("sign out", chromedp.Click(chromedp.CSS(`[data-testid=logout]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=login-form]`)))
	b.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`[data-testid=login-form]`)))
	b.shot("signed-out")
	if n := pageEval[int](b, `fetch('/api/sessions').then((r) => r.status)`); n != 401 {
		t.Errorf("after signing out /api/sessions answers %d", n)
	}
	b.noExceptions()
}

// TestE2EBrowserPasswordLogin: in password mode the form asks for the
// password, refuses a wrong one and signs in with the right one.
func TestE2EBrowserPasswordLogin(t *testing.T) {
	e := newE2E(t)
	s := e.browserServe(t, "--auth", "password", "--password", "correct horse battery")
	b := newBrowserTab(t)
	b.do("open the page", chromedp.Navigate(s.url+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=login-form]`)))
	if label := pageEval[string](b, `document.getElementById('login-label').textContent`); label != "Password" {
		t.Errorf("login label = %q", label)
	}
	b.do("a wrong password", chromedp.SendKeys(chromedp.CSS(`[data-testid=login-input]`), "wrong horse"+kb.Enter), chromedp.WaitVisible(chromedp.CSS(`[data-testid=login-error]`)))
	b.shot("wrong-password")
	b.do("the password", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid=login-input]').value = ''`),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=login-input]`), "correct horse battery"+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=session-list][data-loaded=true]`)))
	b.shot("signed-in")
	if n := pageEval[int](b, `fetch('/api/sessions').then((r) => r.status)`); n != 200 {
		t.Errorf("signed in, /api/sessions answers %d", n)
	}
	b.noExceptions()
}

// prompt types text into the composer and sends it with Enter.
func (b *browserTab) prompt(text string) {
	b.t.Helper()
	b.do("type "+text, chromedp.SendKeys(chromedp.CSS(`[data-testid=composer]`), text+kb.Enter))
	b.waitJS("the prompt to be sent", `document.querySelector('[data-testid=composer]').value === ''`)
}

// TestE2EBrowserStreamedAnswer: a prompt typed in the page reaches the
// model and its answer shows while it streams (the fake stalls mid-reply
// until the turn is cancelled from the page); the next answer is rendered
// as Markdown, its reasoning collapsed, and HTML in the model's text stays
// text.
func TestE2EBrowserStreamedAnswer(t *testing.T) {
	e := newE2E(t)
	partial := "This reply stops half-way and waits."
	answer := "Here is **the answer**: `42`.\n\n```\nx := <b>1</b>\n```\n\n- one\n- two\n\n<img src=x onerror=\"window.__pwned=true\"><script>window.__pwned=true</script>"
	e.srv.Push(
		providertest.Turn{Text: partial, ChunkBytes: 4, Stall: true, FaultAfterEvents: 4},
		providertest.Turn{Reasoning: "Let me think about this.", Text: answer, ChunkBytes: 5},
	)
	_, b := browserSignedIn(t, e)

	b.prompt("start streaming")
	b.waitJS("part of the answer", `(() => { const a = document.querySelector('[data-testid=assistant-message] [data-testid=answer]'); return a && a.textContent.length > 0 && document.querySelector('[data-testid=status]').dataset.state === 'running'; })()`)
	b.shot("streaming")
	got := pageEval[string](b, `document.querySelector('[data-testid=assistant-message] [data-testid=answer]').textContent`)
	if got == partial || !strings.HasPrefix(partial, got) {
		t.Errorf("while streaming the page shows %q, want a proper start of %q", got, partial)
	}
	b.do("cancel the turn", chromedp.Click(chromedp.CSS(`[data-testid=cancel-turn]`)))
	b.waitJS("the cancelled turn", `document.querySelector('[data-testid=status]').dataset.state === 'idle' && [...document.querySelectorAll('[data-testid=notice]')].some((n) => n.textContent.includes('cancelled'))`)

	// Shift+Enter breaks the line; Enter sends.
	b.do("type two lines", chromedp.SendKeys(chromedp.CSS(`[data-testid=composer]`), "what is"), chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierShift)))
	if v := pageEval[string](b, `document.querySelector('[data-testid=composer]').value`); v != "what is\n" {
		t.Errorf("after Shift+Enter the composer holds %q", v)
	}
	b.prompt("the answer?")
	b.waitJS("the streamed answer", `(() => { const s = document.querySelector('[data-testid=assistant-message]:last-of-type [data-testid=answer] strong'); return s && s.textContent === 'the answer' && document.querySelector('[data-testid=status]').dataset.state === 'idle'; })()`)
	b.shot("answer")
	type view struct {
		User, Code, Text string
		Items, Bad       int
		ReasoningOpen    bool
		Reasoning        string
		Pwned            bool
	}
	v := pageEval[view](b, `(() => {
  const log = document.querySelector('[data-testid=chat]');
  const msgs = log.querySelectorAll('[data-testid=assistant-message]');
  const msg = msgs[msgs.length - 1];
  const r = msg.querySelector('[data-testid=reasoning]');
  const users = log.querySelectorAll('[data-testid=user-message]');
  return {
    User: users[users.length - 1].textContent,
    Code: msg.querySelector('pre code').textContent,
    Text: msg.querySelector('[data-testid=answer]').textContent,
    Items: msg.querySelectorAll('li').length,
    Bad: log.querySelectorAll('img,script,iframe,svg,[onerror]').length,
    ReasoningOpen: r.open, Reasoning: r.textContent,
    Pwned: window.__pwned === true,
  };
})()`)
	if v.User != "what is\nthe answer?" {
		t.Errorf("user message = %q", v.User)
	}
	if v.Code != "x := <b>1</b>" || v.Items != 2 {
		t.Errorf("code block %q, %d list items", v.Code, v.Items)
	}
	if v.Bad != 0 || v.Pwned || !strings.Contains(v.Text, `<img src=x onerror="window.__pwned=true"><script>`) {
		t.Errorf("model HTML was not kept as text: %d elements, ran %v, text %q", v.Bad, v.Pwned, v.Text)
	}
	if v.ReasoningOpen || !strings.Contains(v.Reasoning, "Let me think about this.") {
		t.Errorf("reasoning open %v, text %q", v.ReasoningOpen, v.Reasoning)
	}
	if reqs := e.srv.Requests(); len(reqs) != 2 || reqs[0].LastUser() != "start streaming" || reqs[1].LastUser() != "what is\nthe answer?" {
		t.Errorf("the model got %d requests", len(reqs))
	}
	b.noExceptions()
}

// TestE2EBrowserApproveAndDeny: a write asked for in the page is approved
// once and the file is written; a second is denied, the card says so and
// the file never appears.
func TestE2EBrowserApproveAndDeny(t *testing.T) {
	e := newE2E(t)
	e.srv.Push(
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "w1", Name: "write_file", Arguments: `{"path":"approved.txt","content":"written from the browser"}`}}},
		providertest.Turn{Text: "Wrote approved.txt."},
		providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "w2", Name: "write_file", Arguments: `{"path":"denied.txt","content":"must not exist"}`}}},
		providertest.Turn{Text: "Understood, not writing it."},
	)
	_, b := browserSignedIn(t, e)

	b.prompt("write approved.txt")
	b.do("the approval", chromedp.WaitVisible(chromedp.CSS(`[data-testid=approval][data-tool=write_file]`)))
	b.shot("approval-asked")
	type card struct {
		Args, Preview, Added string
		Buttons              []string
	}
	// The write shows the new file as a diff, as the chat does; the raw
	// arguments are folded under it.
	b.waitJS("the write's preview", `document.querySelector('[data-testid=approval] [data-testid=approval-preview]') !== null`)
	c := pageEval[card](b, `(() => { const c = document.querySelector('[data-testid=approval]'); const p = c.querySelector('[data-testid=approval-preview]'); return { Args: c.querySelector('[data-testid=approval-args]').textContent, Preview: p.textContent, Added: [...p.querySelectorAll('.d-add')].map((x) => x.textContent).join(''), Buttons: [...c.querySelectorAll('button')].map((x) => x.dataset.testid) }; })()`)
	if !strings.Contains(c.Args, "approved.txt") || strings.Join(c.Buttons, ",") != "approve-once,approve-session,approve-always,approve-deny" {
		t.Errorf("approval card = %+v", c)
	}
	if !strings.Contains(c.Preview, "+++ b/approved.txt") || c.Added != "+written from the browser\n" {
		t.Errorf("the write's preview = %q, added lines %q", c.Preview, c.Added)
	}
	b.do("approve once", chromedp.Click(chromedp.CSS(`[data-testid=approval] [data-testid=approve-once]`)))
	b.waitJS("the write to finish", `(() => { const c = document.querySelector('[data-testid=tool-card][data-call=w1]'); return c && c.dataset.state === 'done' && !document.querySelector('[data-testid=approval]') && document.querySelector('[data-testid=status]').dataset.state === 'idle'; })()`)
	b.shot("approved")
	if got, err := os.ReadFile(filepath.Join(e.work, "approved.txt")); err != nil || string(got) != "written from the browser" {
		t.Fatalf("approved.txt = %q, %v", got, err)
	}
	subject := pageEval[string](b, `document.querySelector('[data-testid=tool-card][data-call=w1] .t-subject').textContent`)
	if subject != "approved.txt" {
		t.Errorf("tool card subject = %q", subject)
	}

	b.prompt("write denied.txt")
	b.do("the second approval", chromedp.WaitVisible(chromedp.CSS(`[data-testid=approval][data-tool=write_file]`)))
	b.do("deny", chromedp.Click(chromedp.CSS(`[data-testid=approval] [data-testid=approve-deny]`)))
	b.waitJS("the denial", `(() => { const c = document.querySelector('[data-testid=tool-card][data-call=w2]'); return c && c.dataset.state === 'blocked' && document.querySelector('[data-testid=status]').dataset.state === 'idle'; })()`)
	b.shot("denied")
	state := pageEval[string](b, `document.querySelector('[data-testid=tool-card][data-call=w2]').textContent`)
	if !strings.Contains(state, "denied") || !strings.Contains(state, "Blocked") {
		t.Errorf("denied card reads %q", state)
	}
	if _, err := os.Stat(filepath.Join(e.work, "denied.txt")); !os.IsNotExist(err) {
		t.Fatalf("denied.txt exists (err %v): the denied write ran", err)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 4 || !strings.HasPrefix(reqs[3].Last().Content, "Blocked: denied by the user") {
		t.Fatalf("the model did not see the denial: %d requests", len(reqs))
	}
	b.noExceptions()
}

// TestE2EBrowserCloseAndResume: a session closed from the list stays
// listed as saved; resuming it shows its conversation from the transcript,
// carries on with it, and a reload shows each message once — the part
// before the resume from the transcript, the rest replayed from the bus.
func TestE2EBrowserCloseAndResume(t *testing.T) {
	e := newE2E(t)
	e.srv.Push(providertest.Turn{Text: "the first answer"}, providertest.Turn{Text: "the answer after resuming"})
	_, b := browserSignedIn(t, e)
	b.prompt("first question")
	b.waitJS("the first answer", `[...document.querySelectorAll('[data-testid=assistant-message]')].some((a) => a.textContent.includes('the first answer')) && document.querySelector('[data-testid=status]').dataset.state === 'idle'`)
	id := pageEval[string](b, `document.querySelector('[data-testid=session-item].current').dataset.id`)
	item := `[data-testid=session-item][data-id=` + cssString(id) + `]`

	b.do("close the session", chromedp.Click(chromedp.CSS(item+` [data-testid=close-session]`)))
	b.waitJS("the session saved", `(() => { const i = document.querySelector(`+jsLiteral(item)+`); return i && i.dataset.live === 'false' && document.querySelector('[data-testid=status]').dataset.state === 'closed' && document.querySelector('[data-testid=composer]').disabled; })()`)
	b.shot("closed")

	b.do("resume it", chromedp.Click(chromedp.CSS(item+` [data-testid=resume-session]`)))
	b.waitJS("the resumed session", `!document.querySelector('[data-testid=composer]').disabled && document.querySelectorAll('[data-testid=history-user]').length === 1`)
	b.shot("resumed")
	type chat struct {
		HistoryUser, HistoryAnswer, User, Answer []string
	}
	read := func() chat {
		return pageEval[chat](b, `(() => {
  const texts = (sel) => [...document.querySelectorAll(sel)].map((e) => e.textContent.trim());
  return {
    HistoryUser: texts('[data-testid=history-user]'), HistoryAnswer: texts('[data-testid=history-assistant]'),
    User: texts('[data-testid=user-message]'), Answer: texts('[data-testid=assistant-message] [data-testid=answer]'),
  };
})()`)
	}
	if c := read(); fmt.Sprint(c) != fmt.Sprint(chat{[]string{"first question"}, []string{"the first answer"}, []string{}, []string{}}) {
		t.Errorf("resumed page shows %+v", c)
	}

	b.prompt("second question")
	b.waitJS("the answer after resuming", `[...document.querySelectorAll('[data-testid=assistant-message]')].some((a) => a.textContent.includes('the answer after resuming')) && document.querySelector('[data-testid=status]').dataset.state === 'idle'`)
	b.do("reload", chromedp.Reload())
	b.waitJS("the reloaded chat", `document.querySelectorAll('[data-testid=history-user]').length + document.querySelectorAll('[data-testid=user-message]').length >= 2 && document.querySelector('[data-testid=status]').dataset.state === 'idle'`)
	b.shot("reloaded")
	want := chat{[]string{"first question"}, []string{"the first answer"}, []string{"second question"}, []string{"the answer after resuming"}}
	if c := read(); fmt.Sprint(c) != fmt.Sprint(want) {
		t.Errorf("reloaded page shows %+v, want %+v", c, want)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "first question") {
		t.Fatalf("the resumed session did not carry the conversation on (%d requests)", len(reqs))
	}
	b.noExceptions()
}

// TestE2EBrowserLaggedRebuild: an answer streamed in more pieces than the
// server's event history keeps. A page loaded afterwards asks for the whole
// history, is told it lags, and rebuilds from the transcript: the answer
// shows once and whole.
func TestE2EBrowserLaggedRebuild(t *testing.T) {
	e := newE2E(t)
	long := strings.Repeat("word ", 2400) + "THE END"
	e.srv.Push(providertest.Turn{Text: long, ChunkBytes: 1})
	_, b := browserSignedIn(t, e)
	b.prompt("say a lot")
	b.waitJS("the long answer", `document.querySelector('[data-testid=status]').dataset.state === 'idle' && [...document.querySelectorAll('[data-testid=answer]')].some((a) => a.textContent.includes('THE END'))`)
	b.do("reload", chromedp.Reload())
	b.waitJS("the rebuilt chat", `Number(document.querySelector('[data-testid=chat]').dataset.rebuilds || 0) >= 1 && document.querySelector('[data-testid=status]').dataset.state === 'idle' && document.querySelectorAll('[data-testid=history-assistant]').length > 0`)
	b.shot("rebuilt")
	type view struct {
		Users, Answers []string
	}
	v := pageEval[view](b, `(() => {
  const texts = (sel) => [...document.querySelectorAll(sel)].map((e) => e.textContent.trim());
  return { Users: texts('[data-testid=history-user], [data-testid=user-message]'), Answers: texts('[data-testid=history-assistant], [data-testid=assistant-message] [data-testid=answer]') };
})()`)
	if fmt.Sprint(v.Users) != "[say a lot]" || len(v.Answers) != 1 || v.Answers[0] != long {
		t.Errorf("after the rebuild: users %q, %d answers (first %d chars)", v.Users, len(v.Answers), len(strings.Join(v.Answers, "")))
	}
	b.noExceptions()
}

// TestE2EBrowserGoalMCPAndPosture: the side panel shows the configured
// MCP server ready with its tools; a goal started from the goal form runs
// two goal turns and ends complete with the model's summary; the posture
// switch changes the session's posture.
func TestE2EBrowserGoalMCPAndPosture(t *testing.T) {
	e := newE2E(t, providertest.WithResponder(func(r providertest.Request) providertest.Turn {
		if r.Last().Role != "user" {
			return providertest.Turn{Text: "noted"}
		}
		turns := 0
		for _, m := range r.Messages {
			if m.Role == "user" && strings.HasPrefix(m.Content, "[Active goal") {
				turns++
			}
		}
		if turns <= 1 {
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "goal", Arguments: `{"status":"in_progress","summary":"looked around"}`}}}
		}
		return providertest.Turn{ToolCalls: []providertest.ToolCall{{Name: "goal", Arguments: `{"status":"complete","summary":"the **objective** is met"}`}}}
	}))
	e.writeConfig(fmt.Sprintf("\n[[plugins]]\nname = \"example\"\ncommand = %q\n", pluginBinary(t)))
	_, b := browserSignedIn(t, e)

	b.waitJS("the MCP server", `(() => { const m = document.querySelector('[data-testid=mcp-server][data-server=example]'); return m && m.dataset.state === 'ready' && m.textContent.includes('2 tools'); })()`)

	b.do("start a goal", chromedp.SendKeys(chromedp.CSS(`[data-testid=goal-input]`), "tidy the workspace"), chromedp.Click(chromedp.CSS(`[data-testid=goal-start]`)))
	b.waitJS("the goal's end", `(() => { const s = document.querySelector('[data-testid=goal-status]'); return s && s.dataset.status === 'complete' && document.querySelector('[data-testid=status]').dataset.state === 'idle'; })()`)
	b.shot("goal-complete")
	type goalView struct{ Objective, Summary, Bold, Meta, All string }
	g := pageEval[goalView](b, `(() => { const s = document.querySelector('[data-testid=goal-summary]'); return { Objective: document.querySelector('[data-testid=goal-objective]').textContent, Summary: s.textContent, Bold: s.querySelector('strong').textContent, Meta: document.querySelector('[data-testid=goal-status]').parentElement.textContent, All: document.querySelector('[data-testid=goal]').textContent }; })()`)
	if g.Objective != "tidy the workspace" || g.Summary != "the objective is met" || g.Bold != "objective" || !strings.Contains(g.Meta, "turn 2") || strings.Contains(g.All, "null") {
		t.Errorf("goal panel = %+v", g)
	}
	if n := pageEval[int](b, `[...document.querySelectorAll('[data-testid=tool-card][data-tool=goal] .t-subject')].filter((s) => s.textContent.startsWith('complete: ')).length`); n != 1 {
		t.Errorf("%d goal cards say complete", n)
	}

	b.do("switch posture", chromedp.SetValue(chromedp.CSS(`[data-testid=posture]`), "auto"), chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid=posture]').dispatchEvent(new Event('change'))`))
	// The page shows what the session says, so a reload proves the change
	// reached it.
	b.waitJS("the posture change", `document.querySelector('[data-testid=posture]').value === 'auto'`)
	b.do("reload", chromedp.Reload())
	b.waitJS("the posture after a reload", `!document.querySelector('[data-testid=posture]').disabled && document.querySelector('[data-testid=posture]').value === 'auto'`)
	b.shot("posture-auto")
	b.noExceptions()
}

// pageFleetRow is one row of the page's fleet table.
type pageFleetRow struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Status string `json:"status"`
	Tokens string `json:"tokens"`
}

const readPageRows = `[...document.querySelectorAll('[data-testid=fleet-row]')].map((r) => ({id: r.dataset.task, state: r.dataset.state, status: r.dataset.status, tokens: r.querySelector('[data-field=tokens]').textContent}))`

// TestE2EBrowserFleetSurvivesReload watches a 12-task fleet from the page.
// Half its tasks are held by the model fake, so the fleet is mid-way
// (tasks done, running and queued) when the page reloads: the reloaded page
// shows the same rows. A queued task is cancelled from its row, the held
// ones are let go, and every row ends, as the fleet's result says.
func TestE2EBrowserFleetSurvivesReload(t *testing.T) {
	gate := make(chan struct{})
	held := make(chan string, 12)
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if !isSubagent(req) {
			if len(toolResults(req)) == 0 {
				return providertest.Turn{Text: "Fanning out.", ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet", Arguments: fleetArgs(12, nil)}}}
			}
			return providertest.Turn{Text: "parent summarised the fleet"}
		}
		task := req.FirstUser()
		var n int
		if _, err := fmt.Sscanf(task, "task %d", &n); err == nil && n > 6 {
			held <- task
			<-gate // released by the test, or by its cleanup
		}
		return providertest.Turn{Text: "done with " + task}
	}))
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release) // before the fake closes: its handlers must return
	e.writeConfig("max_retries = 0\n\n[agent]\nmax_subagent_concurrency = 3\n")
	_, b := browserSignedIn(t, e)

	b.prompt("fan out")
	// Starting a fleet is itself a call that asks.
	b.do("the fleet's approval", chromedp.WaitVisible(chromedp.CSS(`[data-testid=approval][data-tool=fleet]`)))
	b.do("approve the fleet", chromedp.Click(chromedp.CSS(`[data-testid=approval] [data-testid=approve-once]`)))
	// The run slots are all taken by held tasks: nothing moves until the
	// test lets them go.
	deadline := time.After(browserWait)
	for range 3 {
		select {
		case <-held:
		case <-deadline:
			b.shot("failed-held")
			t.Fatalf("three held tasks did not reach the model")
		}
	}
	seen := map[string]bool{}
	for _, r := range e.srv.Requests() {
		if isSubagent(r) {
			seen[r.FirstUser()] = true
		}
	}
	done, queued := len(seen)-3, 12-len(seen)
	counts := func(state string) string {
		return fmt.Sprintf(`[...document.querySelectorAll('[data-testid=fleet-row][data-state=%s]')].length`, state)
	}
	steady := fmt.Sprintf(`document.querySelectorAll('[data-testid=fleet-row]').length === 12 && %s === 3 && %s === %d && %s === %d`, counts("running"), counts("done"), done, counts("queued"), queued)
	b.waitJS("the fleet mid-way", steady)
	b.shot("fleet-midway")
	before := pageEval[[]pageFleetRow](b, readPageRows)
	for _, r := range before {
		if r.State == "done" && (r.Status != "ok" || r.Tokens == "0") {
			t.Errorf("finished row %+v", r)
		}
	}
	if n := pageEval[int](b, `document.querySelectorAll('[data-testid=tool-card][data-tool=fleet][data-state=running]').length`); n != 1 {
		t.Errorf("%d running fleet cards", n)
	}

	b.do("reload", chromedp.Reload())
	b.waitJS("the rows after the reload", steady+` && document.querySelector('[data-testid=tool-card][data-tool=fleet]') !== null`)
	b.shot("fleet-reloaded")
	after := pageEval[[]pageFleetRow](b, readPageRows)
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("rows after the reload:\n%+v\nbefore:\n%+v", after, before)
	}

	// Cancel the last queued task from its row.
	var victim string
	for _, r := range after {
		if r.State == "queued" {
			victim = r.ID
		}
	}
	b.do("cancel "+victim, chromedp.Click(chromedp.CSS(`[data-testid=fleet-row][data-task=`+cssString(victim)+`] [data-testid=cancel-task]`)))
	b.waitJS("the cancelled row", `document.querySelector('[data-testid=fleet-row][data-task=`+cssString(victim)+`]').dataset.status === 'cancelled'`)

	release()
	b.waitJS("the fleet's end", `document.querySelectorAll('[data-testid=fleet-row][data-state=done]').length === 12 && [...document.querySelectorAll('[data-testid=answer]')].some((a) => a.textContent.includes('parent summarised the fleet'))`)
	b.shot("fleet-done")
	final := pageEval[[]pageFleetRow](b, readPageRows)
	for _, r := range final {
		want := "ok"
		if r.ID == victim {
			want = "cancelled"
		}
		if r.Status != want {
			t.Errorf("row %s ended %q, want %q", r.ID, r.Status, want)
		}
	}
	var last providertest.Request
	for _, r := range e.srv.Requests() {
		if !isSubagent(r) {
			last = r
		}
	}
	if res := toolResults(last); len(res) != 1 || !strings.HasPrefix(res[0].Content, "12 tasks: 11 ok, 0 failed, 0 timed out, 1 cancelled") {
		t.Errorf("fleet result = %+v", res)
	}
	if n := pageEval[int](b, `document.querySelectorAll('[data-testid=cancel-task]').length`); n != 0 {
		t.Errorf("%d cancel buttons left on finished rows", n)
	}
	b.noExceptions()
}
