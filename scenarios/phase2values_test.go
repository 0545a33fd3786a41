package scenarios_test

// The Phase 2 cases handed with issue 26 (a copy of the shared folder's
// cases/phase2 in testdata/phase2, byte for byte), run as their first line
// says (five replications), with the figures a user would see after the
// issue's rows A1, A2, A5 and A6; and the embedded scenarios made from them.

import (
	"testing"

	"hedgelab/internal/study"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// phase2Case simulates testdata/phase2/name.toml for reps replications,
// after edit (when non-nil), and returns the merged runs by policy.
func phase2Case(t *testing.T, name string, reps int, edit func(*simnet.Config)) map[string]*simnet.Stats {
	t.Helper()
	s, err := scenarios.Load("testdata/phase2/" + name + ".toml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, pols, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(cfg)
	}
	res, err := study.Simulate(cfg, pols, reps, study.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*simnet.Stats{}
	for _, p := range res.Policies {
		out[p.Name] = p.Merged
	}
	return out
}

// noHedge fails t unless st sent no alternate of any kind: every race ran
// without an active strategy (terminal state "none"), no page, setup read
// or operation hedged, no breaker trip (issue 24: "disabled sends no hedge
// of any kind").
func noHedge(t *testing.T, what string, st *simnet.Stats) {
	t.Helper()
	var races int64
	for _, n := range st.Terminal {
		races += n
	}
	if st.Terminal[0] != races || st.Hedged != 0 || st.FailoverHedged != 0 || st.BreakerTrips != 0 ||
		st.Feed.PagesHedged != 0 || st.Feed.SetupReadsHedged != 0 || st.Feed.PagesGated != 0 {
		t.Errorf("%s: %d of %d races with a strategy, %d operations hedged (%d by failover), %d breaker trips, %d pages and %d setup reads hedged, %d pages gated; want no hedge of any kind",
			what, races-st.Terminal[0], races, st.Hedged, st.FailoverHedged, st.BreakerTrips, st.Feed.PagesHedged, st.Feed.SetupReadsHedged, st.Feed.PagesGated)
	}
}

// A1: pinned-outage-duplicates. A pinned region-local cursor whose region
// fails for 5 s resumes from its cursor by failover: each of the four
// leaves re-delivers region_offset = 50 changes once per replication, so
// 20 resumes and 1000 duplicates of 59,877 changes (16,701 per 10⁶, was
// 293,843 with a cold restart); nothing skipped, no page hedged (a
// region-affine change feed never is, A7), both policies alike; a global
// cursor re-delivers nothing however often it resumes.
func TestPhase2CasePinnedOutage(t *testing.T) {
	for name, st := range phase2Case(t, "pinned-outage-duplicates", 5, nil) {
		f := st.Feed
		if f.ColdRestarts != 0 || f.Resumes != 20 || f.Duplicates != 50*f.Resumes || f.Skips != 0 || f.PagesHedged != 0 {
			t.Errorf("%s: %d cold restarts, %d resumes, %d duplicates, %d skips, %d pages hedged; want 0, 20, 50 per resume, 0, 0",
				name, f.ColdRestarts, f.Resumes, f.Duplicates, f.Skips, f.PagesHedged)
		}
		within(t, name+": duplicates per 10⁶ changes", f.PerMillion(f.Duplicates), 16_700, 16_702)
	}
	global := phase2Case(t, "pinned-outage-duplicates", 5, func(c *simnet.Config) { c.Feed.ChangeFeed.Scope = simnet.CursorGlobal })
	// A 304 hands the request's cursor back, still East US's, so a leaf
	// with nothing new resumes again at its next poll during the outage.
	if f := global["static-50ms"].Feed; f.Resumes < 20 || f.Duplicates != 0 || f.Skips != 0 {
		t.Errorf("global cursor: %d resumes, %d duplicates, %d skips; want >= 20, 0, 0", f.Resumes, f.Duplicates, f.Skips)
	}
}

// A5: evidence-gate8-tail. A gate of 8 legs in flight with no brown-out
// gates nothing: the p99 is the ungated one (139.6 ms in the issue, was
// 2977 ms with a slot per page), and under disabled no page counts as
// gated (issue 24).
func TestPhase2CaseGate8Tail(t *testing.T) {
	gated := phase2Case(t, "evidence-gate8-tail", 5, nil)
	open := phase2Case(t, "evidence-gate8-tail", 5, func(c *simnet.Config) { c.Feed.GateCapacity = 0 })
	g, o := gated["static-50ms"], open["static-50ms"]
	if g.Feed.PagesGated != 0 || g.Feed.PeakLegsInFlight > 8 || g.Feed.PagesHedged != o.Feed.PagesHedged {
		t.Errorf("gate 8: %d pages gated, peak %d legs, %d pages hedged (ungated %d); want 0, <= 8, the same",
			g.Feed.PagesGated, g.Feed.PeakLegsInFlight, g.Feed.PagesHedged, o.Feed.PagesHedged)
	}
	if gp, op := queries(g).QuantileMs(0.99), queries(o).QuantileMs(0.99); gp != op {
		t.Errorf("gate 8 p99 %.1f ms, ungated %.1f ms; want the same", gp, op)
	}
	within(t, "gate 8: query p99 ms", queries(g).QuantileMs(0.99), 130, 150)
	within(t, "gate 8: share of queries hedged", float64(g.Hedged)/float64(g.Ops), 0.63, 0.66)
	noHedge(t, "evidence-gate8-tail disabled", gated["disabled"])
}

// A2: evidence-metadata-fast-500. Metadata reads failing 500 after 5 ms
// hedge at once: no query fails (was 50.13%), and the hedged setup reads
// are the cold ones (two per instance, 20 instances, 5 replications).
func TestPhase2CaseMetadataFast500(t *testing.T) {
	st := phase2Case(t, "evidence-metadata-fast-500", 5, nil)["static-50ms"]
	q, f := queries(st), st.Feed
	if q.Errors != 0 || f.SetupErrors != 0 || st.Failed() != 0 {
		t.Errorf("%d of %d queries failed, %d setup errors; want none", q.Errors, q.Ops, f.SetupErrors)
	}
	if f.SetupReadsHedged < 200 || f.SetupReadsFailover < 200 {
		t.Errorf("%d setup reads hedged, %d by failover; want the 200 cold ones at least, on the 500", f.SetupReadsHedged, f.SetupReadsFailover)
	}
	within(t, "setup share of query latency", q.SetupShare(), 0.2, 0.3)
}

// A6: disabled-hedges-metadata. Under disabled no metadata read is hedged
// (was 38.16% of operations hedged, 419 breaker trips): the 408s of the
// metadata outage then fail a third of the queries, as they do when
// metadata hedging is off; static-50ms still hedges them at 1.5 s.
func TestPhase2CaseDisabledHedgesMetadata(t *testing.T) {
	m := phase2Case(t, "disabled-hedges-metadata", 5, nil)
	dis, hed := m["disabled"], m["static-50ms"]
	noHedge(t, "disabled", dis)
	within(t, "disabled: failed share of queries", float64(queries(dis).Errors)/float64(queries(dis).Ops), 0.3, 0.36)
	if hed.Feed.SetupReadsHedged == 0 || queries(hed).Errors != 0 {
		t.Errorf("static-50ms: %d setup reads hedged, %d queries failed; want some hedged, none failed", hed.Feed.SetupReadsHedged, queries(hed).Errors)
	}
}

// The embedded scenarios made from the cases, as shipped.
func TestFeedPhase2Scenarios(t *testing.T) {
	m := feedRun(t, "feed-pinned-outage", nil)
	for _, name := range []string{"disabled", "static-50ms"} {
		if f := m[name].Feed; f.Resumes != 4 || f.Duplicates != 200 || f.Skips != 0 || f.ColdRestarts != 0 {
			t.Errorf("feed-pinned-outage %s: %d resumes, %d duplicates, %d skips, %d cold restarts; want 4, 200, 0, 0", name, f.Resumes, f.Duplicates, f.Skips, f.ColdRestarts)
		}
	}
	noHedge(t, "feed-pinned-outage disabled", m["disabled"])

	m = feedRun(t, "feed-metadata-fast-500", nil)
	noHedge(t, "feed-metadata-fast-500 disabled", m["disabled"])
	for _, name := range []string{"disabled", "static-50ms"} {
		if q := queries(m[name]); q.Errors != 0 {
			t.Errorf("feed-metadata-fast-500 %s: %d of %d queries failed; want none (a metadata 500 fails over or hedges at once)", name, q.Errors, q.Ops)
		}
	}
	if m["static-50ms"].Feed.SetupReadsHedged < 40 {
		t.Errorf("feed-metadata-fast-500: %d setup reads hedged, want the 40 cold ones", m["static-50ms"].Feed.SetupReadsHedged)
	}

	m = feedRun(t, "feed-gate-no-brownout", nil)
	if f := m["static-50ms"].Feed; f.PagesGated != 0 || f.PagesHedged == 0 {
		t.Errorf("feed-gate-no-brownout: %d pages gated, %d hedged; want none gated", f.PagesGated, f.PagesHedged)
	}
	within(t, "feed-gate-no-brownout p99 ms", queries(m["static-50ms"]).QuantileMs(0.99), 100, 200)
	brown := feedRun(t, "feed-gate-no-brownout", func(c *simnet.Config) {
		c.Episodes = append(c.Episodes, simnet.Episode{Target: "eastus", End: 1 << 62, AddMs: 300, Factor: 1})
	})["static-50ms"].Feed
	if brown.PeakLegsInFlight != 8 || brown.PagesGated == 0 || brown.PagesHedged+brown.PagesGated != brown.Pages {
		t.Errorf("brown-out: peak %d legs, %d gated + %d hedged of %d pages; want 8, every page one or the other",
			brown.PeakLegsInFlight, brown.PagesGated, brown.PagesHedged, brown.Pages)
	}
}
