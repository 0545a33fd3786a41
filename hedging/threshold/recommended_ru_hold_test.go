package threshold

import (
	"testing"
	"time"

	"hedgelab/hedging"
)

// A ledger of hedges sent at 50 ms that paid holds 50 ms, not a lower
// threshold choose moved to as it passed: the hedges below 50 ms are not
// in its evidence (population seed 1796229837, member 8: 0.1 ms held for
// a memory after hedges at ~280 ms paid). A chosen threshold above the
// ledger's is held as chosen.
func TestHoldIsNoLowerThanTheLedgersHedges(t *testing.T) {
	p, s, a := vetoFixture(t)
	s.warmed = true
	a.hedges, a.wins, a.expWins, a.gain, a.span = 0, 0, 0, 0, 0
	now := 101 * time.Second
	for i := range int(2 * p.cfg.MinSamples) {
		// Hedged at 50 ms; three in four win, the alternate answering
		// 10 ms after the hedge, the primary cancelled then.
		o := hedging.Observation{Event: hedging.OperationEnded, Primary: "A", Alternate: "B",
			Cause: hedging.SpawnThreshold, Threshold: th(50 * time.Millisecond), Latency: 90 * time.Millisecond, Won: true}
		o.Legs[hedging.Primary] = hedging.LegEnd{Region: "A", Outcome: hedging.LegAnswered, Elapsed: 90 * time.Millisecond}
		o.Legs[hedging.Alternate] = hedging.LegEnd{Region: "B", Outcome: hedging.LegCancelled, Elapsed: 40 * time.Millisecond}
		if i%4 != 3 {
			o.Latency, o.Winner = 60*time.Millisecond, hedging.Alternate
			o.Legs[hedging.Primary] = hedging.LegEnd{Region: "A", Outcome: hedging.LegCancelled, Elapsed: 60 * time.Millisecond}
			o.Legs[hedging.Alternate] = hedging.LegEnd{Region: "B", Outcome: hedging.LegAnswered, Elapsed: 10 * time.Millisecond}
		}
		p.Observe(now, o)
		now += time.Millisecond
	}
	if !(a.hedges >= p.cfg.MinSamples && a.wins >= a.expWins/2) {
		t.Fatalf("fixture: ledger %.1f hedges, %.1f wins, %.1f expected: not one that paid", a.hedges, a.wins, a.expWins)
	}
	backstop := 200 * time.Millisecond
	for _, c := range []struct {
		chosen, held time.Duration
	}{
		{time.Millisecond, 50 * time.Millisecond},      // below the ledger's hedges: raised to them
		{50 * time.Millisecond, 50 * time.Millisecond}, // the ledger's own
		{80 * time.Millisecond, 80 * time.Millisecond}, // above: a subset of them, as chosen
	} {
		a.t, a.heldT, a.heldUntil = c.chosen, 0, 0
		p.paid(now, s, a)
		if got := p.hold(now+time.Second, s, a, backstop); got != c.held {
			t.Errorf("chosen %v: hold = %v, want %v", c.chosen, got, c.held)
		}
	}
}
