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

// priced's table: a lower threshold replaces the best where its hedged
// quantile is lower by more than recPrice × its extra hedge rate × the
// key's share w (and by more than MinGain). Here quant(t) = t + 10 ms
// and the hedge rate falls by 0.003 per ms (0.35 - 0.003 t): at ~42 ms
// (the hedge-rate cap's edge) the quantile is ~49% below the best's (~92
// ms) for ~15 points more.
func TestPricedByTheKeysShare(t *testing.T) {
	p, err := NewRecommended(RecommendedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	quant := func(t float64) float64 { return t + 10 }
	rate := func(t float64) float64 { return max(0, 0.35-0.003*t) }
	var gains []float64
	for i := range recBins {
		if recUpper(i) > 100 {
			break
		}
		gains = append(gains, 0.5)
		if recUpper(i) < 40 {
			gains[i] = math.NaN() // over the hedge-rate cap
		}
	}
	bestT := recUpper(recBin(90))
	for _, c := range []struct {
		w       float64
		lowerTo float64 // 0: bestT stands
	}{
		{1, 0},     // ~15 points × 5 = 75% > ~49%: too dear
		{0.5, 40},  // 37%: ~12% beyond it
		{0.13, 40}, // a key of 13% of the reads: worth it, down to the cap
		{0.01, 40},
	} {
		got, _ := p.priced(gains, bestT, 0.5, c.w, quant, rate)
		switch {
		case c.lowerTo == 0 && got != bestT:
			t.Errorf("w %v: threshold %.1f ms, want the best's %.1f", c.w, got, bestT)
		case c.lowerTo > 0 && !(got < bestT && got <= c.lowerTo*1.06):
			t.Errorf("w %v: threshold %.1f ms, want the cap's edge, about %v", c.w, got, c.lowerTo)
		}
	}
}

// share: a key's rate over its kind's, an idle key at no more than its
// observations since its last decision over the time since; other kinds
// are not counted.
func TestShare(t *testing.T) {
	p, err := NewRecommended(RecommendedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	now := 10 * time.Second
	main := p.state(now, recKey{"A", 1})
	minor := p.state(now, recKey{"C", 1})
	other := p.state(now, recKey{"A", 2})
	idle := p.state(0, recKey{"D", 1})
	main.rate, minor.rate, other.rate, idle.rate = 900, 100, 5000, 1000
	main.decayed, minor.decayed, other.decayed = now, now, now
	idle.since = 9 // 10 observations over the 10 s since it decided: 1/s
	if got, want := p.share(now, minor), 100.0/1001; math.Abs(got-want) > 1e-9 {
		t.Errorf("minor key's share %v, want %v", got, want)
	}
	if got, want := p.share(now, main), 900.0/1001; math.Abs(got-want) > 1e-9 {
		t.Errorf("main key's share %v, want %v", got, want)
	}
	if got := p.share(now, other); got != 1 {
		t.Errorf("the only key of its kind has share %v, want 1", got)
	}
}
