package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/kernel"
)

// WorkerInfo is what a worker says about itself in answer to a status
// query (a hello with no lease).
type WorkerInfo struct {
	// Name is the worker's name and Boot its random per-start id.
	Name, Boot string
	// Protocol is the worker's message-set version; Capacity its run
	// slots and Running how many of them are busy.
	Protocol, Capacity, Running int
	// Workspaces are the workspace names the worker serves.
	Workspaces []string
	// RTT is the round trip of the probe that preceded the query.
	RTT time.Duration
	// Refused is why the worker would not take a link ("protocol",
	// "workspace", "draining"), empty when it would.
	Refused string
}

// ErrWorkerIncompatible is wrapped by QueryWorker's error when the worker
// speaks another protocol (or is no Reasonix worker at all): nothing but a
// hello may be sent to it.
var ErrWorkerIncompatible = errors.New("incompatible worker")

// ErrWorkerNoAnswer is wrapped by QueryWorker's error when the worker
// accepted the connection but no welcome came back in time, which usually
// means it cannot dial back to this process's advertised address.
var ErrWorkerNoAnswer = errors.New("no answer from worker")

// queryListen is where a query's own endpoint listens when the options
// name none: loopback on a free port, enough for a worker on this host. A
// worker elsewhere needs Listen/Advertise it can reach, because its answer
// travels on a connection it opens to us.
const queryListen = "127.0.0.1:0"

// queryTeardown bounds each step of stopping a query's system, so a
// query returns promptly even after its context has expired.
const queryTeardown = 3 * time.Second

// QueryWorker asks the worker at address who it is and how loaded it is.
// It probes first (ProbeRemote), so a dead address, a wrong token or a TLS
// mismatch is told apart in milliseconds and protoactor never dials an
// address that does not answer (its dialler leaks a connection per failed
// attempt). Then it starts an actor system and remote endpoint of its own
// (o.Listen, else loopback on a free port), sends one status hello and
// waits for the welcome within ctx. Everything it started is stopped
// before it returns.
//
// The error wraps ErrWorkerUnreachable, ErrWorkerAuth or ErrWorkerTLS from
// the probe, ErrWorkerIncompatible for another protocol (Refused is then
// "protocol"), or ErrWorkerNoAnswer. A worker that refuses for another
// reason ("draining") is no error: Refused says so.
func QueryWorker(ctx context.Context, address string, o RemoteOptions) (WorkerInfo, error) {
	rtt, err := ProbeRemote(ctx, address, o)
	if err != nil {
		return WorkerInfo{}, err
	}
	q, err := NewWorkerQuerier(o)
	if err != nil {
		return WorkerInfo{RTT: rtt}, fmt.Errorf("query worker %s: %w", address, err)
	}
	defer q.Close()
	return q.hello(ctx, address, rtt)
}

// WorkerQuerier queries several workers through one endpoint of its own,
// for a command that lists them all at once: one listener and one actor
// system for the whole listing instead of one per worker.
type WorkerQuerier struct {
	o   RemoteOptions
	sys *kernel.System
	r   *Remote
}

// NewWorkerQuerier starts the querier's actor system and remote endpoint
// (o.Listen, else loopback on a free port). Close stops them.
func NewWorkerQuerier(o RemoteOptions) (*WorkerQuerier, error) {
	if o.Listen == "" {
		o.Listen = queryListen
	}
	sys := kernel.NewSystem(nil)
	r, err := StartRemote(sys, o)
	if err != nil {
		shutdownQuery(sys, nil)
		return nil, err
	}
	return &WorkerQuerier{o: o, sys: sys, r: r}, nil
}

// Query probes the worker at address and, when the probe passes, asks it
// for its status, as QueryWorker does. It is safe for concurrent use.
func (q *WorkerQuerier) Query(ctx context.Context, address string) (WorkerInfo, error) {
	rtt, err := ProbeRemote(ctx, address, q.o)
	if err != nil {
		return WorkerInfo{}, err
	}
	return q.hello(ctx, address, rtt)
}

// Close stops the querier's endpoint and system, each step bounded.
func (q *WorkerQuerier) Close() { shutdownQuery(q.sys, q.r) }

// hello sends one status hello to the worker at address from an actor of
// its own and waits for the answer within ctx.
func (q *WorkerQuerier) hello(ctx context.Context, address string, rtt time.Duration) (WorkerInfo, error) {
	answer := make(chan queryAnswer, 1)
	a := &queryActor{
		sys:    q.sys,
		target: actor.NewPID(address, HostActorName),
		hello: &Hello{
			Protocol:  Protocol,
			Scheduler: "query-" + randomID(),
			Epoch:     1,
			// LeaseMS 0 makes it a status query: the worker answers and
			// keeps no lease and no watch.
			LeaseMS: 0,
		},
		answer: answer,
	}
	pid := q.sys.Root().Spawn(kernel.Props("query", q.sys.Logger(), func() actor.Actor { return a },
		actor.WithGuardian(kernel.StopOnFailure)))
	defer func() { _ = q.sys.Stop(pid, queryTeardown) }()

	var got queryAnswer
	select {
	case got = <-answer:
	case <-ctx.Done():
		return WorkerInfo{RTT: rtt}, fmt.Errorf("query worker %s: %w in time (can it reach this process back at %s? see [remote] listen and advertise): %w",
			address, ErrWorkerNoAnswer, q.r.Address(), ctx.Err())
	}
	if got.err != nil {
		return WorkerInfo{RTT: rtt}, fmt.Errorf("query worker %s: %w", address, got.err)
	}
	w := got.welcome
	info := WorkerInfo{
		Name: w.Worker, Boot: w.Boot, Protocol: w.Protocol, Capacity: w.Capacity, Running: w.Running,
		Workspaces: w.Workspaces, RTT: rtt, Refused: w.Refused,
	}
	if w.Refused == "protocol" || w.Protocol != Protocol {
		info.Refused = "protocol"
		return info, fmt.Errorf("query worker %s: %w: it speaks protocol %d, this reasonix %d",
			address, ErrWorkerIncompatible, w.Protocol, Protocol)
	}
	return info, nil
}

// shutdownQuery stops the remote endpoint (when there is one) and the
// system, each step bounded.
func shutdownQuery(sys *kernel.System, r *Remote) {
	if r != nil {
		r.Stop(queryTeardown)
	}
	ctx, cancel := context.WithTimeout(context.Background(), queryTeardown)
	defer cancel()
	_ = sys.Shutdown(ctx)
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// queryAnswer is what the query actor hands back: the welcome, or why
// there is none.
type queryAnswer struct {
	welcome Welcome
	err     error
}

// queryActor sends one status hello and hands the first answer to the
// waiting QueryWorker. It never blocks: the channel holds one answer and
// later ones are dropped.
type queryActor struct {
	sys    *kernel.System
	target *actor.PID
	hello  *Hello
	answer chan<- queryAnswer
}

// Receive implements actor.Actor.
func (q *queryActor) Receive(c actor.Context) {
	m, err := FromWire(c.Message())
	if err != nil {
		q.deliver(queryAnswer{err: fmt.Errorf("%w: undecodable answer: %w", ErrWorkerIncompatible, err)})
		return
	}
	switch m := m.(type) {
	case *actor.Started:
		RequestWorker(q.sys, c, q.target, q.hello)
	case *Welcome:
		q.deliver(queryAnswer{welcome: *m})
	case *kernel.Crashed:
		// The repair of a query is its answer: the crash, instead of a
		// wait until the caller's deadline.
		q.deliver(queryAnswer{err: m})
	case *actor.DeadLetterResponse:
		// The process answers but hosts no worker actor: some other
		// protoactor service, or a worker of a layout we do not know.
		q.deliver(queryAnswer{err: fmt.Errorf("%w: no %s actor there", ErrWorkerIncompatible, HostActorName)})
	}
}

func (q *queryActor) deliver(a queryAnswer) {
	select {
	case q.answer <- a:
	default:
	}
}
