package panel

import (
	"strings"

	"reasonix/core/text"
)

// Bounds of one task's streamed text: what the detail view can show, and
// what 64 chatty tasks may hold together (64 × maxRingBytes).
const (
	maxRingLines = 200
	maxRingBytes = 32 << 10
	// maxLineBytes cuts a line that never ends (a model writing one long
	// paragraph) into pieces, so the open line is bounded too.
	maxLineBytes = 2 << 10
)

// ring keeps the last lines of a task's streamed text: at most
// maxRingLines complete lines of at most maxRingBytes in all, plus the
// line still being written. Appending is amortised O(len(text)).
type ring struct {
	lines []string // circular once full; head is the oldest
	head  int
	bytes int
	open  strings.Builder
}

// write appends streamed text, ending a line at each newline.
func (r *ring) write(s string) {
	for s != "" {
		i := strings.IndexByte(s, '\n')
		chunk := s
		if i >= 0 {
			chunk = s[:i]
		}
		for r.open.Len()+len(chunk) > maxLineBytes {
			room := text.Prefix(chunk, maxLineBytes-r.open.Len())
			if room == "" && r.open.Len() == 0 {
				// Not even one rune fits an empty line; cannot happen with
				// maxLineBytes ≥ 4, but never loop on it.
				room = chunk
			}
			r.open.WriteString(room)
			chunk = chunk[len(room):]
			r.endLine()
		}
		r.open.WriteString(chunk)
		if i < 0 {
			return
		}
		r.endLine()
		s = s[i+1:]
	}
}

// line adds one complete line, ending the open one first.
func (r *ring) line(s string) {
	if r.open.Len() > 0 {
		r.endLine()
	}
	r.open.WriteString(text.Prefix(s, maxLineBytes))
	r.endLine()
}

func (r *ring) endLine() {
	s := r.open.String()
	r.open.Reset()
	r.push(s)
}

func (r *ring) push(s string) {
	if len(r.lines) < maxRingLines {
		r.lines = append(r.lines, s)
	} else {
		r.bytes -= len(r.lines[r.head])
		r.lines[r.head] = s
		r.head = (r.head + 1) % maxRingLines
	}
	r.bytes += len(s)
	for r.bytes > maxRingBytes && r.len() > 1 {
		r.dropOldest()
	}
}

// dropOldest removes the oldest line; the ring stays in circular order.
func (r *ring) dropOldest() {
	if len(r.lines) < maxRingLines {
		r.bytes -= len(r.lines[0])
		r.lines[0] = ""
		r.lines = r.lines[1:]
		return
	}
	// A full ring that is over its byte bound is unrolled into a slice,
	// oldest first, and shrinks from there.
	unrolled := make([]string, 0, maxRingLines)
	unrolled = append(unrolled, r.lines[r.head:]...)
	unrolled = append(unrolled, r.lines[:r.head]...)
	r.lines, r.head = unrolled, 0
	r.dropOldest()
}

func (r *ring) len() int { return len(r.lines) }

// at is the i-th stored line, oldest first.
func (r *ring) at(i int) string {
	return r.lines[(r.head+i)%len(r.lines)]
}

// tail returns up to n lines, oldest first, the open line last when it
// holds anything.
func (r *ring) tail(n int) []string {
	open := r.open.Len() > 0
	total := r.len()
	if open {
		total++
	}
	n = min(n, total)
	out := make([]string, 0, n)
	for i := total - n; i < total; i++ {
		if i == r.len() {
			out = append(out, r.open.String())
		} else {
			out = append(out, r.at(i))
		}
	}
	return out
}
