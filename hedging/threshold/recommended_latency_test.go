package threshold

import (
	"math"
	"testing"
	"time"
)

// unknownTail returns a key whose primary evidence is population seed
// 1796229837 member 6's under hedging at ~20 ms, and its alternate: 95.3%
// of primaries in a lognormal body (median 4.41 ms, p99 10.7), 2.35% in
// a mode from 24.3 ms (a Pareto of shape 3.38), and 2.35% — a mode past
// 183 ms — all cancelled at ~126 ms by hedges that won, so the primary's
// p99 is unknown (past its last answer); the alternate answered every
// leg 106 ms after it was sent.
func unknownTail(p *Recommended) (*recState, *recAlt) {
	now := time.Duration(0)
	s := p.state(now, recKey{"A", 1})
	s.warmed, s.first = true, 0
	const n = 10000
	for i := range n {
		u := (float64(i) + 0.5) / n
		switch {
		case u < 0.953:
			s.pU[recBin(4.41*math.Exp(0.381*math.Sqrt2*math.Erfinv(2*u/0.953-1)))]++
		case u < 0.9765 && 24.3/math.Pow(1-(u-0.953)/0.0235, 1/3.38) < 126:
			s.pU[recBin(24.3/math.Pow(1-(u-0.953)/0.0235, 1/3.38))]++
		default:
			s.pC[recBin(126)]++
		}
	}
	a := s.alt(now, "B")
	a.aU[recBin(106)] = 200
	s.region.altFloor(now, "B").add(now, p.cfg.MaxMemory/2, 106)
	s.region.prim.add(now, p.cfg.MaxMemory/2, 1.3)
	return s, a
}

// Where the primary's p99 is unknown, choose weighed every threshold's
// saving against 2 × Max (8 s), so that a fifth of the hedged p99 was
// worth ~0.3% of gain and the cost term alone chose the threshold: ~46
// ms (hedged read p99 ~152 ms) where ~20 ms hedges ~2.4 points more for
// a p99 ~18% lower (member 6; p99-dynamic-min20 at 20 ms). Priced at the
// scorecard's exchange rate (priced, recPrice), the lower one is chosen.
func TestUnknownTailIsPricedByTheHedgedQuantile(t *testing.T) {
	p, err := NewRecommended(RecommendedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s, a := unknownTail(p)
	now := time.Duration(0)
	wP := km(&s.pU, &s.pC, &s.survP)
	if q := quantileOf(&s.survP, p.cfg.Quantile); !math.IsInf(q, 1) {
		t.Fatalf("the primary's p99 is %.1f ms, want unknown (+Inf) for this case", q)
	}
	wA, shift := p.estimate(now, s, a)
	if !p.choose(now, s, a, wP, wA, shift) {
		t.Fatalf("no threshold pays (backstop %v)", a.t)
	}
	if got := msOf(a.t); got > 30 {
		t.Errorf("threshold %.1f ms, want at most 30 (near the 24 ms mode's start, where the slow mode's hedges answer at ~126 ms)", got)
	}
}

// noLatency's table: the unhedged quantile is no latency when unknown,
// a failure (the never-answered bin) or at the deadline.
func TestNoLatency(t *testing.T) {
	for _, c := range []struct {
		raw, deadline float64
		want          bool
	}{
		{math.Inf(1), math.Inf(1), true},
		{recUpper(recBins - 1), math.Inf(1), true},
		{500, 500, true},
		{600, 500, true},
		{120, math.Inf(1), false},
		{120, 500, false},
	} {
		if got := noLatency(c.raw, c.deadline); got != c.want {
			t.Errorf("noLatency(%v, %v) = %v, want %v", c.raw, c.deadline, got, c.want)
		}
	}
}
