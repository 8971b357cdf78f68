//go:build unix

package history

import (
	"io/fs"
	"strconv"
	"syscall"
)

// fileIdent is the device and inode of a file, which tell a file replaced
// by another (an atomic rewrite) from the same file grown.
func fileIdent(info fs.FileInfo) string {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return strconv.FormatUint(uint64(st.Dev), 10) + ":" + strconv.FormatUint(uint64(st.Ino), 10)
}
