package hedging

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"
)

// ThresholdPolicy chooses the hedging threshold of each operation (spec
// §17 Q11: the threshold "is computed by the evaluator and passed into
// execute_hedged()"). Implementations are safe for concurrent use and take
// the current time as a parameter; they never read a clock.
type ThresholdPolicy interface {
	// Threshold returns the threshold for an operation whose primary region
	// is primary, at now. The zero Threshold means "no opinion" and selects
	// the strategy's fallback.
	Threshold(now time.Duration, primary Region) Threshold
	// Observe feeds the latency of one completed attempt to region.
	Observe(now time.Duration, region Region, latency time.Duration)
	// Name identifies the policy in reports ("static(200ms)", "p99_dynamic").
	Name() string
}

// StaticPolicy always returns the same threshold.
type StaticPolicy struct{ T Threshold }

// Threshold returns p.T.
func (p StaticPolicy) Threshold(time.Duration, Region) Threshold { return p.T }

// Observe does nothing.
func (StaticPolicy) Observe(time.Duration, Region, time.Duration) {}

// Name returns "static(<threshold>)".
func (p StaticPolicy) Name() string { return "static(" + p.T.String() + ")" }

// P99DynamicConfig configures [P99Dynamic]. Zero fields take the defaults
// noted on each.
type P99DynamicConfig struct {
	// Quantile of recent latency used as the threshold; default 0.99.
	Quantile float64
	// Window is the sliding window of observations; default 60 s.
	Window time.Duration
	// Buckets is how many sub-windows the window rotates through; default 6.
	Buckets int
	// Min and Max clamp the threshold; defaults 50 ms and 4000 ms (TPS §4.2).
	Min, Max time.Duration
	// Initial is the threshold used while a region has fewer than MinSamples
	// observations in the window (cold start); default 1 s, the driver
	// default.
	Initial time.Duration
	// MinSamples is the number of observations before the quantile is
	// trusted; default 100.
	MinSamples int
	// Refresh is how often the quantile is recomputed; default 1 s.
	Refresh time.Duration
	// RelativeAccuracy of the DDSketch quantile sketch; default 0.01 (1%).
	RelativeAccuracy float64
}

func (c *P99DynamicConfig) setDefaults() {
	if c.Quantile == 0 {
		c.Quantile = 0.99
	}
	if c.Window == 0 {
		c.Window = 60 * time.Second
	}
	if c.Buckets == 0 {
		c.Buckets = 6
	}
	if c.Min == 0 {
		c.Min = 50 * time.Millisecond
	}
	if c.Max == 0 {
		c.Max = 4000 * time.Millisecond
	}
	if c.Initial == 0 {
		c.Initial = DefaultThresholdCap
	}
	if c.MinSamples == 0 {
		c.MinSamples = 100
	}
	if c.Refresh == 0 {
		c.Refresh = time.Second
	}
	if c.RelativeAccuracy == 0 {
		c.RelativeAccuracy = 0.01
	}
}

// Validate reports the first impossible setting after defaults are applied,
// naming the field: quantile outside (0,1), non-positive window, buckets,
// min, refresh or samples, min > max, or accuracy outside (0,1).
func (c P99DynamicConfig) Validate() error {
	c.setDefaults()
	switch {
	case !(c.Quantile > 0 && c.Quantile < 1):
		return fmt.Errorf("quantile must be in (0,1), got %v", c.Quantile)
	case c.Window <= 0:
		return fmt.Errorf("window must be > 0, got %v", c.Window)
	case c.Buckets < 1:
		return fmt.Errorf("buckets must be >= 1, got %d", c.Buckets)
	case c.Window/time.Duration(c.Buckets) < time.Millisecond:
		return fmt.Errorf("window (%v) split into %d buckets gives buckets shorter than 1ms", c.Window, c.Buckets)
	case c.Min <= 0:
		return fmt.Errorf("min must be > 0, got %v", c.Min)
	case c.Max < c.Min:
		return fmt.Errorf("max (%v) must be >= min (%v)", c.Max, c.Min)
	case c.Initial <= 0:
		return fmt.Errorf("initial must be > 0, got %v", c.Initial)
	case c.MinSamples < 1:
		return fmt.Errorf("min_samples must be >= 1, got %d", c.MinSamples)
	case c.Refresh <= 0:
		return fmt.Errorf("refresh must be > 0, got %v", c.Refresh)
	case !(c.RelativeAccuracy > 0 && c.RelativeAccuracy < 1):
		return fmt.Errorf("relative accuracy must be in (0,1), got %v", c.RelativeAccuracy)
	}
	return nil
}

// P99Dynamic is the dynamic threshold of TPS §4.2 (spec §3.4, §17 Q11): the
// observed quantile (p99 by default) of each primary region's attempt
// latency over a sliding window, clamped to [Min, Max]. Observations go to
// a ring of DDSketch quantile sketches (relative error RelativeAccuracy),
// one per sub-window, so memory is bounded however long it runs; the
// quantile is recomputed at most every Refresh.
//
// Only completed attempts are observed. A slow primary that loses the race
// is cancelled and never observed (its latency is censored), so during a
// partial slow-down the observed quantile stays at the healthy one and the
// threshold sits at Min; and a primary that is slow for every request never
// completes an attempt, so the threshold stays at Initial. The notebooks
// (notebooks/01-q11-static-vs-p99.md) measure both effects and recommend
// Initial = Min.
type P99Dynamic struct {
	cfg     P99DynamicConfig
	mu      sync.Mutex
	regions map[Region]*regionWindow
}

type regionWindow struct {
	buckets   []*ddsketch.DDSketch
	bucketEnd time.Duration // end of the current bucket
	cur       int
	merged    *ddsketch.DDSketch
	threshold Threshold
	nextCalc  time.Duration
}

// NewP99Dynamic returns the policy, or the error of cfg.Validate.
func NewP99Dynamic(cfg P99DynamicConfig) (*P99Dynamic, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &P99Dynamic{cfg: cfg, regions: make(map[Region]*regionWindow)}, nil
}

// Config returns the configuration with defaults applied.
func (p *P99Dynamic) Config() P99DynamicConfig { return p.cfg }

// Name returns "p99_dynamic" (or "p<q>_dynamic" for another quantile).
func (p *P99Dynamic) Name() string {
	if p.cfg.Quantile == 0.99 {
		return "p99_dynamic"
	}
	return fmt.Sprintf("p%g_dynamic", p.cfg.Quantile*100)
}

func (p *P99Dynamic) newSketch() *ddsketch.DDSketch {
	s, err := ddsketch.LogCollapsingLowestDenseDDSketch(p.cfg.RelativeAccuracy, 2048)
	if err != nil { // unreachable: accuracy validated in (0,1)
		panic(err)
	}
	return s
}

func (p *P99Dynamic) window(now time.Duration, r Region) *regionWindow {
	w := p.regions[r]
	if w == nil {
		w = &regionWindow{buckets: make([]*ddsketch.DDSketch, p.cfg.Buckets), merged: p.newSketch()}
		for i := range w.buckets {
			w.buckets[i] = p.newSketch()
		}
		w.bucketEnd = now + p.cfg.Window/time.Duration(p.cfg.Buckets)
		w.threshold = Threshold{p.cfg.Initial}
		p.regions[r] = w
	}
	// Rotate past every bucket that has ended; a long gap clears them all.
	width := p.cfg.Window / time.Duration(p.cfg.Buckets)
	for n := 0; now >= w.bucketEnd; n++ {
		if n >= len(w.buckets) {
			w.bucketEnd = now + width
			break
		}
		w.cur = (w.cur + 1) % len(w.buckets)
		w.buckets[w.cur].Clear()
		w.bucketEnd += width
		w.nextCalc = 0
	}
	return w
}

// Observe adds one attempt latency of region at now.
func (p *P99Dynamic) Observe(now time.Duration, region Region, latency time.Duration) {
	ms := float64(latency) / float64(time.Millisecond)
	if !(ms > 0) || math.IsInf(ms, 0) {
		ms = 1e-6
	}
	p.mu.Lock()
	w := p.window(now, region)
	_ = w.buckets[w.cur].Add(ms)
	p.mu.Unlock()
}

// Threshold returns the clamped quantile of primary's window at now, or
// Initial while the window holds fewer than MinSamples observations.
func (p *P99Dynamic) Threshold(now time.Duration, primary Region) Threshold {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.window(now, primary)
	if now < w.nextCalc {
		return w.threshold
	}
	w.nextCalc = now + p.cfg.Refresh
	w.merged.Clear()
	for _, b := range w.buckets {
		_ = w.merged.MergeWith(b)
	}
	if w.merged.GetCount() < float64(p.cfg.MinSamples) {
		w.threshold = Threshold{p.cfg.Initial}
		return w.threshold
	}
	q, err := w.merged.GetValueAtQuantile(p.cfg.Quantile)
	if err != nil {
		return w.threshold
	}
	d := time.Duration(q * float64(time.Millisecond))
	w.threshold = Threshold{min(max(d, p.cfg.Min), p.cfg.Max)}
	return w.threshold
}

// SpawnObserver is implemented by threshold policies that need to know when
// an alternate is actually sent, for example to charge a hedge budget. The
// race calls AlternateSpawned once per spawned alternate (timer or upgrade
// path), on the hedged path only.
type SpawnObserver interface {
	AlternateSpawned(now time.Duration, primary Region)
}

// BudgetedPolicy caps the hedge rate of an inner policy with a token bucket
// — hedgelab's proposal for spec §17 Q11, not in the spec or its peer SDKs
// (the idea is gRPC's hedging throttle and Envoy's retry budget): every
// operation earns Ratio tokens (up to Burst), every spawned alternate spends
// one, and while fewer than one token is left the threshold is Fallback
// (by default the 4 s clamp maximum), so only pathological primaries are
// hedged. Over any long window at most about Ratio of operations hedge, so
// the RU multiplier from hedging stays below 1+Ratio, and a saturated or
// throttled region is not flooded with alternates (spec §9.3).
type BudgetedPolicy struct {
	inner    ThresholdPolicy
	ratio    float64
	burst    float64
	fallback Threshold
	mu       sync.Mutex
	tokens   float64
	denied   int64
}

// NewBudgetedPolicy wraps inner with a hedge budget of ratio (0 < ratio <=
// 1) alternates per operation and a bucket of burst tokens (>= 1; it starts
// full). fallback (zero = 4 s) is the threshold while the budget is spent.
// Errors name the bad parameter.
func NewBudgetedPolicy(inner ThresholdPolicy, ratio, burst float64, fallback Threshold) (*BudgetedPolicy, error) {
	switch {
	case inner == nil:
		return nil, fmt.Errorf("budget: inner policy is nil")
	case !(ratio > 0 && ratio <= 1):
		return nil, fmt.Errorf("budget: ratio must be in (0,1], got %v", ratio)
	case !(burst >= 1) || math.IsInf(burst, 0):
		return nil, fmt.Errorf("budget: burst must be >= 1, got %v", burst)
	}
	if fallback.IsZero() {
		fallback = Threshold{4000 * time.Millisecond}
	}
	return &BudgetedPolicy{inner: inner, ratio: ratio, burst: burst, fallback: fallback, tokens: burst}, nil
}

// Name returns "<inner>+budget(<ratio>)".
func (p *BudgetedPolicy) Name() string { return fmt.Sprintf("%s+budget(%g)", p.inner.Name(), p.ratio) }

// Threshold earns one operation's tokens and returns the inner policy's
// threshold, or the fallback while less than one token is left.
func (p *BudgetedPolicy) Threshold(now time.Duration, primary Region) Threshold {
	inner := p.inner.Threshold(now, primary)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tokens = math.Min(p.burst, p.tokens+p.ratio)
	if p.tokens < 1 {
		p.denied++
		if inner.IsZero() || inner.Get() < p.fallback.Get() {
			return p.fallback
		}
	}
	return inner
}

// Observe forwards to the inner policy.
func (p *BudgetedPolicy) Observe(now time.Duration, region Region, latency time.Duration) {
	p.inner.Observe(now, region, latency)
}

// AlternateSpawned spends one token (the balance may go below zero when
// several operations passed the check before their alternates fired).
func (p *BudgetedPolicy) AlternateSpawned(now time.Duration, primary Region) {
	p.mu.Lock()
	p.tokens--
	p.mu.Unlock()
	if o, ok := p.inner.(SpawnObserver); ok {
		o.AlternateSpawned(now, primary)
	}
}

// Denied returns how many operations got the fallback threshold because the
// budget was spent.
func (p *BudgetedPolicy) Denied() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.denied
}
