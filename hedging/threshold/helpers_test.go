package threshold_test

import (
	"time"

	"hedgelab/hedging"
)

// observe tells p of one ended point read whose primary, in region, answered
// after lat (the way the race reports it).
func observe(p hedging.ThresholdPolicy, now time.Duration, region hedging.Region, lat time.Duration) {
	p.Observe(now, hedging.Observation{Event: hedging.OperationEnded, Primary: region, Kind: hedging.PointRead, Latency: lat,
		Legs: [2]hedging.LegEnd{{Region: region, Outcome: hedging.LegAnswered, Elapsed: lat}}, Won: true})
}

// supersede tells p of one ended point read whose primary, in region, was
// cancelled after elapsed (its alternate, in "B", won).
func supersede(p hedging.ThresholdPolicy, now time.Duration, region hedging.Region, elapsed time.Duration) {
	p.Observe(now, hedging.Observation{Event: hedging.OperationEnded, Primary: region, Alternate: "B", Kind: hedging.PointRead, Latency: elapsed,
		Legs: [2]hedging.LegEnd{{Region: region, Outcome: hedging.LegCancelled, Elapsed: elapsed}}, Won: true, Winner: hedging.Alternate})
}

// thr returns p's threshold for a point read with primary region (and
// alternate "B"), no deadline.
func thr(p hedging.ThresholdPolicy, now time.Duration, region hedging.Region) hedging.Threshold {
	t, _ := p.Threshold(now, hedging.ThresholdQuery{Primary: region, Alternate: "B", Kind: hedging.PointRead})
	return t
}

// started and admit drive a gate as the race does at an operation's start
// and when its threshold fires; spawned reports an alternate sent for cause.
func started(g hedging.HedgeGate, now time.Duration) {
	g.Observe(now, hedging.Observation{Event: hedging.OperationStarted, Primary: "A", Kind: hedging.PointRead})
}

func admit(g hedging.HedgeGate, now time.Duration) bool {
	return g.Admit(now, hedging.Admission{Primary: "A", Kind: hedging.PointRead})
}

func spawned(g hedging.HedgeGate, now time.Duration, cause hedging.SpawnCause) {
	g.Observe(now, hedging.Observation{Event: hedging.AlternateSent, Primary: "A", Kind: hedging.PointRead, Cause: cause})
}
