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
	// used while no threshold pays; default 3; >= 1.
	Backstop float64
	// Cold is the threshold, as a multiple of the median primary latency
	// observed so far, before Warmup and MinSamples; default 10; >= 1.
	Cold float64
	// Initial is the threshold before a key's first answered primary (and
	// while most of its primaries were cancelled); default 1 s (the
	// spec's driver default, §5.2). It is a conservative prior: a fresh
	// instance hedges only a primary that has not answered in a second.
	Initial time.Duration
	// Probe is the period, in operations of a key, of an operation hedged
	// at the primary's 90th percentile while fewer than MinSamples alternates
	// have been observed; default 100 (1%). Negative: never.
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
	c.Backstop = cmp.Or(c.Backstop, 3)
	c.Cold = cmp.Or(c.Cold, 10)
	c.Probe = cmp.Or(c.Probe, 100)
	c.Initial = cmp.Or(c.Initial, hedging.DefaultThresholdCap)
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
	hedge          bool // warm: s.t applies (the chosen threshold or the backstop)
	t              time.Duration
	probeT         time.Duration // > 0: the alternate is unknown; probe at this threshold
	altMed         time.Duration
	ops            int
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
// alternate's past its last observation takes the prior's shape. Until MinSamples
// alternates have been observed, A is taken to answer like the faster half
// of P (an optimistic prior; it may hedge at most half of the operations)
// and one operation in Probe is hedged at P's 90th percentile, so an
// alternate is observed even when the prior sees no gain.
//
// Every Refresh it evaluates, for each candidate threshold T, the Quantile
// of min(P, T + A) and the hedge rate P(P > T), and picks the T with the
// largest gain over not hedging net of HedgeCost × hedge rate × the
// unhedged quantile; where no T gains at least MinGain it keeps a backstop
// at Backstop × the unhedged quantile, which hedges almost nothing but
// catches a sudden slow-down before its first slow primary has answered.
// One operation in Explore is not hedged, so the primary's latency past
// the threshold stays observed. Each operation's threshold leaves the
// alternate its median answer time before the deadline; an operation whose
// deadline leaves none is not hedged. Before a key has MinSamples
// observations and Warmup (at least 2 × the largest answered latency: the
// first answers are the fastest), the threshold is the conservative prior
// Initial (1 s) until a primary has answered, then Cold × the median
// (Initial, if lower, while the alternate answers faster than that median).
//
// Failure kinds it survives (../shared/cases/policy): hedges that cannot
// win (correlated slow-downs, heavy operations everywhere: the alternate
// is no faster, so no threshold gains), a deadline below any fixed floor,
// a majority slow-down (no quantile of the primary to ratchet: the
// threshold follows what the alternate buys), warm-up at any arrival rate
// (by time), a fresh instance far from its regions (1 s, then 10 × the
// median), censored primaries (Kaplan–Meier). Kinds it does not survive on
// its own: a fleet's extra load (wrap it in a [Budget] with
// BurstSeconds; an instance below ~0.3 operations/s stays cold), a
// primary slow from a fresh instance's first operation (the first ~2 s
// wait for the 1 s prior: primary-slow p99 1 s, where a blind 50 ms floor
// gets 61 ms), a breaker tripped by the backstop's hedges on a GC pause
// (use [hedging.Config.HedgeWinMinSpan]), an operation p99 set by another path
// than the primary attempt (hub-header-1002: it hedges the attempt's tail
// for no operation gain), an alternate whose recovery it has not seen (its
// evidence is kept while no hedge goes out; backstop hedges renew it), and
// a primary slower than its evidence for less than Refresh.
//
// State per key is fixed (7 KB: BenchmarkRecommendedBytesPerInstance);
// keys are bounded by regions × operation kinds. Safe for concurrent use;
// time is a parameter, never read from a clock.
type Recommended struct {
	cfg  RecommendedConfig
	mu   sync.Mutex
	keys map[recKey]*recState
}

// NewRecommended returns the policy, or the error of cfg.Validate.
func NewRecommended(cfg RecommendedConfig) (*Recommended, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Recommended{cfg: cfg, keys: make(map[recKey]*recState)}, nil
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
	s := p.state(now, recKey{a.Primary, a.Kind})
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
	s.ops++
	if p.cfg.Explore > 0 && s.ops%p.cfg.Explore == 0 {
		return th(p.cfg.Max), false
	}
	t := s.t
	if s.probeT > 0 && p.cfg.Probe > 0 && s.ops%p.cfg.Probe == p.cfg.Probe/2 {
		t = min(t, s.probeT) // the alternate is unknown: probe it
	}
	if remaining > 0 {
		t = min(t, remaining-s.altMed)
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
	if s.first < 0 || now-s.first < warm || wP < p.cfg.MinSamples {
		s.nextCalc = now + p.cfg.Refresh/10 // cold: look again soon
	}
	if s.first < 0 || now-s.first < warm || wP < p.cfg.MinSamples {
		// Cold: a conservative prior (Initial, the spec's driver default
		// of 1 s) until the first answers, then Cold × their median: a
		// fresh instance neither hedges blindly nor waits out a primary
		// slow from the start, and stops hedging a heavy operation as soon
		// as it has seen one answer.
		s.hedge, s.t = true, p.cfg.Initial
		if med := quantileOf(&s.survP, 0.5); s.first >= 0 && !math.IsInf(med, 1) {
			cold := min(max(time.Duration(p.cfg.Cold*med*float64(time.Millisecond)), 1), p.cfg.Max)
			// Keep the prior while the alternate answers faster than the
			// primary's median (a primary slow from the start).
			if km(&s.aU, &s.aC, &s.survA) == 0 || !(quantileOf(&s.survA, 0.5) < med) {
				s.t = cold
			} else {
				s.t = min(s.t, cold)
			}
		}
		return
	}
	// The primary's tail stays open: a primary cancelled because the
	// alternate won is what a hedge is for.
	wA := km(&s.aU, &s.aC, &s.survA)
	// Beyond its last observation, the alternate's tail takes the prior's
	// shape (below): cancelled alternates say only "slower than this", and
	// an open tail would read a few early cancellations as "never
	// answers", a closed one a far alternate as a fast one.
	last := -1
	for i := range recBins {
		if s.aU[i]+s.aC[i] > 0 {
			last = i
		}
	}
	if last >= 0 {
		pl := max(0, 2*s.survP[last]-1)
		for i := last + 1; i < recBins; i++ {
			if pl > 0 {
				s.survA[i] = s.survA[last] * max(0, 2*s.survP[i]-1) / pl
			} else {
				s.survA[i] = 0
			}
		}
	}
	if wA < p.cfg.MinSamples {
		// Until MinSamples alternates have answered or been cancelled, the
		// alternate is taken to answer like the faster half of the
		// primary's attempts (P | P <= median), weighted as the missing
		// observations: optimistic enough to try hedges when the primary
		// has a slow mode, and no gain where the primary is steady (a far
		// primary, a shared slow-down).
		f := float32(wA / p.cfg.MinSamples)
		for i := range recBins {
			s.survA[i] = f*s.survA[i] + (1-f)*max(0, 2*s.survP[i]-1)
		}
	}
	q := p.cfg.Quantile
	qInf := quantileOf(&s.survP, q)
	if math.IsInf(qInf, 1) {
		qInf = 2 * float64(p.cfg.Max) / float64(time.Millisecond)
	}
	// The alternate's median answer time, for the deadline; when most of
	// its attempts were cancelled before answering (unknown), the prior's.
	am := quantileOf(&s.survA, 0.5)
	if math.IsInf(am, 1) {
		am = quantileOf(&s.survP, 0.25) // the prior's median: P | P <= median
		if math.IsInf(am, 1) {
			am = 0
		}
	}
	s.altMed = time.Duration(am * float64(time.Millisecond))
	if wA < p.cfg.MinSamples {
		// Decided on the prior: look again soon, once hedges have answered;
		// meanwhile one operation in Probe is hedged at the lower edge of
		// the primary's 90th percentile, so an alternate the prior thinks
		// no faster (a primary slow on every read) is still observed, and
		// mostly where hedges matter: behind a slow primary.
		s.nextCalc = now + p.cfg.Refresh/10
		s.probeT = max(time.Duration(lowerQuantileOf(&s.survP, 0.9)*float64(time.Millisecond)), 1)
	}
	// Q(T): the smallest upper edge x with S_P(x) × S_A(x - T) <= 1-q.
	quant := func(t float64) float64 {
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
	best, bestT, bestQ := 0.0, 0.0, qInf
	for i := range recBins {
		t := recUpper(i)
		if t > maxMs {
			break
		}
		h := survAt(&s.survP, t)
		if h > hcap {
			continue
		}
		qt := quant(t)
		if g := (qInf - qt) - p.cfg.HedgeCost*qInf*h; g > best {
			best, bestT, bestQ = g, t, qt
		}
	}
	s.hedge = true
	if best > 0 && bestQ <= (1-p.cfg.MinGain)*qInf {
		s.t = time.Duration(bestT * float64(time.Millisecond))
		return
	}
	// No threshold pays: a backstop at Backstop × the unhedged quantile
	// hedges almost nothing, but a sudden slow-down is hedged before its
	// first slow primary has answered (a model learns only from answers).
	s.t = min(time.Duration(p.cfg.Backstop*qInf*float64(time.Millisecond)), p.cfg.Max)
}
