package study

import "gonum.org/v1/gonum/stat/distuv"

// ProportionCI returns the exact (Clopper–Pearson) 95% confidence interval
// of a proportion from k successes in n trials, as fractions in [0, 1]:
// the lower bound is the 2.5% quantile of Beta(k, n-k+1) (0 when k is 0),
// the upper the 97.5% quantile of Beta(k+1, n-k) (1 when k is n). It
// returns [0, 1] when n <= 0, and clamps k to [0, n].
func ProportionCI(k, n int64) [2]float64 {
	if n <= 0 {
		return [2]float64{0, 1}
	}
	k = min(max(k, 0), n)
	out := [2]float64{0, 1}
	if k > 0 {
		out[0] = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(0.025)
	}
	if k < n {
		out[1] = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(0.975)
	}
	return out
}
