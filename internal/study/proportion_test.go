package study

import (
	"math"
	"testing"
)

// TestProportionCI checks the exact interval against closed forms (k = 0,
// k = 1, k = n: 1 − 0.025^(1/n), 1 − 0.975^(1/n), 0.025^(1/n)) and a
// published example, R's binom.test(682, 925) (Mendel's peas: 0.7076683,
// 0.7654066).
func TestProportionCI(t *testing.T) {
	cases := []struct {
		k, n   int64
		lo, hi float64
		tol    float64
	}{
		{0, 10, 0, 1 - math.Pow(0.025, 0.1), 1e-9},
		{10, 10, math.Pow(0.025, 0.1), 1, 1e-9},
		{0, 1000, 0, 1 - math.Pow(0.025, 1e-3), 1e-9},
		{1, 20, 1 - math.Pow(0.975, 1.0/20), 0.2487, 1e-4},
		{682, 925, 0.7076683, 0.7654066, 1e-7},
		{0, 0, 0, 1, 0},
		{-1, 5, 0, 1 - math.Pow(0.025, 0.2), 1e-9}, // clamped to k = 0
	}
	for _, c := range cases {
		got := ProportionCI(c.k, c.n)
		if math.Abs(got[0]-c.lo) > c.tol || math.Abs(got[1]-c.hi) > c.tol {
			t.Errorf("ProportionCI(%d, %d) = [%.7f, %.7f], want [%.7f, %.7f]", c.k, c.n, got[0], got[1], c.lo, c.hi)
		}
	}
}

// TestProportionCIContainsAndNests: every interval contains k/n, lies in
// [0, 1], and narrows as n grows at a fixed proportion.
func TestProportionCIContainsAndNests(t *testing.T) {
	prev := 1.0
	for _, n := range []int64{10, 100, 1000, 10000} {
		for k := int64(0); k <= n; k += max(n/50, 1) {
			ci := ProportionCI(k, n)
			p := float64(k) / float64(n)
			if !(ci[0] >= 0 && ci[0] <= p && p <= ci[1] && ci[1] <= 1) {
				t.Fatalf("ProportionCI(%d, %d) = %v does not contain %g within [0, 1]", k, n, ci, p)
			}
		}
		ci := ProportionCI(n/10, n)
		if w := ci[1] - ci[0]; !(w < prev) {
			t.Errorf("10%% of %d: width %g, not narrower than %g", n, w, prev)
		}
		prev = ci[1] - ci[0]
	}
}
