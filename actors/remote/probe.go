package remote

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The classes of ProbeRemote's errors. Each error wraps exactly one of
// them and keeps the transport's own message, which is what tells a user
// the precise cause (refused, timed out, which certificate).
var (
	// ErrWorkerUnreachable: nothing answered at the address (refused,
	// unresolvable, timed out).
	ErrWorkerUnreachable = errors.New("worker unreachable")
	// ErrWorkerAuth: the peer answered and refused our token.
	ErrWorkerAuth = errors.New("worker refused the token")
	// ErrWorkerTLS: the two ends disagree on TLS (one side plaintext), the
	// peer's certificate is not trusted, or the peer does not speak gRPC.
	ErrWorkerTLS = errors.New("worker TLS mismatch")
)

// probeDefaultTimeout bounds a probe whose context has no deadline.
const probeDefaultTimeout = 10 * time.Second

// probeSystemID is the system id a probe announces; a peer only logs it.
const probeSystemID = "reasonix-probe"

// ProbeRemote checks that a remote endpoint at address is up and accepts
// o's credentials, without protoactor: it dials with the same token and
// TLS settings, opens the message stream, exchanges protoactor's connect
// handshake and closes everything again. Protoactor's own connection to a
// dead address retries for about 10 s, holding that peer's writer (and any
// shutdown) meanwhile, so a peer is probed before protoactor is asked to
// reach it. The round trip covers the dial, TLS and the handshake.
//
// The probe is bounded by ctx (10 s when ctx has no deadline) and leaves
// no goroutine behind. Its errors wrap ErrWorkerUnreachable, ErrWorkerAuth
// or ErrWorkerTLS; bad options (no token, unreadable CA) are returned as
// they are.
func ProbeRemote(ctx context.Context, address string, o RemoteOptions) (time.Duration, error) {
	if err := checkToken(o.Token); err != nil {
		return 0, fmt.Errorf("probe %s: %w", address, err)
	}
	if err := checkDialAddress(address); err != nil {
		return 0, fmt.Errorf("probe: %w", err)
	}
	_, cliTLS, err := o.tlsConfigs(false)
	if err != nil {
		return 0, fmt.Errorf("probe %s: %w", address, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, probeDefaultTimeout)
		defer cancel()
	}
	start := time.Now()
	conn, err := grpc.NewClient(address, dialOptions(o.Token, cliTLS, false)...)
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrWorkerUnreachable, address, err)
	}
	defer conn.Close()
	// The stream lives on its own context so returning ends it whatever
	// state the exchange stopped in.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := remote.NewRemotingClient(conn).Receive(sctx)
	if err != nil {
		return 0, probeError(ctx, address, err)
	}
	hello := &remote.RemoteMessage{MessageType: &remote.RemoteMessage_ConnectRequest{
		ConnectRequest: &remote.ConnectRequest{ConnectionType: &remote.ConnectRequest_ServerConnection{
			ServerConnection: &remote.ServerConnection{SystemId: probeSystemID, Address: probeSystemID}}}}}
	if err := stream.Send(hello); err != nil {
		// A failed Send reports io.EOF; the stream's status is in Recv.
		_, err = stream.Recv()
		return 0, probeError(ctx, address, err)
	}
	m, err := stream.Recv()
	if err != nil {
		return 0, probeError(ctx, address, err)
	}
	rtt := time.Since(start)
	resp, ok := m.MessageType.(*remote.RemoteMessage_ConnectResponse)
	if !ok {
		return 0, fmt.Errorf("%w: %s: answered the handshake with %T, not a connect response", ErrWorkerTLS, address, m.MessageType)
	}
	if resp.ConnectResponse.Blocked {
		return 0, fmt.Errorf("%w: %s: the peer blocks this system", ErrWorkerAuth, address)
	}
	_ = stream.CloseSend()
	return rtt, nil
}

// probeError classifies a failed exchange by its gRPC status, keeping the
// transport's message. A TLS disagreement shows as Unavailable with a
// message from the TLS layer (a TLS client meeting plaintext) or about the
// HTTP/2 preface (a plaintext client meeting TLS).
func probeError(ctx context.Context, address string, err error) error {
	st, _ := status.FromError(err)
	msg := st.Message()
	switch {
	case st.Code() == codes.Unauthenticated || st.Code() == codes.PermissionDenied:
		return fmt.Errorf("%w: %s: %s", ErrWorkerAuth, address, msg)
	case looksTLS(msg):
		return fmt.Errorf("%w: %s: %s", ErrWorkerTLS, address, msg)
	case st.Code() == codes.DeadlineExceeded || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: %s: no answer before the deadline: %s", ErrWorkerUnreachable, address, msg)
	default:
		return fmt.Errorf("%w: %s: %s", ErrWorkerUnreachable, address, msg)
	}
}

// looksTLS tells a TLS or protocol disagreement from an absent peer by the
// transport's message. A TLS server closes a plaintext client's connection
// at once, before its HTTP/2 preface (EOF, or a reset when our bytes were
// still unread); a peer that never answers also fails the preface, but by
// our connect timeout, and is unreachable.
func looksTLS(msg string) bool {
	for _, s := range []string{"tls:", "x509:", "authentication handshake failed", "http2: frame too large"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return strings.Contains(msg, "server preface") &&
		(strings.Contains(msg, "EOF") || strings.Contains(msg, "connection reset"))
}
