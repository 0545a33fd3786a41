package calibrate

// This file estimates the part of the client region's attempt latency a
// slow episode's factor does not multiply: the same-region round trip and
// network jitter, which the telemetry folds into the service time. With
// it inside the service time a factor episode cannot fit both the body
// and the tail (incident-gcs-2018: ×6 on a 0.47 ms median behind a 0.5 ms
// round trip looks like ×3.4 at the median and ×6 at p99.9).

import (
	"fmt"
	"math"
)

// unscaledLevels are the quantile levels the unscaled part is fitted at.
var unscaledLevels = []float64{0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.998, 0.999}

// unscaledMinFactor and unscaledMinAnswers are what an episode needs to
// estimate the unscaled part from: a factor this large and this many
// answers (the body and the tail then disagree measurably).
const (
	unscaledMinFactor  = 1.5
	unscaledMinAnswers = 5000
)

// unscaledMs returns c (ms), the part of region r's attempt latency the
// factor of its episode with the most answers (of eps, fitted on segs
// with the service time r.Service taken as the whole latency) does not
// multiply, mu (ms), the mean of the exponential jitter beside it (also
// not multiplied), and why. For each mu from 0 to half the baseline's
// p50 − p0.1 in unscaledJitterSteps steps, both distributions are
// deconvolved by the jitter (deconvolveExp) and the episode's quantiles
// fitted as k·(baseline quantile − c) + c at unscaledLevels (up to the
// level with 10 answers beyond it), least squares on their logarithms,
// c from 0 to 99% of the deconvolved baseline's 0.1% quantile; the
// (c, mu) of the least loss wins. 0, 0 when no episode has a factor of
// at least unscaledMinFactor and unscaledMinAnswers answers, or the best
// c and mu are 0.
func (m *Model) unscaledMs(r *RegionFit, rws []regionWindow, eps []EpisodeFit, segs []segment) (c, mu float64, why string) {
	best := -1
	for i, e := range eps {
		if e.Factor >= unscaledMinFactor && e.Total-e.Abandoned >= unscaledMinAnswers && (best < 0 || e.Total > eps[best].Total) {
			best = i
		}
	}
	if best < 0 || len(segs) != len(eps) {
		return 0, 0, ""
	}
	var ev, ce []Bin
	for w := segs[best].from; w < segs[best].to; w++ {
		ev = append(ev, rws[w].ok...)
		ce = append(ce, rws[w].abandoned...)
	}
	e0 := kaplanMeier(ev, ce)
	b0 := r.Service.dist
	muMax := 0.5 * (b0.quantile(0.5) - b0.quantile(0.001))
	bestLoss, bc, bk, bmu, levels := math.Inf(1), 0.0, 1.0, 0.0, 0
	for s := 0; s <= unscaledJitterSteps; s++ {
		jm := muMax * float64(s) / unscaledJitterSteps
		b, e := deconvolveExp(b0, jm), deconvolveExp(e0, jm)
		var qb, qe []float64
		for _, p := range unscaledLevels {
			if (1-p)*e.events < 10 || (1-p)*b.events < 10 {
				break
			}
			qb, qe = append(qb, b.quantile(p)), append(qe, e.quantile(p))
		}
		if len(qb) < 4 {
			return 0, 0, ""
		}
		l, cc, kk := fitUnscaled(qb, qe, 0.99*b.quantile(0.001))
		if l < bestLoss {
			bestLoss, bc, bk, bmu, levels = l, cc, kk, jm, len(qb)
		}
	}
	if bc == 0 && bmu == 0 {
		return 0, 0, ""
	}
	c, mu = sig3(bc), sig3(bmu)
	why = fmt.Sprintf("estimated from the slow episode at %s–%s s (%.0f answers): with exponential jitter of mean %s ms taken out of both (deconvolved), its quantiles p%s..p%s fit ×%.3g on the service time behind an unscaled %s ms (quantile = k·(baseline − c) + c; RMS log error %.3f), which a factor on the whole latency does not; the rest of the attempt latency is service time",
		fmtG(eps[best].StartS), fmtG(eps[best].EndS), e0.events, fmtG(mu), fmtG(100*unscaledLevels[0]), fmtG(100*unscaledLevels[levels-1]), bk, fmtG(c), math.Sqrt(bestLoss/float64(levels)))
	return c, mu, why
}

// unscaledJitterSteps is how many jitter means unscaledMs tries above 0.
const unscaledJitterSteps = 40

// fitUnscaled fits qe ≈ k·(qb − c) + c (least squares on logarithms), c
// in [0, cmax] on a grid of 201, k in [1, 50] on a log grid of 401; it
// returns the loss, c and k.
func fitUnscaled(qb, qe []float64, cmax float64) (loss, c, k float64) {
	f := func(k, c float64) float64 {
		var sum float64
		for i := range qb {
			v := k*(qb[i]-c) + c
			if v <= 0 || qe[i] <= 0 {
				return math.Inf(1)
			}
			d := math.Log(v / qe[i])
			sum += d * d
		}
		return sum
	}
	loss, c, k = math.Inf(1), 0, 1
	for i := 0; i <= 200; i++ {
		ci := cmax * float64(i) / 200
		for j := 0; j <= 400; j++ {
			kj := math.Pow(50, float64(j)/400)
			if l := f(kj, ci); l < loss {
				loss, c, k = l, ci, kj
			}
		}
	}
	return loss, c, k
}
