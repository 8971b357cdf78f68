package remote

import (
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"reasonix/actors/event"
	"reasonix/actors/kernel"
	"reasonix/actors/workerpb"
	"reasonix/core/provider"
)

// ToWire returns the protobuf twin (actors/workerpb) of a plain boundary
// message, one of the pointer types of msgs.go. protoactor
// remote can only put protobuf messages on the wire, and a local PID takes
// them as well, so every boundary message goes out in this form; the
// receiver's fromWire turns it back. The twin holds copies of m's lists,
// so a sender may reuse them once the message is sent; an event's line is
// shared, as encodeWorkerEvent makes a fresh one for each event. Anything
// else, a nil pointer included, is an error rather than a message the
// other side could not decode.
func ToWire(m any) (any, error) {
	// Events first: they are the bulk of the traffic, so the hot path
	// meets one type switch only.
	w, ok := eventsToWire(m)
	if !ok {
		w, ok = taskToWire(m)
	}
	if !ok {
		w, ok = linkToWire(m)
	}
	if !ok {
		return nil, fmt.Errorf("worker wire: %T is not a boundary message (send a pointer to one of the types of actors/remote/msgs.go)", m)
	}
	if w == nil {
		return nil, fmt.Errorf("worker wire: nil %T", m)
	}
	return w, nil
}

// linkToWire is the twin of a message of the link itself (hello, welcome,
// heartbeat and its ack, posture, bye). ok is false when m is none of
// these; w is nil when m is a nil pointer to one.
func linkToWire(m any) (w any, ok bool) {
	switch m := m.(type) {
	case *Hello:
		if m != nil {
			w = &workerpb.Hello{
				Protocol:  int64(m.Protocol),
				Scheduler: m.Scheduler,
				Session:   m.Session,
				Workspace: m.Workspace,
				Epoch:     m.Epoch,
				LeaseMs:   m.LeaseMS,
			}
		}
	case *Welcome:
		if m != nil {
			w = &workerpb.Welcome{
				Protocol:   int64(m.Protocol),
				Worker:     m.Worker,
				Boot:       m.Boot,
				Epoch:      m.Epoch,
				Capacity:   int64(m.Capacity),
				Running:    int64(m.Running),
				Workspaces: slices.Clone(m.Workspaces),
				Refused:    m.Refused,
			}
		}
	case *Heartbeat:
		if m != nil {
			w = &workerpb.Heartbeat{Epoch: m.Epoch, N: m.N}
		}
	case *HeartbeatAck:
		if m != nil {
			w = &workerpb.HeartbeatAck{Epoch: m.Epoch, N: m.N, Running: int64(m.Running), Free: int64(m.Free)}
		}
	case *Posture:
		if m != nil {
			w = &workerpb.Posture{Epoch: m.Epoch, Posture: m.Posture}
		}
	case *Bye:
		if m != nil {
			w = &workerpb.Bye{Epoch: m.Epoch, Why: m.Why}
		}
	default:
		return nil, false
	}
	return w, true
}

// taskToWire is the twin of a message about one attempt of a task (start,
// accepted, refused, finished, cancel, approval), apart from its events.
// ok is false when m is none of these; w is nil when m is a nil pointer
// to one.
func taskToWire(m any) (w any, ok bool) {
	switch m := m.(type) {
	case *Start:
		if m != nil {
			w = &workerpb.Start{
				Epoch:       m.Epoch,
				Attempt:     int64(m.Attempt),
				Session:     m.Session,
				Fleet:       m.Fleet,
				Workspace:   m.Workspace,
				Spec:        taskSpecToWire(m.Spec),
				Posture:     m.Posture,
				Interactive: m.Interactive,
				LendWindow:  m.LendWindow,
			}
		}
	case *SlotAsk:
		if m != nil {
			w = &workerpb.SlotAsk{Task: m.Task, Attempt: int64(m.Attempt), Id: m.ID, Endpoint: m.Endpoint, Key: m.Key}
		}
	case *SlotGrant:
		if m != nil {
			w = &workerpb.SlotGrant{Task: m.Task, Attempt: int64(m.Attempt), Id: m.ID, Refused: m.Refused}
		}
	case *SlotDone:
		if m != nil {
			w = &workerpb.SlotDone{Task: m.Task, Attempt: int64(m.Attempt), Id: m.ID, Outcome: outcomeToWire(m.Outcome),
				TtfbUs: m.TTFB.Microseconds(), Next: m.Next}
		}
	case *Accepted:
		if m != nil {
			a := &workerpb.Accepted{Task: m.Task, Attempt: int64(m.Attempt), Model: m.Model}
			if m.Price != nil {
				a.Price = &workerpb.Price{Input: m.Price.Input, CacheHit: m.Price.CacheHit, Output: m.Price.Output}
			}
			w = a
		}
	case *Refused:
		if m != nil {
			w = &workerpb.Refused{Task: m.Task, Attempt: int64(m.Attempt), Reason: m.Reason, Fatal: m.Fatal}
		}
	case *Finished:
		if m != nil {
			w = &workerpb.Finished{
				Task:       m.Task,
				Attempt:    int64(m.Attempt),
				Last:       m.Last,
				Status:     m.Status,
				Text:       m.Text,
				Error:      m.Error,
				Steps:      int64(m.Steps),
				Usage:      usageToWire(m.Usage),
				Transcript: m.Transcript,
			}
			if ch := m.Changes; ch != nil {
				w.(*workerpb.Finished).Patch, w.(*workerpb.Finished).PatchFiles, w.(*workerpb.Finished).PatchError = ch.Patch, slices.Clone(ch.Files), ch.Error
			}
		}
	case *Cancel:
		if m != nil {
			w = &workerpb.Cancel{Task: m.Task, Attempt: int64(m.Attempt), Why: m.Why}
		}
	case *Approval:
		if m != nil {
			w = &workerpb.Approval{Task: m.Task, Attempt: int64(m.Attempt), RequestId: m.RequestID, Choice: m.Choice, Rule: m.Rule}
		}
	default:
		return nil, false
	}
	return w, true
}

// eventsToWire is the twin of a task's event or batch of events. ok is
// false when m is neither; w is nil when m is a nil pointer to one.
func eventsToWire(m any) (w any, ok bool) {
	switch m := m.(type) {
	case *TaskEvents:
		if m != nil {
			e := &workerpb.Events{Task: m.Task, Attempt: int64(m.Attempt), First: m.First}
			if len(m.Items) > 0 {
				e.Items = make([]*workerpb.Event, len(m.Items))
				for i, it := range m.Items {
					e.Items[i] = eventToWire(it)
				}
			}
			w = e
		}
	case *TaskEvent:
		if m != nil {
			w = eventToWire(*m)
		}
	default:
		return nil, false
	}
	return w, true
}

// FromWire returns the plain message for a protobuf twin that arrived from
// another process (or from a local actor through sendWorker), and m itself
// for anything else, so a Receive can call it on every message first. The
// plain messages come back as pointers, the form toWire takes. A twin
// always maps (an absent field is its zero value), so the error is nil
// today; it is there for a check a later field may need.
func FromWire(m any) (any, error) {
	switch w := m.(type) {
	case *workerpb.Hello:
		return &Hello{
			Protocol:  int(w.GetProtocol()),
			Scheduler: w.GetScheduler(),
			Session:   w.GetSession(),
			Workspace: w.GetWorkspace(),
			Epoch:     w.GetEpoch(),
			LeaseMS:   w.GetLeaseMs(),
		}, nil
	case *workerpb.Welcome:
		return &Welcome{
			Protocol:   int(w.GetProtocol()),
			Worker:     w.GetWorker(),
			Boot:       w.GetBoot(),
			Epoch:      w.GetEpoch(),
			Capacity:   int(w.GetCapacity()),
			Running:    int(w.GetRunning()),
			Workspaces: nonEmpty(w.GetWorkspaces()),
			Refused:    w.GetRefused(),
		}, nil
	case *workerpb.Heartbeat:
		return &Heartbeat{Epoch: w.GetEpoch(), N: w.GetN()}, nil
	case *workerpb.HeartbeatAck:
		return &HeartbeatAck{Epoch: w.GetEpoch(), N: w.GetN(), Running: int(w.GetRunning()), Free: int(w.GetFree())}, nil
	case *workerpb.Start:
		return &Start{
			Epoch:       w.GetEpoch(),
			Attempt:     int(w.GetAttempt()),
			Session:     w.GetSession(),
			Fleet:       w.GetFleet(),
			Workspace:   w.GetWorkspace(),
			Spec:        taskSpecFromWire(w.GetSpec()),
			Posture:     w.GetPosture(),
			Interactive: w.GetInteractive(),
			LendWindow:  w.GetLendWindow(),
		}, nil
	case *workerpb.SlotAsk:
		return &SlotAsk{Task: w.GetTask(), Attempt: int(w.GetAttempt()), ID: w.GetId(), Endpoint: w.GetEndpoint(), Key: w.GetKey()}, nil
	case *workerpb.SlotGrant:
		return &SlotGrant{Task: w.GetTask(), Attempt: int(w.GetAttempt()), ID: w.GetId(), Refused: w.GetRefused()}, nil
	case *workerpb.SlotDone:
		return &SlotDone{Task: w.GetTask(), Attempt: int(w.GetAttempt()), ID: w.GetId(), Outcome: outcomeFromWire(w.GetOutcome()),
			TTFB: time.Duration(w.GetTtfbUs()) * time.Microsecond, Next: w.GetNext()}, nil
	case *workerpb.Accepted:
		a := &Accepted{Task: w.GetTask(), Attempt: int(w.GetAttempt()), Model: w.GetModel()}
		if p := w.GetPrice(); p != nil {
			a.Price = &event.Price{Input: p.GetInput(), CacheHit: p.GetCacheHit(), Output: p.GetOutput()}
		}
		return a, nil
	case *workerpb.Refused:
		return &Refused{Task: w.GetTask(), Attempt: int(w.GetAttempt()), Reason: w.GetReason(), Fatal: w.GetFatal()}, nil
	case *workerpb.Event:
		ev := eventFromWire(w)
		return &ev, nil
	case *workerpb.Events:
		e := &TaskEvents{Task: w.GetTask(), Attempt: int(w.GetAttempt()), First: w.GetFirst()}
		if items := w.GetItems(); len(items) > 0 {
			e.Items = make([]TaskEvent, len(items))
			for i, it := range items {
				e.Items[i] = eventFromWire(it)
			}
		}
		return e, nil
	case *workerpb.Finished:
		f := &Finished{
			Task:       w.GetTask(),
			Attempt:    int(w.GetAttempt()),
			Last:       w.GetLast(),
			Status:     w.GetStatus(),
			Text:       w.GetText(),
			Error:      w.GetError(),
			Steps:      int(w.GetSteps()),
			Usage:      usageFromWire(w.GetUsage()),
			Transcript: w.GetTranscript(),
		}
		if w.GetPatch() != nil || w.GetPatchError() != "" || len(w.GetPatchFiles()) > 0 {
			f.Changes = &event.Changes{Patch: w.GetPatch(), Files: nonEmpty(w.GetPatchFiles()), Error: w.GetPatchError()}
		}
		return f, nil
	case *workerpb.Cancel:
		return &Cancel{Task: w.GetTask(), Attempt: int(w.GetAttempt()), Why: w.GetWhy()}, nil
	case *workerpb.Approval:
		return &Approval{Task: w.GetTask(), Attempt: int(w.GetAttempt()), RequestID: w.GetRequestId(), Choice: w.GetChoice(), Rule: w.GetRule()}, nil
	case *workerpb.Posture:
		return &Posture{Epoch: w.GetEpoch(), Posture: w.GetPosture()}, nil
	case *workerpb.Bye:
		return &Bye{Epoch: w.GetEpoch(), Why: w.GetWhy()}, nil
	}
	return m, nil
}

// outcomeToWire and outcomeFromWire fix the numbers of a slot's outcome
// on the wire, whatever the order of provider's constants; a number this
// side does not know is neutral.
func outcomeToWire(o provider.Outcome) int64 {
	switch o {
	case provider.Succeeded:
		return 1
	case provider.Throttled:
		return 2
	}
	return 0
}

func outcomeFromWire(n int64) provider.Outcome {
	switch n {
	case 1:
		return provider.Succeeded
	case 2:
		return provider.Throttled
	}
	return provider.Neutral
}

func taskSpecToWire(s event.TaskSpec) *workerpb.TaskSpec {
	return &workerpb.TaskSpec{
		Id:           s.ID,
		Prompt:       s.Prompt,
		Profile:      s.Profile,
		Writer:       s.Writer,
		WritePaths:   slices.Clone(s.WritePaths),
		Model:        s.Model,
		Effort:       s.Effort,
		Budget:       budgetToWire(s.Budget),
		FleetBudget:  budgetToWire(s.FleetBudget),
		Name:         s.Name,
		Of:           s.Of,
		ContinuePath: s.Continue,
		Isolation:    s.Isolation,
		Workdir:      s.Workdir,
	}
}

func taskSpecFromWire(w *workerpb.TaskSpec) event.TaskSpec {
	return event.TaskSpec{
		ID:          w.GetId(),
		Prompt:      w.GetPrompt(),
		Profile:     w.GetProfile(),
		Writer:      w.GetWriter(),
		WritePaths:  nonEmpty(w.GetWritePaths()),
		Model:       w.GetModel(),
		Effort:      w.GetEffort(),
		Budget:      budgetFromWire(w.GetBudget()),
		FleetBudget: budgetFromWire(w.GetFleetBudget()),
		Name:        w.GetName(),
		Of:          w.GetOf(),
		Continue:    w.GetContinuePath(),
		Isolation:   w.GetIsolation(),
		Workdir:     w.GetWorkdir(),
	}
}

// budgetToWire leaves a zero Budget out of the message: absent and zero
// mean the same, no ceiling.
func budgetToWire(b event.Budget) *workerpb.Budget {
	if b == (event.Budget{}) {
		return nil
	}
	return &workerpb.Budget{Tokens: int64(b.Tokens), Turns: int64(b.Turns), Seconds: int64(b.Seconds), Cost: b.Cost}
}

func budgetFromWire(w *workerpb.Budget) event.Budget {
	return event.Budget{Tokens: int(w.GetTokens()), Turns: int(w.GetTurns()), Seconds: int(w.GetSeconds()), Cost: w.GetCost()}
}

func usageToWire(u provider.Usage) *workerpb.Usage {
	if u == (provider.Usage{}) {
		return nil
	}
	return &workerpb.Usage{
		PromptTokens:     int64(u.PromptTokens),
		CompletionTokens: int64(u.CompletionTokens),
		TotalTokens:      int64(u.TotalTokens),
		CacheHitTokens:   int64(u.CacheHitTokens),
		CacheMissTokens:  int64(u.CacheMissTokens),
		ReasoningTokens:  int64(u.ReasoningTokens),
	}
}

func usageFromWire(w *workerpb.Usage) provider.Usage {
	return provider.Usage{
		PromptTokens:     int(w.GetPromptTokens()),
		CompletionTokens: int(w.GetCompletionTokens()),
		TotalTokens:      int(w.GetTotalTokens()),
		CacheHitTokens:   int(w.GetCacheHitTokens()),
		CacheMissTokens:  int(w.GetCacheMissTokens()),
		ReasoningTokens:  int(w.GetReasoningTokens()),
	}
}

func eventToWire(e TaskEvent) *workerpb.Event {
	return &workerpb.Event{Kind: e.Kind, Json: e.JSON}
}

func eventFromWire(w *workerpb.Event) TaskEvent {
	return TaskEvent{Kind: w.GetKind(), JSON: nonEmpty(w.GetJson())}
}

// nonEmpty is s, or nil when it has no elements: protobuf does not tell an
// empty list from an absent one, so neither does the plain side.
func nonEmpty[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}

// EncodeWorkerEvent is ev in the form a workerEvents batch carries: its
// kind and its stream-json line (Encode).
func EncodeWorkerEvent(ev event.Event) (TaskEvent, error) {
	if event.IsNilEvent(ev) {
		return TaskEvent{}, fmt.Errorf("worker wire: nil event")
	}
	b, err := event.Encode(ev)
	if err != nil {
		return TaskEvent{}, fmt.Errorf("worker wire: %w", err)
	}
	return TaskEvent{Kind: ev.Kind(), JSON: b}, nil
}

// DecodeWorkerEvent turns a batch item back into the event it was made
// from, checking that the line is of the kind the item says.
func DecodeWorkerEvent(w TaskEvent) (event.Event, error) {
	ev, err := event.DecodeEvent(w.JSON)
	if err != nil {
		return nil, fmt.Errorf("worker wire: %s item: %w", w.Kind, err)
	}
	if ev.Kind() != w.Kind {
		return nil, fmt.Errorf("worker wire: item says %q but its line is a %q event", w.Kind, ev.Kind())
	}
	return ev, nil
}

// SendWorker sends a boundary message to pid (a local actor or a remote
// one) in its wire form. A message that cannot be encoded is a programming
// error the wire tests cover; it is logged and dropped rather than sent in
// a form the other side would crash on.
func SendWorker(sys *kernel.System, c actor.SenderContext, pid *actor.PID, m any) {
	w, err := ToWire(m)
	if err != nil {
		sys.Logger().Error("worker message not sent", "err", err)
		return
	}
	c.Send(pid, w)
}

// RequestWorker is sendWorker with the caller as sender, so the receiver
// can answer it (c.Respond or c.Send to c.Sender()).
func RequestWorker(sys *kernel.System, c actor.Context, pid *actor.PID, m any) {
	w, err := ToWire(m)
	if err != nil {
		sys.Logger().Error("worker message not sent", "err", err)
		return
	}
	c.Request(pid, w)
}
