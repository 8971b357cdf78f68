package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"reasonix/core/provider/providertest"
)

// TestE2ETUIResizeLeavesNoCopies: narrowing and widening the terminal
// while a fleet panel is drawn leaves one panel on the screen and none of
// its rows behind in the scrollback, whose every block stays, once, drawn
// at the new width. tmux rewraps its rows on a resize and pushes the top
// ones into the scrollback, as most terminals do.
func TestE2ETUIResizeLeavesNoCopies(t *testing.T) {
	t.Parallel()
	release, free := heldUntil(t)
	e := newE2E(t, providertest.WithResponder(func(req providertest.Request) providertest.Turn {
		if isSubagent(req) {
			select {
			case <-release:
			case <-time.After(tuiWait):
			}
			return providertest.Turn{Text: "done with " + req.FirstUser()}
		}
		if len(toolResults(req)) == 0 {
			return providertest.Turn{ToolCalls: []providertest.ToolCall{{ID: "fan", Name: "fleet", Arguments: fleetArgs(6, nil)}}}
		}
		return providertest.Turn{Text: "The fleet came back."}
	}))
	e.writeConfig("\n[agent]\nmax_subagent_concurrency = 6\n")
	m := openTUISized(t, e, 160, 40)
	const prompt = "fan out over the six tasks please"
	m.send(prompt)
	m.waitFor("the fleet's approval", func(s string) bool { return strings.Contains(s, "[y] Allow once") })
	m.typeText("y")
	// The panel's header, and the running call's card at the top of the
	// chat's live region.
	const header, card = "Fleet  6 tasks", "fleet  6 tasks: task 1"
	m.waitFor("the fleet panel", func(s string) bool {
		rows := map[int]string{}
		fleetRows(s, rows)
		return strings.Count(s, header) == 1 && len(rows) == 6
	})
	drawnOnce := func(all string) bool {
		return strings.Count(all, header) == 1 && strings.Count(all, card) == 1 && strings.Count(all, prompt) == 1 &&
			len(fleetRow.FindAllString(all, -1)) == 6
	}
	for _, w := range []int{120, 90, 140, 70, 160} {
		if out, err := m.run("resize-window", "-t", m.target, "-x", strconv.Itoa(w), "-y", "40"); err != nil {
			t.Fatalf("resize to %d: %v\n%s", w, err, out)
		}
		// The selected row is as wide as the panel, the panel as the
		// terminal: once it is, the chat has drawn at the new width.
		m.waitOn(m.scrollback, "the chat drawn again at width "+strconv.Itoa(w), func(all string) bool {
			return selectedWidth(all) == w && drawnOnce(all)
		})
	}
	// Nothing is drawn late: a second look finds the same.
	if all := m.scrollback(); !drawnOnce(all) {
		t.Errorf("after the last resize the scrollback has copies:\n%s", all)
	}
	free()
	m.waitText("The fleet came back.")
	m.quit()
}

// selectedWidth is the width of the fleet panel's selected row, -1 when
// there is not exactly one.
func selectedWidth(all string) int {
	w, n := -1, 0
	for _, l := range strings.Split(all, "\n") {
		if strings.HasPrefix(l, "> ") && fleetRow.MatchString(l) {
			w, n = utf8.RuneCountInString(l), n+1
		}
	}
	if n != 1 {
		return -1
	}
	return w
}
