package session

import "reasonix/core/provider"

// OpenCalls returns the tool calls of the last assistant message that made
// any, which no tool message after it answers, in call order. A message
// list with open calls is invalid for every OpenAI-compatible API (each
// tool call must be followed by its result), so whoever finds some — the
// executor repairing a crashed turn, a resume of a transcript cut off by a
// kill — appends a result for each before the next request.
func OpenCalls(msgs []provider.Message) []provider.ToolCall {
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == provider.RoleAssistant && len(msgs[i].ToolCalls) > 0 {
			last = i
			break
		}
	}
	if last < 0 {
		return nil
	}
	answered := map[string]bool{}
	for _, m := range msgs[last+1:] {
		if m.Role == provider.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	var open []provider.ToolCall
	for _, c := range msgs[last].ToolCalls {
		if !answered[c.ID] {
			open = append(open, c)
		}
	}
	return open
}
