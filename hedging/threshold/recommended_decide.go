package threshold

// The phases of Recommended's decision (age, cold, estimate, choose,
// check) and the histograms and floors they read.

import (
	"math"
	"time"

	"hedgelab/hedging"
)

// Latency histograms: log-spaced bins from recLo, each recRatio wider than
// the last (5%: a quantile within half a bin, 2.5%, of the truth); values
// above the last bin (about 43 s) count in it.
const (
	recBins  = 280
	recLo    = 50e-3 // ms
	recRatio = 1.05
)

var recLogRatio = math.Log(recRatio)

// recTailSamples is the observation weight beyond a quantile for its
// estimate to count: with fewer, the quantile is one of the largest values
// seen, not an estimate.
const recTailSamples = 2

// recHist is a decayed histogram of latencies (weights per bin).
type recHist [recBins]float32

// recBin returns the bin of a latency in ms.
func recBin(ms float64) int {
	if !(ms > recLo) {
		return 0
	}
	return min(int(math.Log(ms/recLo)/recLogRatio), recBins-1)
}

// recUpper returns the upper edge of bin i in ms.
func recUpper(i int) float64 { return recLo * math.Pow(recRatio, float64(i+1)) }

// ms converts d to milliseconds; dur converts back.
func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func dur(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// recRegion is what a primary region's keys share: the floor of its
// answered primary latencies and, per alternate region, of the answered
// alternate latencies over every operation kind (the round trips, which
// the kinds have in common), each the smaller of the last two
// MaxMemory/2 windows' minima, so a changed network shows within a memory.
type recRegion struct {
	prim recFloor
	alts []recAltFloor
}

type recAltFloor struct {
	region hedging.Region
	floor  recFloor
}

// altFloor returns the floor of alternate region a, creating it at now.
func (r *recRegion) altFloor(now time.Duration, a hedging.Region) *recFloor {
	for i := range r.alts {
		if r.alts[i].region == a {
			return &r.alts[i].floor
		}
	}
	r.alts = append(r.alts, recAltFloor{region: a, floor: newFloor(now)})
	return &r.alts[len(r.alts)-1].floor
}

// recFloor is a minimum over the last one to two windows (ms; +Inf when
// nothing was observed).
type recFloor struct {
	cur, prev float64
	start     time.Duration
}

func newFloor(now time.Duration) recFloor { return recFloor{math.Inf(1), math.Inf(1), now} }

// add records ms at now with windows of length w.
func (f *recFloor) add(now, w time.Duration, ms float64) {
	f.roll(now, w)
	f.cur = min(f.cur, ms)
}

// roll starts a new window when the current one is older than w.
func (f *recFloor) roll(now, w time.Duration) {
	for now-f.start >= w {
		f.prev, f.cur = f.cur, math.Inf(1)
		f.start += w
		if now-f.start >= w { // idle for two windows or more: forget both
			f.prev, f.start = math.Inf(1), now
		}
	}
}

// get returns the floor at now (+Inf: none).
func (f *recFloor) get(now, w time.Duration) float64 {
	f.roll(now, w)
	return min(f.cur, f.prev)
}

// km writes the Kaplan–Meier survival past each bin of answered u and
// censored c into out and returns the total weight. Mass beyond the last
// answered value (censored only) stays in out's tail: unknown, taken as
// slower than any bin.
func km(u, c, out *recHist) float64 {
	var risk float64
	for i := range recBins {
		risk += float64(u[i]) + float64(c[i])
	}
	total, surv := risk, 1.0
	for i := range recBins {
		if risk > 0 {
			surv *= 1 - min(float64(u[i])/risk, 1)
		}
		out[i] = float32(surv)
		risk -= float64(u[i]) + float64(c[i])
	}
	return total
}

// survAt returns a survival curve's value at ms, interpolated between bin
// edges (1 at and below 0).
func survAt(surv *recHist, ms float64) float64 {
	if !(ms > recLo) {
		return 1
	}
	x := math.Log(ms/recLo)/recLogRatio - 1 // position on the upper-edge grid
	if x < 0 {
		return 1 + (x+1)*(float64(surv[0])-1)
	}
	i := int(x)
	if i >= recBins-1 {
		return float64(surv[recBins-1])
	}
	f := x - float64(i)
	return float64(surv[i])*(1-f) + float64(surv[i+1])*f
}

// quantileOf returns the smallest upper bin edge where surv <= 1-q, or +Inf.
func quantileOf(surv *recHist, q float64) float64 {
	for i := range recBins {
		if float64(surv[i]) <= 1-q {
			return recUpper(i)
		}
	}
	return math.Inf(1)
}

// lowerQuantileOf returns the lower edge of the bin holding quantile q of
// surv (below nine in ten of that bin's values, however narrow the
// distribution), or +Inf.
func lowerQuantileOf(surv *recHist, q float64) float64 {
	for i := range recBins {
		if float64(surv[i]) <= 1-q {
			if i == 0 {
				return recLo
			}
			return recUpper(i - 1)
		}
	}
	return math.Inf(1)
}

func weight(h *recHist) float64 {
	w := 0.0
	for _, x := range h {
		w += float64(x)
	}
	return w
}

// The ledger's binomial test, check's lost rule: hedges lost when none of
// them won where the estimate expected at least recLostWins, among the
// last recLedgerSpan × MinSamples hedges the ledger remembers (its decay,
// 1 - 1/(recLedgerSpan × MinSamples) per hedge, sums to that many: twice
// the evidence a key needs before it trusts an estimate). The chance of no
// win where two were expected is e^-2, 14%: a ledger that says "lost" on
// fewer would veto hedges that pay by chance.
const (
	recLostWins   = 2
	recLedgerSpan = 2
)

// minWin returns the ledger's reach: the least win probability of a hedge
// check's lost rule can hold to account, recLostWins / (recLedgerSpan ×
// MinSamples) (2/40 by default). Hedges estimated to win less often than
// this cannot make the rule fire even when the whole ledger is of them.
func (p *Recommended) minWin() float64 {
	return recLostWins / (recLedgerSpan * p.cfg.MinSamples)
}

// failing reports whether a hedge at a's threshold — as Threshold sends
// it, at most half the key's last time left while the alternate is
// unknown — is estimated to win less often than minWin (hedges the
// ledger cannot test) to an alternate that does not answer: either its
// ended legs are mostly failures (transient answers: more than half the
// weight of its answered, cancelled and failed legs), or it has never
// answered — MinSamples of legs ended, at least one cut off by the
// deadline, none answered, and no floor for the region in the last one
// to two MaxMemory/2 windows, so Threshold's floor rule cannot rule its
// hedges out (population seed 1796181777, member 28: a 91 ms operation
// timeout and an alternate ~220 ms away; its extra hedges cost 2 RU
// points for no gain). An alternate only ever cancelled by primaries
// that answered first is not blocked, nor are deadline cut-offs counted
// as failures: under a surge its hedges relieve the queue, and blocking
// them lost rate-surge-10x-queueing to sc-retry-throttle.
func (p *Recommended) failing(now time.Duration, s *recState, a *recAlt) bool {
	ended := weight(&a.aU) + weight(&a.aC)
	never := a.heard() < 1 && ended >= p.cfg.MinSamples && a.aU[recBins-1] >= 1 &&
		math.IsInf(s.region.altFloor(now, a.region).get(now, p.cfg.MaxMemory/2), 1)
	if !a.hedge || !(2*a.failed > ended || never) {
		return false
	}
	t := a.t
	if s.deadline > 0 && (a.altMed <= 0 || a.probeT > 0) {
		t = min(t, s.deadline/2)
	}
	return a.winProb(s, msOf(t)) < p.minWin()
}

// decide recomputes s's threshold towards alternate a, phase by phase;
// p.mu must be held.
func (p *Recommended) decide(now time.Duration, s *recState, a *recAlt) {
	a.nextCalc = now + p.cfg.Refresh
	p.agePrimary(now, s)
	p.age(now, a)
	a.hedge, a.probeT = false, 0
	wP := km(&s.pU, &s.pC, &s.survP)
	if p.cold(now, s, a, wP) {
		return
	}
	wA, shift := p.estimate(now, s, a)
	pays := p.choose(now, s, a, wP, wA, shift)
	pays = p.guardErrors(now, s, a, wP, pays) // failures in error points (recommended_errors.go)
	a.pays = pays
	if !pays {
		a.t = p.hold(now, s, a, a.t)
	}
	// check holds every hedge a warm key sends to account, the chosen
	// threshold's, the held one's and the backstop's alike: where hedges
	// do not win, the insurance buys nothing either.
	switch {
	case a.vetoed(now):
		a.hedge, a.pays = false, false
	case !p.check(s, a):
		// Its hedges did not do what they cost: a veto (recommended_veto.go)
		// caps the hedge rate, and the threshold is chosen again under the
		// cap, or stops every hedge to a but probes for as long as the
		// ledger's evidence took to gather; the ledger starts empty.
		p.veto(now, s, a, survAt(&s.survP, msOf(a.t)))
		if a.vetoed(now) {
			a.hedge, a.pays = false, false
		} else if a.pays = p.choose(now, s, a, wP, wA, shift); !a.pays {
			a.t = p.hold(now, s, a, a.t)
		}
	case pays:
		p.paid(now, s, a)
	}
	if p.failing(now, s, a) {
		// Only the probe budget hedges to an alternate that fails
		// (failing), so it is observed again when it recovers.
		a.hedge, a.pays = false, false
		if a.probeT == 0 {
			p.probeBudget(now, s, a)
		}
	}
}

// memory returns the primary evidence's time constant: TargetSamples /
// rate within [MinMemory, MaxMemory].
func (p *Recommended) memory(s *recState) time.Duration {
	tau := p.cfg.TargetSamples / max(s.rate, 1e-9)
	return dur(1000 * min(max(tau, p.cfg.MinMemory.Seconds()), p.cfg.MaxMemory.Seconds()))
}

// agePrimary fades s's primary evidence to now (phase 1).
func (p *Recommended) agePrimary(now time.Duration, s *recState) {
	dt := (now - s.decayed).Seconds()
	if dt <= 0 {
		return
	}
	s.decayed = now
	s.rate = 0.8*s.rate + 0.2*s.since/dt
	if s.rate == 0 {
		s.rate = s.since / dt
	}
	s.since = 0
	f := float32(math.Exp(-dt / p.memory(s).Seconds()))
	for i := range recBins {
		s.pU[i] *= f
		s.pC[i] *= f
	}
	s.fails.fade(f)
}

// age fades a's alternate evidence and hedge ledger to now with memory
// MaxMemory (phase 1): what was learned of an alternate ages, and the
// prior and the probes take over as it does.
func (p *Recommended) age(now time.Duration, a *recAlt) {
	dt := (now - a.decayed).Seconds()
	if dt <= 0 {
		return
	}
	a.decayed = now
	f := math.Exp(-dt / p.cfg.MaxMemory.Seconds())
	for i := range recBins {
		a.aU[i] *= float32(f)
		a.aC[i] *= float32(f)
		a.aD[i] *= float32(f)
		a.aE[i] *= float32(f)
	}
	a.hedges *= f
	a.wins *= f
	a.expWins *= f
	a.gain *= f
	a.failed *= f
	a.finalErr *= f
}

// cold handles a key still warming up (phase 2) and reports whether it
// did: the conservative prior (Initial, 350 ms) until a primary answers,
// then Cold × the median of the answers: a fresh instance does not hedge
// blindly, and stops hedging a heavy operation as soon as it has seen one
// answer. Once the key's alternate has answered in less than half the
// primary's median (Kaplan–Meier: unknown, so slower, while most
// primaries were cancelled), the threshold is twice the alternate's
// median: the evidence says the primary is the slow one (a primary slow
// from the start), and waiting out the prior on each of a cold key's few
// operations is what it would cost.
func (p *Recommended) cold(now time.Duration, s *recState, a *recAlt, wP float64) bool {
	warm := max(p.cfg.Warmup, dur(2*s.maxMs))
	if (s.warmed || s.first >= 0 && now-s.first >= warm) && wP >= p.cfg.MinSamples {
		s.warmed = true // for good: a slow answer later is evidence, not bias
		return false
	}
	a.nextCalc = now + p.cfg.Refresh/10 // look again soon
	a.hedge, a.t, a.altMed = true, p.cfg.Initial, 0
	med := quantileOf(&s.survP, 0.5) // +Inf: most primaries cancelled
	if s.first >= 0 && !math.IsInf(med, 1) {
		// Never above Initial: a primary slow from the start (every read
		// seconds late) is hedged at Initial as before its first answer,
		// so its alternate is observed and the key leaves the cold phase
		// with evidence; at Cold × its median no hedge would fire before
		// the primary answers (primary-slow: 4.7% of reads at 2 s).
		a.t = min(max(dur(p.cfg.Cold*med), 1), p.cfg.Max)
	}
	if km(&a.aU, &a.aC, &a.survA) > 0 {
		if am := quantileOf(&a.survA, 0.5); !math.IsInf(am, 1) {
			a.altMed = dur(am)
			if 2*am < med {
				a.t = min(a.t, max(2*a.altMed, 1))
			}
		}
	} else if r := p.regions[a.region]; r != nil {
		// Before its own alternate has answered, the key has another
		// witness of how fast the alternate region answers: its floor as a
		// primary, from this client's other keys (the same round trip,
		// asked first). Where it is under half the key's primary median
		// (or no primary has answered yet), the primary is the far one (a
		// client that failed its reads over to a far region while its own
		// region faults), and the threshold is twice that floor, as twice
		// the alternate's median is above; the floor understates the
		// median, so this hedges more, but only until the alternate's own
		// answers replace it, a Refresh/10 later. Waiting out the prior
		// there left the failed-over reads unhedged at the far region's
		// round trip (population seed 1796178436, member 19: read p99
		// 241 ms where a threshold of 50 ms gave 52).
		if fa := r.prim.get(now, p.cfg.MaxMemory/2); !math.IsInf(fa, 1) && 2*fa < med {
			a.t = min(a.t, max(dur(2*fa), 1))
		}
	}
	if tried := weight(&a.aU) + weight(&a.aC); p.belowPrior(s, a) && tried > 0 && weight(&a.aU) <= float64(a.aU[recBins-1]) {
		// Below the prior (at Cold × the median), once hedges have gone to
		// the alternate and none got a final answer (cancelled, failed or
		// out of time): further hedges are guesses that fire on every
		// primary's tail, so only the probe budget is spent on it — one
		// operation in Probe, at this threshold — until it answers (a
		// fresh key whose every region fails, or whose alternate is far,
		// spent a hedge on every tail primary here). The first hedges
		// still go (a primary slow from its first read, feed-metadata-
		// latest's stale page, is rescued by them), and so does the prior,
		// which fires only past the longest median round trip.
		a.hedge, a.probeT, a.floorT = false, a.t, a.t
	}
	return true
}

// estimate reads the alternate's answer time A into a.survA (phase 3):
// its own Kaplan–Meier estimate, its tail past its last observation and,
// while its evidence weighs less than MinSamples, the missing weight, in
// the shape of the prior — the faster half of the primary's attempts (P |
// P <= median) shifted by how much farther the alternate is: the
// difference of the pair's floors over every operation kind (the round
// trips), or, while the pair has no floor, the primary's median (another
// region, as far again as the primary). While the evidence is thin, one
// operation in Probe is hedged at the lower edge of the primary's 90th
// percentile (a.probeT) while fewer than MinSamples alternates answered
// (cancelled ones say only "slower than this"), so an alternate the prior
// thinks no faster is still observed, mostly where hedges matter: behind a
// slow primary; and one in 10 × Probe at the primary region's floor (its
// fastest answer of the last one to two MaxMemory/2 windows), so an
// alternate is observed even when every primary read slows together and
// none outlasts the 90th percentile by the alternate's answer time (a
// queue). It
// returns the alternate's evidence weight and the prior's shift (ms).
func (p *Recommended) estimate(now time.Duration, s *recState, a *recAlt) (wA, shift float64) {
	w := p.cfg.MaxMemory / 2
	shift = quantileOf(&s.survP, 0.5)
	fa, fp := s.region.altFloor(now, a.region).get(now, w), s.region.prim.get(now, w)
	if !math.IsInf(fa, 1) && !math.IsInf(fp, 1) {
		shift = fa - fp
	}
	if math.IsInf(shift, 1) {
		shift = 0
	}
	prior := func(i int) float32 {
		return float32(max(0, 2*survAt(&s.survP, recUpper(i)-shift)-1))
	}
	wA = km(&a.aU, &a.aC, &a.survA)
	// Beyond its last observation the alternate's tail takes the prior's
	// shape while fewer than MinSamples alternates answered: cancelled
	// alternates say only "slower than this", and an open tail would read
	// a few early cancellations as "never answers", a closed one a far
	// alternate as a fast one. Once MinSamples have answered, the
	// alternate's own answers say how far it is, and the mass left past
	// its last observation is put one bin past it (the Kaplan–Meier
	// estimate closed at its largest observation, Efron's convention):
	// the prior's shape is the primary's, and a queue that stretches the
	// primary would stretch the alternate's tail with it, so that no
	// threshold gains while the queue grows (rate-surge-10x-queueing).
	last := -1
	for i := range recBins {
		if a.aU[i]+a.aC[i] > 0 {
			last = i
		}
	}
	if last >= 0 && a.aU[recBins-1] == 0 && weight(&a.aU) >= p.cfg.MinSamples {
		for i := last + 1; i < recBins; i++ {
			a.survA[i] = 0
		}
	} else if last >= 0 && a.aU[recBins-1] == 0 {
		pl := prior(last)
		for i := last + 1; i < recBins; i++ {
			if pl > 0 {
				a.survA[i] = a.survA[last] * prior(i) / pl
			} else {
				a.survA[i] = 0
			}
		}
	}
	if wA < p.cfg.MinSamples {
		// The prior's share, (1-f), is weighed by what the legs did where
		// the alternate never answered (priorOdds, recommended_ru.go).
		f := wA / p.cfg.MinSamples
		pw := (1 - f) * a.priorOdds(prior)
		for i := range recBins {
			a.survA[i] = float32((f*float64(a.survA[i]) + pw*float64(prior(i))) / (f + pw))
		}
		a.nextCalc = now + p.cfg.Refresh/10 // decided on the prior: look again soon
	}
	// Cancelled alternates say only "slower than this": until MinSamples
	// have answered, the alternate's speed is not known, so it is probed.
	if weight(&a.aU) < p.cfg.MinSamples {
		p.probeBudget(now, s, a)
	}
	// The alternate's median answer time, for the deadline; when most of
	// its attempts were cancelled before answering (unknown), the prior's.
	am := quantileOf(&a.survA, 0.5)
	if math.IsInf(am, 1) {
		am = quantileOf(&s.survP, 0.25) + shift // the prior's median
		if math.IsInf(am, 1) || am < 0 {
			am = 0
		}
	}
	a.altMed = dur(am)
	return wA, shift
}

// probeBudget sets a's probes: one operation in Probe hedged at the lower
// edge of the primary's 90th percentile (a.probeT), and one in 10 × Probe
// at the primary region's floor (a.floorT; see estimate).
func (p *Recommended) probeBudget(now time.Duration, s *recState, a *recAlt) {
	a.probeT = max(dur(lowerQuantileOf(&s.survP, 0.9)), 1)
	a.floorT = a.probeT
	if fp := s.region.prim.get(now, p.cfg.MaxMemory/2); !math.IsInf(fp, 1) {
		a.floorT = max(dur(fp), 1)
	}
}

// choose picks the threshold (phase 4): the candidate T with the largest
// relative gain in the quantile of min(P, T + A) over not hedging, net of
// HedgeCost × the hedge rate P(P > T), judged on the band's top too where
// a slow mode sits at the quantile's edge; with a deadline, quantiles are
// capped at it (an operation fails there) and T + A's median must fit in
// it. Where none gains MinGain, the same search by the gain at the deep
// quantile where a slow mode past the band doubles it (deepBand), and
// where none gains MinGain there either, the backstop — as where the
// quantile lies among failures at every threshold (amongFailures,
// recommended_ru_failed.go). It returns whether a
// threshold pays (false: the backstop).
func (p *Recommended) choose(now time.Duration, s *recState, a *recAlt, wP, wA, shift float64) bool {
	q := p.cfg.Quantile
	qHi := 1 - (1-q)/2
	maxMs := msOf(p.cfg.Max)
	deadline := math.Inf(1)
	if s.deadline > 0 {
		deadline = msOf(s.deadline)
	}
	unhedged := func(q float64) float64 {
		v := quantileOf(&s.survP, q)
		if math.IsInf(v, 1) {
			v = 2 * maxMs
		}
		return min(v, deadline)
	}
	qInf, qInfHi := unhedged(q), unhedged(qHi)
	if p.amongFailures(now, s, a, wP) {
		a.hedge, a.t = true, p.backstop(qInf) // no threshold moves it (recommended_ru_failed.go)
		return false
	}
	// The band applies where the unhedged quantile at least doubles between
	// q and qHi (a body's tail grows by ~10% there), with recTailSamples
	// observations beyond qHi.
	hiSeen := wP*(1-qHi) >= recTailSamples && qInfHi >= 2*qInf
	qDeep, deepSeen := deepBand(q, wP, qInf, unhedged, &s.survP)
	var deepPick deepScan
	// Q(T): the smallest upper edge x with S_P(x) × S_A(x - T) <= 1-q,
	// capped at the deadline.
	quant := func(t, q float64) float64 {
		lo, hi := 0, recBins-1
		if float64(s.survP[hi])*survAt(&a.survA, recUpper(hi)-t) > 1-q {
			return deadline
		}
		for lo < hi {
			m := (lo + hi) / 2
			if float64(s.survP[m])*survAt(&a.survA, recUpper(m)-t) <= 1-q {
				hi = m
			} else {
				lo = m + 1
			}
		}
		return min(recUpper(lo), deadline)
	}
	hcap := min(p.cfg.MaxHedgeRate, a.rateCap(now))
	if wA < p.cfg.MinSamples {
		hcap = min(hcap, 0.5) // on the prior: hedge at most half, learn the alternate
	}
	latest := min(maxMs, deadline-msOf(a.altMed)) // a hedge must answer inside the deadline
	gains := make([]float64, 0, recBins)          // per candidate bin (NaN: not a candidate)
	best, bestT, bestGain := 0.0, 0.0, 0.0
	for i := range recBins {
		t := recUpper(i)
		if t > latest {
			break
		}
		gains = append(gains, math.NaN())
		h := survAt(&s.survP, t)
		if h > hcap {
			continue
		}
		gain := 1 - quant(t, q)/qInf
		if hiSeen {
			gain = max(gain, 1-quant(t, qHi)/qInfHi)
		}
		gains[i] = gain
		if g := gain - p.cfg.HedgeCost*h; g > best {
			best, bestT, bestGain = g, t, gain
		}
		if deepSeen && h <= 1-q {
			deepPick.add(i, t, 1-quant(t, qDeep)/unhedged(qDeep), p.cfg.HedgeCost*h)
		}
	}
	if !(best > 0 && bestGain >= p.cfg.MinGain) && deepSeen && (now >= a.heldUntil || a.heldT <= 0) {
		// No threshold pays at the quantile, and no threshold whose hedges
		// paid is held: judged at the deep one (recommended_deep.go).
		best, bestT, bestGain, gains = deepPick.best, deepPick.bestT, deepPick.bestGain, deepPick.gains
	} else if noLatency(quantileOf(&s.survP, q), deadline) && best > 0 {
		// The unhedged quantile is no latency: a lower threshold at the
		// scorecard's price in RU (recommended_latency.go).
		bestT, bestGain = p.priced(gains, bestT, bestGain, func(t float64) float64 { return quant(t, q) },
			func(t float64) float64 { return survAt(&s.survP, t) })
	}
	a.hedge = true
	if best > 0 && bestGain >= p.cfg.MinGain && !p.unheard(now, s, a) {
		// The cheapest threshold that buys the gain: the highest (fewest
		// hedges), below the unhedged quantile and at most twice the best
		// threshold, whose gain is within MinGain of the best's — a smaller
		// difference is not worth the RU (the scorecard's margin too) — and
		// which gives up no more than MinGain of the deeper quantile
		// 1 - (1 - Quantile)/10 either (the p99.9 the scorecard scores too),
		// where the evidence reaches it. Not while the primary's tail is
		// unknown (most primaries cancelled): every gain is then relative
		// to a guess.
		deep := wP*(1-qDeep) >= recTailSamples
		deepAt := quant(bestT, qDeep)
		// "Within MinGain" is of the best's own quantile, as the scorecard
		// compares two policies' quantiles, not of the unhedged one: where
		// the unhedged quantile is a failure or a long fault (2 × Max when
		// unknown), MinGain of it is hundreds of ms, and a threshold twice
		// the best's gave up a quarter of the hedged p99 for no RU saved
		// (population seed 1796181777, member 17: read p99 185 ms where a
		// threshold of 20 ms gives 138).
		bestAt := quant(bestT, q)
		top := min(quantileOf(&s.survP, q), 2*bestT)
		for i := len(gains) - 1; i >= 0 && !math.IsInf(top, 1); i-- {
			t := recUpper(i)
			if t > bestT && t <= top && gains[i] >= bestGain-p.cfg.MinGain && gains[i] >= p.cfg.MinGain &&
				quant(t, q) <= bestAt*(1+p.cfg.MinGain) &&
				(!deep || quant(t, qDeep) <= deepAt*(1+p.cfg.MinGain)) {
				bestT = t
				break
			}
		}
		a.t = dur(bestT)
		return true
	}
	a.t = p.backstop(qInf)
	return false
}

// backstop is the threshold kept where no threshold pays: Backstop × the
// unhedged quantile qInf (ms) hedges almost nothing, but a sudden
// slow-down is hedged before its first slow primary has answered (a model
// learns only from answers).
func (p *Recommended) backstop(qInf float64) time.Duration {
	return min(dur(p.cfg.Backstop*qInf), p.cfg.Max)
}

// winProb returns the probability by the last estimate that a hedge sent
// at t ms wins: P(t + A < P | P > t) = Σ P(A in bin i) × S_P(t + a_i) /
// S_P(t).
func (a *recAlt) winProb(s *recState, t float64) float64 {
	st := survAt(&s.survP, t)
	if !(st > 0) {
		return 0
	}
	w, prev := 0.0, 1.0
	for i := range recBins {
		mass := prev - float64(a.survA[i])
		prev = float64(a.survA[i])
		if mass > 0 {
			w += mass * survAt(&s.survP, t+recUpper(i))
		}
	}
	return min(w/st, 1)
}

// check holds the hedges to what they did (phase 5) and reports whether
// they may go on at the chosen threshold: with MinSamples of hedges in
// a's ledger, not when they did not win — less than one of them won
// where the estimate expected at least two — nor when those that won
// saved less than they cost: an expected saving per hedge (not per win:
// hedges that never win save nothing) below MinGain × the primary's
// median (ms; the median, not the unhedged quantile, which
// one slow answer among cancelled primaries can make seconds). A finer test of wins against the
// estimate's expectation stopped hedges that were the remedy where the
// estimate lags the world (rate-surge-10x-queueing: a queue building).
func (p *Recommended) check(s *recState, a *recAlt) bool {
	if a.hedges < p.cfg.MinSamples {
		return true
	}
	lost := a.wins < 1 && a.expWins >= recLostWins
	// Where the hedges' wins cancelled most primaries, the primary's median
	// is unknown (+Inf, past its last answer): wins are then no evidence
	// of a small gain (primary-slow: 37 of 37 hedges won ~4 s each, and
	// the comparison with +Inf stopped hedging for a memory).
	med := quantileOf(&s.survP, 0.5)
	small := !math.IsInf(med, 1) && a.gain/a.hedges < p.cfg.MinGain*med
	return !lost && !small
}

// heard is the weight of a's legs that answered (ended legs less those
// that never answered: the top bin of aU), as failing and probeLearns
// read "has the alternate been heard from".
func (a *recAlt) heard() float64 { return weight(&a.aU) - float64(a.aU[recBins-1]) }
