package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"reasonix/actors/kernel"
	"reasonix/core/testenv"
)

const testToken = "s3cret-token"

// tlsOptions are loopback options serving and trusting one self-signed
// certificate.
func tlsOptions(t testing.TB, dir string) RemoteOptions {
	cert, key := testenv.SelfSignedCert(t, dir, "node")
	return RemoteOptions{Listen: "127.0.0.1:0", Token: testToken, TLSCert: cert, TLSKey: key, TLSCA: cert}
}

// leakCheck fails the test when a goroutine outlives it. Register it
// before anything else so it runs after every other cleanup.
func leakCheck(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
}

// remoteNode is one System with remote on and an echo actor, torn down at
// the test's end (actors first, then the System, which stops the remote).
type remoteNode struct {
	sys  *kernel.System
	r    *Remote
	echo *actor.PID
	// got receives every string the echo actor is sent.
	got  chan string
	once sync.Once
}

func startNode(t testing.TB, o RemoteOptions) *remoteNode {
	t.Helper()
	return startNodeLogging(t, o, nil)
}

// startNodeLogging is startNode with the System logging to logger.
func startNodeLogging(t testing.TB, o RemoteOptions, logger *slog.Logger) *remoteNode {
	t.Helper()
	sys := kernel.NewSystem(logger)
	r, err := StartRemote(sys, o)
	if err != nil {
		_ = sys.Shutdown(context.Background())
		t.Fatal(err)
	}
	n := &remoteNode{sys: sys, r: r, got: make(chan string, 64)}
	pid, err := sys.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*wrapperspb.StringValue); ok {
			select {
			case n.got <- m.Value:
			default:
			}
			if c.Sender() != nil {
				c.Respond(wrapperspb.String("echo:" + m.Value))
			}
		}
	}), "echo")
	if err != nil {
		t.Fatal(err)
	}
	n.echo = pid
	t.Cleanup(n.shutdown)
	return n
}

// shutdown stops the node; it may run more than once.
func (n *remoteNode) shutdown() {
	n.once.Do(func() {
		_ = n.sys.Stop(n.echo, 5*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = n.sys.Shutdown(ctx)
	})
}

// echoAt is the echo actor of the node at address, as a peer sees it.
func echoAt(address string) *actor.PID { return actor.NewPID(address, "echo") }

// roundTrip asks the echo actor at peer from n and returns the answer.
func (n *remoteNode) roundTrip(peer, text string) (string, error) {
	res, err := n.sys.Root().RequestFuture(echoAt(peer), wrapperspb.String(text), 10*time.Second).Result()
	if err != nil {
		return "", err
	}
	s, ok := res.(*wrapperspb.StringValue)
	if !ok {
		return "", errors.New("unexpected reply type")
	}
	return s.Value, nil
}

// endpointEvents records the addresses of EndpointTerminatedEvents on the
// node's event stream until the test ends.
func (n *remoteNode) endpointEvents(t testing.TB) <-chan string {
	ch := make(chan string, 16)
	sub := n.sys.ActorSystem().EventStream.Subscribe(func(ev any) {
		if e, ok := ev.(*remote.EndpointTerminatedEvent); ok {
			select {
			case ch <- e.Address:
			default:
			}
		}
	})
	t.Cleanup(func() { n.sys.ActorSystem().EventStream.Unsubscribe(sub) })
	return ch
}

func TestRemoteRoundTrip(t *testing.T) {
	leakCheck(t)
	a := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	b := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	if a.r.Address() == b.r.Address() || !strings.HasPrefix(a.r.Address(), "127.0.0.1:") || strings.HasSuffix(a.r.Address(), ":0") {
		t.Fatalf("addresses %q and %q", a.r.Address(), b.r.Address())
	}
	if a.sys.Endpoint() != a.r {
		t.Error("System.Remote does not return the started endpoint")
	}
	for _, text := range []string{"one", "two"} {
		got, err := a.roundTrip(b.r.Address(), text)
		if err != nil || got != "echo:"+text {
			t.Fatalf("round trip %q = %q, %v", text, got, err)
		}
	}
	// And the other way, over the connections b now opens.
	if got, err := b.roundTrip(a.r.Address(), "back"); err != nil || got != "echo:back" {
		t.Fatalf("reverse round trip = %q, %v", got, err)
	}
	if v := <-b.got; v != "one" {
		t.Errorf("b's echo first got %q", v)
	}
}

// TestRemoteConcurrentRoundTrips: many requests at once, both ways,
// including the first ones that open the connections concurrently.
func TestRemoteConcurrentRoundTrips(t *testing.T) {
	leakCheck(t)
	a := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	b := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	const workers, each = 8, 25
	errs := make(chan error, 2*workers)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		for _, dir := range []struct{ from, to *remoteNode }{{a, b}, {b, a}} {
			wg.Add(1)
			go func(i int, from, to *remoteNode) {
				defer wg.Done()
				for j := 0; j < each; j++ {
					text := fmt.Sprintf("%d-%d", i, j)
					got, err := from.roundTrip(to.r.Address(), text)
					if err == nil && got != "echo:"+text {
						err = fmt.Errorf("asked %q, got %q", text, got)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}(i, dir.from, dir.to)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestRemoteAdvertise(t *testing.T) {
	leakCheck(t)
	// A free port, named by an advertised address peers use instead of
	// the bound one.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	adv := net.JoinHostPort("localhost", strconv.Itoa(port))
	b := startNode(t, RemoteOptions{Listen: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Advertise: adv, Token: testToken})
	if b.r.Address() != adv || b.echo.Address != adv {
		t.Fatalf("address %q, echo PID at %q; want %q", b.r.Address(), b.echo.Address, adv)
	}
	a := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	if got, err := a.roundTrip(adv, "adv"); err != nil || got != "echo:adv" {
		t.Fatalf("round trip via the advertised address = %q, %v", got, err)
	}
}

func TestRemoteTLS(t *testing.T) {
	leakCheck(t)
	o := tlsOptions(t, t.TempDir())
	a := startNode(t, o)
	b := startNode(t, o)
	if got, err := a.roundTrip(b.r.Address(), "secure"); err != nil || got != "echo:secure" {
		t.Fatalf("TLS round trip = %q, %v", got, err)
	}
	if got, err := b.roundTrip(a.r.Address(), "secure back"); err != nil || got != "echo:secure back" {
		t.Fatalf("TLS reverse round trip = %q, %v", got, err)
	}
	if _, err := ProbeRemote(context.Background(), b.r.Address(), o); err != nil {
		t.Errorf("TLS probe: %v", err)
	}
}

// rawBatch dials address with token outside protoactor and writes one
// message batch for the echo actor there, as a hostile or misconfigured
// peer would. It returns the status the server ends the stream with (nil
// while the stream stays open, which the caller then closes).
func rawBatch(t testing.TB, address, token, text string) error {
	t.Helper()
	return rawSend(t, address, token, echoBatch(t, address, text))
}

// echoBatch is a well-formed batch carrying text to the echo actor at
// address.
func echoBatch(t testing.TB, address, text string) *remote.MessageBatch {
	t.Helper()
	data, err := proto.Marshal(wrapperspb.String(text))
	if err != nil {
		t.Fatal(err)
	}
	return &remote.MessageBatch{
		TypeNames: []string{string(proto.MessageName(wrapperspb.String("")))},
		Targets:   []*actor.PID{echoAt(address)},
		Envelopes: []*remote.MessageEnvelope{{TypeId: 0, Target: 0, MessageData: data}},
	}
}

// rawSend writes one batch on a stream of its own, as rawBatch.
func rawSend(t testing.TB, address, token string, b *remote.MessageBatch) error {
	t.Helper()
	return rawMessage(t, address, token, &remote.RemoteMessage{MessageType: &remote.RemoteMessage_MessageBatch{MessageBatch: b}})
}

// rawMessage writes one message of protoactor's stream protocol on a
// stream of its own and returns how the server ended it.
func rawMessage(t testing.TB, address, token string, msg *remote.RemoteMessage) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := grpc.NewClient(address, dialOptions(token, nil, false)...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := remote.NewRemotingClient(conn).Receive(ctx)
	if err != nil {
		return err
	}
	if err := stream.Send(msg); err != nil {
		_, err = stream.Recv()
		return err
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	// The server answers nothing to a batch; the stream ends with EOF
	// once it has read everything, or with its refusal.
	if _, err := stream.Recv(); err != nil && status.Code(err) != codes.OK && !strings.Contains(err.Error(), "EOF") {
		return err
	}
	return nil
}

func TestRemoteWrongTokenRefused(t *testing.T) {
	leakCheck(t)
	b := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	err := rawBatch(t, b.r.Address(), "wrong-token", "intruder")
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("batch with a wrong token ended with %v, want Unauthenticated", err)
	}
	// The same batch with the right token is delivered: it proves the
	// batch itself was sound, and since the refused stream was closed
	// before it, the echo actor's first message tells whether the
	// intruder's got through.
	if err := rawBatch(t, b.r.Address(), testToken, "friend"); err != nil {
		t.Fatalf("batch with the right token: %v", err)
	}
	select {
	case v := <-b.got:
		if v != "friend" {
			t.Fatalf("echo actor received %q first", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the right token's batch never arrived")
	}
	select {
	case v := <-b.got:
		t.Fatalf("echo actor also received %q", v)
	default:
	}
	// A protoactor peer with the wrong token is refused by the probe it
	// would be gated by.
	_, err = ProbeRemote(context.Background(), b.r.Address(), RemoteOptions{Token: "wrong-token"})
	if !errors.Is(err, ErrWorkerAuth) {
		t.Errorf("probe with a wrong token = %v, want ErrWorkerAuth", err)
	}
}

// TestRemoteMalformedBatchRefused: a peer holding the token but sending a
// batch the node cannot decode (another protocol version, a bug) has its
// stream closed; upstream crashed the whole process on each of these.
func TestRemoteMalformedBatchRefused(t *testing.T) {
	leakCheck(t)
	b := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	addr := b.r.Address()
	tests := []struct {
		name   string
		break_ func(*remote.MessageBatch)
	}{
		{"unknown type", func(m *remote.MessageBatch) { m.TypeNames[0] = "reasonix.worker.v99.Unknown" }},
		{"type index out of range", func(m *remote.MessageBatch) { m.Envelopes[0].TypeId = 3 }},
		{"negative type index", func(m *remote.MessageBatch) { m.Envelopes[0].TypeId = -1 }},
		{"target index out of range", func(m *remote.MessageBatch) { m.Envelopes[0].Target = 1 }},
		{"sender index out of range", func(m *remote.MessageBatch) { m.Envelopes[0].Sender = 2 }},
		{"other serializer", func(m *remote.MessageBatch) { m.Envelopes[0].SerializerId = 1 }},
		{"serializer out of range", func(m *remote.MessageBatch) { m.Envelopes[0].SerializerId = 7 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := echoBatch(t, addr, "bad")
			tt.break_(m)
			if err := rawSend(t, addr, testToken, m); err == nil {
				t.Error("the stream carrying a malformed batch ended cleanly")
			}
		})
	}
	// The node survived all of them, and none reached the actor.
	if err := rawBatch(t, addr, testToken, "good"); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-b.got:
		if v != "good" {
			t.Fatalf("echo actor received %q first", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the well-formed batch never arrived")
	}
}

// TestRemoteAddressSpelledDifferently: a peer addressing this node by
// another name than the one it advertises (the worker's address in the
// scheduler's config, say) still reaches it; upstream forwarded such
// messages to that address, i.e. back to the node itself, forever.
func TestRemoteAddressSpelledDifferently(t *testing.T) {
	leakCheck(t)
	a := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	b := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	_, port, err := net.SplitHostPort(b.r.Address())
	if err != nil {
		t.Fatal(err)
	}
	other := net.JoinHostPort("localhost", port)
	if got, err := a.roundTrip(other, "by another name"); err != nil || got != "echo:by another name" {
		t.Fatalf("round trip via %s = %q, %v", other, got, err)
	}
}

func TestRemoteRefusesUnaryMethods(t *testing.T) {
	leakCheck(t)
	b := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := grpc.NewClient(b.r.Address(), dialOptions(testToken, nil, false)...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Upstream implements this method with panic("implement me"); even a
	// peer holding the token must not reach it.
	_, err = remote.NewRemotingClient(conn).ListProcesses(ctx, &remote.ListProcessesRequest{})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("ListProcesses = %v, want PermissionDenied", err)
	}
	if _, err := ProbeRemote(ctx, b.r.Address(), RemoteOptions{Token: testToken}); err != nil {
		t.Errorf("the node no longer answers: %v", err)
	}
}

func TestRemotePeerShutdownSeen(t *testing.T) {
	leakCheck(t)
	a := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	b := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	events := a.endpointEvents(t)
	if _, err := a.roundTrip(b.r.Address(), "hello"); err != nil {
		t.Fatal(err)
	}
	gone := b.r.Address()
	b.shutdown()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case addr := <-events:
			if addr == gone {
				return
			}
		case <-deadline:
			t.Fatalf("no EndpointTerminatedEvent for %s after its System shut down", gone)
		}
	}
}

// TestRemotePeerComesBack: a peer that went away and is started again on
// the same address is reached again by the next message.
func TestRemotePeerComesBack(t *testing.T) {
	leakCheck(t)
	a := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	b := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	events := a.endpointEvents(t)
	addr := b.r.Address()
	if _, err := a.roundTrip(addr, "first life"); err != nil {
		t.Fatal(err)
	}
	b.shutdown()
	for gone := false; !gone; {
		select {
		case got := <-events:
			gone = got == addr
		case <-time.After(10 * time.Second):
			t.Fatal("the peer's end was not seen")
		}
	}
	startNode(t, RemoteOptions{Listen: addr, Token: testToken})
	if got, err := a.roundTrip(addr, "second life"); err != nil || got != "echo:second life" {
		t.Fatalf("round trip to the restarted peer = %q, %v", got, err)
	}
}

// TestRemoteForcedEndpointDrop: publishing EndpointTerminatedEvent for a
// live peer (what a link does when heartbeats stop, as a cut network sends
// nothing) drops protoactor's endpoint, and the next message opens a fresh
// one that works.
func TestRemoteForcedEndpointDrop(t *testing.T) {
	leakCheck(t)
	a := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	b := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	addr := b.r.Address()
	if _, err := a.roundTrip(addr, "before"); err != nil {
		t.Fatal(err)
	}
	a.sys.ActorSystem().EventStream.Publish(&remote.EndpointTerminatedEvent{Address: addr})
	if got, err := a.roundTrip(addr, "after"); err != nil || got != "echo:after" {
		t.Fatalf("round trip after the forced drop = %q, %v", got, err)
	}
}

// watchPeer spawns an actor on n that watches target and returns the
// reasons of the Terminated messages it gets for it, once the watch has
// reached the peer (a request sent after it was answered).
func (n *remoteNode) watchPeer(t *testing.T, target *actor.PID) <-chan actor.TerminatedReason {
	t.Helper()
	why := make(chan actor.TerminatedReason, 4)
	watched := make(chan struct{})
	pid := n.sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			c.Watch(target)
			c.Request(target, wrapperspb.String("watching"))
		case *wrapperspb.StringValue:
			close(watched)
		case *actor.Terminated:
			if m.Who.Equal(target) {
				select {
				case why <- m.Why:
				default:
				}
			}
		}
	}))
	t.Cleanup(func() { _ = n.sys.Stop(pid, 5*time.Second) })
	select {
	case <-watched:
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher's request was never answered")
	}
	return why
}

func wantAddressTerminated(t *testing.T, why <-chan actor.TerminatedReason) {
	t.Helper()
	select {
	case w := <-why:
		if w != actor.TerminatedReason_AddressTerminated {
			t.Errorf("Terminated.Why = %v, want AddressTerminated", w)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher was never told the peer went away")
	}
}

// TestRemoteWatchAddressTerminated: an actor watching a PID on a peer is
// told AddressTerminated when the peer's endpoint goes away (here: the
// peer stops its remote while the watched actor still runs).
func TestRemoteWatchAddressTerminated(t *testing.T) {
	leakCheck(t)
	a := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	b := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	why := a.watchPeer(t, echoAt(b.r.Address()))
	b.r.Stop(10 * time.Second)
	wantAddressTerminated(t, why)
}

// TestRemoteForcedDropTellsWatchers: publishing EndpointTerminatedEvent
// for a live peer also tells the actors watching it (what a link relies on
// when heartbeats stop), and a new watch after that works.
func TestRemoteForcedDropTellsWatchers(t *testing.T) {
	leakCheck(t)
	a := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	b := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	target := echoAt(b.r.Address())
	why := a.watchPeer(t, target)
	a.sys.ActorSystem().EventStream.Publish(&remote.EndpointTerminatedEvent{Address: b.r.Address()})
	wantAddressTerminated(t, why)
	again := a.watchPeer(t, target)
	b.shutdown() // stops the echo actor first: the new watch hears of it
	select {
	case w := <-again:
		if w != actor.TerminatedReason_Stopped && w != actor.TerminatedReason_AddressTerminated {
			t.Errorf("second watch: Terminated.Why = %v", w)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second watch never heard of the peer's end")
	}
}

// TestRemoteLargeMessage: a message above gRPC's default 4 MiB limit
// crosses both ways (a batch of events can be that large).
func TestRemoteLargeMessage(t *testing.T) {
	leakCheck(t)
	a := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	b := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	big := strings.Repeat("x", 5<<20)
	got, err := a.roundTrip(b.r.Address(), big)
	if err != nil || got != "echo:"+big {
		t.Fatalf("large round trip: %d bytes back, %v", len(got), err)
	}
}

// TestSystemShutdownStopsRemote: System.Shutdown alone stops the endpoint
// (the port is closed afterwards) and leaves nothing running.
func TestSystemShutdownStopsRemote(t *testing.T) {
	leakCheck(t)
	n := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	addr := n.r.Address()
	if _, err := ProbeRemote(context.Background(), addr, RemoteOptions{Token: testToken}); err != nil {
		t.Fatal(err)
	}
	n.shutdown()
	select {
	case <-n.r.stopped:
	default:
		t.Fatal("System.Shutdown returned with the remote endpoint still stopping")
	}
	if _, err := ProbeRemote(context.Background(), addr, RemoteOptions{Token: testToken}); !errors.Is(err, ErrWorkerUnreachable) {
		t.Errorf("probe after Shutdown = %v, want ErrWorkerUnreachable", err)
	}
}

// TestRemoteStopBounded: while protoactor retries a dead peer (five
// attempts, 2 s apart) its shutdown waits for the retries; Shutdown still
// returns at its deadline, the endpoint finishes stopping by itself
// afterwards, and no connection of the failed attempts is left (upstream
// leaked one per attempt, each reconnecting forever).
func TestRemoteStopBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for protoactor's connect retries (about 10 s)")
	}
	leakCheck(t)
	sys := kernel.NewSystem(nil)
	r, err := StartRemote(sys, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	sys.Send(echoAt(dead), wrapperspb.String("lost"))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_ = sys.Shutdown(ctx)
	select {
	case <-r.stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the endpoint never finished stopping")
	}
}

// TestStartRemoteWhileActorsRun: starting the endpoint while actors spawn
// (a scheduler that turns remote on from inside its actor) is safe, and
// actors spawned afterwards carry the new address.
func TestStartRemoteWhileActorsRun(t *testing.T) {
	leakCheck(t)
	sys := kernel.NewSystem(nil)
	defer func() { _ = sys.Shutdown(context.Background()) }()
	spawned := make(chan struct{}, 1)
	stop := make(chan struct{})
	child := actor.PropsFromFunc(func(actor.Context) {})
	busy := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); !ok {
			return
		}
		select {
		case <-stop:
			return
		default:
		}
		c.Stop(c.Spawn(child))
		select {
		case spawned <- struct{}{}:
		default:
		}
		c.Send(c.Self(), "again")
	}))
	sys.Send(busy, "go")
	<-spawned // the actor is spawning children now
	r, err := StartRemote(sys, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	close(stop)
	if err := sys.Stop(busy, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	pid := sys.Root().Spawn(child)
	if pid.Address != r.Address() {
		t.Errorf("actor spawned after the start is at %q, want %q", pid.Address, r.Address())
	}
	_ = sys.Stop(pid, 5*time.Second)
}

func TestStartRemoteErrors(t *testing.T) {
	leakCheck(t)
	dir := t.TempDir()
	cert, key := testenv.SelfSignedCert(t, dir, "node")
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	tests := []struct {
		name string
		o    RemoteOptions
		want string
	}{
		{"taken port", RemoteOptions{Listen: taken.Addr().String(), Token: testToken}, "address already in use"},
		{"no token", RemoteOptions{Listen: "127.0.0.1:0"}, "no worker token"},
		{"token with a newline", RemoteOptions{Listen: "127.0.0.1:0", Token: "a\nb"}, "printable ASCII"},
		{"not host:port", RemoteOptions{Listen: "nonsense", Token: testToken}, "not host:port"},
		{"bad port", RemoteOptions{Listen: "127.0.0.1:70000", Token: testToken}, "no valid port"},
		{"unresolvable host", RemoteOptions{Listen: "no-such-host.invalid:0", Token: testToken}, "start remote on no-such-host.invalid:0"},
		{"every interface without advertise", RemoteOptions{Listen: "0.0.0.0:0", Token: testToken}, "set advertise"},
		{"empty host without advertise", RemoteOptions{Listen: ":0", Token: testToken}, "set advertise"},
		{"bad advertise", RemoteOptions{Listen: "127.0.0.1:0", Advertise: "host-only", Token: testToken}, "advertise"},
		{"cert without key", RemoteOptions{Listen: "127.0.0.1:0", Token: testToken, TLSCert: cert}, "both tls_cert and tls_key"},
		{"CA alone", RemoteOptions{Listen: "127.0.0.1:0", Token: testToken, TLSCA: cert}, "tls_ca applies only"},
		{"missing cert file", RemoteOptions{Listen: "127.0.0.1:0", Token: testToken, TLSCert: filepath.Join(dir, "nope.crt"), TLSKey: key}, "load tls_cert"},
		{"garbage CA", RemoteOptions{Listen: "127.0.0.1:0", Token: testToken, TLSCert: cert, TLSKey: key, TLSCA: garbage}, "holds no PEM certificate"},
		{"key of another cert", RemoteOptions{Listen: "127.0.0.1:0", Token: testToken, TLSCert: cert, TLSKey: garbage}, "load tls_cert"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := kernel.NewSystem(nil)
			defer func() { _ = sys.Shutdown(context.Background()) }()
			r, err := StartRemote(sys, tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				if r != nil {
					r.Stop(5 * time.Second)
				}
				t.Fatalf("StartRemote = %v, want an error containing %q", err, tt.want)
			}
			if sys.Endpoint() != nil {
				t.Error("a failed start left a remote on the System")
			}
		})
	}
}

func TestStartRemoteRetryAndOnce(t *testing.T) {
	leakCheck(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	sys := kernel.NewSystem(nil)
	defer func() { _ = sys.Shutdown(context.Background()) }()
	if _, err := StartRemote(sys, RemoteOptions{Listen: taken.Addr().String(), Token: testToken}); err == nil {
		t.Fatal("start on a taken port succeeded")
	}
	// The same System can start on another port after that failure...
	r, err := StartRemote(sys, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	if err != nil {
		t.Fatalf("start after a failed start: %v", err)
	}
	if _, err := ProbeRemote(context.Background(), r.Address(), RemoteOptions{Token: testToken}); err != nil {
		t.Errorf("probe after the retried start: %v", err)
	}
	// ...but holds one endpoint at most.
	if _, err := StartRemote(sys, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken}); err == nil || !strings.Contains(err.Error(), "already has a remote") {
		t.Errorf("second start = %v", err)
	}
	r.Stop(10 * time.Second)
	r.Stop(time.Second) // again: a no-op
	if _, err := ProbeRemote(context.Background(), r.Address(), RemoteOptions{Token: testToken}); !errors.Is(err, ErrWorkerUnreachable) {
		t.Errorf("probe after Stop = %v, want ErrWorkerUnreachable", err)
	}
}

// BenchmarkRemoteRoundTrip measures one request and its reply between two
// Systems of this process over loopback remote (plaintext, token checked
// on each stream, not per message).
func BenchmarkRemoteRoundTrip(b *testing.B) {
	for _, tc := range []struct {
		name string
		tls  bool
	}{{"plaintext", false}, {"tls", true}} {
		b.Run(tc.name, func(b *testing.B) {
			o := RemoteOptions{Listen: "127.0.0.1:0", Token: testToken}
			if tc.tls {
				o = tlsOptions(b, b.TempDir())
			}
			x := startNode(b, o)
			y := startNode(b, o)
			if _, err := x.roundTrip(y.r.Address(), "warm"); err != nil {
				b.Fatal(err)
			}
			msg := wrapperspb.String("ping")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := x.sys.Root().RequestFuture(echoAt(y.r.Address()), msg, 10*time.Second).Result(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			// Drain the echo actor's record so it never blocks (it drops
			// when full anyway).
			for len(y.got) > 0 {
				<-y.got
			}
		})
	}
}

// BenchmarkProbeRemote measures one probe of a live endpoint: a fresh
// gRPC connection, the token check and protoactor's connect handshake.
func BenchmarkProbeRemote(b *testing.B) {
	n := startNode(b, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	o := RemoteOptions{Token: testToken}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ProbeRemote(ctx, n.r.Address(), o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRemoteOneWay measures messages sent without a reply from one
// System to an actor of another over loopback remote, the shape of a
// worker relaying events: b.N sends, timed until the last one arrived.
func BenchmarkRemoteOneWay(b *testing.B) {
	x := startNode(b, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	y := startNode(b, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	var want atomic.Int64
	done := make(chan struct{}, 1)
	count := int64(0)
	sink, err := y.sys.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*wrapperspb.StringValue); ok {
			count++
			if count == want.Load() {
				done <- struct{}{}
			}
		}
	}), "sink")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = y.sys.Stop(sink, 5*time.Second) })
	target := actor.NewPID(y.r.Address(), "sink")
	msg := wrapperspb.String(strings.Repeat("e", 200)) // about one small event
	wait := func() {
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			b.Fatal("messages lost")
		}
	}
	want.Store(1)
	x.sys.Send(target, msg)
	wait()
	b.ReportAllocs()
	b.ResetTimer()
	want.Store(1 + int64(b.N))
	for i := 0; i < b.N; i++ {
		x.sys.Send(target, msg)
	}
	wait()
}

// FuzzRemoteBatch sends arbitrary messages of protoactor's stream protocol
// (batches above all), with the right token, to a node: whatever a peer
// sends, the node must not crash (upstream panicked on the gRPC goroutine
// for several malformed batches).
func FuzzRemoteBatch(f *testing.F) {
	f.Cleanup(func() { goleak.VerifyNone(f) })
	n := startNode(f, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	addr := n.r.Address()
	seed := func(m *remote.MessageBatch) {
		data, err := proto.Marshal(&remote.RemoteMessage{MessageType: &remote.RemoteMessage_MessageBatch{MessageBatch: m}})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	seed(echoBatch(f, addr, "well formed"))
	for _, broken := range []func(*remote.MessageBatch){
		func(m *remote.MessageBatch) { m.TypeNames[0] = "no.such.Type" },
		func(m *remote.MessageBatch) { m.Envelopes[0].TypeId = 9 },
		func(m *remote.MessageBatch) { m.Envelopes[0].Target = 4 },
		func(m *remote.MessageBatch) { m.Envelopes[0].Sender = 3 },
		func(m *remote.MessageBatch) { m.Envelopes[0].SerializerId = 1 },
		func(m *remote.MessageBatch) { m.Envelopes[0].MessageData = []byte{0xff, 0xff, 0xff} },
		func(m *remote.MessageBatch) { m.Targets[0].Address = "elsewhere:1" },
	} {
		m := echoBatch(f, addr, "broken")
		broken(m)
		seed(m)
	}
	for _, m := range []*remote.RemoteMessage{
		{MessageType: &remote.RemoteMessage_ConnectRequest{ConnectRequest: &remote.ConnectRequest{}}},
		{MessageType: &remote.RemoteMessage_ConnectRequest{ConnectRequest: &remote.ConnectRequest{
			ConnectionType: &remote.ConnectRequest_ClientConnection{ClientConnection: &remote.ClientConnection{}}}}},
		{MessageType: &remote.RemoteMessage_DisconnectRequest{DisconnectRequest: &remote.DisconnectRequest{}}},
		{},
	} {
		data, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m := &remote.RemoteMessage{}
		if proto.Unmarshal(data, m) != nil {
			return
		}
		_ = rawMessage(t, addr, testToken, m)
		for len(n.got) > 0 {
			<-n.got
		}
	})
}

// dialLog records the addresses protoactor's endpoint writers start
// connecting to.
type dialLog struct {
	mu    sync.Mutex
	dials []string
}

func (d *dialLog) Enabled(context.Context, slog.Level) bool { return true }
func (d *dialLog) WithAttrs([]slog.Attr) slog.Handler       { return d }
func (d *dialLog) WithGroup(string) slog.Handler            { return d }
func (d *dialLog) Handle(_ context.Context, r slog.Record) error {
	if !strings.Contains(r.Message, "EndpointWriter. connecting") {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "address" {
			d.mu.Lock()
			d.dials = append(d.dials, a.Value.String())
			d.mu.Unlock()
		}
		return true
	})
	return nil
}

func (d *dialLog) count(address string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, a := range d.dials {
		if a == address {
			n++
		}
	}
	return n
}

// TestRemoteTerminatedNotSentToGonePeer: an actor that a gone peer watched
// stops (a worker draining after its scheduler went away) without its
// node dialling the gone peer to deliver the Terminated, which held the
// node's shutdown for protoactor's connect retries.
func TestRemoteTerminatedNotSentToGonePeer(t *testing.T) {
	leakCheck(t)
	dials := &dialLog{}
	b := startNodeLogging(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken}, slog.New(dials))
	a := startNode(t, RemoteOptions{Listen: "127.0.0.1:0", Token: testToken})
	gone := a.r.Address()
	events := b.endpointEvents(t)
	// The watcher's request is answered over b's own connection to a, the
	// endpoint through which b would tell a of the echo actor's end.
	a.watchPeer(t, echoAt(b.r.Address()))
	if dials.count(gone) != 1 {
		t.Fatalf("b dialled a %d times before a went away; want 1", dials.count(gone))
	}
	a.shutdown()
	for seen := false; !seen; {
		select {
		case addr := <-events:
			seen = addr == gone
		case <-time.After(10 * time.Second):
			t.Fatal("b never saw a's endpoint end")
		}
	}
	must(t, b.sys.Stop(b.echo, 5*time.Second))
	b.shutdown()
	if n := dials.count(gone); n != 1 {
		t.Errorf("b dialled the gone peer %d times; want only the first connection", n)
	}
}
