package search

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unicode"
	"unicode/utf8"

	"reasonix/core/gitignore"
	"reasonix/core/panics"
	"reasonix/core/tool"
	"reasonix/core/tool/builtin/toolpath"
)

func init() {
	tool.RegisterBuiltin("grep", func(env tool.Env) tool.Tool { return &grep{env: env} })
}

// grep searches file contents with a regular expression.
type grep struct{ env tool.Env }

type grepArgs struct {
	Pattern    string `json:"pattern" arg:"required"`
	Path       string `json:"path"`
	Include    string `json:"include"`
	IgnoreCase bool   `json:"ignore_case"`
	Literal    bool   `json:"literal"`
	Context    int    `json:"context"`
	MaxResults int    `json:"max_results"`
}

const (
	// grepMaxContext bounds the context lines around each match.
	grepMaxContext = 20
	// grepMaxLine is the longest line shown whole; longer lines are cut
	// to a window around the match.
	grepMaxLine = 400
	// grepMaxFileSize is the largest file searched; each worker holds one
	// file in memory at a time.
	grepMaxFileSize = 64 << 20
	// grepReadBuffer is the initial size of a worker's reusable read buffer.
	grepReadBuffer = 256 << 10
)

func (*grep) Name() string { return "grep" }

func (t *grep) Description() string {
	return fmt.Sprintf("Search file contents for a regular expression (Go RE2 syntax: no backreferences or lookaround) "+
		"and list the matching lines as \"path:line:text\" with 1-based line numbers, files in path order and lines in "+
		"file order. Matching is line by line, so a match never spans lines. Set literal to search for the exact text "+
		"instead, and ignore_case for case-insensitive matching. With context, surrounding lines are shown as "+
		"\"path-line-text\" and non-adjacent groups are separated by \"--\". include restricts the files searched with a "+
		"glob such as \"*.go\" or \"**/*.{ts,tsx}\" (a pattern without \"/\" matches file names at any depth). "+
		"Files ignored by .gitignore, the .git directory, binary files (any NUL byte), files over %d MiB and symbolic "+
		"links are skipped; paths the sandbox does not let you read are left out and only counted. Lines longer than %d bytes are cut to a window around the match. At most %d matching lines "+
		"are returned (max_results can lower this); when there are more the output ends with a truncation notice. "+
		"No match is a normal result, not an error. Fails on an invalid regular expression, naming the problem, "+
		"or on a path that does not exist.",
		grepMaxFileSize>>20, grepMaxLine, t.env.Limits.WithDefaults().GrepMatches)
}

func (t *grep) Schema() json.RawMessage {
	limit := t.env.Limits.WithDefaults().GrepMatches
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"pattern": map[string]any{
				"type":        "string",
				"description": "Regular expression (RE2) to find, e.g. \"func \\w+Handler\", or plain text when literal is true.",
			},
			"path": map[string]any{
				"type":        "string",
				"description": "File or directory to search, relative to the workspace root or absolute. Defaults to the workspace root.",
			},
			"include": map[string]any{
				"type":        "string",
				"description": "Only search files matching this glob, e.g. \"*.go\" or \"src/**/*.{ts,tsx}\".",
			},
			"ignore_case": map[string]any{
				"type":        "boolean",
				"description": "Match letters case-insensitively. Default false.",
			},
			"literal": map[string]any{
				"type":        "boolean",
				"description": "Treat pattern as fixed text rather than a regular expression. Default false.",
			},
			"context": map[string]any{
				"type":        "integer",
				"minimum":     0,
				"maximum":     grepMaxContext,
				"description": "Lines of context to show before and after each match. Default 0.",
			},
			"max_results": map[string]any{
				"type":        "integer",
				"minimum":     1,
				"maximum":     limit,
				"description": fmt.Sprintf("Most matching lines to return. Default and maximum %d.", limit),
			},
		},
		"required":             []string{"pattern"},
		"additionalProperties": false,
	}
	out, _ := json.Marshal(schema) // a fixed map of plain values cannot fail
	return out
}

func (*grep) ReadOnly() bool { return true }

func (t *grep) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var args grepArgs
	if err := tool.DecodeArgs("grep", raw, &args); err != nil {
		return "", err
	}
	if args.Context < 0 || args.Context > grepMaxContext {
		return "", fmt.Errorf("grep: context must be between 0 and %d, got %d", grepMaxContext, args.Context)
	}
	limit := t.env.Limits.WithDefaults().GrepMatches
	switch {
	case args.MaxResults < 0:
		return "", fmt.Errorf("grep: max_results must be 1 or more, got %d", args.MaxResults)
	case args.MaxResults > 0:
		limit = min(limit, args.MaxResults)
	}
	lm, err := newLineMatcher(args.Pattern, args.Literal, args.IgnoreCase)
	if err != nil {
		return "", fmt.Errorf("grep: %w", err)
	}
	var include *globSet
	if strings.TrimSpace(args.Include) != "" {
		if include, err = compileGlob(args.Include, true); err != nil {
			return "", fmt.Errorf("grep: include: %w", err)
		}
	}
	if strings.TrimSpace(args.Path) == "" {
		args.Path = "."
	}
	abs, err := toolpath.ResolveRead(t.env, args.Path)
	if err != nil {
		return "", fmt.Errorf("grep: %w", err)
	}
	shown := toolpath.Display(t.env, abs)
	info, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("grep: %s does not exist", shown)
	}
	if err != nil {
		return "", fmt.Errorf("grep: %w", err)
	}

	s := &grepSearch{lm: lm, include: include, context: args.Context, limit: limit, tree: newSearchTree(t.env, abs)}
	var files []*fileHits
	var truncated bool
	if info.IsDir() {
		files, truncated, err = s.run(ctx)
		if err != nil {
			return "", fmt.Errorf("grep: %w", err)
		}
	} else {
		// A file named outright is searched even if ignored or excluded
		// by include; only what cannot be searched is refused.
		if !info.Mode().IsRegular() {
			return "", fmt.Errorf("grep: %s is not a regular file", shown)
		}
		w := &grepWorker{}
		var hits *fileHits
		hits, err = s.searchFile(w, abs, shown)
		switch {
		case errors.Is(err, errGrepBinary):
			return fmt.Sprintf("%s is a binary file; not searched", shown), nil
		case errors.Is(err, errGrepTooLarge):
			return fmt.Sprintf("%s is larger than %d MiB; not searched", shown, grepMaxFileSize>>20), nil
		case err != nil:
			return "", fmt.Errorf("grep: %w", err)
		}
		if hits != nil {
			files = []*fileHits{hits}
			truncated = hits.count > limit
		}
	}
	skipped := s.refused.count(s.coll.boundary.Load())
	if len(files) == 0 {
		if include != nil {
			return fmt.Sprintf("no matches for %q in %s (files matching %q)", args.Pattern, shown, args.Include) +
				skippedNote(" ", skipped), nil
		}
		return fmt.Sprintf("no matches for %q in %s", args.Pattern, shown) + skippedNote(" ", skipped), nil
	}
	return s.format(files, truncated, info.IsDir()) + skippedNote("\n", skipped), nil
}

// format renders the collected hits, at most limit matching lines.
func (s *grepSearch) format(files []*fileHits, truncated, walked bool) string {
	var b strings.Builder
	shown := 0
	lastMatch := 0
	first := true
	for _, f := range files {
		name := f.rel
		if walked {
			name = s.tree.display(f.rel)
		}
		prev := 0
		for _, ln := range f.lines {
			if shown == s.limit && (ln.match || ln.n > lastMatch+s.context) {
				break // only the trailing context of the last shown match remains
			}
			if s.context > 0 && !first && (prev == 0 || ln.n != prev+1) {
				b.WriteString("--\n")
			}
			first = false
			sep := byte('-')
			if ln.match {
				sep = ':'
				shown++
				lastMatch = ln.n
			}
			b.WriteString(name)
			b.WriteByte(sep)
			b.WriteString(strconv.Itoa(ln.n))
			b.WriteByte(sep)
			b.WriteString(ln.text)
			b.WriteByte('\n')
			prev = ln.n
		}
		if shown == s.limit {
			break
		}
	}
	if truncated {
		fmt.Fprintf(&b, "[results truncated: showing the first %d matching lines in path order; "+
			"narrow the pattern, path or include to see the rest]\n", shown)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// grepSearch is one grep call: the compiled query and the state its
// workers share.
type grepSearch struct {
	lm      *lineMatcher
	include *globSet
	context int
	limit   int
	tree    *searchTree
	coll    grepCollector
	refused grepRefusals
}

// grepRefusals records the paths a walk left out because the guard refused
// them, by the key the collector's boundary is compared with (a directory's
// path ends in "/").
type grepRefusals struct {
	mu   sync.Mutex
	keys []string
}

func (r *grepRefusals) add(key string) {
	r.mu.Lock()
	r.keys = append(r.keys, key)
	r.mu.Unlock()
}

// count returns how many refused paths sort at or before boundary, all of
// them when there is none. The boundary only falls, so every run of the
// same search reaches and checks each of those, however its workers
// interleave, while past it which paths were checked depends on timing:
// counting only the former keeps the result deterministic.
func (r *grepRefusals) count(boundary *string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if boundary == nil {
		return len(r.keys)
	}
	n := 0
	for _, k := range r.keys {
		if k <= *boundary {
			n++
		}
	}
	return n
}

// grepJob is a directory to list or a file to search.
type grepJob struct {
	rel    string         // slash path relative to the walk root
	dir    bool           // rel is a directory
	parent *gitignore.Dir // ignore state of rel's parent, for directories
	start  bool           // rel is where the search begins
}

// run walks the tree in parallel and returns the files with matches in path
// order, and whether matches beyond the limit exist. Workers take jobs from
// one stack, listing directories and searching files alike; the collector
// keeps only the hits that can still be among the first limit in path
// order, and its boundary lets workers skip files and whole directories
// sorting after it. The result is therefore the same however the work
// interleaves. A worker that panics fails the call: the queue is cancelled
// so the others stop, and the panic is returned as the error.
func (s *grepSearch) run(ctx context.Context) ([]*fileHits, bool, error) {
	s.coll.limit = s.limit
	q := &grepQueue{}
	q.cond.L = &q.mu
	stop := context.AfterFunc(ctx, q.cancel)
	defer stop()
	q.push(grepJob{rel: s.tree.start, dir: true, start: true})
	var (
		wg       sync.WaitGroup
		once     sync.Once
		panicked error
	)
	fail := func(err error) {
		once.Do(func() { panicked = err })
		q.cancel()
	}
	for range runtime.GOMAXPROCS(0) {
		panics.GoGroup(&wg, func() {
			w := &grepWorker{}
			for {
				job, ok := q.pop()
				if !ok {
					return
				}
				if ctx.Err() == nil {
					s.do(w, q, job)
				}
				q.done()
			}
		}, fail)
	}
	wg.Wait()
	if panicked != nil {
		return nil, false, fmt.Errorf("search worker: %w", panicked)
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	files, truncated := s.coll.result()
	return files, truncated, nil
}

// testHookGrepFile, when set by a test, is called by a worker before it
// searches the file at rel, so a test can make a worker fail.
var testHookGrepFile func(rel string)

func (s *grepSearch) do(w *grepWorker, q *grepQueue, job grepJob) {
	if !job.dir {
		if s.coll.beyond(job.rel) {
			return
		}
		if testHookGrepFile != nil {
			testHookGrepFile(job.rel)
		}
		if hits, _ := s.searchFile(w, s.tree.abs(job.rel), job.rel); hits != nil {
			s.coll.add(hits)
		}
		return
	}
	var dir *gitignore.Dir
	if job.start {
		dir = s.tree.m.Dir(job.rel)
	} else {
		dir = job.parent.Child(job.rel[strings.LastIndexByte(job.rel, '/')+1:])
	}
	entries, err := os.ReadDir(s.tree.abs(job.rel))
	if err != nil {
		return // an unreadable directory is skipped, like rg does
	}
	jobs := w.jobs[:0]
	// Pushed in reverse so the stack hands them out in name order, which
	// reaches the files that sort first early and tightens the boundary.
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		name := e.Name()
		typ := e.Type()
		isDir := typ.IsDir()
		if !isDir && !typ.IsRegular() {
			continue // symbolic links, devices, pipes and sockets
		}
		if dir.Ignored(name, isDir) {
			continue
		}
		rel := name
		if job.rel != "" {
			rel = job.rel + "/" + name
		}
		if isDir {
			if s.coll.beyond(rel + "/") {
				continue
			}
			if !s.tree.readable(rel) {
				s.refused.add(rel + "/")
				continue
			}
			jobs = append(jobs, grepJob{rel: rel, dir: true, parent: dir})
			continue
		}
		if s.include != nil {
			sub, _ := s.tree.underStart(rel)
			if !s.include.match(sub, rel) {
				continue
			}
		}
		if s.coll.beyond(rel) {
			continue
		}
		if !s.tree.readable(rel) {
			s.refused.add(rel)
			continue
		}
		jobs = append(jobs, grepJob{rel: rel})
	}
	q.push(jobs...)
	w.jobs = jobs[:0]
}

// grepQueue is the shared job stack. pending counts jobs pushed and not yet
// done, so workers know the walk is over when the stack is empty and
// nothing is running that could add to it.
type grepQueue struct {
	mu        sync.Mutex
	cond      sync.Cond
	jobs      []grepJob
	pending   int
	cancelled bool
}

func (q *grepQueue) push(jobs ...grepJob) {
	if len(jobs) == 0 {
		return
	}
	q.mu.Lock()
	q.jobs = append(q.jobs, jobs...)
	q.pending += len(jobs)
	q.mu.Unlock()
	q.cond.Broadcast()
}

func (q *grepQueue) pop() (grepJob, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.jobs) == 0 {
		if q.pending == 0 || q.cancelled {
			return grepJob{}, false
		}
		q.cond.Wait()
	}
	job := q.jobs[len(q.jobs)-1]
	q.jobs = q.jobs[:len(q.jobs)-1]
	return job, true
}

func (q *grepQueue) done() {
	q.mu.Lock()
	q.pending--
	last := q.pending == 0
	q.mu.Unlock()
	if last {
		q.cond.Broadcast()
	}
}

func (q *grepQueue) cancel() {
	q.mu.Lock()
	q.cancelled = true
	q.jobs = nil
	q.mu.Unlock()
	q.cond.Broadcast()
}

// fileHits are one file's matching lines and their context, in line order.
type fileHits struct {
	rel   string
	lines []grepLine
	count int // matching lines held, at most limit+1
}

type grepLine struct {
	n     int    // 1-based line number
	text  string // rendered for display
	match bool   // false for a context line
}

// grepCollector keeps the fewest files, in path order, that hold more than
// limit matches: enough to print the first limit and to know there are
// more. Files sorting after the last of those can no longer matter, and
// beyond lets workers skip them.
type grepCollector struct {
	mu       sync.Mutex
	limit    int
	files    hitsHeap
	held     int
	boundary atomic.Pointer[string]
}

func (c *grepCollector) add(h *fileHits) {
	c.mu.Lock()
	defer c.mu.Unlock()
	heap.Push(&c.files, h)
	c.held += h.count
	for c.files.Len() > 1 && c.held-c.files[0].count > c.limit {
		drop := heap.Pop(&c.files).(*fileHits)
		c.held -= drop.count
	}
	if c.held > c.limit {
		b := c.files[0].rel
		c.boundary.Store(&b)
	}
}

// beyond reports whether key sorts after every file still needed. A
// directory passes its path with a trailing "/", below which all its
// files sort.
func (c *grepCollector) beyond(key string) bool {
	b := c.boundary.Load()
	return b != nil && key > *b
}

// result returns the kept files in path order and whether matches beyond
// the limit exist.
func (c *grepCollector) result() ([]*fileHits, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	files := slices.Clone([]*fileHits(c.files))
	slices.SortFunc(files, func(a, b *fileHits) int { return strings.Compare(a.rel, b.rel) })
	return files, c.held > c.limit
}

// hitsHeap is a max-heap on path, so the file sorting last is at the top.
type hitsHeap []*fileHits

func (h hitsHeap) Len() int           { return len(h) }
func (h hitsHeap) Less(i, j int) bool { return h[i].rel > h[j].rel }
func (h hitsHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitsHeap) Push(x any)        { *h = append(*h, x.(*fileHits)) }
func (h *hitsHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// grepWorker is one worker's reusable memory.
type grepWorker struct {
	buf  []byte
	jobs []grepJob
}

var (
	errGrepBinary   = errors.New("binary file")
	errGrepTooLarge = errors.New("file too large")
)

// searchFile reads the file at abs and returns its hits, or nil when
// nothing matches. rel names the file in the hits.
func (s *grepSearch) searchFile(w *grepWorker, abs, rel string) (*fileHits, error) {
	data, err := w.read(abs)
	if err != nil {
		return nil, err
	}
	// A NUL byte marks a binary file, as it does for git and ripgrep;
	// IndexByte scans the whole file faster than any line search.
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, errGrepBinary
	}
	return s.scan(data, rel), nil
}

// read loads the file into the worker's buffer, which the next read reuses.
func (w *grepWorker) read(abs string) ([]byte, error) {
	// O_NONBLOCK makes os skip switching the descriptor to non-blocking
	// mode and back around its poller registration (four fcntl calls per
	// file on Linux), which is a third of the cost of opening a small
	// file. Reads from a regular file never block or return EAGAIN, and
	// only regular files get here.
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if w.buf == nil {
		w.buf = make([]byte, 0, grepReadBuffer)
	}
	buf := w.buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf))
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		w.buf = buf
		if len(buf) > grepMaxFileSize {
			return nil, errGrepTooLarge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// scan finds the matching lines of data with their context. It stops after
// limit+1 matches: one more than can be shown proves there are more.
func (s *grepSearch) scan(data []byte, rel string) *fileHits {
	var hits *fileHits
	lineNo, counted := 1, 0 // line number of the line starting at counted
	shown := 0              // last line number added
	afterPos, afterLeft := 0, 0
	// after adds trailing context of the previous match, up to line upto.
	after := func(upto int) {
		for afterLeft > 0 && shown < upto && afterPos < len(data) {
			end := lineEnd(data, afterPos)
			shown++
			hits.lines = append(hits.lines, grepLine{n: shown, text: renderLine(data[afterPos:end], nil)})
			afterPos = end + 1
			afterLeft--
		}
	}
	for from := 0; from < len(data); {
		ls, le := s.lm.next(data, from)
		if ls < 0 {
			break
		}
		lineNo += bytes.Count(data[counted:ls], []byte{'\n'})
		counted = ls
		if hits == nil {
			hits = &fileHits{rel: rel}
		}
		if s.context > 0 {
			after(lineNo - 1)
			s.before(hits, data, ls, lineNo, shown)
		}
		hits.lines = append(hits.lines, grepLine{n: lineNo, text: renderLine(data[ls:le], s.lm.re), match: true})
		hits.count++
		shown = lineNo
		afterPos, afterLeft = le+1, s.context
		if hits.count > s.limit {
			break
		}
		from = le + 1
	}
	if hits != nil && s.context > 0 {
		after(int(^uint(0) >> 1))
	}
	return hits
}

// before adds the context lines preceding the match on line n (starting at
// byte ls) that come after line shown.
func (s *grepSearch) before(hits *fileHits, data []byte, ls, n, shown int) {
	first := max(shown+1, n-s.context)
	if first >= n {
		return
	}
	starts := make([]int, n-first)
	p := ls
	for i := len(starts) - 1; i >= 0; i-- {
		p = bytes.LastIndexByte(data[:p-1], '\n') + 1
		starts[i] = p
	}
	for i, st := range starts {
		hits.lines = append(hits.lines, grepLine{n: first + i, text: renderLine(data[st:lineEnd(data, st)], nil)})
	}
}

// lineEnd is the index of the newline ending the line that starts at
// start, or len(data) for an unterminated last line.
func lineEnd(data []byte, start int) int {
	if i := bytes.IndexByte(data[start:], '\n'); i >= 0 {
		return start + i
	}
	return len(data)
}

// renderLine prepares a line for display: without a trailing CR and, when
// longer than grepMaxLine, cut to a window around the first match of re
// (or to its start) with markers counting what was left out.
func renderLine(line []byte, re *regexp.Regexp) string {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) <= grepMaxLine {
		return string(line)
	}
	start := 0
	if re != nil {
		if loc := re.FindIndex(line); loc != nil {
			start = max(0, loc[0]-grepMaxLine/4)
		}
	}
	start = min(start, len(line)-grepMaxLine)
	for start > 0 && !utf8.RuneStart(line[start]) {
		start--
	}
	end := start + grepMaxLine
	for end < len(line) && !utf8.RuneStart(line[end]) {
		end--
	}
	var b strings.Builder
	if start > 0 {
		fmt.Fprintf(&b, "[... %d bytes ...] ", start)
	}
	b.Write(line[start:end])
	if end < len(line) {
		fmt.Fprintf(&b, " [... %d bytes ...]", len(line)-end)
	}
	return b.String()
}

// lineMatcher finds lines matching a regular expression. When every match
// must contain one of a few literal strings it looks for those with fast
// byte searches over the whole file and runs the regular expression only on
// the lines where one occurs.
type lineMatcher struct {
	re    *regexp.Regexp
	lits  []literalFinder // any match contains one of these; none: test every line
	exact bool            // finding the single literal is a match
}

func newLineMatcher(pattern string, literal, ignoreCase bool) (*lineMatcher, error) {
	expr := pattern
	if literal {
		expr = regexp.QuoteMeta(pattern)
	}
	if ignoreCase {
		expr = "(?i)" + expr
	}
	parsed, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, fmt.Errorf("invalid regular expression: %s: `%s` (RE2 syntax; set literal to search for plain text)", se.Code, se.Expr)
		}
		return nil, fmt.Errorf("invalid regular expression: %w", err)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression: %w", err)
	}
	m := &lineMatcher{re: re}
	parsed = parsed.Simplify()
	set := requiredLiterals(parsed)
	for _, c := range set {
		m.lits = append(m.lits, newLiteralFinder(c))
	}
	if len(set) == 1 && !set[0].partial && !strings.Contains(set[0].s, "\n") {
		m.exact = isLiteralOnly(parsed, set[0])
	}
	return m, nil
}

// next returns the bounds of the first matching line at or after from,
// which is the start of a line, or -1, -1.
func (m *lineMatcher) next(data []byte, from int) (int, int) {
	for from < len(data) {
		if len(m.lits) == 0 {
			end := lineEnd(data, from)
			if m.re.Match(data[from:end]) {
				return from, end
			}
			from = end + 1
			continue
		}
		i := m.findLiteral(data, from)
		if i < 0 {
			return -1, -1
		}
		start := from + bytes.LastIndexByte(data[from:i], '\n') + 1
		end := lineEnd(data, i)
		if m.exact || m.re.Match(data[start:end]) {
			return start, end
		}
		from = end + 1
	}
	return -1, -1
}

// findLiteral returns the earliest offset at or after from where one of the
// literals occurs, or -1.
func (m *lineMatcher) findLiteral(data []byte, from int) int {
	best := -1
	for i := range m.lits {
		hay := data
		if best >= 0 {
			// Only an occurrence starting before best can improve on it.
			hay = data[:min(len(data), best+len(m.lits[i].lit)-1)]
		}
		if j := m.lits[i].index(hay, from); j >= 0 && (best < 0 || j < best) {
			best = j
		}
	}
	return best
}

// literalCandidate is a string every match contains.
type literalCandidate struct {
	s       string
	fold    bool // compared ignoring ASCII case; s is lower case
	partial bool // s is only part of the literal in the expression
}

// maxLiteralSet bounds how many alternative literals are searched for.
const maxLiteralSet = 8

// requiredLiterals returns strings one of which every match of re must
// contain, or nil when it finds none worth searching for.
func requiredLiterals(re *syntax.Regexp) []literalCandidate {
	switch re.Op {
	case syntax.OpLiteral:
		if c, ok := candidate(re.Rune, re.Flags&syntax.FoldCase != 0); ok {
			return []literalCandidate{c}
		}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []literalCandidate
		var run []rune
		runFold, mixed := false, false
		flush := func() {
			if len(run) > 0 {
				if c, ok := candidate(run, runFold); ok {
					c.partial = c.partial || mixed
					best = betterLiterals(best, []literalCandidate{c})
				}
			}
			run, runFold, mixed = nil, false, false
		}
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral {
				// Adjacent literals form one string; if only some of them
				// ignore case, searching it ignoring case still finds every
				// match, just not only matches.
				fold := sub.Flags&syntax.FoldCase != 0
				if len(run) > 0 && fold != runFold {
					mixed = true
				}
				runFold = runFold || fold
				run = append(run, sub.Rune...)
				continue
			}
			flush()
			best = betterLiterals(best, requiredLiterals(sub))
		}
		flush()
		return best
	case syntax.OpAlternate:
		var set []literalCandidate
		for _, sub := range re.Sub {
			s := requiredLiterals(sub)
			if len(s) == 0 {
				return nil
			}
			set = append(set, s...)
			if len(set) > maxLiteralSet {
				return nil
			}
		}
		return set
	}
	return nil
}

// betterLiterals prefers the set whose shortest member is longer, then the
// smaller set, then case-sensitive members.
func betterLiterals(a, b []literalCandidate) []literalCandidate {
	score := func(s []literalCandidate) (shortest, folds int) {
		if len(s) == 0 {
			return 0, 0
		}
		shortest = len(s[0].s)
		for _, c := range s {
			shortest = min(shortest, len(c.s))
			if c.fold {
				folds++
			}
		}
		return shortest, folds
	}
	as, af := score(a)
	bs, bf := score(b)
	switch {
	case as != bs:
		if bs > as {
			return b
		}
		return a
	case len(a) != len(b):
		if len(b) < len(a) && len(b) > 0 {
			return b
		}
		return a
	case bf < af:
		return b
	}
	return a
}

// candidate turns literal runes into a searchable string. A case-folded
// literal keeps only its longest run of ASCII characters whose case
// variants are all ASCII (not k or s, which fold to K and ſ), lower-cased,
// so a byte comparison ignoring ASCII case finds every match.
func candidate(runes []rune, fold bool) (literalCandidate, bool) {
	if !fold {
		// Invalid UTF-8 in the input decodes to U+FFFD for the regular
		// expression but is no such bytes for a byte search.
		if slices.Contains(runes, utf8.RuneError) {
			return literalCandidate{}, false
		}
		return literalCandidate{s: string(runes)}, len(runes) > 0
	}
	bestStart, bestLen, start := 0, 0, 0
	for i := 0; i <= len(runes); i++ {
		if i < len(runes) && asciiFoldSafe(runes[i]) {
			continue
		}
		if i-start > bestLen {
			bestStart, bestLen = start, i-start
		}
		start = i + 1
	}
	if bestLen == 0 {
		return literalCandidate{}, false
	}
	b := make([]byte, bestLen)
	for i, r := range runes[bestStart : bestStart+bestLen] {
		b[i] = byte(unicode.ToLower(r))
	}
	return literalCandidate{s: string(b), fold: true, partial: bestLen < len(runes)}, true
}

// asciiFoldSafe reports whether r and every rune it case-folds to are ASCII.
func asciiFoldSafe(r rune) bool {
	if r >= utf8.RuneSelf {
		return false
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isLiteralOnly reports whether re is nothing but the literal c, so that
// finding c is a match and the regular expression need not run.
func isLiteralOnly(re *syntax.Regexp, c literalCandidate) bool {
	var runes []rune
	fold := false
	switch re.Op {
	case syntax.OpLiteral:
		runes, fold = re.Rune, re.Flags&syntax.FoldCase != 0
	case syntax.OpConcat:
		for i, sub := range re.Sub {
			if sub.Op != syntax.OpLiteral {
				return false
			}
			f := sub.Flags&syntax.FoldCase != 0
			if i > 0 && f != fold {
				return false
			}
			fold = f
			runes = append(runes, sub.Rune...)
		}
	default:
		return false
	}
	return fold == c.fold && utf8.RuneCountInString(c.s) == len(runes)
}

// literalFinder searches for one literal. Case-sensitive literals use
// bytes.Index; a case-folded one looks for its rarest byte in both cases
// with bytes.IndexByte and compares the rest around each hit.
type literalFinder struct {
	lit    []byte
	fold   bool
	pivot  int  // index in lit of the byte searched for
	lo, up byte // that byte in lower and upper case
}

func newLiteralFinder(c literalCandidate) literalFinder {
	f := literalFinder{lit: []byte(c.s), fold: c.fold}
	if !c.fold {
		return f
	}
	for i, b := range f.lit {
		if byteRank(b) < byteRank(f.lit[f.pivot]) {
			f.pivot = i
		}
	}
	f.lo = f.lit[f.pivot]
	f.up = byte(unicode.ToUpper(rune(f.lo)))
	return f
}

// index returns the first offset at or after from where the literal starts
// and ends within hay, or -1.
func (f *literalFinder) index(hay []byte, from int) int {
	if from > len(hay) {
		return -1
	}
	if !f.fold {
		if i := bytes.Index(hay[from:], f.lit); i >= 0 {
			return from + i
		}
		return -1
	}
	// nextLo and nextUp cache where each case of the pivot byte occurs
	// next (-1: nowhere), so every occurrence is found by one IndexByte.
	n := len(f.lit)
	nextLo, nextUp := -2, -2
	if f.lo == f.up {
		nextUp = -1
	}
	for p := from + f.pivot; p < len(hay); {
		if nextLo != -1 && nextLo < p {
			nextLo = indexFrom(hay, p, f.lo)
		}
		if nextUp != -1 && nextUp < p {
			nextUp = indexFrom(hay, p, f.up)
		}
		c := nextLo
		if c < 0 || (nextUp >= 0 && nextUp < c) {
			c = nextUp
		}
		if c < 0 {
			return -1
		}
		start := c - f.pivot
		if start+n <= len(hay) && equalFoldASCII(hay[start:start+n], f.lit) {
			return start
		}
		p = c + 1
	}
	return -1
}

// indexFrom is the index of the first b in s at or after from, or -1.
func indexFrom(s []byte, from int, b byte) int {
	if i := bytes.IndexByte(s[from:], b); i >= 0 {
		return from + i
	}
	return -1
}

// equalFoldASCII compares s with the lower-case lit, ignoring ASCII case.
func equalFoldASCII(s, lit []byte) bool {
	for i, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lit[i] {
			return false
		}
	}
	return true
}

// commonBytes lists bytes roughly from most to least frequent in source
// code and prose; a byte not listed is taken to be rarer than all of them.
const commonBytes = " e\ttanoirsl\nc.du(p)mf,h\"g_;=y/b:w{}-*0v1k'x2>[]<#&|!+q$\\z%@^~?`"

// byteRank is how common b is: higher is more frequent.
func byteRank(b byte) int {
	if 'A' <= b && b <= 'Z' {
		b += 'a' - 'A'
	}
	if i := strings.IndexByte(commonBytes, b); i >= 0 {
		return len(commonBytes) - i
	}
	return 0
}
