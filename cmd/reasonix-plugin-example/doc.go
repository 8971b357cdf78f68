// Command reasonix-plugin-example is the reference MCP server for Reasonix
// plugin authors. It offers two read-only tools, echo and wordcount, and
// nothing else, so the whole protocol surface a tool server needs fits in a
// few small files:
//
//   - server.go: JSON-RPC messages, version negotiation in initialize,
//     tools/list, tools/call and ping;
//   - stdio.go: the stdio transport, one JSON message per line;
//   - http.go: the streamable HTTP transport (--http ADDR), loopback only,
//     with a session id issued at initialize, JSON replies, 405 for the
//     optional GET stream, DELETE to end a session, and Origin/Host checks
//     against DNS rebinding.
//
// Usage:
//
//	reasonix-plugin-example               serve MCP on stdin/stdout
//	reasonix-plugin-example --http ADDR   serve MCP at http://ADDR/mcp
//
// Declared in reasonix.toml:
//
//	[[plugins]]
//	name    = "example"
//	command = "reasonix-plugin-example"
package main
