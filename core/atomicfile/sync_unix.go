//go:build unix

package atomicfile

import "os"

// syncDir flushes dir so that a rename in it survives a crash. Failure is
// ignored: the file has been replaced already, and some file systems
// cannot sync a directory at all.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
