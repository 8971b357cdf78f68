// Package panics turns a panic in a goroutine the project starts into an
// error for the call that owns the goroutine.
//
// Go recovers nothing for a goroutine: a panic in a grep worker, a
// provider's stream pump or an MCP read loop would otherwise end the whole
// process, with every subagent in it. Every goroutine started outside the
// actor runtime goes through Go (or defers Recover itself), so the worst a
// bug can do is fail the call it belongs to.
package panics
