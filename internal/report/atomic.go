package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Hooks replaced by tests to inject failures.
var (
	syncFile = (*os.File).Sync
	rename   = os.Rename
)

// WriteFileAtomic writes data to path so that path is either left untouched
// or holds the complete new content, never a truncated file. It writes a
// temporary file (".<name>.tmp-*") in the same directory, fsyncs it, sets
// its mode to 0644, renames it over path and then fsyncs the directory
// (best effort: directory fsync errors are ignored, as some file systems do
// not support it). On any error the temporary file is removed and the
// previous content of path, if any, is unchanged. Errors name path.
func WriteFileAtomic(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if base == "" {
		return fmt.Errorf("write %q: empty file name", path)
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close() // may already be closed; error irrelevant
			_ = os.Remove(tmp)
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = syncFile(f); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if fi, statErr := os.Lstat(path); statErr == nil && fi.IsDir() {
		// rename(2) would replace an empty directory on some systems;
		// never do that.
		return errors.New("target is a directory")
	}
	if err = rename(tmp, path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync() // best effort, see doc comment
		_ = d.Close()
	}
	return nil
}
