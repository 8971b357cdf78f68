package memory

import (
	"fmt"
	"strings"
)

// maxIndexEntries bounds the memory index in the system prompt.
const maxIndexEntries = 50

// Index renders the titles of the active memories (project first, then
// the user's) for the session's system prompt, one line each with its
// description, or "" when there are none. The bodies stay behind the
// memory tool, so the prompt grows by a line per memory.
func (s *Store) Index() string {
	entries, err := s.List()
	if err != nil || len(entries) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Saved memories (read one with the memory tool, operation read, before relying on it):")
	for i, e := range entries {
		if i == maxIndexEntries {
			fmt.Fprintf(&b, "\n- … %d more (memory tool, operation list)", len(entries)-i)
			break
		}
		fmt.Fprintf(&b, "\n- %s: %s", e.Ref(), oneLine(e.Description))
	}
	return b.String()
}
