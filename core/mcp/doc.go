// Package mcp is the Model Context Protocol client: it starts or dials an
// MCP server, performs the handshake, and exposes the server's tools,
// prompts and resources.
//
// The protocol logic lives once in Client and runs over any Transport. Two
// transports exist: Stdio runs a local server as a subprocess in its own
// process group and exchanges one JSON-RPC message per line; HTTP speaks the
// streamable HTTP transport, with JSON or Server-Sent Events replies, a
// session header, an optional server-to-client event stream and resumption
// of broken streams. The legacy HTTP+SSE transport is recognised in
// configuration but refused with ErrSSEDeferred.
//
// A Client answers every request the server sends: ping, roots/list (the
// workspace root), elicitation/create (through the caller's Elicitor, or
// declined), sampling/createMessage (refused) and anything else (method not
// found). Server notifications reach callbacks in Options or the logger; the
// package itself never prints.
//
// Ownership is explicit: Connect takes the Transport, Client.Close closes
// it, and every goroutine a Client or Transport starts is stopped and waited
// for by its Close. Context values are parameters, never fields.
//
// The configuration glue turns config.PluginConfig entries and a project's
// .mcp.json into ServerConfig values, expands ${VAR} and ${VAR:-default}
// references, computes the stable Identity used for launch grants, and
// adapts remote tools to tool.Tool under names of the form
// mcp__<server>__<tool>.
package mcp
