package threshold

// The price of a lower threshold where the unhedged quantile is no
// latency: a failure, the deadline, or unknown.

import "math"

// recPrice is what one point of hedge rate (1% of a key's operations
// hedged) must buy, as a fraction of the hedged quantile, for a lower
// threshold to replace the one choose found: 5%, the scorecard's own
// exchange rate — a quantile 10% lower for every 2 RU points more, a
// hedge of 1% of the operations costing about 1 RU point (a second
// attempt at the operation's charge). A key's hedges are taken at the
// price of its kind's, as if it were all of them: for a key of a small
// share of the kind's operations (reads failed over to another region)
// the price is overstated, and the lower threshold chosen less often.
const recPrice = 5.0

// noLatency reports whether the unhedged quantile raw (ms, quantileOf the
// primary's survival) is no latency to weigh a hedge's saving against:
// unknown (+Inf: most primaries past it were cancelled by hedges that
// won; choose stands 2 × Max in for it), a failure (the never-answered
// bin) or at the deadline deadline (ms; +Inf: none). choose's net gain,
// 1 - Q(T)/qInf - HedgeCost × h, then prices every millisecond of the
// hedged quantile at 1/qInf, a few seconds: two thresholds whose hedged
// quantiles differ by a fifth differ in gain by under 1%, and the cost
// term alone picks the threshold — the one hedging least.
func noLatency(raw, deadline float64) bool {
	return math.IsInf(raw, 1) || raw >= deadline || recBin(raw) >= recBins-1
}

// priced returns the threshold (ms) and its gain that replace choose's
// best, bestT with gain bestGain, where the unhedged quantile is no
// latency (noLatency): the lower candidate whose own hedged quantile
// quant(t) is lower than the best's by the most beyond recPrice × its
// extra hedge rate (rate(t) - rate(bestT), the primary's survival past
// each), if by more than MinGain (the smallest gain worth hedging for);
// otherwise bestT. gains holds choose's candidates' gains by bin (NaN: not
// a candidate, over the hedge-rate cap). Hedged quantiles are what the
// scorecard compares two policies by, at its price in RU. Population seed
// 1796229837, member 6: a primary whose slowest 2.35% answer past 183 ms
// (a Pareto tail), an alternate ~106 ms away; while hedges cancelled most
// of that tail (its quantile unknown) choose held 46 ms, where 19 ms
// hedges ~2.4 points more and gives a hedged read p99 ~18% lower (122 ms
// where 46 ms gives ~147, p99-dynamic-min20's threshold 20 ms). Not
// member 14: a key of ~13% of the reads whose p99 is a failure stays at
// 83-101 ms where static-50ms hedges at 50, its extra hedges priced as if
// it were every read (recPrice).
func (p *Recommended) priced(gains []float64, bestT, bestGain float64, quant, rate func(t float64) float64) (float64, float64) {
	bestAt, bestRate := quant(bestT), rate(bestT)
	pick, pickGain, top := bestT, bestGain, p.cfg.MinGain
	for i, g := range gains {
		t := recUpper(i)
		if t >= bestT {
			break
		}
		if math.IsNaN(g) || !(bestAt > 0) {
			continue
		}
		if v := 1 - quant(t)/bestAt - recPrice*(rate(t)-bestRate); v > top {
			pick, pickGain, top = t, g, v
		}
	}
	return pick, pickGain
}
