// Package mcp is the Model Context Protocol client: it starts or dials an
// MCP server, performs the handshake, and exposes the server's tools,
// prompts and resources in our own types.
//
// The protocol is the official MCP Go SDK's (github.com/modelcontextprotocol/go-sdk):
// Client is a thin layer over its client session. What is ours is around
// it. Stdio runs a local server as a subprocess in its own process group,
// keeps the tail of its stderr for an ExitError, and shuts it down
// gracefully, then by force; it is itself the SDK connection. HTTP is the
// SDK's streamable HTTP transport (JSON or event-stream replies, session
// ids, the standalone GET stream, resumption with Last-Event-ID) with our
// static headers, a StatusError for a refused handshake, and an OAuth
// handler hook (package oauth). The legacy HTTP+SSE transport is
// recognised in configuration but refused with ErrSSEDeferred.
//
// Progress reaches the callback of its call in order and before the call's
// result, never after it. Elicitation requests go to the caller's Elicitor
// (with FormDefaults and AnswerWithDefaults for headless answers), roots
// are the workspace, and list changes reach OnListChanged. The package
// itself never prints.
//
// Ownership is explicit: Connect takes the Transport, Client.Close closes
// it (failing calls still waiting with ErrClosed), and every goroutine a
// Client or Transport starts is stopped and waited for by its Close.
// Context values are parameters, never fields.
//
// The configuration glue turns config.PluginConfig entries and a project's
// .mcp.json into ServerConfig values (a project declares none until its
// workspace is trusted: config.Config.ProjectTrusted), expands ${VAR} and
// ${VAR:-default} references, computes the stable Identity used for launch
// grants, keeps each server's approval policy, and adapts remote tools to
// tool.Tool under names of the form mcp__<server>__<tool> (a tool marked
// destructive needs a fresh approval on every call).
package mcp
