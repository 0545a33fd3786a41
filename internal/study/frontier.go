package study

// The hindsight frontier of issue 25: the best static threshold chosen
// after the fact, and a policy's regret to it.

import (
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// FrontierPoint is one fixed threshold's place on a scenario's hindsight
// frontier: its mean RU multiplier and mean latency (ms) on one quantity.
// ThresholdMs is +Inf for no hedging.
type FrontierPoint struct {
	Policy      string
	ThresholdMs float64
	RU, Ms      float64
}

// Frontier returns the points no other point beats on both RU and
// latency (lower or equal on both, lower on one), cheapest first: the
// trade-offs fixed thresholds offer on one scenario, in hindsight.
func Frontier(points []FrontierPoint) []FrontierPoint {
	var out []FrontierPoint
	for _, p := range points {
		beaten := slices.ContainsFunc(points, func(o FrontierPoint) bool {
			return o.RU <= p.RU && o.Ms <= p.Ms && (o.RU < p.RU || o.Ms < p.Ms)
		})
		if !beaten && !slices.ContainsFunc(out, func(o FrontierPoint) bool { return o.RU == p.RU && o.Ms == p.Ms }) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].RU < out[j].RU })
	return out
}

// BestAt returns the point of points with the lowest latency among those
// whose RU multiplier is at most ru (+1e-9): the best fixed threshold at no
// more RU, chosen after the fact. When every point costs more than ru it
// returns the cheapest. ok is false when points is empty.
func BestAt(points []FrontierPoint, ru float64) (best FrontierPoint, ok bool) {
	found := false
	for _, p := range points {
		if p.RU <= ru+1e-9 && (!found || p.Ms < best.Ms) {
			best, found = p, true
		}
	}
	if found {
		return best, true
	}
	for i, p := range points {
		if i == 0 || p.RU < best.RU {
			best = p
		}
	}
	return best, len(points) > 0
}

// MedianCI returns the median of xs and a distribution-free 95% interval
// for it from the order statistics (the k-th smallest and the k-th
// largest, k the largest with P(Binomial(n, 1/2) < k) <= 2.5%), or the
// whole range of xs when n is too small for one (n < 6). NaN values are
// left out; with none it returns NaNs.
func MedianCI(xs []float64) (median float64, ci [2]float64) {
	v := slices.DeleteFunc(slices.Clone(xs), math.IsNaN)
	n := len(v)
	if n == 0 {
		return math.NaN(), [2]float64{math.NaN(), math.NaN()}
	}
	slices.Sort(v)
	if n%2 == 1 {
		median = v[n/2]
	} else {
		median = (v[n/2-1] + v[n/2]) / 2
	}
	b := distuv.Binomial{N: float64(n), P: 0.5}
	k := 0
	for j := 1; j <= n/2; j++ {
		if b.CDF(float64(j-1)) <= 0.025 {
			k = j
		}
	}
	if k == 0 {
		return median, [2]float64{v[0], v[n-1]}
	}
	return median, [2]float64{v[k-1], v[n-k]}
}

// Excess returns a's relative excess over b, paired by index: (mean of a −
// mean of b) / mean of b with a Student-t 95% interval from the
// differences a[i] − b[i] (a regret when b is the best fixed threshold).
// Mismatched lengths use the common prefix.
func Excess(a, b []float64) Gain {
	n := min(len(a), len(b))
	var d []float64
	sum := 0.0
	for i := range n {
		d = append(d, a[i]-b[i])
		sum += b[i]
	}
	if n == 0 || !(sum > 0) {
		return Gain{N: n}
	}
	mean := sum / float64(n)
	ci := CI95(d)
	return Gain{Mean: (ci[0] + ci[1]) / 2 / mean, Lo: ci[0] / mean, Hi: ci[1] / mean, N: n}
}
