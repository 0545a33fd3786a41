package threshold

import (
	"testing"
	"time"
)

// vetoFixture returns a policy, a key whose primary answers at 1-100 ms
// (uniform over the bins) and its alternate with a ledger of 2 ×
// MinSamples hedges sent 0.1 ms apart (4 ms of evidence, as the burst of
// rate-surge-10x-queueing), none won.
func vetoFixture(t *testing.T) (*Recommended, *recState, *recAlt) {
	t.Helper()
	p, err := NewRecommended(RecommendedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s := p.state(0, recKey{primary: "A"})
	for ms := 1.0; ms <= 100; ms++ {
		s.pU[recBin(ms)] += 10
	}
	km(&s.pU, &s.pC, &s.survP)
	s.rate = 10000
	a := s.alt(0, "B")
	at := 100 * time.Second
	g := 1 - 1/(2*p.cfg.MinSamples)
	for range int(2 * p.cfg.MinSamples) {
		a.noteHedge(at, g)
		a.hedges, a.expWins = g*a.hedges+1, g*a.expWins+0.5
		at += 100 * time.Microsecond
	}
	return p, s, a
}

// A veto lasts as long as its evidence took, within [Refresh, memory]: 40
// hedges in 4 ms stop the chosen threshold for one Refresh, not for the
// 5 s memory (issue 25, rate-surge-10x-queueing).
func TestVetoLastsAsLongAsItsEvidence(t *testing.T) {
	p, s, a := vetoFixture(t)
	if a.span <= 0 || a.span > 5*time.Millisecond {
		t.Fatalf("evidence span %v, want the ~4 ms the hedges took", a.span)
	}
	now := 101 * time.Second
	p.veto(now, s, a, 0.1)
	if !a.vetoed(now) {
		t.Fatal("a veto at a 10% hedge rate does not stop the chosen threshold")
	}
	if got := a.vetoUntil - now; got != p.cfg.Refresh {
		t.Errorf("veto lasts %v, want one Refresh (%v) for 4 ms of evidence", got, p.cfg.Refresh)
	}
	if a.hedges != 0 || a.span != 0 {
		t.Errorf("ledger after a veto: %v hedges, span %v, want empty", a.hedges, a.span)
	}
	// Evidence gathered over 60 s is vetoed for at most one memory.
	a.span = time.Minute
	p.veto(now, s, a, 0.1)
	if got, want := a.vetoUntil-now, p.memory(s); got != want {
		t.Errorf("veto on a minute of evidence lasts %v, want the memory %v", got, want)
	}
}

// A ledger that lost while the alternate was sent more than half the
// key's reads caps the hedge rate at half for one memory instead of
// stopping the chosen threshold; a loss under the cap stops it.
func TestVetoAboveTheShareCapsTheRate(t *testing.T) {
	p, s, a := vetoFixture(t)
	now := 101 * time.Second
	p.veto(now, s, a, 1)
	if a.vetoed(now) {
		t.Fatal("a loss at a 100% hedge rate stopped the chosen threshold, want a rate cap")
	}
	if got := a.rateCap(now); got != recShare {
		t.Errorf("rate cap %v, want %v", got, recShare)
	}
	if got := a.rateCap(now + p.memory(s)); got != 1 {
		t.Errorf("rate cap after one memory %v, want none (1)", got)
	}
	p.veto(now+time.Second, s, a, 0.4)
	if !a.vetoed(now + time.Second) {
		t.Error("a loss under the cap did not stop the chosen threshold")
	}
}

// Where no threshold pays within a memory of hedges that paid, the
// threshold they paid at stands in for the backstop (which follows a
// growing queue), raised to the veto's rate cap; after the memory, the
// backstop.
func TestHoldKeepsThePayingThreshold(t *testing.T) {
	p, s, a := vetoFixture(t)
	now := 101 * time.Second
	a.t, a.wins = 20*time.Millisecond, a.expWins // won as expected
	p.paid(now, s, a)
	backstop := 200 * time.Millisecond
	if got := p.hold(now+time.Second, s, a, backstop); got != 20*time.Millisecond {
		t.Errorf("hold = %v, want the paying 20ms", got)
	}
	if got := p.hold(now+time.Second, s, a, 10*time.Millisecond); got != 10*time.Millisecond {
		t.Errorf("hold above the backstop = %v, want the backstop 10ms", got)
	}
	if got := p.hold(now+p.memory(s), s, a, backstop); got != backstop {
		t.Errorf("hold after one memory = %v, want the backstop", got)
	}
	// Under the rate cap, no lower than the primary's median (half hedged).
	a.vetoCap, a.vetoUntil = recShare, now+p.memory(s)
	med := dur(quantileOf(&s.survP, 0.5))
	if got := p.hold(now+time.Second, s, a, backstop); got != med || med <= 20*time.Millisecond {
		t.Errorf("hold under the cap = %v, want the median %v", got, med)
	}
	// A ledger that won less than half what was expected is not held.
	p2, s2, a2 := vetoFixture(t)
	a2.t = 20 * time.Millisecond
	p2.paid(now, s2, a2)
	if got := p2.hold(now+time.Second, s2, a2, backstop); got != backstop {
		t.Errorf("hold after hedges that did not pay = %v, want the backstop", got)
	}
}
