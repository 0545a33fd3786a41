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
// multiply, and why: the episode's quantiles are fitted as k·(baseline
// quantile − c) + c at unscaledLevels (up to the level with 10 answers
// beyond it), least squares on their logarithms, c from 0 to 99% of the
// baseline's 0.1% quantile. 0 when no episode has a factor of at least
// unscaledMinFactor and unscaledMinAnswers answers, or the best c is 0.
func (m *Model) unscaledMs(r *RegionFit, rws []regionWindow, eps []EpisodeFit, segs []segment) (float64, string) {
	best := -1
	for i, e := range eps {
		if e.Factor >= unscaledMinFactor && e.Total-e.Abandoned >= unscaledMinAnswers && (best < 0 || e.Total > eps[best].Total) {
			best = i
		}
	}
	if best < 0 || len(segs) != len(eps) {
		return 0, ""
	}
	var ev, ce []Bin
	for w := segs[best].from; w < segs[best].to; w++ {
		ev = append(ev, rws[w].ok...)
		ce = append(ce, rws[w].abandoned...)
	}
	e := kaplanMeier(ev, ce)
	b := &r.Service.dist
	var qb, qe []float64
	for _, p := range unscaledLevels {
		if (1-p)*e.events < 10 || (1-p)*b.events < 10 {
			break
		}
		qb, qe = append(qb, b.quantile(p)), append(qe, e.quantile(p))
	}
	if len(qb) < 4 {
		return 0, ""
	}
	loss := func(k, c float64) float64 {
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
	cmax := 0.99 * b.quantile(0.001)
	bestLoss, bc, bk := math.Inf(1), 0.0, 1.0
	for i := 0; i <= 200; i++ {
		c := cmax * float64(i) / 200
		for j := 0; j <= 400; j++ {
			k := math.Pow(50, float64(j)/400)
			if l := loss(k, c); l < bestLoss {
				bestLoss, bc, bk = l, c, k
			}
		}
	}
	if bc == 0 {
		return 0, ""
	}
	c := sig3(bc)
	return c, fmt.Sprintf("estimated from the slow episode at %s–%s s (%.0f answers): its quantiles p50..p%s fit ×%.3g on the service time behind an unscaled %s ms (quantile = k·(baseline − c) + c; RMS log error %.3f), which a factor on the whole latency does not; the rest of the attempt latency is service time",
		fmtG(eps[best].StartS), fmtG(eps[best].EndS), e.events, fmtG(100*unscaledLevels[len(qb)-1]), bk, fmtG(c), math.Sqrt(bestLoss/float64(len(qb))))
}
