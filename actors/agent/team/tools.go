package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"reasonix/core/tool"
)

// The background tools. A task, fleet or parallel_tasks call with
// "background": true returns at once with the ids; each task's result
// comes back on its own and is appended to the conversation as a user
// message at the next step boundary, once. These tools let the model look
// at, wait for, stop and write to its agents; a subagent gets
// send_message to write to its parent and its siblings.
const (
	ToolTaskStatus  = "task_status"
	ToolTaskWait    = "task_wait"
	ToolTaskCancel  = "task_cancel"
	ToolSendMessage = "send_message"
)

// DefaultWaitSeconds and MaxWaitSeconds bound task_wait.
const (
	DefaultWaitSeconds = 300
	MaxWaitSeconds     = 3600
)

// bgTool is the schema side of a background tool; the executor runs it.
type bgTool struct {
	name, desc, schema string
}

func (b *bgTool) Name() string            { return b.name }
func (b *bgTool) Description() string     { return b.desc }
func (b *bgTool) Schema() json.RawMessage { return json.RawMessage(b.schema) }

// ReadOnly is true: none of them changes a file itself.
func (b *bgTool) ReadOnly() bool { return true }

// IsBackground reports whether t is one of the background tools.
func IsBackground(t tool.Tool) bool {
	_, ok := t.(*bgTool)
	return ok
}

// Execute is never called: the executor runs these tools itself.
func (b *bgTool) Execute(context.Context, json.RawMessage) (string, error) {
	return "", errors.New("background agents are not available in this session")
}

const idsProp = `"ids":{"type":"array","items":{"type":"string"},"description":"Task ids or names; omit for every background task."}`

// BackgroundTools returns the parent's tools for its background agents.
func BackgroundTools() []tool.Tool {
	return []tool.Tool{
		&bgTool{name: ToolTaskStatus,
			desc:   "Show the background tasks: state, last tool, tokens so far and the last lines of output of each one running, and how each ended one ended.",
			schema: `{"type":"object","additionalProperties":false,"properties":{` + idsProp + `}}`},
		&bgTool{name: ToolTaskWait,
			desc: "Wait until background tasks end and return their results (they are then not delivered again). " +
				"Waits for all of ids (default: every running background task), or only for the first with first=true, at most timeout_seconds.",
			schema: fmt.Sprintf(`{"type":"object","additionalProperties":false,"properties":{%s,"timeout_seconds":{"type":"integer","minimum":1,"maximum":%d,"description":"How long to wait at most (default %d)."},"first":{"type":"boolean","description":"Return as soon as one of them ends."}}}`,
				idsProp, MaxWaitSeconds, DefaultWaitSeconds)},
		&bgTool{name: ToolTaskCancel,
			desc:   "Cancel a background task (by id or name) or a whole background fleet (by its id). Its result, cancelled, still comes.",
			schema: `{"type":"object","additionalProperties":false,"required":["id"],"properties":{"id":{"type":"string","description":"A task id or name, or a fleet id."}}}`},
		&bgTool{name: ToolSendMessage,
			desc: "Send a message to a subagent by task id or name. A running one reads it at its next step; one that has finished " +
				"continues its own conversation with it for one more turn, and its new answer comes back to you like a background result.",
			schema: `{"type":"object","additionalProperties":false,"required":["to","text"],"properties":{"to":{"type":"string","description":"A task id or name."},"text":{"type":"string","description":"The message."}}}`},
	}
}

// SubagentMessageTool is a subagent's send_message: to a sibling, or to
// its parent.
func SubagentMessageTool() tool.Tool {
	return &bgTool{name: ToolSendMessage,
		desc: `Send a message to another agent of this session: "parent" (the agent that gave you your task), or a sibling task by id or name. ` +
			"It is read at that agent's next step. Use it to share a finding others need, not to report your final answer, which goes back on its own.",
		schema: `{"type":"object","additionalProperties":false,"required":["to","text"],"properties":{"to":{"type":"string","description":"\"parent\", or a task id or name."},"text":{"type":"string","description":"The message."}}}`}
}

// Args are the arguments of the background tools (task_status,
// task_wait, task_cancel, send_message).
type Args struct {
	IDs     []string `json:"ids"`
	Timeout int      `json:"timeout_seconds"`
	First   bool     `json:"first"`
	ID      string   `json:"id"`
	To      string   `json:"to"`
	Text    string   `json:"text"`
}
