// Package sse reads a Server-Sent Events stream (the text/event-stream
// format) as the WHATWG HTML standard defines it, one dispatched event at a
// time. Chat-completion streams and MCP streamable-HTTP replies both arrive
// in this format.
//
// The Reader accepts LF, CRLF and CR line endings and a leading byte-order
// mark, ignores comment lines, joins multi-line data with "\n", and skips
// blocks that carry no data field. It distinguishes a clean end of stream
// (io.EOF, returned only on an event boundary) from a stream cut inside an
// event (an error wrapping io.ErrUnexpectedEOF), which is how callers tell a
// finished reply from a dropped connection. Lines are capped in length so a
// hostile or broken peer cannot make the Reader grow without bound.
//
// A Reader does no I/O of its own beyond calling Read on the source and
// starts no goroutines; it is not safe for concurrent use.
package sse
