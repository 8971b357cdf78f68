// Package headless runs a session without the TUI, for `reasonix run` and
// `reasonix subagent`: it starts the session as the chat and serve do
// (actors.StartLive), drives it with one prompt or a stream of JSON
// commands, renders its events as text, json or stream-json, and turns
// signals and the outcome into the command's error.
package headless
