package threshold_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/threshold"
)

// Issue 9: each failure mode of a learned threshold, on TPS §4.2 as written
// (threshold.TPSLiteral) and with the option that fixes it.

// Sketch rounding: with (near-)constant latency the sketch's representative
// value lies below most samples; the bucket's upper edge never does.
func TestP99DynamicRounding(t *testing.T) {
	for _, ms := range []float64{57, 123.4, 200, 201.3, 1234} {
		d := time.Duration(ms * float64(time.Millisecond))
		for _, tc := range []struct {
			name string
			r    threshold.Rounding
		}{{"upper_edge", threshold.RoundUpperEdge}, {"value", threshold.RoundValue}} {
			p := htP99(t, threshold.P99DynamicConfig{Rounding: tc.r, Refresh: time.Nanosecond, Min: time.Millisecond})
			for i := range 500 {
				observe(p, time.Duration(i)*time.Millisecond, "A", d)
			}
			got := thr(p, time.Second, "A").Get()
			if tc.r == threshold.RoundUpperEdge && (got < d || float64(got) > float64(d)*1.021) {
				t.Errorf("%v constant, upper_edge: threshold %v, want in [%v, +2.1%%]", d, got, d)
			}
			if tc.r == threshold.RoundValue && ms == 200 && got >= d {
				t.Errorf("%v constant, value: threshold %v; the literal sketch value was below 200ms (the far-primary failure)", d, got)
			}
		}
	}
	// A tight distribution (200 ms plus an exponential 0.2 ms jitter): the
	// upper edge hedges at most 1% of a fresh sample.
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func() time.Duration { return time.Duration((200 + rng.ExpFloat64()*0.2) * float64(time.Millisecond)) }
	for _, tc := range []struct {
		r      threshold.Rounding
		lo, hi float64
	}{{threshold.RoundUpperEdge, 0, 0.01}} {
		p := htP99(t, threshold.P99DynamicConfig{Rounding: tc.r, Refresh: time.Nanosecond})
		for i := range 5000 {
			observe(p, time.Duration(i)*time.Millisecond, "A", draw())
		}
		th := thr(p, 5*time.Second, "A").Get()
		above := 0
		for range 100000 {
			if draw() > th {
				above++
			}
		}
		if f := float64(above) / 100000; f < tc.lo || f > tc.hi {
			t.Errorf("rounding %d: threshold %v exceeded by %.4f of samples, want [%v, %v]", tc.r, th, f, tc.lo, tc.hi)
		}
	}
}

// Thin window: after warm-up, a window below MinSamples keeps the last
// estimate (literal: back to Initial).
func TestP99DynamicThinWindow(t *testing.T) {
	for _, tc := range []struct {
		thin threshold.ThinWindow
		want func(time.Duration) bool
	}{
		{threshold.ThinKeepLast, func(d time.Duration) bool { return d >= 200*time.Millisecond && d < 205*time.Millisecond }},
		{threshold.ThinInitial, func(d time.Duration) bool { return d == time.Second }},
	} {
		p := htP99(t, threshold.P99DynamicConfig{ThinWindow: tc.thin, Initial: time.Second, Refresh: time.Nanosecond})
		now := time.Duration(0)
		for range 150 { // 150 samples in 15 s: warm
			now += 100 * time.Millisecond
			observe(p, now, "A", 200*time.Millisecond)
		}
		if got := thr(p, now, "A").Get(); got < 200*time.Millisecond || got > 205*time.Millisecond {
			t.Fatalf("thin %d: warm threshold %v, want ≈200ms", tc.thin, got)
		}
		// Two idle minutes, then 1.8 reads/s: the window holds 50 < 100.
		now += 2 * time.Minute
		for range 50 {
			now += 555 * time.Millisecond
			observe(p, now, "A", 200*time.Millisecond)
		}
		if got := thr(p, now, "A").Get(); !tc.want(got) {
			t.Errorf("thin %d: threshold on a thin window %v", tc.thin, got)
		}
		// An idle gap empties the window entirely.
		if got := thr(p, now+time.Hour, "A").Get(); !tc.want(got) {
			t.Errorf("thin %d: threshold on an empty window %v", tc.thin, got)
		}
	}
}

// Warm-up: before MinSamples the largest observation stands in for the
// quantile (literal: Initial), so a 50 ms Initial hedges one operation, not
// a hundred.
func TestP99DynamicWarmup(t *testing.T) {
	for _, tc := range []struct {
		w    threshold.Warmup
		want time.Duration
	}{{threshold.WarmupMaxObserved, 200 * time.Millisecond}, {threshold.WarmupInitial, 50 * time.Millisecond}} {
		p := htP99(t, threshold.P99DynamicConfig{Warmup: tc.w, Initial: 50 * time.Millisecond, Refresh: time.Nanosecond})
		if got := thr(p, 0, "A").Get(); got != 50*time.Millisecond {
			t.Errorf("warmup %d: threshold before any observation %v, want Initial", tc.w, got)
		}
		for i := range 5 {
			observe(p, time.Duration(i), "A", time.Duration(190+2*i)*time.Millisecond)
		}
		got := thr(p, 10, "A").Get()
		if got < tc.want || got > tc.want+5*time.Millisecond {
			t.Errorf("warmup %d: threshold after 5 observations %v, want ≈%v", tc.w, got, tc.want)
		}
	}
}

// Censoring: a closed-loop model of the race — the alternate answers A
// after the threshold, so a primary slower than threshold+A is superseded
// and reported as a lower bound. With lower bounds the learned p90 is the
// single-attempt p90; learning from completed attempts only, it runs low.
func TestP99DynamicCensoring(t *testing.T) {
	const alt = 30 * time.Millisecond
	// 10 ms + Exp(25 ms): p90 = 10 + 25 ln 10 ≈ 67.56 ms.
	trueP90 := time.Duration((10 + 25*math.Log(10)) * float64(time.Millisecond))
	for _, tc := range []struct {
		c      threshold.Censoring
		lo, hi float64 // learned / true
	}{{threshold.CensorLowerBound, 0.97, 1.04}, {threshold.CensorIgnore, 0, 0.9}} {
		rng := rand.New(rand.NewPCG(5, 6))
		p := htP99(t, threshold.P99DynamicConfig{Quantile: 0.9, Censoring: tc.c, Ceiling: threshold.CeilingNone, Min: time.Millisecond})
		now := time.Duration(0)
		hedged := 0
		const n = 200000
		for i := range n {
			now += 2 * time.Millisecond
			th := thr(p, now, "A").Get()
			x := time.Duration((10 + rng.ExpFloat64()*25) * float64(time.Millisecond))
			switch {
			case x <= th:
				observe(p, now+x, "A", x)
			case x <= th+alt:
				hedged++
				observe(p, now+x, "A", x)
			default:
				hedged++
				supersede(p, now+th+alt, "A", th+alt)
			}
			_ = i
		}
		got := thr(p, now, "A").Get()
		if r := float64(got) / float64(trueP90); r < tc.lo || r > tc.hi {
			t.Errorf("censoring %d: learned p90 %v, true %v (ratio %.3f), want ratio in [%v, %v]", tc.c, got, trueP90, r, tc.lo, tc.hi)
		}
		if tc.c == threshold.CensorLowerBound {
			if f := float64(hedged) / n; f < 0.09 || f > 0.115 {
				t.Errorf("lower_bound: hedged %.3f of operations, want ≈0.10", f)
			}
		}
	}
}

// Ceiling: a third of the reads +500 ms moves the p99 but not the median;
// the ceiling keeps the threshold at CeilingFactor × p50 (literal: it
// follows the slow third up).
func TestP99DynamicCeiling(t *testing.T) {
	for _, tc := range []struct {
		c      threshold.Ceiling
		lo, hi time.Duration
	}{{threshold.CeilingMedian, 50 * time.Millisecond, 60 * time.Millisecond}, {threshold.CeilingNone, 500 * time.Millisecond, 600 * time.Millisecond}} {
		p := htP99(t, threshold.P99DynamicConfig{Ceiling: tc.c, Refresh: time.Nanosecond})
		for i := range 3000 {
			d := 20 * time.Millisecond
			if i%3 == 0 {
				d += 500 * time.Millisecond
			}
			observe(p, time.Duration(i)*time.Millisecond, "A", d)
		}
		if got := thr(p, 3*time.Second, "A").Get(); got < tc.lo || got > tc.hi {
			t.Errorf("ceiling %d: threshold %v, want in [%v, %v]", tc.c, got, tc.lo, tc.hi)
		}
	}
	// A far primary's tight distribution is far below the ceiling.
	p := htP99(t, threshold.P99DynamicConfig{Refresh: time.Nanosecond})
	for i := range 500 {
		observe(p, time.Duration(i)*time.Millisecond, "A", 201*time.Millisecond)
	}
	if got := thr(p, time.Second, "A").Get(); got < 201*time.Millisecond || got > 206*time.Millisecond {
		t.Errorf("far primary: threshold %v, want ≈201ms (the ceiling is 2.5 × p50)", got)
	}
}

func TestP99DynamicOptionValidate(t *testing.T) {
	for _, c := range []threshold.P99DynamicConfig{{Rounding: 9}, {ThinWindow: 9}, {Warmup: 9}, {Censoring: 9}, {Ceiling: 9}, {CeilingFactor: 0.5}, {CeilingFactor: math.Inf(1)}} {
		if c.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", c)
		}
	}
	lit := threshold.TPSLiteral()
	if lit.Rounding != threshold.RoundValue || lit.ThinWindow != threshold.ThinInitial || lit.Warmup != threshold.WarmupInitial ||
		lit.Censoring != threshold.CensorIgnore || lit.Ceiling != threshold.CeilingNone || lit.Validate() != nil {
		t.Errorf("TPSLiteral = %+v", lit)
	}
}

// The budget after a storm of failover alternates: by default they spend
// nothing; charged, the balance stops at 0 and latency hedging is back
// within Reserve/Ratio operations; with Debt it stays off for debt/Ratio.
func TestBudgetAfterFailoverStorm(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cfg       threshold.BudgetConfig
		wantAfter int // operations until the inner threshold is granted again, at most
		minAfter  int
	}{
		{"default: failover free", threshold.BudgetConfig{}, 0, 0},
		{"charged, floor at 0", threshold.BudgetConfig{ChargeFailover: true}, 20, 15},
		{"charged with debt", threshold.BudgetConfig{ChargeFailover: true, Debt: true}, 1 << 30, 100000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Ratio, cfg.Burst = 0.05, 100
			b, err := threshold.NewBudget(cfg)
			if err != nil {
				t.Fatal(err)
			}
			now := time.Duration(0)
			// A storm: 30000 operations, half answered 503 and failed over.
			for i := range 30000 {
				now += 2 * time.Millisecond
				started(b, now)
				if i%2 == 0 {
					spawned(b, now, hedging.Spawn503)
				}
			}
			if !cfg.Debt && b.Tokens() < 0 {
				t.Errorf("balance %v after the storm, want >= 0", b.Tokens())
			}
			n := 0
			for ; n < 200000; n++ {
				now += 2 * time.Millisecond
				started(b, now)
				if b.Tokens() >= 1 { // a latency hedge would be admitted
					break
				}
			}
			if n > tc.wantAfter || n < tc.minAfter {
				t.Errorf("latency hedging back after %d operations, want in [%d, %d]", n, tc.minAfter, tc.wantAfter)
			}
		})
	}
	// Refill time: from empty the bucket is full again within Burst/Ratio
	// operations.
	b, _ := threshold.NewBudget(threshold.BudgetConfig{Ratio: 0.05, Burst: 100, ChargeFailover: true})
	for range 1000 {
		spawned(b, 0, hedging.Spawn503)
	}
	for i := range 2000 {
		started(b, time.Duration(i))
	}
	if got := b.Tokens(); got < 99.999 {
		t.Errorf("balance after Burst/Ratio = 2000 operations: %v, want full (100)", got)
	}
}

// Finagle's minimum rate: PerSecond tokens arrive with time, so a client
// with few operations can still hedge.
func TestBudgetPerSecond(t *testing.T) {
	b, err := threshold.NewBudget(threshold.BudgetConfig{Ratio: 0.01, Burst: 5, PerSecond: 1})
	if err != nil {
		t.Fatal(err)
	}
	granted := 0
	for i := range 100 { // one operation every 2 s, every one hedged
		now := time.Duration(i) * 2 * time.Second
		started(b, now)
		if admit(b, now) {
			granted++
		}
	}
	if granted != 100 {
		t.Errorf("granted %d of 100 hedges at 0.5 ops/s with 1 token/s, want all", granted)
	}
	if _, err := threshold.NewBudget(threshold.BudgetConfig{Ratio: 0.1, Burst: 10, Reserve: 11}); err == nil {
		t.Error("Reserve > Burst accepted")
	}
}

// A primary that never answers (slow for every request, every attempt
// superseded): no baseline, so the ceiling is Min instead of a ratchet on
// lower bounds (primary-slow: p99 2002 ms before this rule, 60 ms after).
func TestP99DynamicNoCompletedPrimary(t *testing.T) {
	p := htP99(t, threshold.P99DynamicConfig{Initial: time.Second, Refresh: time.Nanosecond})
	now := time.Duration(0)
	th := thr(p, now, "A").Get()
	if th != time.Second {
		t.Fatalf("first threshold %v, want Initial", th)
	}
	for range 500 {
		now += 10 * time.Millisecond
		supersede(p, now, "A", th+10*time.Millisecond)
		th = thr(p, now, "A").Get()
	}
	if th != 50*time.Millisecond {
		t.Errorf("threshold after 500 superseded primaries and no answer: %v, want Min 50ms", th)
	}
}
