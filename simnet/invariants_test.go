package simnet_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hedgelab/internal/fuzz"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// plantSpacePath is the small corner of the default space the planting
// tests run the fuzzer over (shared with internal/study's).
const plantSpacePath = "../internal/fuzz/testdata/plant-space.toml"

// findPlanted runs the fuzzer over the plant space, checking only
// invariant inv, and returns the shrunk failure; it fails the test unless
// one is found and shrunk to at most maxLines lines that reproduce it.
func findPlanted(t *testing.T, inv string, maxLines int, opt fuzz.Options) fuzz.Failure {
	space, err := os.ReadFile(plantSpacePath)
	if err != nil {
		t.Fatal(err)
	}
	return findPlantedIn(t, string(space), inv, maxLines, opt)
}

// findPlantedIn is findPlanted in another space (layered over the default).
func findPlantedIn(t *testing.T, space, inv string, maxLines int, opt fuzz.Options) fuzz.Failure {
	t.Helper()
	dir := t.TempDir()
	spacePath := filepath.Join(dir, "space.toml")
	if err := os.WriteFile(spacePath, []byte(space), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := scenarios.LoadSpace(spacePath)
	if err != nil {
		t.Fatal(err)
	}
	opt.Space, opt.Out, opt.Only, opt.Sample = sp, filepath.Join(dir, "out"), []string{inv}, -1
	if opt.N == 0 {
		opt.N = 30
	}
	opt.Seed, opt.ShrinkBudget, opt.Parallel = 5, 120, 2
	res, err := fuzz.Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 || res.Failures[0].Invariant != inv {
		t.Fatalf("fuzz found %+v, want invariant %s", res.Failures, inv)
	}
	f := res.Failures[0]
	if f.Path == f.Original {
		t.Fatalf("%s: not shrunk (%d lines)", inv, f.Lines)
	}
	text, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(text), "\n"); n > maxLines || n != f.Lines {
		t.Errorf("%s: the shrunk file has %d lines (reported %d), want at most %d:\n%s", inv, n, f.Lines, maxLines, text)
	}
	return f
}

// reproduce runs the file at path as hedgesim run does and returns the
// invariant error of its first failing run (nil when none fails).
func reproduce(t *testing.T, path string) *simnet.InvariantError {
	t.Helper()
	s, err := scenarios.Load(path)
	if err != nil {
		t.Fatalf("the shrunk file does not validate: %v", err)
	}
	cfg, pols, _ := s.Config()
	for _, p := range pols {
		for r := range s.Replications {
			if _, err := simnet.Run(cfg, p, r, simnet.RunOptions{}); err != nil {
				var ie *simnet.InvariantError
				if !errors.As(err, &ie) {
					t.Fatalf("the shrunk file fails with %v", err)
				}
				return ie
			}
		}
	}
	return nil
}

// Issue 24: each invariant fails when its rule is broken (planted through
// a test-only hook, on scenarios with some feature), the fuzzer finds it
// and shrinks the scenario to a few dozen lines that keep the feature, and
// `hedgesim run` on the shrunk file breaks the same invariant.
func TestPlantedInvariantsAreFoundAndShrunk(t *testing.T) {
	for _, c := range []struct {
		inv   string
		plant func(cfg *simnet.Config, st *simnet.Stats)
		// keeps is text the shrunk file must still hold (the feature the
		// plant needs).
		keeps string
	}{
		{"arrivals", func(cfg *simnet.Config, st *simnet.Stats) {
			if st.Hedged > 0 {
				st.Ops++
			}
		}, "[[policies]]"},
		{"terminal-states", func(cfg *simnet.Config, st *simnet.Stats) {
			if len(cfg.Episodes) > 0 {
				st.Terminal[0]++
			}
		}, "[[episodes]]"},
		{"counts", func(cfg *simnet.Config, st *simnet.Stats) {
			if cfg.Workload.Partitions > 1 {
				st.AlternateWins = st.Hedged + 1
			}
		}, "partitions ="},
		{"ru", func(cfg *simnet.Config, st *simnet.Stats) {
			if len(cfg.Faults) > 0 {
				st.RUReturned = st.RUCharged + 1
			}
		}, "[[faults]]"},
		{"legs", func(cfg *simnet.Config, st *simnet.Stats) {
			if cfg.Fleet.Instances > 1 {
				simnet.PlantLeg(st)
			}
		}, "instances ="},
		{"disabled", func(cfg *simnet.Config, st *simnet.Stats) {
			if len(cfg.Workload.Mix) > 1 {
				simnet.PlantAlternate(st) // breaks only a disabled policy's rule
			}
		}, `type = "disabled"`},
		{"work", func(cfg *simnet.Config, st *simnet.Stats) {
			if cfg.OperationTimeout > 0 {
				st.Events += 1 << 40
			}
		}, "operation_timeout_ms"},
		{"memory", func(cfg *simnet.Config, st *simnet.Stats) {
			if cfg.TimelineWindow > 0 && cfg.Workload.ZipfS > 1 {
				st.Timeline = append(st.Timeline, make([]simnet.Window, 200_000)...)
			}
		}, "zipf_s"},
	} {
		t.Run(c.inv, func(t *testing.T) {
			simnet.PlantStats(c.plant)
			defer simnet.PlantStats(nil)
			f := findPlanted(t, c.inv, 45, fuzz.Options{N: 60})
			text, _ := os.ReadFile(f.Path)
			if !strings.Contains(string(text), c.keeps) {
				t.Errorf("the shrunk file lost %q:\n%s", c.keeps, text)
			}
			if ie := reproduce(t, f.Path); ie == nil || ie.Invariant != c.inv {
				t.Errorf("hedgesim run on the shrunk file: %v, want invariant %s", ie, c.inv)
			}
			simnet.PlantStats(nil)
			if ie := reproduce(t, f.Path); ie != nil {
				t.Errorf("without the plant the shrunk file still fails: %v", ie)
			}
		})
	}
}

// feedSpace has change-feed pollers with a global cursor in every
// scenario: no duplicate and no skip may appear.
const feedSpace = `
[size]
max_work = 20000

[fields]
duration_s = [2.0, 6.0]
"feed.change_feed.scope" = ["global"]
"feed.change_feed.on_304" = ["request"]

[p]
feed = 1.0
change_feed = 1.0
writes = 0.9
`

func TestPlantedFeedInvariant(t *testing.T) {
	simnet.PlantStats(func(cfg *simnet.Config, st *simnet.Stats) {
		if f := st.Feed; f != nil && f.Changes > 0 && f.Skips == 0 {
			f.Skips = 1
		}
	})
	defer simnet.PlantStats(nil)
	f := findPlantedIn(t, feedSpace, "feed-consistency", 45, fuzz.Options{})
	text, _ := os.ReadFile(f.Path)
	if !strings.Contains(string(text), "pollers") || !strings.Contains(f.Detail, "1 skips") {
		t.Errorf("detail %q, file:\n%s", f.Detail, text)
	}
	if ie := reproduce(t, f.Path); ie == nil || ie.Invariant != "feed-consistency" {
		t.Errorf("hedgesim run on the shrunk file: %v", ie)
	}
}

// A panic in a run is a "crash" (the study turns it into an error), and a
// run that never returns a "hang"; both are found.
func TestPlantedCrashAndHang(t *testing.T) {
	t.Run("crash", func(t *testing.T) {
		simnet.PlantStats(func(cfg *simnet.Config, st *simnet.Stats) {
			if len(cfg.Faults) > 1 {
				panic("planted")
			}
		})
		defer simnet.PlantStats(nil)
		f := findPlanted(t, "crash", 45, fuzz.Options{})
		if !strings.HasPrefix(f.Detail, "planted") {
			t.Errorf("detail %q", f.Detail)
		}
	})
	t.Run("hang", func(t *testing.T) {
		if testing.Short() {
			t.Skip("waits for the timeout")
		}
		simnet.PlantStats(func(cfg *simnet.Config, st *simnet.Stats) {
			if cfg.Workload.Clients > 0 {
				time.Sleep(5 * time.Second)
			}
		})
		defer simnet.PlantStats(nil)
		dir := t.TempDir()
		sp, _ := scenarios.DefaultSpace()
		res, err := fuzz.Run(context.Background(), fuzz.Options{Space: sp, N: 40, Seed: 5, Out: dir, Only: []string{"hang"},
			Sample: -1, Timeout: time.Second, Parallel: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failures) != 1 || res.Failures[0].Invariant != "hang" || res.Failures[0].Path != res.Failures[0].Original {
			t.Errorf("got %+v, want one unshrunk hang", res.Failures)
		}
	})
}
