package scorecard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hedgelab/scenarios"
)

// A scorecard whose replications would simulate more than the scenario
// limits allow is refused before its first simulation, naming the
// scenario and the flags to lower (a user's --reps 1000000000 ran
// unbounded); the scenario's own replications at the default cap pass.
func TestScoreRefusesWorkBeyondTheLimits(t *testing.T) {
	s, err := scenarios.Get("tiny")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{Start: 1_000_000_000}, {Cap: 1_000_000_000}} {
		_, err := Score(s, o)
		if err == nil || !strings.Contains(err.Error(), s.Source) || !strings.Contains(err.Error(), "--reps") || !strings.Contains(err.Error(), "the limit is") {
			t.Errorf("Start %d Cap %d: error %v; want the limit named, with the scenario and --reps", o.Start, o.Cap, err)
		}
	}
	cfg, own, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	entries, _, err := lineup(s, cfg, own, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkWork(s, cfg, len(entries), len(GridMs), 3, 12); err != nil {
		t.Errorf("the default replications refused: %v", err)
	}
}

// A directory with no scenario files is an error naming it, not an empty
// scorecard ("0 losses of 0").
func TestFilesEmptyDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a scenario"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	var got error
	for s, err := range Files(dir).Scenarios {
		if s != nil {
			n++
		}
		got = err
	}
	if n != 0 || got == nil || !strings.Contains(got.Error(), dir) || !strings.Contains(got.Error(), "*.toml") {
		t.Errorf("Files(%q): %d scenarios, error %v; want an error naming the directory", dir, n, got)
	}
}
