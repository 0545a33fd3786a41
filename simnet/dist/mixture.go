package dist

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// WeightedSampler is one component of a mixture: Sampler is drawn with
// probability Weight / (sum of all weights).
type WeightedSampler struct {
	Weight  float64 // relative weight, > 0; normalised by NewMixture
	Sampler Sampler // component distribution (ms)
}

type mixture struct {
	comps []Sampler
	w     []float64 // normalised weights, sum 1
	cum   []float64 // cumulative normalised weights; last is exactly 1
}

// NewMixture returns the mixture of the given components (values in ms):
// Sample picks component i with probability Weight_i/ΣWeight and samples
// it, CDF is the weighted sum of the component CDFs, Quantile is found by
// bisection on CDF, and Mean is the weighted sum of the component means.
// The slice is copied.
//
// It returns an error if there are no components, if a weight is not
// finite and > 0 (e.g. "mixture: components[2]: weight must be > 0, got -1",
// index 0-based), if a Sampler is nil, or if the total weight overflows.
func NewMixture(components []WeightedSampler) (Sampler, error) {
	if len(components) == 0 {
		return nil, errors.New("mixture: needs at least one component")
	}
	m := &mixture{
		comps: make([]Sampler, len(components)),
		w:     make([]float64, len(components)),
		cum:   make([]float64, len(components)),
	}
	var total float64
	for i, c := range components {
		if err := checkWeight(i, c.Weight); err != nil {
			return nil, err
		}
		if c.Sampler == nil {
			return nil, fmt.Errorf("mixture: components[%d]: sampler is nil", i)
		}
		total += c.Weight
		m.comps[i] = c.Sampler
	}
	if math.IsInf(total, 0) {
		return nil, errors.New("mixture: total weight overflows")
	}
	var acc float64
	for i, c := range components {
		m.w[i] = c.Weight / total
		acc += c.Weight
		m.cum[i] = acc / total
	}
	m.cum[len(m.cum)-1] = 1
	return m, nil
}

// checkWeight validates the weight of mixture component i.
func checkWeight(i int, w float64) error {
	if math.IsInf(w, 1) {
		return fmt.Errorf("mixture: components[%d]: weight must be finite, got %g", i, w)
	}
	if !(w > 0) {
		return fmt.Errorf("mixture: components[%d]: weight must be > 0, got %g", i, w)
	}
	return nil
}

func (m *mixture) Sample(r *rand.Rand) float64 {
	u := r.Float64()
	last := len(m.cum) - 1
	for i := 0; i < last; i++ {
		if u < m.cum[i] {
			return m.comps[i].Sample(r)
		}
	}
	return m.comps[last].Sample(r)
}

func (m *mixture) CDF(x float64) float64 {
	if math.IsNaN(x) {
		return math.NaN()
	}
	var f float64
	for i, c := range m.comps {
		f += m.w[i] * c.CDF(x)
	}
	return math.Min(f, 1)
}

// Quantile bisects CDF. The answer always lies between the smallest and
// the largest component quantile at p, which gives a finite bracket for
// p < 1.
func (m *mixture) Quantile(p float64) float64 {
	if badP(p) {
		return math.NaN()
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range m.comps {
		q := c.Quantile(p)
		lo, hi = math.Min(lo, q), math.Max(hi, q)
	}
	if p == 0 || p == 1 || lo == hi {
		if p == 1 {
			return hi
		}
		return lo
	}
	if m.CDF(lo) >= p {
		return lo
	}
	if math.IsInf(hi, 1) {
		hi = math.MaxFloat64
	}
	if !(m.CDF(hi) >= p) {
		// Only possible through rounding in a component's CDF/Quantile.
		return hi
	}
	// Invariant: CDF(lo) < p <= CDF(hi). 2200 halvings exhaust the float64
	// range; the loop normally stops after ~60 when lo and hi are adjacent.
	for range 2200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if m.CDF(mid) >= p {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

func (m *mixture) Mean() float64 {
	var s float64
	for i, c := range m.comps {
		s += m.w[i] * c.Mean()
	}
	return s
}

func (m *mixture) String() string {
	var b strings.Builder
	b.WriteString("mixture(")
	for i, c := range m.comps {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%.4g×%s", m.w[i], c.String())
	}
	b.WriteString(")")
	return b.String()
}
