package panel

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"reasonix/actors/event"
)

// ApprovalDetail is what an approval shows of the call beyond its subject:
// the diff of a file write or edit (the request's preview), the tasks of
// a delegation. At most rows lines; the rest is counted.
func ApprovalDetail(a *event.ApprovalRequested, width, rows int) string {
	var lines []string
	switch {
	case a.Preview != "":
		for _, l := range strings.Split(a.Preview, "\n") {
			lines = append(lines, diffLine(ansi.Truncate(l, max(width-4, 10), "…")))
		}
	case Delegation(a.Tool):
		lines = TaskLines(a.Args, width)
	}
	if len(lines) == 0 {
		return ""
	}
	rows = max(rows, 3)
	if len(lines) > rows {
		more := len(lines) - rows + 1
		lines = append(lines[:rows-1], styleFaint.Render(fmt.Sprintf("… %d more lines", more)))
	}
	return "  " + strings.Join(lines, "\n  ")
}

// diffLine colours one line of a unified diff.
func diffLine(l string) string {
	switch {
	case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		return styleFaint.Render(l)
	case strings.HasPrefix(l, "+"):
		return styleOK.Render(l)
	case strings.HasPrefix(l, "-"):
		return styleFailed.Render(l)
	case strings.HasPrefix(l, "@@"):
		return styleRunning.Render(l)
	}
	return l
}

// TaskLines lists a delegation's tasks: how many, and each one's prompt on
// a line.
func TaskLines(args string, width int) []string {
	var call struct {
		Prompt  string `json:"prompt"`
		Profile string `json:"profile"`
		Tasks   []struct {
			Name    string `json:"name"`
			Prompt  string `json:"prompt"`
			Profile string `json:"profile"`
		} `json:"tasks"`
	}
	if json.Unmarshal([]byte(args), &call) != nil {
		return nil
	}
	if call.Prompt != "" && len(call.Tasks) == 0 {
		label := "1 task: "
		if call.Profile != "" {
			label += "[" + call.Profile + "] "
		}
		return []string{ansi.Truncate(label+clean(call.Prompt), max(width-4, 10), "…")}
	}
	out := []string{fmt.Sprintf("%d tasks:", len(call.Tasks))}
	for i, t := range call.Tasks {
		label := fmt.Sprintf("%d. ", i+1)
		if t.Profile != "" {
			label += "[" + t.Profile + "] "
		}
		out = append(out, ansi.Truncate(label+clean(t.Prompt), max(width-4, 10), "…"))
	}
	return out
}

// Delegation reports the tools that hand work to subagents; their
// arguments are shown as the tasks they start, not as JSON.
func Delegation(tool string) bool {
	return tool == "fleet" || tool == "parallel_tasks" || tool == "task"
}
