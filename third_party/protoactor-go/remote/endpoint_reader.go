package remote

import (
	"errors"
	"fmt" // reasonix: checkBatch's errors
	"io"
	"log/slog"
	"sync/atomic" // reasonix: suspended

	"google.golang.org/protobuf/proto"

	"github.com/asynkron/protoactor-go/actor"
	"golang.org/x/net/context"
)

type endpointReader struct {
	// reasonix: suspended is atomic: Shutdown calls suspend while Receive
	// reads it on each stream's goroutine.
	suspended atomic.Bool
	remote    *Remote
}

func (s *endpointReader) mustEmbedUnimplementedRemotingServer() {
	// TODO implement me
	panic("implement me")
}

func (s *endpointReader) ListProcesses(ctx context.Context, request *ListProcessesRequest) (*ListProcessesResponse, error) {
	panic("implement me")
}

func (s *endpointReader) GetProcessDiagnostics(ctx context.Context, request *GetProcessDiagnosticsRequest) (*GetProcessDiagnosticsResponse, error) {
	panic("implement me")
}

func newEndpointReader(r *Remote) *endpointReader {
	return &endpointReader{
		remote: r,
	}
}

func (s *endpointReader) Receive(stream Remoting_ReceiveServer) error {
	// reasonix: the endpoint manager sends true on disconnectChan when it
	// stops; this handler used to close the channel when it returned, so a
	// stop racing a closing stream could send on a closed channel (a
	// panic). The channel is never closed now: the goroutine below ends
	// with the stream's context, and the buffer of one takes the
	// manager's send whether or not anyone still listens.
	disconnectChan := make(chan bool, 1)
	s.remote.edpManager.endpointReaderConnections.Store(stream, disconnectChan)
	defer func() {
		s.remote.Logger().Info("EndpointReader is closing")
		s.remote.edpManager.endpointReaderConnections.Delete(stream)
	}()

	go func() {
		select {
		case <-disconnectChan:
			s.remote.Logger().Debug("EndpointReader is telling to remote that it's leaving")
			err := stream.Send(&RemoteMessage{
				MessageType: &RemoteMessage_DisconnectRequest{
					DisconnectRequest: &DisconnectRequest{},
				},
			})
			if err != nil {
				s.remote.Logger().Error("EndpointReader failed to send disconnection message", slog.Any("error", err))
			}
		case <-stream.Context().Done(): // reasonix: the stream ended first
		}
	}()

	for {
		msg, err := stream.Recv()
		switch {
		case errors.Is(err, io.EOF):
			s.remote.Logger().Info("EndpointReader stream closed")
			// reasonix: nothing is sent on disconnectChan; the deferred
			// Delete unregisters the stream.
			return nil
		case err != nil:
			s.remote.Logger().Info("EndpointReader failed to read", slog.Any("error", err))
			return err
		case s.suspended.Load(): // reasonix: atomic
			continue
		}

		switch t := msg.MessageType.(type) {
		case *RemoteMessage_ConnectRequest:
			s.remote.Logger().Debug("EndpointReader received connect request", slog.Any("message", t.ConnectRequest))
			c := t.ConnectRequest
			_, err := s.OnConnectRequest(stream, c)
			if err != nil {
				s.remote.Logger().Error("EndpointReader failed to handle connect request", slog.Any("error", err))
				return err
			}
		case *RemoteMessage_MessageBatch:
			m := t.MessageBatch
			err := s.onMessageBatch(m)
			if err != nil {
				s.remote.Logger().Error("EndpointReader failed to handle message batch", slog.Any("error", err))
				return err
			}
		default:
			{
				s.remote.Logger().Warn("EndpointReader received unknown message type")
			}
		}
	}
}

func (s *endpointReader) OnConnectRequest(stream Remoting_ReceiveServer, c *ConnectRequest) (bool, error) {
	switch tt := c.ConnectionType.(type) {
	case *ConnectRequest_ServerConnection:
		{
			sc := tt.ServerConnection
			s.onServerConnection(stream, sc)
		}
	case *ConnectRequest_ClientConnection:
		{
			// TODO implement me
			s.remote.Logger().Error("ClientConnection not implemented")
		}
	default:
		s.remote.Logger().Error("EndpointReader received unknown connection type")
		return true, nil
	}
	return false, nil
}

func (s *endpointReader) onMessageBatch(m *MessageBatch) error {
	var (
		sender *actor.PID
		target *actor.PID
	)

	// reasonix: indexes and the serializer id come from the peer; out of
	// range they used to panic on the gRPC goroutine (a crash of the
	// process). A batch with any of them wrong is refused whole.
	if err := checkBatch(m); err != nil {
		s.remote.Logger().Error("EndpointReader received a malformed batch", slog.Any("error", err))
		return err
	}
	for _, envelope := range m.Envelopes {
		data := envelope.MessageData

		sender = deserializeSender(sender, envelope.Sender, envelope.SenderRequestId, m.Senders)
		target = deserializeTarget(target, envelope.Target, envelope.TargetRequestId, m.Targets)
		if target == nil {
			s.remote.Logger().Error("EndpointReader received message with unknown target", slog.Int("target", int(envelope.Target)), slog.Int("targetRequestId", int(envelope.TargetRequestId)))
			return errors.New("unknown target")
		}
		// reasonix: what arrives on our server is for this process. A
		// target spelling our address differently (the name a peer was
		// configured with, not the one we advertise) used to be forwarded
		// to that address, i.e. back to ourselves, over and over; any other
		// address made this node relay for the peer.
		if local := s.remote.actorSystem.Address(); target.Address != local {
			target = &actor.PID{Address: local, Id: target.Id, RequestId: target.RequestId}
		}

		message, err := Deserialize(data, m.TypeNames[envelope.TypeId], envelope.SerializerId)
		if err != nil {
			s.remote.Logger().Error("EndpointReader failed to deserialize", slog.Any("error", err))
			return err
		}

		// translate from on-the-wire representation to in-process representation
		// this only applies to root level messages, and never on nested child messages
		if v, ok := message.(RootSerialized); ok {
			message, err = v.Deserialize()
			if err != nil {
				s.remote.Logger().Error("EndpointReader failed to deserialize", slog.Any("error", err))
				return err
			}
		}

		switch msg := message.(type) {
		case *actor.Terminated:
			rt := &remoteTerminate{
				Watchee: msg.Who,
				Watcher: target,
			}
			s.remote.edpManager.remoteTerminate(rt)
		case actor.SystemMessage:
			ref, _ := s.remote.actorSystem.ProcessRegistry.GetLocal(target.Id)
			ref.SendSystemMessage(target, msg)
		default:
			var header map[string]string

			// fast path
			if sender == nil && envelope.MessageHeader == nil {
				s.remote.actorSystem.Root.Send(target, message)
				continue
			}

			// slow path
			if envelope.MessageHeader != nil {
				header = envelope.MessageHeader.HeaderData
			}
			localEnvelope := &actor.MessageEnvelope{
				Header:  header,
				Message: message,
				Sender:  sender,
			}
			s.remote.actorSystem.Root.Send(target, localEnvelope)
		}
	}
	return nil
}

// checkBatch (reasonix:) checks every index an envelope holds against
// the batch's lookup tables, and that it names the one serializer writers
// use.
func checkBatch(m *MessageBatch) error {
	for i, e := range m.Envelopes {
		switch {
		case e == nil:
			return fmt.Errorf("envelope %d is empty", i)
		case e.Target < 0 || int(e.Target) >= len(m.Targets) || m.Targets[e.Target] == nil:
			return fmt.Errorf("envelope %d: target %d out of range", i, e.Target)
		case e.Sender < 0 || int(e.Sender) > len(m.Senders) || e.Sender > 0 && m.Senders[e.Sender-1] == nil:
			return fmt.Errorf("envelope %d: sender %d out of range", i, e.Sender)
		case e.TypeId < 0 || int(e.TypeId) >= len(m.TypeNames):
			return fmt.Errorf("envelope %d: type %d out of range", i, e.TypeId)
		case e.SerializerId != 0:
			return fmt.Errorf("envelope %d: serializer %d is not served", i, e.SerializerId)
		}
	}
	return nil
}

func deserializeSender(pid *actor.PID, index int32, requestId uint32, arr []*actor.PID) *actor.PID {
	if index == 0 {
		pid = nil
	} else {
		pid = arr[index-1]

		// if request id is used. make sure to clone the PID first, so we don't corrupt the lookup
		if requestId > 0 {
			pid, _ = proto.Clone(pid).(*actor.PID)
			pid.RequestId = requestId
		}
	}
	return pid
}

func deserializeTarget(pid *actor.PID, index int32, requestId uint32, arr []*actor.PID) *actor.PID {
	pid = arr[index]

	// if request id is used. make sure to clone the PID first, so we don't corrupt the lookup
	if requestId > 0 {
		pid, _ = proto.Clone(pid).(*actor.PID)
		pid.RequestId = requestId
	}

	return pid
}

func (s *endpointReader) onServerConnection(stream Remoting_ReceiveServer, sc *ServerConnection) {
	if s.remote.BlockList().IsBlocked(sc.SystemId) {
		s.remote.Logger().Debug("EndpointReader is blocked")

		err := stream.Send(
			&RemoteMessage{
				MessageType: &RemoteMessage_ConnectResponse{
					ConnectResponse: &ConnectResponse{
						Blocked:  true,
						MemberId: s.remote.actorSystem.ID,
					},
				},
			})
		if err != nil {
			s.remote.Logger().Error("EndpointReader failed to send ConnectResponse message", slog.Any("error", err))
		}

		address := sc.Address
		systemID := sc.SystemId

		// TODO
		_ = address
		_ = systemID
	} else {
		err := stream.Send(
			&RemoteMessage{
				MessageType: &RemoteMessage_ConnectResponse{
					ConnectResponse: &ConnectResponse{
						Blocked:  false,
						MemberId: s.remote.actorSystem.ID,
					},
				},
			})
		if err != nil {
			s.remote.Logger().Error("EndpointReader failed to send ConnectResponse message", slog.Any("error", err))
		}
	}
}

func (s *endpointReader) suspend(toSuspend bool) {
	s.suspended.Store(toSuspend) // reasonix: atomic
	if toSuspend {
		s.remote.Logger().Debug("Suspended EndpointReader")
	}
}
