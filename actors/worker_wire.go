package actors

import (
	"github.com/asynkron/protoactor-go/actor"
)

// toWire returns the message to put on the wire for a plain boundary
// message (one of the worker* types of worker_msgs.go).
//
// Until the protobuf twins exist this returns m itself, which is what two
// actors of one process exchange.
func toWire(m any) (any, error) { return m, nil }

// fromWire returns the plain message for a protobuf twin that arrived from
// another process, and m itself for anything else, so a Receive can call it
// on every message first.
func fromWire(m any) (any, error) { return m, nil }

// sendWorker sends a boundary message to pid (a local actor or a remote
// one) in its wire form. A message that cannot be encoded is a programming
// error the wire tests cover; it is logged and dropped rather than sent in
// a form the other side would crash on.
func sendWorker(sys *System, c actor.SenderContext, pid *actor.PID, m any) {
	w, err := toWire(m)
	if err != nil {
		sys.Logger().Error("worker message not sent", "err", err)
		return
	}
	c.Send(pid, w)
}

// requestWorker is sendWorker with the caller as sender, so the receiver
// can answer it (c.Respond or c.Send to c.Sender()).
func requestWorker(sys *System, c actor.Context, pid *actor.PID, m any) {
	w, err := toWire(m)
	if err != nil {
		sys.Logger().Error("worker message not sent", "err", err)
		return
	}
	c.Request(pid, w)
}
