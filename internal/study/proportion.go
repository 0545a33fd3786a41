package study

import "gonum.org/v1/gonum/stat/distuv"

// ProportionCI returns the exact (Clopper–Pearson) 95% confidence
// interval of a proportion observed as k events in n trials: the
// 2.5% quantile of Beta(k, n−k+1) and the 97.5% quantile of
// Beta(k+1, n−k), with 0 for k = 0 and 1 for k = n. It keeps at least
// 95% coverage however few the events, where a normal approximation
// (p ± 1.96·√(p(1−p)/n)) undercovers and can reach below 0. With n = 0
// it returns [0, 1] (no trials, no information); k is clamped to 0..n.
// Every proportion the project gives an interval (a share of operations,
// pages or changes) uses it.
func ProportionCI(k, n int64) [2]float64 {
	if n <= 0 {
		return [2]float64{0, 1}
	}
	k = min(max(k, 0), n)
	const alpha = 0.05
	ci := [2]float64{0, 1}
	if k > 0 {
		ci[0] = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(alpha / 2)
	}
	if k < n {
		ci[1] = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - alpha/2)
	}
	return ci
}
