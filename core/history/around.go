package history

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"reasonix/core/provider"
	"reasonix/core/text"
)

// Around limits.
const (
	DefaultRadius = 3
	MaxRadius     = 10
	// MessageBytes bounds each message Around returns.
	MessageBytes = 2000
)

// Window is the stretch of a file around one message.
type Window struct {
	Ref  Ref
	Path string
	// Source is the project's slug, or ArchiveSource.
	Source string
	// Session is the transcript's session; archive messages carry their
	// own.
	Session string
	// Started is the transcript's creation time, zero for an archive.
	Started time.Time
	// Total is how many messages the file holds.
	Total    int
	Messages []WindowMessage
}

// WindowMessage is one message of a Window, its text cut to MessageBytes.
type WindowMessage struct {
	Ordinal int
	Role    string
	// Session and Time are set for archive messages.
	Session string
	Time    time.Time
	Text    string
	// Cut is how many bytes were cut from the end of Text.
	Cut int
}

// Around reads the file that ref names (looked up under home, the
// project's sessions directory first) and returns up to radius messages
// on each side of it. It reads the file itself, not the index, and counts
// messages exactly as the index does.
func Around(home, sessions string, ref Ref, radius int) (Window, error) {
	switch {
	case radius < 0:
		return Window{}, fmt.Errorf("radius must be between 0 and %d, got %d", MaxRadius, radius)
	case radius > MaxRadius:
		radius = MaxRadius
	}
	path, err := ref.resolve(home, sessions)
	if err != nil {
		return Window{}, err
	}
	w := Window{Ref: ref, Path: path, Source: sourceOf(home, filepath.Dir(path))}
	k := transcriptFile
	if ref.Archive {
		k = archiveFile
	}
	f, err := os.Open(path)
	if err != nil {
		return w, fmt.Errorf("ref %s: %w", ref, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return w, fmt.Errorf("ref %s: %w", ref, err)
	}
	first, last := ref.Ordinal-radius, ref.Ordinal+radius
	_, err = scanLines(f, info.Size(), func(b []byte) error {
		l := decodeLine(k, b)
		if l.header != nil {
			w.Session, w.Started = l.header.ID, l.header.Created
		}
		if l.msg == nil {
			return nil
		}
		w.Total++
		if w.Total < first || w.Total > last {
			return nil
		}
		full := renderMessage(l.msg)
		m := WindowMessage{Ordinal: w.Total, Role: string(l.msg.Role), Text: text.Prefix(full, MessageBytes)}
		m.Cut = len(full) - len(m.Text)
		if k == archiveFile {
			m.Session, m.Time = l.session, l.time
		}
		w.Messages = append(w.Messages, m)
		return nil
	})
	if err != nil {
		return w, fmt.Errorf("ref %s: %w", ref, err)
	}
	if ref.Ordinal > w.Total {
		return w, fmt.Errorf("ref %s: %s holds %s; the ref may be from an index older than the file", ref,
			filepath.Base(path), plural(w.Total, "message"))
	}
	return w, nil
}

// renderMessage is a message as Around shows it: for a tool result the
// call it answers, then its content, then one line per tool call.
func renderMessage(m *provider.Message) string {
	var b strings.Builder
	if m.ToolCallID != "" {
		fmt.Fprintf(&b, "[result of tool call %s]\n", m.ToolCallID)
	}
	b.WriteString(m.Content)
	for _, c := range m.ToolCalls {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[tool call %s %s: %s]", c.ID, c.Name, c.Arguments)
	}
	return b.String()
}

// FormatWindow renders a window for the model.
func FormatWindow(w Window) string {
	var b strings.Builder
	if w.Source == ArchiveSource {
		fmt.Fprintf(&b, "Archive %s, messages %d-%d of %d around #%d:\n",
			filepath.Base(w.Path), firstOrdinal(w), lastOrdinal(w), w.Total, w.Ref.Ordinal)
	} else {
		fmt.Fprintf(&b, "Session %s (project %s", w.Session, w.Source)
		if !w.Started.IsZero() {
			fmt.Fprintf(&b, ", started %s", w.Started.UTC().Format(timeLayout))
		}
		fmt.Fprintf(&b, "), messages %d-%d of %d around #%d:\n", firstOrdinal(w), lastOrdinal(w), w.Total, w.Ref.Ordinal)
	}
	for _, m := range w.Messages {
		mark := ""
		if m.Ordinal == w.Ref.Ordinal {
			mark = " <- hit"
		}
		fmt.Fprintf(&b, "\n--- #%d %s", m.Ordinal, m.Role)
		if m.Session != "" {
			fmt.Fprintf(&b, " session=%s", m.Session)
		}
		if !m.Time.IsZero() {
			fmt.Fprintf(&b, " archived=%s", m.Time.UTC().Format(timeLayout))
		}
		b.WriteString(mark)
		b.WriteString(" ---\n")
		b.WriteString(m.Text)
		if m.Cut > 0 {
			fmt.Fprintf(&b, "%s [%d more bytes not shown]", text.Ellipsis, m.Cut)
		}
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func firstOrdinal(w Window) int {
	if len(w.Messages) == 0 {
		return 0
	}
	return w.Messages[0].Ordinal
}

func lastOrdinal(w Window) int {
	if len(w.Messages) == 0 {
		return 0
	}
	return w.Messages[len(w.Messages)-1].Ordinal
}
