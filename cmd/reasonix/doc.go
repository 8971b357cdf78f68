// Command reasonix is the Reasonix coding agent's command line: the chat
// (bare reasonix), headless runs (run, subagent), the browser UI (serve),
// and the commands around them (setup, config, doctor, sessions, history,
// goal, fleet, mcp, worker, workers, trust).
//
// Commands are built by NewCmdX(f *cmdutil.Factory, runF) constructors so
// flag parsing is testable apart from the work; the larger command
// families live in internal/ packages of their own. Only cmd/ prints or
// chooses exit codes (0 ok, 1 failed, 2 usage or config error, 130
// interrupted), mapped in one place (cmdutil.ExitCode). The end-to-end
// tests, in cmd/reasonix/e2e, build the real binary and drive it against
// the loopback model fake.
package main
