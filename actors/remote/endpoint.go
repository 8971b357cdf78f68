package remote

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/grpclog"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"reasonix/actors/kernel"
)

// RemoteOptions configure a process's remote endpoint: where it listens,
// the address its peers dial back, the shared secret and TLS. The same
// options serve (StartRemote) and dial (the endpoint's own connections and
// ProbeRemote), so both ends of a pair must agree on Token and on whether
// TLS is on.
type RemoteOptions struct {
	// Listen is the host:port to bind; port 0 picks a free one.
	Listen string
	// Advertise is the host:port peers dial to reach this process; ""
	// means the bound address (which must then be a specific host, not
	// 0.0.0.0 or ::).
	Advertise string
	// Token is the shared secret; required. Every stream carries it and
	// every inbound stream without it is refused before protoactor sees a
	// byte, because protoactor itself delivers anything to any local PID.
	Token string
	// TLSCert and TLSKey, both set, turn TLS on for serving and dialling;
	// TLSCA names the PEM bundle of authorities trusted for peers' certs
	// ("" trusts the system roots).
	TLSCert, TLSKey, TLSCA string
}

// grpc logs through one process-wide logger (to stderr by default, which
// would corrupt a TUI). It is set once here, before any gRPC use, because
// setting it later races with every gRPC goroutine; our protoactor copy no
// longer sets it in remote.Start for that reason.
func init() {
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard))
}

// remoteMethod is the one gRPC method of protoactor's service that is
// served: the message stream. The unary methods panic upstream.
const remoteMethod = "/remote.Remoting/Receive"

// tokenHeader is the metadata key carrying the shared secret.
const tokenHeader = "x-reasonix-token"

// Keepalive: grpc-go clamps a client's ping interval to at least 10 s, so
// that is what we ask for; the server must permit pings at least that
// often or it closes the connection with too_many_pings. Fast loss
// detection is the worker link's heartbeat, not this.
const (
	keepaliveTime    = 10 * time.Second
	keepaliveTimeout = 5 * time.Second
	keepaliveMinTime = 5 * time.Second
	// connectTimeout bounds one connection attempt (grpc's default is
	// 20 s): protoactor's writer makes five attempts to a peer before
	// giving up, each blocking its mailbox, so an unanswered SYN would
	// otherwise hold it for over a minute and a half.
	connectTimeout = 5 * time.Second
)

// Remote is the started remote endpoint of a System. Stop it with Stop,
// or let System.Shutdown stop it after the actors.
type Remote struct {
	sys      *kernel.System
	r        *remote.Remote
	address  string
	stopOnce sync.Once
	stopped  chan struct{}
}

// StartRemote turns sys into a node other processes can reach at
// o.Listen, guarded by o.Token (and TLS when o.TLSCert and o.TLSKey are
// set). It returns an error, never a panic, for a bad or taken address,
// an empty token or unreadable TLS files.
//
// Call it before spawning any actor a peer must reach or answer: a PID
// made earlier carries the placeholder address "nonhost", which no peer
// can send to. Actors already running are not disturbed (they keep being
// reachable locally). A System holds at most one Remote; a second call
// fails.
func StartRemote(sys *kernel.System, o RemoteOptions) (*Remote, error) {
	if err := checkToken(o.Token); err != nil {
		return nil, fmt.Errorf("start remote: %w", err)
	}
	host, port, err := splitListen(o.Listen)
	if err != nil {
		return nil, fmt.Errorf("start remote: %w", err)
	}
	if o.Advertise != "" {
		if err := checkDialAddress(o.Advertise); err != nil {
			return nil, fmt.Errorf("start remote: advertise: %w", err)
		}
	} else if ip := net.ParseIP(strings.Trim(host, "[]")); host == "" || ip != nil && ip.IsUnspecified() {
		return nil, fmt.Errorf("start remote: listen %s binds every interface, so peers cannot be told where to answer; set advertise to the host:port they should dial", o.Listen)
	}
	srvTLS, cliTLS, err := o.tlsConfigs(true)
	if err != nil {
		return nil, fmt.Errorf("start remote: %w", err)
	}
	r := &Remote{sys: sys, stopped: make(chan struct{})}
	if !sys.Attach(r) {
		return nil, errors.New("start remote: this actor system already has a remote endpoint")
	}
	opts := []remote.ConfigOption{
		remote.WithServerOptions(serverOptions(o.Token, srvTLS, sys.Logger())...),
		remote.WithDialOptions(dialOptions(o.Token, cliTLS, true)...),
	}
	if o.Advertise != "" {
		opts = append(opts, remote.WithAdvertisedHost(o.Advertise))
	}
	r.r = remote.NewRemote(sys.ActorSystem(), remote.Configure(host, port, opts...))
	// Start panics when it cannot listen, before starting anything, so
	// recovering leaves no goroutine behind; on the one later panic (its
	// endpoint manager not starting in time) our protoactor copy closes
	// the listener first.
	if err := startRecovered(r.r); err != nil {
		sys.Detach(r)
		return nil, fmt.Errorf("start remote on %s: %w", o.Listen, err)
	}
	r.address = sys.ActorSystem().Address()
	return r, nil
}

func startRecovered(r *remote.Remote) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", p)
			}
		}
	}()
	r.Start()
	return nil
}

// Address is the host:port peers reach this endpoint at (the advertised
// address, else the bound one with the port actually chosen). PIDs of this
// System carry it.
func (r *Remote) Address() string { return r.address }

// Stop shuts the endpoint down gracefully (in-flight batches are written,
// streams closed), waiting at most timeout. Stop the actors that talk to
// peers first: while protoactor is dialling a dead address its shutdown
// waits for those retries (about 10 s). When the timeout passes the
// shutdown goes on in the background and ends within protoactor's own
// bounds (10 s per stage). Stop may be called more than once.
func (r *Remote) Stop(timeout time.Duration) {
	r.stopOnce.Do(func() {
		go func() {
			defer close(r.stopped)
			r.r.Shutdown(true)
		}()
	})
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-r.stopped:
	case <-t.C:
		r.sys.Logger().Warn("remote endpoint still stopping", "address", r.address, "after", timeout)
	}
}

// checkToken refuses a token gRPC could not carry: metadata values are
// printable ASCII.
func checkToken(tok string) error {
	if tok == "" {
		return errors.New("no worker token (set REASONIX_WORKER_TOKEN or [remote] token_file)")
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < 0x20 || tok[i] > 0x7e {
			return errors.New("the worker token may hold only printable ASCII characters")
		}
	}
	return nil
}

// maxMessageBytes bounds one inbound gRPC message. protoactor puts up to a
// thousand envelopes in one batch, and a batch over gRPC's 4 MiB default
// would break the stream, which looks like a lost peer.
const maxMessageBytes = 64 << 20

// splitListen parses a listen address into what remote.Configure wants:
// the host bracketed when it is an IPv6 literal (Configure joins with a
// plain colon) and a port in 0–65535.
func splitListen(addr string) (host string, port int, err error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("listen %q is not host:port: %w", addr, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return "", 0, fmt.Errorf("listen %q has no valid port (0 to 65535)", addr)
	}
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return h, n, nil
}

// checkDialAddress checks an address a peer dials: a host and a port in
// 1–65535.
func checkDialAddress(addr string) error {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port: %w", addr, err)
	}
	if h == "" {
		return fmt.Errorf("%q has no host", addr)
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q has no valid port (1 to 65535)", addr)
	}
	return nil
}

// tlsOn reports whether the options ask for TLS.
func (o RemoteOptions) tlsOn() bool { return o.TLSCert != "" && o.TLSKey != "" }

// tlsConfigs loads the TLS material: nil configs for plaintext. serving
// also loads the key pair; a client that only dials needs the CA alone.
func (o RemoteOptions) tlsConfigs(serving bool) (srv, cli *tls.Config, err error) {
	switch {
	case (o.TLSCert == "") != (o.TLSKey == ""):
		return nil, nil, errors.New("tls: set both tls_cert and tls_key, or neither")
	case !o.tlsOn() && o.TLSCA != "":
		return nil, nil, errors.New("tls: tls_ca applies only with tls_cert and tls_key (both ends use TLS or neither does)")
	case !o.tlsOn():
		return nil, nil, nil
	}
	cli = &tls.Config{MinVersion: tls.VersionTLS13}
	if o.TLSCA != "" {
		pem, err := os.ReadFile(o.TLSCA)
		if err != nil {
			return nil, nil, fmt.Errorf("tls: read tls_ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, nil, fmt.Errorf("tls: tls_ca %s holds no PEM certificate", o.TLSCA)
		}
		cli.RootCAs = pool
	}
	if serving {
		pair, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return nil, nil, fmt.Errorf("tls: load tls_cert and tls_key: %w", err)
		}
		srv = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS13}
	}
	return srv, cli, nil
}

// serverOptions guard protoactor's gRPC server: only the message stream is
// served, only to a peer presenting the token.
func serverOptions(token string, srvTLS *tls.Config, log *slog.Logger) []grpc.ServerOption {
	want := sha256.Sum256([]byte(token))
	refuse := func(ctx context.Context, method string, code codes.Code, why string) error {
		from := "unknown"
		if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
			from = p.Addr.String()
		}
		log.Warn("remote: stream refused", "peer", from, "method", method, "why", why)
		return status.Error(code, why)
	}
	opts := []grpc.ServerOption{
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if info.FullMethod != remoteMethod {
				return refuse(ss.Context(), info.FullMethod, codes.PermissionDenied, "method not served")
			}
			if !tokenMatches(ss.Context(), want) {
				return refuse(ss.Context(), info.FullMethod, codes.Unauthenticated, "worker token refused")
			}
			return h(srv, ss)
		}),
		grpc.UnaryInterceptor(func(ctx context.Context, _ any, info *grpc.UnaryServerInfo, _ grpc.UnaryHandler) (any, error) {
			return nil, refuse(ctx, info.FullMethod, codes.PermissionDenied, "method not served")
		}),
		grpc.MaxRecvMsgSize(maxMessageBytes),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: keepaliveMinTime, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: keepaliveTime, Timeout: keepaliveTimeout}),
	}
	if srvTLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(srvTLS)))
	}
	return opts
}

// tokenMatches compares the stream's token with the wanted digest in
// constant time; hashing first keeps the token's length out of the timing.
func tokenMatches(ctx context.Context, want [sha256.Size]byte) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	got := md.Get(tokenHeader)
	if len(got) != 1 {
		return false
	}
	sum := sha256.Sum256([]byte(got[0]))
	return subtle.ConstantTimeCompare(sum[:], want[:]) == 1
}

// dialOptions are the credentials every outbound connection uses. They
// replace protoactor's default dial options, so plaintext is asked for
// explicitly when TLS is off.
func dialOptions(token string, cliTLS *tls.Config, keepAlive bool) []grpc.DialOption {
	opts := []grpc.DialOption{
		grpc.WithPerRPCCredentials(tokenCreds{token: token, secure: cliTLS != nil}),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: connectTimeout}),
	}
	if cliTLS != nil {
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(cliTLS)))
	} else {
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if keepAlive {
		opts = append(opts, grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: keepaliveTime, Timeout: keepaliveTimeout, PermitWithoutStream: true}))
	}
	return opts
}

// tokenCreds sends the shared secret with every stream. With TLS on it
// requires transport security, so a misconfiguration can never send the
// token in clear.
type tokenCreds struct {
	token  string
	secure bool
}

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (c tokenCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{tokenHeader: c.token}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (c tokenCreds) RequireTransportSecurity() bool { return c.secure }
