// Package e2e holds the end-to-end tests of the reasonix command. TestMain
// builds the real binary once (the package one directory up, with
// -tags reasonix_e2e, which adds test-only tools) and the tests run it
// against the loopback model fake (core/provider/providertest), real MCP
// servers, the bash jail (bwrap), the chat TUI in tmux and the serve page
// in headless Chromium. The benchmarks of whole processes (runs, fleets,
// workers) are here too.
//
// The package has test files only. It drives the binary and imports
// public and internal packages, never package main, whose own tests run
// the commands in-process and need no build.
package e2e
