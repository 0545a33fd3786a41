package dist

import (
	"fmt"
	"math"
	"math/rand/v2"
)

type empirical struct {
	q, ms []float64
}

// NewEmpirical returns the distribution given by a table of quantiles: each
// entry is a pair {q, ms} meaning Quantile(q) = ms milliseconds. The
// quantile function is the linear interpolation between consecutive
// points, so the distribution is uniform between them, and Sample is the
// inverse CDF applied to a uniform draw.
//
// Requirements (the table is copied; indices in errors are 0-based):
//   - at least 2 points, all values finite;
//   - the first q is exactly 0 and the last is exactly 1, so the table
//     defines the whole distribution: the minimum is the first ms and the
//     maximum the last ms, and nothing is ever produced outside them;
//   - q strictly increasing;
//   - ms >= 0 and non-decreasing. Equal consecutive ms values form an atom
//     (a point mass of size equal to the q gap), which is allowed.
//
// It returns an error naming the first offending entry, e.g.
// "empirical: quantiles[2]: q (0.5) must be greater than the previous q (0.5)".
func NewEmpirical(quantiles [][2]float64) (Sampler, error) {
	n := len(quantiles)
	if n < 2 {
		return nil, fmt.Errorf("empirical: quantiles needs at least 2 [q, ms] points (q = 0 and q = 1), got %d", n)
	}
	e := &empirical{q: make([]float64, n), ms: make([]float64, n)}
	for i, pt := range quantiles {
		q, ms := pt[0], pt[1]
		if !finite(q) {
			return nil, fmt.Errorf("empirical: quantiles[%d]: q must be finite, got %g", i, q)
		}
		if !finite(ms) {
			return nil, fmt.Errorf("empirical: quantiles[%d]: ms must be finite, got %g", i, ms)
		}
		switch {
		case i == 0 && q != 0:
			return nil, fmt.Errorf("empirical: quantiles[0]: q must be 0, got %g", q)
		case i > 0 && !(q > e.q[i-1]):
			return nil, fmt.Errorf("empirical: quantiles[%d]: q (%g) must be greater than the previous q (%g)", i, q, e.q[i-1])
		case i == n-1 && q != 1:
			return nil, fmt.Errorf("empirical: quantiles[%d]: the last q must be 1, got %g", i, q)
		case q > 1:
			return nil, fmt.Errorf("empirical: quantiles[%d]: q must be <= 1, got %g", i, q)
		}
		switch {
		case ms < 0:
			return nil, fmt.Errorf("empirical: quantiles[%d]: ms must be >= 0, got %g", i, ms)
		case i > 0 && ms < e.ms[i-1]:
			return nil, fmt.Errorf("empirical: quantiles[%d]: ms (%g) must be >= the previous ms (%g)", i, ms, e.ms[i-1])
		}
		e.q[i], e.ms[i] = q, ms
	}
	return e, nil
}

// segment returns the largest i <= len-2 with q[i] <= u, for u in [0, 1].
func (e *empirical) segment(u float64) int {
	lo, hi := 0, len(e.q)-2
	for lo < hi {
		mid := int(uint(lo+hi+1) >> 1)
		if e.q[mid] <= u {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// at is the piecewise-linear quantile function for u in [0, 1].
func (e *empirical) at(u float64) float64 {
	i := e.segment(u)
	t := (u - e.q[i]) / (e.q[i+1] - e.q[i])
	if t >= 1 {
		return e.ms[i+1]
	}
	// ms[i] + t*(ms[i+1]-ms[i]) cannot overflow: the difference is at most
	// ms[i+1], and t < 1.
	return e.ms[i] + t*(e.ms[i+1]-e.ms[i])
}

func (e *empirical) Sample(r *rand.Rand) float64 { return e.at(r.Float64()) }

func (e *empirical) CDF(x float64) float64 {
	n := len(e.ms)
	switch {
	case math.IsNaN(x):
		return math.NaN()
	case x < e.ms[0]:
		return 0
	case x >= e.ms[n-1]:
		return 1
	}
	// Last j with ms[j] <= x; j < n-1 and ms[j+1] > x >= ms[j], so the
	// segment has positive width.
	lo, hi := 0, n-1
	for lo < hi {
		mid := int(uint(lo+hi+1) >> 1)
		if e.ms[mid] <= x {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	j := lo
	return e.q[j] + (e.q[j+1]-e.q[j])*((x-e.ms[j])/(e.ms[j+1]-e.ms[j]))
}

func (e *empirical) Quantile(p float64) float64 {
	if badP(p) {
		return math.NaN()
	}
	return e.at(p)
}

func (e *empirical) Mean() float64 {
	var m float64
	for i := 0; i+1 < len(e.q); i++ {
		m += (e.q[i+1] - e.q[i]) * (e.ms[i]/2 + e.ms[i+1]/2)
	}
	return m
}

func (e *empirical) String() string {
	return fmt.Sprintf("empirical(%d points, min_ms=%.4g, median_ms=%.4g, max_ms=%.4g)",
		len(e.q), e.ms[0], e.at(0.5), e.ms[len(e.ms)-1])
}
