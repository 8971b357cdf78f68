// Package testenv lets a test state which outside program it needs
// (bubblewrap, node, npm, ripgrep, git, tmux, chromium) and get one uniform answer when it
// is missing: the test is skipped with a message naming the Debian package
// to install, so `go test ./...` passes on a machine with only Go.
//
// With REASONIX_TEST_STRICT=1 in the environment (CI sets it) a missing
// program fails the test instead, so a skip can never hide a test that CI
// was meant to run. WriteTree and Tree lay out a directory of files for a
// test; on Linux, Tmpfs mounts a small disk that really fills up and Fill
// fills it. It is imported only from tests.
package testenv
