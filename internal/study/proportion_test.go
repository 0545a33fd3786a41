package study

import (
	"math"
	"testing"
)

// Clopper–Pearson intervals against published values (R's binom.test and
// the issue's own example), and their edges.
func TestProportionCI(t *testing.T) {
	for _, tc := range []struct {
		k, n     int64
		lo, hi   float64
		tolerant float64
	}{
		{9, 1559, 0.002643, 0.010937, 2e-5},   // issue 26: 0.58% of K=1 queries >= 1 s
		{0, 10, 0, 0.308497, 1e-5},            // binom.test(0, 10)
		{10, 10, 0.691503, 1, 1e-5},           // binom.test(10, 10)
		{5, 20, 0.086571, 0.491046, 1e-5},     // binom.test(5, 20)
		{1, 1000, 0.0000253, 0.0055589, 1e-6}, // binom.test(1, 1000)
		{0, 0, 0, 1, 0},
		{-3, 5, 0, 0.521824, 1e-5}, // k clamped to 0
		{7, 5, 0.478176, 1, 1e-5},  // k clamped to n
	} {
		ci := ProportionCI(tc.k, tc.n)
		if math.Abs(ci[0]-tc.lo) > tc.tolerant || math.Abs(ci[1]-tc.hi) > tc.tolerant {
			t.Errorf("ProportionCI(%d, %d) = [%.6f, %.6f], want [%.6f, %.6f]", tc.k, tc.n, ci[0], ci[1], tc.lo, tc.hi)
		}
	}
}
