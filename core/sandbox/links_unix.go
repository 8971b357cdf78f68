//go:build unix

package sandbox

import (
	"os"
	"syscall"
)

// linkCount returns how many hard links name the file fi describes.
func linkCount(_ string, fi os.FileInfo) (uint64, error) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink), nil
	}
	return 1, nil
}
