package study

import (
	"math"
	"testing"
)

// Clopper–Pearson intervals against published values (R's binom.test,
// conf.level 0.95) and their edges.
func TestProportionCI(t *testing.T) {
	for _, c := range []struct {
		k, n   int64
		lo, hi float64
	}{
		{0, 10, 0, 0.3084971},
		{10, 10, 0.6915029, 1},
		{1, 10, 0.002528579, 0.4450161},
		{5, 10, 0.187086, 0.812914},
		{0, 200, 0, 0.01827},
		{3, 200, 0.003104, 0.04321},
		{0, 0, 0, 1},
		{-1, 5, 0, 0.5218238},
		{7, 5, 0.4781762, 1},
	} {
		got := ProportionCI(c.k, c.n)
		if math.Abs(got[0]-c.lo) > 5e-5 || math.Abs(got[1]-c.hi) > 5e-5 {
			t.Errorf("ProportionCI(%d, %d) = [%.7f, %.7f], want [%.7f, %.7f]", c.k, c.n, got[0], got[1], c.lo, c.hi)
		}
	}
}
