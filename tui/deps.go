package tui

import (
	tea "charm.land/bubbletea/v2"

	"reasonix/actors/event"
)

// The panels are separate widgets (package tui/panel); the model holds
// them behind these small interfaces so the chat does not depend on how
// they draw.

// fleetPanel shows the session's subagent tasks.
type fleetPanel interface {
	Apply(event.Event) bool
	View(width, height int) string
	// Key handles a key while the panel is focused; cancel names a task
	// the user asked to stop, message one they want to write to.
	Key(tea.KeyPressMsg) (handled bool, cancel, message string)
	Len() int
	Focused() bool
	Focus()
	Blur()
	// FoldDone takes a fleet whose tasks have all ended out of the panel
	// and says what it came to in one line.
	FoldDone(fleet string) (summary string, ok bool)
	// Tasks lists the background tasks (/tasks); Addressed reads
	// "@<task> <message>" to one of the session's tasks.
	Tasks() string
	Addressed(input string) (to, msg string, ok bool)
}

// goalPanel shows the active goal.
type goalPanel interface {
	Apply(event.Event) bool
	Active() bool
	View(width int) string
}

// menuItem is one autocomplete entry: Label is shown, Value inserted.
type menuItem struct {
	Label, Detail, Value string
	Dir                  bool
}

// completionMenu is the autocomplete list above the composer.
type completionMenu interface {
	SetItems([]menuItem)
	Move(delta int)
	Selected() (menuItem, bool)
	View(width, rows int) string
	Len() int
}
