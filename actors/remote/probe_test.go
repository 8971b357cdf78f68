package remote

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"reasonix/core/testenv"
)

// freeAddress returns a loopback address nobody listens on (a port just
// released), so dialling it is refused.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestProbeRemote(t *testing.T) {
	leakCheck(t)
	dir := t.TempDir()
	plainOpts := RemoteOptions{Listen: "127.0.0.1:0", Token: testToken}
	tlsOpts := tlsOptions(t, dir)
	plain := startNode(t, plainOpts)
	secure := startNode(t, tlsOpts)
	otherCert, otherKey := testenv.SelfSignedCert(t, dir, "stranger")
	untrusting := tlsOpts
	untrusting.TLSCA = otherCert // trusts only a certificate the node does not use
	_ = otherKey
	dead := freeAddress(t)

	tests := []struct {
		name    string
		address string
		o       RemoteOptions
		want    error
		// detail is part of the transport's message the error must keep.
		detail string
	}{
		{"up", plain.r.Address(), plainOpts, nil, ""},
		{"up over TLS", secure.r.Address(), tlsOpts, nil, ""},
		{"bad token", plain.r.Address(), RemoteOptions{Token: "wrong"}, ErrWorkerAuth, "worker token refused"},
		{"bad token over TLS", secure.r.Address(), RemoteOptions{Token: "wrong", TLSCert: tlsOpts.TLSCert, TLSKey: tlsOpts.TLSKey, TLSCA: tlsOpts.TLSCA}, ErrWorkerAuth, "worker token refused"},
		{"refused port", dead, plainOpts, ErrWorkerUnreachable, "connection refused"},
		{"unresolvable host", "no-such-host.invalid:7420", plainOpts, ErrWorkerUnreachable, ""},
		{"plaintext to TLS", secure.r.Address(), plainOpts, ErrWorkerTLS, ""},
		{"TLS to plaintext", plain.r.Address(), tlsOpts, ErrWorkerTLS, "tls:"},
		{"untrusted certificate", secure.r.Address(), untrusting, ErrWorkerTLS, "x509:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			rtt, err := ProbeRemote(ctx, tt.address, tt.o)
			if tt.want == nil {
				if err != nil || rtt <= 0 {
					t.Fatalf("probe = %v, %v; want a round trip", rtt, err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("probe = %v, want %v", err, tt.want)
			}
			for _, other := range []error{ErrWorkerUnreachable, ErrWorkerAuth, ErrWorkerTLS} {
				if other != tt.want && errors.Is(err, other) {
					t.Errorf("error %v is also %v", err, other)
				}
			}
			if !strings.Contains(err.Error(), tt.address) || !strings.Contains(err.Error(), tt.detail) {
				t.Errorf("error %q does not name %s and keep %q", err, tt.address, tt.detail)
			}
		})
	}
	// Probing leaves the nodes serving.
	if _, err := ProbeRemote(context.Background(), plain.r.Address(), plainOpts); err != nil {
		t.Errorf("node stopped answering after the probes: %v", err)
	}
}

func TestProbeRemoteTimeout(t *testing.T) {
	leakCheck(t)
	// A listener that accepts and never speaks: the probe must give up at
	// the context's deadline.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	accepted := make(chan net.Conn, 8)
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		close(accepted)
		for c := range accepted {
			c.Close()
		}
	})
	t.Run("context deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := ProbeRemote(ctx, l.Addr().String(), RemoteOptions{Token: testToken})
		if !errors.Is(err, ErrWorkerUnreachable) || !strings.Contains(err.Error(), "deadline") {
			t.Fatalf("probe of a silent peer = %v, want ErrWorkerUnreachable naming the deadline", err)
		}
	})
	t.Run("connect timeout", func(t *testing.T) {
		if testing.Short() {
			t.Skip("waits for the connect timeout (5 s)")
		}
		// No deadline of our own: the connection attempt gives up first,
		// and a silent peer is not mistaken for a TLS one.
		_, err := ProbeRemote(context.Background(), l.Addr().String(), RemoteOptions{Token: testToken})
		if !errors.Is(err, ErrWorkerUnreachable) || strings.Contains(err.Error(), "deadline") {
			t.Fatalf("probe of a silent peer = %v, want ErrWorkerUnreachable from the connect timeout", err)
		}
	})
}

func TestProbeRemoteBadOptions(t *testing.T) {
	leakCheck(t)
	tests := []struct {
		name, address string
		o             RemoteOptions
		want          string
	}{
		{"no token", "127.0.0.1:1", RemoteOptions{}, "no worker token"},
		{"not host:port", "build1", RemoteOptions{Token: testToken}, "not host:port"},
		{"port zero", "127.0.0.1:0", RemoteOptions{Token: testToken}, "no valid port"},
		{"CA alone", "127.0.0.1:1", RemoteOptions{Token: testToken, TLSCA: "ca.pem"}, "tls_ca applies only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ProbeRemote(context.Background(), tt.address, tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("probe = %v, want %q", err, tt.want)
			}
			for _, class := range []error{ErrWorkerUnreachable, ErrWorkerAuth, ErrWorkerTLS} {
				if errors.Is(err, class) {
					t.Errorf("a configuration error is classified %v", class)
				}
			}
		})
	}
}

func TestProbeDeadAddressLeaksNothing(t *testing.T) {
	leakCheck(t)
	dead := freeAddress(t)
	for i := 0; i < 5; i++ {
		if _, err := ProbeRemote(context.Background(), dead, RemoteOptions{Token: testToken}); !errors.Is(err, ErrWorkerUnreachable) {
			t.Fatalf("probe %d = %v", i, err)
		}
	}
}
