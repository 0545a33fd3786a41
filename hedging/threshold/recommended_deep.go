package threshold

// The deep quantile in choose: a slow mode past the band's top.

// deepBand returns the deeper quantile 1 - (1 - q)/10 (p99.9 for the p99:
// the quantile the scorecard scores beside the p99) and whether choose
// judges a threshold by its gain there too: where the unhedged quantile
// at least doubles between q and it — a slow mode the q-quantile does not
// see (a lognormal body whose p99 is 3 × its median grows by 1.4 × from
// its p99 to its p99.9, so doubling is no body's tail) — and the mode
// holds recTailSamples of the primary's weight wP past twice the
// q-quantile, so it is evidence, not one of the largest values seen.
// Judged only at q, such a mode is hedged at the backstop, 2 × the
// unhedged q-quantile, where a threshold half as high buys its p99.9 at
// the same hedge rate (population seed 1796189285, member 98: read p99.9
// 168 ms where static-50ms gives 137 at 0.65% hedged). A threshold is
// then judged by the largest of its gains, as at the band's top; its
// cost, HedgeCost × the hedge rate, is the same.
func deepBand(q, wP, qInf float64, unhedged func(float64) float64, survP *recHist) (qDeep float64, seen bool) {
	qDeep = 1 - (1-q)/10
	return qDeep, unhedged(qDeep) >= 2*qInf && wP*survAt(survP, 2*qInf) >= recTailSamples
}
