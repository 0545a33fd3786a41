package report

import (
	"fmt"
	"os"
	"path/filepath"
)

// resultsAbove returns the nearest directory above dir (dir itself
// excluded) that holds hedgesim results (a summary.json, sweep.json or a
// shard's shard.json), or
// "" when none does. Writing into such a directory would nest one run's
// results inside another's, which the next run of the outer one deletes
// (a directory is replaced as a whole) or refuses.
func resultsAbove(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		for _, name := range []string{"summary.json", "sweep.json", PartialHeader} {
			if fi, err := os.Stat(filepath.Join(d, name)); err == nil && fi.Mode().IsRegular() {
				return d
			}
		}
		if parent := filepath.Dir(d); parent == d {
			return ""
		}
	}
}

// checkNotNested is CheckOutputDir's rule that dir is not inside another
// results directory.
func checkNotNested(dir string) error {
	if above := resultsAbove(dir); above != "" {
		if wd, err := os.Getwd(); err == nil && !filepath.IsAbs(dir) {
			if rel, err := filepath.Rel(wd, above); err == nil {
				above = rel
			}
		}
		return fmt.Errorf("output directory %s is inside %s, a directory of hedgesim results that its next run replaces as a whole; choose a directory outside it", dir, above)
	}
	return nil
}
