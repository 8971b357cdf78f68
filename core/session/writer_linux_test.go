package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"reasonix/core/provider"
	"reasonix/core/testenv"
)

// TestStoreOnARealFullDisk fills a small tmpfs so that the next record
// fits only in part: the torn part is cut off again, nothing is lost, and
// once the disk has room the file holds every record, whole and in order.
func TestStoreOnARealFullDisk(t *testing.T) {
	t.Parallel()
	disk := testenv.Tmpfs(t, 256<<10)
	s, err := Create(filepath.Join(disk, "sessions"), Header{ID: "tmpfs"})
	must(t, err)
	must(t, s.Append(provider.Message{Role: provider.RoleUser, Content: "before"}))
	must(t, barrierErr(t, s))
	before, err := os.Stat(s.Path())
	must(t, err)

	filler := filepath.Join(disk, "filler")
	n, err := testenv.Fill(filler)
	must(t, err)
	// One page free: the next record, four pages long, is written in part.
	must(t, os.Truncate(filler, n-4096))
	big := strings.Repeat("x", 16<<10)
	must(t, s.Append(provider.Message{Role: provider.RoleAssistant, Content: big}))
	if err := barrierErr(t, s); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("barrier on the full disk = %v, want ENOSPC", err)
	}
	if now, err := os.Stat(s.Path()); err != nil || now.Size() != before.Size() {
		t.Fatalf("after the failed write the file is %d bytes, want %d (the torn record cut off): %v", now.Size(), before.Size(), err)
	}

	must(t, os.Remove(filler))
	must(t, s.Append(provider.Message{Role: provider.RoleUser, Content: "after"}))
	must(t, barrierErr(t, s))
	must(t, s.Close())
	_, msgs, warn, err := Load(s.Path())
	must(t, err)
	if warn != nil || len(msgs) != 3 || msgs[0].Content != "before" || msgs[1].Content != big || msgs[2].Content != "after" {
		t.Fatalf("transcript: %d messages, warning %v", len(msgs), warn)
	}
}
