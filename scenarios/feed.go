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

// choice checks the enum key (a fields entry) at p and maps its value
// through names (value -> T); "" (absent) takes def.
func choice[T any](b *builder, p fpath, key, v string, def T, names map[string]T) T {
	if v == "" && !b.set(p) {
		return def
	}
	if !b.enum(p, key, v, "", true) {
		return def
	}
	return names[v]
}

var continuationNames = map[string]hedging.ContinuationAffinity{"portable": hedging.Portable, "region_affine": hedging.RegionAffine}

// consistency checks [account] consistency and staleness_bound_ms, and
// [lag], into cfg.
func (b *builder) consistency(cfg *simnet.Config, nm *names) {
	var root fpath
	ap := root.key("account")
	a := b.f.Account
	if (a.Consistency != "" || b.set(ap.key("consistency"))) && b.enum(ap.key("consistency"), "account.consistency", a.Consistency, "", false) {
		cfg.Consistency, _ = simnet.ParseConsistency(a.Consistency)
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
	b.num(lp.key("sigma"), "lag.sigma", l.Sigma)
	lag := &simnet.LagProcess{Sigma: l.Sigma}
	nparts := max(b.f.Workload.Partitions, 1)
	for i, e := range l.Episodes {
		ep := lp.key("episodes").elem(i, "")
		b.target(ep.key("target"), e.Target, nm)
		for j, p := range e.Partitions {
			b.intRange(ep.key("partitions", strconv.Itoa(j)), p, 0, min(nparts-1, int(fieldOf("lag.episodes.partitions").hi)))
		}
		m := b.n
		le := simnet.LagEpisode{Target: e.Target, Partitions: e.Partitions, LagMs: e.LagMs,
			Start: b.time(ep.key("start_s"), "lag.episodes.start_s", e.StartS), End: b.time(ep.key("end_s"), "lag.episodes.end_s", e.EndS)}
		if b.n == m && e.EndS <= e.StartS {
			b.fail(ep.key("end_s"), "must be > start_s (%g), got %g", e.StartS, e.EndS)
		}
		b.time(ep.key("lag_ms"), "lag.episodes.lag_ms", e.LagMs)
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
	b.integer(fp.key("max_pages"), "feed.max_pages", int64(f.MaxPages))
	maxPages := cmp0(f.MaxPages, simnet.DefaultMaxFeedPages)
	switch {
	case f.Pages != nil && f.PagesDist != nil:
		b.fail(fp.key("pages_dist"), "set pages (a fixed count) or pages_dist, not both")
	case f.Pages != nil:
		b.intRange(fp.key("pages"), *f.Pages, int(fieldOf("feed.pages").lo), min(maxPages, int(fieldOf("feed.pages").hi)))
		out.Pages, _ = dist.NewConstant(float64(*f.Pages))
	case f.PagesDist != nil:
		out.Pages = b.dist(fp.key("pages_dist"), *f.PagesDist)
	}
	b.integer(fp.key("items_per_page"), "feed.items_per_page", int64(f.ItemsPerPage))
	coverOK := b.num(fp.key("ru_cover"), "feed.ru_cover", f.RUCover)
	perItemOK := b.num(fp.key("ru_per_item"), "feed.ru_per_item", f.RUPerItem)
	if n := out.MaxPageCharge(); coverOK && perItemOK && n > simnet.MaxRequestCharge {
		p := fp.key("ru_per_item")
		if f.RUCover > simnet.MaxRequestCharge {
			p = fp.key("ru_cover")
		}
		b.fail(p, "a page may cost %s RU (ru_cover + ru_per_item × %d items); the limit is %g RU (simnet.MaxRequestCharge): lower ru_cover or ru_per_item",
			count(n), max(cmp0(f.ItemsPerPage, simnet.DefaultItemsPerPage), cmp0(f.ReadManyItems, simnet.DefaultReadManyItems)), float64(simnet.MaxRequestCharge))
	}
	b.integer(fp.key("max_fan_out"), "feed.max_fan_out", int64(f.MaxFanOut))
	capFan := cmp0(f.MaxFanOut, feed.DefaultMaxFanOut)
	b.intRange(fp.key("fan_out"), f.FanOut, 0, min(max(b.f.Workload.Partitions, 1), capFan))
	b.integer(fp.key("max_concurrency"), "feed.max_concurrency", int64(f.MaxConcurrency))
	b.integer(fp.key("read_many_items"), "feed.read_many_items", int64(f.ReadManyItems))
	b.integer(fp.key("gate_capacity"), "feed.gate_capacity", int64(f.GateCapacity))
	out.HedgeUnit = choice(b, fp.key("hedge_unit"), "feed.hedge_unit", f.HedgeUnit, feed.UnitPage,
		map[string]feed.Unit{feed.UnitPage.String(): feed.UnitPage, feed.UnitOperation.String(): feed.UnitOperation})
	out.QueryContinuation = choice(b, fp.key("query_continuation"), "feed.query_continuation", f.QueryContinuation, hedging.DefaultContinuationAffinity(hedging.QueryPage), continuationNames)
	ap := fp.key("affinity")
	for _, k := range keysByLine(b, ap, f.Affinity) {
		kind := b.kind(ap.key(k), k)
		var a feed.Affinity
		if b.enum(ap.key(k), "feed.affinity", f.Affinity[k], "", false) {
			a, _ = feed.ParseAffinity(f.Affinity[k])
		}
		if out.Affinity == nil {
			out.Affinity = map[hedging.OperationKind]feed.Affinity{}
		}
		out.Affinity[kind] = a
	}

	cp := fp.key("change_feed")
	c := f.ChangeFeed
	b.integer(cp.key("pollers"), "feed.change_feed.pollers", int64(c.Pollers))
	out.ChangeFeed.Pollers = c.Pollers
	if parts := max(b.f.Workload.Partitions, 1); c.Pollers > 0 && c.Pollers <= simnet.MaxPollers && (parts+c.Pollers-1)/c.Pollers > capFan {
		// Found by hedgesim fuzz: the driver refuses such a plan, so every
		// poll failed.
		b.fail(cp.key("pollers"), "%d partitions over %d pollers make %d leaves per poll, above max_fan_out = %d: raise pollers or max_fan_out",
			parts, c.Pollers, (parts+c.Pollers-1)/c.Pollers, capFan)
	}
	out.ChangeFeed.PollInterval = b.time(cp.key("poll_interval_ms"), "feed.change_feed.poll_interval_ms", c.PollIntervalMs)
	if c.Pollers > 0 && c.PollIntervalMs < 1 {
		b.fail(cp.key("poll_interval_ms"), "must be >= 1 with pollers > 0, got %g", c.PollIntervalMs)
	}
	out.ChangeFeed.Scope = choice(b, cp.key("scope"), "feed.change_feed.scope", c.Scope, simnet.CursorGlobal,
		map[string]simnet.CursorScope{"global": simnet.CursorGlobal, "region_local": simnet.CursorRegionLocal})
	b.integer(cp.key("region_offset"), "feed.change_feed.region_offset", c.RegionOffset)
	out.ChangeFeed.RegionOffset = c.RegionOffset
	out.ChangeFeed.On304 = choice(b, cp.key("on_304"), "feed.change_feed.on_304", c.On304, simnet.On304Request,
		map[string]simnet.On304{"request": simnet.On304Request, "server_current": simnet.On304ServerCurrent})
	out.ChangeFeed.Continuation = choice(b, cp.key("continuation"), "feed.change_feed.continuation", c.Continuation, hedging.DefaultContinuationAffinity(hedging.ChangeFeedPage), continuationNames)
	mp := root.key("workload", "mix")
	for k := range b.f.Workload.Mix {
		if k == hedging.ChangeFeedPage.String() {
			b.fail(mp.key(k), "with [feed], change-feed reads come from feed.change_feed.pollers, not the mix")
		}
	}

	sp := fp.key("setup")
	s := f.Setup
	out.Setup = simnet.Setup{Collection: s.Collection, PKRanges: s.PKRanges, QueryPlan: s.QueryPlan, MetadataBudget: s.MetadataBudget}
	b.integer(sp.key("metadata_budget"), "feed.setup.metadata_budget", int64(s.MetadataBudget))
	lp := sp.key("metadata_lag_ms")
	for _, r := range keysByLine(b, lp, s.MetadataLagMs) {
		if nm.replicasKnown && !nm.replicaRegions[r] {
			b.fail(lp.key(r), "unknown physical region %q (replica regions: %s)", r, list(nm.replicaRegions))
		}
		b.time(lp.key(r), "feed.setup.metadata_lag_ms", s.MetadataLagMs[r])
	}
	out.Setup.MetadataLagMs = s.MetadataLagMs
	out.Setup.Latest = choice(b, sp.key("metadata_choice"), "feed.setup.metadata_choice", s.Choice, false, map[string]bool{"fastest": false, "latest": true})
	out.Setup.Grace = b.time(sp.key("metadata_grace_ms"), "feed.setup.metadata_grace_ms", s.GraceMs)
	if !out.Setup.Latest && s.GraceMs != 0 {
		b.fail(sp.key("metadata_grace_ms"), `applies only to metadata_choice = "latest"`)
	}
	if len(s.Events) > simnet.MaxMetadataEvents {
		b.fail(sp.key("events"), "%d events exceed the limit of %d", len(s.Events), simnet.MaxMetadataEvents)
	}
	for i, e := range s.Events {
		ep := sp.key("events").elem(i, "")
		ev := simnet.MetadataEvent{At: b.time(ep.key("at_s"), "feed.setup.events.at_s", e.AtS)}
		ev.Kind = choice(b, ep.key("kind"), "feed.setup.events.kind", e.Kind, simnet.Split,
			map[string]simnet.MetadataEventKind{"split": simnet.Split, "recreate": simnet.Recreate})
		if e.Kind == "" && !b.set(ep.key("kind")) {
			b.fail(ep.key("kind"), `required: "split" or "recreate"`)
		}
		out.Setup.Events = append(out.Setup.Events, ev)
	}
	if parts := b.f.Workload.Partitions; parts > simnet.MaxFeedPartitions {
		b.fail(root.key("workload", "partitions"), "must be <= %d with [feed], got %d", simnet.MaxFeedPartitions, parts)
	}
	cfg.Feed = out
}
