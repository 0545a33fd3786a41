package hedging

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The tracker's table and its keyed bits hold their invariants through
// any sequence of wins and primary finals on up to 60 partitions × 2
// regions (more pairs holding a streak at once than the streakers list
// holds, so the counts take over and hand back): every used slot is found
// from its hash (linear probing unbroken by reuse and rebuilds), nslots
// counts the used slots, the table is a power of two at most 3/4 used,
// and hot.keyed has exactly the bits of the buckets of the pairs holding a
// streak or a trip, with nstreaks and ntripped their numbers.
func TestTrackerTableInvariants(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		span := time.Duration(rapid.SampledFrom([]int{0, 50, 1000}).Draw(rt, "span_ms")) * time.Millisecond
		tr := newHedgeWinTracker(rapid.IntRange(1, 6).Draw(rt, "threshold"), time.Duration(rapid.IntRange(1, 3000).Draw(rt, "probe_ms"))*time.Millisecond, span)
		nparts := rapid.IntRange(1, 60).Draw(rt, "partitions")
		var now time.Duration
		for i := range rapid.IntRange(1, 300).Draw(rt, "steps") {
			now += time.Duration(rapid.IntRange(0, 400).Draw(rt, fmt.Sprintf("dt%d", i))) * time.Millisecond
			p := fmt.Sprintf("p%d", rapid.IntRange(0, nparts-1).Draw(rt, fmt.Sprintf("part%d", i)))
			r := Region(rapid.SampledFrom([]string{"East US", "West US"}).Draw(rt, fmt.Sprintf("region%d", i)))
			if rapid.IntRange(0, 2).Draw(rt, fmt.Sprintf("event%d", i)) > 0 {
				tr.recordHedgeWin(tr.hot, now, p, r)
			} else {
				tr.recordPrimaryFinal(tr.hot, now, p, r)
			}
			n := len(tr.slots)
			if n&(n-1) != 0 || (n > 0 && n < minPairSlots) {
				rt.Fatalf("step %d: a table of %d slots", i, n)
			}
			var used, streaks, tripped int
			var keyed uint64
			for j := range tr.slots {
				s := &tr.slots[j]
				if !s.used {
					continue
				}
				used++
				if tr.lookup(s.partition, s.region) != s {
					rt.Fatalf("step %d: slot %d (%s, %s) is not found from its hash", i, j, s.partition, s.region)
				}
				if s.streak() {
					streaks++
					keyed |= 1 << pairBucket(s.partition, s.region)
				}
				if s.tripped {
					tripped++
				}
			}
			if used != tr.nslots || used*4 > n*3 {
				rt.Fatalf("step %d: %d used slots of %d, nslots %d", i, used, n, tr.nslots)
			}
			if got := tr.hot.keyed.Load(); got != keyed {
				rt.Fatalf("step %d: keyed bits %#x, the streaks' buckets %#x (%d streaks, streakers mode %d)", i, got, keyed, streaks, tr.nstreakers)
			}
			if int(tr.hot.nstreaks.Load()) != streaks || int(tr.hot.ntripped.Load()) != tripped {
				rt.Fatalf("step %d: nstreaks %d ntripped %d, the table %d and %d", i, tr.hot.nstreaks.Load(), tr.hot.ntripped.Load(), streaks, tripped)
			}
		}
	})
}
