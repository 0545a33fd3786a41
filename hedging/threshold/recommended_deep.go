package threshold

// The deep quantile in choose: a slow mode past the band's top.

import "math"

// deepBand returns the deeper quantile 1 - (1 - q)/10 (p99.9 for the p99:
// the quantile the scorecard scores beside the p99) and whether choose
// may judge a threshold there: where the unhedged quantile at least
// doubles between q and it — a slow mode the q-quantile does not see (a
// lognormal body whose p99 is 3 × its median grows by 1.4 × from its p99
// to its p99.9, so doubling is no body's tail) — and the mode holds
// recTailSamples of the primary's weight wP past twice the q-quantile, so
// it is evidence, not one of the largest values seen. Where no threshold
// pays at q (nor at the band's top), such a mode was left to the
// backstop, 2 × the unhedged q-quantile, where a threshold half as high
// buys its p99.9 at the same hedge rate (population seed 1796189285,
// member 98: read p99.9 168 ms where static-50ms gives 137 at 0.65%
// hedged); choose then picks by the gain at the deep quantile, net of
// the same HedgeCost × the hedge rate, among thresholds hedging at most
// 1 - q of the operations (the share past the q-quantile, where the mode
// is: hedging the body for it sent bursts of hedges that all won through
// every GC pause of gc-pause-hot-partition, 2 breaker trips per
// instance-hour against its bar of 1). Only then, and not while hold
// stands in with a threshold whose hedges paid (the ledger's evidence,
// not a model's of a tail few observations reach): judged by the larger
// of the two gains wherever the mode is seen, a threshold cheap for the
// p99.9 displaced one that paid at the p99, and judged so in place of a
// held threshold it chose 130-215 ms where the hold kept ~85 (population
// seed 1796191658, member 47: read p99 364 ms where the hold gives 315).
func deepBand(q, wP, qInf float64, unhedged func(float64) float64, survP *recHist) (qDeep float64, seen bool) {
	qDeep = 1 - (1-q)/10
	return qDeep, unhedged(qDeep) >= 2*qInf && wP*survAt(survP, 2*qInf) >= recTailSamples
}

// deepScan is choose's search by the deep quantile's gain: the gain of
// each candidate bin (NaN: not a candidate), and the best net of cost.
type deepScan struct {
	gains                 []float64
	best, bestT, bestGain float64
}

// add records candidate bin i at threshold t (ms) with its deep gain and
// its cost (HedgeCost × its hedge rate).
func (d *deepScan) add(i int, t, gain, cost float64) {
	for len(d.gains) <= i {
		d.gains = append(d.gains, math.NaN())
	}
	d.gains[i] = gain
	if g := gain - cost; g > d.best {
		d.best, d.bestT, d.bestGain = g, t, gain
	}
}
