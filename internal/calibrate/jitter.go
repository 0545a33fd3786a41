package calibrate

// This file takes exponential network jitter out of a latency
// distribution (a deconvolution). simnet adds one draw of the scenario's
// [network] jitter to every attempt's round trip; a slow episode's factor
// multiplies the service time but not the jitter, so a calibrated
// scenario that folded the jitter into the service time would multiply
// it too (incident-gcs-2018: exponential jitter of mean 0.05 ms beside a
// 0.47 ms median, ×6: the peak's body spreads by 0.25 ms too much).

import "math"

// jitterDensityWidth is the half-width, relative to x, of the central
// difference that estimates a density at x: a bucket of hedgingotel's
// attempt histogram is 2.2% wide, so the difference spans about three.
const jitterDensityWidth = 0.03

// deconvolveExp returns the distribution of Y where d is the distribution
// of Y + J, J exponential with mean mu ms independent of Y. For such a
// sum F_Y(x) = F(x) + mu·f(x) exactly (the Laplace transform of J is
// 1/(1 + mu·s)); f at a bin edge is estimated from the two bins beside it
// as a locally exponential density (edgeDensity), else by a central
// difference over ±jitterDensityWidth·x, and the result is made non-decreasing and
// capped at d's last level. mu <= 0 returns d unchanged.
func deconvolveExp(d cdf, mu float64) cdf {
	if mu <= 0 || len(d.x) < 2 {
		return d
	}
	out := cdf{x: make([]float64, len(d.x)), f: make([]float64, len(d.f)), events: d.events, censored: d.censored, tail: d.tail}
	top := d.f[len(d.f)-1]
	copy(out.x, d.x)
	for i, x := range d.x {
		if i == 0 {
			continue // F(x[0]) = 0: no mass below the smallest observation
		}
		dens, ok := edgeDensity(d, i)
		if !ok {
			h := math.Max(jitterDensityWidth*x, 1e-6)
			lo := math.Max(x-h, d.x[0])
			if x+h > lo {
				dens = (d.at(x+h) - d.at(lo)) / (x + h - lo)
			}
		}
		v := math.Min(d.f[i]+mu*dens, top)
		if i == len(d.x)-1 {
			v = top
		}
		out.f[i] = math.Max(v, out.f[i-1])
	}
	return out
}

// jitterNodes returns 4 equally likely values standing for exponential
// jitter of mean mu ms: its quantiles at the midpoints (i + 0.5)/4.
func jitterNodes(mu float64) []float64 {
	const n = 4
	out := make([]float64, n)
	for i := range out {
		out[i] = -mu * math.Log(1-(float64(i)+0.5)/n)
	}
	return out
}

// medianBinWidth is the width (ms) of the narrowest bin of bins holding x
// (+Inf when none does).
func medianBinWidth(bins []Bin, x float64) float64 {
	w := math.Inf(1)
	for _, b := range bins {
		if b.Lo <= x && x <= b.Hi && b.Hi > b.Lo {
			w = math.Min(w, b.Hi-b.Lo)
		}
	}
	return w
}

// shiftCDF returns d moved left by mu ms (clamped at 0).
func shiftCDF(d cdf, mu float64) cdf {
	out := d
	out.x = make([]float64, len(d.x))
	for i, x := range d.x {
		out.x[i] = math.Max(x-mu, 0)
	}
	return out
}

// edgeMinCount is the fewest observations each of the two bins beside an
// edge must hold for edgeDensity to read a density from their ratio.
const edgeMinCount = 50

// edgeDensity estimates the density of d at its point i, a bin edge, from
// the bins on either side, taking the density as locally exponential,
// g(t) = g(x)·e^(-λ(t-x)): the left bin [x-a, x] then holds
// g·(e^(λa)-1)/λ and the right [x, x+b] holds g·(1-e^(-λb))/λ, whose ratio
// fixes λ. A flat density within ±3% of x (the central difference)
// overstates the density where it decays fast: past the end of a mode,
// the jitter's exponential smear decays ×1.7 per 2.2% bucket, and the
// central difference over it is ~10% high, which moves the deconvolved
// quantiles at the mode's edge down (incident-gcs-2018's East US body
// edge at q 0.977). ok is false when either bin holds fewer than
// edgeMinCount observations or i has no bin on one side.
func edgeDensity(d cdf, i int) (dens float64, ok bool) {
	if i <= 0 || i+1 >= len(d.x) {
		return 0, false
	}
	a, b := d.x[i]-d.x[i-1], d.x[i+1]-d.x[i]
	na, nb := d.f[i]-d.f[i-1], d.f[i+1]-d.f[i]
	n := d.events + d.censored
	if a <= 0 || b <= 0 || na*n < edgeMinCount || nb*n < edgeMinCount {
		return 0, false
	}
	// r(λ) = (e^(λa)-1)/(1-e^(-λb)) rises from 0 (λ → -∞) to ∞; at λ = 0
	// it is a/b. Bisect λ·a on [-20, 20] for r = na/nb.
	want := na / nb
	ratio := func(l float64) float64 {
		if math.Abs(l) < 1e-9 {
			return a / b
		}
		return math.Expm1(l*a) / -math.Expm1(-l*b)
	}
	lo, hi := -20/a, 20/a
	if want <= ratio(lo) || want >= ratio(hi) {
		return 0, false
	}
	for range 60 {
		mid := (lo + hi) / 2
		if ratio(mid) < want {
			lo = mid
		} else {
			hi = mid
		}
	}
	l := (lo + hi) / 2
	if math.Abs(l) < 1e-9 {
		return nb / b, true
	}
	return nb * l / -math.Expm1(-l*b), true
}
