package study_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"hedgelab/internal/fuzz"
	"hedgelab/internal/report"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// plantSpace is the small corner of the default space the planting
// tests run the fuzzer over (shared with simnet's).
const plantSpace = "../fuzz/testdata/plant-space.toml"

// findPlanted runs the fuzzer over the plant space checking only
// invariant inv and returns its failure, shrunk to at most maxLines.
func findPlanted(t *testing.T, inv string, maxLines int, sample int) fuzz.Failure {
	t.Helper()
	dir := t.TempDir()
	sp, err := scenarios.LoadSpace(plantSpace)
	if err != nil {
		t.Fatal(err)
	}
	res, err := fuzz.Run(context.Background(), fuzz.Options{Space: sp, N: 40, Seed: 9, Out: filepath.Join(dir, "out"),
		Only: []string{inv}, Sample: sample, ShrinkBudget: 120, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 || res.Failures[0].Invariant != inv {
		t.Fatalf("fuzz found %+v, want invariant %s", res.Failures, inv)
	}
	f := res.Failures[0]
	text, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Path == f.Original || strings.Count(string(text), "\n") > maxLines {
		t.Errorf("%s: shrunk to %d lines (%s), want at most %d:\n%s", inv, f.Lines, f.Path, maxLines, text)
	}
	return f
}

// Issue 24: each figure invariant fails when broken (planted through a
// test-only hook, on scenarios with some feature), the fuzzer finds it and
// shrinks the scenario to a few dozen lines; so do the determinism and
// --parallel checks, on a sample.
func TestPlantedFigureInvariantsAreFoundAndShrunk(t *testing.T) {
	var calls atomic.Int64
	for _, c := range []struct {
		inv    string
		sample int
		plant  func(i, workers int, f *report.Figures, m *simnet.Stats)
	}{
		{"figures", -1, func(i, workers int, f *report.Figures, m *simnet.Stats) {
			if m.Errors > 0 {
				f.P99 = math.NaN()
			}
		}},
		{"rates", -1, func(i, workers int, f *report.Figures, m *simnet.Stats) {
			if len(m.Replicas) > 2 {
				f.ErrorRate = 1.5
			}
		}},
		{"ru-multiplier", -1, func(i, workers int, f *report.Figures, m *simnet.Stats) {
			if m.Faults > 0 && m.RUReturned > 0 {
				f.RUMultiplier = 0.5
			}
		}},
		{"common-arrivals", -1, func(i, workers int, f *report.Figures, m *simnet.Stats) {
			if i == 1 {
				m.Arrivals++
			}
		}},
		{"determinism", 1, func(i, workers int, f *report.Figures, m *simnet.Stats) {
			if m.Hedged > 0 && calls.Add(1)%2 == 0 {
				m.Attempts++ // summary.json's counters change from one run to the next
			}
		}},
		{"parallel", 1, func(i, workers int, f *report.Figures, m *simnet.Stats) {
			if m.Hedged > 0 && workers > 1 {
				m.Attempts++ // the output depends on --parallel
			}
		}},
	} {
		t.Run(c.inv, func(t *testing.T) {
			study.PlantFigures(c.plant)
			defer study.PlantFigures(nil)
			f := findPlanted(t, c.inv, 50, c.sample)
			if c.sample > 0 {
				return // the file reproduces under fuzz, not under one run
			}
			s, err := scenarios.Load(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			cfg, pols, _ := s.Config()
			_, err = study.Simulate(cfg, pols, s.Replications, study.Options{Parallel: 1})
			if fe, ok := err.(*study.FigureError); !ok || fe.Invariant != c.inv {
				t.Errorf("the shrunk file gives %v, want invariant %s", err, c.inv)
			}
		})
	}
}
