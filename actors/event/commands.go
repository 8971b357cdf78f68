package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"

	"reasonix/core/mcp"
	"reasonix/core/permission"
)

// Command is one thing a frontend asks of a session, the input half of the
// stream-json contract (docs/SPEC.md, "Commands"): one JSON object per line
// with a "type" and fixed field names. DecodeCommand reads one and
// Session.Do applies it; both refuse what they do not understand with an
// error the caller reports (as an error event), so a bad line never stops a
// frontend's stream.
type Command interface {
	// Kind is the command's "type" on the wire.
	Kind() string
	// Validate checks the values a decoded or hand-built command holds.
	Validate() error
}

// PromptCmd runs Text as a turn. Queue (the default) puts it behind a
// running turn; false refuses it with prompt_rejected instead.
type PromptCmd struct {
	Text  string `json:"text"`
	Queue bool   `json:"queue"`
}

// CancelCmd stops the running turn; it ends with status cancelled.
type CancelCmd struct{}

// CancelTaskCmd stops one subagent task, named by its task id.
type CancelTaskCmd struct {
	ID string `json:"id"`
}

// SendMessageCmd writes Text to one of the session's agents, as the user:
// To is a task id or name. A running agent reads it at its next step; one
// that has finished runs one more turn of its own conversation with it.
type SendMessageCmd struct {
	To   string `json:"to"`
	Text string `json:"text"`
}

// ApproveCmd answers an approval_requested, named by its request_id.
// Decision is once, session, always or deny; Rule is the scope granted by
// session and always (empty: the narrowest suggestion) and is refused with
// the other two, where it would mean nothing.
type ApproveCmd struct {
	ID       string `json:"id"`
	Decision string `json:"decision"`
	Rule     string `json:"rule,omitempty"`
}

// ElicitationCmd answers an elicitation_requested, named by its
// request_id. Action is accept, decline or cancel; Content holds the form's
// values and goes only with accept, as MCP drops it otherwise.
type ElicitationCmd struct {
	ID      string         `json:"id"`
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// SetPostureCmd switches the session's approval posture: ask, auto or
// yolo.
type SetPostureCmd struct {
	Posture string `json:"posture"`
}

// SetEffortCmd sets the reasoning effort of the session's next requests,
// as /effort does: low, medium, high or max.
type SetEffortCmd struct {
	Effort string `json:"effort"`
}

// CompactCmd runs a fold of the older work now, as /compact does: queued
// like a prompt, it is a turn of its own that never reaches the model as a
// prompt.
type CompactCmd struct{}

// GoalCmd starts a long autonomous goal, as /goal does: queued like a
// prompt, it is one turn that runs until the goal ends. Strategy is
// research or simple to force one; empty lets the host choose.
type GoalCmd struct {
	Objective string `json:"objective"`
	Strategy  string `json:"strategy,omitempty"`
}

// GoalClearCmd stops the running turn and removes the active goal, as
// /goal clear does.
type GoalClearCmd struct{}

// Kind implementations: the wire names.
func (*PromptCmd) Kind() string      { return "prompt" }
func (*CancelCmd) Kind() string      { return "cancel" }
func (*CancelTaskCmd) Kind() string  { return "cancel_task" }
func (*ApproveCmd) Kind() string     { return "approve" }
func (*ElicitationCmd) Kind() string { return "elicitation" }
func (*SetPostureCmd) Kind() string  { return "set_posture" }
func (*SetEffortCmd) Kind() string   { return "set_effort" }
func (*CompactCmd) Kind() string     { return "compact" }
func (*GoalCmd) Kind() string        { return "goal" }
func (*GoalClearCmd) Kind() string   { return "goal_clear" }
func (*SendMessageCmd) Kind() string { return "send_message" }

// The values a field may take, in the order error messages list them.
var (
	approveDecisions  = []string{ApproveOnce, ApproveSession, ApproveAlways, ApproveDeny}
	elicitActions     = []string{mcp.ElicitAccept, mcp.ElicitDecline, mcp.ElicitCancel}
	commandPostures   = []string{string(permission.PostureAsk), string(permission.PostureAuto), string(permission.PostureYolo)}
	commandKindsOrder = []string{"prompt", "cancel", "cancel_task", "approve", "elicitation", "set_posture", "set_effort", "compact", "goal", "goal_clear", "send_message"}
	goalStrategies    = []string{"research", "simple"}
)

// Efforts are the reasoning efforts a session can be set to, lowest first.
var Efforts = []string{"low", "medium", "high", "max"}

// commandDecoders reads each command's fields. fields lists the names it
// accepts besides "type", so an unknown one is refused by name.
var commandDecoders = map[string]struct {
	fields []string
	decode func(r *fieldReader) Command
}{
	"prompt": {[]string{"text", "queue"}, func(r *fieldReader) Command {
		return &PromptCmd{Text: r.str("text", true), Queue: r.boolean("queue", true)}
	}},
	"cancel": {nil, func(*fieldReader) Command { return &CancelCmd{} }},
	"cancel_task": {[]string{"id"}, func(r *fieldReader) Command {
		return &CancelTaskCmd{ID: r.str("id", true)}
	}},
	"approve": {[]string{"id", "decision", "rule"}, func(r *fieldReader) Command {
		return &ApproveCmd{ID: r.str("id", true), Decision: r.str("decision", true), Rule: r.str("rule", false)}
	}},
	"elicitation": {[]string{"id", "action", "content"}, func(r *fieldReader) Command {
		return &ElicitationCmd{ID: r.str("id", true), Action: r.str("action", true), Content: r.object("content")}
	}},
	"set_posture": {[]string{"posture"}, func(r *fieldReader) Command {
		return &SetPostureCmd{Posture: r.str("posture", true)}
	}},
	"set_effort": {[]string{"effort"}, func(r *fieldReader) Command {
		return &SetEffortCmd{Effort: r.str("effort", true)}
	}},
	"compact": {nil, func(*fieldReader) Command { return &CompactCmd{} }},
	"goal": {[]string{"objective", "strategy"}, func(r *fieldReader) Command {
		return &GoalCmd{Objective: r.str("objective", true), Strategy: r.str("strategy", false)}
	}},
	"goal_clear": {nil, func(*fieldReader) Command { return &GoalClearCmd{} }},
	"send_message": {[]string{"to", "text"}, func(r *fieldReader) Command {
		return &SendMessageCmd{To: r.str("to", true), Text: r.str("text", true)}
	}},
}

// DecodeCommand reads one command line. It is strict, because a frontend
// that misspells a field should learn so rather than see it ignored: the
// line must be one JSON object with a known "type", only that type's
// fields spelled exactly (JSON's usual case-insensitive matching does not
// apply), each once, with the right JSON type, required ones present and
// enumerated ones holding an allowed value.
func DecodeCommand(line []byte) (Command, error) {
	fields, err := objectFields(line)
	if err != nil {
		return nil, fmt.Errorf("command: %w", err)
	}
	raw, ok := fields["type"]
	if !ok {
		return nil, fmt.Errorf("command: missing \"type\" (one of %s)", strings.Join(commandKindsOrder, ", "))
	}
	var kind string
	if err := json.Unmarshal(raw, &kind); err != nil || isNull(raw) {
		return nil, fmt.Errorf("command: \"type\" must be a string (one of %s)", strings.Join(commandKindsOrder, ", "))
	}
	dec, ok := commandDecoders[kind]
	if !ok {
		return nil, fmt.Errorf("command: unknown type %q: want one of %s", kind, strings.Join(commandKindsOrder, ", "))
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if name != "type" && !slices.Contains(dec.fields, name) {
			known := "none"
			if len(dec.fields) > 0 {
				known = strings.Join(dec.fields, ", ")
			}
			return nil, fmt.Errorf("%s command: unknown field %q (its fields: %s)", kind, name, known)
		}
	}
	r := &fieldReader{kind: kind, fields: fields}
	cmd := dec.decode(r)
	if r.err != nil {
		return nil, r.err
	}
	if err := cmd.Validate(); err != nil {
		return nil, err
	}
	return cmd, nil
}

// EncodeCommand renders cmd as DecodeCommand reads it: one JSON object with
// "type" first. A frontend written in Go sends what this returns.
func EncodeCommand(cmd Command) ([]byte, error) {
	if IsNilCommand(cmd) {
		return nil, errors.New("encode command: nil command")
	}
	body, err := json.Marshal(cmd)
	if err != nil {
		return nil, fmt.Errorf("encode %s command: %w", cmd.Kind(), err)
	}
	kind, _ := json.Marshal(cmd.Kind())
	var b bytes.Buffer
	b.WriteString(`{"type":`)
	b.Write(kind)
	if len(body) > 2 {
		b.WriteByte(',')
		b.Write(body[1:])
	} else {
		b.WriteByte('}')
	}
	return b.Bytes(), nil
}

func (c *PromptCmd) Validate() error {
	if strings.TrimSpace(c.Text) == "" {
		return errors.New(`prompt command: "text" is empty`)
	}
	return nil
}

func (*CancelCmd) Validate() error    { return nil }
func (*CompactCmd) Validate() error   { return nil }
func (*GoalClearCmd) Validate() error { return nil }

func (c *GoalCmd) Validate() error {
	if strings.TrimSpace(c.Objective) == "" {
		return errors.New(`goal command: "objective" is empty`)
	}
	if c.Strategy != "" && !slices.Contains(goalStrategies, c.Strategy) {
		return fmt.Errorf("goal command: strategy %q: want %s", c.Strategy, OrList(goalStrategies))
	}
	return nil
}

func (c *SendMessageCmd) Validate() error {
	switch {
	case strings.TrimSpace(c.To) == "":
		return errors.New(`send_message command: "to" is empty`)
	case strings.TrimSpace(c.Text) == "":
		return errors.New(`send_message command: "text" is empty`)
	}
	return nil
}

func (c *CancelTaskCmd) Validate() error {
	if c.ID == "" {
		return errors.New(`cancel_task command: "id" is empty`)
	}
	return nil
}

func (c *ApproveCmd) Validate() error {
	if c.ID == "" {
		return errors.New(`approve command: "id" is empty`)
	}
	if !slices.Contains(approveDecisions, c.Decision) {
		return fmt.Errorf("approve command: decision %q: want %s", c.Decision, OrList(approveDecisions))
	}
	if c.Rule != "" && c.Decision != ApproveSession && c.Decision != ApproveAlways {
		return fmt.Errorf("approve command: a rule goes only with decision session or always, not %s", c.Decision)
	}
	return nil
}

func (c *ElicitationCmd) Validate() error {
	if c.ID == "" {
		return errors.New(`elicitation command: "id" is empty`)
	}
	if _, err := ElicitationServer(c.ID); err != nil {
		return fmt.Errorf("elicitation command: %w", err)
	}
	if !slices.Contains(elicitActions, c.Action) {
		return fmt.Errorf("elicitation command: action %q: want %s", c.Action, OrList(elicitActions))
	}
	if c.Content != nil && c.Action != mcp.ElicitAccept {
		return fmt.Errorf("elicitation command: content goes only with action accept, not %s", c.Action)
	}
	return nil
}

func (c *SetEffortCmd) Validate() error {
	if !slices.Contains(Efforts, c.Effort) {
		return fmt.Errorf("set_effort command: effort %q: want %s", c.Effort, OrList(Efforts))
	}
	return nil
}

func (c *SetPostureCmd) Validate() error {
	if !slices.Contains(commandPostures, c.Posture) {
		return fmt.Errorf("set_posture command: posture %q: want %s", c.Posture, OrList(commandPostures))
	}
	return nil
}

// ElicitationServer is the MCP server an elicitation request id belongs
// to. The connection's gate names its requests <server>-<n> (mcpconn.go),
// and n is a decimal counter, so the server is everything before the last
// dash even when its own name has dashes. That spares frontends from
// echoing the server, which the session needs to route the answer.
func ElicitationServer(id string) (string, error) {
	i := strings.LastIndexByte(id, '-')
	n := id[i+1:]
	if i <= 0 || n == "" || strings.Trim(n, "0123456789") != "" {
		return "", fmt.Errorf("id %q is not the request_id of an elicitation_requested (<server>-<n>)", id)
	}
	return id[:i], nil
}

// fieldReader decodes the fields of one command, keeping the first error
// so each decoder reads as a plain list of fields.
type fieldReader struct {
	kind   string
	fields map[string]json.RawMessage
	err    error
}

func (r *fieldReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(r.kind+" command: "+format, args...)
	}
}

// str reads a string field; a missing optional one is empty.
func (r *fieldReader) str(name string, required bool) string {
	raw, ok := r.fields[name]
	if !ok {
		if required {
			r.fail("missing %q", name)
		}
		return ""
	}
	var s string
	if isNull(raw) || json.Unmarshal(raw, &s) != nil {
		r.fail("%q must be a string", name)
	}
	return s
}

// boolean reads a boolean field, def when it is missing.
func (r *fieldReader) boolean(name string, def bool) bool {
	raw, ok := r.fields[name]
	if !ok {
		return def
	}
	var b bool
	if isNull(raw) || json.Unmarshal(raw, &b) != nil {
		r.fail("%q must be true or false", name)
	}
	return b
}

// object reads an optional JSON object field. An empty object reads as
// none, so a command and its re-encoding are the same value.
func (r *fieldReader) object(name string) map[string]any {
	raw, ok := r.fields[name]
	if !ok {
		return nil
	}
	var m map[string]any
	if isNull(raw) || json.Unmarshal(raw, &m) != nil {
		r.fail("%q must be a JSON object", name)
		return nil
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// objectFields splits one JSON object into its fields, exactly as spelled,
// refusing duplicates (which encoding/json would silently resolve to the
// last) and anything after the object.
func objectFields(line []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("empty line: want a JSON object")
	}
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("want a JSON object")
	}
	fields := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, errors.New("invalid JSON: want a field name")
		}
		if _, dup := fields[name]; dup {
			return nil, fmt.Errorf("field %q given twice", name)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("invalid JSON in %q: %w", name, err)
		}
		fields[name] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one JSON value on the line")
	}
	return fields, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// IsNilCommand catches a nil interface and a typed nil pointer, which
// would otherwise panic in validate.
func IsNilCommand(cmd Command) bool {
	if cmd == nil {
		return true
	}
	v := reflect.ValueOf(cmd)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// OrList renders allowed values as "a, b or c".
func OrList(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}
