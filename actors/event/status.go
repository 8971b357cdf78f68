package event

import "reasonix/core/mcp"

// MCPStatus lists MCP servers in configuration order.
type MCPStatus struct {
	Servers []MCPServerStatus
}

// MCPServerStatus is what /mcp shows about one server.
type MCPServerStatus struct {
	// Name is the configured name; Source where it was declared; Type
	// the transport.
	Name   string
	Source string
	Type   string
	// State is one of the MCP state constants.
	State string
	// Tools are the registered tool names, sorted.
	Tools []string
	// Prompts and Resources are what the server lists, when it offers
	// them.
	Prompts   []mcp.Prompt
	Resources []mcp.Resource
	// LastError is why the last connection ended or failed.
	LastError string
	// Failures counts connection failures in a row; it resets once a
	// connection has been stable for a while.
	Failures int
	// Pid is the process of a running stdio server, else 0.
	Pid int
	// ServerInfo is the name and version the server gave.
	ServerInfo mcp.Implementation
}
