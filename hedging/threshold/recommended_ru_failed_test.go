package threshold

import (
	"testing"
	"time"
)

// Where a share of the primary's operations end in a final error faster
// than any alternate answers (a 404 at 1 ms, the alternate at 5 ms), no
// hedge rescues them, and where they are at least the 1% the p99 leaves,
// the p99 lies among failures at every threshold: choose keeps the
// backstop instead of a threshold whose gain is on answers the quantile
// does not reach (population seed 1796229837, members 66, 8 and 151).
// Below the share the p99 is an answer, and a threshold pays as before;
// a share above it on too few operations to tell (1 failure in 21)
// does not stop it either.
func TestChooseKeepsTheBackstopWhereTheQuantileIsAmongFailures(t *testing.T) {
	for _, c := range []struct {
		name       string
		per, fails float64 // answers per ms bin of 1-100 ms, final errors at 1 ms
		pays       bool
	}{
		{"3% fail", 10, 30, false},
		{"0.3% fail", 10, 3, true},
		{"1 of 21 fails, too few to tell", 0.2, 1, true},
	} {
		p, err := NewRecommended(RecommendedConfig{})
		if err != nil {
			t.Fatal(err)
		}
		now := 100 * time.Second
		s := p.state(now, recKey{primary: "A"})
		for ms := 1.0; ms <= 100; ms++ {
			s.pU[recBin(ms)] += float32(c.per)
		}
		// A final error is in pU at its time (Observe) and in the
		// primary's failures.
		s.pU[recBin(1)] += float32(c.fails)
		s.fails.final[recBin(1)] += float32(c.fails)
		wP := km(&s.pU, &s.pC, &s.survP)
		a := s.alt(now, "B")
		a.aU[recBin(5)] = 100 // heard: the alternate answers in 5 ms
		wA, shift := p.estimate(now, s, a)
		if got := p.choose(now, s, a, wP, wA, shift); got != c.pays {
			t.Errorf("%s: choose pays = %v (threshold %v), want %v", c.name, got, a.t, c.pays)
		}
	}
}
