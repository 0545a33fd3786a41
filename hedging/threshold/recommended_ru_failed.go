package threshold

// A quantile among failures: where the primary's failures outnumber the
// share the quantile leaves, whatever a hedge does, no hedge lowers it.

import (
	"math"
	"time"
)

// amongFailures reports whether the Quantile of s's operations lies
// among their failures at every threshold a hedge to a could use: the
// estimated fraction of operations that fail (the error guard's
// estimate, failureRate: the primary's transient and final errors and
// deadline cut-offs, less what a hedge at the threshold rescues, plus
// what the alternate's own final errors end first) is at least 1 -
// Quantile for each candidate threshold (choose's: inside the deadline,
// under the hedge-rate caps). A failed operation ranks slower than every
// answer (the scorecard's reading, internal/scorecard amongFailures): the
// quantile, and the deeper ones of choose's band and of the deep rule,
// are then the time failures were declared, which no threshold moves, and
// a gain choose estimates there — a final error read as an answer at its
// time, a failure counted as the 2 × Max stand-in — is none. choose then
// keeps the backstop; the error guard still values each threshold's
// rescues in error points. Not on few failures: so many that a
// Poisson count with the mean the share would give (wP × (1 -
// Quantile)) reaches them with probability at most e^-recLostWins, the
// ledger's lost rule's level (three failures in 60 operations: 2.3%). Population seed 1796229837:
// members 178 (404 final answers on 3.5% of reads), 21 (412s, 2.7%), 66
// (429/3214s and the 63 ms deadline, 6.7%) and 89 (12% errors) hedged
// 2-13% of reads for a read p99 that lay among failures for every policy
// in every replication, so every RU point was spent for no scored gain.
func (p *Recommended) amongFailures(now time.Duration, s *recState, a *recAlt, wP float64) bool {
	failW := weight(&s.fails.transient) + weight(&s.fails.final) + weight(&s.fails.deadline)
	share := 1 - p.cfg.Quantile
	if !(wP >= p.cfg.MinSamples) || poissonAtLeast(math.Floor(failW), wP*share) > math.Exp(-recLostWins) {
		return false
	}
	var ft, ff [recBins]float64
	fail := s.incidence(&ft, &ff)
	if fail < share {
		return false
	}
	if p.unheard(now, s, a) {
		return true // no rescue on the prior's word (as the guard)
	}
	eA := s.altFailure(a, p.cfg.MinSamples, &ff)
	reach, latest, hcap := p.rescueSpan(now, s, a)
	for i := range recBins {
		t := recUpper(i)
		if t > latest {
			break
		}
		if survAt(&s.survP, t) > hcap {
			continue
		}
		if s.failureRate(a, t, fail, &ft, &ff, reach, eA) < share {
			return false
		}
	}
	return true
}

// poissonAtLeast returns P(X >= k) for a Poisson count X of mean mu (k a
// whole number >= 0, mu >= 0).
func poissonAtLeast(k, mu float64) float64 {
	term, below := math.Exp(-mu), 0.0
	for i := 0.0; i < k; i++ {
		below += term
		term *= mu / (i + 1)
	}
	return max(0, 1-below)
}
