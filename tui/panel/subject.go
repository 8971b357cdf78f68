package panel

import (
	"encoding/json"
	"strings"

	"reasonix/core/text"
)

// ToolSubject is what a call is about, from its arguments: the command,
// path, pattern or URL when it has one, else its arguments on one line.
func ToolSubject(tool, args string) string {
	if Delegation(tool) {
		if lines := TaskLines(args, 1000); len(lines) > 1 {
			// "16 tasks: task 1 · task 2 · …", not the call's JSON.
			prompts := make([]string, 0, len(lines)-1)
			for _, l := range lines[1:] {
				_, p, _ := strings.Cut(l, ". ")
				prompts = append(prompts, p)
			}
			return text.OneLine(lines[0]+" "+strings.Join(prompts, " · "), 200)
		}
	}
	var fields map[string]any
	if json.Unmarshal([]byte(args), &fields) == nil {
		for _, k := range []string{"command", "path", "file_path", "pattern", "query", "url", "description", "prompt"} {
			if v, ok := fields[k].(string); ok && v != "" {
				return text.OneLine(v, 200)
			}
		}
	}
	return text.OneLine(args, 200)
}
