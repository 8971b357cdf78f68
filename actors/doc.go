// Package actors is the top of the actor tree of one session: the session
// actor (its supervisor), the Live facade a frontend holds, the coordinator
// of a two-model (planner and executor) run, and the goal controller of a
// long goal. The rest of the tree lives in sub-packages, each importing
// only those below it:
//
//	event    the frontend contract: events, commands, the bus, the view
//	kernel   the actor System, the repair middleware, the request ledger
//	remote   the remote endpoint, the wire format, probe and query
//	agent    the executor, its tool runners, compaction, gates, delegation
//	mcpconn  one connection actor per MCP server
//	fleet    the scheduler actor and its links to worker hosts
//	worker   the worker host that runs tasks for a remote scheduler
//
// Only actors and its sub-packages import protoactor-go. The rules of the
// tree: Receive never blocks (streams and tools run in goroutines that
// report back by message and turn their own panics into messages); every
// request gets exactly one terminal reply; a crash is contained at the
// smallest unit and repaired to a known state; and frontends only observe,
// through the typed events of a Bus, and answer with commands.
package actors
