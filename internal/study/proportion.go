package study

import "gonum.org/v1/gonum/stat/distuv"

// ProportionCI returns the exact (Clopper–Pearson) two-sided 95%
// confidence interval [low, high] of a proportion observed as k events in
// n trials: low is the 2.5% quantile of Beta(k, n-k+1) (0 when k = 0),
// high the 97.5% quantile of Beta(k+1, n-k) (1 when k = n). It never uses
// a normal approximation, so it stays honest for a handful of events (9 of
// 1559 gives [0.26%, 1.09%], not the normal [0.20%, 0.95%]). k is clamped
// to [0, n]; n <= 0 gives [0, 1] (nothing observed).
func ProportionCI(k, n int64) [2]float64 {
	if n <= 0 {
		return [2]float64{0, 1}
	}
	k = min(max(k, 0), n)
	ci := [2]float64{0, 1}
	if k > 0 {
		ci[0] = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(0.025)
	}
	if k < n {
		ci[1] = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(0.975)
	}
	return ci
}
