// Package panel holds the chat frontend's side panels: the live fleet of
// subagent tasks, the active goal and the autocomplete menu above the
// composer. Each is a fold of actors events plus a renderer; none of them
// holds a PID, starts a goroutine or blocks, so the chat model can call
// them from its Update and View. A component that asks the session for
// something (cancelling a task) returns an Action for the caller to send.
//
// Every View is cut to the width it is given, measured in terminal cells
// (wide characters count two), so a panel never wraps on screen.
package panel
