// Package actors runs Reasonix as a tree of protoactor-go actors: a session
// supervisor, the executor that drives the agent loop, one short-lived tool
// runner per tool call, and (in later parts) planners, subagents, the fleet
// scheduler and MCP connections. It is the only package that imports
// protoactor-go.
//
// The rules of the tree: Receive never blocks (streams and tools run in
// goroutines that report back by message and turn their own panics into
// messages); every request gets exactly one terminal reply; a crash is
// contained at the smallest unit (a tool call becomes an error result); and
// frontends only observe, through the typed events of a Bus.
package actors
