package threshold

// The prior of an alternate never heard from, held to the legs it was
// sent: RU spent on the prior's word.

import (
	"math"
	"time"
)

// priorOdds returns the weight the prior keeps in estimate's blend for an
// alternate that has never answered (heard below one leg): the
// likelihood, under the prior, of what its cancelled legs did — each ran
// its elapsed time without an answer, which the prior gives the chance of
// its survival there (at the lower edge of the leg's bin, so the leg ran
// at least that long); the legs the deadline cut off (aD) ran unanswered
// as long, and count alike. The blend then weighs the prior as a hypothesis
// against the evidence, (1-f)·L against f, instead of at (1-f) however
// often it was wrong: a prior that says the alternate answers within
// ~2.6 ms (the primary's faster half, shifted by its median while the
// pair has no floor) is refuted by one leg that ran 5 ms unanswered.
// Twelve fleet instances each hedged ~25 reads at 3-5 ms to an
// alternate 222 ms away, none answered, every leg cancelled by the
// primary within ~12 ms, and no ledger reached MinSamples to veto them
// (population seed 1796189285, member 56: +3.7 RU points for no gain).
// Once the alternate has answered, the pair's floor prices the prior by
// its real distance and L is 1: the blend is as before. prior(i) is the
// prior's survival past bin i (estimate's).
func (a *recAlt) priorOdds(prior func(int) float32) float64 {
	if a.heard() >= 1 {
		return 1
	}
	logL := 0.0
	for j := range recBins {
		c := float64(a.aC[j]) + float64(a.aD[j])
		if c <= 0 {
			continue
		}
		s := 1.0 // survival at the lower edge of bin j (bin 0: from 0)
		if j > 0 {
			s = float64(prior(j - 1))
		}
		if !(s > 0) {
			return 0
		}
		logL += c * math.Log(s)
	}
	return math.Exp(logL)
}

// belowPrior reports whether a cold key's threshold, as Threshold sends
// it, fires below the conservative prior (Initial): at Cold × the median,
// or at the prior halved to half the time left, §5.2's rule while the
// alternate is unknown. Under a deadline shorter than twice Initial the
// prior is not what fires: half the time left is, on every primary
// slower than that, to an alternate no answer has shown can answer in
// the other half. cold then treats it as it treats Cold × the median:
// once hedges have gone and none got a final answer, only the probe
// budget hedges (population seed 1796189285, member 50: a 64 ms
// operation timeout, every alternate 95 ms or more away; fourteen fleet
// instances each still cold, ~460 hedges at ~32 ms in three
// replications, none won).
func (p *Recommended) belowPrior(s *recState, a *recAlt) bool {
	t := a.t
	if s.deadline > 0 {
		t = min(t, s.deadline/2)
	}
	return t < p.cfg.Initial
}

// blind reports whether a cold key's hedge to alternate a would repeat a
// guess whose outcome is not yet known: the key is still cold, no leg to
// a has answered (heard below one), and one of its threshold hedges to a
// is in flight (sent, not yet ended). Until that hedge ends, the evidence
// holds nothing of a that the next hedge would be sent on — the prior,
// or Cold × a median of a few answers — so it waits: one blind hedge in
// flight at a time, and what the first one met (an answer, a deadline, a
// cancellation) decides the rest. Probes are not held (the probe budget
// is already one in Probe). A burst into a cold key otherwise hedges
// every slow primary before any hedge has reported: population seed
// 1796189285, member 50, fourteen fleet instances each hedged ~10 reads
// at ~32 ms within their first ~100 ms to alternates 95 ms or more away
// under a 64 ms timeout, none won.
func (p *Recommended) blind(s *recState, a *recAlt, probing bool) bool {
	return !s.warmed && !probing && a.inFlight > 0 && a.heard() < 1
}

// unheard reports whether alternate a has never been heard from by this
// client: no leg to it answered in the key's evidence (heard below one)
// and no key of the primary region has a floor for it (no answer in the
// last one to two MaxMemory/2 windows). Its answer time is then the
// prior's guess — the primary's faster half, shifted by the primary's
// median, "as far again as the primary" — which no answer has priced,
// and choose does not let that guess make a threshold pay: it keeps the
// backstop, and the probe budget is what learns the alternate. Once a leg
// answers, the pair's floor prices the prior by the real distance.
// Twelve fleet instances each hedged ~20 reads at 3-5 ms on the prior's
// word to an alternate 222 ms away; none was answered, every leg was
// cancelled by a primary within ~12 ms (population seed 1796189285,
// member 56: +3.7 RU points over every other policy for no gain).
func (p *Recommended) unheard(now time.Duration, s *recState, a *recAlt) bool {
	return a.heard() < 1 && math.IsInf(s.region.altFloor(now, a.region).get(now, p.cfg.MaxMemory/2), 1)
}

// warmProbe reports whether the threshold Threshold is about to send is a
// warm key's probe: it keeps its own value under a deadline, as
// insurance does, and is not sent at or past the time left. A probe is
// one operation in Probe hedged at the primary's 90th percentile (about
// a tenth of probe turns fire) or at its floor; §5.2's half of the time
// left turns the 90th-percentile probe, where the deadline is nearer
// than it, into a hedge of every probe turn whose primary is slower than
// half the time left — under a deadline that fails most reads, most of
// them — to an alternate no evidence says answers in the other half
// (population seed 1796189285, member 50: a 64 ms operation timeout,
// probes at ~96 ms sent at 32 ms, ~155 in three replications, none
// won). The floor probe, at the primary's fastest answer, still learns
// the alternate where the 90th percentile is past the deadline. A cold
// key's first probe is the prior's and is halved as the prior is.
func warmProbe(s *recState, probing bool) bool { return probing && s.warmed }
