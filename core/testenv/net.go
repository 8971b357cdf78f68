package testenv

import (
	"net"
	"testing"
)

// ClosedAddr is a loopback host:port nothing listens on (one that was
// free a moment ago), for tests of what an unreachable peer does.
func ClosedAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		tb.Fatal(err)
	}
	return addr
}
