package threshold

import (
	"testing"
	"time"

	"hedgelab/hedging"
)

// warmKey returns a policy whose key (primary "A", alternate "B", point
// reads) has seen n primaries answer at lat(i), one every gap, and no
// hedge, and the time after the last.
func warmKey(t *testing.T, n int, gap time.Duration, lat func(i int) time.Duration) (*Recommended, time.Duration) {
	t.Helper()
	p, err := NewRecommended(RecommendedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Duration(0)
	for i := range n {
		l := lat(i)
		o := hedging.Observation{Event: hedging.OperationEnded, Primary: "A", Alternate: "B", Kind: hedging.PointRead, Latency: l, Won: true}
		o.Legs[hedging.Primary] = hedging.LegEnd{Region: "A", Outcome: hedging.LegAnswered, Elapsed: l}
		p.Observe(now+l, o)
		now += gap
	}
	return p, now
}

// steadyMs is a near primary's latency: 3 to 15 ms over a cycle of 97
// reads (median ~6 ms, p99 ~15 ms).
func steadyMs(i int) time.Duration {
	x := float64(i%97) / 96
	return time.Duration((3 + 12*x*x*x) * float64(time.Millisecond))
}

// The backstop is insurance, not a hedge rate: with 25 ms left and an
// unknown alternate it stood at 2 × the p99 (~30 ms), past the deadline,
// and §5.2's half of the time left lowered it to 12.5 ms, inside the
// primary's tail, hedging every read slower than that (population seed
// 1796189285, member 50: 1599 hedges at half a 64 ms timeout, none won).
// Past the time left it is not sent; within it, it keeps its value.
func TestInsuranceIsNotHalvedByTheDeadline(t *testing.T) {
	p, now := warmKey(t, 20000, time.Millisecond, steadyMs)
	q := hedging.ThresholdQuery{Primary: "A", Alternate: "B", Kind: hedging.PointRead, Remaining: 25 * time.Millisecond}
	sent := 0
	for i := range 50 {
		if th, ok := p.Threshold(now+time.Duration(i)*time.Millisecond, q); ok && th.Get() < 15*time.Millisecond {
			sent++
		}
	}
	// Probes (one in Probe operations) may go; nothing else.
	if sent > 1 {
		t.Errorf("25 ms left, backstop ~30 ms: %d of 50 reads armed below 15 ms, want none but a probe", sent)
	}
	q.Remaining = 200 * time.Millisecond
	th, ok := p.Threshold(now+time.Second, q)
	if !ok || th.Get() < 25*time.Millisecond || th.Get() > 40*time.Millisecond {
		t.Errorf("200 ms left: threshold %v, %v; want the backstop, ~2 × the p99", th, ok)
	}
}
