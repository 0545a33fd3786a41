package scenarios

import (
	"strconv"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"
)

// Feed is the [feed] table: queries and ReadMany calls run page by page,
// change-feed pollers and the setup stages before a feed's first page
// (simnet.Feed). scenarios/README.md documents every key.
type Feed struct {
	Pages             *int              `toml:"pages"`              // pages per query leaf, 1..max_pages; default 1
	PagesDist         *dist.Spec        `toml:"pages_dist"`         // pages per query leaf as a distribution (values are page counts, rounded); not with pages
	MaxPages          int               `toml:"max_pages"`          // cap on pages per leaf, 0..10000; 0 = 1000
	ItemsPerPage      int               `toml:"items_per_page"`     // items of a full page, 0..1e6; 0 = 100
	RUCover           float64           `toml:"ru_cover"`           // RU per query/ReadMany/change-feed page, >= 0
	RUPerItem         float64           `toml:"ru_per_item"`        // RU per item of such a page, >= 0
	FanOut            int               `toml:"fan_out"`            // leaves of a query, 0..min(partitions, max_fan_out); 0 = 1
	MaxConcurrency    int               `toml:"max_concurrency"`    // leaves with a page in flight, >= 0; 0 = all
	MaxFanOut         int               `toml:"max_fan_out"`        // the driver's fan-out cap, 0..1000; 0 = 100
	ReadManyItems     int               `toml:"read_many_items"`    // ids per ReadMany call, 0..100000; 0 = 10
	QueryContinuation string            `toml:"query_continuation"` // portable (default) | region_affine
	GateCapacity      int               `toml:"gate_capacity"`      // hedge legs in flight per instance, >= 0; 0 = no gate
	HedgeUnit         string            `toml:"hedge_unit"`         // page (default) | operation
	Affinity          map[string]string `toml:"affinity"`           // page kind -> none | pin_after_hedge_win | pin_always | breaker_driven
	ChangeFeed        FeedChangeFeed    `toml:"change_feed"`
	Setup             FeedSetup         `toml:"setup"`
}

// FeedChangeFeed is the [feed.change_feed] table.
type FeedChangeFeed struct {
	Pollers        int     `toml:"pollers"`          // 0..1000
	PollIntervalMs float64 `toml:"poll_interval_ms"` // ms, >= 1 with pollers
	Scope          string  `toml:"scope"`            // global (default) | region_local
	RegionOffset   int64   `toml:"region_offset"`    // changes, >= 0 (region_local)
	On304          string  `toml:"on_304"`           // request (default) | server_current
	Continuation   string  `toml:"continuation"`     // region_affine (default: hedging.DefaultContinuationAffinity) | portable
}

// FeedSetup is the [feed.setup] table.
type FeedSetup struct {
	Collection     bool               `toml:"collection"`
	PKRanges       bool               `toml:"pk_ranges"`
	QueryPlan      bool               `toml:"query_plan"`
	MetadataBudget int                `toml:"metadata_budget"` // >= 0; 0 = 32
	MetadataLagMs  map[string]float64 `toml:"metadata_lag_ms"` // physical region -> ms, >= 0
	Events         []FeedEvent        `toml:"events"`
	Choice         string             `toml:"metadata_choice"`   // fastest (default) | latest
	GraceMs        float64            `toml:"metadata_grace_ms"` // ms, >= 0; only with latest
}

// FeedEvent is one [[feed.setup.events]] entry.
type FeedEvent struct {
	AtS  float64 `toml:"at_s"` // s, >= 0
	Kind string  `toml:"kind"` // split | recreate
}

// Lag is the [lag] table: replication lag as a process per (region,
// partition) (simnet.LagProcess).
type Lag struct {
	Sigma    float64      `toml:"sigma"` // 0..10
	Episodes []LagEpisode `toml:"episodes"`
}

// LagEpisode is one [[lag.episodes]] entry.
type LagEpisode struct {
	Target     string  `toml:"target"`     // replica name or physical region; required
	Partitions []int   `toml:"partitions"` // 0..partitions-1; empty = all
	StartS     float64 `toml:"start_s"`    // s, >= 0
	EndS       float64 `toml:"end_s"`      // s, > start_s
	LagMs      float64 `toml:"lag_ms"`     // ms, >= 0
}

// choice maps a key's value through names (value -> T); "" takes def.
func choice[T any](b *builder, p fpath, v string, def T, names map[string]T, want string) T {
	if v == "" {
		if b.set(p) {
			b.fail(p, "must be %s, got \"\"", want)
		}
		return def
	}
	t, ok := names[v]
	if !ok {
		b.fail(p, "must be %s, got %q", want, v)
	}
	return t
}

var continuationNames = map[string]hedging.ContinuationAffinity{"portable": hedging.Portable, "region_affine": hedging.RegionAffine}

// consistency checks [account] consistency and staleness_bound_ms, and
// [lag], into cfg.
func (b *builder) consistency(cfg *simnet.Config, nm *names) {
	var root fpath
	ap := root.key("account")
	a := b.f.Account
	if a.Consistency != "" || b.set(ap.key("consistency")) {
		c, err := simnet.ParseConsistency(a.Consistency)
		if err != nil {
			b.fail(ap.key("consistency"), "must be session, eventual, consistent_prefix, bounded_staleness or strong, got %q", a.Consistency)
		}
		cfg.Consistency = c
	}
	cfg.StalenessBound = b.dur(ap.key("staleness_bound_ms"), a.StalenessBoundMs, time.Millisecond)
	switch {
	case cfg.Consistency == simnet.BoundedStaleness && a.StalenessBoundMs == 0:
		b.fail(ap.key("staleness_bound_ms"), "required (> 0) with consistency = \"bounded_staleness\"")
	case cfg.Consistency != simnet.BoundedStaleness && a.StalenessBoundMs != 0:
		b.fail(ap.key("staleness_bound_ms"), "applies only to consistency = \"bounded_staleness\"")
	}
	if parts := b.f.Workload.Partitions; parts > simnet.MaxFeedPartitions && (b.f.Lag != nil || cfg.Consistency != simnet.Session) {
		b.fail(root.key("workload", "partitions"), "must be <= %d with [lag] or a consistency level, got %d", simnet.MaxFeedPartitions, parts)
	}
	l := b.f.Lag
	if l == nil {
		return
	}
	lp := root.key("lag")
	if !(l.Sigma >= 0 && l.Sigma <= 10) {
		b.fail(lp.key("sigma"), "must be between 0 and 10, got %g", l.Sigma)
	}
	lag := &simnet.LagProcess{Sigma: l.Sigma}
	nparts := max(b.f.Workload.Partitions, 1)
	for i, e := range l.Episodes {
		ep := lp.key("episodes").elem(i, "")
		b.target(ep.key("target"), e.Target, nm)
		for j, p := range e.Partitions {
			b.intRange(ep.key("partitions", strconv.Itoa(j)), p, 0, nparts-1)
		}
		m := b.n
		le := simnet.LagEpisode{Target: e.Target, Partitions: e.Partitions, LagMs: e.LagMs,
			Start: b.dur(ep.key("start_s"), e.StartS, time.Second), End: b.dur(ep.key("end_s"), e.EndS, time.Second)}
		if b.n == m && e.EndS <= e.StartS {
			b.fail(ep.key("end_s"), "must be > start_s (%g), got %g", e.StartS, e.EndS)
		}
		b.dur(ep.key("lag_ms"), e.LagMs, time.Millisecond)
		lag.Episodes = append(lag.Episodes, le)
	}
	cfg.Lag = lag
}

// feed checks [feed] into cfg.
func (b *builder) feed(cfg *simnet.Config, nm *names) {
	f := b.f.Feed
	if f == nil {
		return
	}
	var root fpath
	fp := root.key("feed")
	out := &simnet.Feed{MaxPages: f.MaxPages, ItemsPerPage: f.ItemsPerPage, RUCover: f.RUCover, RUPerItem: f.RUPerItem,
		FanOut: f.FanOut, MaxConcurrency: f.MaxConcurrency, MaxFanOut: f.MaxFanOut, ReadManyItems: f.ReadManyItems,
		GateCapacity: f.GateCapacity}
	b.intRange(fp.key("max_pages"), f.MaxPages, 0, simnet.MaxFeedPages)
	maxPages := cmp0(f.MaxPages, simnet.DefaultMaxFeedPages)
	switch {
	case f.Pages != nil && f.PagesDist != nil:
		b.fail(fp.key("pages_dist"), "set pages (a fixed count) or pages_dist, not both")
	case f.Pages != nil:
		b.intRange(fp.key("pages"), *f.Pages, 1, maxPages)
		out.Pages, _ = dist.NewConstant(float64(*f.Pages))
	case f.PagesDist != nil:
		out.Pages = b.dist(fp.key("pages_dist"), *f.PagesDist)
	}
	b.intRange(fp.key("items_per_page"), f.ItemsPerPage, 0, simnet.MaxFeedItemsPerPage)
	b.nonNeg(fp.key("ru_cover"), f.RUCover)
	b.nonNeg(fp.key("ru_per_item"), f.RUPerItem)
	if n := out.MaxPageCharge(); n > simnet.MaxRequestCharge {
		p := fp.key("ru_per_item")
		if f.RUCover > simnet.MaxRequestCharge {
			p = fp.key("ru_cover")
		}
		b.fail(p, "a page may cost %s RU (ru_cover + ru_per_item × %d items); the limit is %g RU (simnet.MaxRequestCharge): lower ru_cover or ru_per_item",
			count(n), max(cmp0(f.ItemsPerPage, simnet.DefaultItemsPerPage), cmp0(f.ReadManyItems, simnet.DefaultReadManyItems)), float64(simnet.MaxRequestCharge))
	}
	b.intRange(fp.key("max_fan_out"), f.MaxFanOut, 0, simnet.MaxFeedLeaves)
	capFan := cmp0(f.MaxFanOut, feed.DefaultMaxFanOut)
	b.intRange(fp.key("fan_out"), f.FanOut, 0, min(max(b.f.Workload.Partitions, 1), capFan))
	b.intRange(fp.key("max_concurrency"), f.MaxConcurrency, 0, simnet.MaxFeedLeaves)
	b.intRange(fp.key("read_many_items"), f.ReadManyItems, 0, simnet.MaxFeedItems)
	b.intRange(fp.key("gate_capacity"), f.GateCapacity, 0, simnet.MaxFeedLeaves)
	out.HedgeUnit = choice(b, fp.key("hedge_unit"), f.HedgeUnit, feed.UnitPage,
		map[string]feed.Unit{feed.UnitPage.String(): feed.UnitPage, feed.UnitOperation.String(): feed.UnitOperation}, `"page" or "operation"`)
	out.QueryContinuation = choice(b, fp.key("query_continuation"), f.QueryContinuation, hedging.DefaultContinuationAffinity(hedging.QueryPage), continuationNames, `"portable" or "region_affine"`)
	ap := fp.key("affinity")
	for _, k := range keysByLine(b, ap, f.Affinity) {
		kind := b.kind(ap.key(k), k)
		a, err := feed.ParseAffinity(f.Affinity[k])
		if err != nil {
			b.fail(ap.key(k), "must be none, pin_after_hedge_win, pin_always or breaker_driven, got %q", f.Affinity[k])
		}
		if out.Affinity == nil {
			out.Affinity = map[hedging.OperationKind]feed.Affinity{}
		}
		out.Affinity[kind] = a
	}

	cp := fp.key("change_feed")
	c := f.ChangeFeed
	b.intRange(cp.key("pollers"), c.Pollers, 0, simnet.MaxPollers)
	out.ChangeFeed.Pollers = c.Pollers
	out.ChangeFeed.PollInterval = b.dur(cp.key("poll_interval_ms"), c.PollIntervalMs, time.Millisecond)
	if c.Pollers > 0 && c.PollIntervalMs < 1 {
		b.fail(cp.key("poll_interval_ms"), "must be >= 1 with pollers > 0, got %g", c.PollIntervalMs)
	}
	out.ChangeFeed.Scope = choice(b, cp.key("scope"), c.Scope, simnet.CursorGlobal,
		map[string]simnet.CursorScope{"global": simnet.CursorGlobal, "region_local": simnet.CursorRegionLocal}, `"global" or "region_local"`)
	if c.RegionOffset < 0 || c.RegionOffset > simnet.MaxRegionOffset {
		b.fail(cp.key("region_offset"), "must be in 0..%d (simnet.MaxRegionOffset: any offset beyond the commit log acts alike), got %d", int64(simnet.MaxRegionOffset), c.RegionOffset)
	}
	out.ChangeFeed.RegionOffset = c.RegionOffset
	out.ChangeFeed.On304 = choice(b, cp.key("on_304"), c.On304, simnet.On304Request,
		map[string]simnet.On304{"request": simnet.On304Request, "server_current": simnet.On304ServerCurrent}, `"request" or "server_current"`)
	out.ChangeFeed.Continuation = choice(b, cp.key("continuation"), c.Continuation, hedging.DefaultContinuationAffinity(hedging.ChangeFeedPage), continuationNames, `"portable" or "region_affine"`)
	mp := root.key("workload", "mix")
	for k := range b.f.Workload.Mix {
		if k == hedging.ChangeFeedPage.String() {
			b.fail(mp.key(k), "with [feed], change-feed reads come from feed.change_feed.pollers, not the mix")
		}
	}

	sp := fp.key("setup")
	s := f.Setup
	out.Setup = simnet.Setup{Collection: s.Collection, PKRanges: s.PKRanges, QueryPlan: s.QueryPlan, MetadataBudget: s.MetadataBudget}
	b.intRange(sp.key("metadata_budget"), s.MetadataBudget, 0, simnet.MaxFeedLeaves)
	lp := sp.key("metadata_lag_ms")
	for _, r := range keysByLine(b, lp, s.MetadataLagMs) {
		if nm.replicasKnown && !nm.replicaRegions[r] {
			b.fail(lp.key(r), "unknown physical region %q (replica regions: %s)", r, list(nm.replicaRegions))
		}
		b.dur(lp.key(r), s.MetadataLagMs[r], time.Millisecond)
	}
	out.Setup.MetadataLagMs = s.MetadataLagMs
	out.Setup.Latest = choice(b, sp.key("metadata_choice"), s.Choice, false, map[string]bool{"fastest": false, "latest": true}, `"fastest" or "latest"`)
	out.Setup.Grace = b.dur(sp.key("metadata_grace_ms"), s.GraceMs, time.Millisecond)
	if !out.Setup.Latest && s.GraceMs != 0 {
		b.fail(sp.key("metadata_grace_ms"), `applies only to metadata_choice = "latest"`)
	}
	if len(s.Events) > simnet.MaxMetadataEvents {
		b.fail(sp.key("events"), "%d events exceed the limit of %d", len(s.Events), simnet.MaxMetadataEvents)
	}
	for i, e := range s.Events {
		ep := sp.key("events").elem(i, "")
		ev := simnet.MetadataEvent{At: b.dur(ep.key("at_s"), e.AtS, time.Second)}
		ev.Kind = choice(b, ep.key("kind"), e.Kind, simnet.Split,
			map[string]simnet.MetadataEventKind{"split": simnet.Split, "recreate": simnet.Recreate}, `"split" or "recreate"`)
		if e.Kind == "" {
			b.fail(ep.key("kind"), `required: "split" or "recreate"`)
		}
		out.Setup.Events = append(out.Setup.Events, ev)
	}
	if parts := b.f.Workload.Partitions; parts > simnet.MaxFeedPartitions {
		b.fail(root.key("workload", "partitions"), "must be <= %d with [feed], got %d", simnet.MaxFeedPartitions, parts)
	}
	cfg.Feed = out
}
