package simnet_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"
)

// TestFeedStaleAdvanceHarmless is issue 24's crash
// (crash-pollers-stale-advance): two pages of one poll answered at the
// same instant each queue an advance of the poll; the first ends it, and
// the second reached the finished poll (a nil driver). With constant
// service times and no jitter every leaf of every poll answers at one
// instant, so every poll has stale advances; the run must end with every
// poll counted once.
func TestFeedStaleAdvanceHarmless(t *testing.T) {
	cfg := feedAccount(t, 5, 5*time.Second, simnet.MixEntry{Kind: hedging.Upsert, Weight: 1})
	page := mustBuild(t, dist.Spec{Family: "constant", ValueMs: f(4)})
	for i := range cfg.Replicas {
		cfg.Replicas[i].Default = page
	}
	cfg.Consistency = simnet.Eventual
	cfg.Feed = &simnet.Feed{ChangeFeed: simnet.ChangeFeed{Pollers: 2, PollInterval: 50 * time.Millisecond}}
	for _, pol := range []simnet.Policy{disabledPolicy(), staticPolicy(2)} {
		st, err := simnet.Run(cfg, pol, 0, simnet.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		polls := st.Feed.Kinds[simnet.FeedChangeFeed].Ops
		// Two pollers, each polling every 50 ms plus the poll's own 5 ms
		// (more when hedged), while arrivals run (5 s): at most
		// 2 × 5 s / 55 ms ≈ 182 polls, each counted once, and each at least
		// one page from each of its 4 leaves (8 partitions / 2 pollers).
		if polls < 150 || polls > 182 {
			t.Errorf("%s: %d polls, want at most 182", pol.Name, polls)
		}
		if st.Feed.Pages < 4*polls {
			t.Errorf("%s: %d pages over %d polls, want at least 4 per poll", pol.Name, st.Feed.Pages, polls)
		}
	}
}

// TestWorkExpected: a run's expected work counts every request, not only
// operations: issue 24's hang-fanout-pages (5 queries of 1000 leaves ×
// 10000 pages) counted 5 operations; its pages are 5 × 10⁷, and the
// operation itself is over MaxOperationPages.
func TestWorkExpected(t *testing.T) {
	cfg := feedAccount(t, 0.25, 20*time.Second, simnet.MixEntry{Kind: hedging.QueryPage, Weight: 1})
	cfg.Workload.Partitions = 1000
	pages := mustBuild(t, dist.Spec{Family: "constant", ValueMs: f(10000)})
	cfg.Feed = &simnet.Feed{Pages: pages, MaxPages: simnet.MaxFeedPages, FanOut: 1000, MaxFanOut: 1000,
		Setup: simnet.Setup{Collection: true, PKRanges: true, QueryPlan: true}}
	w := cfg.ExpectedWork()
	if w.Operations != 5 || w.FeedOperations != 5 || w.Pages != 5e7 || w.SetupReads != 5+2 {
		t.Errorf("ExpectedWork = %+v, want 5 operations, all feed operations, 5e7 pages, 7 setup reads (a plan per query, 2 cold reads for the one instance)", w)
	}
	if got := w.Total(); got != 5e7+7 {
		t.Errorf("Total = %g, want %g", got, 5e7+7.0)
	}
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "MaxOperationPages") || !strings.Contains(err.Error(), "1e+07 pages") {
		t.Errorf("Validate = %v, want the query's 1e+07 pages refused by MaxOperationPages", err)
	}
	cfg.Feed.Pages = mustBuild(t, dist.Spec{Family: "constant", ValueMs: f(1000)})
	if err := cfg.Validate(); err != nil {
		t.Errorf("1000 leaves × 1000 pages (the limit): Validate = %v", err)
	}

	// Change-feed pollers every 1 ms over 10000 partitions for 10 min:
	// 6e5 polls of each partition, 6e9 pages, and no operation to count.
	cf := feedAccount(t, 1, 600*time.Second, simnet.MixEntry{Kind: hedging.Upsert, Weight: 1})
	cf.Workload.Partitions = 10000
	cf.Consistency = simnet.Eventual
	cf.Feed = &simnet.Feed{ItemsPerPage: 20, ChangeFeed: simnet.ChangeFeed{Pollers: 1000, PollInterval: time.Millisecond}}
	w = cf.ExpectedWork()
	if want := 10000*(600/0.001+1) + 600.0/20; math.Abs(w.PollPages-want) > 1e-6*want || w.Polls != 1000*(600/0.001+1) {
		t.Errorf("ExpectedWork = %+v, want %g poll pages over %g polls", w, want, 1000*(600/0.001+1))
	}
	if err := cf.Validate(); err == nil || !strings.Contains(err.Error(), "MaxRunWork") {
		t.Errorf("Validate = %v, want the run's 6e9 requests refused by MaxRunWork", err)
	}
}

// TestWorkHardCap: a run that sends more requests than its cap ends with
// ErrWorkLimit, whatever it expected: here every read of a 100%-503
// region retries (3 attempts per leg, hedged at once), so the run sends
// about 6 requests per operation where its configuration predicts 1.
func TestWorkHardCap(t *testing.T) {
	cfg := feedAccount(t, 1000, 100*time.Second)
	cfg.Faults = []simnet.Fault{{Status: hedging.Status{Code: 503}, Probability: 1}}
	if w := cfg.ExpectedWork().Total(); w != 1e5 {
		t.Fatalf("expected work %g, want 1e5", w)
	}
	_, err := simnet.Run(cfg, staticPolicy(30), 0, simnet.RunOptions{MaxWork: 2e5})
	if !errors.Is(err, simnet.ErrWorkLimit) {
		t.Fatalf("Run with MaxWork 2e5 = %v, want ErrWorkLimit", err)
	}
	st, err := simnet.Run(cfg, staticPolicy(30), 0, simnet.RunOptions{MaxWork: 1e7})
	if err != nil {
		t.Fatalf("Run with MaxWork 1e7 = %v", err)
	}
	if st.Attempts <= 2e5 {
		t.Errorf("%d attempts: the case does not exceed the first cap", st.Attempts)
	}
}

// TestRUPopulation is issue 24's "hedge 0.00% with RU × 1.021
// (change-feed pollers)": the pollers' pages are not operations (the
// hedge rate does not count them), so their RU must not move the
// operations' RU multiplier either; they have their own.
func TestRUPopulation(t *testing.T) {
	cfg := feedAccount(t, 50, 10*time.Second, simnet.MixEntry{Kind: hedging.Upsert, Weight: 1})
	cfg.Consistency = simnet.Eventual
	cfg.Episodes = []simnet.Episode{{Target: "a", Start: 0, End: 10 * time.Second, AddMs: 100, Fraction: 0.2, Factor: 1}}
	cfg.Feed = &simnet.Feed{RUCover: 2, RUPerItem: 0.1, ChangeFeed: simnet.ChangeFeed{Pollers: 2, PollInterval: 100 * time.Millisecond}}
	st, err := simnet.Run(cfg, staticPolicy(30), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := st.Feed
	if st.Hedged != 0 {
		t.Fatalf("%d upserts hedged; writes are never hedged", st.Hedged)
	}
	if got := st.RUMultiplier(); got != 1 {
		t.Errorf("operations' RU multiplier %v with no operation hedged, want 1 (the polls' RU counts apart)", got)
	}
	if f.PagesHedged == 0 || !(f.PollRUMultiplier() > 1) {
		t.Errorf("polls: %d pages hedged, RU multiplier %v; want some hedged and a multiplier above 1", f.PagesHedged, f.PollRUMultiplier())
	}
	if want := float64(st.Ops) * 5; math.Abs(st.RUCharged-want) > 1e-9*want {
		t.Errorf("operations' RU charged %v, want %v (5 RU per upsert, nothing else)", st.RUCharged, want)
	}
}

// TestRUZeroCharge is issue 24's "RU × 0.000 at 20% hedged": with every
// charge 0 no RU is returned, and the multiplier is undefined (NaN, "-"
// in the table), not 0.
func TestRUZeroCharge(t *testing.T) {
	cfg := feedAccount(t, 100, 5*time.Second)
	cfg.Episodes = []simnet.Episode{{Target: "a", Start: 0, End: 5 * time.Second, AddMs: 100, Fraction: 0.2, Factor: 1}}
	cfg.RU = map[hedging.OperationKind]float64{hedging.PointRead: 0}
	st, err := simnet.Run(cfg, staticPolicy(30), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Hedged == 0 || st.RUCharged != 0 || !math.IsNaN(st.RUMultiplier()) {
		t.Errorf("%d hedged, RU charged %v, multiplier %v; want hedges, 0 RU and an undefined (NaN) multiplier", st.Hedged, st.RUCharged, st.RUMultiplier())
	}
	cfg.RU[hedging.PointRead] = simnet.MaxRequestCharge * 2
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "RU") {
		t.Errorf("Validate with a %g RU charge = %v, want it refused (MaxRequestCharge)", cfg.RU[hedging.PointRead], err)
	}
}

// TestRUErrorDeterministic: with several charges out of range, Validate
// names the first kind in kind order every time, whatever the map's order.
func TestRUErrorDeterministic(t *testing.T) {
	cfg := feedAccount(t, 100, 5*time.Second)
	cfg.RU = map[hedging.OperationKind]float64{
		hedging.PointRead: -1, hedging.QueryPage: -1, hedging.ReadManyPage: -1, hedging.ChangeFeedPage: -1,
	}
	want := cfg.Validate()
	if want == nil || !strings.Contains(want.Error(), "RU["+hedging.PointRead.String()+"]") {
		t.Fatalf("Validate = %v, want the point read's charge named", want)
	}
	for range 50 {
		if err := cfg.Validate(); err == nil || err.Error() != want.Error() {
			t.Fatalf("Validate = %v, then %v", want, err)
		}
	}
}

// TestRegionOffsetBounded is issue 24's "region offsets near the int
// limit give 7.4 × 10⁶ duplicates per 10⁶ changes": the cursor arithmetic
// (LSN + offset × region index) overflowed. Every offset beyond the run's
// commit log has one effect (a cursor resumed in another region lands past
// its log's end, or before its start), so offsets are bounded by
// MaxRegionOffset and the largest one allowed gives the figures of any
// other beyond the log.
func TestRegionOffsetBounded(t *testing.T) {
	run := func(off int64) *simnet.FeedStats {
		cfg := feedAccount(t, 100, 10*time.Second, simnet.MixEntry{Kind: hedging.Upsert, Weight: 1})
		cfg.Consistency = simnet.Eventual
		cfg.Episodes = []simnet.Episode{{Target: "a", Start: 0, End: 10 * time.Second, AddMs: 100, Fraction: 0.2, Factor: 1}}
		cfg.Feed = &simnet.Feed{ItemsPerPage: 20, ChangeFeed: simnet.ChangeFeed{Pollers: 2, PollInterval: 100 * time.Millisecond,
			Scope: simnet.CursorRegionLocal, RegionOffset: off, Continuation: hedging.Portable}}
		if off > simnet.MaxRegionOffset {
			if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "RegionOffset") {
				t.Errorf("RegionOffset %d: Validate = %v, want it refused", off, err)
			}
			return nil
		}
		st, err := simnet.Run(cfg, staticPolicy(30), 0, simnet.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return st.Feed
	}
	run(math.MaxInt64)
	a, b := run(1e9), run(simnet.MaxRegionOffset)
	if a.Changes == 0 || a.Delivered == 0 {
		t.Fatalf("nothing delivered: %+v", *a)
	}
	if a.Duplicates != b.Duplicates || a.Skips != b.Skips || a.Delivered != b.Delivered || a.Pages != b.Pages {
		t.Errorf("offset 1e9: %d delivered, %d duplicates, %d skips, %d pages; offset MaxRegionOffset: %d, %d, %d, %d; want the same",
			a.Delivered, a.Duplicates, a.Skips, a.Pages, b.Delivered, b.Duplicates, b.Skips, b.Pages)
	}
}

// TestLagEpisodeNeverUnapplies is issue 24's "a lag episode that moves
// backwards gives 1126 monotonic-read violations from one replica with
// hedging disabled": an episode raising a replica's lag made it serve an
// older prefix than it had served a moment before. A replica never
// un-applies a write: while its lag rises it stops applying, so one
// replica's pages never go back in time, and with hedging off (every page
// from the primary) no read is non-monotonic.
func TestLagEpisodeNeverUnapplies(t *testing.T) {
	cfg := feedAccount(t, 100, 10*time.Second, simnet.MixEntry{Kind: hedging.QueryPage, Weight: 1}, simnet.MixEntry{Kind: hedging.Upsert, Weight: 3})
	cfg.WriteRegion = "B" // the primary, A, lags the hub
	cfg.ReplicationLagMs = map[string]float64{"A": 20}
	cfg.Consistency = simnet.Eventual
	cfg.Lag = &simnet.LagProcess{Episodes: []simnet.LagEpisode{
		{Target: "a", Start: 2 * time.Second, End: 4 * time.Second, LagMs: 1500},
		{Target: "a", Start: 6 * time.Second, End: 8 * time.Second, LagMs: 500},
	}}
	cfg.Feed = &simnet.Feed{Pages: mustBuild(t, dist.Spec{Family: "constant", ValueMs: f(20)}), FanOut: 2}
	st, err := simnet.Run(cfg, disabledPolicy(), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := st.Feed
	if f.Pages == 0 || f.StalePages == 0 {
		t.Fatalf("%d pages, %d stale: the case does not exercise the lag", f.Pages, f.StalePages)
	}
	if f.MonotonicViolations != 0 {
		t.Errorf("hedging disabled, every page from one replica: %d monotonic-read violations, want 0", f.MonotonicViolations)
	}
}
