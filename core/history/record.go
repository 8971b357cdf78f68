package history

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"reasonix/core/compact"
	"reasonix/core/provider"
	"reasonix/core/session"
	"reasonix/core/text"
)

// maxIndexedBytes is how much of one message's text is indexed. Tool
// results can be hundreds of KiB; the words that find one are nearly
// always in its first part, and Around still shows the message itself.
const maxIndexedBytes = 64 << 10

// kind is how a file's lines are read.
type kind int

const (
	transcriptFile kind = iota
	archiveFile
)

// transcriptRecord is one transcript line. Records of other types than
// header and message (compaction markers, newer additions) are skipped.
type transcriptRecord struct {
	Type    string            `json:"type"`
	Header  *session.Header   `json:"header"`
	Message *provider.Message `json:"message"`
}

// line is what one complete line holds for the index: a header, a
// message, or neither.
type line struct {
	header *session.Header
	msg    *provider.Message
	// session and time come from an archive record; a transcript's are
	// its header's.
	session string
	time    time.Time
}

// decodeLine reads one line of a file of kind k. A line that does not
// decode is skipped like an unknown record: the index is best effort and
// must not stop at one bad line that Load would report.
func decodeLine(k kind, b []byte) line {
	if k == archiveFile {
		var rec compact.ArchiveRecord
		if json.Unmarshal(b, &rec) != nil {
			return line{}
		}
		return line{msg: &rec.Message, session: rec.Session, time: rec.Time}
	}
	var rec transcriptRecord
	if json.Unmarshal(b, &rec) != nil {
		return line{}
	}
	switch rec.Type {
	case "header":
		return line{header: rec.Header}
	case "message":
		return line{msg: rec.Message}
	}
	return line{}
}

// scanLines calls each with every complete line (one ending in '\n') of
// the first limit bytes of r, newline included, and returns how many
// bytes those lines hold. A final line without its newline is an append
// in progress: it is left for a later scan.
func scanLines(r io.Reader, limit int64, each func(b []byte) error) (int64, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, limit), 64<<10)
	var (
		done int64
		long []byte
	)
	for {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = br.ReadSlice('\n')
				long = append(long, b...)
			}
			b = long
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return done, nil
			}
			return done, fmt.Errorf("read: %w", err)
		}
		if err := each(b); err != nil {
			return done, err
		}
		done += int64(len(b))
	}
}

// messageText is what the index holds for a message: its content, the
// names and argument values of its tool calls, and (for a tool result)
// the result. Reasoning is left out: it restates the rest and would make
// every thought-about word a hit. System prompts are left out: every
// session starts with nearly the same one. Calls of the history tool and
// their results are left out too: a search would otherwise find the
// earlier searches for the same words, and their results, which only
// repeat other messages. An empty text is not indexed.
func messageText(m *provider.Message) string {
	if m.Role == provider.RoleSystem || (m.Role == provider.RoleTool && m.Name == toolName) {
		return ""
	}
	var b strings.Builder
	b.WriteString(m.Content)
	for _, c := range m.ToolCalls {
		if c.Name == toolName {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Name)
		b.WriteByte(' ')
		writeArgs(&b, c.Arguments)
	}
	return text.Prefix(b.String(), maxIndexedBytes)
}

// writeArgs writes the keys and string values of a tool call's JSON
// arguments, so escapes such as \n or \u003c do not end up in the index
// as words; arguments that are not JSON are written as they are.
func writeArgs(b *strings.Builder, raw string) {
	var v any
	if json.Unmarshal([]byte(raw), &v) != nil {
		b.WriteString(raw)
		return
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				b.WriteString(k)
				b.WriteString(": ")
				walk(v[k])
				b.WriteByte(' ')
			}
		case []any:
			for _, e := range v {
				walk(e)
				b.WriteByte(' ')
			}
		case string:
			b.WriteString(v)
		case nil:
		default:
			fmt.Fprint(b, v)
		}
	}
	walk(v)
}
