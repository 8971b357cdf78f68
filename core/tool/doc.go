// Package tool defines the Tool interface, the process-wide set of built-in
// tool factories, and the per-run Registry the agent sees.
//
// Schemas are canonicalised when a tool enters a Registry (object keys
// sorted, insignificant whitespace removed) and the registry lists tools in
// name order, so the tool part of every request is byte-identical from turn
// to turn and the provider's prompt cache keeps hitting.
//
// Execute reports tool failures as errors that the agent feeds back to the
// model as a readable result; they are never fatal to a session.
package tool
