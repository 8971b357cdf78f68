// Command reasonix is the Reasonix coding agent's command line: headless
// runs (run), subagent profiles (subagent), MCP servers (mcp), and the
// setup, config and doctor commands around them.
//
// Commands are built by NewCmdX(f *Factory, runF) constructors so flag
// parsing is testable apart from the work; this is the only package that
// prints or chooses exit codes (0 ok, 1 failed, 2 usage or config error,
// 130 interrupted), all mapped in one place (exitCode). The end-to-end
// tests build the real binary and drive it against the loopback model fake.
package main
