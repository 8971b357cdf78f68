package goalctl

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"reasonix/core/goal"
	"reasonix/core/tool"
)

// TodoTool keeps the goal's todo list. Each call replaces the whole list,
// which must keep the serial contract (goal.CheckTodo); the host owns the
// list, journals it with the goal and carries it over a resume.
type TodoTool struct{ Box *GoalBox }

func (*TodoTool) Name() string { return goal.ToolTodo }
func (*TodoTool) Description() string {
	return "Replace the goal's todo list. Items have content, status (pending, in_progress, completed) and level (0 a phase, 1 a sub-step of the phase above). Exactly one item is in_progress at a time; a phase's sub-steps complete in order and the phase stays pending until they all have. Call with no items to read the list."
}
func (*TodoTool) ReadOnly() bool { return true }
func (*TodoTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"content":{"type":"string"},"status":{"type":"string","enum":["pending","in_progress","completed"]},"level":{"type":"integer","enum":[0,1]}},"required":["content","status"],"additionalProperties":false}}},"additionalProperties":false}`)
}
func (t *TodoTool) Execute(_ context.Context, raw json.RawMessage) (string, error) {
	var args struct {
		Items []goal.Item `json:"items"`
	}
	if err := tool.DecodeArgs(goal.ToolTodo, raw, &args); err != nil {
		return "", err
	}
	if args.Items == nil {
		return RenderTodo(t.Box.List()), nil
	}
	if err := goal.CheckTodo(args.Items); err != nil {
		return "", fmt.Errorf("%s: %w", goal.ToolTodo, err)
	}
	t.Box.putTodo(args.Items)
	return RenderTodo(args.Items), nil
}

// RenderTodo is the todo list as the todo tool shows it to the model.
func RenderTodo(items []goal.Item) string {
	if len(items) == 0 {
		return "The todo list is empty."
	}
	var b strings.Builder
	for _, it := range items {
		mark := map[string]string{goal.TodoPending: "[ ]", goal.TodoInProgress: "[~]", goal.TodoCompleted: "[x]"}[it.Status]
		fmt.Fprintf(&b, "%s%s %s\n", strings.Repeat("  ", it.Level), mark, it.Content)
	}
	return b.String()
}
