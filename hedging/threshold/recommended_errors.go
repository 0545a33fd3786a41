package threshold

// Failures are not latencies (issue 25, error losses): the failed
// operations a threshold rescues or causes, counted in error points.

import (
	"math"
	"time"

	"hedgelab/hedging"
)

// recErrPoint is one error point, the fraction of operations whose
// failure the scorecard counts against a policy whatever its RU saving
// (internal/study.ScoreErrPoints, 0.01): a policy failing more than one
// point more operations than another loses, and one failing less is not
// judged on its RU. The error guard keeps the estimated failure rate
// within recErrSlack of the lowest a threshold reaches: three quarters of
// the point, the last quarter left to the estimate's own error. Half a
// point stopped hedges that added half a point of errors and bought a
// p99 eleven times lower (population seed 1796189285, member 19: read
// p99 65 -> 717 ms, errors 0.94% -> 0.64%, a loss to static-50ms).
const (
	recErrPoint = 0.01
	recErrSlack = recErrPoint * 3 / 4
)

// recFails is a key's evidence of its primary's failures: the elapsed
// times of the primary legs that ended without a successful answer, aged
// as the primary's latencies (agePrimary). A transient failure (the leg
// stopped on transient answers, not a local throttle) is rescued by a
// hedge sent before it — the alternate keeps racing (§6.4) — and by none
// sent after, as the race then ends at once with the primary's error; a
// final error (a final response with status >= 400, [hedging.LegEnd]
// FinalError) ends the race when it arrives (§7.1), so only an alternate
// that answers before it rescues the operation.
//
// A primary the deadline cut off with no winner (cancelled, the operation
// failed) is as a final error at the time it was cut off: only an
// alternate that answers before it rescues the operation.
type recFails struct {
	transient, final, deadline recHist
}

// noteFailure records the primary leg prim of an ended operation whose
// alternate was sent for cause (0: none) in f, if it failed: a failure
// that the race's own failover answered (cause.Failover(): a 503,
// 404/1002, 429/3092 or transport error sends the alternate at once,
// §6.5 #9) is not one a threshold must rescue.
func (f *recFails) noteFailure(prim hedging.LegEnd, cause hedging.SpawnCause, won bool) {
	if cause.Failover() {
		return
	}
	switch {
	case prim.Outcome == hedging.LegCancelled && !won:
		f.deadline[recBin(msOf(prim.Elapsed))]++
	case prim.Outcome == hedging.LegFailed && !prim.LocalThrottle:
		f.transient[recBin(msOf(prim.Elapsed))]++
	case prim.Outcome == hedging.LegAnswered && prim.FinalError:
		f.final[recBin(msOf(prim.Elapsed))]++
	}
}

// fade multiplies f's weights by g.
func (f *recFails) fade(g float32) {
	for i := range recBins {
		f.transient[i] *= g
		f.final[i] *= g
		f.deadline[i] *= g
	}
}

// incidence writes into ft and ff the estimated fraction of s's
// operations whose primary fails at each bin, transiently (ft) and with
// a final error or at the deadline (ff): cumulative incidences of
// competing risks over the primary's evidence, successful answers the other risk and cancelled
// primaries censored (Kaplan–Meier's at-risk sets), since a primary that
// a hedge cancelled might still have failed — counting failures over all
// operations underestimates them by the share hedged. It returns the
// total of both.
func (s *recState) incidence(ft, ff *[recBins]float64) float64 {
	trans := weight(&s.fails.transient)
	var risk float64
	for i := range recBins {
		risk += float64(s.pU[i]) + float64(s.pC[i])
	}
	// pU holds a final error at its time and a transient failure in its
	// last bin (never answered); here each failure is at its own time.
	risk += trans - float64(s.pU[recBins-1])
	surv, total := 1.0, 0.0
	for i := range recBins {
		t, f := float64(s.fails.transient[i]), float64(s.fails.final[i])
		succ := max(0, float64(s.pU[i])-f)
		if i == recBins-1 {
			succ = max(0, succ-trans)
		}
		d := min(float64(s.fails.deadline[i]), float64(s.pC[i])) // cut off: in pC, a failure here
		f += d
		ft[i], ff[i] = 0, 0
		if risk > 0 {
			ft[i], ff[i] = surv*min(t/risk, 1), surv*min(f/risk, 1)
			surv *= max(0, 1-(succ+t+f)/risk)
		}
		total += ft[i] + ff[i]
		risk -= succ + t + f + float64(s.pC[i]) - d
	}
	return total
}

// failureRate returns the estimated fraction of s's operations that fail
// with a hedge to a at threshold t ms, fail being the fraction that fails
// without one and ft, ff its incidence per bin (incidence), reach (ms)
// how long an alternate has to answer and eA the share of the
// alternate's answers that are final errors: the
// primary's failures, less those a successful alternate rescues (a
// transient one past t; a final error whose time f the alternate's answer
// beats, P(A < f - t)), plus the operations the alternate's own final
// error ends first, eA × P(P > t + E), E the time of the alternate's
// final errors (its own, not its successes': a fast error is what a
// hedge to it risks).
func (s *recState) failureRate(a *recAlt, t, fail float64, ft, ff *[recBins]float64, reach, eA float64) float64 {
	// S_A counts a failed alternate leg as never answering, so 1 - S_A(x)
	// is the chance of a successful answer within x.
	rescued := 0.0
	late := 1 - survAt(&a.survA, reach-t)
	for i := range recBins {
		if w := ft[i]; w > 0 && recUpper(i)/recRatio > t {
			rescued += w * late
		}
		if w := ff[i]; w > 0 {
			if x := recUpper(i)/math.Sqrt(recRatio) - t; x > 0 {
				rescued += w * (1 - survAt(&a.survA, x))
			}
		}
	}
	// Σ_i P(error in bin i) × S_P(t + e_i): the hedges sent at t whose
	// alternate's final error arrives before the primary's answer.
	added := 0.0
	if eW := weight(&a.aE); eA > 0 && eW > 0 {
		for i := range recBins {
			if w := float64(a.aE[i]); w > 0 {
				added += w / eW * survAt(&s.survP, t+recUpper(i)/math.Sqrt(recRatio))
			}
		}
		added *= eA
	}
	return max(0, fail-rescued+added)
}

// rescueSpan returns what bounds the error guard's candidate thresholds
// (and amongFailures', recommended_ru_failed.go): reach, in ms, the time by
// which an operation that has not answered is a failure (the deadline, else
// 2×Max); latest, the last candidate (Max, and inside the deadline with the
// alternate's median to answer); and hcap, the hedge rate no candidate may
// pass (MaxHedgeRate and a veto's cap).
func (p *Recommended) rescueSpan(now time.Duration, s *recState, a *recAlt) (reach, latest, hcap float64) {
	reach, latest = 2*msOf(p.cfg.Max), msOf(p.cfg.Max)
	if s.deadline > 0 {
		reach = msOf(s.deadline)
		latest = min(latest, reach-msOf(a.altMed))
	}
	return reach, latest, min(p.cfg.MaxHedgeRate, a.rateCap(now))
}

// guardErrors is the error guard, run after choose (phase 4): where some
// candidate threshold is estimated (failureRate) to fail more than
// recErrSlack fewer operations than no hedge, a threshold — the chosen
// one, the backstop — that fails more than recErrSlack more than the
// lowest any candidate reaches is replaced by the highest candidate (the
// fewest hedges) within recErrSlack of it. The estimate counts the
// operations the alternate's own final errors end first; where no
// threshold rescues that much, the guard leaves choose's threshold alone
// (the alternate's final errors are failed legs and no wins in its
// evidence, which choose and check read). A rescue is not estimated on
// the prior's word alone: the alternate must have answered (unheard,
// recommended_ru.go), and the primary's failures must weigh MinSamples
// (as its latencies must before it hedges: a few failures early in a
// short run hedged 3.9% of reads to rescue 0.1 of an error point,
// population seed 1796189285, member 86); until MinSamples of the
// alternate's legs have ended it is taken to fail as often as the
// primary. The candidates are choose's: inside the deadline and under the
// hedge-rate caps of MaxHedgeRate and a veto, but not the prior's half of
// the operations, which weighs RU that the scorecard does not weigh
// against an error point. It returns whether a's threshold pays: pays,
// choose's verdict, unless the guard replaced it (true).
func (p *Recommended) guardErrors(now time.Duration, s *recState, a *recAlt, wP float64, pays bool) bool {
	failW := weight(&s.fails.transient) + weight(&s.fails.final) + weight(&s.fails.deadline)
	if !(wP >= p.cfg.MinSamples) || failW < recTailSamples && a.finalErr < recTailSamples {
		return pays
	}
	var ft, ff [recBins]float64
	fail := s.incidence(&ft, &ff)
	eA := s.altFailure(a, p.cfg.MinSamples, &ff)
	reach, latest, hcap := p.rescueSpan(now, s, a)
	rescue := !p.unheard(now, s, a) && failW >= p.cfg.MinSamples
	none := fail
	best := none
	type cand struct{ t, e float64 }
	cands := make([]cand, 0, recBins)
	for i := range recBins {
		t := recUpper(i)
		if t > latest {
			break
		}
		if survAt(&s.survP, t) > hcap {
			continue
		}
		e := s.failureRate(a, t, fail, &ft, &ff, reach, eA)
		if !rescue && e < none {
			e = none // no rescue on the prior's word
		}
		cands = append(cands, cand{t, e})
		best = min(best, e)
	}
	cur := none
	if a.hedge {
		cur = s.failureRate(a, msOf(a.t), fail, &ft, &ff, reach, eA)
		if !rescue && cur < none {
			cur = none
		}
	}
	if cur <= best+recErrSlack || none <= best+recErrSlack {
		return pays
	}
	for i := len(cands) - 1; i >= 0; i-- {
		if cands[i].e <= best+recErrSlack {
			a.t, a.hedge = dur(cands[i].t), true
			return true
		}
	}
	return pays // unreachable: best is a candidate's
}

// altFailure returns the share of a's answers that are final errors:
// from its legs once MinSamples of them have ended (answered, failed or
// cut off by the deadline), before that the primary's own (ff, its
// incidence), as a fault on every region would make it.
func (s *recState) altFailure(a *recAlt, minSamples float64, ff *[recBins]float64) float64 {
	if ended := weight(&a.aU); ended >= minSamples {
		return min(a.finalErr/ended, 1)
	}
	var final float64
	for _, w := range ff {
		final += w
	}
	return min(final, 1)
}
