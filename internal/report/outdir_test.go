package report

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// Issue 12: a run replaces the whole output directory, so no file of an
// older run (a renamed policy's quantiles) is left mixed with the new one.
func TestWriteRunReplacesOlderRun(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	if _, err := WriteRun(dir, fakeRun(2, 1), Options{}); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "quantiles_renamed-policy.csv")
	if err := os.WriteFile(stale, []byte("q,latency_ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths, err := WriteRun(dir, fakeRun(2, 1), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s of the older run is still there", stale)
	}
	if got := dirNames(t, dir); len(got) != len(paths) {
		t.Errorf("dir holds %v, want exactly the %d files written", got, len(paths))
	}
	if got := dirNames(t, parent); !slices.Equal(got, []string{"out"}) {
		t.Errorf("parent holds %v, want only out (no temporary directories)", got)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o755 {
		t.Errorf("dir mode %v, want 0755", fi.Mode().Perm())
	}
}

// A failure to put the new directory in place leaves the old one intact
// and no temporary directory behind.
func TestWriteRunFailureKeepsOlderRun(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	if _, err := WriteRun(dir, fakeRun(2, 1), Options{}); err != nil {
		t.Fatal(err)
	}
	before := dirNames(t, dir)
	old := rename
	calls := 0
	rename = func(a, b string) error {
		calls++
		if calls == 2 { // the new directory into place
			return errors.New("injected rename failure")
		}
		return os.Rename(a, b)
	}
	defer func() { rename = old }()
	if _, err := WriteRun(dir, fakeRun(3, 1), Options{}); err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("error %v, want one naming %s", err, dir)
	}
	if got := dirNames(t, dir); !slices.Equal(got, before) {
		t.Errorf("dir holds %v after a failed write, want the older run's %v", got, before)
	}
	if got := dirNames(t, parent); !slices.Equal(got, []string{"out"}) {
		t.Errorf("parent holds %v, want only out", got)
	}
}

// Issue 12: the output directory is checked before any simulation, with a
// message that names it once.
func TestCheckOutputDir(t *testing.T) {
	parent := t.TempDir()
	file := filepath.Join(parent, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(parent, "user")
	if err := os.MkdirAll(user, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(user, "go.mod"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(parent, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, want string }{
		{filepath.Join(parent, "new"), ""},
		{file, "output directory " + file + " is a file; choose a directory"},
		{filepath.Join(file, "sub"), "output directory " + filepath.Join(file, "sub") + ": not a directory"},
		{user, "output directory " + user + " holds " + filepath.Join(user, "go.mod") + ", which hedgesim did not write; results replace the whole directory, so choose a new or empty one"},
	} {
		err := CheckOutputDir(c.dir)
		if got := ""; err != nil {
			got = err.Error()
			if got != c.want {
				t.Errorf("CheckOutputDir(%s) = %q, want %q", c.dir, got, c.want)
			}
		} else if c.want != "" {
			t.Errorf("CheckOutputDir(%s) = nil, want %q", c.dir, c.want)
		}
	}
	if os.Geteuid() != 0 { // root ignores permissions
		sub := filepath.Join(ro, "out")
		if err := CheckOutputDir(sub); err == nil || strings.Count(err.Error(), sub) != 1 {
			t.Errorf("read-only parent: %v, want an error naming %s once", err, sub)
		}
	}
}
