package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"reasonix/tui/panel"
)

// The panels of package panel behind the model's small interfaces.

func newFleet(now func() time.Time) fleetPanel {
	f := panel.NewFleet()
	f.SetClock(now)
	return fleetAdapter{f}
}

func newGoal(now func() time.Time) goalPanel {
	g := panel.NewGoal()
	g.SetClock(now)
	return g
}

func newMenu() completionMenu { return menuAdapter{panel.NewMenu()} }

type fleetAdapter struct{ *panel.Fleet }

func (f fleetAdapter) Key(k tea.KeyPressMsg) (bool, string, string) {
	handled, act := f.Fleet.Key(k)
	return handled, act.CancelTask, act.Message
}

func (f fleetAdapter) FoldDone(fleet string) (string, bool) {
	s, ok := f.Fleet.FoldDone(fleet)
	return s.String(), ok
}

type menuAdapter struct{ m *panel.Menu }

func (a menuAdapter) SetItems(items []menuItem) {
	out := make([]panel.Item, len(items))
	for i, it := range items {
		out[i] = panel.Item{Label: it.Label, Detail: it.Detail, Value: it.Value, Dir: it.Dir}
	}
	a.m.SetItems(out)
}

func (a menuAdapter) Move(delta int) { a.m.Move(delta) }

func (a menuAdapter) Selected() (menuItem, bool) {
	it, ok := a.m.Selected()
	return menuItem{Label: it.Label, Detail: it.Detail, Value: it.Value, Dir: it.Dir}, ok
}

func (a menuAdapter) View(width, rows int) string { return a.m.View(width, rows) }
func (a menuAdapter) Len() int                    { return a.m.Len() }
