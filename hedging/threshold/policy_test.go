package threshold_test

import (
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/threshold"
)

func htP99(t *testing.T, cfg threshold.P99DynamicConfig) *threshold.P99Dynamic {
	t.Helper()
	p, err := threshold.NewP99Dynamic(cfg)
	if err != nil {
		t.Fatalf("NewP99Dynamic: %v", err)
	}
	return p
}

func TestP99DynamicDefaults(t *testing.T) {
	p := htP99(t, threshold.P99DynamicConfig{})
	c := p.Config()
	if c.Quantile != 0.99 || c.Window != time.Minute || c.Buckets != 6 || c.Min != 50*time.Millisecond ||
		c.Max != 4*time.Second || c.Initial != 50*time.Millisecond || c.MinSamples != 100 || c.Refresh != time.Second || c.RelativeAccuracy != 0.01 {
		t.Errorf("defaults = %+v", c)
	}
	if c.Rounding != threshold.RoundUpperEdge || c.ThinWindow != threshold.ThinKeepLast || c.Warmup != threshold.WarmupMaxObserved ||
		c.Censoring != threshold.CensorLowerBound || c.Ceiling != threshold.CeilingMedian || c.CeilingFactor != 2.5 {
		t.Errorf("default options = %+v, want every fix", c)
	}
	if p.Name() != "p99_dynamic" {
		t.Errorf("Name() = %q", p.Name())
	}
	if n := htP99(t, threshold.P99DynamicConfig{Quantile: 0.9}).Name(); n != "p90_dynamic" {
		t.Errorf("Name() for q=0.9 = %q", n)
	}
}

func TestP99DynamicColdStart(t *testing.T) {
	cfg := threshold.TPSLiteral()
	cfg.MinSamples, cfg.Initial, cfg.Refresh = 10, 700*time.Millisecond, time.Nanosecond
	p := htP99(t, cfg)
	now := time.Second
	if got := thr(p, now, "A").Get(); got != 700*time.Millisecond {
		t.Fatalf("cold threshold = %v, want Initial 700ms", got)
	}
	for i := 0; i < 9; i++ {
		now += time.Millisecond
		observe(p, now, "A", 200*time.Millisecond)
		if got := thr(p, now, "A").Get(); got != 700*time.Millisecond {
			t.Fatalf("after %d samples threshold = %v, want Initial until MinSamples", i+1, got)
		}
	}
	now += time.Millisecond
	observe(p, now, "A", 200*time.Millisecond)
	got := thr(p, now, "A").Get()
	if got < 196*time.Millisecond || got > 204*time.Millisecond {
		t.Errorf("with MinSamples reached threshold = %v, want ≈200ms", got)
	}
	// Another region is still cold.
	if got := thr(p, now, "B").Get(); got != 700*time.Millisecond {
		t.Errorf("region B threshold = %v, want Initial (regions are independent)", got)
	}
}

func TestP99DynamicConverges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cfg := threshold.TPSLiteral()
	cfg.Refresh, cfg.Max = time.Nanosecond, time.Hour
	p := htP99(t, cfg)
	var lat []time.Duration
	now := time.Second
	// A known stream: lognormal-ish latencies around 20ms with a tail.
	for i := 0; i < 20000; i++ {
		d := time.Duration((10 + rng.ExpFloat64()*25) * float64(time.Millisecond))
		lat = append(lat, d)
		now += time.Millisecond // 20s in all: well inside the 60s window
		observe(p, now, "A", d)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	// Exact p99 by integer rank.
	exact := lat[(len(lat)*99+99)/100-1]
	got := thr(p, now, "A").Get()
	lo, hi := time.Duration(float64(exact)*0.97), time.Duration(float64(exact)*1.03)
	if got < lo || got > hi {
		t.Errorf("p99 threshold = %v, exact p99 = %v; want within [%v, %v] (1%% sketch + rank slack)", got, exact, lo, hi)
	}
}

func TestP99DynamicClamps(t *testing.T) {
	for _, tc := range []struct {
		name string
		lat  time.Duration
		want time.Duration
	}{
		{"below min", time.Millisecond, 50 * time.Millisecond},
		{"above max", 10 * time.Second, 4 * time.Second},
		{"zero latency", 0, 50 * time.Millisecond},
		{"negative latency", -time.Second, 50 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := htP99(t, threshold.P99DynamicConfig{MinSamples: 5, Refresh: time.Nanosecond})
			for i := 0; i < 10; i++ {
				observe(p, time.Duration(i), "A", tc.lat)
			}
			if got := thr(p, 10, "A").Get(); got != tc.want {
				t.Errorf("threshold = %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("custom bounds", func(t *testing.T) {
		p := htP99(t, threshold.P99DynamicConfig{MinSamples: 1, Refresh: time.Nanosecond, Min: 300 * time.Millisecond, Max: 400 * time.Millisecond})
		observe(p, 0, "A", time.Millisecond)
		if got := thr(p, 1, "A").Get(); got != 300*time.Millisecond {
			t.Errorf("threshold = %v, want Min 300ms", got)
		}
		observe(p, 2, "B", time.Minute)
		if got := thr(p, 3, "B").Get(); got != 400*time.Millisecond {
			t.Errorf("threshold = %v, want Max 400ms", got)
		}
	})
}

func TestP99DynamicWindowAgesOut(t *testing.T) {
	const window = 60 * time.Second
	cfg := threshold.TPSLiteral()
	cfg.MinSamples, cfg.Refresh, cfg.Window, cfg.Buckets = 50, time.Nanosecond, window, 6
	p := htP99(t, cfg)
	t0 := time.Second
	for i := 0; i < 200; i++ {
		observe(p, t0+time.Duration(i)*time.Millisecond, "A", 3*time.Second)
	}
	if got := thr(p, t0+time.Second, "A").Get(); got < 2900*time.Millisecond {
		t.Fatalf("threshold with slow samples = %v, want ≈3s", got)
	}
	// Fast samples arrive later; the slow ones are still inside the window.
	for i := 0; i < 200; i++ {
		observe(p, t0+30*time.Second+time.Duration(i)*time.Millisecond, "A", 100*time.Millisecond)
	}
	if got := thr(p, t0+window-time.Second, "A").Get(); got < 2900*time.Millisecond {
		t.Errorf("before the window passed threshold = %v, want still ≈3s (p99 over both)", got)
	}
	// Once Window has passed since the slow samples, only the fast remain.
	got := thr(p, t0+window+time.Second, "A").Get()
	if got < 98*time.Millisecond || got > 102*time.Millisecond {
		t.Errorf("after the window passed threshold = %v, want ≈100ms (old samples aged out)", got)
	}
	// After a long silence everything is gone: back to Initial.
	if got := thr(p, t0+10*window, "A").Get(); got != time.Second {
		t.Errorf("after a long gap threshold = %v, want Initial 1s", got)
	}
}

func TestP99DynamicRefreshCaches(t *testing.T) {
	p := htP99(t, threshold.P99DynamicConfig{MinSamples: 1, Refresh: time.Second})
	observe(p, 0, "A", 200*time.Millisecond)
	first := thr(p, 0, "A").Get()
	for i := 0; i < 100; i++ {
		observe(p, time.Millisecond, "A", 3*time.Second)
	}
	if got := thr(p, 500*time.Millisecond, "A").Get(); got != first {
		t.Errorf("threshold recomputed before Refresh: %v -> %v", first, got)
	}
	if got := thr(p, time.Second, "A").Get(); got < 2900*time.Millisecond {
		t.Errorf("threshold after Refresh = %v, want ≈3s", got)
	}
}

func TestP99DynamicValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  threshold.P99DynamicConfig
		msg  string
	}{
		{"quantile high", threshold.P99DynamicConfig{Quantile: 1.5}, "quantile must be in (0,1), got 1.5"},
		{"quantile one", threshold.P99DynamicConfig{Quantile: 1}, "quantile must be in (0,1), got 1"},
		{"quantile negative", threshold.P99DynamicConfig{Quantile: -0.5}, "quantile must be in (0,1), got -0.5"},
		{"window", threshold.P99DynamicConfig{Window: -time.Second}, "window must be > 0, got -1s"},
		{"buckets", threshold.P99DynamicConfig{Buckets: -1}, "buckets must be >= 1, got -1"},
		{"min", threshold.P99DynamicConfig{Min: -time.Millisecond}, "min must be > 0, got -1ms"},
		{"max below min", threshold.P99DynamicConfig{Min: 100 * time.Millisecond, Max: 50 * time.Millisecond}, "max (50ms) must be >= min (100ms)"},
		{"min above default max", threshold.P99DynamicConfig{Min: 5 * time.Second}, "max (4s) must be >= min (5s)"},
		{"initial", threshold.P99DynamicConfig{Initial: -1}, "initial must be > 0, got -1ns"},
		{"min samples", threshold.P99DynamicConfig{MinSamples: -3}, "min_samples must be >= 1, got -3"},
		{"refresh", threshold.P99DynamicConfig{Refresh: -time.Second}, "refresh must be > 0, got -1s"},
		{"accuracy", threshold.P99DynamicConfig{RelativeAccuracy: 1}, "relative accuracy must be in (0,1), got 1"},
		{"accuracy negative", threshold.P99DynamicConfig{RelativeAccuracy: -0.1}, "relative accuracy must be in (0,1), got -0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if err == nil || err.Error() != tc.msg {
				t.Errorf("Validate() = %v, want %q", err, tc.msg)
			}
			p, err := threshold.NewP99Dynamic(tc.cfg)
			if p != nil || err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("NewP99Dynamic = %v, %v; want nil and the Validate error", p, err)
			}
		})
	}
	for _, ok := range []threshold.P99DynamicConfig{
		{},
		{Quantile: 0.5, Window: time.Second, Buckets: 1, Min: time.Millisecond, Max: time.Millisecond, Initial: time.Millisecond, MinSamples: 1, Refresh: 1, RelativeAccuracy: 0.5},
	} {
		if err := ok.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v, want nil", ok, err)
		}
	}
	t.Run("window_shorter_than_buckets", func(t *testing.T) {
		cfg := threshold.P99DynamicConfig{Window: 3, Buckets: 6}
		if err := cfg.Validate(); err == nil {
			t.Errorf("Validate accepted a zero bucket width")
		}
	})
}

func TestStaticPolicy(t *testing.T) {
	p := threshold.Static{T: hedging.MustThreshold(250 * time.Millisecond)}
	observe(p, 0, "A", time.Hour) // no effect
	if got := thr(p, time.Hour, "anything").Get(); got != 250*time.Millisecond {
		t.Errorf("Threshold = %v", got)
	}
	if p.Name() != "static(250ms)" {
		t.Errorf("Name = %q", p.Name())
	}
	var _ hedging.ThresholdPolicy = p
	var _ hedging.ThresholdPolicy = (*threshold.P99Dynamic)(nil)
}

// Issue 18: &threshold.P99Dynamic{} panicked (division by zero buckets). The
// zero value is the policy of NewP99Dynamic(P99DynamicConfig{}): the same
// configuration and the same thresholds for the same observations, and its
// first uses may be concurrent.
func TestP99DynamicZeroValue(t *testing.T) {
	zero, built := &threshold.P99Dynamic{}, htP99(t, threshold.P99DynamicConfig{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { _ = zero.Name(); _ = thr(zero, 0, "C") })
	}
	wg.Wait()
	if zero.Config() != built.Config() || zero.Name() != built.Name() {
		t.Fatalf("zero value %+v %q, want %+v %q", zero.Config(), zero.Name(), built.Config(), built.Name())
	}
	rng := rand.New(rand.NewPCG(18, 1))
	for i := range 3000 {
		now := time.Duration(i) * 10 * time.Millisecond
		lat := time.Duration(rng.ExpFloat64() * float64(20*time.Millisecond))
		for _, p := range []*threshold.P99Dynamic{zero, built} {
			observe(p, now, "A", lat)
		}
		if z, b := thr(zero, now, "A"), thr(built, now, "A"); z != b {
			t.Fatalf("observation %d: zero value's threshold %v, NewP99Dynamic's %v", i, z, b)
		}
	}
}
