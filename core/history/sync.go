package history

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"reasonix/core/panics"
)

// Sync commits its work in batches of at most batchFiles files or
// batchBytes bytes read, so another process never waits long for the
// write lock, even during a full rebuild.
const (
	batchFiles = 200
	batchBytes = 16 << 20
)

// tailLen is how many bytes before a file's indexed offset are kept to
// recognise the file later: if they differ, the file was rewritten, not
// appended to, and is indexed again from the start.
const tailLen = 32

// SyncStats describes the work of a Sync.
type SyncStats struct {
	// Files is how many files the synced directories hold.
	Files int
	// Read is how many of them had changed and were read.
	Read int
	// Messages is how many messages were added to the index (messages
	// with nothing to index, see messageText, are not counted).
	Messages int
	// Removed is how many files left the index because they are gone.
	Removed int
	// Skipped is how many directories and files could not be read; the
	// index keeps what it had of them and tries again next time.
	Skipped int
}

func (s *SyncStats) add(o SyncStats) {
	s.Read += o.Read
	s.Messages += o.Messages
	s.Removed += o.Removed
	s.Skipped += o.Skipped
}

// fileRow is a row of the files table: what is indexed of one file.
type fileRow struct {
	id      int64
	path    string
	dir     string
	source  string
	archive bool
	session string
	// started is the transcript header's creation time in Unix
	// milliseconds, 0 when unknown.
	started int64
	// size, mtime and ident are the file's identity when it was last read;
	// a file whose identity has not changed is not opened again.
	size  int64
	mtime int64
	ident string
	// offset is how many bytes of complete lines are indexed, ordinal how
	// many messages they held.
	offset  int64
	ordinal int
	tail    []byte
}

// diskFile is a file found in a synced directory.
type diskFile struct {
	path, dir   string
	size, mtime int64
	ident       string
}

// Sync brings the index up to date with the .jsonl files in dirs: new
// files and appended lines are indexed, files that shrank or were replaced
// are indexed again, and files that are gone are dropped. Only files whose
// size, modification time or identity changed are opened.
func (ix *Index) Sync(ctx context.Context, dirs ...string) (SyncStats, error) {
	return ix.sync(ctx, dirs, false, nil)
}

// sync is Sync; prune also drops files whose directory no longer exists
// (a removed project) although it is not among dirs, and progress, when
// set, is told after every file read how many of the changed files are
// done.
//
// A directory whose listing (names, sizes, times, identities) hashes to
// the digest stored when it was last found in sync is skipped without
// reading its files' rows: a search of a home of ten thousand unchanged
// transcripts costs the stats and one small query.
func (ix *Index) sync(ctx context.Context, dirs []string, prune bool, progress func(done, total int)) (SyncStats, error) {
	var stats SyncStats
	dirs, err := absDirs(dirs)
	if err != nil {
		return stats, fmt.Errorf("sync history index: %w", err)
	}
	listings, err := listDirs(dirs)
	if err != nil {
		return stats, fmt.Errorf("sync history index: %w", err)
	}
	// One unreadable directory or file must not make every search fail:
	// it is skipped, keeping what the index has of it.
	digests, err := ix.digests(ctx)
	if err != nil {
		return stats, fmt.Errorf("sync history index: %w", err)
	}
	var (
		work    []diskFile
		changed []dirListing
	)
	for _, l := range listings {
		if l.err != nil {
			stats.Skipped++
			continue
		}
		stats.Files += len(l.files)
		if bytes.Equal(digests[l.dir], l.digest) {
			continue
		}
		changed = append(changed, l)
		rows, err := ix.knownFiles(ctx, l.dir)
		if err != nil {
			return stats, fmt.Errorf("sync history index: %w", err)
		}
		for _, d := range l.files {
			r, ok := rows[d.path]
			if !ok || r.size != d.size || r.mtime != d.mtime || r.ident != d.ident {
				work = append(work, d)
			}
			delete(rows, d.path)
		}
		// What is left is indexed but was not found.
		for p := range rows {
			work = append(work, diskFile{path: p})
		}
	}
	if prune {
		gone, err := ix.filesOfMissingDirs(ctx, dirs)
		if err != nil {
			return stats, fmt.Errorf("sync history index: %w", err)
		}
		work = append(work, gone...)
	}
	// Files are indexed oldest first, so that a new file's id, and with
	// it its messages' rowids, grow with the time the file was written:
	// a search too broad to rank every match ranks the newest ones.
	slices.SortFunc(work, func(a, b diskFile) int {
		return cmp.Or(cmp.Compare(a.mtime, b.mtime), strings.Compare(a.path, b.path))
	})
	paths := make([]string, len(work))
	for i, d := range work {
		paths[i] = d.path
	}
	unread := map[string]bool{}
	for done := 0; done < len(paths); {
		n, batch, skipped, err := ix.syncBatch(ctx, paths[done:], func(i int) {
			if progress != nil {
				progress(done+i, len(paths))
			}
		})
		stats.add(batch)
		if err != nil {
			return stats, fmt.Errorf("sync history index: %w", err)
		}
		for _, e := range skipped {
			unread[filepath.Dir(e.Path)] = true
		}
		done += n
	}
	// A directory with a file that could not be read keeps its old digest,
	// so that the file is tried again.
	changed = slices.DeleteFunc(changed, func(l dirListing) bool { return unread[l.dir] })
	if len(changed) > 0 {
		if err := ix.storeDigests(ctx, changed); err != nil {
			return stats, fmt.Errorf("sync history index: %w", err)
		}
	}
	return stats, nil
}

// digests are the stored digests of the directories' listings.
func (ix *Index) digests(ctx context.Context) (map[string][]byte, error) {
	rows, err := ix.db.QueryContext(ctx, "SELECT dir, digest FROM dirs")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var (
			dir    string
			digest []byte
		)
		if err := rows.Scan(&dir, &digest); err != nil {
			return nil, err
		}
		out[dir] = digest
	}
	return out, rows.Err()
}

// storeDigests records that the listed directories are in sync with
// their listings. Every file of a listing was brought at least to the
// state it was listed in, so the digest is true of the index whatever
// another process did meanwhile: a later change to a file changes the
// listing, and with it the digest.
func (ix *Index) storeDigests(ctx context.Context, ls []dirListing) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, l := range ls {
		if _, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO dirs (dir, digest) VALUES (?, ?)", l.dir, l.digest); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// filesOfMissingDirs lists the indexed files of directories that are not
// among dirs and no longer exist, so that they can be dropped.
func (ix *Index) filesOfMissingDirs(ctx context.Context, dirs []string) ([]diskFile, error) {
	rows, err := ix.db.QueryContext(ctx, "SELECT DISTINCT dir FROM files")
	if err != nil {
		return nil, err
	}
	var missing []string
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			rows.Close()
			return nil, err
		}
		if slices.Contains(dirs, d) {
			continue
		}
		if _, err := os.Stat(d); errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, d)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []diskFile
	for _, d := range missing {
		known, err := ix.knownFiles(ctx, d)
		if err != nil {
			return nil, err
		}
		for p := range known {
			out = append(out, diskFile{path: p})
		}
		if _, err := ix.db.ExecContext(ctx, "DELETE FROM dirs WHERE dir = ?", d); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// syncBatch indexes files from the front of paths in one transaction and
// says how many it took and why those it could not read were not.
func (ix *Index) syncBatch(ctx context.Context, paths []string, fileDone func(n int)) (int, SyncStats, []*fs.PathError, error) {
	var (
		stats   SyncStats
		skipped []*fs.PathError
	)
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, stats, nil, err
	}
	defer tx.Rollback()
	w, err := newWriter(ctx, tx, ix.home)
	if err != nil {
		return 0, stats, nil, err
	}
	defer w.close()
	n := 0
	var read int64
	for n < len(paths) && n < batchFiles && read < batchBytes {
		if err := ctx.Err(); err != nil {
			return n, stats, nil, err
		}
		res, err := w.index(ctx, paths[n])
		if err != nil {
			return n, stats, nil, fmt.Errorf("%s: %w", paths[n], err)
		}
		if res.unread != nil {
			skipped = append(skipped, &fs.PathError{Op: "read", Path: paths[n], Err: res.unread})
		}
		stats.add(res.stats)
		read += res.bytes
		n++
		fileDone(n)
	}
	if err := tx.Commit(); err != nil {
		return 0, SyncStats{}, nil, err
	}
	return n, stats, skipped, nil
}

// Update indexes the file at path now, whatever its directory: what a
// writer calls after appending to a transcript or writing an archive, so
// that the next search need not. It returns how many messages it added.
func (ix *Index) Update(ctx context.Context, path string) (int, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return 0, fmt.Errorf("update history index: %w", err)
	}
	_, stats, skipped, err := ix.syncBatch(ctx, []string{path}, func(int) {})
	if err == nil && len(skipped) > 0 {
		err = skipped[0]
	}
	if err != nil {
		return 0, fmt.Errorf("update history index: %w", err)
	}
	return stats.Messages, nil
}

// Reindex throws the whole index away and builds it again from the files
// in dirs, telling progress (when set) after each file how far it got.
func (ix *Index) Reindex(ctx context.Context, dirs []string, progress func(done, total int)) (SyncStats, error) {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return SyncStats{}, fmt.Errorf("reindex history: %w", err)
	}
	defer tx.Rollback()
	if err := createTables(ctx, tx); err != nil {
		return SyncStats{}, fmt.Errorf("reindex history: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return SyncStats{}, fmt.Errorf("reindex history: %w", err)
	}
	return ix.sync(ctx, dirs, false, progress)
}

func absDirs(dirs []string) ([]string, error) {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		a, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// dirListing is what one directory holds now.
type dirListing struct {
	dir   string
	files []diskFile
	// digest hashes every file's name, size, modification time and
	// identity.
	digest []byte
	// err is why the directory could not be listed.
	err error
}

// listDirs lists dirs in parallel: a search of the global scope stats
// every transcript of the home, and the stats are most of its cost.
func listDirs(dirs []string) ([]dirListing, error) {
	out := make([]dirListing, len(dirs))
	var (
		wg   sync.WaitGroup
		next atomic.Int64
		mu   sync.Mutex
		perr error
	)
	for range min(runtime.GOMAXPROCS(0), len(dirs)) {
		panics.GoGroup(&wg, func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(dirs) {
					return
				}
				out[i] = listDir(dirs[i])
			}
		}, func(err error) {
			mu.Lock()
			perr = err
			mu.Unlock()
		})
	}
	wg.Wait()
	if perr != nil {
		return nil, perr
	}
	return out, nil
}

// listDir stats the transcripts or archives in dir: regular files named
// *.jsonl, not hidden (a temporary file being written is). A missing
// directory holds no files.
func listDir(dir string) dirListing {
	l := dirListing{dir: dir}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.err = err
		return l
	}
	h := sha256.New()
	var buf []byte
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".jsonl") || strings.HasPrefix(name, ".") {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			l.err = err
			return l
		}
		d := diskFile{
			path: filepath.Join(dir, name), dir: dir,
			size: info.Size(), mtime: info.ModTime().UnixNano(), ident: fileIdent(info),
		}
		l.files = append(l.files, d)
		buf = fmt.Appendf(buf[:0], "%s\x00%d\x00%d\x00%s\n", name, d.size, d.mtime, d.ident)
		h.Write(buf)
	}
	l.digest = h.Sum(nil)
	return l
}

// knownFiles returns the indexed files of dir by path.
func (ix *Index) knownFiles(ctx context.Context, dir string) (map[string]*fileRow, error) {
	rows, err := ix.db.QueryContext(ctx, "SELECT path, size, mtime, ident FROM files WHERE dir = ?", dir)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]*fileRow{}
	for rows.Next() {
		r := &fileRow{dir: dir}
		if err := rows.Scan(&r.path, &r.size, &r.mtime, &r.ident); err != nil {
			return nil, err
		}
		out[r.path] = r
	}
	return out, rows.Err()
}

// writer indexes files inside one transaction.
type writer struct {
	tx     *sql.Tx
	home   string
	insert *sql.Stmt
}

func newWriter(ctx context.Context, tx *sql.Tx, home string) (*writer, error) {
	insert, err := tx.PrepareContext(ctx,
		"INSERT INTO messages(rowid, text, scope, role, session, source, time) VALUES (?, ?, ?, ?, ?, ?, ?)")
	if err != nil {
		return nil, err
	}
	return &writer{tx: tx, home: home, insert: insert}, nil
}

func (w *writer) close() { w.insert.Close() }

// indexResult is what indexing one file did.
type indexResult struct {
	stats SyncStats
	bytes int64
	// unread is why the file could not be read; it was skipped.
	unread error
}

// index brings one file's rows up to date. It reads the file's row again
// inside the transaction, so work another process committed meanwhile is
// not repeated.
func (w *writer) index(ctx context.Context, path string) (indexResult, error) {
	var res indexResult
	row, found, err := w.row(ctx, path)
	if err != nil {
		return res, err
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return w.gone(ctx, row, found)
	}
	if err != nil {
		res.stats.Skipped, res.unread = 1, err
		return res, nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		res.stats.Skipped, res.unread = 1, err
		return res, nil
	}
	if !info.Mode().IsRegular() {
		return w.gone(ctx, row, found)
	}
	size, mtime, ident := info.Size(), info.ModTime().UnixNano(), fileIdent(info)
	if found && row.size == size && row.mtime == mtime && row.ident == ident {
		return res, nil
	}
	res.stats.Read = 1
	if !found {
		if row, err = w.addRow(ctx, path); err != nil {
			return res, err
		}
	} else if !appendedTo(f, row, size, ident) {
		// Cut back or replaced: what is indexed may no longer be in it.
		if err := w.forget(ctx, row); err != nil {
			return res, err
		}
	}
	n, added, err := w.scan(ctx, f, row, size)
	res.stats.Messages = added
	if err != nil {
		return res, err
	}
	res.bytes = n
	return res, w.save(ctx, f, row, n, size, mtime, ident)
}

// gone drops the row of a file that is no longer there, or no longer a
// regular file, if it has one.
func (w *writer) gone(ctx context.Context, row *fileRow, found bool) (indexResult, error) {
	var res indexResult
	if found {
		res.stats.Removed = 1
		return res, w.remove(ctx, row.id)
	}
	return res, nil
}

// addRow inserts the files row of path, not yet indexed, and returns it.
func (w *writer) addRow(ctx context.Context, path string) (*fileRow, error) {
	dir := filepath.Dir(path)
	row := &fileRow{path: path, dir: dir, source: sourceOf(w.home, dir)}
	row.archive = row.source == ArchiveSource
	row.session = strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if row.archive {
		row.session = ""
	}
	if err := w.tx.QueryRowContext(ctx,
		`INSERT INTO files (path, dir, source, archive, session, started, size, mtime, ident, offset, ordinal, tail)
		VALUES (?, ?, ?, ?, ?, 0, 0, 0, '', 0, 0, x'') RETURNING id`,
		row.path, row.dir, row.source, row.archive, row.session).Scan(&row.id); err != nil {
		return nil, err
	}
	return row, nil
}

// forget deletes the messages indexed of row's file and resets row so that
// the file is read again from its start.
func (w *writer) forget(ctx context.Context, row *fileRow) error {
	if _, err := w.tx.ExecContext(ctx, "DELETE FROM messages WHERE rowid BETWEEN ? AND ?",
		row.id<<32, row.id<<32|0xFFFFFFFF); err != nil {
		return err
	}
	row.offset, row.ordinal, row.tail, row.started = 0, 0, nil, 0
	return nil
}

// scan reads f's complete lines from row's offset up to size, inserting
// the messages they hold and keeping row's session, start time and
// ordinal up to date. It returns how many bytes it read and how many
// messages it added.
func (w *writer) scan(ctx context.Context, f *os.File, row *fileRow, size int64) (int64, int, error) {
	if _, err := f.Seek(row.offset, io.SeekStart); err != nil {
		return 0, 0, err
	}
	k := transcriptFile
	if row.archive {
		k = archiveFile
	}
	scope := scopeToken(row.source)
	added := 0
	n, err := scanLines(f, size-row.offset, func(b []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		l := decodeLine(k, b)
		if l.header != nil {
			if l.header.ID != "" {
				row.session = l.header.ID
			}
			row.started = l.header.Created.UnixMilli()
		}
		if l.msg == nil {
			return nil
		}
		if row.ordinal >= 0xFFFFFFFF {
			return nil // past what a rowid can number; never seen in practice
		}
		row.ordinal++
		sess, at := row.session, row.started
		if row.archive {
			sess, at = l.session, l.time.UnixMilli()
		}
		if at < 0 {
			at = 0 // the zero time
		}
		txt := messageText(l.msg)
		if txt == "" {
			return nil
		}
		added++
		_, err := w.insert.ExecContext(ctx, row.id<<32|int64(row.ordinal), txt, scope, string(l.msg.Role), sess, row.source, at)
		return err
	})
	return n, added, err
}

// save advances row past the n bytes just read, keeps the bytes before
// its new offset (by which appendedTo knows an append from a rewrite) and
// writes it back with the file's size, mtime and ident.
func (w *writer) save(ctx context.Context, f *os.File, row *fileRow, n, size, mtime int64, ident string) error {
	row.offset += n
	if n > 0 {
		row.tail = make([]byte, min(tailLen, row.offset))
		if _, err := f.ReadAt(row.tail, row.offset-int64(len(row.tail))); err != nil {
			return err
		}
	}
	_, err := w.tx.ExecContext(ctx,
		`UPDATE files SET session = ?, started = ?, size = ?, mtime = ?, ident = ?, offset = ?, ordinal = ?, tail = ?
		WHERE id = ?`,
		row.session, row.started, size, mtime, ident, row.offset, row.ordinal, row.tail, row.id)
	return err
}

// appendedTo reports whether the file f (now of size and ident) is the
// file row describes with lines added: the same file, no shorter than
// what was indexed, and with the same bytes just before that point.
func appendedTo(f *os.File, row *fileRow, size int64, ident string) bool {
	if ident != row.ident || size < row.offset {
		return false
	}
	if len(row.tail) == 0 {
		return row.offset == 0
	}
	got := make([]byte, len(row.tail))
	if _, err := f.ReadAt(got, row.offset-int64(len(got))); err != nil {
		return false
	}
	return bytes.Equal(got, row.tail)
}

// row reads the files row of path.
func (w *writer) row(ctx context.Context, path string) (*fileRow, bool, error) {
	r := &fileRow{path: path}
	err := w.tx.QueryRowContext(ctx,
		`SELECT id, dir, source, archive, session, started, size, mtime, ident, offset, ordinal, tail
		FROM files WHERE path = ?`, path).Scan(
		&r.id, &r.dir, &r.source, &r.archive, &r.session, &r.started, &r.size, &r.mtime, &r.ident,
		&r.offset, &r.ordinal, &r.tail)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return r, true, nil
}

// remove drops a file and its messages from the index.
func (w *writer) remove(ctx context.Context, id int64) error {
	if _, err := w.tx.ExecContext(ctx, "DELETE FROM messages WHERE rowid BETWEEN ? AND ?", id<<32, id<<32|0xFFFFFFFF); err != nil {
		return err
	}
	_, err := w.tx.ExecContext(ctx, "DELETE FROM files WHERE id = ?", id)
	return err
}
