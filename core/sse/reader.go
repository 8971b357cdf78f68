package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// DefaultMaxLine is the longest line, in bytes and excluding its line
// ending, that NewReader accepts. Chat-completion chunks are far smaller;
// the cap exists to bound memory, not to shape traffic.
const DefaultMaxLine = 4 << 20

// ErrLineTooLong is wrapped by the error Next returns when a line, or the
// data of one event, exceeds the Reader's limit. The Reader is unusable
// afterwards.
var ErrLineTooLong = errors.New("sse: line too long")

// minBuffer is the initial buffer size; it grows on demand up to the line
// cap so that many idle readers stay cheap.
const minBuffer = 4 << 10

// maxEmptyReads bounds how many consecutive (0, nil) reads the Reader
// tolerates before giving up with io.ErrNoProgress, as bufio does.
const maxEmptyReads = 100

// Event is one dispatched event.
type Event struct {
	// ID is the value of this event's id field. HasID reports whether the
	// field was present at all, so an explicit empty id (which resets the
	// last event ID) can be told from an absent one.
	ID    string
	HasID bool
	// Event is the event type from the event field; empty when absent,
	// which the standard treats as "message".
	Event string
	// Data is the event payload: every data field of the event joined
	// with "\n". It is passed through byte for byte, without UTF-8
	// validation.
	Data string
	// Retry is the reconnection delay from this event's retry field, or
	// zero when the event has none.
	Retry time.Duration
}

// Reader parses events from an underlying byte stream.
type Reader struct {
	src     io.Reader
	maxLine int

	buf  []byte
	r, w int
	err  error // sticky error from src, returned once buffered bytes are used

	bomChecked bool
	skipLF     bool // the last line ended in CR; a following LF belongs to it

	// Per-event state, reset at each blank line.
	data    []byte
	hasData bool
	pending bool // a field line has been read since the last blank line
	event   string
	id      string
	hasID   bool
	retry   time.Duration

	lastID    string
	lastRetry time.Duration

	fatal error // set once Next has failed; returned forever after
}

// NewReader returns a Reader over src with the DefaultMaxLine limit.
func NewReader(src io.Reader) *Reader {
	return NewReaderSize(src, DefaultMaxLine)
}

// NewReaderSize returns a Reader over src that rejects lines longer than
// maxLine bytes. A maxLine below 1 means DefaultMaxLine.
func NewReaderSize(src io.Reader, maxLine int) *Reader {
	if maxLine < 1 {
		maxLine = DefaultMaxLine
	}
	return &Reader{src: src, maxLine: maxLine}
}

// LastEventID is the last event ID in effect: the value of the most recent
// id field seen, kept across events as the standard's "last event ID
// buffer". A client resuming a stream sends it as Last-Event-ID.
func (r *Reader) LastEventID() string { return r.lastID }

// Retry is the most recent reconnection delay announced by the stream, even
// one that arrived in a block without data; zero when none was announced.
func (r *Reader) Retry() time.Duration { return r.lastRetry }

// Next returns the next event. It returns io.EOF when the stream ends on an
// event boundary, an error wrapping io.ErrUnexpectedEOF when it ends inside
// an event (the partial event is discarded, as the standard requires), an
// error wrapping ErrLineTooLong for an oversized line, and otherwise the
// source's read error unchanged, so callers can recognise their own
// cancellation errors. After any error every later call returns it again.
func (r *Reader) Next() (Event, error) {
	if r.fatal != nil {
		return Event{}, r.fatal
	}
	for {
		line, err := r.readLine()
		if err != nil {
			r.fatal = r.endError(err, line)
			return Event{}, r.fatal
		}
		if len(line) == 0 {
			if ev, ok := r.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if err := r.field(line); err != nil {
			r.fatal = err
			return Event{}, err
		}
	}
}

// endError turns the error that stopped line reading into Next's error.
// partial is the unterminated remainder of the stream, if any.
func (r *Reader) endError(err error, partial []byte) error {
	if err != io.EOF {
		return err
	}
	cut := r.pending || (len(partial) > 0 && partial[0] != ':')
	if cut {
		return fmt.Errorf("sse: stream ended inside an event: %w", io.ErrUnexpectedEOF)
	}
	return io.EOF
}

// field applies one non-empty line to the event being built. The data of
// one event is held to the same cap as a line, so many short data lines
// cannot grow the buffer without bound either.
func (r *Reader) field(line []byte) error {
	if line[0] == ':' {
		return nil
	}
	r.pending = true
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if len(r.data)+len(value) > r.maxLine {
			return fmt.Errorf("%w: event data exceeds %d bytes", ErrLineTooLong, r.maxLine)
		}
		r.data = append(r.data, value...)
		r.data = append(r.data, '\n')
		r.hasData = true
	case "event":
		r.event = string(value)
	case "id":
		// The standard ignores an id containing NUL, so that a NUL can
		// never reach the Last-Event-ID header.
		if bytes.IndexByte(value, 0) < 0 {
			r.id = string(value)
			r.hasID = true
			r.lastID = r.id
		}
	case "retry":
		if d, ok := parseRetry(value); ok {
			r.retry = d
			r.lastRetry = d
		}
	}
	return nil
}

// dispatch ends the current block. It reports false for a block without a
// data field, which the standard discards.
func (r *Reader) dispatch() (Event, bool) {
	ev := Event{ID: r.id, HasID: r.hasID, Event: r.event, Retry: r.retry}
	ok := r.hasData
	if ok {
		ev.Data = string(r.data[:len(r.data)-1])
	}
	r.data = r.data[:0]
	r.hasData, r.pending, r.hasID = false, false, false
	r.event, r.id, r.retry = "", "", 0
	return ev, ok
}

// parseRetry accepts only ASCII digits, as the standard requires, and
// rejects values too large to be a time.Duration.
func parseRetry(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	ms, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || ms > int64(time.Duration(1<<63-1)/time.Millisecond) {
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

// readLine returns the next line without its ending. The slice is valid
// until the next call. At the end of the source it returns the
// unterminated remainder together with the source's error.
func (r *Reader) readLine() ([]byte, error) {
	if !r.bomChecked {
		r.skipBOM()
	}
	for {
		if r.skipLF && r.r < r.w {
			if r.buf[r.r] == '\n' {
				r.r++
			}
			r.skipLF = false
		}
		seg := r.buf[r.r:r.w]
		end := bytes.IndexByte(seg, '\n')
		search := seg
		if end >= 0 {
			search = seg[:end]
		}
		if cr := bytes.IndexByte(search, '\r'); cr >= 0 {
			end = cr
		}
		if end >= 0 {
			if end > r.maxLine {
				return nil, r.tooLong()
			}
			line := seg[:end]
			r.r += end + 1
			if seg[end] == '\r' {
				r.skipLF = true
			}
			return line, nil
		}
		if len(seg) > r.maxLine {
			return nil, r.tooLong()
		}
		if r.err != nil {
			r.r = r.w
			return seg, r.err
		}
		r.fill()
	}
}

func (r *Reader) tooLong() error {
	return fmt.Errorf("%w: limit is %d bytes", ErrLineTooLong, r.maxLine)
}

// skipBOM drops one leading UTF-8 byte-order mark. A read error met while
// looking stays in r.err for readLine to report.
func (r *Reader) skipBOM() {
	for r.w-r.r < 3 && r.err == nil {
		r.fill()
	}
	r.bomChecked = true
	if bytes.HasPrefix(r.buf[r.r:r.w], []byte("\xef\xbb\xbf")) {
		r.r += 3
	}
}

// fill reads more bytes into the buffer, compacting or growing it first.
// A line longer than maxLine needs maxLine+1 buffered bytes to be detected,
// so the buffer never grows beyond that (or minBuffer, which also leaves
// room to look for the byte-order mark).
func (r *Reader) fill() {
	if r.r > 0 {
		copy(r.buf, r.buf[r.r:r.w])
		r.w -= r.r
		r.r = 0
	}
	if r.w == len(r.buf) {
		size := min(max(2*len(r.buf), minBuffer), max(r.maxLine+1, minBuffer))
		if size <= len(r.buf) {
			// Unreachable while readLine checks the cap before filling,
			// but a full buffer must never turn into a spin.
			r.err = r.tooLong()
			return
		}
		nb := make([]byte, size)
		copy(nb, r.buf[:r.w])
		r.buf = nb
	}
	for range maxEmptyReads {
		n, err := r.src.Read(r.buf[r.w:])
		if n < 0 || n > len(r.buf)-r.w {
			r.err = fmt.Errorf("sse: source returned invalid count %d", n)
			return
		}
		r.w += n
		if err != nil {
			r.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	r.err = io.ErrNoProgress
}
