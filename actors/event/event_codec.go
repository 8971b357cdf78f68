package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// eventTypes makes an empty event of each kind, keyed by its "type" on
// the wire: the inverse of each type's Kind method. It covers every event
// type of the package; TestEventCodecCoversEveryKind compares it with the
// golden samples, which TestGoldenCoversEveryType keeps complete.
var eventTypes = map[string]func() Event{
	(*SessionStarted)(nil).Kind():       func() Event { return new(SessionStarted) },
	(*TextDelta)(nil).Kind():            func() Event { return new(TextDelta) },
	(*ReasoningDelta)(nil).Kind():       func() Event { return new(ReasoningDelta) },
	(*ToolStarted)(nil).Kind():          func() Event { return new(ToolStarted) },
	(*ToolFinished)(nil).Kind():         func() Event { return new(ToolFinished) },
	(*UsageReported)(nil).Kind():        func() Event { return new(UsageReported) },
	(*Notice)(nil).Kind():               func() Event { return new(Notice) },
	(*ErrorOccurred)(nil).Kind():        func() Event { return new(ErrorOccurred) },
	(*Retrying)(nil).Kind():             func() Event { return new(Retrying) },
	(*TurnDone)(nil).Kind():             func() Event { return new(TurnDone) },
	(*TaskRequeued)(nil).Kind():         func() Event { return new(TaskRequeued) },
	(*ApprovalRequested)(nil).Kind():    func() Event { return new(ApprovalRequested) },
	(*ApprovalResolved)(nil).Kind():     func() Event { return new(ApprovalResolved) },
	(*ToolWaiting)(nil).Kind():          func() Event { return new(ToolWaiting) },
	(*TurnStarted)(nil).Kind():          func() Event { return new(TurnStarted) },
	(*PromptQueued)(nil).Kind():         func() Event { return new(PromptQueued) },
	(*PromptRejected)(nil).Kind():       func() Event { return new(PromptRejected) },
	(*PostureChanged)(nil).Kind():       func() Event { return new(PostureChanged) },
	(*EffortChanged)(nil).Kind():        func() Event { return new(EffortChanged) },
	(*CompactionStarted)(nil).Kind():    func() Event { return new(CompactionStarted) },
	(*Compacted)(nil).Kind():            func() Event { return new(Compacted) },
	(*PlanReady)(nil).Kind():            func() Event { return new(PlanReady) },
	(*PlanProposed)(nil).Kind():         func() Event { return new(PlanProposed) },
	(*PlanStep)(nil).Kind():             func() Event { return new(PlanStep) },
	(*TaskQueued)(nil).Kind():           func() Event { return new(TaskQueued) },
	(*BackgroundResult)(nil).Kind():     func() Event { return new(BackgroundResult) },
	(*TaskStarted)(nil).Kind():          func() Event { return new(TaskStarted) },
	(*TaskDone)(nil).Kind():             func() Event { return new(TaskDone) },
	(*Lagged)(nil).Kind():               func() Event { return new(Lagged) },
	(*TodoUpdated)(nil).Kind():          func() Event { return new(TodoUpdated) },
	(*GoalStarted)(nil).Kind():          func() Event { return new(GoalStarted) },
	(*GoalProgressed)(nil).Kind():       func() Event { return new(GoalProgressed) },
	(*GoalEnded)(nil).Kind():            func() Event { return new(GoalEnded) },
	(*ToolProgress)(nil).Kind():         func() Event { return new(ToolProgress) },
	(*ElicitationRequested)(nil).Kind(): func() Event { return new(ElicitationRequested) },
	(*MCPServerUpdated)(nil).Kind():     func() Event { return new(MCPServerUpdated) },
}

// eventKinds is the sorted list of eventTypes' keys, for error messages.
var eventKinds = slices.Sorted(maps.Keys(eventTypes))

// typePrefix starts every line Encode writes.
const typePrefix = `{"type":"`

// DecodeEvent reads one stream-json event line, the inverse of Encode:
// the event of the line's "type" with every field it carries, Meta (seq,
// time, session, task, role) included, so Encode of the result gives the
// line back. Fields the package does not know are ignored, so a line from
// a newer peer still decodes; an unknown or missing type, or a field of
// the wrong JSON type, is an error.
func DecodeEvent(line []byte) (Event, error) {
	kind, err := eventKind(line)
	if err != nil {
		return nil, err
	}
	mk, ok := eventTypes[kind]
	if !ok {
		return nil, fmt.Errorf("event: unknown type %q (known: %s)", kind, strings.Join(eventKinds, ", "))
	}
	ev := mk()
	if err := json.Unmarshal(line, ev); err != nil {
		return nil, fmt.Errorf("%s event: %w", kind, err)
	}
	return ev, nil
}

// eventKind is the "type" of an event line. Encode writes it first and no
// kind needs escaping, so the common case is read off the prefix without
// a second parse; anything else goes through encoding/json.
func eventKind(line []byte) (string, error) {
	if rest, ok := bytes.CutPrefix(line, []byte(typePrefix)); ok {
		if i := bytes.IndexByte(rest, '"'); i >= 0 && bytes.IndexByte(rest[:i], '\\') < 0 {
			return string(rest[:i]), nil
		}
	}
	var head struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return "", fmt.Errorf("event: not a JSON object with a string \"type\": %w", err)
	}
	if head.Type == nil {
		return "", errors.New(`event: missing "type"`)
	}
	return *head.Type, nil
}

// IsNilEvent catches a nil interface and a typed nil pointer, which
// Encode would render as a broken line.
func IsNilEvent(ev Event) bool {
	if ev == nil {
		return true
	}
	v := reflect.ValueOf(ev)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
