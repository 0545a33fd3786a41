package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
	"hedgelab/internal/report"
	"hedgelab/internal/study"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"

	"gonum.org/v1/gonum/stat/distuv"
)

// q9Reps is the replications of every run of notebook 06.
const q9Reps = 5

// q9Pages is the pages per query of the unit-and-affinity study.
var q9Pages = []float64{1, 2, 5, 10, 20}

// q9RUCap is the RU multiplier a page policy may spend to count as best.
const q9RUCap = 1.2

// variant is one configuration of a feed study: a name, an edit of the
// scenario's configuration and the page policy.
type variant struct {
	name string
	edit func(*simnet.Config)
	pol  simnet.Policy
}

func noBreaker(c *simnet.Config) { c.Client.ConsecutiveHedgeWinThreshold = 1 << 30 }

func affinity(a feed.Affinity) func(*simnet.Config) {
	return func(c *simnet.Config) {
		noBreaker(c)
		c.Feed.Affinity = map[hedging.OperationKind]feed.Affinity{hedging.QueryPage: a}
	}
}

// wholeOp hedges the query as a whole (feed.Whole), the breaker out of
// reach so only the operation's threshold moves it.
func wholeOp(c *simnet.Config) {
	noBreaker(c)
	c.Feed.HedgeUnit = feed.UnitOperation
}

// The names of the variants the prose quotes.
const (
	vNone      = "no hedging"
	vPage50    = "per-page, 50 ms"
	vPage1s    = "per-page, 1 s threshold"
	vPin       = "per-page + pin after hedge win"
	vBreaker   = "per-page + breaker-driven pin"
	vWhole50   = "whole operation, 50 ms"
	vWhole1s   = "whole operation, 1 s"
	vWholeName = "whole operation"
)

// q9Variants are the hedging designs compared for a P-page query.
func q9Variants() []variant {
	return []variant{
		{vNone, nil, polDisabled()},
		{vPage1s, noBreaker, polStatic("static-1000ms", 1000)},
		{vPage50, noBreaker, polStatic("static-50ms", 50)},
		{"per-page + §9.5 breaker (N=5)", nil, polStatic("static-50ms", 50)},
		{vPin, affinity(feed.PinAfterHedgeWin), polStatic("static-50ms", 50)},
		{vBreaker, func(c *simnet.Config) {
			c.Feed.Affinity = map[hedging.OperationKind]feed.Affinity{hedging.QueryPage: feed.BreakerDriven}
		}, polStatic("static-50ms", 50)},
		{vWhole50, wholeOp, polStatic("static-50ms", 50)},
		{vWhole1s, wholeOp, polStatic("static-1000ms", 1000)},
	}
}

// feedSim runs the embedded scenario name, with params applied, edited by
// edit, under pol for q9Reps replications.
func (d *doc) feedSim(name string, edit func(*simnet.Config), pol simnet.Policy, params ...param) (*run, error) {
	s, cfg, err := loadEdited(name, edit, params...)
	if err != nil {
		return nil, err
	}
	res, err := study.Simulate(cfg, []simnet.Policy{pol}, q9Reps, study.Options{Parallel: d.parallel})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &run{scenario: s, cfg: cfg, res: res, reps: q9Reps}, nil
}

// perRep runs the embedded scenario name edited by edit under pol once per
// replication and returns each replication's stats (for feed figures with
// an interval across replications).
func (d *doc) perRep(name string, edit func(*simnet.Config), pol simnet.Policy) ([]*simnet.Stats, error) {
	_, cfg, err := loadEdited(name, edit)
	if err != nil {
		return nil, err
	}
	var out []*simnet.Stats
	for r := range q9Reps {
		st, err := simnet.Run(cfg, pol, r, simnet.RunOptions{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, st)
	}
	return out, nil
}

// meanCI returns the mean of xs and its 95% interval half-width (Student t).
func meanCI(xs []float64) (mean, half float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(0.975)
	return mean, t * math.Sqrt(ss/float64(len(xs)-1)/float64(len(xs)))
}

// ciCell renders a mean and its 95% interval with format; every figure
// here is a count, share or time, so the interval's low end is clamped at
// 0.
func ciCell(xs []float64, format func(float64) string) string {
	m, h := meanCI(xs)
	lo := max(0, m-h)
	if format(lo) == format(m+h) {
		return format(m) + " [no spread]"
	}
	return fmt.Sprintf("%s [%s, %s]", format(m), format(lo), format(m+h))
}

func num(v float64) string { return fmt.Sprintf("%.0f", v) }

// q9Unit is study question 1 on one page-latency shape and returns, at
// P = 10, the variants' figures by name.
func q9Unit(d *doc, title, shape string, edit func(*simnet.Config)) (map[string]report.Figures, error) {
	sw := &report.Sweep{Scenario: "feed-query-brownout (" + shape + ")", Param: "pages", Seed: 11, Replications: q9Reps}
	at10 := map[string]report.Figures{}
	var tab [][]string
	for _, pages := range q9Pages {
		pt := report.SweepPoint{Value: pages}
		for _, v := range q9Variants() {
			r, err := d.feedSim("feed-query-brownout", func(c *simnet.Config) {
				edit(c)
				if v.edit != nil {
					v.edit(c)
				}
			}, v.pol, param{"feed.pages", pages})
			if err != nil {
				return nil, err
			}
			p := r.res.Policies[0]
			f := study.Figures(p)
			f.Policy = v.name
			pr := study.Policy(p)
			pr.Figures = f
			pt.Policies = append(pt.Policies, pr)
			tab = append(tab, []string{fmt.Sprintf("%g", pages), v.name, ms(f.P50), withCI(f, "p99_ms", f.P99, ms), withCI(f, "ru_multiplier", f.RUMultiplier, ru), pct(f.HedgeRate)})
			if pages == 10 {
				at10[v.name] = f
			}
		}
		sw.Points = append(sw.Points, pt)
	}
	if _, err := report.WriteSweep(d.chartDir("unit-"+shape), sw, report.Options{PNG: d.png}); err != nil {
		return nil, err
	}
	d.p("### %s", title)
	d.table([]string{"pages P", "design", "p50 ms", "p99 ms [95% CI]", "RU × [95% CI]", "queries hedged"}, tab)
	d.img("p99 against pages, "+shape, "unit-"+shape+"/sweep_p99.svg")
	d.img("p99 against RU multiplier (Pareto), "+shape, "unit-"+shape+"/sweep_cost.svg")
	return at10, nil
}

// bestUnder returns the variant with the lowest p99 among those at or
// under the RU cap, and whether another is within its 95% interval.
func bestUnder(figs map[string]report.Figures) (string, report.Figures) {
	names := make([]string, 0, len(figs))
	for n := range figs {
		names = append(names, n)
	}
	slices.Sort(names)
	best := ""
	for _, n := range names {
		if f := figs[n]; f.RUMultiplier <= q9RUCap && (best == "" || f.P99 < figs[best].P99) {
			best = n
		}
	}
	return best, figs[best]
}

// tied reports whether b's p99 is not meaningfully above a's (within 5%
// or with overlapping 95% intervals).
func tied(a, b report.Figures) bool { return !better(a, b, "p99_ms", a.P99, b.P99) }

func q9(d *doc) error {
	d.p("**Question (spec §17 Q9).** Phase 2 hedges feeds — queries, ReadMany, the change feed — and the metadata reads before them. What is the hedge unit, which page affinity should it use, is hedging change-feed pages safe, and does the setup before the first page matter? The research note (`shared/research/phase2-feeds.md`, §5c) poses five study questions; this notebook answers those the simulator models.")
	d.p("**Method.** Every run drives `hedging/feed`'s `Driver` through `simnet` (each page one hedge race over the network model; only the winner's continuation goes forward). Each configuration runs %d replications on the same seeds (common random numbers); intervals are 95%% confidence intervals across replications. The scenarios are the embedded `feed-*` files; the designs are changes of their configuration named in each table.", q9Reps)

	// Q1.
	d.p("## 1. Hedge unit and page affinity for a P-page query")
	d.p("`feed-query-brownout` (one leaf of P pages, primary 70 ms from the alternate) under two page-latency shapes: a brown-out (+300 ms on every primary page, δ > T for T = 50 ms) and an independent tail (1%% of primary pages take 1–3 s). Designs: no hedging; per-page hedging at the spec default of 1 s and at 50 ms with the §9.5 partition breaker out of reach; per-page at 50 ms with the breaker at its default N = 5; per-page with the leaf pinned to the alternate after a hedge win; per-page with the breaker-driven pin; and whole-operation hedging (`hedge_unit = \"operation\"`, `feed.Whole`: after the threshold on the whole query, a second copy of the page loop runs from the first page pinned to the alternate region, the first copy pinned to the primary; the first copy to finish wins, the other is cancelled, and RU counts both copies' pages until then) at 50 ms and 1 s. No SDK ships whole-operation hedging; it is the research note's per-operation baseline, and its threshold is the same rule as a page's (the policy's threshold for the operation's kind), which cannot scale with P. The best design is the lowest p99 at P = 10 among those at ≤ %.1f× RU.", q9RUCap)
	brown, err := q9Unit(d, "Brown-out: +300 ms on every primary page", "brownout", func(*simnet.Config) {})
	if err != nil {
		return err
	}
	tail := func(c *simnet.Config) {
		c.Episodes = nil
		body := dist.Spec{Family: "lognormal", MedianMs: fp(8), P99Ms: fp(20)}
		mix := dist.Spec{Family: "mixture", Components: []dist.Component{{Weight: 0.99, Spec: body},
			{Weight: 0.01, Spec: dist.Spec{Family: "uniform", MinMs: fp(1000), MaxMs: fp(3000)}}}}
		c.Replicas[0].Default, _ = mix.Build()
		for k := range c.Replicas[0].Service {
			delete(c.Replicas[0].Service, k)
		}
	}
	indep, err := q9Unit(d, "Independent tail: 1% of primary pages 1–3 s", "tail", tail)
	if err != nil {
		return err
	}
	bb, bf := bestUnder(brown)
	tb, tf := bestUnder(indep)
	var both []string
	for n := range brown {
		if brown[n].RUMultiplier <= q9RUCap && indep[n].RUMultiplier <= q9RUCap && tied(bf, brown[n]) && tied(tf, indep[n]) {
			both = append(both, n)
		}
	}
	slices.Sort(both)
	d.p("At P = 10: in the brown-out the best design under %.1f× RU is **%s** (p99 %s ms, RU %s×; no hedging %s ms, per-page at 50 ms %s ms at %s× RU, per-page at 1 s %s ms); on the independent tail it is **%s** (p99 %s ms; no hedging %s ms, pin after hedge win %s ms).",
		q9RUCap, bb, ms(bf.P99), ru(bf.RUMultiplier), ms(brown[vNone].P99), ms(brown[vPage50].P99), ru(brown[vPage50].RUMultiplier), ms(brown[vPage1s].P99),
		tb, ms(tf.P99), ms(indep[vNone].P99), ms(indep[vPin].P99))
	d.p("%s", wholeFinding(brown, indep))
	if len(both) > 0 {
		d.p("Within the interval of the best in both shapes at ≤ %.1f× RU: %s.", q9RUCap, "**"+strings.Join(both, "**, **")+"**")
	} else {
		d.p("No design is within the interval of the best in both shapes at ≤ %.1f× RU: the choice needs a switch rule (pin only while a region is known slow).", q9RUCap)
	}

	// Q2.
	fan, err := q9FanOut(d)
	if err != nil {
		return err
	}
	// Q3.
	if err := q9ChangeFeed(d); err != nil {
		return err
	}
	// Q5 (setup).
	setup, err := q9Setup(d)
	if err != nil {
		return err
	}
	meta, err := q9Metadata(d)
	if err != nil {
		return err
	}

	d.p("## Answer and the spec amendments the data supports")
	d.p("1. **Hedge unit.** %s", unitAnswer(fan, brown, indep))
	d.p("2. **Affinity.** %s", affinityAnswer(bb, bf, tb, tf, both, brown, indep))
	d.p("3. **Pin.** A region-affine continuation must pin its leaf with a pin no setting can clear: it is the only way a region-local change-feed cursor was delivered exactly once with hedging configured (section 3). Keep `(Document, ReadFeed)` — the document change feed — out of the allowed set until the service confirms its cursor is global and a 304 returns the request's cursor.")
	d.p("4. **Metadata.** Hedge the setup reads (collection, partition-key ranges, query plan) at the fixed 1.5 s threshold with primary-authoritative classification and error-driven invalidation: without it %s of queries failed during the metadata outage and page hedging could not help (section 4). Replace \"latest `_etag` or fastest\" by: the fastest clean answer by default, and the latest by an ordered version (never `_etag`) only with a grace longer than the gap between the legs — in section 5 a %s ms grace cut stale setup reads from %s to %s at %s ms more cold-query p50, and a %s ms grace bought nothing (%s stale) for %s ms.",
		pct(setup), num(meta.longMs), pct(meta.fastStale), pct(meta.longStale), ms(meta.longCost), num(meta.shortMs), pct(meta.shortStale), ms(meta.shortCost))
	d.p("5. **Budget.** Count hedge legs in flight per client, not operations: under a brown-out an ungated 100-leaf fan-out hedged every page (RU %s×). A gate of 8 legs held RU at %s× but gave up the p99 gain (%s → %s ms), so the data supports counting legs, and does not support a leg budget far below the fan-out as a default.", ru(fan.openRU), ru(fan.gateRU), ms(fan.openP99), ms(fan.gateP99))
	return nil
}

// versus says how a's p99 stands against b's: "below", "above" or
// "level with" (within 5% or overlapping 95% intervals).
func versus(a, b report.Figures) string {
	switch {
	case better(a, b, "p99_ms", a.P99, b.P99):
		return "below"
	case better(b, a, "p99_ms", b.P99, a.P99):
		return "above"
	}
	return "level with"
}

// wholeFinding compares whole-operation hedging with per-page hedging at
// P = 10 in both shapes, from the tables' figures.
func wholeFinding(brown, indep map[string]report.Figures) string {
	wb, pb, w1, p1 := brown[vWhole50], brown[vPage50], brown[vWhole1s], brown[vPage1s]
	wt, pt := indep[vWhole50], indep[vPage50]
	s := fmt.Sprintf("Whole-operation hedging at P = 10: in the brown-out, at 50 ms its p99 is %s per-page hedging's (%s against %s ms) at %s× against %s× RU — the alternate copy starts once and its pages pay no threshold, and the primary copy's pages served until then are the extra RU; at 1 s it hedges %s of queries (per-page at 1 s: %s) for a p99 of %s ms at %s× RU (per-page at 1 s: %s ms). ",
		versus(wb, pb), ms(wb.P99), ms(pb.P99), ru(wb.RUMultiplier), ru(pb.RUMultiplier), pct(w1.HedgeRate), pct(p1.HedgeRate), ms(w1.P99), ru(w1.RUMultiplier), ms(p1.P99))
	return s + fmt.Sprintf("On the independent tail, at 50 ms it hedges %s of queries (every query that outlasts the threshold starts the second copy, slow page or not) at %s× RU, and its p99 is %s per-page's (%s against %s ms at %s× RU).",
		pct(wt.HedgeRate), ru(wt.RUMultiplier), versus(wt, pt), ms(wt.P99), ms(pt.P99), ru(pt.RUMultiplier))
}

// unitAnswer states the hedge-unit finding: per leaf under fan-out, and
// per page against the whole operation at P = 10.
func unitAnswer(fan fanOut, brown, indep map[string]report.Figures) string {
	wb, pb, pin := brown[vWhole50], brown[vPage50], brown[vPin]
	wt, pt := indep[vWhole50], indep[vPage50]
	s := fmt.Sprintf("Per-leaf hedging takes a 100-leaf query's p99 from %s to %s ms (section 2). Against the %s baseline at the same 50 ms threshold (P = 10): in the brown-out its p99 is %s plain per-page hedging's (%s against %s ms, RU %s× against %s×) and %s the pin after a hedge win's (%s ms at %s× RU); on the independent tail it is %s per-page's (%s against %s ms) at %s× against %s× RU. ",
		ms(fan.offP99), ms(fan.onP99), vWholeName, versus(wb, pb), ms(wb.P99), ms(pb.P99), ru(wb.RUMultiplier), ru(pb.RUMultiplier),
		versus(wb, pin), ms(pin.P99), ru(pin.RUMultiplier), versus(wt, pt), ms(wt.P99), ms(pt.P99), ru(wt.RUMultiplier), ru(pt.RUMultiplier))
	if better(pt, wt, "p99_ms", pt.P99, wt.P99) || wt.RUMultiplier > q9RUCap || wb.RUMultiplier > q9RUCap {
		return s + "Keep the hedge unit at one page request of one feed-range leaf with one continuation, as every SDK does: the whole operation loses on the independent tail or exceeds the RU cap, and its threshold would have to scale with P, which is not known in advance."
	}
	return s + "The whole operation is not worse here; the page stays the unit because it is what every SDK ships and what a region-affine continuation allows."
}

// affinityAnswer states the affinity finding from the P = 10 figures.
func affinityAnswer(bb string, bf report.Figures, tb string, tf report.Figures, both []string, brown, indep map[string]report.Figures) string {
	s := fmt.Sprintf("Best at P = 10 under %.1f× RU: `%s` in the brown-out (p99 %s ms), `%s` on the independent tail (p99 %s ms). ", q9RUCap, bb, ms(bf.P99), tb, ms(tf.P99))
	if len(both) == 0 {
		pin, brk := vPin, vBreaker
		return s + fmt.Sprintf("No single design is within the interval of the best in both: pinning after a hedge win raises the independent-tail p99 from %s to %s ms, and per-page hedging without a pin costs %s× RU in the brown-out. The spec should keep per-page hedging without a fixed pin as the default and make any pin conditional on evidence that a region is slow; the §9.5 breaker is such evidence, but as the race uses it the demoted region is still hedged (%s× RU for `%s` in the brown-out), which a Phase 2 pin should suppress.",
			ms(indep[vPage50].P99), ms(indep[pin].P99), ru(brown[vPage50].RUMultiplier), ru(brown[brk].RUMultiplier), brk)
	}
	return s + "Within the interval of the best in both: `" + strings.Join(both, "`, `") + "`; the spec's §9.5 breaker N is then a Phase 2 tuning knob."
}

// metaAnswer is what the answer quotes of the metadata study: stale setup
// read shares and p50 costs of a short and a long grace against fastest.
type metaAnswer struct {
	fastStale, shortStale, longStale float64
	shortMs, longMs                  float64
	shortCost, longCost              float64
}

// q9Graces are the LatestWithGrace graces of the metadata study (ms).
var q9Graces = []float64{0, 50, 200, 600}

// q9Metadata is study question 4 (section 5): feed.Fastest against
// feed.LatestWithGrace on cold metadata reads.
func q9Metadata(d *doc) (metaAnswer, error) {
	var out metaAnswer
	d.p("## 5. Metadata: latest or fastest")
	d.p("`feed-metadata-latest`: East US answers metadata reads in 2 s, so the 1.5 s metadata hedge sends every cold collection and partition-key-range read to East US 2 too, which shows each split (every 10 s) 5 s late; 1000 instances start cold over the run. `fastest` caches the race's winner; `latest(δ)` (`feed.LatestWithGrace`) waits up to δ after the first clean answer for the other leg and caches the larger metadata version (an ordered number, as `_etag` is not). A *stale setup read* cached a version its region had not caught up on; every stale cache later costs a 410/1002 page and a refresh (stale-cache hits, which also follow every split).")
	type res struct {
		stale, hits, p50 []float64
	}
	var tab [][]string
	var fast res
	p50 := map[float64]float64{}
	stale := map[float64]float64{}
	for i, g := range append([]float64{-1}, q9Graces...) {
		edit := func(c *simnet.Config) {
			if g >= 0 {
				c.Feed.Setup.Latest, c.Feed.Setup.Grace = true, time.Duration(g*float64(time.Millisecond))
			}
		}
		sts, err := d.perRep("feed-metadata-latest", edit, polStatic("static-50ms", 50))
		if err != nil {
			return out, err
		}
		var r res
		for _, st := range sts {
			f := st.Feed
			r.stale = append(r.stale, float64(f.StaleSetupReads)/float64(max(f.SetupReads, 1)))
			r.hits = append(r.hits, float64(f.StaleCacheHits))
			r.p50 = append(r.p50, f.Kinds[simnet.FeedQuery].QuantileMs(0.5))
		}
		name := "fastest"
		if g >= 0 {
			name = fmt.Sprintf("latest(%g ms)", g)
		}
		if i == 0 {
			fast = r
		}
		p50[g], _ = meanCI(r.p50)
		stale[g], _ = meanCI(r.stale)
		tab = append(tab, []string{name, ciCell(r.stale, pct), ciCell(r.hits, num), ciCell(r.p50, ms)})
	}
	d.table([]string{"metadata choice", "stale setup reads [95% CI]", "stale-cache hits", "query p50 ms (cold: two setup reads)"}, tab)
	out.fastStale, _ = meanCI(fast.stale)
	out.shortMs, out.longMs = q9Graces[2], q9Graces[3]
	out.shortStale, out.longStale = stale[out.shortMs], stale[out.longMs]
	out.shortCost, out.longCost = p50[out.shortMs]-p50[-1], p50[out.longMs]-p50[-1]
	d.p("A grace shorter than the gap between the two answers (here ~0.5 s: 2 s against 1.5 s + 8 ms) keeps the fastest, stale answer and only adds the wait: `latest(%g ms)` has %s stale setup reads against %s for `fastest`, at %s ms more p50. A grace that covers the gap takes the primary's newer version: `latest(%g ms)` has %s, at %s ms more p50.",
		out.shortMs, pct(out.shortStale), pct(out.fastStale), ms(out.shortCost), out.longMs, pct(out.longStale), ms(out.longCost))
	return out, nil
}

// fp returns a pointer to v.
func fp(v float64) *float64 { return &v }

// fanOut is what the answer quotes of study question 2: the K = 100 p99
// without and with per-leaf hedging.
type fanOut struct{ offP99, onP99, gateRU, openRU, gateP99, openP99 float64 }

// q9FanOut is study question 2.
func q9FanOut(d *doc) (fanOut, error) {
	var out fanOut
	d.p("## 2. Fan-out: K leaves against 1 − (1 − p)^K")
	d.p("`feed-fan-out`: a query of K one-page leaves, 1%% of primary pages 1–3 s. Without hedging a query is slow when any leaf is: the closed form 1 − (1 − p)^K with p = 0.01 is the share of queries at or above 1 s. Then a brown-out of every primary page with and without a `feed.Gate` of 8 hedge legs per client.")
	var tab [][]string
	for _, k := range []float64{1, 10, 100} {
		off, err := d.feedSim("feed-fan-out", nil, polDisabled(), param{"feed.fan_out", k})
		if err != nil {
			return out, err
		}
		on, err := d.feedSim("feed-fan-out", nil, polStatic("static-50ms", 50), param{"feed.fan_out", k})
		if err != nil {
			return out, err
		}
		q := &off.res.Policies[0].Merged.Feed.Kinds[simnet.FeedQuery]
		share := q.ShareAtLeast(1000)
		ci := study.ProportionCI(int64(math.Round(share*float64(q.Ops))), q.Ops)
		closed := 1 - math.Pow(0.99, k)
		fo, fn := off.fig("disabled"), on.fig("static-50ms")
		out.offP99, out.onP99 = fo.P99, fn.P99
		tab = append(tab, []string{fmt.Sprintf("%g", k), pct(closed), fmt.Sprintf("%s [%s, %s]", pct(share), pct(ci[0]), pct(ci[1])),
			withCI(fo, "p99_ms", fo.P99, ms), withCI(fn, "p99_ms", fn.P99, ms), withCI(fn, "ru_multiplier", fn.RUMultiplier, ru)})
	}
	d.table([]string{"K", "closed form 1 − 0.99^K", "queries ≥ 1 s, no hedging [95% CI]", "p99 ms, no hedging", "p99 ms, per-leaf 50 ms", "RU ×, per-leaf"}, tab)
	brown := func(gate int) func(*simnet.Config) {
		return func(c *simnet.Config) {
			c.Episodes = append(c.Episodes, simnet.Episode{Target: "eastus", End: time.Hour, AddMs: 300, Factor: 1})
			noBreaker(c)
			c.Feed.GateCapacity = gate
		}
	}
	var gtab [][]string
	figs := map[int]report.Figures{}
	for _, g := range []int{0, 8} {
		r, err := d.feedSim("feed-fan-out", brown(g), polStatic("static-50ms", 50))
		if err != nil {
			return out, err
		}
		f, fs := r.fig("static-50ms"), r.res.Policies[0].Merged.Feed
		figs[g] = f
		name, peak := "none", "-"
		if g > 0 {
			name, peak = fmt.Sprint(g), fmt.Sprint(fs.PeakLegsInFlight)
		}
		gtab = append(gtab, []string{name, fmt.Sprint(fs.Pages), fmt.Sprint(fs.PagesHedged), fmt.Sprint(fs.PagesGated), peak,
			withCI(f, "p99_ms", f.P99, ms), withCI(f, "ru_multiplier", f.RUMultiplier, ru)})
	}
	d.table([]string{"gate (legs)", "pages", "pages hedged", "pages gated", "peak legs held", "p99 ms", "RU ×"}, gtab)
	out.openRU, out.gateRU, out.openP99, out.gateP99 = figs[0].RUMultiplier, figs[8].RUMultiplier, figs[0].P99, figs[8].P99
	d.p("The gate bounds the alternates a 100-leaf fan-out sends at once to its capacity and cuts the RU multiplier from %s× to %s×; the p99 goes from %s to %s ms because gated pages wait out the brown-out.",
		ru(figs[0].RUMultiplier), ru(figs[8].RUMultiplier), ms(figs[0].P99), ms(figs[8].P99))
	return out, nil
}

// q9ChangeFeed is study question 3.
func q9ChangeFeed(d *doc) error {
	d.p("## 3. Change-feed continuations: duplicates and skips")
	d.p("`feed-change-feed-cursors`: four pollers read four partitions while writes land at 200/s; 5%% of primary pages are 200–800 ms slow, the alternate lags ~20 ms. Whether the service's change-feed cursor is global or region-local, and what a 304 hands out, is not public: each combination is a row, with the client treating the cursor as portable (hedged like a query page) or region-affine (pinned to its issuing region). Duplicates and skips are counted against the commit log, per 10⁶ committed changes.")
	type combo struct {
		scope simnet.CursorScope
		on304 simnet.On304
		cont  hedging.ContinuationAffinity
	}
	scopeName := map[simnet.CursorScope]string{simnet.CursorGlobal: "global", simnet.CursorRegionLocal: "region_local"}
	o304Name := map[simnet.On304]string{simnet.On304Request: "request", simnet.On304ServerCurrent: "server_current"}
	var tab [][]string
	var safe, unsafe []string
	for _, sc := range []simnet.CursorScope{simnet.CursorGlobal, simnet.CursorRegionLocal} {
		for _, o := range []simnet.On304{simnet.On304Request, simnet.On304ServerCurrent} {
			for _, ca := range []hedging.ContinuationAffinity{hedging.Portable, hedging.RegionAffine} {
				cb := combo{sc, o, ca}
				sts, err := d.perRep("feed-change-feed-cursors", func(c *simnet.Config) {
					c.Feed.ChangeFeed.Scope, c.Feed.ChangeFeed.On304, c.Feed.ChangeFeed.Continuation = cb.scope, cb.on304, cb.cont
					c.Consistency = simnet.Eventual
				}, polStatic("static-50ms", 50))
				if err != nil {
					return err
				}
				var dup, skip, hedged []float64
				for _, st := range sts {
					f := st.Feed
					dup = append(dup, f.PerMillion(f.Duplicates))
					skip = append(skip, f.PerMillion(f.Skips))
					hedged = append(hedged, float64(f.PagesHedged)/float64(max(f.Pages, 1)))
				}
				md, _ := meanCI(dup)
				mk, _ := meanCI(skip)
				label := fmt.Sprintf("`%s`, 304 → `%s`, %s", scopeName[sc], o304Name[o], ca)
				if md == 0 && mk == 0 {
					safe = append(safe, label)
				} else {
					unsafe = append(unsafe, label)
				}
				tab = append(tab, []string{scopeName[sc], o304Name[o], ca.String(), ciCell(hedged, pct), ciCell(dup, num), ciCell(skip, num)})
			}
		}
	}
	d.table([]string{"cursor scope", "304 hands out", "client treats cursor as", "pages hedged", "duplicates / 10⁶ [95% CI]", "skips / 10⁶ [95% CI]"}, tab)
	d.p("Each change delivered once with hedging at 50 ms: %s. Duplicates or skips: %s. Hedging change-feed pages is safe when the cursor is global and a 304 returns the request's cursor, or when the client pins the cursor to the region that issued it (which hedges nothing); it is unsafe otherwise.",
		strings.Join(safe, "; "), strings.Join(unsafe, "; "))
	return nil
}

// q9Setup is study question 5 (section 4), with the calibration against
// .NET PR #5787 and azure-sdk-for-rust #4896; it returns the failed share
// of queries with pages hedged only.
func q9Setup(d *doc) (float64, error) {
	d.p("## 4. Setup before the first page")
	d.p("`feed-cold-metadata`: 20 cold client instances start while the primary's metadata reads time out (408 after 5 s, retried in-region up to 3 attempts) for 30 s; every query reads its query plan, a cold instance also the collection and its partition-key ranges. Designs: pages and metadata hedged (metadata at the fixed 1.5 s threshold), pages only (the client's phase without `metadata_read`), nothing hedged.")
	type design struct {
		name string
		edit func(*simnet.Config)
		pol  simnet.Policy
	}
	designs := []design{
		{"pages + metadata", nil, polStatic("static-50ms", 50)},
		{"pages only", func(c *simnet.Config) { c.Client.Phase = hedging.Phase2 &^ (1 << hedging.MetadataRead) }, polStatic("static-50ms", 50)},
		{"nothing", func(c *simnet.Config) { c.Client.Phase = hedging.Phase1 }, polDisabled()},
	}
	var tab [][]string
	fail := map[string]float64{}
	p99 := map[string]float64{}
	share := map[string]float64{}
	for _, ds := range designs {
		sts, err := d.perRep("feed-cold-metadata", ds.edit, ds.pol)
		if err != nil {
			return 0, err
		}
		var failed, setup, setupMs, pagesMs, p, stale []float64
		for _, st := range sts {
			q := st.Feed.Kinds[simnet.FeedQuery]
			failed = append(failed, float64(q.Errors)/float64(q.Ops))
			setup = append(setup, q.SetupShare())
			setupMs = append(setupMs, float64(q.SetupSum)/float64(time.Millisecond)/float64(q.Ops))
			pagesMs = append(pagesMs, float64(q.TotalSum-q.SetupSum)/float64(time.Millisecond)/float64(q.Ops))
			p = append(p, q.QuantileMs(0.99))
			stale = append(stale, float64(st.Feed.StaleCacheHits))
		}
		fail[ds.name], _ = meanCI(failed)
		p99[ds.name], _ = meanCI(p)
		share[ds.name], _ = meanCI(setup)
		tab = append(tab, []string{ds.name, ciCell(failed, pct), ciCell(setupMs, ms), ciCell(pagesMs, ms), ciCell(setup, pct), ciCell(p, ms), ciCell(stale, num)})
	}
	d.table([]string{"hedged", "queries failed [95% CI]", "mean setup ms", "mean pages ms", "setup share of latency", "p99 ms", "stale-cache hits"}, tab)
	d.p("The setup is %s of query latency with pages hedged only and %s with metadata hedged too. With pages hedged and metadata not, %s of queries fail and the p99 is %s ms; hedging the metadata reads at 1.5 s brings failures to %s and the p99 to %s ms. Hedging pages alone does nothing for the setup (failures %s with nothing hedged).",
		pct(share["pages only"]), pct(share["pages + metadata"]), pct(fail["pages only"]), ms(p99["pages only"]), pct(fail["pages + metadata"]), ms(p99["pages + metadata"]), pct(fail["nothing"]))
	d.p("**Calibration.** .NET PR #5787 reports 49%% of query pages failed after a 0.5 s → 5 s → 30 s (36.6 s) cold collection-cache ladder that page hedging never saw; this model, with a flat 3 × 5 s in-region retry and a 30 s fault window in a 60 s run, fails %s of queries with pages hedged only — the same order, lower because its ladder is shorter and half the run is outside the fault. The Rust driver's cold start (9.0 s → 3.0 s with metadata hedging, azure-sdk-for-rust #4896) is a 3× reduction; here the p99 goes from %s to %s ms, %.1f×, with three sequential setup reads each hedged at 1.5 s.",
		pct(fail["pages only"]), ms(p99["pages only"]), ms(p99["pages + metadata"]), p99["pages only"]/p99["pages + metadata"])
	return fail["pages only"], nil
}
