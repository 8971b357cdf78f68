package builtin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"reasonix/core/tool"
	"reasonix/core/tool/builtin/toolpath"
)

func init() {
	tool.RegisterBuiltin("read_file", func(env tool.Env) tool.Tool { return &readFile{env: env} })
}

// readFile shows a text file with line numbers.
type readFile struct{ env tool.Env }

type readFileArgs struct {
	Path   string `json:"path" arg:"required"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

func (*readFile) Name() string { return "read_file" }

func (t *readFile) Description() string {
	return fmt.Sprintf("Read a text file. Each line is prefixed with its 1-based line number and a tab "+
		"(the prefix is not part of the file). At most %d bytes are returned per call; a longer file "+
		"ends with a marker giving the offset to continue from. Binary files are reported, not shown. "+
		"Fails on a missing path, a directory (use ls), or an offset past the end of the file.",
		t.env.Limits.WithDefaults().ReadBytes)
}

func (*readFile) Schema() json.RawMessage {
	return json.RawMessage(`{
		"type": "object",
		"properties": {
			"path": {"type": "string", "description": "File to read, relative to the workspace root or absolute."},
			"offset": {"type": "integer", "minimum": 1, "description": "1-based number of the first line to show. Default 1."},
			"limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to show. Default: as many as fit in the size limit."}
		},
		"required": ["path"],
		"additionalProperties": false
	}`)
}

func (*readFile) ReadOnly() bool { return true }

// sniffLen is how much of a file is inspected to tell binary from text.
const sniffLen = 8 << 10

// lineNumberWidth right-aligns line numbers like cat -n, so numbers up to
// six digits line up and the text after the tab keeps its indentation.
const lineNumberWidth = 6

func (t *readFile) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var args readFileArgs
	if err := tool.DecodeArgs("read_file", raw, &args); err != nil {
		return "", err
	}
	if args.Offset < 0 {
		return "", fmt.Errorf("read_file: offset must be 1 or more, got %d", args.Offset)
	}
	if args.Limit < 0 {
		return "", fmt.Errorf("read_file: limit must be 1 or more, got %d", args.Limit)
	}
	if args.Offset == 0 {
		args.Offset = 1
	}
	path, err := toolpath.ResolveRead(t.env, args.Path)
	if err != nil {
		return "", fmt.Errorf("read_file: %w", err)
	}
	shown := toolpath.Display(t.env, path)

	// Stat before opening: opening a FIFO or terminal device would block.
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read_file: %s does not exist; use ls or glob to find the right path", shown)
	}
	if err != nil {
		return "", fmt.Errorf("read_file: %w", err)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("read_file: %s is a directory; use ls to list it", shown)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("read_file: %s is not a regular file", shown)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read_file: %w", err)
	}
	defer f.Close()

	br := bufio.NewReaderSize(f, 64<<10)
	head, err := br.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return "", fmt.Errorf("read_file: %s: %w", shown, err)
	}
	if len(head) == 0 {
		return fmt.Sprintf("%s is an empty file (0 bytes)", shown), nil
	}
	if looksBinary(head) {
		return fmt.Sprintf("%s: binary file, %d bytes; not shown", shown, fi.Size()), nil
	}

	out, err := renderLines(ctx, br, args.Offset, args.Limit, t.env.Limits.WithDefaults().ReadBytes)
	if err != nil {
		return "", fmt.Errorf("read_file: %s: %w", shown, err)
	}
	return out, nil
}

// renderLines numbers the lines of r from offset on, stopping after limit
// lines (0 = no limit) or before the output would exceed budget bytes. It
// reads to the end either way so the closing marker can give the total line
// count. A first line too long for the budget is cut rather than dropped, so
// every call makes progress.
func renderLines(ctx context.Context, r *bufio.Reader, offset, limit, budget int) (string, error) {
	var (
		b         strings.Builder
		lineNo    int
		first     int // first line shown
		last      int // last line shown
		capped    bool
		cutLen    int // original length of a cut line, 0 if none
		remaining = budget
	)
	for {
		if lineNo%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		limitReached := limit > 0 && last > 0 && last-first+1 >= limit
		want := lineNo+1 >= offset && !capped && !limitReached
		keep := 0
		if want {
			keep = remaining
		}
		line, n, err := nextLine(r, keep)
		if err != nil {
			return "", err
		}
		if n < 0 {
			break
		}
		lineNo++
		if !want {
			continue
		}
		text := strings.ToValidUTF8(strings.TrimSuffix(string(line), "\r"), "\uFFFD")
		prefix := fmt.Sprintf("%*d\t", lineNumberWidth, lineNo)
		if len(prefix)+len(text)+1 > remaining || len(line) < n {
			if last > 0 {
				capped = true
				continue
			}
			// The first line alone is over budget: show what fits.
			room := max(remaining-len(prefix)-1, 0)
			text = cutUTF8(text, room)
			cutLen = n
			capped = true
		}
		b.WriteString(prefix)
		b.WriteString(text)
		b.WriteByte('\n')
		remaining -= len(prefix) + len(text) + 1
		if first == 0 {
			first = lineNo
		}
		last = lineNo
	}

	total := lineNo
	if offset > total {
		return "", fmt.Errorf("offset %d is past the end of the file, which has %s", offset, plural(total, "line"))
	}
	switch {
	case cutLen > 0 && last < total:
		fmt.Fprintf(&b, "[line %d is %d bytes long and was cut at the %d-byte read limit; the file has %s; call read_file with offset=%d to continue after it]",
			last, cutLen, budget, plural(total, "line"), last+1)
	case cutLen > 0:
		fmt.Fprintf(&b, "[line %d is %d bytes long and was cut at the %d-byte read limit]", last, cutLen, budget)
	case capped:
		fmt.Fprintf(&b, "[output reached the %d-byte read limit: showed lines %d-%d of %d; call read_file with offset=%d to read more]",
			budget, first, last, total, last+1)
	case last < total:
		fmt.Fprintf(&b, "[showed lines %d-%d of %d; call read_file with offset=%d to read more]", first, last, total, last+1)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// nextLine reads one line from r without its newline, keeping at most keep
// bytes of it in memory so a huge single-line file cannot exhaust it. n is
// the line's full length, or -1 at end of input.
func nextLine(r *bufio.Reader, keep int) (line []byte, n int, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if room := keep - len(line); room > 0 {
			line = append(line, chunk[:min(room, len(chunk))]...)
		}
		n += len(chunk)
		switch {
		case err == nil:
			line = bytes.TrimSuffix(line, []byte("\n"))
			return line, n - 1, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if n == 0 {
				return nil, -1, nil
			}
			return line, n, nil
		default:
			return nil, 0, err
		}
	}
}

// cutUTF8 shortens s to at most n bytes without splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// looksBinary reports whether a file starting with head should not be shown
// as text: it holds a NUL byte, or invalid UTF-8 makes up more than 30% of
// it (a stray Latin-1 byte in otherwise readable text does not count). An
// incomplete character at the end of head is the sample's cut, not an error.
func looksBinary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	invalid := 0
	for i := 0; i < len(head); {
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size == 1 {
			if !utf8.FullRune(head[i:]) {
				break
			}
			invalid++
		}
		i += size
	}
	return invalid*10 > len(head)*3
}
