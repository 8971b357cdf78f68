package atomicfile

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces the file name with data, which ends up with permission
// perm. The directory of name must exist; a symlink at name is replaced,
// not written through. Errors name the step that failed and wrap the
// underlying *fs.PathError, which names the file.
func Write(name string, data []byte, perm fs.FileMode) (err error) {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	// CreateTemp opens the file with mode 0600, so nobody else can read
	// the data before it is complete.
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	tmpName := tmp.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmpName)
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write: %w", err)
	}
	if err = tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("sync: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	// The mode is set after the data is written: on Unix a write by an
	// unprivileged process clears the setuid and setgid bits.
	if err = os.Chmod(tmpName, perm); err != nil {
		return fmt.Errorf("set mode: %w", err)
	}
	if err = os.Rename(tmpName, name); err != nil {
		return fmt.Errorf("replace file: %w", err)
	}
	syncDir(dir)
	return nil
}

// WriteJSON replaces the file name with v as indented JSON and a final
// newline, creating its directory (mode 0700: what such files hold is
// usually the user's alone) when it is missing. It is how the home's small
// JSON stores (launch grants, workspace trust) are saved.
func WriteJSON(name string, v any, perm fs.FileMode) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return fmt.Errorf("create directory: %w", err)
	}
	return Write(name, append(data, '\n'), perm)
}
