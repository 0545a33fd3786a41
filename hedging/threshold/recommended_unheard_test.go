package threshold

import (
	"math"
	"testing"
	"time"

	"hedgelab/hedging"
)

// heavyMs is a primary with a heavier tail: lognormal, median 2.5 ms,
// p99 17 ms (member 56's primary).
func heavyMs(i int) time.Duration {
	u := (float64(i%97) + 0.5) / 97
	z := math.Sqrt2 * math.Erfinv(2*u-1)
	return time.Duration(2.5 * math.Exp(z*math.Log(17/2.5)/2.326) * float64(time.Millisecond))
}

// An alternate no leg has answered, and whose region has no floor, is
// known only by the prior; a threshold chosen on the prior alone is a
// guess. Twelve fleet instances (each a policy of its own) see 400 reads
// each of a heavy-tailed primary (median 2.5 ms, p99 17 ms) whose
// alternate answers 222 ms after it is sent, so every hedge is
// cancelled: the prior took the alternate to answer in ~5 ms and hedged
// 5-25% of reads until its ledger (too few hedges to fail) said
// otherwise (population seed 1796189285, member 56). Only the cold
// phase, the probes and the backstop may send it: about 1.5% of reads.
func TestUnheardAlternateGetsNoThreshold(t *testing.T) {
	hedged, n := 0, 0
	for range 12 {
		p, err := NewRecommended(RecommendedConfig{})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Duration(0)
		for i := range 400 {
			pl := heavyMs(i * 7)
			th, ok := p.Threshold(now, hedging.ThresholdQuery{Primary: "A", Alternate: "B", Kind: hedging.PointRead})
			o := hedging.Observation{Event: hedging.OperationEnded, Primary: "A", Alternate: "B", Kind: hedging.PointRead, Latency: pl, Won: true}
			o.Legs[hedging.Primary] = hedging.LegEnd{Region: "A", Outcome: hedging.LegAnswered, Elapsed: pl}
			if ok && th.Get() < pl {
				hedged++
				o.Threshold, o.Cause = th, hedging.SpawnThreshold
				o.Legs[hedging.Alternate] = hedging.LegEnd{Region: "B", Outcome: hedging.LegCancelled, Elapsed: pl - th.Get()}
			}
			p.Observe(now+pl, o)
			now += 55 * time.Millisecond
			n++
		}
	}
	if hedged > n*15/1000 {
		t.Errorf("hedged %d of %d reads to an alternate never heard from, want at most 1.5%%", hedged, n)
	}
}
