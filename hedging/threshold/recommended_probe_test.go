package threshold

import (
	"testing"
	"time"

	"hedgelab/hedging"
)

// A far alternate's probes that only repeat "slower than this": the
// primary answers 176-179 ms after it is sent (a region ~176 ms away),
// the alternate 228 ms after its hedge, so every probe at the primary's
// 90th percentile (the lower edge of its bin, ~173 ms) is cancelled
// within ~6 ms. Once enough of them ran that long, a probe is answered
// less often than the ledger's reach (by probeLearns' bound), and the
// probe budget (~1% of reads, nearly every probe firing here) is spent
// only as the cancelled legs age: population seed 1796189285, member
// 13, 275 probes and none answered.
func TestProbesThatCannotLearnStop(t *testing.T) {
	p, err := NewRecommended(RecommendedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	hedged := 0
	now := time.Duration(0)
	const n, from = 60000, 20000
	for i := range n {
		pl := 176*time.Millisecond + time.Duration(i%97)*3*time.Millisecond/97
		th, ok := p.Threshold(now, hedging.ThresholdQuery{Primary: "A", Alternate: "B", Kind: hedging.PointRead})
		o := hedging.Observation{Event: hedging.OperationEnded, Primary: "A", Alternate: "B", Kind: hedging.PointRead, Latency: pl, Won: true}
		o.Legs[hedging.Primary] = hedging.LegEnd{Region: "A", Outcome: hedging.LegAnswered, Elapsed: pl}
		if ok && th.Get() < pl {
			if i >= from {
				hedged++
			}
			o.Threshold, o.Cause = th, hedging.SpawnThreshold
			o.Legs[hedging.Alternate] = hedging.LegEnd{Region: "B", Outcome: hedging.LegCancelled, Elapsed: pl - th.Get()}
		}
		p.Observe(now+pl, o)
		now += time.Millisecond
	}
	// Nearly every probe fires here: the budget is ~1% of reads (400 of
	// 40000; 360 sent before the rule). Once the evidence says a probe is
	// answered less often than the ledger's reach, at most half of it.
	if budget := (n - from) / 200; hedged > budget {
		t.Errorf("hedged %d of the last %d reads to an alternate no probe can see answer, want at most %d (half the probe budget)", hedged, n-from, budget)
	}
}
