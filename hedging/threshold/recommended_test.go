package threshold_test

import (
	"runtime"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/threshold"
)

// A fresh instance starts at the conservative prior (1 s, the driver
// default), and where the alternate is no faster than a steady primary no
// threshold gains: once it has learned the alternate (probes, 1 in 100
// while unknown) it hedges at most ~1% (far primary 200 ms away, every
// hedge loses).
func TestRecommendedDeclinesWhereNoThresholdGains(t *testing.T) {
	p, err := threshold.NewRecommended(threshold.RecommendedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if th, ok := p.ThresholdOp(0, "A", hedging.PointRead, 0); !ok || th.Get() != time.Second {
		t.Fatalf("fresh instance: threshold %v, %v; want 1s (the conservative prior)", th, ok)
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
