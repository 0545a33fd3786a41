package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// isOutputName reports whether name is a file hedgesim writes into an
// output directory ([WriteRun], [WriteSweep], [WritePartial]): summary.*,
// sweep.*, timeline.csv, replicas.csv, hedge_units.csv, quantiles_*.csv,
// .png/.svg charts, and a shard's shard.json and shard.bin.
func isOutputName(name string) bool {
	switch name {
	case "summary.json", "summary.csv", "timeline.csv", "replicas.csv", "hedge_units.csv", "sweep.json", "sweep.csv", PartialHeader, PartialState:
		return true
	}
	if strings.HasPrefix(name, "quantiles_") && strings.HasSuffix(name, ".csv") {
		return true
	}
	return strings.HasSuffix(name, ".png") || strings.HasSuffix(name, ".svg")
}

// CheckOutputDir reports, before any simulation, whether [WriteRun] or
// [WriteSweep] could replace dir: dir must not be an existing file, may
// exist only as a directory of earlier results (files hedgesim writes, see
// WriteRun, nothing else, so a run never deletes a user's files), and its
// parent must allow creating a directory (it is created when missing); it
// must not be inside another directory of results.
// Errors name dir once and say what to do.
func CheckOutputDir(dir string) error {
	if dir == "" {
		return errors.New("empty output directory")
	}
	if err := checkNotNested(dir); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return fmt.Errorf("output directory %s is a file; choose a directory", dir)
	case err == nil:
		entries, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("output directory %s: %w", dir, unwrapPath(err))
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || !isOutputName(e.Name()) {
				return fmt.Errorf("output directory %s holds %s, which hedgesim did not write; results replace the whole directory, so choose a new or empty one", dir, filepath.Join(dir, e.Name()))
			}
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("output directory %s: %w", dir, unwrapPath(err))
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("cannot create output directory %s: %w", dir, unwrapPath(err))
	}
	probe, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".probe-")
	if err != nil {
		return fmt.Errorf("cannot write output directory %s: %w", dir, unwrapPath(err))
	}
	return os.Remove(probe)
}

// unwrapPath drops the operation and path of a *fs.PathError, whose path
// the caller's message already names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// writeDir writes outs into a new temporary directory beside dir and then
// puts it in dir's place, so dir holds either its previous content or
// exactly this run's files: never a mix with an earlier run's, never a
// partial set. An existing dir must pass [CheckOutputDir]. On error dir is
// unchanged and no temporary directory is left. Errors name the file or
// directory once.
func writeDir(dir string, outs []output) (paths []string, err error) {
	if dir == "" {
		return nil, errors.New("report: empty output directory")
	}
	if err := CheckOutputDir(dir); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	parent, base := filepath.Split(filepath.Clean(dir))
	if parent == "" {
		parent = "."
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("report: cannot write output directory %s: %w", dir, unwrapPath(err))
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	for _, o := range outs {
		if err := WriteFileAtomic(filepath.Join(tmp, o.name), o.data); err != nil {
			return nil, fmt.Errorf("report: %s: %w", filepath.Join(dir, o.name), unwrapWrite(err))
		}
		paths = append(paths, filepath.Join(dir, o.name))
	}
	// Move the old directory aside, the new one in, then drop the old.
	old := ""
	if _, err := os.Lstat(dir); err == nil {
		old = tmp + ".old"
		if err := rename(dir, old); err != nil {
			return nil, fmt.Errorf("report: replace %s: %w", dir, unwrapLink(err))
		}
	}
	if err := rename(tmp, dir); err != nil {
		if old != "" {
			_ = rename(old, dir)
		}
		return nil, fmt.Errorf("report: replace %s: %w", dir, unwrapLink(err))
	}
	if old != "" {
		_ = os.RemoveAll(old)
	}
	if d, derr := os.Open(parent); derr == nil {
		_ = d.Sync() // best effort, as in WriteFileAtomic
		_ = d.Close()
	}
	return paths, nil
}

// unwrapWrite drops WriteFileAtomic's "write <path>: " prefix (the caller
// names the final path instead of the temporary one).
func unwrapWrite(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return unwrapPath(u)
	}
	return err
}

// unwrapLink drops the paths of an *os.LinkError.
func unwrapLink(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
