package ref

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"reasonix/core/text"
)

// The caps Expand uses when an Options field is zero or negative.
const (
	DefaultMaxFileBytes  = 256 << 10
	DefaultMaxDirEntries = 500
	DefaultMaxTotalBytes = 1 << 20
)

// maxCandidates bounds the @words one message may have looked up on
// disk: a pasted log full of @-handles costs a bounded number of stats.
const maxCandidates = 1000

// sniffBytes is how much of a file decides whether it is binary: a NUL
// byte in it (or invalid UTF-8 anywhere in what is read) marks the file
// binary, as git and grep decide.
const sniffBytes = 8 << 10

// Options bound what Expand reads. A zero field takes its default.
type Options struct {
	// MaxFileBytes caps what one file contributes; a longer file is cut
	// with a marker saying how much was left out.
	MaxFileBytes int64
	// MaxDirEntries caps the lines of one directory listing.
	MaxDirEntries int
	// MaxTotalBytes caps all the blocks of one message together, so a
	// message naming many files cannot flood the context.
	MaxTotalBytes int64
}

func (o Options) withDefaults() Options {
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxDirEntries <= 0 {
		o.MaxDirEntries = DefaultMaxDirEntries
	}
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = DefaultMaxTotalBytes
	}
	return o
}

// Result is a message with its references resolved.
type Result struct {
	// Text is the blocks, one per reference, followed by the message
	// exactly as given; it is the message itself when nothing resolved.
	Text string
	// Files are the references resolved, as written (without the @), in
	// order of first appearance.
	Files []string
	// Notices say what could not be read or was left out; the message
	// goes on without it.
	Notices []string
}

// Expand resolves the @path references of input against root (the
// workspace; "" is the current directory). Each existing file becomes a
// <file path="…"> block and each directory a <dir path="…"> listing,
// placed before input in order of first appearance, each path once. A
// word whose path does not exist stays literal and costs nothing.
//
// A failed read becomes a notice, never an error: the turn still runs. If
// ctx ends first, input comes back unchanged with a notice.
func Expand(ctx context.Context, root, input string, o Options) Result {
	o = o.withDefaults()
	x := expander{ctx: ctx, root: root, o: o, budget: o.MaxTotalBytes, seen: map[string]bool{}}
	cands := scan(input)
	if len(cands) > maxCandidates {
		x.notice("only the first %d @words were checked for files", maxCandidates)
		cands = cands[:maxCandidates]
	}
	for _, c := range cands {
		if ctx.Err() != nil {
			break
		}
		x.resolve(c)
	}
	if err := ctx.Err(); err != nil {
		return Result{Text: input, Notices: []string{fmt.Sprintf("references not expanded: %v", err)}}
	}
	if len(x.blocks) == 0 {
		return Result{Text: input, Notices: x.notices}
	}
	return Result{
		Text:    strings.Join(x.blocks, "\n\n") + "\n\n" + input,
		Files:   x.files,
		Notices: x.notices,
	}
}

// expander carries one Expand call's state: the blocks so far, the paths
// already resolved and what is left of the total budget.
type expander struct {
	ctx     context.Context
	root    string
	o       Options
	budget  int64
	seen    map[string]bool
	blocks  []string
	files   []string
	notices []string
}

// resolve turns the first existing spelling of c into a block.
func (x *expander) resolve(c candidate) {
	for _, p := range c.paths {
		full, ok := x.locate(p)
		if !ok {
			continue
		}
		info, err := os.Stat(full)
		if err != nil {
			if errors.Is(err, fs.ErrPermission) {
				x.notice("could not read @%s: %v", p, err)
				return
			}
			continue
		}
		if x.seen[full] {
			return
		}
		x.seen[full] = true
		switch {
		case info.IsDir():
			x.dir(p, full)
		case info.Mode().IsRegular():
			x.file(p, full, info.Size())
		default:
			// A FIFO or device would block or never end; it is named,
			// not read.
			x.notice("@%s is not a regular file or directory; not read", p)
		}
		return
	}
}

// locate maps a written path to the file it names. A relative path that
// climbs out of root is no reference.
func (x *expander) locate(p string) (string, bool) {
	if filepath.IsAbs(p) {
		return filepath.Clean(p), true
	}
	clean := filepath.Clean(p)
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", false
	}
	root := x.root
	if root == "" {
		root = "."
	}
	return filepath.Join(root, clean), true
}

func (x *expander) notice(format string, args ...any) {
	x.notices = append(x.notices, fmt.Sprintf(format, args...))
}

func (x *expander) add(p, block string) {
	x.blocks = append(x.blocks, block)
	x.files = append(x.files, p)
}

// file reads one file into a block, within the per-file cap and what is
// left of the total.
func (x *expander) file(p, full string, size int64) {
	attr := escapeAttr(p)
	limit := min(x.o.MaxFileBytes, x.budget)
	if limit <= 0 {
		x.add(p, fmt.Sprintf(`<file path="%s" size="%d" omitted="true"/>`, attr, size))
		x.notice("@%s left out: the references of this message reached %d bytes", p, x.o.MaxTotalBytes)
		return
	}
	f, err := os.Open(full)
	if err != nil {
		x.notice("could not read @%s: %v", p, err)
		return
	}
	defer f.Close()
	// Sized from the stat so a file is read in one go; the byte past the
	// limit, if any, says the file is longer.
	buf := bytes.NewBuffer(make([]byte, 0, min(max(size, 0), limit)+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		x.notice("could not read @%s: %v", p, err)
		return
	}
	data := buf.Bytes()
	cut := int64(len(data)) > limit
	content := string(data)
	if cut {
		// The byte past the limit tells Prefix whether the cut splits a rune.
		content = text.Prefix(content, int(limit))
		data = data[:limit]
	}
	if binary(data, cut) {
		x.add(p, fmt.Sprintf(`<file path="%s" binary="true" size="%d"/>`, attr, max(size, int64(len(data)))))
		return
	}
	var b strings.Builder
	b.Grow(len(content) + len(attr) + 128)
	if cut {
		fmt.Fprintf(&b, "<file path=\"%s\" truncated=\"true\">\n", attr)
	} else {
		fmt.Fprintf(&b, "<file path=\"%s\">\n", attr)
	}
	b.WriteString(content)
	if content != "" && !strings.HasSuffix(content, "\n") {
		b.WriteByte('\n')
	}
	if cut {
		fmt.Fprintf(&b, "[truncated: showing the first %d of %d bytes]\n", len(content), max(size, limit+1))
	}
	b.WriteString("</file>")
	x.budget -= int64(len(content))
	x.add(p, b.String())
}

// binary reports whether data is not text: a NUL byte near the start, or
// bytes that are not UTF-8. When the read was cut, a rune split by the cut
// is not held against the file.
func binary(data []byte, cut bool) bool {
	if strings.IndexByte(string(data[:min(len(data), sniffBytes)]), 0) >= 0 {
		return true
	}
	if cut {
		for i := 0; i < utf8.UTFMax && i <= len(data); i++ {
			if utf8.Valid(data[:len(data)-i]) {
				return false
			}
		}
		return true
	}
	return !utf8.Valid(data)
}

func escapeAttr(s string) string {
	return strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;").Replace(s)
}
