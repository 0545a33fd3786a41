package threshold

import (
	"cmp"
	"fmt"
	"math"
	"sync"
	"time"

	"hedgelab/hedging"
)

// RecommendedConfig configures [Recommended]. The zero value is the
// recommended configuration; zero fields take the defaults noted on each.
type RecommendedConfig struct {
	// Quantile is the latency quantile the policy minimises; default 0.99.
	Quantile float64
	// HedgeCost is what hedging every operation must buy, as a fraction of
	// the unhedged quantile: a threshold hedging a fraction h of operations
	// is chosen only if it lowers the quantile by more than HedgeCost × h
	// of it. Default 0.5; in [0, 10].
	HedgeCost float64
	// MinGain is the smallest relative gain in the quantile worth hedging
	// for; default 0.05 (5%); in [0, 1).
	MinGain float64
	// MaxHedgeRate caps the fraction of operations the chosen threshold
	// may hedge, in (0, 1]; default 1. Set it to a hedge budget's ratio so
	// the threshold fits the budget instead of the budget refusing
	// hedges at random.
	MaxHedgeRate float64
	// Warmup is the least time after a key's first observation before it
	// hedges; it is also at least 2 × the largest latency seen, so the
	// first estimate is not of the fastest operations only (warm-up by
	// time, not by arrival count). Default 50 ms.
	Warmup time.Duration
	// MinSamples is the decayed observation weight a key needs before it
	// hedges, and the weight of the prior that stands for the alternate
	// until it has been observed; default 20.
	MinSamples float64
	// TargetSamples, MinMemory and MaxMemory set how fast old observations
	// fade: their weight decays with time constant TargetSamples / rate,
	// clamped to [MinMemory, MaxMemory]. Defaults 2000, 5 s, 60 s.
	TargetSamples        float64
	MinMemory, MaxMemory time.Duration
	// Refresh is how often a key's threshold is recomputed; default 250 ms.
	Refresh time.Duration
	// Explore is the period, in operations of a key, of an operation sent
	// without a hedge while hedging is on, so the primary's latency beyond
	// the threshold stays observed; default 200 (0.5%). Negative: never.
	Explore int
	// Max is the largest threshold; default 4 s (TPS §4.2's clamp).
	Max time.Duration
	// Backstop is the threshold, as a multiple of the unhedged quantile,
	// used while no threshold pays; default 2 (beyond p99.99 of the
	// lognormal bodies measured here, so it hedges almost nothing, and a
	// slow mode estimated just under 1 - Quantile is hedged at twice the
	// body's quantile, not three times); >= 1.
	Backstop float64
	// Cold is the threshold, as a multiple of the median primary latency
	// observed so far, before Warmup and MinSamples; default 10; >= 1.
	Cold float64
	// Initial is the threshold before a key's first answered primary (and
	// while most of its primaries were cancelled); default 350 ms, just
	// above the longest median round trip between two Azure regions (344
	// ms): a conservative prior, under which a healthy primary anywhere
	// answers first, and after which a primary slow from the start is
	// hedged. With a deadline and no alternate evidence, an operation's
	// threshold is at most half the time left (§5.2's rule, on what
	// remains).
	Initial time.Duration
	// Probe is the period, in operations of a key, of an operation hedged
	// at the primary's 90th percentile while fewer than MinSamples
	// alternates have been observed and the primary region has seen no
	// alternate answer at all; default 100 (1%). Negative: never.
	Probe int
}

func (c *RecommendedConfig) setDefaults() {
	c.Quantile = cmp.Or(c.Quantile, 0.99)
	c.HedgeCost = cmp.Or(c.HedgeCost, 0.5)
	c.MinGain = cmp.Or(c.MinGain, 0.05)
	c.MaxHedgeRate = cmp.Or(c.MaxHedgeRate, 1)
	c.Warmup = cmp.Or(c.Warmup, 50*time.Millisecond)
	c.MinSamples = cmp.Or(c.MinSamples, 20)
	c.TargetSamples = cmp.Or(c.TargetSamples, 2000)
	c.MinMemory = cmp.Or(c.MinMemory, 5*time.Second)
	c.MaxMemory = cmp.Or(c.MaxMemory, 60*time.Second)
	c.Refresh = cmp.Or(c.Refresh, 250*time.Millisecond)
	c.Explore = cmp.Or(c.Explore, 200)
	c.Max = cmp.Or(c.Max, 4000*time.Millisecond)
	c.Backstop = cmp.Or(c.Backstop, 2)
	c.Cold = cmp.Or(c.Cold, 10)
	c.Probe = cmp.Or(c.Probe, 100)
	c.Initial = cmp.Or(c.Initial, recInitial)
}

// Validate reports the first impossible setting after defaults, naming the
// field ("recommended: quantile must be in (0,1), got 1.5").
func (c RecommendedConfig) Validate() error {
	c.setDefaults()
	bad := func(f string, v any, want string) error {
		return fmt.Errorf("recommended: %s must be %s, got %v", f, want, v)
	}
	switch {
	case !(c.Quantile > 0 && c.Quantile < 1):
		return bad("quantile", c.Quantile, "in (0,1)")
	case !(c.HedgeCost >= 0 && c.HedgeCost <= 10):
		return bad("hedge cost", c.HedgeCost, "in [0, 10]")
	case !(c.MinGain >= 0 && c.MinGain < 1):
		return bad("min gain", c.MinGain, "in [0, 1)")
	case !(c.MaxHedgeRate > 0 && c.MaxHedgeRate <= 1):
		return bad("max hedge rate", c.MaxHedgeRate, "in (0, 1]")
	case c.Warmup < 0:
		return bad("warmup", c.Warmup, ">= 0")
	case !(c.MinSamples >= 1 && c.MinSamples <= 1e6):
		return bad("min samples", c.MinSamples, "in [1, 1e6]")
	case !(c.TargetSamples >= 1 && c.TargetSamples <= 1e9):
		return bad("target samples", c.TargetSamples, "in [1, 1e9]")
	case c.MinMemory <= 0 || c.MaxMemory < c.MinMemory:
		return fmt.Errorf("recommended: memory must satisfy 0 < min (%v) <= max (%v)", c.MinMemory, c.MaxMemory)
	case c.Refresh <= 0:
		return bad("refresh", c.Refresh, "> 0")
	case c.Max <= 0:
		return bad("max", c.Max, "> 0")
	case c.Initial <= 0:
		return bad("initial", c.Initial, "> 0")
	case !(c.Backstop >= 1 && c.Backstop <= 1000):
		return bad("backstop", c.Backstop, "in [1, 1000]")
	case !(c.Cold >= 1 && c.Cold <= 1000):
		return bad("cold", c.Cold, "in [1, 1000]")
	}
	return nil
}

// Latency histograms: log-spaced bins from recLo, each recRatio wider than
// the last; values above the last bin count in it.
const (
	recBins  = 280
	recLo    = 50e-3 // ms
	recRatio = 1.05
)

var recLogRatio = math.Log(recRatio)

// recTailSamples is the observation weight beyond a quantile for its
// estimate to count (fewer: noise).
const recTailSamples = 2

// recBin returns the bin of a latency in ms.
func recBin(ms float64) int {
	if !(ms > recLo) {
		return 0
	}
	return min(int(math.Log(ms/recLo)/recLogRatio), recBins-1)
}

// recUpper returns the upper edge of bin i in ms.
func recUpper(i int) float64 { return recLo * math.Pow(recRatio, float64(i+1)) }

// recKey is what the policy learns under: a primary region and an
// operation kind.
type recKey struct {
	primary hedging.Region
	kind    hedging.OperationKind
}

// recState is one key's evidence: decayed weights of the primary's and the
// alternate's attempt latencies, answered and censored, and the cached
// decision. Its size is fixed (bounded memory per key).
type recState struct {
	pU, pC, aU, aC [recBins]float32
	first, decayed time.Duration
	maxMs          float64 // largest answered primary latency
	rate           float64 // smoothed primary observations per second
	since          float64 // primary observations since the last decay
	nextCalc       time.Duration
	hedge          bool // s.t applies (the chosen threshold or the backstop)
	warmed         bool // the warm-up by time has ended once
	t              time.Duration
	probeT         time.Duration // > 0: the alternate is unknown; probe at this threshold
	altMed         time.Duration
	ops            int
	region         *recRegion       // the primary region's shared evidence
	survP, survA   [recBins]float32 // scratch
}

// Recommended is the threshold policy notebook 01 recommends (scenario type
// "recommended"; hedgelab's proposal for spec §17 Q11), designed from what
// a hedge is for: send the alternate only when it is expected to answer
// sooner, and only as much as it pays. Per (primary region, operation
// kind) it keeps the primary's attempt latency P and the alternate's
// response time A as time-decayed histograms (memory TargetSamples/rate,
// within [MinMemory, MaxMemory]), each read as a Kaplan–Meier estimate
// over answered and cancelled (censored) attempts; a cancelled primary is
// a hedge that won, a cancelled alternate one that lost. The primary's
// tail past its last answer stays open (slower than any bin); the
// alternate's past its last observation takes the prior's shape.
//
// Evidence a key lacks is borrowed, in this order. The alternate: until
// MinSamples alternates have been observed, A is taken to answer like the
// faster half of P shifted by how much farther the alternate is — the
// difference of the primary region's floors (its smallest answered
// alternate and primary latencies over every operation kind: the round
// trips the kinds share), or P's median while the region has seen no
// alternate answer (the alternate is another region: as far again as the
// primary) — and, while the region has seen none, one operation in Probe
// is hedged at P's 90th percentile. A fresh key: Initial (350 ms, above the
// longest median round trip between two Azure regions) until a primary
// answers, then Cold × the median, until MinSamples observations and
// Warmup (at least 2 × the largest answered latency, once: the first
// answers are the fastest); once the key's own alternate has answered in
// less than half the primary's median (unknown, so slower, while most
// primaries were cancelled), twice the alternate's median. The deadline:
// each operation's threshold leaves the alternate its median answer time,
// or, while that is unknown, is at most half the time left (§5.2's rule
// on what remains); an operation whose deadline leaves nothing is not
// hedged. The client's throughput-control gate (§9.3): for a second after
// an attempt was refused by it locally (a local 429, which is no latency),
// nothing is hedged — the gate is saturated, and an alternate would take
// a token another operation needs.
//
// Every Refresh it evaluates, for each candidate threshold T, the Quantile
// of min(P, T + A) and the hedge rate P(P > T), and picks the T with the
// largest relative gain over not hedging net of HedgeCost × hedge rate.
// Where the unhedged quantile at least doubles between Quantile and the
// band's top, 1 - (1 - Quantile)/2 (a slow mode whose share sits at
// 1 - Quantile, estimated on either side of it by chance; the deeper
// quantile an operation made of several attempts, a query's leaves, sees),
// a threshold is judged by the larger of the two gains. Where no T gains
// at least MinGain it keeps a backstop at Backstop × the unhedged quantile,
// which hedges almost nothing but catches a sudden slow-down before its
// first slow primary has answered. One operation in Explore is not hedged,
// so the primary's latency past the threshold stays observed.
//
// Failure kinds it survives (scenarios/testdata/policy-cases, and the
// embedded scenarios it lost before): hedges that cannot win (correlated
// slow-downs, heavy operations everywhere: the alternate is no faster, so
// no threshold gains), a deadline below any fixed floor, a majority
// slow-down (no quantile of the primary to ratchet), warm-up at any arrival
// rate (by time), a fresh instance far from its regions (350 ms, then 10 ×
// the median), censored primaries (Kaplan–Meier), a primary slow from a
// fresh instance's first operation (primary-slow: p99 15 ms; 1 s with the
// old 1 s prior), a fresh instance's first page behind a stale cache
// (feed-metadata-latest), low-rate instances whose prior would hedge a near
// primary (feed-cold-metadata), a slow mode at the quantile's edge
// (feed-fan-out's 1% of slow leaves), and a saturated client gate
// (throughput-control: errors as without hedging). Kinds it does not
// survive on its own: a fleet's extra load (set a [Budget] with
// BurstSeconds beside it, as the strategy's [hedging.HedgingStrategy.Gate];
// an instance below ~0.3 operations/s stays cold); hedges whose cost lands
// after them (feed-change-feed-cursors: a region-local change-feed cursor
// taken for portable re-delivers changes, and the pages' RU counts where
// their latency, polled in the background, does not: any policy hedging the
// pages is 2 RU points behind disabled); a primary slow on every read whose
// alternate never answers first (feed-query-brownout: every page +300 ms,
// the prior sees no gain and the probes lose, where a blind 50 ms floor
// finds the alternate); a first request that also opens its connection (TLS
// round trips, not simulated) to a primary more than ~120 ms away, hedged
// at 350 ms; a count-only breaker ([hedging.Config.HedgeWinMinSpan] < 0)
// tripped by the backstop's hedges on a GC pause (the default 1 s span
// keeps it: gc-pause-hot-partition at N = 3, p99 13.7 ms, not dominated);
// an operation p99 set by another path than the primary attempt
// (hub-header-1002); an alternate whose recovery it has not seen (its
// evidence is kept while no hedge goes out; backstop hedges renew it); and
// a primary slower than its evidence for less than Refresh.
//
// State per key is fixed (7.5 KB: BenchmarkRecommendedBytesPerInstance),
// plus a 48-byte record per primary region; keys are bounded by regions ×
// operation kinds. Safe for concurrent use; time is a parameter, never
// read from a clock.
type Recommended struct {
	cfg     RecommendedConfig
	mu      sync.Mutex
	keys    map[recKey]*recState
	regions map[hedging.Region]*recRegion
	// throttled is when the client's throughput-control gate last refused
	// an attempt locally (§9.3 #2); -1: never.
	throttled time.Duration
}

// recInitial is the default [RecommendedConfig.Initial]: just above the
// longest median round trip between two Azure regions (344 ms, Brazil South
// to Indonesia Central, ../shared/data/azure_rtt_p50_ms_2026-07.csv), so a
// healthy primary anywhere answers a fresh key's first operations before
// it, and a primary slow from the start is hedged after it.
const recInitial = 350 * time.Millisecond

// recThrottleHold is how long after a local throughput-control 429 the
// gate counts as saturated, so that no latency hedge is sent (§9.3).
const recThrottleHold = time.Second

// recRegion is what a primary region's keys share: the floors of the
// primary's and the alternate's answered attempt latencies over every
// operation kind (the round trips, which the kinds have in common), each
// the smaller of the last two MaxMemory/2 windows' minima, so a changed
// network shows within a memory.
type recRegion struct {
	prim, alt recFloor
}

// recFloor is a minimum over the last one to two windows (ms; +Inf when
// nothing was observed).
type recFloor struct {
	cur, prev float64
	start     time.Duration
}

// add records ms at now with windows of length w.
func (f *recFloor) add(now, w time.Duration, ms float64) {
	f.roll(now, w)
	f.cur = min(f.cur, ms)
}

// roll starts a new window when the current one is older than w.
func (f *recFloor) roll(now, w time.Duration) {
	for now-f.start >= w {
		f.prev, f.cur = f.cur, math.Inf(1)
		f.start += w
		if now-f.start >= w { // idle for two windows or more: forget both
			f.prev, f.start = math.Inf(1), now
		}
	}
}

// get returns the floor at now (+Inf: none).
func (f *recFloor) get(now, w time.Duration) float64 {
	f.roll(now, w)
	return min(f.cur, f.prev)
}

// NewRecommended returns the policy, or the error of cfg.Validate.
func NewRecommended(cfg RecommendedConfig) (*Recommended, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Recommended{cfg: cfg, keys: make(map[recKey]*recState), regions: make(map[hedging.Region]*recRegion), throttled: -1}, nil
}

// Config returns the configuration with defaults applied.
func (p *Recommended) Config() RecommendedConfig { return p.cfg }

// Name returns "recommended".
func (p *Recommended) Name() string { return "recommended" }

// Threshold returns the threshold of a point read without a deadline, or
// Max when the policy would not hedge it.
func (p *Recommended) Threshold(now time.Duration, primary hedging.Region) hedging.Threshold {
	t, ok := p.ThresholdOp(now, primary, hedging.PointRead, 0)
	if !ok {
		return th(p.cfg.Max)
	}
	return t
}

// Observe records an answered point-read attempt to region as a primary
// attempt of that region (for callers that drive the policy by hand; the
// race reports through AttemptEnded).
func (p *Recommended) Observe(now time.Duration, region hedging.Region, latency time.Duration) {
	p.AttemptEnded(now, hedging.AttemptEnd{Primary: region, Region: region, Kind: hedging.PointRead, Elapsed: latency, Answered: true})
}

func (p *Recommended) state(now time.Duration, k recKey) *recState {
	s := p.keys[k]
	if s == nil {
		s = &recState{first: -1, decayed: now, nextCalc: now}
		p.keys[k] = s
		r := p.regions[k.primary]
		if r == nil {
			inf := math.Inf(1)
			r = &recRegion{prim: recFloor{inf, inf, now}, alt: recFloor{inf, inf, now}}
			p.regions[k.primary] = r
		}
		s.region = r
	}
	return s
}

// AttemptEnded records one attempt: the primary leg's under the primary's
// distribution, the alternate leg's under the alternate's; answered
// attempts as latencies, cancelled ones as lower bounds.
func (p *Recommended) AttemptEnded(now time.Duration, a hedging.AttemptEnd) {
	ms := float64(a.Elapsed) / float64(time.Millisecond)
	i := recBin(ms)
	p.mu.Lock()
	defer p.mu.Unlock()
	if a.LocalThrottle {
		// Not a latency of the region: the attempt never left the client.
		p.throttled = now
		return
	}
	s := p.state(now, recKey{a.Primary, a.Kind})
	if a.Answered {
		w := p.cfg.MaxMemory / 2
		if a.Leg == hedging.Alternate {
			s.region.alt.add(now, w, ms)
		} else {
			s.region.prim.add(now, w, ms)
		}
	}
	switch {
	case a.Leg == hedging.Alternate && a.Answered:
		s.aU[i]++
	case a.Leg == hedging.Alternate:
		s.aC[i]++
	case a.Answered:
		s.pU[i]++
	default:
		s.pC[i]++
	}
	if a.Leg == hedging.Primary {
		s.since++
		if s.first < 0 {
			s.first = now
		}
		if a.Answered {
			// Survivor bias concerns answers: the first to arrive are the
			// fastest. A cancelled primary is a lower bound however early.
			s.maxMs = max(s.maxMs, ms)
		}
	}
}

// ThresholdOp returns the threshold of one operation and whether to hedge
// it (see [Recommended]).
func (p *Recommended) ThresholdOp(now time.Duration, primary hedging.Region, kind hedging.OperationKind, remaining time.Duration) (hedging.Threshold, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.state(now, recKey{primary, kind})
	if now >= s.nextCalc {
		s.nextCalc = now + p.cfg.Refresh
		p.decide(now, s)
	}
	if !s.hedge {
		return th(p.cfg.Max), false
	}
	if p.throttled >= 0 && now-p.throttled < recThrottleHold {
		// §9.3: the client's throughput-control gate is saturated; an
		// alternate would take a token another operation needs.
		return th(p.cfg.Max), false
	}
	s.ops++
	if p.cfg.Explore > 0 && s.ops%p.cfg.Explore == 0 {
		return th(p.cfg.Max), false
	}
	t := s.t
	if s.probeT > 0 && p.cfg.Probe > 0 && s.ops%p.cfg.Probe == p.cfg.Probe/2 {
		t = min(t, s.probeT) // the alternate is unknown: probe it
	}
	if remaining > 0 {
		if s.altMed > 0 {
			t = min(t, remaining-s.altMed)
		} else {
			t = min(t, remaining/2) // the alternate unknown: §5.2's half of the time left
		}
		if t <= 0 {
			return th(p.cfg.Max), false
		}
	}
	return th(t), true
}

// decay fades s's evidence to now; p.mu must be held.
func (p *Recommended) decay(now time.Duration, s *recState) {
	dt := (now - s.decayed).Seconds()
	if dt <= 0 {
		return
	}
	s.decayed = now
	s.rate = 0.8*s.rate + 0.2*s.since/dt
	if s.rate == 0 {
		s.rate = s.since / dt
	}
	s.since = 0
	tau := p.cfg.TargetSamples / max(s.rate, 1e-9)
	tau = min(max(tau, p.cfg.MinMemory.Seconds()), p.cfg.MaxMemory.Seconds())
	f := math.Exp(-dt / tau)
	// The alternate's evidence fades only down to MinSamples: while no
	// hedge goes out, what was learned of the alternate is kept rather
	// than replaced by the prior (which would send a burst of hedges to
	// relearn it every few memories).
	var wA float64
	for i := range recBins {
		wA += float64(s.aU[i]) + float64(s.aC[i])
	}
	fA := f
	if wA > 0 {
		fA = min(1, max(f, p.cfg.MinSamples/wA))
	}
	for i := range recBins {
		s.pU[i] *= float32(f)
		s.pC[i] *= float32(f)
		s.aU[i] *= float32(fA)
		s.aC[i] *= float32(fA)
	}
}

// km writes the Kaplan–Meier survival past each bin of answered u and
// censored c into out and returns the total weight. Mass beyond the last
// answered value (censored only) stays in out's tail: unknown, taken as
// slower than any bin.
func km(u, c *[recBins]float32, out *[recBins]float32) float64 {
	var risk float64
	for i := range recBins {
		risk += float64(u[i]) + float64(c[i])
	}
	total, surv := risk, 1.0
	for i := range recBins {
		if risk > 0 {
			surv *= 1 - min(float64(u[i])/risk, 1)
		}
		out[i] = float32(surv)
		risk -= float64(u[i]) + float64(c[i])
	}
	return total
}

// survAt returns a survival curve's value at ms, interpolated between bin
// edges (1 at and below 0).
func survAt(surv *[recBins]float32, ms float64) float64 {
	if !(ms > recLo) {
		return 1
	}
	x := math.Log(ms/recLo)/recLogRatio - 1 // position on the upper-edge grid
	if x < 0 {
		return 1 + (x+1)*(float64(surv[0])-1)
	}
	i := int(x)
	if i >= recBins-1 {
		return float64(surv[recBins-1])
	}
	f := x - float64(i)
	return float64(surv[i])*(1-f) + float64(surv[i+1])*f
}

// quantileOf returns the smallest upper bin edge where surv <= 1-q, or +Inf.
func quantileOf(surv *[recBins]float32, q float64) float64 {
	for i := range recBins {
		if float64(surv[i]) <= 1-q {
			return recUpper(i)
		}
	}
	return math.Inf(1)
}

// lowerQuantileOf returns the lower edge of the bin holding quantile q of
// surv (below nine in ten of that bin's values, however narrow the
// distribution), or +Inf.
func lowerQuantileOf(surv *[recBins]float32, q float64) float64 {
	for i := range recBins {
		if float64(surv[i]) <= 1-q {
			if i == 0 {
				return recLo
			}
			return recUpper(i - 1)
		}
	}
	return math.Inf(1)
}

// decide recomputes s's threshold and whether to hedge; p.mu must be held.
func (p *Recommended) decide(now time.Duration, s *recState) {
	p.decay(now, s)
	s.hedge = false
	warm := max(p.cfg.Warmup, time.Duration(2*s.maxMs*float64(time.Millisecond)))
	wP := km(&s.pU, &s.pC, &s.survP)
	s.probeT = 0
	if (!s.warmed && (s.first < 0 || now-s.first < warm)) || wP < p.cfg.MinSamples {
		// Cold: the conservative prior (Initial, 350 ms) until a primary
		// answers, then Cold × the median of the answers: a fresh instance
		// does not hedge blindly, and stops hedging a heavy operation as
		// soon as it has seen one answer. Once this key's own alternate
		// has answered in less than half the primary's median
		// (Kaplan–Meier: unknown, so slower, while most primaries were
		// cancelled), the threshold is twice the alternate's median: the
		// evidence says the primary is the slow one (a primary slow from
		// the start), and waiting out the prior on each of a cold key's
		// few operations is what it would cost.
		s.nextCalc = now + p.cfg.Refresh/10 // look again soon
		s.hedge, s.t, s.altMed = true, p.cfg.Initial, 0
		med := quantileOf(&s.survP, 0.5) // +Inf: most primaries cancelled
		if s.first >= 0 && !math.IsInf(med, 1) {
			s.t = min(max(time.Duration(p.cfg.Cold*med*float64(time.Millisecond)), 1), p.cfg.Max)
		}
		if km(&s.aU, &s.aC, &s.survA) > 0 {
			if am := quantileOf(&s.survA, 0.5); !math.IsInf(am, 1) {
				s.altMed = time.Duration(am * float64(time.Millisecond))
				if 2*am < med {
					s.t = min(s.t, max(2*s.altMed, 1))
				}
			}
		}
		return
	}
	// The primary's tail stays open: a primary cancelled because the
	// alternate won is what a hedge is for.
	wA := km(&s.aU, &s.aC, &s.survA)
	// The prior for the alternate (below) is the faster half of the
	// primary's attempts (P | P <= median), shifted by how much farther
	// the alternate is than the primary: the difference of the region's
	// floors over every operation kind (the round trips), or, while the
	// region has seen no alternate answer, the primary's median (another
	// region, as far again as the primary).
	w := p.cfg.MaxMemory / 2
	shift, altSeen := quantileOf(&s.survP, 0.5), false
	if fa, fp := s.region.alt.get(now, w), s.region.prim.get(now, w); !math.IsInf(fa, 1) && !math.IsInf(fp, 1) {
		shift, altSeen = fa-fp, true
	}
	if math.IsInf(shift, 1) {
		shift = 0
	}
	prior := func(i int) float32 {
		return float32(max(0, 2*survAt(&s.survP, recUpper(i)-shift)-1))
	}
	// Beyond its last observation, the alternate's tail takes the prior's
	// shape: cancelled alternates say only "slower than this", and an
	// open tail would read a few early cancellations as "never answers",
	// a closed one a far alternate as a fast one.
	last := -1
	for i := range recBins {
		if s.aU[i]+s.aC[i] > 0 {
			last = i
		}
	}
	if last >= 0 {
		pl := prior(last)
		for i := last + 1; i < recBins; i++ {
			if pl > 0 {
				s.survA[i] = s.survA[last] * prior(i) / pl
			} else {
				s.survA[i] = 0
			}
		}
	}
	if wA < p.cfg.MinSamples {
		// Until MinSamples alternates have answered or been cancelled, the
		// prior stands for the missing observations: optimistic enough to
		// try hedges when the primary has a slow mode, and no gain where
		// the primary is steady (a far primary, a shared slow-down) or the
		// alternate's round trip eats what a hedge would save.
		f := float32(wA / p.cfg.MinSamples)
		for i := range recBins {
			s.survA[i] = f*s.survA[i] + (1-f)*prior(i)
		}
	}
	// The policy minimises the quantile over the band [q, qHi]: the
	// operation a user waits for is often several attempts (a query's
	// pages and leaves), whose quantile q lies deeper in the attempt's
	// tail, and a slow mode whose share is near 1-q falls on either side
	// of q by chance; a threshold is judged by its larger relative gain.
	q := p.cfg.Quantile
	qHi := 1 - (1-q)/2
	unhedged := func(q float64) float64 {
		if v := quantileOf(&s.survP, q); !math.IsInf(v, 1) {
			return v
		}
		return 2 * float64(p.cfg.Max) / float64(time.Millisecond)
	}
	qInf, qInfHi := unhedged(q), unhedged(qHi)
	// The band applies where a slow mode sits at q's edge: the unhedged
	// quantile at least doubles between q and qHi (a body's tail grows by
	// ~10% there), with recTailSamples observations beyond qHi.
	hiSeen := wP*(1-qHi) >= recTailSamples && qInfHi >= 2*qInf
	// The alternate's median answer time, for the deadline; when most of
	// its attempts were cancelled before answering (unknown), the prior's.
	am := quantileOf(&s.survA, 0.5)
	if math.IsInf(am, 1) {
		am = quantileOf(&s.survP, 0.25) + shift // the prior's median
		if math.IsInf(am, 1) || am < 0 {
			am = 0
		}
	}
	s.altMed = time.Duration(am * float64(time.Millisecond))
	if wA < p.cfg.MinSamples {
		// Decided on the prior: look again soon, once hedges have answered;
		// meanwhile, while the region has seen no alternate answer at all,
		// one operation in Probe is hedged at the lower edge of the
		// primary's 90th percentile, so an alternate the prior thinks no
		// faster (a primary slow on every read) is still observed, and
		// mostly where hedges matter: behind a slow primary.
		s.nextCalc = now + p.cfg.Refresh/10
		if !altSeen {
			s.probeT = max(time.Duration(lowerQuantileOf(&s.survP, 0.9)*float64(time.Millisecond)), 1)
		}
	}
	s.warmed = true // the warm-up by time is over for good: a slow answer later is evidence, not bias
	// Q(T): the smallest upper edge x with S_P(x) × S_A(x - T) <= 1-q.
	quant := func(t, q float64) float64 {
		lo, hi := 0, recBins-1
		if float64(s.survP[hi])*survAt(&s.survA, recUpper(hi)-t) > 1-q {
			return math.Inf(1)
		}
		for lo < hi {
			m := (lo + hi) / 2
			if float64(s.survP[m])*survAt(&s.survA, recUpper(m)-t) <= 1-q {
				hi = m
			} else {
				lo = m + 1
			}
		}
		return recUpper(lo)
	}
	maxMs := float64(p.cfg.Max) / float64(time.Millisecond)
	hcap := p.cfg.MaxHedgeRate
	if wA < p.cfg.MinSamples {
		hcap = min(hcap, 0.5) // on the prior: hedge at most half, learn the alternate
	}
	best, bestT, bestGain := 0.0, 0.0, 0.0
	for i := range recBins {
		t := recUpper(i)
		if t > maxMs {
			break
		}
		h := survAt(&s.survP, t)
		if h > hcap {
			continue
		}
		gain := 1 - quant(t, q)/qInf
		if hiSeen {
			gain = max(gain, 1-quant(t, qHi)/qInfHi)
		}
		if g := gain - p.cfg.HedgeCost*h; g > best {
			best, bestT, bestGain = g, t, gain
		}
	}
	s.hedge = true
	if best > 0 && bestGain >= p.cfg.MinGain {
		s.t = time.Duration(bestT * float64(time.Millisecond))
		return
	}
	// No threshold pays: a backstop at Backstop × the unhedged quantile
	// hedges almost nothing, but a sudden slow-down is hedged before its
	// first slow primary has answered (a model learns only from answers).
	s.t = min(time.Duration(p.cfg.Backstop*qInf*float64(time.Millisecond)), p.cfg.Max)
}
