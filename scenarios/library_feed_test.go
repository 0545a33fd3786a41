package scenarios_test

// Behaviour tests of the embedded feed scenarios (issue 20, spec §16
// Phase 2, §17 Q9): each is simulated as shipped, and with the one setting
// its header names changed, and checked against what it says it shows.

import (
	"math"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
	"hedgelab/simnet"
)

// feedRun simulates the embedded scenario name, after edit (when non-nil)
// changed its configuration, and returns the runs by policy name.
func feedRun(t *testing.T, name string, edit func(*simnet.Config)) map[string]*simnet.Stats {
	t.Helper()
	s, cfg, pols := libB(t, name)
	if edit != nil {
		edit(cfg)
	}
	return simB(t, cfg, pols, s.Replications)
}

// queries returns the query measurements of st.
func queries(st *simnet.Stats) *simnet.FeedKindStats { return &st.Feed.Kinds[simnet.FeedQuery] }

// noBreaker sets a consecutive-win threshold no run reaches, so the
// partition breaker (§9.5) never trips.
func noBreaker(c *simnet.Config) { c.Client.ConsecutiveHedgeWinThreshold = 1 << 30 }

func TestFeedQueryBrownout(t *testing.T) {
	m := feedRun(t, "feed-query-brownout", nil)
	dis, slow, fast := m["disabled"], m["static-1000ms"], m["static-50ms"]
	// 10 pages × (300 ms + ~8 ms + 1 ms RTT).
	within(t, "disabled p50 ms", queries(dis).QuantileMs(0.5), 3000, 3200)
	if slow.Feed.PagesHedged != 0 || queries(slow).QuantileMs(0.5) != queries(dis).QuantileMs(0.5) {
		t.Errorf("a 1 s per-page threshold fired: %d pages hedged, p50 %.0f vs %.0f ms",
			slow.Feed.PagesHedged, queries(slow).QuantileMs(0.5), queries(dis).QuantileMs(0.5))
	}
	// The breaker trips after 5 alternate wins per partition: later pages
	// start in West US 2 (~78 ms) and still hedge East US at 50 ms, so ~2x RU.
	within(t, "static-50ms p50 ms (breaker-driven stickiness)", queries(fast).QuantileMs(0.5), 750, 900)
	within(t, "static-50ms RU multiplier", fast.RUMultiplier(), 1.9, 2.1)

	m = feedRun(t, "feed-query-brownout", noBreaker)
	fast = m["static-50ms"]
	// Every page waits the threshold, then the alternate: 10 × (50 + 78) ms.
	within(t, "per-page, no breaker: p50 ms", queries(fast).QuantileMs(0.5), 1200, 1400)
	if f := fast.Feed; f.PagesHedged != f.Pages || f.AlternateWins != f.Pages {
		t.Errorf("per-page, no breaker: %d of %d pages hedged, %d alternate wins; want every page", f.PagesHedged, f.Pages, f.AlternateWins)
	}

	m = feedRun(t, "feed-query-brownout", func(c *simnet.Config) {
		noBreaker(c)
		c.Feed.Affinity = map[hedging.OperationKind]feed.Affinity{hedging.QueryPage: feed.PinAfterHedgeWin}
	})
	fast = m["static-50ms"]
	// The threshold once, then 9 pinned pages at ~78 ms.
	within(t, "pin after hedge win: p50 ms", queries(fast).QuantileMs(0.5), 780, 900)
	within(t, "pin after hedge win: pinned share of pages", float64(fast.Feed.PagesPinned)/float64(fast.Feed.Pages), 0.89, 0.91)
	within(t, "pin after hedge win: RU multiplier", fast.RUMultiplier(), 1, 1.15)
}

func TestFeedFanOut(t *testing.T) {
	m := feedRun(t, "feed-fan-out", nil)
	dis, hed := m["disabled"], m["static-50ms"]
	// Closed form: a query meets a slow leaf with probability 1 - (1 - p)^K.
	want := 1 - math.Pow(1-0.01, 100)
	n := float64(queries(dis).Ops)
	ci := 1.96 * math.Sqrt(want*(1-want)/n)
	within(t, "disabled: share of queries >= 1 s (closed form 0.634)", queries(dis).ShareAtLeast(1000), want-ci, want+ci)
	within(t, "static-50ms p99 ms", queries(hed).QuantileMs(0.99), 100, 200)
	within(t, "static-50ms RU multiplier", hed.RUMultiplier(), 1, 1.02)

	// A brown-out of every primary page with a gate of 8 legs in flight: no
	// more than 8 pages of the 100-leaf fan-out hedge at once; the rest run
	// unhedged.
	brown := func(c *simnet.Config) {
		c.Episodes = append(c.Episodes, simnet.Episode{Target: "eastus", End: time.Hour, AddMs: 300, Factor: 1})
		noBreaker(c)
	}
	open := feedRun(t, "feed-fan-out", brown)["static-50ms"]
	gated := feedRun(t, "feed-fan-out", func(c *simnet.Config) { brown(c); c.Feed.GateCapacity = 8 })["static-50ms"]
	if open.Feed.PagesHedged != open.Feed.Pages {
		t.Errorf("no gate: %d of %d pages hedged, want all", open.Feed.PagesHedged, open.Feed.Pages)
	}
	if g := gated.Feed; g.PeakLegsInFlight != 8 || g.PagesGated == 0 || g.PagesHedged+g.PagesGated != g.Pages {
		t.Errorf("gate 8: peak %d, gated %d, hedged %d of %d pages", g.PeakLegsInFlight, g.PagesGated, g.PagesHedged, g.Pages)
	}
	if gated.RUMultiplier() >= open.RUMultiplier() {
		t.Errorf("gate 8: RU multiplier %.3f, want below the ungated %.3f", gated.RUMultiplier(), open.RUMultiplier())
	}
}

func TestFeedChangeFeedCursors(t *testing.T) {
	once := func(what string, st *simnet.Stats) {
		t.Helper()
		f := st.Feed
		if f.Duplicates != 0 || f.Skips != 0 || float64(f.Delivered) < 0.99*float64(f.Changes) {
			t.Errorf("%s: %d duplicates, %d skips, %d of %d changes delivered; want each once", what, f.Duplicates, f.Skips, f.Delivered, f.Changes)
		}
	}
	m := feedRun(t, "feed-change-feed-cursors", nil)
	once("disabled", m["disabled"])
	f := m["static-50ms"].Feed
	if f.PagesHedged == 0 || f.PerMillion(f.Duplicates) < 1e4 || f.PerMillion(f.Skips) < 1e4 {
		t.Errorf("region-local cursor taken for portable, hedged: %d pages hedged, %.0f duplicates and %.0f skips per 10^6; want both >= 10^4",
			f.PagesHedged, f.PerMillion(f.Duplicates), f.PerMillion(f.Skips))
	}

	pinned := feedRun(t, "feed-change-feed-cursors", func(c *simnet.Config) { c.Feed.ChangeFeed.Continuation = hedging.RegionAffine })["static-50ms"]
	once("region_affine (pinned)", pinned)
	if pinned.Feed.PagesHedged != 0 || pinned.Feed.PagesPinned == 0 {
		t.Errorf("region_affine: %d pages hedged, %d pinned; want none hedged", pinned.Feed.PagesHedged, pinned.Feed.PagesPinned)
	}

	global := feedRun(t, "feed-change-feed-cursors", func(c *simnet.Config) { c.Feed.ChangeFeed.Scope = simnet.CursorGlobal })["static-50ms"]
	once("global cursor, hedged", global)
	if global.Feed.PagesHedged == 0 {
		t.Error("global cursor: no page hedged")
	}

	// A 304 that hands out the lagging replica's position moves the cursor
	// back: duplicates, never skips.
	back := feedRun(t, "feed-change-feed-cursors", func(c *simnet.Config) {
		c.Feed.ChangeFeed.Scope, c.Feed.ChangeFeed.On304, c.Consistency = simnet.CursorGlobal, simnet.On304ServerCurrent, simnet.Eventual
	})["static-50ms"].Feed
	if back.Duplicates == 0 || back.Skips != 0 {
		t.Errorf("global cursor, 304 = server position: %d duplicates, %d skips; want duplicates only", back.Duplicates, back.Skips)
	}
}

func TestFeedColdMetadata(t *testing.T) {
	st := feedRun(t, "feed-cold-metadata", nil)["static-50ms"]
	q, f := queries(st), st.Feed
	if q.Errors != 0 || f.SetupReadsHedged == 0 {
		t.Errorf("metadata hedging: %d failed queries, %d hedged setup reads; want none failed, some hedged", q.Errors, f.SetupReadsHedged)
	}
	if f.StaleCacheHits != 20 {
		t.Errorf("split at 40 s: %d stale-cache hits, want one per instance (20)", f.StaleCacheHits)
	}
	within(t, "setup share of query latency", q.SetupShare(), 0.9, 1)
	// A cold setup read under the quorum loss waits the 1.5 s metadata
	// threshold (collection, partition-key ranges); the query plan, a
	// data-plane read, the policy's 50 ms (spec §16 Phase 2, A9).
	within(t, "p99 ms (two 1.5 s metadata hedges and a 50 ms query-plan hedge)", q.QuantileMs(0.99), 3050, 3200)

	st = feedRun(t, "feed-cold-metadata", func(c *simnet.Config) { c.Client.Phase = hedging.Phase2 &^ (1 << hedging.MetadataRead) })["static-50ms"]
	q, f = queries(st), st.Feed
	if f.SetupReadsHedged != 0 || f.SetupErrors == 0 {
		t.Errorf("no metadata hedging: %d hedged setup reads, %d setup errors", f.SetupReadsHedged, f.SetupErrors)
	}
	within(t, "no metadata hedging: failed share of queries", float64(q.Errors)/float64(q.Ops), 0.25, 0.45)
	within(t, "no metadata hedging: setup share", q.SetupShare(), 0.99, 1)
}

func TestFeedStalePages(t *testing.T) {
	m := feedRun(t, "feed-stale-pages", nil)
	if f := m["disabled"].Feed; f.StalePages != 0 || f.MonotonicViolations != 0 {
		t.Errorf("disabled: %d stale pages, %d monotonic-read violations; want none (every page from the write region)", f.StalePages, f.MonotonicViolations)
	}
	if f := m["static-50ms"].Feed; f.StalePages < 100 || f.MonotonicViolations < 100 {
		t.Errorf("eventual, hedged: %d stale pages, %d monotonic-read violations; want >= 100 each", f.StalePages, f.MonotonicViolations)
	}
	st := feedRun(t, "feed-stale-pages", func(c *simnet.Config) { c.Consistency = simnet.Session })["static-50ms"]
	if st.Feed.MonotonicViolations != 0 || st.SessionNotAvailable < 100 {
		t.Errorf("session: %d monotonic-read violations, %d 404/1002; want none, and the lagging region refusing", st.Feed.MonotonicViolations, st.SessionNotAvailable)
	}
}

// TestFeedMetadataLatest: the fastest answer caches the lagging region's
// old map for 5 s after each split; the latest within 600 ms waits for
// East US's 2 s answer (0.5 s after East US 2's) and caches the newer one,
// at ~0.5 s more per cold read (two per cold query).
func TestFeedMetadataLatest(t *testing.T) {
	fast := feedRun(t, "feed-metadata-latest", nil)["static-50ms"]
	late := feedRun(t, "feed-metadata-latest", func(c *simnet.Config) {
		c.Feed.Setup.Latest, c.Feed.Setup.Grace = true, 600*time.Millisecond
	})["static-50ms"]
	short := feedRun(t, "feed-metadata-latest", func(c *simnet.Config) {
		c.Feed.Setup.Latest, c.Feed.Setup.Grace = true, 200*time.Millisecond
	})["static-50ms"]
	ff, lf := fast.Feed, late.Feed
	if ff.SetupReadsHedged != ff.SetupReads || ff.StaleSetupReads < ff.SetupReads/4 {
		t.Errorf("fastest: %d of %d setup reads hedged, %d stale; want all hedged, >= a quarter stale", ff.SetupReadsHedged, ff.SetupReads, ff.StaleSetupReads)
	}
	// A read that a split overtakes while the primary serves it is old
	// either way (~1.5 s of every 10 s); the lagging region's 5 s are not.
	if lf.StaleSetupReads*2 >= ff.StaleSetupReads || lf.StaleCacheHits >= ff.StaleCacheHits {
		t.Errorf("latest(600ms): %d stale setup reads (fastest %d), %d stale-cache hits (fastest %d); want under half, and fewer hits",
			lf.StaleSetupReads, ff.StaleSetupReads, lf.StaleCacheHits, ff.StaleCacheHits)
	}
	// 200 ms ends before East US answers: the fastest answer again, later.
	if short.Feed.StaleSetupReads == 0 {
		t.Error("latest(200ms): no stale setup read; want the grace to expire before the primary answers")
	}
	within(t, "latest(600ms) - fastest p50 ms (two reads ~0.49 s later each)", queries(late).QuantileMs(0.5)-queries(fast).QuantileMs(0.5), 900, 1050)
}

// TestFeedQueryBrownoutWholeOperation: whole-operation hedging (the
// research note's per-operation baseline, feed.Whole) on the brown-out.
// At the 50 ms threshold the alternate copy starts once and runs all 10
// pages in West US 2 (10 × ~78 ms), while the primary copy has served
// ~3 of its 300 ms pages: p99 below per-page hedging's (every page pays
// the threshold) at well under its 2x RU.
func TestFeedQueryBrownoutWholeOperation(t *testing.T) {
	page := feedRun(t, "feed-query-brownout", noBreaker)["static-50ms"]
	m := feedRun(t, "feed-query-brownout", func(c *simnet.Config) {
		noBreaker(c)
		c.Feed.HedgeUnit = feed.UnitOperation
	})
	dis, slow, whole := m["disabled"], m["static-1000ms"], m["static-50ms"]
	// The alternate copy at 50 ms + 10 × (8 ms + 70 ms RTT).
	within(t, "whole, 50 ms: p50 ms", queries(whole).QuantileMs(0.5), 780, 900)
	if w, p := queries(whole).QuantileMs(0.99), queries(page).QuantileMs(0.99); w > 0.75*p {
		t.Errorf("whole, 50 ms: p99 %.0f ms, want at most 3/4 of per-page's %.0f ms", w, p)
	}
	// 10 alternate pages and ~3 primary pages charged, for 10 returned.
	within(t, "whole, 50 ms: RU multiplier", whole.RUMultiplier(), 1.2, 1.4)
	if page.RUMultiplier() < 1.99 {
		t.Errorf("per-page, 50 ms: RU multiplier %.3f, want ~2 (every page hedged)", page.RUMultiplier())
	}
	if whole.Hedged != whole.Ops || whole.AlternateWins != whole.Ops || whole.Feed.PagesHedged != 0 {
		t.Errorf("whole, 50 ms: %d of %d queries hedged, %d alternate copies won, %d pages hedged; want every query's copy, no page hedge",
			whole.Hedged, whole.Ops, whole.AlternateWins, whole.Feed.PagesHedged)
	}
	// A 1 s threshold on the whole operation fires (a per-page one never
	// does): the alternate copy at 1 s + ~0.8 s, ~5.6 primary pages spent.
	within(t, "whole, 1 s: p99 ms", queries(slow).QuantileMs(0.99), 1750, 1900)
	within(t, "whole, 1 s: RU multiplier", slow.RUMultiplier(), 1.5, 1.7)
	if dis.Hedged != 0 || math.Abs(dis.RUMultiplier()-1) > 1e-9 {
		t.Errorf("whole, disabled: %d queries hedged at RU %.3f; want none at 1", dis.Hedged, dis.RUMultiplier())
	}
}
