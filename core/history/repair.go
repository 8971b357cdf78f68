package history

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// SQLite's primary result codes: "database is locked" (busy), and for a
// database file that is not what SQLite wrote, "database disk image is
// malformed" and "file is not a database". Extended codes (a damaged FTS5
// table's CORRUPT_VTAB, say) carry them in their low byte.
const (
	sqliteBusy    = 5
	sqliteCorrupt = 11
	sqliteNotADB  = 26
)

// DamagedSuffix ends the name of the copy of a damaged index that a repair
// keeps beside the new one, for whoever wants to look at it; the next
// repair replaces it, so damage never fills the disk.
const DamagedSuffix = ".damaged"

// damaged reports whether err says the index's database file is damaged,
// as opposed to busy, full, unreadable or cancelled: only then does
// throwing it away and building it again help.
func damaged(err error) bool {
	return sqliteCause(err) != nil
}

// busy reports whether err is SQLite's SQLITE_BUSY (another connection
// holds the lock).
func busy(err error) bool {
	var e interface{ Code() int }
	return errors.As(err, &e) && e.Code()&0xff == sqliteBusy
}

// sqliteCause is the SQLite error in err's chain that says the database
// is damaged, or nil.
func sqliteCause(err error) error {
	var e interface {
		error
		Code() int
	}
	if errors.As(err, &e) {
		switch e.Code() & 0xff {
		case sqliteCorrupt, sqliteNotADB:
			return e
		}
	}
	return nil
}

// Repair says that a damaged index was moved aside and a new one built in
// its place.
type Repair struct {
	// Cause is SQLite's word for the damage.
	Cause string
	// Moved is where the damaged database went; empty when another
	// process had replaced it first.
	Moved string
}

// Notice is the one line that tells the user, or the model, about the
// repair: the index is derived data, so nothing was lost, but a search
// that took longer than usual deserves a reason.
func (r *Repair) Notice() string {
	where := "another process had already replaced it"
	if r.Moved != "" {
		where = "it was moved to " + r.Moved
	}
	return fmt.Sprintf("the history index was damaged (%s); %s and a new one was built from the saved sessions", r.Cause, where)
}

// SearchHome opens the index of home, searches it and closes it. An index
// found damaged, when opened or while searched, is moved aside and the
// search is made once more on a new index, which the search builds for
// its scope as it syncs; the Repair then says so. A new index found
// damaged too is an error: nothing is repaired twice.
func SearchHome(ctx context.Context, home string, q Query) (Result, *Repair, error) {
	var res Result
	rep, err := withRepair(ctx, home, func(ix *Index) error {
		var err error
		res, err = ix.Search(ctx, q)
		return err
	})
	return res, rep, err
}

// ReindexHome is Reindex of the index of home, which it opens and closes.
// A damaged index is moved aside and a new one built in its place, which
// the Repair reports.
func ReindexHome(ctx context.Context, home string, dirs []string, progress func(done, total int)) (SyncStats, *Repair, error) {
	var st SyncStats
	rep, err := withRepair(ctx, home, func(ix *Index) error {
		var err error
		st, err = ix.Reindex(ctx, dirs, progress)
		return err
	})
	return st, rep, err
}

// withRepair runs work on the index of home, and once more on a new index
// when the first one turns out damaged.
func withRepair(ctx context.Context, home string, work func(*Index) error) (*Repair, error) {
	was, err := useIndex(ctx, home, work)
	if err == nil || !damaged(err) {
		return nil, err
	}
	rep := &Repair{Cause: sqliteCause(err).Error()}
	if rep.Moved, err = moveAside(Path(home), was); err != nil {
		return nil, fmt.Errorf("the history index is damaged (%s) and could not be moved aside: %w", rep.Cause, err)
	}
	if _, err := useIndex(ctx, home, work); err != nil {
		return rep, err
	}
	return rep, nil
}

// useIndex opens the index of home, runs work on it and closes it. It
// returns the database file as found before it was opened (nil when there
// was none), so that a repair moves that file and no other.
func useIndex(ctx context.Context, home string, work func(*Index) error) (fs.FileInfo, error) {
	was, _ := os.Stat(Path(home))
	ix, err := Open(ctx, home)
	if err != nil {
		return was, err
	}
	err = work(ix)
	return was, errors.Join(err, ix.Close())
}

// moveAside moves the damaged database at path, with its write-ahead log,
// to path+DamagedSuffix (replacing an older copy and its log), and removes
// its shared-memory index, so that the next Open starts a new index. A
// process that still has the damaged index open goes on using those two
// files by name: moved or removed, they are never shared with the new
// index. was is the file found damaged; when path names another file now,
// another process has repaired the index already and nothing is moved.
func moveAside(path string, was fs.FileInfo) (string, error) {
	now, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if was != nil && !os.SameFile(was, now) {
		return "", nil
	}
	dst := path + DamagedSuffix
	for _, old := range []string{dst + "-wal", dst + "-shm"} {
		if err := os.Remove(old); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	if err := os.Rename(path+"-wal", dst+"-wal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := os.Rename(path, dst); err != nil {
		return "", err
	}
	if err := os.Remove(path + "-shm"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return dst, nil
}
