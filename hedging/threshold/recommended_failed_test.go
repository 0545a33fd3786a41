package threshold_test

import (
	"testing"
	"time"
)

// (The test is policy7's, /tmp/p7w/gate-full.patch.)
//
// An alternate in a fault window from the start: every hedge's alternate
// leg fails (transient answers only), so no hedge wins, and a primary
// with one read in 150 at 100 ms (past the backstop, twice the p99, so
// the backstop alone would hedge 0.67% of reads).
// The failed legs are evidence that the alternate does not answer, not
// that its answer time is known: the estimated win probability of every
// hedge is ~0, below what the ledger's lost rule can test, so only the
// probe budget is spent: one operation in Probe (100) carries a probe,
// and about a tenth of the 90th-percentile ones and nearly every floor
// one send a hedge: ~0.2% of reads, bounded here at 0.25% (the backstop
// hedged 0.39% before; population seed 1796181777, member 28: 94
// backstop hedges and 50 cold ones, none won, each estimated at 0).
func TestRecommendedAlternateThatOnlyFailsGetsOnlyProbes(t *testing.T) {
	p := newRec(t)
	w := func(i int) (time.Duration, time.Duration) {
		if i%150 == 0 {
			return 100 * time.Millisecond, -5 * time.Millisecond
		}
		return body(i), -5 * time.Millisecond
	}
	_, now := recRun(p, 0, 10000, time.Millisecond, w, 0)
	const n = 40000
	hedged, _ := recRun(p, now, n, time.Millisecond, func(i int) (time.Duration, time.Duration) { return w(i + 10000) }, 0)
	if budget := n / 400; hedged > budget {
		t.Errorf("hedged %d of %d reads to an alternate that only fails, want at most the probe budget %d", hedged, n, budget)
	}
}
