package study

import (
	"fmt"
	"slices"

	"hedgelab/internal/report"
)

// Dominance margins of issue 17's scorecard: a p99 at least P99Gain lower
// (a fraction), an RU multiplier at least RUPoints cheaper (a difference of
// multipliers), an error rate more than ErrPoints above the best (a
// fraction of operations).
const (
	DominanceP99Gain   = 0.10
	DominanceRUPoints  = 0.02
	DominanceErrPoints = 0.01
)

// p99CI is f's 95% interval of the p99 (ms), [P99, P99] when f has none
// (one replication).
func p99CI(f report.Figures) [2]float64 {
	if ci, ok := f.CI95["p99_ms"]; ok {
		return ci
	}
	return [2]float64{f.P99, f.P99}
}

// Dominates reports whether policy a dominates policy b on one scenario
// (issue 17): a's p99 is at least DominanceP99Gain lower than b's with the
// 95% intervals apart, for no more RU; or a's RU multiplier is at least
// DominanceRUPoints lower at a p99 no worse than b's (lower, or intervals
// overlapping). why says which, with the figures (ms, RU ×).
func Dominates(a, b report.Figures) (why string, ok bool) {
	ca, cb := p99CI(a), p99CI(b)
	apart := ca[1] < cb[0]
	noWorse := a.P99 <= b.P99 || ca[0] <= cb[1]
	switch {
	case a.P99 <= (1-DominanceP99Gain)*b.P99 && apart && a.RUMultiplier <= b.RUMultiplier:
		return fmt.Sprintf("p99 %.1f vs %.1f ms at RU %.3f vs %.3f", a.P99, b.P99, a.RUMultiplier, b.RUMultiplier), true
	case a.RUMultiplier <= b.RUMultiplier-DominanceRUPoints && noWorse:
		return fmt.Sprintf("RU %.3f vs %.3f at p99 %.1f vs %.1f ms", a.RUMultiplier, b.RUMultiplier, a.P99, b.P99), true
	}
	return "", false
}

// Loss is one reason a policy loses a scenario: By dominates it (Why says
// how), or By is "" and its error rate is more than DominanceErrPoints
// above the best (Why gives both).
type Loss struct {
	By, Why string
}

// Losses returns why policy loses the scenario whose policies' figures are
// figs (in their order; policy among them): one Loss per policy that
// dominates it, after an error-rate loss if any. Empty when it loses
// nothing; an error names a policy figs lacks.
func Losses(figs []report.Figures, policy string) ([]Loss, error) {
	i := slices.IndexFunc(figs, func(f report.Figures) bool { return f.Policy == policy })
	if i < 0 {
		return nil, fmt.Errorf("study: no policy %q among the scenario's", policy)
	}
	me := figs[i]
	var out []Loss
	best := slices.MinFunc(figs, func(a, b report.Figures) int { return cmpFloat(a.ErrorRate, b.ErrorRate) })
	if me.ErrorRate > best.ErrorRate+DominanceErrPoints {
		out = append(out, Loss{Why: fmt.Sprintf("errors %.2f%% vs best %.2f%% (%s)", 100*me.ErrorRate, 100*best.ErrorRate, best.Policy)})
	}
	for _, o := range figs {
		if o.Policy == policy {
			continue
		}
		if why, ok := Dominates(o, me); ok {
			out = append(out, Loss{By: o.Policy, Why: why})
		}
	}
	return out, nil
}

// ParetoFront returns the policies of figs that no other policy beats on
// both p99 and RU multiplier (lower or equal on both, lower on one), in
// figs' order: the trade-offs available on one scenario, intervals aside.
func ParetoFront(figs []report.Figures) []report.Figures {
	var out []report.Figures
	for _, f := range figs {
		beaten := slices.ContainsFunc(figs, func(o report.Figures) bool {
			return o.P99 <= f.P99 && o.RUMultiplier <= f.RUMultiplier && (o.P99 < f.P99 || o.RUMultiplier < f.RUMultiplier)
		})
		if !beaten {
			out = append(out, f)
		}
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
