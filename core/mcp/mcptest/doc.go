// Package mcptest gives tests a real third-party MCP server: the pinned
// @modelcontextprotocol/server-everything, the reference server the MCP
// project maintains, over stdio or streamable HTTP; and the pinned
// official client conformance suite, @modelcontextprotocol/conformance
// (REASONIX_MCP_CONFORMANCE names an installed copy).
//
// CI installs it up front and names its entry script in
// REASONIX_MCP_EVERYTHING; otherwise the first test installs the pinned
// version with npm into the user cache directory. Tests are skipped only
// when node or npm is missing, and fail instead under
// REASONIX_TEST_STRICT=1 (see core/testenv).
package mcptest
