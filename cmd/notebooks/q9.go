package main

import (
	"fmt"
	"math"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
	"hedgelab/internal/report"
	"hedgelab/internal/study"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"

	"gonum.org/v1/gonum/stat/distuv"
)

// Notebook 06 (spec §17 Q9): the prose is in templates/q9.tmpl; each
// paragraph's view holds the figures it cites, every one of them from a
// table of the notebook, and the claims it makes are checked here.

// q9Reps is the replications of every run of notebook 06.
const q9Reps = 5

// q9Pages is the pages per query of the unit-and-affinity study.
var q9Pages = []float64{1, 2, 5, 10, 20}

// q9RUCap is the RU multiplier a page policy may spend to count as best.
const q9RUCap = 1.2

// q9Gate is the gate (hedge legs in flight per client) of the fan-out
// study; q9Meter a gate too large to refuse anything, which only measures
// the peak of legs in flight; q9BudgetRatio the operations budget it is
// compared with (a hedge budget earning per page race).
const (
	q9Gate        = 8
	q9Meter       = 1000
	q9BudgetRatio = 0.1
)

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
// an interval across replications) and the configuration.
func (d *doc) perRep(name string, edit func(*simnet.Config), pol simnet.Policy) ([]*simnet.Stats, *simnet.Config, error) {
	_, cfg, err := loadEdited(name, edit)
	if err != nil {
		return nil, nil, err
	}
	var out []*simnet.Stats
	for r := range q9Reps {
		st, err := simnet.Run(cfg, pol, r, simnet.RunOptions{})
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, st)
	}
	return out, cfg, nil
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
// here is a count or a time, so the interval's low end is clamped at 0.
func ciCell(xs []float64, format func(float64) string) string {
	m, h := meanCI(xs)
	lo := max(0, m-h)
	if format(lo) == format(m+h) {
		return format(m) + " [no spread]"
	}
	return fmt.Sprintf("%s [%s, %s]", format(m), format(lo), format(m+h))
}

// share is a proportion observed as K events in N trials, pooled over the
// replications, with its exact interval (study.ProportionCI).
type share struct {
	K, N int64
	V    float64
	CI   [2]float64
}

func newShare(k, n int64) share {
	s := share{K: k, N: n, CI: study.ProportionCI(k, n)}
	if n > 0 {
		s.V = float64(k) / float64(n)
	}
	return s
}

// contains reports whether v lies in s's interval.
func (s share) contains(v float64) bool { return s.CI[0] <= v && v <= s.CI[1] }

// cell renders "v% [lo%, hi%]".
func (s share) cell() string {
	return fmt.Sprintf("%s [%s, %s]", pct(s.V), pct(s.CI[0]), pct(s.CI[1]))
}

// perMillion renders s per 10⁶ with its interval.
func (s share) perMillion() string {
	return fmt.Sprintf("%s [%s, %s]", num(1e6*s.V), num(1e6*s.CI[0]), num(1e6*s.CI[1]))
}

func num(v float64) string { return fmt.Sprintf("%.0f", v) }

// ties renders the names of designs tied at the best: "**a**" for one,
// "a tie of **a**, **b** and **c**" for several; ties are reported, never
// broken by name.
func ties(names []string) string {
	bold := make([]string, len(names))
	for i, n := range names {
		bold[i] = "**" + n + "**"
	}
	if len(bold) == 1 {
		return bold[0]
	}
	return "a tie of " + joinAnd(bold, "")
}

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

// bestUnder returns the designs with the lowest p99 among those at or
// under the RU cap, every one whose p99 equals it (a tie is reported, not
// broken), in table order, and their figures.
func bestUnder(figs map[string]report.Figures) ([]string, report.Figures) {
	var best []string
	lo := math.Inf(1)
	for _, v := range q9Variants() {
		if f, ok := figs[v.name]; ok && f.RUMultiplier <= q9RUCap && f.P99 < lo {
			lo = f.P99
		}
	}
	for _, v := range q9Variants() {
		if f, ok := figs[v.name]; ok && f.RUMultiplier <= q9RUCap && f.P99 == lo {
			best = append(best, v.name)
		}
	}
	return best, figs[best[0]]
}

// tied reports whether b's p99 is not meaningfully above a's (within 5%
// or with overlapping 95% intervals).
func tied(a, b report.Figures) bool { return !better(a, b, "p99_ms", a.P99, b.P99) }

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

// unitView is section 1's finding at P = 10: the best designs under the RU
// cap in each shape (ties listed), the figures the paragraph compares, and
// the designs within the best's interval in both shapes.
type unitView struct {
	Cap                        float64
	BrownBest, TailBest        string
	BF, TF                     report.Figures
	NoneB, Page50B, Page1sB    report.Figures
	NoneT, PinT, Page50T       report.Figures
	Both                       []string
	WB, W1, WT, PB, P1, PT     report.Figures
	WBvsPB, WTvsPT, WBvsPin    string
	PinB                       report.Figures
	WholeLoses, BrownTie, Tied bool
	TailTrips                  int64 // breaker trips under the tail's tied best designs
}

func q9(d *doc) error {
	d.say("q9/question", nil)
	d.say("q9/method", struct{ Reps int }{q9Reps})

	// Section 1.
	d.p("## 1. Hedge unit and page affinity for a P-page query")
	d.say("q9/unit-intro", struct{ Cap float64 }{q9RUCap})
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
	u := unitView{Cap: q9RUCap, BrownBest: ties(bb), TailBest: ties(tb), BF: bf, TF: tf,
		NoneB: brown[vNone], Page50B: brown[vPage50], Page1sB: brown[vPage1s], NoneT: indep[vNone], PinT: indep[vPin], Page50T: indep[vPage50],
		WB: brown[vWhole50], W1: brown[vWhole1s], PB: brown[vPage50], P1: brown[vPage1s], WT: indep[vWhole50], PT: indep[vPage50], PinB: brown[vPin],
		BrownTie: len(bb) > 1, Tied: len(tb) > 1}
	u.WBvsPB, u.WTvsPT, u.WBvsPin = versus(u.WB, u.PB), versus(u.WT, u.PT), versus(u.WB, u.PinB)
	for _, n := range tb {
		u.TailTrips += indep[n].Counters["breaker_trips"]
	}
	u.WholeLoses = better(u.PT, u.WT, "p99_ms", u.PT.P99, u.WT.P99) || u.WT.RUMultiplier > q9RUCap || u.WB.RUMultiplier > q9RUCap
	for _, v := range q9Variants() {
		n := v.name
		if brown[n].RUMultiplier <= q9RUCap && indep[n].RUMultiplier <= q9RUCap && tied(bf, brown[n]) && tied(tf, indep[n]) {
			u.Both = append(u.Both, n)
		}
	}
	d.check(claim{"the tail's best designs are identical, not a choice", func() error {
		for _, n := range tb[1:] {
			if indep[n].P99 != tf.P99 {
				return failf("%s p99 %v, %s %v", n, indep[n].P99, tb[0], tf.P99)
			}
		}
		return nil
	}})
	d.say("q9/unit-best", u)
	d.say("q9/whole", u)

	fan, err := q9FanOut(d)
	if err != nil {
		return err
	}
	cf, err := q9ChangeFeed(d)
	if err != nil {
		return err
	}
	setup, err := q9Setup(d)
	if err != nil {
		return err
	}
	meta, err := q9Metadata(d)
	if err != nil {
		return err
	}
	d.p("## Answer and the spec amendments the data supports")
	d.say("q9/answer", answerView{U: u, Fan: fan, CF: cf, Setup: setup, Meta: meta})
	return nil
}

// answerView is the answer: the sections' findings.
type answerView struct {
	U     unitView
	Fan   fanView
	CF    cfView
	Setup setupFinding
	Meta  metaView
}

// fp returns a pointer to v.
func fp(v float64) *float64 { return &v }

// fanRow is one K of the fan-out table.
type fanRow struct {
	K            float64
	Closed       float64
	Slow         share
	Inside       bool
	OffP99, OnP9 report.Figures
}

// gateRow is one bound on the hedges of a 100-leaf fan-out.
type gateRow struct {
	Name                       string
	Pages, Hedged, Gated, Peak int64
	F                          report.Figures
	HedgedShare                share
	BrownOut                   bool
}

// fanView is section 2: the K table and the bounds on hedges.
type fanView struct {
	Rows                     []fanRow
	Inside, Outside          []string
	Off100, On100            report.Figures
	Open, Gate, Budget, Calm gateRow
	GateCap                  int
	BudgetPct                float64
}

// q9FanOut is study question 2.
func q9FanOut(d *doc) (fanView, error) {
	v := fanView{GateCap: q9Gate, BudgetPct: 100 * q9BudgetRatio}
	d.p("## 2. Fan-out: K leaves against 1 − (1 − p)^K")
	d.say("q9/fan-intro", nil)
	var tab [][]string
	for _, k := range []float64{1, 10, 100} {
		off, err := d.feedSim("feed-fan-out", nil, polDisabled(), param{"feed.fan_out", k})
		if err != nil {
			return v, err
		}
		on, err := d.feedSim("feed-fan-out", nil, polStatic("static-50ms", 50), param{"feed.fan_out", k})
		if err != nil {
			return v, err
		}
		q := &off.res.Policies[0].Merged.Feed.Kinds[simnet.FeedQuery]
		row := fanRow{K: k, Closed: 1 - math.Pow(0.99, k), OffP99: off.fig("disabled"), OnP9: on.fig("static-50ms")}
		row.Slow = newShare(q.CountAtLeast(1000))
		row.Inside = row.Slow.contains(row.Closed)
		label := fmt.Sprintf("K = %g", k)
		if row.Inside {
			v.Inside = append(v.Inside, label)
		} else {
			v.Outside = append(v.Outside, label)
		}
		v.Rows = append(v.Rows, row)
		v.Off100, v.On100 = row.OffP99, row.OnP9
		tab = append(tab, []string{fmt.Sprintf("%g", k), pct(row.Closed), row.Slow.cell(),
			withCI(row.OffP99, "p99_ms", row.OffP99.P99, ms), withCI(row.OnP9, "p99_ms", row.OnP9.P99, ms), withCI(row.OnP9, "ru_multiplier", row.OnP9.RUMultiplier, ru)})
	}
	d.table([]string{"K", "closed form 1 − 0.99^K", "queries ≥ 1 s, no hedging [exact 95% CI]", "p99 ms, no hedging", "p99 ms, per-leaf 50 ms", "RU ×, per-leaf"}, tab)
	d.say("q9/fan-closed", v)

	d.say("q9/gate-intro", v)
	brown := func(gate int) func(*simnet.Config) {
		return func(c *simnet.Config) {
			c.Episodes = append(c.Episodes, simnet.Episode{Target: "eastus", End: time.Hour, AddMs: 300, Factor: 1})
			noBreaker(c)
			c.Feed.GateCapacity = gate
		}
	}
	gate := func(name, scenario string, edit func(*simnet.Config), pol simnet.Policy, brownOut bool) (gateRow, error) {
		r, err := d.feedSim(scenario, edit, pol)
		if err != nil {
			return gateRow{}, err
		}
		fs := r.res.Policies[0].Merged.Feed
		g := gateRow{Name: name, Pages: fs.Pages, Hedged: fs.PagesHedged, Gated: fs.PagesGated, Peak: fs.PeakLegsInFlight,
			F: r.fig(pol.Name), HedgedShare: newShare(fs.PagesHedged, fs.Pages), BrownOut: brownOut}
		return g, nil
	}
	var err error
	if v.Open, err = gate("no bound", "feed-fan-out", brown(q9Meter), polStatic("static-50ms", 50), true); err != nil {
		return v, err
	}
	if v.Gate, err = gate(fmt.Sprintf("gate of %d legs", q9Gate), "feed-fan-out", brown(q9Gate), polStatic("static-50ms", 50), true); err != nil {
		return v, err
	}
	if v.Budget, err = gate(fmt.Sprintf("budget of %g%% of page races", 100*q9BudgetRatio), "feed-fan-out", brown(q9Meter),
		polStaticBudget(q9BudgetRatio, q9Gate, 0), true); err != nil {
		return v, err
	}
	if v.Calm, err = gate(fmt.Sprintf("gate of %d legs", q9Gate), "feed-gate-no-brownout", nil, polStatic("static-50ms", 50), false); err != nil {
		return v, err
	}
	var gtab [][]string
	for _, g := range []gateRow{v.Open, v.Gate, v.Budget, v.Calm} {
		shape := "brown-out"
		if !g.BrownOut {
			shape = "1% tail, no brown-out"
		}
		gtab = append(gtab, []string{shape, g.Name, fmt.Sprint(g.Pages), g.HedgedShare.cell(), fmt.Sprint(g.Gated), fmt.Sprint(g.Peak),
			withCI(g.F, "p99_ms", g.F.P99, ms), withCI(g.F, "ru_multiplier", g.F.RUMultiplier, ru)})
	}
	d.table([]string{"primary", "bound on hedges", "pages", "pages hedged [exact 95% CI]", "alternates refused by the gate", "peak legs in flight", "p99 ms", "RU ×"}, gtab)
	d.check(
		claim{"the gate holds the legs in flight at its capacity", func() error {
			if v.Gate.Peak > q9Gate || v.Calm.Peak > q9Gate {
				return failf("peak %d and %d legs with a gate of %d", v.Gate.Peak, v.Calm.Peak, q9Gate)
			}
			return nil
		}},
		claim{"without a brown-out the gate refuses nothing and keeps the ungated p99", func() error {
			if v.Calm.Gated != 0 || v.Calm.F.P99 != v.On100.P99 {
				return failf("%d refused, p99 %v against %v ungated", v.Calm.Gated, v.Calm.F.P99, v.On100.P99)
			}
			return nil
		}},
		claim{"unbounded, the brown-out has many more legs in flight than the gate allows", func() error {
			if v.Open.Peak <= 2*q9Gate {
				return failf("peak %d legs unbounded", v.Open.Peak)
			}
			return nil
		}},
	)
	d.say("q9/gate", v)
	return v, nil
}

// cfRow is one combination of the change-feed table.
type cfRow struct {
	Label             string
	Hedged, Dup, Skip share
	Resumes           int64
}

// cfView is section 3: which combinations delivered each change once, with
// and without an outage of the pinned region.
type cfView struct {
	Safe, Unsafe         []string
	OutSafe, OutUnsafe   []string
	Pinned, PinnedGlobal cfRow
	Offset               int64
	Leaves               int
	PerLeaf              float64
	OutageS              float64
	AffineHedged         int64
}

// q9ChangeFeed is study question 3.
func q9ChangeFeed(d *doc) (cfView, error) {
	var v cfView
	d.p("## 3. Change-feed continuations: duplicates and skips")
	d.say("q9/cf-intro", nil)
	scopeName := map[simnet.CursorScope]string{simnet.CursorGlobal: "global", simnet.CursorRegionLocal: "region_local"}
	o304Name := map[simnet.On304]string{simnet.On304Request: "request", simnet.On304ServerCurrent: "server_current"}
	pooled := func(sts []*simnet.Stats) cfRow {
		var f simnet.FeedStats
		for _, st := range sts {
			x := st.Feed
			f.Pages += x.Pages
			f.PagesHedged += x.PagesHedged
			f.Duplicates += x.Duplicates
			f.Skips += x.Skips
			f.Changes += x.Changes
			f.Resumes += x.Resumes
		}
		return cfRow{Hedged: newShare(f.PagesHedged, f.Pages), Dup: newShare(f.Duplicates, f.Changes), Skip: newShare(f.Skips, f.Changes), Resumes: f.Resumes}
	}
	var tab [][]string
	for _, sc := range []simnet.CursorScope{simnet.CursorGlobal, simnet.CursorRegionLocal} {
		for _, o := range []simnet.On304{simnet.On304Request, simnet.On304ServerCurrent} {
			for _, ca := range []hedging.ContinuationAffinity{hedging.Portable, hedging.RegionAffine} {
				sts, _, err := d.perRep("feed-change-feed-cursors", func(c *simnet.Config) {
					c.Feed.ChangeFeed.Scope, c.Feed.ChangeFeed.On304, c.Feed.ChangeFeed.Continuation = sc, o, ca
					c.Consistency = simnet.Eventual
				}, polStatic("static-50ms", 50))
				if err != nil {
					return v, err
				}
				row := pooled(sts)
				row.Label = fmt.Sprintf("`%s`, 304 → `%s`, %s", scopeName[sc], o304Name[o], ca)
				if row.Dup.K == 0 && row.Skip.K == 0 {
					v.Safe = append(v.Safe, row.Label)
				} else {
					v.Unsafe = append(v.Unsafe, row.Label)
				}
				if ca == hedging.RegionAffine {
					v.AffineHedged += row.Hedged.K
				}
				tab = append(tab, []string{scopeName[sc], o304Name[o], ca.String(), row.Hedged.cell(), row.Dup.perMillion(), row.Skip.perMillion()})
			}
		}
	}
	d.table([]string{"cursor scope", "304 hands out", "client treats cursor as", "pages hedged [exact 95% CI]", "duplicates / 10⁶ [exact 95% CI]", "skips / 10⁶ [exact 95% CI]"}, tab)
	d.say("q9/cf", v)

	// Through an outage of the pinned region (issue 26 row A1).
	var otab [][]string
	var cfg *simnet.Config
	for _, sc := range []simnet.CursorScope{simnet.CursorRegionLocal, simnet.CursorGlobal} {
		for _, ca := range []hedging.ContinuationAffinity{hedging.RegionAffine, hedging.Portable} {
			sts, c, err := d.perRep("feed-pinned-outage", func(c *simnet.Config) {
				c.Feed.ChangeFeed.Scope, c.Feed.ChangeFeed.Continuation = sc, ca
			}, polStatic("static-50ms", 50))
			if err != nil {
				return v, err
			}
			cfg = c
			row := pooled(sts)
			row.Label = fmt.Sprintf("`%s`, %s", scopeName[sc], ca)
			if row.Dup.K == 0 && row.Skip.K == 0 {
				v.OutSafe = append(v.OutSafe, row.Label)
			} else {
				v.OutUnsafe = append(v.OutUnsafe, row.Label)
			}
			if ca == hedging.RegionAffine && sc == simnet.CursorRegionLocal {
				v.Pinned = row
			}
			if ca == hedging.RegionAffine && sc == simnet.CursorGlobal {
				v.PinnedGlobal = row
			}
			otab = append(otab, []string{scopeName[sc], ca.String(), row.Hedged.cell(), fmt.Sprint(row.Resumes), row.Dup.perMillion(), row.Skip.perMillion()})
		}
	}
	v.Offset, v.Leaves = cfg.Feed.ChangeFeed.RegionOffset, cfg.Feed.ChangeFeed.Pollers
	v.OutageS = (cfg.Faults[0].End - cfg.Faults[0].Start).Seconds()
	if v.Pinned.Resumes > 0 {
		v.PerLeaf = float64(v.Pinned.Dup.K) / float64(v.Pinned.Resumes)
	}
	d.say("q9/outage-intro", v)
	d.table([]string{"cursor scope", "client treats cursor as", "pages hedged [exact 95% CI]", "chains resumed by failover", "duplicates / 10⁶ [exact 95% CI]", "skips / 10⁶ [exact 95% CI]"}, otab)
	d.check(
		claim{"a region-affine change feed hedges no page (§5.1 row 4a)", func() error {
			if v.AffineHedged != 0 || v.Pinned.Hedged.K != 0 {
				return failf("%d and %d region-affine pages hedged", v.AffineHedged, v.Pinned.Hedged.K)
			}
			return nil
		}},
		claim{"a pinned region-local leaf re-delivers region_offset changes per resume", func() error {
			if v.Pinned.Resumes == 0 || v.PerLeaf != float64(v.Offset) {
				return failf("%d resumes, %g duplicates each, offset %d", v.Pinned.Resumes, v.PerLeaf, v.Offset)
			}
			return nil
		}},
	)
	d.say("q9/outage", v)
	return v, nil
}

// setupDesign is one design of the setup study: its pooled failed share
// over the run and among the queries started during the fault, and the
// replications' setup share, mean setup and pages time and p99.
type setupDesign struct {
	Name                    string
	Failed, FailedInFault   share
	Share, SetupMs, PagesMs []float64
	P99                     []float64
	MeanP99, MeanShare      float64
	Stale                   []float64
}

// setupFinding is what section 4 found.
type setupFinding struct {
	Both, Pages, Nothing  setupDesign
	FastBoth, FastNothing setupDesign
	FaultS, RunS          float64
	Ratio                 float64
}

// q9Setup is study question 5 (section 4), with the calibration against
// .NET PR #5787 and azure-sdk-for-rust #4896, on two shapes of metadata
// outage: timeouts (feed-cold-metadata) and fast 500s
// (feed-metadata-fast-500).
func q9Setup(d *doc) (setupFinding, error) {
	var v setupFinding
	d.p("## 4. Setup before the first page")
	type design struct {
		name string
		edit func(*simnet.Config)
		pol  simnet.Policy
	}
	runDesign := func(scenario string, ds design) (setupDesign, error) {
		sts, cfg, err := d.perRep(scenario, ds.edit, ds.pol)
		if err != nil {
			return setupDesign{}, err
		}
		out := setupDesign{Name: ds.name}
		var failed, ops, fFailed, fOps int64
		end := cfg.Faults[0].End
		for _, st := range sts {
			q := st.Feed.Kinds[simnet.FeedQuery]
			failed += q.Errors
			ops += q.Ops
			for i, w := range st.Timeline {
				if time.Duration(i)*st.WindowWidth < end {
					fFailed += w.Failed
					fOps += w.Ops
				}
			}
			out.Share = append(out.Share, q.SetupShare())
			out.SetupMs = append(out.SetupMs, float64(q.SetupSum)/float64(time.Millisecond)/float64(q.Ops))
			out.PagesMs = append(out.PagesMs, float64(q.TotalSum-q.SetupSum)/float64(time.Millisecond)/float64(q.Ops))
			out.P99 = append(out.P99, q.QuantileMs(0.99))
			out.Stale = append(out.Stale, float64(st.Feed.StaleCacheHits))
		}
		out.Failed, out.FailedInFault = newShare(failed, ops), newShare(fFailed, fOps)
		out.MeanP99, _ = meanCI(out.P99)
		out.MeanShare, _ = meanCI(out.Share)
		v.FaultS, v.RunS = end.Seconds(), cfg.Duration.Seconds()
		return out, nil
	}
	row := func(x setupDesign) []string {
		return []string{x.Name, x.Failed.cell(), x.FailedInFault.cell(), ciCell(x.SetupMs, ms), ciCell(x.PagesMs, ms), ciCell(x.Share, pct), ciCell(x.P99, ms), ciCell(x.Stale, num)}
	}
	header := []string{"hedged", "queries failed [exact 95% CI]", "of those started in the fault", "mean setup ms", "mean pages ms", "setup share of latency", "p99 ms", "stale-cache hits"}
	both := design{"pages + metadata", nil, polStatic("static-50ms", 50)}
	pages := design{"pages only", func(c *simnet.Config) { c.Client.Phase = hedging.Phase2 &^ (1 << hedging.MetadataRead) }, polStatic("static-50ms", 50)}
	nothing := design{"nothing", func(c *simnet.Config) { c.Client.Phase = hedging.Phase1 }, polDisabled()}
	var err error
	if v.Both, err = runDesign("feed-cold-metadata", both); err != nil {
		return v, err
	}
	if v.Pages, err = runDesign("feed-cold-metadata", pages); err != nil {
		return v, err
	}
	if v.Nothing, err = runDesign("feed-cold-metadata", nothing); err != nil {
		return v, err
	}
	d.say("q9/setup-intro", v)
	d.table(header, [][]string{row(v.Both), row(v.Pages), row(v.Nothing)})
	if v.Both.MeanP99 > 0 {
		v.Ratio = v.Pages.MeanP99 / v.Both.MeanP99
	}
	d.say("q9/setup", v)
	if v.FastBoth, err = runDesign("feed-metadata-fast-500", both); err != nil {
		return v, err
	}
	if v.FastNothing, err = runDesign("feed-metadata-fast-500", design{"nothing", nil, polDisabled()}); err != nil {
		return v, err
	}
	d.say("q9/fast500-intro", v)
	d.table(header, [][]string{row(v.FastBoth), row(v.FastNothing)})
	d.check(claim{"fast 500s fail no query, hedged or not", func() error {
		if v.FastBoth.Failed.K+v.FastNothing.Failed.K != 0 {
			return failf("%d and %d queries failed", v.FastBoth.Failed.K, v.FastNothing.Failed.K)
		}
		return nil
	}}, claim{"without metadata hedging, timeouts fail queries only while the fault lasts", func() error {
		if v.Pages.FailedInFault.V <= v.Pages.Failed.V || v.Pages.Failed.K == 0 {
			return failf("failed %s overall, %s in the fault", pct(v.Pages.Failed.V), pct(v.Pages.FailedInFault.V))
		}
		return nil
	}})
	d.say("q9/fast500", v)
	d.say("q9/calibration", v)
	return v, nil
}

// metaRow is one metadata choice of section 5.
type metaRow struct {
	Name           string
	GraceMs        float64
	Stale, NoNewer share
	Hits, P50      []float64
	MeanP50        float64
}

// metaView is section 5's finding.
type metaView struct {
	Rows                []metaRow
	Fast, Short, Long   metaRow
	Longest             metaRow
	ShortCost, LongCost float64
	Remaining           float64 // share of the fastest's stale reads a long grace leaves
	Unavoidable         bool    // every stale read left at the long graces had no newer answer
}

// q9Graces are the LatestWithGrace graces of the metadata study (ms); the
// notebook names the third (short) and fourth (long).
var q9Graces = []float64{0, 50, 200, 600, 2000}

// q9Metadata is study question 4 (section 5): feed.Fastest against
// feed.LatestWithGrace on cold metadata reads.
func q9Metadata(d *doc) (metaView, error) {
	var v metaView
	d.p("## 5. Metadata: latest or fastest")
	d.say("q9/meta-intro", nil)
	var tab [][]string
	for _, g := range append([]float64{-1}, q9Graces...) {
		edit := func(c *simnet.Config) {
			if g >= 0 {
				c.Feed.Setup.Latest, c.Feed.Setup.Grace = true, time.Duration(g*float64(time.Millisecond))
			}
		}
		sts, _, err := d.perRep("feed-metadata-latest", edit, polStatic("static-50ms", 50))
		if err != nil {
			return v, err
		}
		r := metaRow{Name: "fastest", GraceMs: g}
		if g >= 0 {
			r.Name = fmt.Sprintf("latest(%g ms)", g)
		}
		var stale, noNewer, reads int64
		for _, st := range sts {
			f := st.Feed
			stale += f.StaleSetupReads
			noNewer += f.StaleSetupNoNewer
			reads += f.SetupReads
			r.Hits = append(r.Hits, float64(f.StaleCacheHits))
			r.P50 = append(r.P50, f.Kinds[simnet.FeedQuery].QuantileMs(0.5))
		}
		r.Stale, r.NoNewer = newShare(stale, reads), newShare(noNewer, reads)
		r.MeanP50, _ = meanCI(r.P50)
		v.Rows = append(v.Rows, r)
		tab = append(tab, []string{r.Name, r.Stale.cell(), r.NoNewer.cell(), ciCell(r.Hits, num), ciCell(r.P50, ms)})
	}
	d.table([]string{"metadata choice", "stale setup reads [exact 95% CI]", "of which no leg had a newer version", "stale-cache hits", "query p50 ms (cold: two setup reads)"}, tab)
	v.Fast, v.Short, v.Long, v.Longest = v.Rows[0], v.Rows[3], v.Rows[4], v.Rows[len(v.Rows)-1]
	v.ShortCost, v.LongCost = v.Short.MeanP50-v.Fast.MeanP50, v.Long.MeanP50-v.Fast.MeanP50
	if v.Fast.Stale.V > 0 {
		v.Remaining = v.Long.Stale.V / v.Fast.Stale.V
	}
	v.Unavoidable = v.Long.Stale.K == v.Long.NoNewer.K && v.Longest.Stale.K == v.Longest.NoNewer.K
	d.check(claim{"a longer grace than the gap leaves the same stale reads", func() error {
		if v.Longest.Stale.K != v.Long.Stale.K {
			return failf("latest(%g ms) %d stale, latest(%g ms) %d", v.Long.GraceMs, v.Long.Stale.K, v.Longest.GraceMs, v.Longest.Stale.K)
		}
		return nil
	}})
	d.say("q9/meta", v)
	return v, nil
}
