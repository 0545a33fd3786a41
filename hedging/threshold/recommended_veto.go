package threshold

// The veto: what check's verdict on the hedge ledger does to the chosen
// threshold, and for how long.

import "time"

// recShare is the largest share of a key's operations a vetoed alternate
// is sent while its veto lasts: one half, as many as the primary keeps. A
// ledger that lost at a higher hedge rate says the alternate did not
// answer that load in time (an alternate of the primary's capacity sent
// every read of a primary at its limit queues as the primary did,
// rate-surge-10x-queueing); it says nothing of half of it, so hedging goes
// on under the cap instead of stopping.
const recShare = 0.5

// rateCap returns the hedge rate the veto allows choose at now: 1 when no
// veto stands, recShare under a load veto.
func (a *recAlt) rateCap(now time.Duration) float64 {
	if now < a.vetoUntil && a.vetoCap > 0 {
		return a.vetoCap
	}
	return 1
}

// vetoed reports whether a veto stops the chosen threshold at now: every
// hedge to a but the probes (decide clears a.hedge; no backstop stands in).
func (a *recAlt) vetoed(now time.Duration) bool {
	return now < a.vetoUntil && a.vetoCap == 0
}

// noteHedge adds the time since the ledger's last hedge to its evidence
// span, decayed by g as the ledger's counts are: the span is the time the
// remembered hedges took to arrive.
func (a *recAlt) noteHedge(now time.Duration, g float64) {
	gap := time.Duration(0)
	if a.hedges > 0 {
		gap = now - a.lastHedge
	}
	a.span = time.Duration(g*float64(a.span)) + max(gap, 0)
	a.lastHedge = now
}

// veto applies check's verdict against the chosen threshold, which hedges
// a fraction h of the key's operations, and empties the ledger. Above
// recShare the veto caps the hedge rate at recShare for one memory of the
// primary (the load the alternate answered is not known, only one it did
// not). At or below it the chosen threshold stops for as long as the
// ledger's evidence took to gather, within [Refresh, memory]: 40 hedges
// sent in 4 ms stop hedging for one Refresh, not for a memory.
func (p *Recommended) veto(now time.Duration, s *recState, a *recAlt, h float64) {
	if h > recShare && a.rateCap(now) > recShare {
		a.vetoCap, a.vetoUntil = recShare, now+p.memory(s)
	} else {
		a.vetoCap, a.vetoUntil = 0, now+min(max(a.span, p.cfg.Refresh), p.memory(s))
	}
	a.hedges, a.wins, a.expWins, a.gain, a.span = 0, 0, 0, 0, 0
}

// paid records, after check passed on a ledger of at least MinSamples
// hedges that won at least half what the estimate expected, the chosen
// threshold as the one to hold for one memory of the primary, no lower
// than the ledger's hedges were sent at (provenT).
func (p *Recommended) paid(now time.Duration, s *recState, a *recAlt) {
	if a.hedges >= p.cfg.MinSamples && a.wins >= a.expWins/2 {
		a.heldT, a.heldUntil = p.provenT(a), now+p.memory(s)
	}
}

// hold returns the threshold used where choose finds none that pays
// (backstop): within a memory of hedges that paid, the threshold they paid
// at, raised to where the veto's rate cap allows, if below the backstop.
// A backstop follows the primary's quantile, so under a queue that grows
// it hedges nothing while the alternate's evidence still holds the queued
// answers a burst of hedges met (rate-surge-10x-queueing).
func (p *Recommended) hold(now time.Duration, s *recState, a *recAlt, backstop time.Duration) time.Duration {
	if now >= a.heldUntil || a.heldT <= 0 {
		return backstop
	}
	t := a.heldT
	if c := a.rateCap(now); c < 1 {
		t = max(t, dur(quantileOf(&s.survP, 1-c)))
	}
	return min(t, backstop)
}
