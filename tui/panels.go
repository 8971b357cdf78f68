package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"reasonix/actors"
)

// The chat's panels until the panel package is wired in: plain lists.

func newFleet() fleetPanel { return &taskList{} }
func newGoal() goalPanel   { return &goalLine{} }
func newMenu() completionMenu {
	return &plainMenu{}
}

type taskList struct {
	ids     []string
	state   map[string]string
	focused bool
	sel     int
}

func (t *taskList) Apply(ev actors.Event) bool {
	var id, st string
	switch e := ev.(type) {
	case *actors.TaskQueued:
		id, st = e.Task, "queued"
	case *actors.TaskStarted:
		id, st = e.Task, "running"
	case *actors.TaskDone:
		id, st = e.Task, e.Status
	default:
		return false
	}
	if t.state == nil {
		t.state = map[string]string{}
	}
	if _, ok := t.state[id]; !ok {
		t.ids = append(t.ids, id)
	}
	t.state[id] = st
	return true
}

func (t *taskList) View(width, height int) string {
	lines := []string{fmt.Sprintf("fleet: %d tasks", len(t.ids))}
	for i, id := range t.ids {
		if len(lines) >= height {
			break
		}
		line := fmt.Sprintf("  %s %s", id, t.state[id])
		if t.focused && i == t.sel {
			line = selectStyle.Render(line)
		}
		lines = append(lines, truncateWidth(line, width))
	}
	return strings.Join(lines, "\n")
}

func (t *taskList) Key(k tea.KeyPressMsg) (bool, string) {
	switch k.String() {
	case "up":
		t.sel = max(t.sel-1, 0)
	case "down":
		t.sel = min(t.sel+1, max(len(t.ids)-1, 0))
	case "x":
		if t.sel < len(t.ids) {
			return true, t.ids[t.sel]
		}
	default:
		return false, ""
	}
	return true, ""
}

func (t *taskList) Len() int      { return len(t.ids) }
func (t *taskList) Focused() bool { return t.focused }
func (t *taskList) Focus()        { t.focused = true }
func (t *taskList) Blur()         { t.focused = false }

type goalLine struct{ objective string }

func (g *goalLine) Apply(ev actors.Event) bool {
	switch e := ev.(type) {
	case *actors.GoalStarted:
		g.objective = e.Objective
	case *actors.GoalEnded:
		g.objective = ""
	default:
		return false
	}
	return true
}
func (g *goalLine) Active() bool { return g.objective != "" }
func (g *goalLine) View(width int) string {
	return truncateWidth("goal: "+oneLine(g.objective, 200), width)
}

type plainMenu struct {
	items []menuItem
	sel   int
}

func (p *plainMenu) SetItems(items []menuItem) { p.items, p.sel = items, 0 }
func (p *plainMenu) Move(d int) {
	if len(p.items) > 0 {
		p.sel = (p.sel + d + len(p.items)) % len(p.items)
	}
}
func (p *plainMenu) Selected() (menuItem, bool) {
	if p.sel < len(p.items) {
		return p.items[p.sel], true
	}
	return menuItem{}, false
}
func (p *plainMenu) Len() int { return len(p.items) }
func (p *plainMenu) View(width, rows int) string {
	start := max(0, p.sel-rows+1)
	var lines []string
	for i := start; i < len(p.items) && len(lines) < rows; i++ {
		line := p.items[i].Label + "  " + dimStyle.Render(p.items[i].Detail)
		line = truncateWidth(line, width-2)
		if i == p.sel {
			line = selectStyle.Render(line)
		}
		lines = append(lines, "  "+line)
	}
	return strings.Join(lines, "\n")
}
