package simnet

// This file holds the invariants every run is checked against before
// [Run] returns its measurements (issue 24): a run that breaks one fails
// with an *InvariantError rather than handing out a figure that cannot be
// right. The checks read counters kept as the run goes (O(1) per race at
// most) and run once, at the end; the work invariant is also checked
// while the run goes, so no input can make a run loop for ever.

import (
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"

	"hedgelab/hedging"
)

// InvariantError reports a run whose measurements break an invariant.
// Invariant is its name, one of: "arrivals" (operations = arrivals),
// "terminal-states" (every race counted once, in one terminal state and
// one timeline window), "counts" (no count above what contains it),
// "ru" (RU finite, what was returned was charged, no attempt charged more
// than the largest charge), "legs" (at most two legs per race: every leg
// sent is a primary or the one alternate), "disabled" (a disabled policy
// sends no hedge of any kind), "feed-consistency" (stale pages,
// monotonic-read violations, duplicates and skips only where the
// consistency level and cursor settings allow them; no change delivered
// that was not committed), "work" (the run did no more than a wide margin
// over the work its configuration implies, see [Config.ExpectedWork]) and
// "memory" (queues, timelines and feed plans within their limits).
type InvariantError struct {
	Invariant string
	// Policy is the policy whose run broke it.
	Policy string
	Detail string
}

// Error returns "simnet: policy "p": invariant NAME broken: DETAIL".
func (e *InvariantError) Error() string {
	return fmt.Sprintf("simnet: policy %q: invariant %s broken: %s", e.Policy, e.Invariant, e.Detail)
}

// plantHook, set only by tests (export_test.go), changes a run's
// measurements before they are checked, to show that each check fails
// (atomic: a run a test gave up on may still be going).
var plantHook atomic.Pointer[func(cfg *Config, st *Stats)]

// check verifies the invariants of the finished run s of a policy whose
// strategy is disabled (or not) and returns the first broken one.
func (s *sim) check(disabled bool) error {
	st, cfg := s.stats, s.cfg
	if h := plantHook.Load(); h != nil {
		(*h)(cfg, st)
	}
	fail := func(name, format string, args ...any) error {
		return &InvariantError{Invariant: name, Policy: st.Policy, Detail: fmt.Sprintf(format, args...)}
	}
	var feedOps int64
	f := st.Feed
	if f != nil {
		feedOps = f.Kinds[FeedQuery].Ops + f.Kinds[FeedReadMany].Ops
	}
	races := int64(0)
	for _, n := range st.Terminal {
		races += n
	}

	// arrivals
	if st.Ops != st.Arrivals {
		return fail("arrivals", "%d operations finished but %d arrived", st.Ops, st.Arrivals)
	}
	if cfg.MaxOps > 0 && st.Arrivals > cfg.MaxOps {
		return fail("arrivals", "%d operations arrived, above max_ops = %d", st.Arrivals, cfg.MaxOps)
	}

	// terminal-states
	var fr int64
	if f != nil {
		fr = f.Races
	}
	if want := st.Ops - feedOps + fr; races != want {
		return fail("terminal-states", "terminal states sum to %d races, want %d (operations %d - feed operations %d + feed races %d)",
			races, want, st.Ops, feedOps, fr)
	}
	if n := st.Latency.TotalCount(); n != st.Ops {
		return fail("terminal-states", "the latency histogram holds %d operations, want %d", n, st.Ops)
	}
	var wOps, wFailed, wHedged int64
	for i := range st.Timeline {
		wOps += st.Timeline[i].Ops
		wFailed += st.Timeline[i].Failed
		wHedged += st.Timeline[i].Hedged
	}
	if wOps != st.Ops || wFailed != st.Failed() || wHedged != st.Hedged {
		return fail("terminal-states", "timeline windows count %d operations, %d failed, %d hedged; the run %d, %d, %d",
			wOps, wFailed, wHedged, st.Ops, st.Failed(), st.Hedged)
	}

	var kFailed int64
	for k, n := range st.KindFailed {
		if n > st.KindOps(hedging.OperationKind(k)) {
			return fail("counts", "kind %d has %d failed operations of %d", k, n, st.KindOps(hedging.OperationKind(k)))
		}
		kFailed += n
	}
	if kFailed != st.Failed() {
		return fail("terminal-states", "the kinds count %d failed operations; the run %d", kFailed, st.Failed())
	}

	// counts
	for _, c := range []struct {
		what   string
		n, max int64
	}{
		{"failed operations", st.Failed(), st.Ops},
		{"hedged operations", st.Hedged, st.Ops},
		{"alternate wins", st.AlternateWins, st.Hedged},
		{"failover-hedged races", st.FailoverHedged, st.altRaces},
		{"races with an alternate", st.altRaces, races},
		{"breaker trips", st.BreakerTrips, st.Terminal[hedging.AlternateWon]},
		{"feed operations", feedOps, st.Ops},
	} {
		if c.n < 0 || c.n > c.max {
			return fail("counts", "%s = %d, outside 0..%d", c.what, c.n, c.max)
		}
	}
	if f != nil {
		for i, k := range f.Kinds {
			if k.Errors < 0 || k.Errors > k.Ops {
				return fail("counts", "feed kind %d: %d errors of %d operations", i, k.Errors, k.Ops)
			}
		}
		raced := f.Races - f.SetupReads // pages raced, delivered or not (f.Pages: delivered)
		for _, c := range []struct {
			what   string
			n, max int64
		}{
			{"pages delivered", f.Pages, raced},
			{"hedged pages", f.PagesHedged, raced},
			{"page alternate wins", f.AlternateWins, f.PagesHedged},
			{"hedged setup reads", f.SetupReadsHedged, f.SetupReads},
			{"setup reads hedged by failover", f.SetupReadsFailover, f.SetupReadsHedged},
			{"setup errors", f.SetupErrors, f.SetupReads},
			{"stale pages", f.StalePages, f.Pages},
			{"304 pages", f.NotModified, f.Pages},
			{"gated pages", f.PagesGated, raced},
			{"duplicates", f.Duplicates, f.Delivered},
			{"skips", f.Skips, f.Changes},
			{"changes delivered once", f.Delivered - f.Duplicates, f.Changes},
		} {
			if c.n < 0 || c.n > c.max {
				return fail("counts", "%s = %d, outside 0..%d", c.what, c.n, c.max)
			}
		}
	}

	// ru
	if bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) || v < -1e-9 }; bad(st.RUCharged) || bad(st.RUReturned) {
		return fail("ru", "RU charged %g, returned %g: not finite and >= 0", st.RUCharged, st.RUReturned)
	}
	if st.RUReturned > st.RUCharged*(1+1e-9)+1e-9 {
		return fail("ru", "RU returned to callers (%g) exceeds the RU charged (%g): a returned response was not charged", st.RUReturned, st.RUCharged)
	}
	if top := s.maxCharge(); st.RUCharged > float64(st.Attempts)*top*(1+1e-9)+1e-9 {
		return fail("ru", "RU charged (%g) exceeds %d attempts × the largest charge (%g RU)", st.RUCharged, st.Attempts, top)
	}

	// legs
	if want := races - st.unsent + st.altRaces; st.legs != want || st.unsent > races {
		return fail("legs", "%d legs were sent for %d races (%d sent nothing, %d their alternate): want %d (a primary each, and one alternate)",
			st.legs, races, st.unsent, st.altRaces, want)
	}

	// disabled
	if disabled {
		var hedgedRaces int64
		for i := 1; i < len(st.Terminal); i++ {
			hedgedRaces += st.Terminal[i]
		}
		switch {
		case st.altRaces > 0 || st.Hedged > 0:
			return fail("disabled", "a disabled policy sent %d alternates (%d operations hedged)", st.altRaces, st.Hedged)
		case hedgedRaces > 0:
			return fail("disabled", "a disabled policy ran %d races with a hedging strategy active", hedgedRaces)
		case st.BreakerTrips > 0:
			return fail("disabled", "a disabled policy tripped the partition breaker %d times", st.BreakerTrips)
		case f != nil && (f.PagesHedged > 0 || f.SetupReadsHedged > 0):
			return fail("disabled", "a disabled policy hedged %d pages and %d setup reads", f.PagesHedged, f.SetupReadsHedged)
		case f != nil && f.PagesGated > 0:
			return fail("disabled", "a disabled policy counts %d pages as gated (no hedge to gate)", f.PagesGated)
		}
	}

	// feed-consistency
	if f != nil {
		if err := s.checkFeed(fail); err != nil {
			return err
		}
	}

	// work
	if st.Events > s.eventCap {
		return fail("work", "%d events, above the %d its configuration allows (%.3g units of work expected)", st.Events, s.eventCap, cfg.ExpectedWork().Total())
	}

	// memory
	if len(st.Timeline) > s.maxWindows {
		return fail("memory", "%d timeline windows, above the bound of %d", len(st.Timeline), s.maxWindows)
	}
	for i := range s.reps {
		r := &s.reps[i]
		if l := r.cfg.QueueLimit; l > 0 && r.servers > 0 && r.capr.peakWaiting > l {
			return fail("memory", "replica %s: %d requests waited at once, above queue_limit = %d", r.cfg.Name, r.capr.peakWaiting, l)
		}
	}
	if fx := s.fx; fx != nil && fx.f != nil {
		if fx.peakLeaves > fx.f.fanOutCap()*2 {
			return fail("memory", "a feed operation planned %d leaves, above max_fan_out = %d (two copies when hedged whole)", fx.peakLeaves, fx.f.fanOutCap())
		}
		if fx.peakPages > fx.f.maxPages() {
			return fail("memory", "a query leaf ran %d pages, above max_pages = %d", fx.peakPages, fx.f.maxPages())
		}
	}
	return nil
}

// checkFeed checks the feed-consistency invariant.
func (s *sim) checkFeed(fail func(name, format string, args ...any) error) error {
	f, cfg := s.stats.Feed, s.cfg
	lags := false
	for _, v := range cfg.ReplicationLagMs {
		lags = lags || v > 0
	}
	if cfg.Lag != nil {
		for _, e := range cfg.Lag.Episodes {
			lags = lags || e.LagMs > 0
		}
	}
	servers := 0 // replicas that served data pages
	if fx := s.fx; fx != nil {
		servers = bits.OnesCount64(fx.pageServers)
		if fx.manyServers {
			servers = 64
		}
	}
	var cf ChangeFeed
	if cfg.Feed != nil {
		cf = cfg.Feed.ChangeFeed
	}
	portableLocal := cf.Scope == CursorRegionLocal && cf.Continuation == hedging.Portable
	// A pinned chain whose region failed resumes its region-local cursor in
	// another region (issue 26 A1, as the SDKs fail over), which reads it
	// region_offset × (the regions' index difference) changes off: behind
	// (duplicates) in a region of a higher index, ahead (skips) in one of
	// a lower index, so each resume skips at most region_offset × (the
	// largest index difference) changes.
	resumedLocal := cf.Scope == CursorRegionLocal && f.Resumes > 0
	maxRegion := 0
	for i := range s.reps {
		maxRegion = max(maxRegion, s.reps[i].region)
	}
	resumeSkips := float64(f.Resumes) * float64(cf.RegionOffset) * float64(maxRegion)
	switch {
	case f.StalePages > 0 && (cfg.Consistency == Strong || !lags):
		return fail("feed-consistency", "%d stale pages under %s consistency with %s", f.StalePages, cfg.Consistency, map[bool]string{false: "no replication lag", true: "lag"}[lags])
	case f.MonotonicViolations > 0 && cfg.Consistency == Strong:
		return fail("feed-consistency", "%d monotonic-read violations under strong consistency", f.MonotonicViolations)
	case f.MonotonicViolations > 0 && servers < 2:
		return fail("feed-consistency", "%d monotonic-read violations though every page came from one replica (a replica's applied position never moves back)", f.MonotonicViolations)
	case f.Duplicates > 0 && !portableLocal && !resumedLocal && cf.On304 != On304ServerCurrent:
		return fail("feed-consistency", "%d duplicates with a %s cursor the client takes for %s (on_304 = %s): every change is delivered once",
			f.Duplicates, scopeName(cf.Scope), affinityName(cf.Continuation), on304Name(cf.On304))
	case f.Skips > 0 && !portableLocal && !resumedLocal:
		return fail("feed-consistency", "%d skips with a %s cursor the client takes for %s: no change is skipped",
			f.Skips, scopeName(cf.Scope), affinityName(cf.Continuation))
	case f.Skips > 0 && !portableLocal && float64(f.Skips) > resumeSkips:
		return fail("feed-consistency", "%d skips with a %s cursor the client takes for %s, above %d resumes × region_offset %d × %d regions apart",
			f.Skips, scopeName(cf.Scope), affinityName(cf.Continuation), f.Resumes, cf.RegionOffset, maxRegion)
	}
	if fx := s.fx; fx != nil {
		for p, d := range fx.delivered {
			if len(d) > 0 && (d[0][0] < 1 || d[len(d)-1][1] > fx.logs[p].total) {
				return fail("feed-consistency", "partition %d: changes %d..%d delivered, but only 1..%d were committed",
					p, d[0][0], d[len(d)-1][1], fx.logs[p].total)
			}
		}
	}
	return nil
}

func scopeName(s CursorScope) string {
	return map[CursorScope]string{CursorGlobal: "global", CursorRegionLocal: "region_local"}[s]
}

func on304Name(o On304) string {
	return map[On304]string{On304Request: "request", On304ServerCurrent: "server_current"}[o]
}

func affinityName(a hedging.ContinuationAffinity) string { return a.String() }

// maxCharge is the largest RU one attempt can be charged: the RU table's
// largest entry, and a feed page's cover plus its items.
func (s *sim) maxCharge() float64 {
	m := 0.0
	for _, v := range s.ru {
		m = max(m, v)
	}
	if f := s.cfg.Feed; f != nil && (f.RUCover > 0 || f.RUPerItem > 0) {
		items := max(f.itemsPerPage(), min(f.readManyItems(), 1000))
		m = max(m, f.RUCover+f.RUPerItem*float64(items))
	}
	return m
}
