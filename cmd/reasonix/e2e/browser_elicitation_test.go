package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"reasonix/core/mcp/mcptest"
	"reasonix/core/provider/providertest"
)

// TestE2EBrowserElicitationForm, against
// @modelcontextprotocol/server-everything: its elicitation request is drawn
// on the page as a form of typed inputs (a choice as a select, a list of
// choices as checkboxes, an integer with its range), an empty required
// field keeps the form open, and what is filled in reaches the server as
// the schema's types: the tool's result, which echoes the answer, says so.
func TestE2EBrowserElicitationForm(t *testing.T) {
	node, script := mcptest.Everything(t)
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if len(toolResults(req)) == 0 {
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "el1", Name: "mcp__everything__trigger-elicitation-request", Arguments: `{}`}}}
		}
		return providertest.Turn{Text: "the form came back"}
	}))
	e.writeConfig(fmt.Sprintf("\n[[plugins]]\nname = \"everything\"\ncommand = %q\nargs = [%q, \"stdio\"]\n", node, script))
	_, b := browserSignedIn(t, e)
	b.waitJS("the MCP server", `(() => { const m = document.querySelector('[data-testid=mcp-server][data-server=everything]'); return m && m.dataset.state === 'ready'; })()`)

	b.prompt("ask me")
	b.waitJS("the form or the tool's approval", `document.querySelector('[data-testid=elicitation],[data-testid=approval]') !== null`)
	if pageEval[bool](b, `document.querySelector('[data-testid=elicitation]') === null`) {
		b.do("allow the tool", chromedp.Click(chromedp.CSS(`[data-testid=approval] [data-testid=approve-once]`)))
	}
	b.do("the form", chromedp.WaitVisible(chromedp.CSS(`[data-testid=elicitation] [data-testid=elicitation-form]`)))
	b.shot("elicitation-form")
	type fieldView struct {
		Name, Tag, Type string
		Options         int
	}
	fields := pageEval[[]fieldView](b, `[...document.querySelectorAll('[data-testid=elicitation-field]')].map((f) => { const i = f.querySelector('input,select'); return { name: f.dataset.field, tag: i.tagName.toLowerCase(), type: i.type, options: f.querySelectorAll('option,input[type=checkbox]').length }; })`)
	want := map[string]fieldView{
		"name":                     {Tag: "input", Type: "text"},
		"check":                    {Tag: "input", Type: "checkbox", Options: 1},
		"email":                    {Tag: "input", Type: "email"},
		"birthdate":                {Tag: "input", Type: "date"},
		"integer":                  {Tag: "input", Type: "number"},
		"titledSingleSelectEnum":   {Tag: "select", Type: "select-one", Options: 3},
		"titledMultipleSelectEnum": {Tag: "input", Type: "checkbox", Options: 3},
		"legacyTitledEnum":         {Tag: "select", Type: "select-one", Options: 5},
	}
	if len(fields) == 0 || fields[0].Name != "name" {
		t.Errorf("the required field is not first: %+v", fields)
	}
	for _, f := range fields {
		w, ok := want[f.Name]
		if !ok {
			continue
		}
		delete(want, f.Name)
		if got := (fieldView{Tag: f.Tag, Type: f.Type, Options: f.Options}); got != w {
			t.Errorf("field %s drawn as %+v, want %+v", f.Name, got, w)
		}
	}
	if len(want) != 0 {
		t.Errorf("fields missing from the form: %v (drawn %+v)", want, fields)
	}

	// Accept with the required name empty: the form stays, nothing is sent.
	b.do("accept empty", chromedp.Click(chromedp.CSS(`[data-testid=elicit-accept]`)))
	if !pageEval[bool](b, `document.querySelector('[data-testid=elicitation]') !== null`) || len(e.srv.Requests()) != 1 {
		t.Fatalf("an empty required field sent the form")
	}
	// Only blanks pass the browser's own check; the form's says what is missing.
	b.do("accept blanks",
		chromedp.SendKeys(chromedp.CSS(`[data-field=name] input`), "   "),
		chromedp.Click(chromedp.CSS(`[data-testid=elicit-accept]`)))
	if msg := pageEval[string](b, `document.querySelector('[data-testid=elicitation-error]').textContent`); !strings.Contains(msg, "is required") || len(e.srv.Requests()) != 1 {
		t.Errorf("a blank required field: error %q, %d requests; want the field named and nothing sent", msg, len(e.srv.Requests()))
	}
	b.do("clear", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-field=name] input').value = ''`))

	b.do("fill it",
		chromedp.SendKeys(chromedp.CSS(`[data-field=name] input`), "Ada Lovelace"),
		chromedp.SetValue(chromedp.CSS(`[data-field=titledSingleSelectEnum] select`), "hero-3"),
		chromedp.Click(chromedp.CSS(`[data-field=titledMultipleSelectEnum] input[value=fish-2]`)),
		chromedp.Evaluate[chromedp.Void](`(() => { const i = document.querySelector('[data-field=integer] input'); i.value = '7'; })()`))
	b.shot("elicitation-filled")
	b.do("accept", chromedp.Click(chromedp.CSS(`[data-testid=elicit-accept]`)))
	b.waitJS("the answer", `document.querySelector('[data-testid=elicitation]') === null && [...document.querySelectorAll('[data-testid=assistant-message]')].some((m) => m.textContent.includes('the form came back'))`)
	b.shot("elicitation-answered")
	res := toolResults(lastRequest(t, e))
	if len(res) != 1 {
		t.Fatalf("tool results = %+v", res)
	}
	for _, s := range []string{"Name: Ada Lovelace", `"titledSingleSelectEnum": "hero-3"`, `"fish-1",`, `"fish-2"`, `"integer": 7`, `"firstLine": "It was a dark and stormy night."`, `"check": false`} {
		if !strings.Contains(res[0].Content, s) {
			t.Errorf("the tool's result lacks %s:\n%s", s, res[0].Content)
		}
	}
	b.noExceptions()
}

// TestE2EBrowserMCPPromptMenu: once the session's MCP server is ready, the
// page's / menu lists its prompts with their arguments, as the chat's
// does, and one chosen from it goes to the session, which expands it: the
// model sees the prompt's text, not the command.
func TestE2EBrowserMCPPromptMenu(t *testing.T) {
	node, script := mcptest.Everything(t)
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		return providertest.Turn{Text: "sunny"}
	}))
	e.writeConfig(fmt.Sprintf("\n[[plugins]]\nname = \"everything\"\ncommand = %q\nargs = [%q, \"stdio\"]\n", node, script))
	_, b := browserSignedIn(t, e)
	b.waitJS("the MCP server", `(() => { const m = document.querySelector('[data-testid=mcp-server][data-server=everything]'); return m && m.dataset.state === 'ready'; })()`)

	b.do("type /mcp", chromedp.SendKeys(chromedp.CSS(`[data-testid=composer]`), "/mcp__every"))
	b.waitJS("the prompts in the menu", `[...document.querySelectorAll('[data-testid=menu-item]')].some((i) => i.dataset.value === '/mcp__everything__args-prompt')`)
	b.shot("mcp-prompt-menu")
	if d := pageEval[string](b, `[...document.querySelectorAll('[data-testid=menu-item]')].find((i) => i.dataset.value === '/mcp__everything__args-prompt').textContent`); !strings.Contains(d, "<city>") {
		t.Errorf("the menu entry %q does not show the prompt's required argument", d)
	}
	b.prompt("thing__args-prompt Paris")
	b.waitJS("the answer", `[...document.querySelectorAll('[data-testid=assistant-message]')].some((m) => m.textContent.includes('sunny'))`)
	reqs := e.srv.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].LastUser(), "weather in Paris") {
		var last string
		if len(reqs) > 0 {
			last = reqs[len(reqs)-1].LastUser()
		}
		t.Errorf("%d model requests; the last user message = %q", len(reqs), last)
	}
}
