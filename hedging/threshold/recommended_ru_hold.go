package threshold

// The held threshold is one the ledger's hedges proved: RU held on
// evidence of other hedges.

import "time"

// provenT returns the threshold paid holds after a's ledger passed: the
// chosen threshold, but no lower than the mean threshold the ledger's
// hedges were sent at (sentMs). The ledger's evidence is of hedges sent
// there: a threshold chosen below it hedges operations no hedge in the
// ledger was sent for, and holding it for a memory holds a hedge rate
// nothing has shown to pay. A threshold above it hedges a subset of the
// operations the ledger's hedges were sent for and is held as chosen.
// Population seed 1796229837, member 8: a ledger of hedges sent at
// ~280 ms (7% of reads, a fifth of them won) passed just as choose moved
// to 0.1 ms (every read, by an estimate of an alternate as narrow as
// the primary's body); that 0.1 ms was held for a memory, and, raised
// to the median under the veto's rate cap, hedged 30-60% of reads for
// ~10 s, 2725 hedges of which 8% won: +14 RU points over disabled for
// no scored quantile 5% better.
func (p *Recommended) provenT(a *recAlt) time.Duration {
	if a.hedges <= 0 {
		return a.t
	}
	return max(a.t, dur(a.sentMs))
}
