package threshold

import (
	"cmp"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"

	"hedgelab/hedging"
)

// Static always returns the same threshold, T (spec §4.1's fixed
// threshold as a policy; scenario type "static"). An unbudgeted Static is
// what [hedging.NewHedgingStrategy] does without a policy.
//
// Failure kinds it survives (the cases are in
// scenarios/testdata/policy-cases; the figures in notebook 01): every
// failure of a learned threshold — ratcheting (gradual-slowdown), censored
// primaries (censored-p90), warm-up bias, a low rate. Kinds it does not
// survive: hedges that cannot win (far-primary, low-rate-client,
// cold-fleet, both-slow, feed-query-brownout, correlated-both-slow,
// flap-60s); a deadline below T (deadline-below-floor); a slow-down's onset
// with no budget (budget-onset); the count-only breaker on GC pauses
// (gc-pause-hot-partition).
type Static struct{ T hedging.Threshold }

// Threshold returns p.T, for every operation.
func (p Static) Threshold(time.Duration, hedging.ThresholdQuery) (hedging.Threshold, bool) {
	return p.T, true
}

// Observe does nothing: a static threshold learns nothing.
func (Static) Observe(time.Duration, hedging.Observation) {}

// Name returns "static(<threshold>)".
func (p Static) Name() string { return "static(" + p.T.String() + ")" }

// Rounding says which value of the quantile sketch's bucket [P99Dynamic]
// reports. Each option fixes or keeps one failure mode; the zero value is
// the fix.
type Rounding uint8

const (
	// RoundUpperEdge reports the upper edge of the sketch bucket holding the
	// quantile, so the threshold is never below the true quantile because of
	// the sketch's relative error: a p99 threshold hedges at most about 1%
	// of operations however tight the latency distribution is. Default.
	RoundUpperEdge Rounding = iota
	// RoundValue reports the sketch's representative value of the bucket
	// (DDSketch's estimate, within RelativeAccuracy of the true quantile,
	// below it half of the time): TPS §4.2 as written. With near-constant
	// latency (a far primary) this puts a p99 threshold below most samples.
	RoundValue
)

// ThinWindow says what [P99Dynamic] does when, after warm-up, the sliding
// window holds fewer than MinSamples observations (a low-rate client).
type ThinWindow uint8

const (
	// ThinKeepLast keeps the last threshold computed from a full window.
	// Default.
	ThinKeepLast ThinWindow = iota
	// ThinInitial falls back to Initial, as at cold start (TPS §4.2 as
	// written): a client reading 1–2 times a second keeps dropping to it.
	ThinInitial
)

// Warmup says what [P99Dynamic] returns before a region's window has ever
// held MinSamples observations.
type Warmup uint8

const (
	// WarmupMaxObserved returns the largest latency observed in the window
	// (subject to the ceiling and the clamp), and Initial only before the
	// first observation: with n observations the next operation exceeds it
	// with probability about 1/(n+1), so warm-up hedges a handful of
	// operations rather than every one. Default.
	WarmupMaxObserved Warmup = iota
	// WarmupInitial returns Initial until MinSamples observations (TPS
	// §4.2).
	WarmupInitial
)

// Censoring says whether [P99Dynamic] learns from superseded primaries.
type Censoring uint8

const (
	// CensorLowerBound records a superseded primary's elapsed time as an
	// observation (a [hedging.LegCancelled] primary). It is a lower bound of the
	// attempt's latency and at least the threshold it was hedged at, so the
	// fraction of observations above the threshold is the true one and the
	// learned quantile settles at the single-attempt quantile instead of
	// below it. Default (Finagle's backup requests record superseded
	// attempts the same way).
	CensorLowerBound Censoring = iota
	// CensorIgnore learns from completed attempts only (TPS §4.2 as written;
	// tower's hedge does the same): slow primaries lose, are cancelled and
	// never observed, so the learned quantile sits below the true one and
	// more than 1-Quantile of operations hedge.
	CensorIgnore
)

// Ceiling says how [P99Dynamic] keeps the threshold from ratcheting up into
// an incident.
type Ceiling uint8

const (
	// CeilingMedian caps the quantile at CeilingFactor times the median of
	// the window's completed attempts, before the clamp: min(quantile,
	// CeilingFactor × p50). The median is of attempts that answered only:
	// superseded primaries (the slow reads being hedged) raise the quantile
	// but never the ceiling, so hedging cannot switch itself off during a
	// slow-down however many reads it hits; a region whose primaries stop
	// completing keeps its last ceiling, and one none of whose primaries
	// has ever completed is capped at Min. (A median over every attempt
	// follows a slow-down of more than half of the reads:
	// incident-us-east1-2019.) Default.
	CeilingMedian Ceiling = iota
	// CeilingNone applies no cap below Max (TPS §4.2 as written): when more
	// than 1-Quantile of reads slow down, the threshold follows them up past
	// them and hedging stops.
	CeilingNone
)

// P99DynamicConfig configures [P99Dynamic]. The zero value is the
// recommended configuration (notebooks/01-q11-static-vs-p99.md); zero fields
// take the defaults noted on each. [TPSLiteral] returns the configuration of
// TPS §4.2 as written.
type P99DynamicConfig struct {
	// Quantile of recent latency used as the threshold; default 0.99.
	Quantile float64
	// Window is the sliding window of observations; default 60 s.
	Window time.Duration
	// Buckets is how many sub-windows the window rotates through; default 6.
	Buckets int
	// Min and Max clamp the threshold; defaults 50 ms and 4000 ms (TPS §4.2).
	Min, Max time.Duration
	// Initial is the threshold before a region's first observation (and,
	// with WarmupInitial or ThinInitial, whenever the window is thin);
	// default Min (a 1 s initial threshold keeps a primary slow from the
	// start waiting a second: primary-slow). TPS §4.2 says 1 s
	// ([TPSLiteral]).
	Initial time.Duration
	// MinSamples is the number of observations before the quantile is
	// trusted; default 100.
	MinSamples int
	// Refresh is how often the quantile is recomputed; default 1 s.
	Refresh time.Duration
	// RelativeAccuracy of the DDSketch quantile sketch; default 0.01 (1%).
	RelativeAccuracy float64
	// Rounding, ThinWindow, Warmup, Censoring and Ceiling each fix one
	// failure mode of a learned threshold; their zero values are the fixes.
	Rounding   Rounding
	ThinWindow ThinWindow
	Warmup     Warmup
	Censoring  Censoring
	Ceiling    Ceiling
	// CeilingFactor is the multiple of the median that caps the quantile
	// under CeilingMedian, >= 1; default 2.5 (DefaultCeilingFactor).
	CeilingFactor float64
}

// TPSLiteral returns the dynamic threshold of TPS §4.2 exactly as written:
// the sketch's quantile value, completed attempts only, the 1 s initial
// threshold whenever the window is thin, and no ceiling below 4000 ms.
// Each of the five shows (notebook 01; preset "tps_literal"): it ratchets
// into a slow-down (gradual-slowdown), hedges a steady far primary well
// above 1% (far-primary), drops to 1 s on a thin window (low-rate-client)
// and waits 1 s on a fresh instance (primary-slow, breaker-trip,
// fleet-cold-start).
func TPSLiteral() P99DynamicConfig {
	return P99DynamicConfig{Initial: hedging.DefaultThresholdCap, Rounding: RoundValue, ThinWindow: ThinInitial, Warmup: WarmupInitial,
		Censoring: CensorIgnore, Ceiling: CeilingNone}
}

// DefaultCeilingFactor is the default [P99DynamicConfig.CeilingFactor].
const DefaultCeilingFactor = 2.5

func (c *P99DynamicConfig) setDefaults() {
	c.Quantile = cmp.Or(c.Quantile, 0.99)
	c.Window = cmp.Or(c.Window, 60*time.Second)
	c.Buckets = cmp.Or(c.Buckets, 6)
	c.Min = cmp.Or(c.Min, 50*time.Millisecond)
	c.Max = cmp.Or(c.Max, 4000*time.Millisecond)
	c.Initial = cmp.Or(c.Initial, c.Min)
	c.MinSamples = cmp.Or(c.MinSamples, 100)
	c.Refresh = cmp.Or(c.Refresh, time.Second)
	c.RelativeAccuracy = cmp.Or(c.RelativeAccuracy, 0.01)
	c.CeilingFactor = cmp.Or(c.CeilingFactor, DefaultCeilingFactor)
}

// WithDefaults returns c with every zero field set to its default (the
// values the policy runs with): quantile 0.99, window 60 s in 6 buckets,
// min 50 ms, max 4 s, initial min, 100 samples, refresh 1 s, accuracy
// 0.01, ceiling factor DefaultCeilingFactor.
func (c P99DynamicConfig) WithDefaults() P99DynamicConfig {
	c.setDefaults()
	return c
}

// Validate reports the first impossible setting after defaults are applied,
// naming the field: quantile outside (0,1), non-positive window, buckets,
// min, refresh or samples, min > max, accuracy outside (0,1), a ceiling
// factor below 1, or an unknown option value.
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
	case !(c.CeilingFactor >= 1) || math.IsInf(c.CeilingFactor, 0):
		return fmt.Errorf("ceiling factor must be >= 1, got %v", c.CeilingFactor)
	case c.Rounding > RoundValue, c.ThinWindow > ThinInitial, c.Warmup > WarmupInitial,
		c.Censoring > CensorIgnore, c.Ceiling > CeilingNone:
		return fmt.Errorf("unknown option value in %+v", c)
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
// TPS §4.2 as written ([TPSLiteral]) goes wrong in five known ways, each
// fixed by an option of [P99DynamicConfig] whose zero value is the fix:
// sketch rounding ([Rounding]), a thin window ([ThinWindow]), warm-up
// ([Warmup]), censored primaries ([Censoring]) and ratcheting up into an
// incident ([Ceiling]). With every fix the threshold of a region is
//
//	clamp(min(q, CeilingFactor × p50), Min, Max)
//
// where q is the upper edge of the sketch bucket holding the Quantile of
// completed and superseded primary attempts (superseded ones as lower
// bounds), p50 the median of the completed ones, and a thin window after
// warm-up keeps the last such value.
//
// The zero value (&P99Dynamic{}) is usable and is the policy of
// NewP99Dynamic(P99DynamicConfig{}): the recommended configuration.
//
// Failure kinds it survives with the five fixes (scenario type
// "p99_dynamic"; the figures in notebook 01): a ratcheting slow-down of a
// minority of reads (gradual-slowdown), censored primaries (censored-p90),
// a steady far primary (far-primary), a low rate (low-rate-client), a fresh
// instance (cold-fleet), warm-up at any arrival rate (warmup-bias). Kinds
// it does not survive: hedges that cannot win during its window
// (correlated-both-slow, primary-slow); a majority slow-down, which
// ratchets the median and so the ceiling (flap-60s); a deadline below its
// 50 ms floor (deadline-below-floor); a floor above the threshold that
// pays (bimodal, tiny, breaker-trip); a slow-down's onset with no budget
// (budget-onset); the count-only breaker on GC pauses ([CappedQuantile]
// and [BackupRequests] are presets of it).
type P99Dynamic struct {
	cfg     P99DynamicConfig
	once    sync.Once // ready: applies the defaults to a zero value
	mu      sync.Mutex
	regions map[hedging.Region]*regionWindow
}

type regionWindow struct {
	buckets   []*ddsketch.DDSketch // completed attempts, one sketch per sub-window
	censored  []*ddsketch.DDSketch // superseded primaries' lower bounds, likewise
	bucketEnd time.Duration        // end of the current bucket
	cur       int
	merged    *ddsketch.DDSketch // scratch: the window's completed attempts
	all       *ddsketch.DDSketch // scratch: completed and censored
	threshold hedging.Threshold
	ceiling   float64 // last ceiling in ms; 0 = none yet
	nextCalc  time.Duration
	warm      bool // the window has held MinSamples observations once
}

// NewP99Dynamic returns the policy, or the error of cfg.Validate.
func NewP99Dynamic(cfg P99DynamicConfig) (*P99Dynamic, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &P99Dynamic{cfg: cfg, regions: make(map[hedging.Region]*regionWindow)}, nil
}

// ready makes a zero P99Dynamic the policy of the zero configuration; it
// does nothing to one built by NewP99Dynamic.
func (p *P99Dynamic) ready() {
	p.once.Do(func() {
		if p.regions == nil {
			p.cfg.setDefaults()
			p.regions = make(map[hedging.Region]*regionWindow)
		}
	})
}

// Config returns the configuration with defaults applied.
func (p *P99Dynamic) Config() P99DynamicConfig { p.ready(); return p.cfg }

// Name returns "p99_dynamic" (or "p<q>_dynamic" for another quantile).
func (p *P99Dynamic) Name() string {
	p.ready()
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

func (p *P99Dynamic) window(now time.Duration, r hedging.Region) *regionWindow {
	w := p.regions[r]
	if w == nil {
		w = &regionWindow{buckets: make([]*ddsketch.DDSketch, p.cfg.Buckets), censored: make([]*ddsketch.DDSketch, p.cfg.Buckets),
			merged: p.newSketch(), all: p.newSketch()}
		for i := range w.buckets {
			w.buckets[i], w.censored[i] = p.newSketch(), p.newSketch()
		}
		w.bucketEnd = now + p.cfg.Window/time.Duration(p.cfg.Buckets)
		w.threshold = th(p.cfg.Initial)
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
		w.censored[w.cur].Clear()
		w.bucketEnd += width
		w.nextCalc = 0
	}
	return w
}

// Observe learns from an ended operation ([hedging.OperationEnded]; it
// ignores the other events): each leg that answered adds its latency to
// its region's window, and a primary the race cancelled adds its elapsed
// time, a lower bound of its latency, to the quantile (not to the
// ceiling's median) under CensorLowerBound. A leg that ended without a
// final response (a transient answer, a local throttle) adds nothing: it
// is no latency.
func (p *P99Dynamic) Observe(now time.Duration, o hedging.Observation) {
	if o.Event != hedging.OperationEnded {
		return
	}
	p.ready()
	for l, leg := range o.Legs {
		switch {
		case leg.Outcome == hedging.LegAnswered:
			p.add(now, leg.Region, leg.Elapsed, false)
		case leg.Outcome == hedging.LegCancelled && hedging.Leg(l) == hedging.Primary && p.cfg.Censoring == CensorLowerBound:
			p.add(now, leg.Region, leg.Elapsed, true)
		}
	}
}

func (p *P99Dynamic) add(now time.Duration, region hedging.Region, latency time.Duration, censored bool) {
	ms := float64(latency) / float64(time.Millisecond)
	if !(ms > 0) || math.IsInf(ms, 0) {
		ms = 1e-6
	}
	p.ready()
	p.mu.Lock()
	w := p.window(now, region)
	if censored {
		_ = w.censored[w.cur].Add(ms)
	} else {
		_ = w.buckets[w.cur].Add(ms)
	}
	p.mu.Unlock()
}

// quantile returns the sketch's value at q in ms, rounded per cfg.Rounding.
func (p *P99Dynamic) quantile(s *ddsketch.DDSketch, q float64) (float64, bool) {
	v, err := s.GetValueAtQuantile(q)
	if err != nil {
		return 0, false
	}
	if p.cfg.Rounding == RoundUpperEdge {
		v = s.LowerBound(s.Index(v) + 1)
	}
	return v, true
}

// Threshold returns the threshold of an operation whose primary region is
// q.Primary at now, for every operation: see [P99Dynamic] for the formula
// and [P99DynamicConfig] for the options that change it.
func (p *P99Dynamic) Threshold(now time.Duration, q hedging.ThresholdQuery) (hedging.Threshold, bool) {
	return p.threshold(now, q.Primary), true
}

func (p *P99Dynamic) threshold(now time.Duration, primary hedging.Region) hedging.Threshold {
	p.ready()
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.window(now, primary)
	// Warm-up recomputes on every operation (its window is small): a
	// Refresh-long wait at Initial hedged a far client's first second.
	if now < w.nextCalc && (w.warm || p.cfg.Warmup == WarmupInitial) {
		return w.threshold
	}
	w.nextCalc = now + p.cfg.Refresh
	w.merged.Clear()
	w.all.Clear()
	for i := range w.buckets {
		_ = w.merged.MergeWith(w.buckets[i])
		_ = w.all.MergeWith(w.buckets[i])
		_ = w.all.MergeWith(w.censored[i])
	}
	if p.cfg.Ceiling == CeilingMedian && w.merged.GetCount() > 0 {
		if med, ok := p.quantile(w.merged, 0.5); ok {
			w.ceiling = p.cfg.CeilingFactor * med
		}
	}
	n := w.all.GetCount()
	q := p.cfg.Quantile
	switch {
	case n >= float64(p.cfg.MinSamples):
		w.warm = true
	case w.warm && p.cfg.ThinWindow == ThinKeepLast:
		return w.threshold // the last estimate from a full window
	case !w.warm && n > 0 && p.cfg.Warmup == WarmupMaxObserved:
		q = 1
	default:
		w.threshold = th(p.cfg.Initial)
		return w.threshold
	}
	v, ok := p.quantile(w.all, q)
	if !ok {
		return w.threshold
	}
	if p.cfg.Ceiling == CeilingMedian {
		c := w.ceiling
		if c == 0 {
			// Every observation so far is a superseded primary: no primary
			// has answered, so there is no baseline, and every operation is
			// hedged anyway; hedging at Min costs no extra RU and saves the
			// wait (and a ratchet on lower bounds).
			c = float64(p.cfg.Min) / float64(time.Millisecond)
		}
		v = math.Min(v, c)
	}
	d := time.Duration(v * float64(time.Millisecond))
	w.threshold = th(min(max(d, p.cfg.Min), p.cfg.Max))
	return w.threshold
}

// th returns the threshold d, or the zero threshold ("no opinion") when d
// is not positive; the policies here only ever pass d > 0.
func th(d time.Duration) hedging.Threshold {
	t, _ := hedging.NewThreshold(d)
	return t
}
