// Package tui is the interactive chat frontend: one Bubble Tea model fed
// by a live session's events and answering through its commands. It never
// holds an actor PID and never blocks its update loop: status queries,
// @ reference resolution and session opening run as tea.Cmds whose
// answers come back as messages.
package tui
