package tea

// reasonix: this file is not upstream's; third_party/bubbletea/PATCHES.md
// says why it exists.

import (
	"fmt"
	"io"

	"github.com/charmbracelet/x/ansi"
)

// EraseAll is a command that erases the terminal's screen and its
// scrollback and draws the frame again at the top of the screen. Whatever
// the program printed above the frame is gone with it: the program prints
// it again, after this command, to have it back.
//
// It exists for a terminal whose width changed. A terminal that rewraps
// its rows on a resize (tmux, VTE, kitty, iTerm2 and most others) spreads
// an inline frame over more rows than it had and may push its top rows
// into the scrollback, where no cursor movement reaches: erasing only the
// frame leaves copies of it behind. Erasing everything and printing again
// at the new width is the one way that leaves none on every terminal.
//
// In the alternate screen it only clears the screen, as ClearScreen does.
func EraseAll() Msg {
	return eraseAllMsg{}
}

// eraseAllMsg is the message of EraseAll.
type eraseAllMsg struct{}

// eraseAll writes the erase straight to the terminal, as insertAbove
// writes what it prints, so that lines printed after it land after it.
func (s *cursedRenderer) eraseAll() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastView != nil && s.lastView.AltScreen {
		s.scr.MoveTo(0, 0)
		s.scr.Erase()
		s.pendingErase = true
		return nil
	}
	seq := ansi.CursorHomePosition + ansi.EraseEntireScreen + ansi.EraseDisplay(3)
	if _, err := io.WriteString(s.w, seq); err != nil {
		return fmt.Errorf("bubbletea: error erasing the screen: %w", err)
	}
	s.scr.SetPosition(0, 0)
	s.scr.Erase()
	s.pendingErase = true
	return nil
}
