package scenarios_test

// Issue 24: the Phase 2 cases of ../shared/cases/phase2 (copied byte for
// byte into testdata/phase2, so they run without ../shared; the shared
// directory's are read too when present, and a changed one is tested as
// well). Each is refused with a file:line error or runs within its work
// limit with finite figures. crash-pollers-stale-advance and
// hang-fanout-pages are this branch's defects and get their right values;
// the other four depend on the Phase 2 decisions (issue 26: A1, A2, A5,
// A6), whose tests assert their figures.

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hedgelab/internal/racecases"
	"hedgelab/internal/report"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// phase2CaseFiles returns the case files: the repository's copies, then
// any file of ../shared/cases/phase2 (or $HEDGELAB_SHARED/cases/phase2)
// whose content differs from them.
func phase2CaseFiles(t *testing.T) map[string][]byte {
	t.Helper()
	local, _ := filepath.Glob(filepath.Join("testdata", "phase2", "*.toml"))
	shared, _ := filepath.Glob(filepath.Join(racecases.SharedDir(), "cases", "phase2", "*.toml"))
	if len(local) != 6 {
		t.Fatalf("testdata/phase2: %d case files, want the 6 of ../shared/cases/phase2", len(local))
	}
	out := map[string][]byte{}
	var seen [][]byte
	for _, list := range [][]string{local, shared} {
		for _, path := range list {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if slices.ContainsFunc(seen, func(d []byte) bool { return bytes.Equal(d, data) }) {
				continue
			}
			seen = append(seen, data)
			out[path] = data
		}
	}
	return out
}

// phase2TestWork is the most requests a case may send in this test (all
// its policies and replications): a case expected to send more runs
// shortened (duration_s scaled down), so the suite stays fast; the whole
// case is bounded by its limit (MaxSimulatedWork, and the run's hard cap).
const phase2TestWork = 1e6

func TestPhase2Cases(t *testing.T) {
	files := phase2CaseFiles(t)
	for _, path := range slices.Sorted(func(yield func(string) bool) {
		for p := range files {
			if !yield(p) {
				return
			}
		}
	}) {
		name := strings.TrimSuffix(filepath.Base(path), ".toml")
		t.Run(name, func(t *testing.T) {
			s, err := scenarios.Parse(path, files[path])
			if err != nil {
				var e *scenarios.Error
				if !errors.As(err, &e) || e.File != path || e.Line < 1 || !strings.Contains(e.Msg, "limit") {
					t.Fatalf("refused without a file:line error naming a limit: %v", err)
				}
				if name == "hang-fanout-pages" && (e.Field != "feed.pages" || !strings.Contains(e.Msg, "1e+07 pages")) {
					t.Errorf("hang-fanout-pages: %v; want feed.pages refused for its 1e+07 pages per query", err)
				}
				t.Logf("refused: %v", err)
				return
			}
			if name == "hang-fanout-pages" {
				t.Fatal("hang-fanout-pages validates: 1000 leaves × 10000 pages per query")
			}
			cfg, pols, err := s.Config()
			if err != nil {
				t.Fatal(err)
			}
			runs := float64(len(pols) * s.Replications)
			work := cfg.ExpectedWork().Total() * runs
			if work > scenarios.MaxSimulatedWork {
				t.Fatalf("validates with %.3g requests expected, above the limit %g", work, scenarios.MaxSimulatedWork)
			}
			if work > phase2TestWork {
				k := phase2TestWork / work
				if s, err = s.WithParam("duration_s", math.Round(s.File.DurationS*k)); err != nil {
					t.Fatal(err)
				}
				if cfg, pols, err = s.Config(); err != nil {
					t.Fatal(err)
				}
				t.Logf("%.3g requests expected: run for duration_s = %g", work, s.File.DurationS)
			}
			res, err := study.Simulate(cfg, pols, s.Replications, study.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range res.Policies {
				checkPhase2Figures(t, p, study.Figures(p))
			}
		})
	}
}

// checkPhase2Figures checks that a case's figures are finite and
// consistent: rates in [0, 1], the RU multiplier finite (RU was returned),
// and every feed count within its denominator.
func checkPhase2Figures(t *testing.T, p study.PolicyResult, f report.Figures) {
	t.Helper()
	m := p.Merged
	if m.Ops != m.Arrivals {
		t.Errorf("%s: %d operations of %d arrivals", p.Name, m.Ops, m.Arrivals)
	}
	for _, v := range []float64{f.P50, f.P99, f.P999, f.Max, f.Mean, f.RUMultiplier} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Errorf("%s: a figure is %v (figures %+v)", p.Name, v, f)
		}
	}
	for _, r := range []float64{f.HedgeRate, f.AlternateWinRate, f.ErrorRate} {
		if !(r >= 0 && r <= 1) {
			t.Errorf("%s: rate %v outside [0, 1]", p.Name, r)
		}
	}
	fd := m.Feed
	if fd == nil || f.Feed == nil {
		t.Fatalf("%s: no feed figures", p.Name)
	}
	pages := fd.Races - fd.SetupReads
	for _, c := range []struct {
		what  string
		n, of int64
	}{
		{"pages hedged", fd.PagesHedged, pages}, {"pages gated", fd.PagesGated, pages},
		{"stale pages", fd.StalePages, fd.Pages}, {"monotonic-read violations", fd.MonotonicViolations, fd.Pages},
		{"metadata hedges", fd.SetupReadsHedged, fd.SetupReads},
		{"duplicates", fd.Duplicates, fd.Delivered}, {"skips", fd.Skips, fd.Changes},
	} {
		if c.n < 0 || c.n > c.of {
			t.Errorf("%s: %d %s of %d", p.Name, c.n, c.what, c.of)
		}
	}
	for _, sh := range []report.Share{f.Feed.LegsPerPage, f.Feed.Gated, f.Feed.Stale, f.Feed.Monotonic, f.Feed.Duplicates, f.Feed.Skip} {
		if sh.Of > 0 && !(sh.CI[0] <= sh.Rate && sh.Rate <= sh.CI[1]) {
			t.Errorf("%s: %v outside its interval %v", p.Name, sh.Rate, sh.CI)
		}
	}
	if pr := fd.PollRUMultiplier(); fd.Kinds[simnet.FeedChangeFeed].Ops > 0 && (math.IsNaN(pr) || pr < 1) {
		t.Errorf("%s: polls' RU multiplier %v", p.Name, pr)
	}
}
