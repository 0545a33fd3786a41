package study

import (
	"math"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
	"hedgelab/internal/report"
	"hedgelab/simnet"
)

// The hedge-unit study (spec §17 Q9) compares what a feed operation
// hedges — each page, the whole operation, nothing — on one scenario: its
// own runs give its configured unit (and "none" from a policy that does
// not hedge), HedgeUnitInputs the rest.

// hedges reports whether policy p hedges (its strategy selects hedging).
func hedges(p simnet.Policy) bool {
	s, err := p.New()
	if err != nil {
		return true // Run reports the error
	}
	_, ok := s.HedgingStrategy()
	return ok
}

// otherUnit returns the hedge unit cfg does not use.
func otherUnit(cfg *simnet.Config) feed.Unit {
	if cfg.Feed.HedgeUnit == feed.UnitOperation {
		return feed.UnitPage
	}
	return feed.UnitOperation
}

// noHedging is the policy of the "none" point when a scenario has none.
var noHedging = simnet.Policy{Name: "disabled", New: func() (hedging.AvailabilityStrategy, error) { return hedging.Disabled, nil }}

// HedgeUnitInputs returns the simulations the hedge-unit study of cfg
// needs beyond cfg's own (nil when cfg has no feed operations, see
// simnet.Config.HasFeedOperations): the policies that hedge under the
// other Feed.HedgeUnit, and, when no policy of pols leaves hedging off,
// one that does. Each has reps replications on cfg's seeds.
func HedgeUnitInputs(cfg *simnet.Config, pols []simnet.Policy, reps int) []Input {
	if !cfg.HasFeedOperations() {
		return nil
	}
	var hedging []simnet.Policy
	for _, p := range pols {
		if hedges(p) {
			hedging = append(hedging, p)
		}
	}
	var out []Input
	if len(hedging) > 0 {
		other := *cfg
		f := *cfg.Feed
		f.HedgeUnit = otherUnit(cfg)
		other.Feed = &f
		out = append(out, Input{Config: &other, Policies: hedging, Replications: reps, Label: "hedge unit " + f.HedgeUnit.String()})
	}
	if len(hedging) == len(pols) {
		out = append(out, Input{Config: cfg, Policies: []simnet.Policy{noHedging}, Replications: reps, Label: "no hedging"})
	}
	return out
}

// HedgeUnits returns the hedge-unit chart's points of cfg: for each policy
// of pols that hedges, its feed operations under cfg's unit (from res,
// cfg's own result) and the other (from extra, the results of
// HedgeUnitInputs in order), and one "none" point (the first policy that
// does not hedge, else the extra run without hedging). Nil without feed
// operations.
func HedgeUnits(cfg *simnet.Config, pols []simnet.Policy, res *Result, extra []*Result) []report.HedgeUnit {
	if !cfg.HasFeedOperations() {
		return nil
	}
	hedging := make([]bool, len(pols))
	anyHedging := false
	for i, p := range pols {
		hedging[i] = hedges(p)
		anyHedging = anyHedging || hedging[i]
	}
	other := map[string]PolicyResult{}
	if anyHedging && len(extra) > 0 {
		for _, pr := range extra[0].Policies {
			other[pr.Name] = pr
		}
		extra = extra[1:]
	}
	unit, otherName := cfg.Feed.HedgeUnit.String(), otherUnit(cfg).String()
	var none []report.HedgeUnit
	var out []report.HedgeUnit
	for i, p := range pols {
		pr := res.Policies[i]
		if !hedging[i] {
			if none == nil {
				none = []report.HedgeUnit{hedgeUnit(pr, "none")}
			}
			continue
		}
		out = append(out, hedgeUnit(pr, unit))
		if o, ok := other[p.Name]; ok {
			out = append(out, hedgeUnit(o, otherName))
		}
	}
	if none == nil && len(extra) > 0 && len(extra[0].Policies) > 0 {
		none = []report.HedgeUnit{hedgeUnit(extra[0].Policies[0], "none")}
	}
	return append(none, out...)
}

// feedOpsP99 is the p99 (ms) of the feed operations of s: its queries,
// else its ReadMany calls; NaN without either.
func feedOpsP99(s *simnet.Stats) (float64, int64) {
	if s.Feed == nil {
		return math.NaN(), 0
	}
	for _, k := range []int{simnet.FeedQuery, simnet.FeedReadMany} {
		if q := &s.Feed.Kinds[k]; q.Ops > 0 {
			return q.QuantileMs(0.99), q.Ops
		}
	}
	return math.NaN(), 0
}

// hedgeUnit is one point of the chart from a policy's result: the feed
// operations' p99 and the operations' RU multiplier, each with its
// interval across replications when there are several.
func hedgeUnit(pr PolicyResult, unit string) report.HedgeUnit {
	f := Figures(pr)
	p99, ops := feedOpsP99(pr.Merged)
	u := report.HedgeUnit{Policy: pr.Name, Unit: unit, P99: p99, RU: f.RUMultiplier, Ops: ops,
		P99CI: [2]float64{math.NaN(), math.NaN()}, RUCI: [2]float64{math.NaN(), math.NaN()}}
	if ci, ok := f.CI95["ru_multiplier"]; ok {
		u.RUCI = ci
	}
	if len(pr.PerRepFeed) > 1 {
		var xs []float64
		for _, v := range pr.PerRepFeed {
			xs = append(xs, v[2])
		}
		ci := CI95(xs)
		u.P99, u.P99CI = (ci[0]+ci[1])/2, [2]float64{max(ci[0], 0), ci[1]}
	}
	return u
}
