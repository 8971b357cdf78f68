package skill

import (
	"fmt"
	"sort"
	"strings"
)

// maxIndexEntries bounds the skill index in the system prompt.
const maxIndexEntries = 100

// Index renders the skills and subagent profiles the model may find on its
// own, for the session's system prompt: one line each with the name and
// the description, a profile marked as one, a plain skill with the file to
// read. Skills whose invocation is manual are left out (a user runs them
// with /<name>), and "" is returned when nothing is left.
func Index(st *Store) string {
	if st == nil {
		return ""
	}
	var lines []string
	for _, s := range st.Skills() {
		if s.Invocation == InvocationManual {
			continue
		}
		desc := strings.Join(strings.Fields(s.Description), " ")
		switch {
		case s.IsProfile():
			lines = append(lines, fmt.Sprintf("- %s (subagent profile): %s", s.Name, desc))
		case s.Path != "":
			lines = append(lines, fmt.Sprintf("- %s: %s (read %s)", s.Name, desc, s.Path))
		default:
			lines = append(lines, fmt.Sprintf("- %s: %s", s.Name, desc))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	sort.Strings(lines)
	more := ""
	if len(lines) > maxIndexEntries {
		more = fmt.Sprintf("\n- … %d more not listed", len(lines)-maxIndexEntries)
		lines = lines[:maxIndexEntries]
	}
	return "Skills (a subagent profile runs through the task or fleet tool with its name as profile; read a skill's file before following it):\n" +
		strings.Join(lines, "\n") + more
}
