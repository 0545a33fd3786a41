package scenarios_test

// Every defect hedgesim fuzz found (issue 24) is a regression scenario in
// testdata/fuzz/: the shrunk file it wrote, with a header naming the
// defect and the commit that fixed it. TestFuzzRegressions runs each (all
// its policies and replications, so every invariant is checked on the
// way) and asserts the right value of the figure that was wrong.

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"hedgelab/internal/report"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// fuzzRun is one policy's result of a regression scenario.
type fuzzRun struct {
	cfg *simnet.Config
	fig report.Figures
	m   *simnet.Stats
}

// fuzzRegressions maps each file in testdata/fuzz/ to the check of the
// figure its defect got wrong.
var fuzzRegressions = map[string]func(t *testing.T, r fuzzRun){
	// A stale advance of a finished poll crashed the run. One poller
	// polls both partitions every 153 ms (+1 ms service) while arrivals
	// run: every poll is counted once, with one page from each partition.
	"crash-feed-advance": func(t *testing.T, r fuzzRun) {
		polls := r.m.Feed.Kinds[simnet.FeedChangeFeed].Ops
		lo, hi := int64(r.m.ArrivalsEnd/(155*time.Millisecond)), int64(r.m.ArrivalsEnd/(153*time.Millisecond))+1
		if polls < lo || polls > hi || r.m.Feed.Pages != 2*polls {
			t.Errorf("%d polls, %d pages over %v of arrivals: want %d..%d polls, 2 pages each", polls, r.m.Feed.Pages, r.m.ArrivalsEnd, lo, hi)
		}
	},
	// Disabled counted pages as gated: with no hedge there is nothing to
	// gate and no second leg.
	"disabled-gated-pages": func(t *testing.T, r fuzzRun) {
		if f := r.fig.Feed; f.Gated.N != 0 || f.LegsPerPage.N != 0 || r.fig.HedgeRate != 0 || f.Gated.Of != f.Pages {
			t.Errorf("disabled: %d of %d pages gated, %d second legs, hedge rate %v: want none gated of every page, no second leg, 0", f.Gated.N, f.Gated.Of, f.LegsPerPage.N, r.fig.HedgeRate)
		}
	},
	// Disabled hedged a metadata read: its one metadata read is not
	// hedged, and no race has a hedging strategy.
	"disabled-metadata-hedged": func(t *testing.T, r fuzzRun) {
		f := r.fig.Feed
		if f.MetadataHedges.N != 0 || f.MetadataHedges.Of != 1 || r.fig.HedgeRate != 0 {
			t.Errorf("disabled: %d of %d metadata reads hedged, hedge rate %v: want 0 of 1, 0", f.MetadataHedges.N, f.MetadataHedges.Of, r.fig.HedgeRate)
		}
		for st := range r.fig.TerminalStates {
			if st != "none" {
				t.Errorf("disabled: terminal state %s, want only none (no hedging strategy active)", st)
			}
		}
	},
	// 47 gated of 46 pages: gated is a share of the pages raced.
	"gated-above-pages": func(t *testing.T, r fuzzRun) {
		if f := r.fig.Feed; f.Gated.N > f.Gated.Of || f.Gated.Of != f.Pages {
			t.Errorf("%d gated of %d, %d pages: want at most every page raced", f.Gated.N, f.Gated.Of, f.Pages)
		}
	},
	// hedge_rate_latency = -1: the one operation, a query, is hedged on
	// failover (its pages' races were counted as operations hedged on
	// failover, two of them): latency 0, failover 1.
	"hedge-rate-latency-negative": func(t *testing.T, r fuzzRun) {
		if r.fig.Ops != 1 || r.m.Hedged != 1 || r.fig.HedgeRateLatency != 0 || r.fig.HedgeRateFailover != 1 {
			t.Errorf("ops %d, hedged %d: hedge rate latency %v, failover %v; want 1 operation hedged on failover: 0 and 1",
				r.fig.Ops, r.m.Hedged, r.fig.HedgeRateLatency, r.fig.HedgeRateFailover)
		}
	},
	// 9 hedged of 7 pages: second legs are bounded by the pages raced.
	"hedged-above-pages": func(t *testing.T, r fuzzRun) {
		f := r.fig.Feed
		if want := 1 + float64(f.LegsPerPage.N)/float64(f.LegsPerPage.Of); f.LegsPerPage.N > f.LegsPerPage.Of || f.LegsPerPage.Of != f.Pages || f.LegsPerPage.Rate != want {
			t.Errorf("%d second legs over %d pages raced (%d pages), %v legs per page: want at most one per page, %v", f.LegsPerPage.N, f.LegsPerPage.Of, f.Pages, f.LegsPerPage.Rate, want)
		}
	},
	// Monotonic-read violations though every page came from one replica
	// (a lag episode moved its applied position back): none.
	"lag-backwards-monotonic": func(t *testing.T, r fuzzRun) {
		if f := r.fig.Feed; f.Monotonic.N != 0 || f.Monotonic.Of == 0 {
			t.Errorf("%d monotonic-read violations of %d pages from one replica, want 0 (of some)", f.Monotonic.N, f.Monotonic.Of)
		}
	},
	// The limit counted 2.63 units for a run of ~1.38e3 operations (a
	// rate change to 381/s): it counts each operation, within Poisson
	// noise of what ran.
	"limit-ignores-pages": func(t *testing.T, r fuzzRun) {
		w := r.cfg.ExpectedWork().Total()
		if d := math.Abs(w - float64(r.m.Ops)); d > 4*math.Sqrt(w) {
			t.Errorf("expected work %.4g units, %d operations ran: want within 4 sqrt(%.4g)", w, r.m.Ops, w)
		}
	},
	// A region_affine cursor whose pinned region failed restarted its
	// chain: every change is delivered once.
	"pinned-restart-duplicates": func(t *testing.T, r fuzzRun) {
		if f := r.fig.Feed; f.Duplicates.N != 0 || f.Duplicates.Of == 0 {
			t.Errorf("%d duplicates of %d changes with a region_affine cursor, want 0 (of some)", f.Duplicates.N, f.Duplicates.Of)
		}
	},
	// Alternate wins 1 of 0 hedged: with hedge_unit = "operation" each
	// query's query-plan read races on its own, and a hedged one is the
	// operation's hedge (as for page hedging), so the operations hedged
	// count at least the setup reads hedged, and alternate wins stay
	// within the operations hedged.
	"whole-setup-hedge-lost": func(t *testing.T, r fuzzRun) {
		if r.m.AlternateWins > r.m.Hedged || r.m.Hedged < r.m.Feed.SetupReadsHedged || r.m.Feed.SetupReadsHedged == 0 {
			t.Errorf("%d alternate wins, %d operations hedged, %d setup reads hedged: want wins <= hedged, setup reads hedged (some) <= hedged", r.m.AlternateWins, r.m.Hedged, r.m.Feed.SetupReadsHedged)
		}
	},
	// Skips with a region_local cursor refused as impossible: the pinned
	// chain in Australia East (region index 1, region_offset 1) resumes
	// in Southeast Asia (index 0) when the full queue refuses its page,
	// and reads the cursor one change ahead: each resume skips at most
	// one change, and skips come only with resumes.
	"resume-local-skips": func(t *testing.T, r fuzzRun) {
		if f := r.m.Feed; f.Skips == 0 || f.Skips > f.Resumes {
			t.Errorf("%d skips after %d resumes, want some, at most 1 each (region_offset 1, regions 1 apart)", f.Skips, f.Resumes)
		}
	},
	// RU × printed as 0 when no RU was returned: it is undefined (NaN).
	"ru-multiplier-zero": func(t *testing.T, r fuzzRun) {
		if !math.IsNaN(r.fig.RUMultiplier) {
			t.Errorf("RU multiplier %v with %v RU returned, want undefined (NaN)", r.fig.RUMultiplier, r.m.RUReturned)
		}
	},
	// 5.26M events (a wake chain per abort in service): the events stay
	// a few per unit of work, and utilisation is busy over capacity.
	"serverfree-storm": func(t *testing.T, r fuzzRun) {
		if w := r.cfg.ExpectedWork().Total(); float64(r.m.Events) > 4*w {
			t.Errorf("%d events for %.4g units of work, want at most 4 per unit", r.m.Events, w)
		}
		checkUtilisation(t, r.m)
	},
	// Utilisation 1.10 (a background service running past the run's last
	// event counted in full): at most 1, busy within the span.
	"utilisation-above-one": func(t *testing.T, r fuzzRun) {
		checkUtilisation(t, r.m)
	},
}

// checkUtilisation checks every replica with servers: its utilisation is
// its busy time over servers × span (computed here from the counts), at
// most 1, and the span is the run's end.
func checkUtilisation(t *testing.T, m *simnet.Stats) {
	t.Helper()
	c := m.Capacity
	if c.Span != m.End {
		t.Errorf("span %v, want the run's end %v", c.Span, m.End)
	}
	for i, rs := range c.Replicas {
		if rs.Servers == 0 {
			continue
		}
		want := float64(rs.Busy) / (float64(rs.Servers) * float64(c.Span))
		if u := c.Utilisation(i); u != want || u > 1 || rs.Busy > time.Duration(rs.Servers)*c.Span {
			t.Errorf("%s: utilisation %v, busy %v of %d servers × %v: want busy/(servers × span) = %v, at most 1", rs.Name, u, rs.Busy, rs.Servers, c.Span, want)
		}
	}
}

func TestFuzzRegressions(t *testing.T) {
	files, err := filepath.Glob("testdata/fuzz/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".toml"))
	}
	for name := range fuzzRegressions {
		if !slices.Contains(names, name) {
			t.Errorf("no testdata/fuzz/%s.toml for its check", name)
		}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			check := fuzzRegressions[name]
			if check == nil {
				t.Fatalf("testdata/fuzz/%s.toml has no check in fuzzRegressions: add the figure its defect got wrong", name)
			}
			path := filepath.Join("testdata", "fuzz", name+".toml")
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(text), "# Regression scenario (issue 24)") || !strings.Contains(string(text), "# Fixed in ") {
				t.Errorf("%s: header should name the defect and the commit that fixed it", path)
			}
			s, err := scenarios.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			cfg, pols, err := s.Config()
			if err != nil {
				t.Fatal(err)
			}
			res, err := study.Simulate(cfg, pols, s.Replications, study.Options{})
			if err != nil {
				t.Fatalf("run (invariants checked): %v", err)
			}
			for _, p := range res.Policies {
				check(t, fuzzRun{cfg: cfg, fig: study.Figures(p), m: p.Merged})
			}
		})
	}
}
