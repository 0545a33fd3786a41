package threshold_test

import (
	"testing"
	"time"
)

// A far primary whose every read answers in 245 to 252 ms and an
// alternate that answers in 86 ms (population seed 1796189285, member 15:
// reads at a region 240 ms away, failing over at once to one 81 ms away
// being the remedy). A probe sent at the primary's 90th percentile or at
// its floor is cancelled a few ms after it leaves, so the alternate was
// never seen to answer and stayed "as far as the primary again": no hedge
// for the whole run. The floor probe, sent with the primary, sees the
// alternate answer; the alternate region, faster than the primary's
// floor, lifts the prior's half cap; and within a few seconds at 185
// reads/s the key hedges early enough to win.
func TestRecommendedFloorProbeSeesANearerAlternate(t *testing.T) {
	p := newRec(t)
	narrow := func(i int) (time.Duration, time.Duration) {
		return time.Duration(245+i%8) * time.Millisecond, 86 * time.Millisecond
	}
	const gap = 5400 * time.Microsecond // 185 reads/s
	_, now := recRun(p, 0, 1500, gap, narrow, 0)
	hedged, won := 0, 0
	for i := range 200 {
		pl, al := narrow(i)
		h, lat := recPlay(p, now+time.Duration(i)*gap, pl, al)
		if h {
			hedged++
		}
		if lat < 200*time.Millisecond {
			won++
		}
	}
	if won < 180 {
		t.Errorf("after 8 s: %d of 200 reads answered under 200 ms (%d hedged); want at least 180: the alternate answers in 86 ms", won, hedged)
	}
}

// deepMode is a near primary (3 to 38 ms, p99 ~36 ms) with one read in
// 500 in a slow mode at 300 ms, past its p99 but inside its p99.9, over a
// cycle of 1000 operations.
func deepMode(i int) time.Duration {
	u := (float64(i%1000) + 0.5) / 1000
	switch {
	case u >= 0.998:
		return 300 * time.Millisecond
	case u < 0.9:
		return time.Duration((3 + 5*u/0.9) * float64(time.Millisecond))
	default:
		return time.Duration((8 + 30*(u-0.9)/0.098) * float64(time.Millisecond))
	}
}

// A slow mode past the p99 (deepMode) and an alternate 89 ms away
// (population seed 1796189285, member 98): judged at the p99 alone no
// threshold pays (T + 89 ms is past the whole body) and the backstop,
// twice the p99 (~72 ms), left the p99.9 at 72 + 89 ms where a static
// 50 ms threshold gives 139 at a lower hedge rate. Judged at the p99.9
// too, the threshold is below 50 ms.
func TestRecommendedSlowModePastTheP99IsHedgedForTheP999(t *testing.T) {
	p := newRec(t)
	const al = 89 * time.Millisecond
	now := time.Duration(0)
	for i := range 20000 {
		recPlay(p, now, deepMode(i), al)
		now += 2 * time.Millisecond
	}
	th, ok := recAsk(p, now, 0)
	if !ok || th.Get() > 50*time.Millisecond {
		t.Errorf("threshold %v, %v; want a hedge at 50 ms or less", th.Get(), ok)
	}
}
