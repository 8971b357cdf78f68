package remote

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"reasonix/actors/event"
	"reasonix/actors/kernel"
	"reasonix/actors/workerpb"
	"reasonix/core/provider"
)

// wireSamples holds one value of every boundary message with every field
// set (TestWireSamplesSetEveryField checks that), so a field the mapping
// forgets comes back zero and fails the round trip.
var wireSamples = []any{
	&Hello{Protocol: Protocol, Scheduler: "sch-7f3a", Session: "s1", Workspace: "reasonix", Epoch: 3, LeaseMS: 3000},
	&Welcome{Protocol: Protocol, Worker: "build1", Boot: "boot-91c2", Epoch: 3, Capacity: 4, Running: 1,
		Workspaces: []string{"reasonix", "docs"}, Refused: "draining"},
	&Heartbeat{Epoch: 3, N: 41},
	&HeartbeatAck{Epoch: 3, N: 41, Running: 2, Free: 2},
	&Start{Epoch: 3, Attempt: 2, Session: "s1", Fleet: "f1", Workspace: "reasonix",
		Spec: event.TaskSpec{ID: "f1.2", Prompt: "fix the parser", Profile: "general", Writer: true, WritePaths: []string{"core/ref", "docs/SPEC.md"},
			Model: "deepseek-reasoner", Effort: "high", Budget: event.Budget{Tokens: 50000, Turns: 20, Seconds: 600, Cost: 0.25},
			FleetBudget: event.Budget{Tokens: 200000, Turns: 80, Seconds: 1800, Cost: 1.5}, Name: "parser", Of: "f1.1", Continue: "/t/s1-f1-1.jsonl",
			Isolation: event.IsolationWorktree, Workdir: "/r/.git/reasonix/worktrees/s1/f1.3"},
		Posture: "auto", Interactive: true, LendWindow: true},
	&SlotAsk{Task: "f1.2", Attempt: 2, ID: 7, Endpoint: "https://api.deepseek.com/chat/completions", Key: "9f86d081884c"},
	&SlotGrant{Task: "f1.2", Attempt: 2, ID: 7, Refused: "another API key"},
	&SlotDone{Task: "f1.2", Attempt: 2, ID: 7, Outcome: provider.Throttled, TTFB: 1500 * time.Microsecond, Next: 8},
	&Accepted{Task: "f1.2", Attempt: 2, Model: "deepseek-reasoner", Price: &event.Price{Input: 0.27, CacheHit: 0.07, Output: 1.1}},
	&Refused{Task: "f1.2", Attempt: 2, Reason: "unknown profile \"reviewer\"", Fatal: true},
	&TaskEvent{Kind: "text_delta", JSON: []byte(`{"type":"text_delta","seq":5,"time":"2025-01-02T03:04:05Z","session":"s1","task":"f1.2","text":"hi"}`)},
	&TaskEvents{Task: "f1.2", Attempt: 2, First: 17, Items: []TaskEvent{
		{Kind: "text_delta", JSON: []byte(`{"type":"text_delta","seq":5,"time":"2025-01-02T03:04:05Z","session":"s1","task":"f1.2","text":"hi"}`)},
		{Kind: "notice", JSON: []byte(`{"type":"notice","seq":6,"time":"2025-01-02T03:04:05Z","session":"s1","task":"f1.2","level":"warn","message":"retrying"}`)},
	}},
	&Finished{Task: "f1.2", Attempt: 2, Last: 18, Status: event.StatusMaxSteps, Text: "partial answer", Error: "step limit", Steps: 30,
		Usage: event.SampleUsage, Transcript: "/home/w/.reasonix/sessions/s1-f1.2.jsonl",
		Changes: &event.Changes{Patch: []byte("diff --git a/x b/x\xff"), Files: []string{"x"}, Error: "partly"}},
	&Cancel{Task: "f1.2", Attempt: 2, Why: "deadline"},
	&Approval{Task: "f1.2", Attempt: 2, RequestID: "s1/f1.2/c9", Choice: event.ApproveSession, Rule: "Bash(make:*)"},
	&Posture{Epoch: 3, Posture: "yolo"},
	&Bye{Epoch: 3, Why: "worker draining"},
}

// wireDataMessages are the twins that only travel inside another message.
var wireDataMessages = []string{"TaskSpec", "Budget", "Price", "Usage"}

// roundTrip sends m the way a remote peer receives it: toWire, protobuf
// bytes, a fresh twin of the same type, fromWire.
func roundTrip(t testing.TB, m any) any {
	t.Helper()
	w, err := ToWire(m)
	if err != nil {
		t.Fatalf("toWire(%T): %v", m, err)
	}
	pm, ok := w.(proto.Message)
	if !ok {
		t.Fatalf("toWire(%T) = %T, not a protobuf message", m, w)
	}
	b, err := proto.Marshal(pm)
	if err != nil {
		t.Fatalf("marshal %T: %v", pm, err)
	}
	fresh := pm.ProtoReflect().Type().New().Interface()
	if err := proto.Unmarshal(b, fresh); err != nil {
		t.Fatalf("unmarshal %T: %v", fresh, err)
	}
	back, err := FromWire(fresh)
	if err != nil {
		t.Fatalf("fromWire(%T): %v", fresh, err)
	}
	return back
}

func TestWireRoundTrip(t *testing.T) {
	for _, m := range wireSamples {
		t.Run(reflect.TypeOf(m).Elem().Name(), func(t *testing.T) {
			if back := roundTrip(t, m); !reflect.DeepEqual(back, m) {
				t.Fatalf("round trip changed the message:\n got %#v\nwant %#v", back, m)
			}
			// The zero value too: nothing absent comes back present
			// (Accepted.Price stays nil, lists stay nil).
			zero := reflect.New(reflect.TypeOf(m).Elem()).Interface()
			if back := roundTrip(t, zero); !reflect.DeepEqual(back, zero) {
				t.Fatalf("zero value came back as %#v", back)
			}
		})
	}
}

// TestWireThroughRemoteSerializer takes each sample through the
// serializer protoactor remote puts every message through (index 0, the
// only one its endpoint writer uses): by type name from the global
// registry on the receiving side, where a type it cannot find is a crash.
func TestWireThroughRemoteSerializer(t *testing.T) {
	for _, m := range wireSamples {
		w, err := ToWire(m)
		must(t, err)
		b, typeName, err := remote.Serialize(w, remote.DefaultSerializerID)
		if err != nil {
			t.Fatalf("remote.Serialize(%T): %v", w, err)
		}
		if !strings.HasPrefix(typeName, "reasonix.worker.v1.") {
			t.Errorf("%T goes on the wire as %q", w, typeName)
		}
		if _, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(typeName)); err != nil {
			t.Fatalf("%s is not registered: %v", typeName, err)
		}
		got, err := remote.Deserialize(b, typeName, remote.DefaultSerializerID)
		if err != nil {
			t.Fatalf("remote.Deserialize(%s): %v", typeName, err)
		}
		back, err := FromWire(got)
		must(t, err)
		if !reflect.DeepEqual(back, m) {
			t.Errorf("%s through the remote serializer:\n got %#v\nwant %#v", typeName, back, m)
		}
	}
}

// TestWireSamplesSetEveryField fails when a sample leaves a field zero,
// so a field added to a boundary message (or to TaskSpec, Budget, Price,
// provider.Usage inside one) fails here until the sample sets it, and
// then TestWireRoundTrip until the mapping carries it.
func TestWireSamplesSetEveryField(t *testing.T) {
	for _, m := range wireSamples {
		checkEveryField(t, reflect.TypeOf(m).Elem().Name(), reflect.ValueOf(m))
	}
}

func checkEveryField(t *testing.T, path string, v reflect.Value) {
	t.Helper()
	if v.IsZero() {
		t.Errorf("%s is zero in wireSamples: set it so the round trip covers it", path)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		checkEveryField(t, path, v.Elem())
	case reflect.Slice:
		for i := range v.Len() {
			checkEveryField(t, path+"["+strconv.Itoa(i)+"]", v.Index(i))
		}
	case reflect.Struct:
		if !strings.HasPrefix(v.Type().PkgPath(), "reasonix/") {
			return
		}
		for i := range v.NumField() {
			checkEveryField(t, path+"."+v.Type().Field(i).Name, v.Field(i))
		}
	}
}

// TestWireCoversEveryMessage ties the three lists together: every type
// declared in msgs.go has a sample, and every top-level message of
// worker.proto is the twin of a sample (or data carried inside one), so
// neither side gains a message the other lacks.
func TestWireCoversEveryMessage(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "msgs.go", nil, parser.SkipObjectResolution)
	must(t, err)
	declared := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, s := range g.Specs {
			declared[s.(*ast.TypeSpec).Name.Name] = true
		}
	}
	sampled := map[string]bool{}
	twins := map[string]bool{}
	for _, m := range wireSamples {
		sampled[reflect.TypeOf(m).Elem().Name()] = true
		w, err := ToWire(m)
		must(t, err)
		twins[string(w.(proto.Message).ProtoReflect().Descriptor().Name())] = true
	}
	if len(declared) < 10 {
		t.Fatalf("found only %d types in msgs.go: %v", len(declared), declared)
	}
	for _, name := range slices.Sorted(maps.Keys(declared)) {
		if !sampled[name] {
			t.Errorf("%s (msgs.go) has no sample in wireSamples", name)
		}
	}
	for _, name := range wireDataMessages {
		twins[name] = true
	}
	msgs := workerpb.File_actors_workerpb_worker_proto.Messages()
	for i := range msgs.Len() {
		name := string(msgs.Get(i).Name())
		if !twins[name] {
			t.Errorf("worker.proto message %s is the twin of no sample and not in wireDataMessages", name)
		}
		delete(twins, name)
	}
	for name := range twins {
		t.Errorf("%s is not a message of worker.proto", name)
	}
	if got := workerpb.File_actors_workerpb_worker_proto.Package(); got != protoreflect.FullName("reasonix.worker.v1") {
		t.Errorf("worker.proto package is %s", got)
	}
}

func TestWireRejectsOtherValues(t *testing.T) {
	for _, m := range []any{
		nil,
		"hello",
		Hello{Protocol: 1},                    // a value, not a pointer
		(*Hello)(nil),                         // a typed nil
		(*TaskEvents)(nil),                    // another typed nil
		&workerpb.Hello{Protocol: 1},          // already a twin
		&event.TaskSpec{ID: "t"},              // plain data, not a message
		&actor.Started{},                      // a system message
		&struct{ TaskID string }{"f1.1"},      // an in-process message
		&event.TextDelta{Text: "not a batch"}, // an event on its own
	} {
		w, err := ToWire(m)
		if err == nil {
			t.Errorf("toWire(%#v) = %#v, want an error", m, w)
			continue
		}
		if !strings.HasPrefix(err.Error(), "worker wire: ") {
			t.Errorf("toWire(%T) error %q does not say where it comes from", m, err)
		}
	}
}

func TestWirePassesOtherValues(t *testing.T) {
	hello := &Hello{Protocol: 1}
	for _, m := range []any{nil, "hello", hello, &actor.Started{}, &struct{ TaskID string }{"f1.1"}} {
		got, err := FromWire(m)
		if err != nil || got != m {
			t.Errorf("fromWire(%#v) = %#v, %v; want it unchanged", m, got, err)
		}
	}
}

// TestWireCopiesLists: a sender may reuse a list once its message is on
// its way, even to a local actor that sees the same twin.
func TestWireCopiesLists(t *testing.T) {
	paths := []string{"a", "b"}
	w, err := ToWire(&Start{Spec: event.TaskSpec{WritePaths: paths}})
	must(t, err)
	paths[0] = "changed"
	back, err := FromWire(w)
	must(t, err)
	if got := back.(*Start).Spec.WritePaths; !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("write paths after the sender changed its list: %v", got)
	}
}

// TestWireEventBatch: every golden event sample, batched as a job sends
// it, comes out of the proxy's side as the same stream-json line.
func TestWireEventBatch(t *testing.T) {
	batch := &TaskEvents{Task: "f1.1", Attempt: 1, First: 1}
	for _, ev := range event.Samples() {
		item, err := EncodeWorkerEvent(ev)
		must(t, err)
		batch.Items = append(batch.Items, item)
	}
	back := roundTrip(t, batch).(*TaskEvents)
	if len(back.Items) != len(event.Samples()) {
		t.Fatalf("%d items came back, want %d", len(back.Items), len(event.Samples()))
	}
	for i, item := range back.Items {
		ev, err := DecodeWorkerEvent(item)
		must(t, err)
		if reflect.TypeOf(ev) != reflect.TypeOf(event.Samples()[i]) {
			t.Fatalf("item %d decodes to %T, want %T", i, ev, event.Samples()[i])
		}
		want, err := event.Encode(event.Samples()[i])
		must(t, err)
		got, err := event.Encode(ev)
		must(t, err)
		if string(got) != string(want) {
			t.Errorf("%s after the wire:\n got %s\nwant %s", ev.Kind(), got, want)
		}
	}
}

func TestWireEventItemErrors(t *testing.T) {
	if _, err := EncodeWorkerEvent(nil); err == nil {
		t.Error("encodeWorkerEvent(nil) succeeded")
	}
	if _, err := EncodeWorkerEvent((*event.TextDelta)(nil)); err == nil {
		t.Error("encodeWorkerEvent of a typed nil succeeded")
	}
	item, err := EncodeWorkerEvent(&event.TextDelta{Meta: event.SampleMeta(1, "f1.1"), Text: "hi"})
	must(t, err)
	if item.Kind != "text_delta" {
		t.Fatalf("item kind %q", item.Kind)
	}
	item.Kind = "notice"
	if ev, err := DecodeWorkerEvent(item); err == nil || !strings.Contains(err.Error(), `"text_delta"`) {
		t.Errorf("an item whose kind is not its line's decoded to %#v, %v", ev, err)
	}
	if ev, err := DecodeWorkerEvent(TaskEvent{Kind: "text_delta", JSON: []byte(`{"type":"text_delta","text":5}`)}); err == nil {
		t.Errorf("a bad line decoded to %#v", ev)
	}
	if ev, err := DecodeWorkerEvent(TaskEvent{}); err == nil {
		t.Errorf("an empty item decoded to %#v", ev)
	}
}

// TestWireBetweenActors sends a hello and its welcome between two actors
// of one system through sendWorker and requestWorker: what arrives is the
// twin, and fromWire gives the plain message back.
func TestWireBetweenActors(t *testing.T) {
	sys := kernel.NewSystem(nil)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		must(t, sys.Shutdown(ctx))
	})
	hello := wireSamples[0].(*Hello)
	welcome := wireSamples[1].(*Welcome)
	type arrival struct {
		raw, plain any
		err        error
	}
	atWorker := make(chan arrival, 1)
	atLink := make(chan arrival, 1)
	worker := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		m, err := FromWire(c.Message())
		if _, ok := m.(*Hello); ok {
			atWorker <- arrival{c.Message(), m, err}
			SendWorker(sys, c, c.Sender(), welcome)
		}
	}))
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		m, err := FromWire(c.Message())
		switch m.(type) {
		case *actor.Started:
			RequestWorker(sys, c, worker, hello)
		case *Welcome:
			atLink <- arrival{c.Message(), m, err}
		}
	}))
	for _, step := range []struct {
		ch   chan arrival
		want any
		twin any
	}{{atWorker, hello, &workerpb.Hello{}}, {atLink, welcome, &workerpb.Welcome{}}} {
		select {
		case got := <-step.ch:
			if reflect.TypeOf(got.raw) != reflect.TypeOf(step.twin) {
				t.Errorf("the actor received %T, want the twin %T", got.raw, step.twin)
			}
			if got.err != nil || !reflect.DeepEqual(got.plain, step.want) {
				t.Errorf("fromWire gave %#v, %v; want %#v", got.plain, got.err, step.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no %T arrived", step.want)
		}
	}
}

// BenchmarkWorkerWire measures a 64-item events batch, the most a job
// sends at once: encode is each event's stream-json line, the twin and its
// protobuf bytes; decode is the reverse on the proxy's side.
func BenchmarkWorkerWire(b *testing.B) {
	batch := benchBatch(b)
	w, err := ToWire(batch)
	if err != nil {
		b.Fatal(err)
	}
	bytes, err := proto.Marshal(w.(proto.Message))
	if err != nil {
		b.Fatal(err)
	}
	events := make([]event.Event, len(batch.Items))
	for i, item := range batch.Items {
		if events[i], err = DecodeWorkerEvent(item); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m := &TaskEvents{Task: batch.Task, Attempt: batch.Attempt, First: batch.First, Items: make([]TaskEvent, len(events))}
			for i, ev := range events {
				if m.Items[i], err = EncodeWorkerEvent(ev); err != nil {
					b.Fatal(err)
				}
			}
			w, err := ToWire(m)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := proto.Marshal(w.(proto.Message)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(bytes)), "wire-bytes/batch")
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var twin workerpb.Events
			if err := proto.Unmarshal(bytes, &twin); err != nil {
				b.Fatal(err)
			}
			m, err := FromWire(&twin)
			if err != nil {
				b.Fatal(err)
			}
			for _, item := range m.(*TaskEvents).Items {
				if _, err := DecodeWorkerEvent(item); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(len(bytes)), "wire-bytes/batch")
	})
}

// benchBatch is 64 events of a typical task: mostly text and reasoning
// deltas, with tool calls, usage and a notice among them.
func benchBatch(b *testing.B) *TaskEvents {
	b.Helper()
	mix := []event.Event{
		&event.TextDelta{Text: "Looking at the parser, the failing case is the trailing comma in "},
		&event.ReasoningDelta{Text: "The test expects an error for an empty list; check how the lexer "},
		&event.TextDelta{Text: "argument lists. I will read the file first."},
		&event.ToolStarted{CallID: "c1", Tool: "read_file", Args: `{"path":"core/ref/parse.go"}`},
		&event.ToolFinished{CallID: "c1", Tool: "read_file", DurationMS: 3, Output: strings.Repeat("func parse(s string) (Node, error) {\n", 20), OutputBytes: 740},
		&event.UsageReported{Usage: provider.Usage{PromptTokens: 5200, CompletionTokens: 180, TotalTokens: 5380, CacheHitTokens: 4800, CacheMissTokens: 400},
			Total: provider.Usage{PromptTokens: 20800, CompletionTokens: 720, TotalTokens: 21520, CacheHitTokens: 19200, CacheMissTokens: 1600}},
		&event.TextDelta{Text: "The fix is one line."},
		&event.Notice{Level: "warn", Message: "rate limited, retrying in 2s"},
	}
	batch := &TaskEvents{Task: "f1.3", Attempt: 1, First: 129}
	for i := range 64 {
		ev := mix[i%len(mix)]
		*ev.EventMeta() = event.Meta{Seq: int64(129 + i), Time: time.Date(2026, 12, 1, 17, 0, 0, i*1000, time.UTC), Session: "s1", Task: "f1.3"}
		item, err := EncodeWorkerEvent(ev)
		if err != nil {
			b.Fatal(err)
		}
		batch.Items = append(batch.Items, item)
	}
	return batch
}
