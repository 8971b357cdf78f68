package ref

import (
	"html"
	"strings"
)

// Split undoes Expand for display: it takes the blocks Expand put before a
// message off its front and returns the message as the user typed it and
// the paths the blocks were for, in order. Text that does not start with a
// block comes back whole. A block is recognised by its opening tag and
// ends at the first closing tag on a line of its own followed by the blank
// line Expand writes: a file whose own text holds that sequence ends its
// block early, and the rest is shown as typed text, never lost.
func Split(text string) (typed string, paths []string) {
	rest := text
	for {
		kind := ""
		switch {
		case strings.HasPrefix(rest, `<file path="`):
			kind = "file"
		case strings.HasPrefix(rest, `<dir path="`):
			kind = "dir"
		default:
			return rest, paths
		}
		head, _, ok := strings.Cut(rest, ">")
		if !ok {
			return rest, paths
		}
		var next string
		if strings.HasSuffix(head, "/") {
			tail, found := strings.CutPrefix(rest[len(head)+1:], "\n\n")
			if !found {
				return rest, paths
			}
			next = tail
		} else {
			_, tail, found := strings.Cut(rest, "\n</"+kind+">\n\n")
			if !found {
				return rest, paths
			}
			next = tail
		}
		attr := head[len(`<`+kind+` path="`):]
		p, _, _ := strings.Cut(attr, `"`)
		paths = append(paths, html.UnescapeString(p))
		rest = next
	}
}
