package threshold

import "time"

// probeLearns reports whether a probe at threshold t can still show
// something of alternate a that the key's evidence does not already say:
// whether it is answered — its alternate answering before the primary,
// within the primary's time past t, its depth d — often enough to count.
// Where no leg to a has answered (less than one answer's weight, as
// failing counts it), its cancelled legs say only "slower than this": k
// of them ran at least d without an answer, and the chance that a leg
// answers within d is then at most about 1/(k + 1) (none of k + 1 legs
// alike answered). The chance a probe is answered is that bound averaged
// over the probe's depth — the primary's survival past t, by the last
// estimate — and below minWin (the ledger's reach, 2/40: the probe is in
// the ledger, and a hedge answered less often than that cannot make the
// ledger fire) the probe would add one more "slower than this", so it is
// not sent. Probes go on where they reach further than the evidence: a
// floor probe when every primary slows together (its depth grows with
// the slow-down), a probe once the cancelled legs age (MaxMemory), and
// wherever the alternate has answered. The cold key's first probe is not
// asked (see Threshold). A probe budget that repeated the same "slower
// than this" spent ~8% of a far alternate's operations (population seed
// 1796189285, member 13: a primary ~176 ms away answering within ~3 ms
// of its 90th percentile, its alternate 228 ms away: 275 probes in three
// replications, none answered).
func (p *Recommended) probeLearns(s *recState, a *recAlt, t time.Duration) bool {
	if a.heard() >= 1 {
		return true
	}
	tm := msOf(t)
	st := survAt(&s.survP, tm)
	if !(st > 0) {
		return true // no primary outlasts t by the estimate: nothing to weigh
	}
	// Over the probe's depth d, on the alternate's bins: the chance the
	// primary answers at t + d (its survival, interpolated within its
	// bins and ending at the slowest primary answered, s.maxMs, a bound
	// that only grows), over one plus the cancelled legs that ran at
	// least d (those of d's own bin counted half).
	learn, ran, prev := 0.0, 0.0, 1.0
	var past [recBins]float64 // past[j]: cancelled legs beyond bin j
	for j := recBins - 2; j >= 0; j-- {
		past[j] = past[j+1] + float64(a.aC[j+1])
	}
	for j := range recBins {
		cur := min(survAt(&s.survP, tm+recUpper(j))/st, 1)
		if tm+recUpper(j) >= s.maxMs {
			cur = 0 // past the slowest primary answered: the 5% bins' spread is not the primary's
		}
		if mass := prev - cur; mass > 0 {
			ran = past[j] + float64(a.aC[j])/2
			learn += mass / (ran + 1)
		}
		prev = cur
	}
	learn += prev // a primary past the last bin: the probe reaches any depth
	return learn >= p.minWin()
}
