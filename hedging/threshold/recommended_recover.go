package threshold

// Recovering an alternate the probes cannot hear: probes that race the
// whole primary, and no half cap on a nearer alternate's thin evidence.

import (
	"math"
	"time"
)

// recRace is the threshold of a probe that races the whole primary: the
// first bin's lower edge, recLo (the operation's start).
const recRace = time.Duration(recLo * float64(time.Millisecond))

// racing returns a's probe thresholds (probeT at the primary's 90th
// percentile, floorT at its floor, as probeBudget sets them), with those
// that cannot be answered sent at once instead (recRace): the floor
// probe while a is unheard ([Recommended.unheard]: no leg answered, no
// floor for the pair) behind a far primary — its floor fp more than half
// its 90th percentile, so that racing from the start more than doubles
// the floor probe's depth (from the floor to the 90th percentile, about
// what the floor probe's leg can run before its primary answers; behind
// a near primary a probe at once runs little longer than one at the
// floor, and only costs what its leg is charged) — its legs are not mostly failures (more than
// half the weight of its ended legs failed: failing's rule, for which
// probes at once would only fail sooner) and none was cut off by the
// deadline (aD below one leg's weight: an alternate that ran unanswered
// until the deadline cannot answer in the time left, and a probe at once
// runs that long again, charged in full: population seed 1796229837,
// member 0, a 52 ms operation timeout and an alternate 149 ms away, RU
// +2.9 points over disabled); both probes while a is nearer
// (the pair's floor under half the primary's median) and fewer than
// MinSamples of its legs answered. A probe at the 90th percentile or the
// floor is answered only by an alternate that answers within the
// primary's spread above it; where the primary is a far region whose
// answers span a few ms (a tight round trip), no such probe is ever
// answered by an alternate nearer than it: every probe leg is cancelled
// a few ms in, the alternate stays unheard (choose lets no threshold pay
// on the prior's word) or its evidence never reaches MinSamples, and the
// backstop stands for good. Sent at once, a probe races the alternate
// against the whole primary: a nearer alternate answers it, which gives
// the pair a floor and prices the prior by the real distance (estimate),
// and its answers then build the evidence; an alternate no nearer than
// the primary is cancelled when the primary answers, after running the
// primary's whole latency, and probeLearns stops such probes once their
// cancelled legs say so (until they age). The unheard floor probe costs
// what the floor probe cost (it fires on nearly every turn it has: few
// primaries answer below the floor), one operation in 10 × Probe; the
// nearer alternate's 90th-percentile probes fire on every turn, one
// operation in Probe (not about one in ten of them), until MinSamples
// answered. Population seed 1796229837: member 113 (a primary 239 ms
// away answering within ~25 ms of its floor, an alternate 87 ms away:
// unheard for the whole run, read p99 262 ms where static-50ms has 141);
// member 122 (reads failed over to a region ~243 ms away answering within
// 12 ms of its median, an alternate ~12 ms away, unheard for the whole
// run); member 56 (a primary slowed to ~340 ms for its first 3.4 s, an
// alternate 110 ms away: unheard).
func (p *Recommended) racing(now time.Duration, s *recState, a *recAlt, probeT, floorT time.Duration) (time.Duration, time.Duration) {
	if p.nearer(now, s, a) && a.heard() < p.cfg.MinSamples {
		return recRace, recRace
	}
	ended := weight(&a.aU) + weight(&a.aC)
	fp := s.region.prim.get(now, p.cfg.MaxMemory/2)
	if p.unheard(now, s, a) && 2*fp > msOf(probeT) && !math.IsInf(fp, 1) && !(2*a.failed > ended) && weight(&a.aD) < 1 {
		return probeT, recRace
	}
	return probeT, floorT
}

// nearer reports whether the pair's floor — the fastest answer of
// alternate a to the primary region's keys in the last one to two
// MaxMemory/2 windows — is under half the key's primary median: the
// primary is the far region (reads failed over from their home region,
// or a home region far away), as cold reads the alternate's median or
// its floor as a primary. choose then does not cap the hedge rate at
// half while the alternate's evidence is thin: the cap guards against
// the prior's word, and here an answer has priced the prior by a distance
// under half the primary's; a hedge at the primary's median, all that
// the cap allows, races a primary within its spread of its median, so
// that no threshold pays at the quantile where the primary's answers span
// a few ms (members 113 and 122 of racing: once heard, the backstop
// stood until the run's end). The ledger (check) holds these hedges to
// account as any: MinSamples of hedges with no win where two were
// expected stop them.
func (p *Recommended) nearer(now time.Duration, s *recState, a *recAlt) bool {
	fa := s.region.altFloor(now, a.region).get(now, p.cfg.MaxMemory/2)
	med := quantileOf(&s.survP, 0.5)
	return !math.IsInf(fa, 1) && !math.IsInf(med, 1) && 2*fa < med
}
