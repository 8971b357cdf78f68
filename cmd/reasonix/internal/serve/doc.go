// Package serve is the HTTP server of `reasonix serve`, the browser
// frontend. It holds any number of interactive sessions (actors.Live) at
// once, each listed, resumable and closable over a JSON API, streams each
// session's events to the page as Server-Sent Events (a snapshot first,
// then a replay from where the page left off) and feeds the page's
// commands to the session, the same stream-json commands `run` reads.
//
// The package owns what it starts: Shutdown closes every session it opened
// (their transcripts are saved), ends every event stream and waits for
// them. It gets what it needs from the command through Options, so it
// never reads configuration or flags itself. Authentication (none, token,
// password), the Host check against DNS rebinding and the Origin check
// against cross-site requests are all applied here, before any handler.
package serve
