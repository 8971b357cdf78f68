package session

import "reasonix/core/provider"

// InterruptedResult is the tool result Repair gives a call that never
// returned. It starts with "Error:" like every failed tool result, so the
// model reads it as a failure to adapt to, not as the call's output.
const InterruptedResult = "Error: interrupted: the session ended before this call returned"

// Repair makes a loaded message list valid for the next request: every
// open tool call (OpenCalls) gets a tool message saying it was
// interrupted. repaired is msgs with those messages appended, in a new
// slice; added is just the new messages, which a resume appends to the
// transcript so the repair is recorded once and a second resume finds
// nothing to add.
func Repair(msgs []provider.Message) (repaired, added []provider.Message) {
	for _, call := range OpenCalls(msgs) {
		added = append(added, provider.Message{
			Role: provider.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: InterruptedResult,
		})
	}
	repaired = make([]provider.Message, 0, len(msgs)+len(added))
	return append(append(repaired, msgs...), added...), added
}
