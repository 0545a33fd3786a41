package threshold_test

import (
	"math"
	"runtime"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/threshold"
)

// A fresh instance starts at the conservative prior (350 ms), and where
// the alternate is no faster than a steady primary no threshold gains:
// once it has learned the alternate (probes, 1 in 100 while unknown) it
// hedges at most ~1% (far primary 200 ms away, every hedge loses).
func TestRecommendedDeclinesWhereNoThresholdGains(t *testing.T) {
	p, err := threshold.NewRecommended(threshold.RecommendedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if th, ok := p.ThresholdOp(0, "A", hedging.PointRead, 0); !ok || th.Get() != 350*time.Millisecond {
		t.Fatalf("fresh instance: threshold %v, %v; want 350ms (the conservative prior)", th, ok)
	}
	now := time.Duration(0)
	hedged := 0
	for i := range 20000 {
		now += time.Millisecond
		th, ok := p.ThresholdOp(now, "A", hedging.PointRead, 0)
		lat := 200*time.Millisecond + time.Duration(i%7)*time.Millisecond/10
		if ok && th.Get() < lat {
			hedged++
			p.AttemptEnded(now, hedging.AttemptEnd{Primary: "A", Region: "B", Leg: hedging.Alternate, Elapsed: lat - th.Get() + time.Millisecond, Answered: false})
		}
		p.AttemptEnded(now, hedging.AttemptEnd{Primary: "A", Region: "A", Leg: hedging.Primary, Elapsed: lat, Answered: true})
	}
	if hedged > 200 || hedged == 0 {
		t.Errorf("hedged %d of 20000 steady 200 ms reads, want a few probes, at most 1%%", hedged)
	}
	if _, err := threshold.NewRecommended(threshold.RecommendedConfig{Quantile: 1.5}); err == nil || err.Error() != "recommended: quantile must be in (0,1), got 1.5" {
		t.Errorf("Quantile 1.5: %v", err)
	}
}

// BenchmarkRecommendedBytesPerInstance reports the bytes one instance's
// policy allocates to learn one (primary region, operation kind) key: its
// whole state, which does not grow afterwards.
func BenchmarkRecommendedBytesPerInstance(b *testing.B) {
	const n = 200
	ps := make([]*threshold.Recommended, n)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range b.N {
		for i := range ps {
			ps[i], _ = threshold.NewRecommended(threshold.RecommendedConfig{})
			ps[i].AttemptEnded(0, hedging.AttemptEnd{Primary: "A", Region: "A", Elapsed: time.Millisecond, Answered: true})
		}
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(n*b.N), "bytes/instance")
	runtime.KeepAlive(ps)
}

// recDrive plays n operations of primary region A against p, one every gap
// from start, as the race does: the primary answers after lat(i); when the
// threshold is below that, the alternate is sent and answers alt later,
// and the slower leg is cancelled. It returns how many of the operations
// from index from on were hedged, and the time after the last.
func recDrive(p *threshold.Recommended, start time.Duration, n int, gap time.Duration, lat func(i int) time.Duration, alt time.Duration, from int) (hedged int, end time.Duration) {
	for i := range n {
		now := start + time.Duration(i)*gap
		th, ok := p.ThresholdOp(now, "A", hedging.PointRead, 0)
		pl := lat(i)
		if !ok || th.Get() >= pl {
			p.AttemptEnded(now+pl, hedging.AttemptEnd{Primary: "A", Region: "A", Kind: hedging.PointRead, Elapsed: pl, Answered: true})
			continue
		}
		if i >= from {
			hedged++
		}
		t := th.Get()
		if t+alt < pl {
			p.AttemptEnded(now+t+alt, hedging.AttemptEnd{Primary: "A", Region: "B", Kind: hedging.PointRead, Leg: hedging.Alternate, Elapsed: alt, Answered: true})
			p.AttemptEnded(now+t+alt, hedging.AttemptEnd{Primary: "A", Region: "A", Kind: hedging.PointRead, Elapsed: t + alt})
		} else {
			p.AttemptEnded(now+pl, hedging.AttemptEnd{Primary: "A", Region: "A", Kind: hedging.PointRead, Elapsed: pl, Answered: true})
			p.AttemptEnded(now+pl, hedging.AttemptEnd{Primary: "A", Region: "B", Kind: hedging.PointRead, Leg: hedging.Alternate, Elapsed: pl - t})
		}
	}
	return hedged, start + time.Duration(n)*gap
}

// body returns a steady near primary's latency: 3 to 15 ms over a cycle
// of 97 operations (median ~6 ms, p99 ~15 ms).
func body(i int) time.Duration {
	x := float64(i%97) / 96
	return time.Duration((3 + 12*x*x*x) * float64(time.Millisecond))
}

// A fresh key has the prior of 350 ms (the longest median round trip
// between two Azure regions), half the time left when the deadline is
// nearer (§5.2's rule on what remains), and once its alternate has answered
// in 13 ms a primary that has not answered in 363 ms (a primary slow from
// the first read, feed-metadata-latest's stale page) is hedged at twice the
// alternate's median, not after the prior again.
func TestRecommendedColdKeyEvidence(t *testing.T) {
	p, err := threshold.NewRecommended(threshold.RecommendedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if th, ok := p.ThresholdOp(0, "A", hedging.PointRead, 0); !ok || th.Get() != 350*time.Millisecond {
		t.Fatalf("fresh key: threshold %v, %v; want 350ms", th, ok)
	}
	if th, ok := p.ThresholdOp(0, "A", hedging.PointRead, 400*time.Millisecond); !ok || th.Get() != 200*time.Millisecond {
		t.Errorf("fresh key, 400 ms left: threshold %v, %v; want 200ms (half the time left)", th, ok)
	}
	slow := func(int) time.Duration { return 2 * time.Second }
	if h, _ := recDrive(p, 0, 1, time.Second, slow, 13*time.Millisecond, 0); h != 1 {
		t.Fatalf("the first 2 s read was not hedged at the prior")
	}
	th, ok := p.ThresholdOp(time.Second, "A", hedging.PointRead, 0)
	if !ok || th.Get() < 26*time.Millisecond || th.Get() > 30*time.Millisecond {
		t.Errorf("after a primary cancelled at 363 ms and an alternate answer in 13 ms: threshold %v, %v; want ~2 × 13 ms", th, ok)
	}
}

// The warm-up by time (at least 2 × the largest answer) guards the first
// estimate against survivor bias, once: a warm key that sees one read
// answer after 2 s (an explored read behind a slow leaf) keeps its
// threshold (the backstop, 2 × p99 ≈ 30 ms) instead of going cold for 4 s
// at Cold × the median (~45 ms).
func TestRecommendedStaysWarmAfterASlowAnswer(t *testing.T) {
	p, err := threshold.NewRecommended(threshold.RecommendedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	_, now := recDrive(p, 0, 1000, time.Millisecond, body, 40*time.Millisecond, 0)
	p.AttemptEnded(now, hedging.AttemptEnd{Primary: "A", Region: "A", Kind: hedging.PointRead, Elapsed: 2 * time.Second, Answered: true})
	_, now = recDrive(p, now, 300, time.Millisecond, body, 40*time.Millisecond, 0)
	if th, ok := p.ThresholdOp(now, "A", hedging.PointRead, 0); !ok || th.Get() > 35*time.Millisecond {
		t.Errorf("threshold %v, %v after a 2 s answer; want the warm backstop, at most 35 ms", th, ok)
	}
}

// §9.3: while the client's throughput-control gate answers local 429s, an
// alternate would take a token another operation needs: no hedge for
// recThrottleHold (1 s) after the last one. A local 429 is no latency of
// the region: a key fed nothing else stays fresh.
func TestRecommendedDeclinesUnderLocalThrottle(t *testing.T) {
	p, err := threshold.NewRecommended(threshold.RecommendedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// 10% of reads 200 ms slower; the alternate answers in 20 ms.
	lat := func(i int) time.Duration {
		if i%10 == 0 {
			return 200 * time.Millisecond
		}
		return body(i)
	}
	_, now := recDrive(p, 0, 5000, time.Millisecond, lat, 20*time.Millisecond, 0)
	if th, ok := p.ThresholdOp(now, "A", hedging.PointRead, 0); !ok || th.Get() > 50*time.Millisecond {
		t.Fatalf("warm key with a slow tenth: threshold %v, %v; want a hedge below 50 ms", th, ok)
	}
	p.AttemptEnded(now, hedging.AttemptEnd{Primary: "A", Region: "A", Kind: hedging.PointRead, Answered: true, LocalThrottle: true})
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{{now + time.Millisecond, false}, {now + 999*time.Millisecond, false}, {now + time.Second, true}} {
		if _, ok := p.ThresholdOp(c.at, "A", hedging.PointRead, 0); ok != c.want {
			t.Errorf("%v after a local 429: hedge %v, want %v", c.at-now, ok, c.want)
		}
	}

	q, _ := threshold.NewRecommended(threshold.RecommendedConfig{})
	for i := range 1000 {
		q.AttemptEnded(time.Duration(i)*time.Millisecond, hedging.AttemptEnd{Primary: "A", Region: "A", Kind: hedging.QueryPage, Answered: true, LocalThrottle: true})
	}
	if th, ok := q.ThresholdOp(3*time.Second, "A", hedging.QueryPage, 0); !ok || th.Get() != 350*time.Millisecond {
		t.Errorf("a key fed only local 429s: threshold %v, %v; want the fresh key's 350ms", th, ok)
	}
}

// A slow mode whose share sits just under 1 - q (0.9% of a fan-out's
// leaves take 2 s): the attempt's p99 is in the body, but the operation's
// p99 is not. The policy judges a threshold by the band [p99, p99.5] and
// hedges the slow mode below 40 ms (p99 alone: no threshold gains, only
// the backstop).
func TestRecommendedSlowModeAtTheQuantile(t *testing.T) {
	p, err := threshold.NewRecommended(threshold.RecommendedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	lat := func(i int) time.Duration {
		if i%111 == 55 {
			return 2 * time.Second
		}
		return body(i) + body(i/97)
	}
	_, now := recDrive(p, 0, 20000, 2*time.Millisecond, lat, 80*time.Millisecond, 0)
	if th, ok := p.ThresholdOp(now, "A", hedging.PointRead, 0); !ok || th.Get() > 40*time.Millisecond {
		t.Errorf("threshold %v, %v; want a hedge below 40 ms", th, ok)
	}
}

// lognormal returns the quantile (i%97 + 0.5)/97 of a lognormal latency
// with median 6 ms and p99 15 ms (feed-cold-metadata's pages).
func lognormal(i int) time.Duration {
	u := (float64(i%97) + 0.5) / 97
	z := math.Sqrt2 * math.Erfinv(2*u-1)
	return time.Duration(6 * math.Exp(z*math.Log(2.5)/2.326) * float64(time.Millisecond))
}

// A near, steady primary (lognormal, median 6 ms, p99 15 ms) whose
// alternate is a region farther (it answers in 14 ms, after the primary):
// before the alternate has been seen, the prior takes it to be as far
// again as the primary's median, so no threshold gains and only the
// probes go out (feed-cold-metadata's pages at ~6 a second; taking the
// alternate to be as fast as the primary's faster half hedged ~30% of
// them until the alternate was learned).
func TestRecommendedPriorKeepsTheAlternateFar(t *testing.T) {
	p, err := threshold.NewRecommended(threshold.RecommendedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 720 // 2 minutes at 6/s
	hedged, _ := recDrive(p, 0, n, time.Second/6, lognormal, 14*time.Millisecond, 0)
	if hedged > n/100 {
		t.Errorf("hedged %d of %d reads; want at most 1%% (probes)", hedged, n)
	}
}
