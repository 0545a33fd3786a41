package calibrate

// This file estimates a latency distribution from binned observations,
// some of them censored (abandoned attempts: their latency is a lower
// bound), by Kaplan–Meier's product-limit rule over the bins.

import (
	"math"
	"sort"
)

// cdf is a piecewise-linear distribution function: F(x[i]) = f[i],
// linear between points (uniform density within a bin); an atom is two
// points at one x. f is non-decreasing, from f[0] = 0.
type cdf struct {
	x, f []float64
	// events is the number of uncensored observations, censored the
	// censored ones; tail is 1 - f[last]: the mass no observation shows
	// (the attempts still running where the last ones were abandoned).
	events, censored, tail float64
}

// elementary splits possibly overlapping bins into disjoint intervals at
// every edge, spreading each bin's count uniformly over its length
// (atoms stay atoms).
func elementary(bins []Bin) []Bin {
	var edges []float64
	var atoms []Bin
	var spans []Bin
	for _, b := range bins {
		if b.N <= 0 {
			continue
		}
		if b.Hi <= b.Lo {
			atoms = append(atoms, Bin{b.Lo, b.Lo, b.N})
			continue
		}
		spans = append(spans, b)
		edges = append(edges, b.Lo, b.Hi)
	}
	sort.Float64s(edges)
	edges = dedup(edges)
	dens := make([]float64, len(edges)) // density difference array at edges
	for _, b := range spans {
		d := b.N / (b.Hi - b.Lo)
		i := sort.SearchFloat64s(edges, b.Lo)
		j := sort.SearchFloat64s(edges, b.Hi)
		dens[i] += d
		dens[j] -= d
	}
	var out []Bin
	cur := 0.0
	for i := 0; i+1 < len(edges); i++ {
		cur += dens[i]
		if n := cur * (edges[i+1] - edges[i]); n > 1e-9 {
			out = append(out, Bin{edges[i], edges[i+1], n})
		}
	}
	out = append(out, atoms...)
	return sortBins(out)
}

func dedup(x []float64) []float64 {
	out := x[:0]
	for i, v := range x {
		if i == 0 || v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// kaplanMeier returns the distribution of the events, with the censored
// observations counted as at risk up to their bin (half of a bin's
// censored ones at risk through it: the actuarial rule).
func kaplanMeier(events, censored []Bin) cdf {
	type piece struct {
		lo, hi float64
		d, c   float64
	}
	ev := elementary(events)
	ce := elementary(censored)
	// Align the censored onto the events' intervals by their upper edges.
	var ps []piece
	for _, b := range ev {
		ps = append(ps, piece{lo: b.Lo, hi: b.Hi, d: b.N})
	}
	for _, b := range ce {
		ps = append(ps, piece{lo: b.Lo, hi: b.Hi, c: b.N})
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].hi != ps[j].hi {
			return ps[i].hi < ps[j].hi
		}
		return ps[i].d > ps[j].d // events before censorings at one edge
	})
	var out cdf
	for _, p := range ps {
		out.events += p.d
		out.censored += p.c
	}
	n := out.events + out.censored
	s := 1.0
	if len(ps) > 0 {
		out.x, out.f = append(out.x, ps[0].lo), append(out.f, 0)
	}
	for _, p := range ps {
		at := n - p.c/2
		if p.d > 0 && at > 0 {
			lastX := out.x[len(out.x)-1]
			if p.lo > lastX {
				out.x, out.f = append(out.x, p.lo), append(out.f, 1-s)
			} else if p.lo < lastX && p.hi > lastX {
				// Overlap with the previous piece (a censored interval):
				// start this piece where the last ended.
				p.lo = lastX
			}
			s *= math.Max(0, 1-p.d/at)
			out.x, out.f = append(out.x, p.hi), append(out.f, 1-s)
		}
		n -= p.d + p.c
	}
	out.tail = s
	return out
}

// quantile returns the smallest x with F(x) >= q (q in [0, 1 - tail]),
// interpolating linearly within a bin.
func (c *cdf) quantile(q float64) float64 {
	if len(c.x) == 0 {
		return math.NaN()
	}
	i := sort.Search(len(c.f), func(i int) bool { return c.f[i] >= q })
	if i == 0 {
		return c.x[0]
	}
	if i == len(c.f) {
		return c.x[len(c.x)-1]
	}
	df := c.f[i] - c.f[i-1]
	if df <= 0 {
		return c.x[i]
	}
	return c.x[i-1] + (c.x[i]-c.x[i-1])*(q-c.f[i-1])/df
}

// at returns F(x).
func (c *cdf) at(x float64) float64 {
	if len(c.x) == 0 || x < c.x[0] {
		return 0
	}
	i := sort.Search(len(c.x), func(i int) bool { return c.x[i] > x })
	if i == len(c.x) {
		return c.f[len(c.f)-1]
	}
	dx := c.x[i] - c.x[i-1]
	if dx <= 0 {
		return c.f[i-1]
	}
	return c.f[i-1] + (c.f[i]-c.f[i-1])*(x-c.x[i-1])/dx
}

// max is the largest x with an observation.
func (c *cdf) max() float64 {
	if len(c.x) == 0 {
		return 0
	}
	return c.x[len(c.x)-1]
}
