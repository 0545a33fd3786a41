package threshold

import (
	"math"
	"time"
)

// unheard reports whether nothing says how fast alternate a answers: no
// leg to it has answered in the key's evidence (its never-answered bin
// aside) and the region pair has no floor in the last one to two
// MaxMemory/2 windows (no answer from a over any operation kind). Its
// answer time is then the prior's alone — the primary's faster half
// shifted by the primary's median, "another region, as far again" — and
// a threshold chosen on it is a guess at a hedge rate, not a threshold
// the evidence shows to pay: a far alternate (222 ms away, the primary's
// p99 ~17 ms) was read as answering in ~5 ms, and the cancelled hedges
// say only "slower than this", so the key chose thresholds of ~5 ms
// hedging 5-25% of reads, none winning (population seed 1796189285,
// member 56, a fleet of 12 whose ledgers each held too few hedges to
// fail). While unheard, choose sets no threshold that hedges (the
// backstop stands), and the probe budget, the cold phase and the
// backstop are what send the alternate until it first answers. Its cost
// is where the prior was right: a near alternate whose probes go
// unanswered for seconds goes unhedged that long (member 39 of that
// seed).

func (p *Recommended) unheard(now time.Duration, s *recState, a *recAlt) bool {
	heard := weight(&a.aU) - float64(a.aU[recBins-1])
	return heard <= 0 && math.IsInf(s.region.altFloor(now, a.region).get(now, p.cfg.MaxMemory/2), 1)
}
