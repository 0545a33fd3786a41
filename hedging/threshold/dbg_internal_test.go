package threshold

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"hedgelab/hedging"
)

func TestDbgInternal(t *testing.T) {
	p, _ := NewRecommended(RecommendedConfig{})
	rng := rand.New(rand.NewPCG(1, 2))
	ln := func() float64 { return 2 * math.Exp(rng.NormFloat64()*math.Log(3)/2.326) }
	now := time.Duration(0)
	for i := range 200000 {
		pl := time.Duration((1 + ln()) * float64(time.Millisecond))
		al := time.Duration((8 + ln()) * float64(time.Millisecond))
		th, ok := p.Threshold(now, hedging.ThresholdQuery{Primary: "A", Alternate: "B", Kind: hedging.PointRead})
		o := hedging.Observation{Event: hedging.OperationEnded, Primary: "A", Alternate: "B", Kind: hedging.PointRead, Won: true, Latency: pl}
		o.Legs[0] = hedging.LegEnd{Region: "A", Outcome: hedging.LegAnswered, Elapsed: pl}
		end := pl
		if ok && th.Get() < pl {
			o.Cause, o.Threshold = hedging.SpawnThreshold, th
			if th.Get()+al < pl {
				end = th.Get() + al
				o.Winner = hedging.Alternate
				o.Legs[0] = hedging.LegEnd{Region: "A", Outcome: hedging.LegCancelled, Elapsed: end}
				o.Legs[1] = hedging.LegEnd{Region: "B", Outcome: hedging.LegAnswered, Elapsed: al}
			} else {
				o.Legs[1] = hedging.LegEnd{Region: "B", Outcome: hedging.LegCancelled, Elapsed: pl - th.Get()}
			}
		}
		o.Latency = end
		p.Observe(now+end, o)
		now += time.Millisecond
		if i%20000 == 0 {
			s := p.keys[recKey{"A", hedging.PointRead}]
			a := s.alts[0]
			t.Logf("%d hedge %v t %v probe %v floor %v altMed %v aU %.1f aC %.1f hedges %.1f wins %.1f exp %.1f  A50 %.2f P50 %.2f P99 %.2f", i, a.hedge, a.t, a.probeT, a.floorT, a.altMed, weight(&a.aU), weight(&a.aC), a.hedges, a.wins, a.expWins, quantileOf(&a.survA, 0.5), quantileOf(&s.survP, 0.5), quantileOf(&s.survP, 0.99))
		}
	}
}
