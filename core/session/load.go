package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"reasonix/core/provider"
)

// Warning reports damage Load tolerated: the torn final record a crash or
// power loss leaves behind, which was dropped.
type Warning struct {
	// Path is the transcript.
	Path string
	// Line is the 1-based line the dropped record started on.
	Line int
	// Dropped is how many bytes were dropped from the end of the file.
	Dropped int64
}

// String describes the damage for a warning line.
func (w *Warning) String() string {
	return fmt.Sprintf("transcript %s: dropped a torn final record at line %d (%d bytes)", w.Path, w.Line, w.Dropped)
}

// Load reads a transcript back: its header and its messages in order,
// exactly as they were appended, with each recorded compaction replayed
// where it happened, so the list is the one the session last sent. A final record that is incomplete (no
// newline, or not valid JSON) is what a crash leaves: it is dropped and
// described by the returned Warning, nil when the file is whole. Anything
// else malformed is an error naming the file and line.
func Load(path string) (Header, []provider.Message, *Warning, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, nil, nil, fmt.Errorf("load transcript: %w", err)
	}
	defer f.Close()
	h, msgs, scan, err := read(f, path)
	return h, msgs, scan.torn, err
}

// read decodes every record of a transcript.
func read(r io.Reader, name string) (Header, []provider.Message, scanResult, error) {
	var (
		h      Header
		msgs   []provider.Message
		sawHdr bool
	)
	res, err := scanRecords(r, name, func(n int, line []byte) error {
		var rec record
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		switch rec.Type {
		case "header":
			if rec.Header == nil {
				return errors.New("header record without header")
			}
			h, sawHdr = *rec.Header, true
		case "message":
			if rec.Message == nil {
				return errors.New("message record without message")
			}
			msgs = append(msgs, *rec.Message)
		case "compaction":
			if rec.Compaction == nil {
				return errors.New("compaction record without compaction")
			}
			out, err := rec.Compaction.Apply(msgs)
			if err != nil {
				return err
			}
			msgs = out
		default:
			// Unknown record types come from newer versions; skipping
			// them keeps old binaries able to read what they understand.
		}
		return nil
	})
	if err != nil {
		return h, msgs, res, err
	}
	if !sawHdr {
		return h, msgs, res, fmt.Errorf("load transcript %s: no header", name)
	}
	return h, msgs, res, nil
}

// errStop ends a scan early without an error.
var errStop = errors.New("stop scan")

// scanResult says how much of a file holds complete records.
type scanResult struct {
	// valid is the length of the prefix of complete records (and blank
	// lines): where an append must start so the next record begins on a
	// line of its own.
	valid int64
	// torn describes the dropped final record, if any.
	torn *Warning
}

// readBufSize bounds the reader's buffer. Lines longer than this (a large
// tool result) are gathered piece by piece, so memory follows the longest
// line, not the file.
const readBufSize = 64 << 10

// scanRecords calls each with every non-blank line of r and its 1-based
// number. A record is complete when its newline is on disk: records are
// written with one write call each, so a line without one is a write a
// crash cut short. A line each cannot parse as JSON is torn too when no
// record follows it (power loss can leave a tail of zeros); anywhere else
// it is an error. Other errors from each are errors at that line; errStop
// ends the scan.
func scanRecords(r io.Reader, name string, each func(n int, line []byte) error) (scanResult, error) {
	var (
		res     scanResult
		offset  int64
		long    []byte
		pending error // a syntax error, fatal only if a record follows it
		pendN   int
	)
	br := bufio.NewReaderSize(r, readBufSize)
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		offset += int64(len(line))
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return res, fmt.Errorf("load transcript %s: %w", name, err)
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 && pending != nil {
			return res, fmt.Errorf("load transcript %s line %d: %w", name, pendN, pending)
		}
		switch {
		case len(line) == 0:
			if pending == nil && !eof {
				res.valid = offset
			}
		case eof:
			res.torn = &Warning{Path: name, Line: n}
		default:
			err := each(n, line)
			var syntax *json.SyntaxError
			switch {
			case errors.Is(err, errStop):
				res.valid = offset
				return res, nil
			case errors.As(err, &syntax):
				pending, pendN = err, n
				res.torn = &Warning{Path: name, Line: n}
			case err != nil:
				return res, fmt.Errorf("load transcript %s line %d: %w", name, n, err)
			default:
				res.valid = offset
			}
		}
		if eof {
			break
		}
	}
	if res.torn != nil {
		res.torn.Dropped = offset - res.valid
	}
	return res, nil
}
