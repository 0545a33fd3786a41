package threshold

import (
	"fmt"
	"math"
	"sync"
	"time"

	"hedgelab/hedging"
)

// BudgetConfig configures [Budget]. Ratio is required, and one of
// Burst and BurstSeconds; zero values of the other fields are the
// recommended behaviour.
type BudgetConfig struct {
	// Ratio is the tokens every hedge-eligible operation earns: the
	// long-run hedge rate the budget allows, in (0, 1].
	Ratio float64
	// Burst is the bucket size in tokens, > 0 and possibly fractional; the
	// bucket starts full. It refills from empty in Burst/Ratio operations.
	// A fixed Burst is the same for every instance, so a fleet of N
	// instances holds N × Burst tokens when a slow-down starts: use
	// BurstSeconds for a fleet.
	Burst float64
	// BurstSeconds, when > 0, sizes the bucket in seconds of the
	// instance's own budget: max(Ratio, Ratio × rate × BurstSeconds)
	// tokens, where rate is the instance's operation rate (decayed count
	// over max(BurstSeconds, 10 s)), and the bucket starts empty. A fleet
	// then holds at most Ratio × max(N, fleet rate × BurstSeconds) tokens
	// whatever its size: the extra load of a slow-down's onset is bounded
	// by the fleet's rate, not its instance count. Excludes Burst.
	//
	// A bucket below one token (a low-rate instance: at 0.2 operations/s,
	// 5% and 2 s it is 0.05) admits a hedge with probability equal to its
	// balance, so while it sat full and waited for a slow read it dropped
	// what it earned (fleet-10000-burst delivered a quarter of its ratio).
	// So while an instance has unmet
	// demand (a latency hedge denied within the last 1/Ratio operations,
	// the time to earn one token) its bucket holds up to one token; once
	// the demand stops for that long it shrinks back. The onset bound is
	// unchanged (a quiet instance holds at most the bucket size); under a
	// slow-down the instance keeps what it earns (fleet-10000-burst's
	// check in scenarios/policycases2_test.go).
	BurstSeconds float64
	// PerSecond is tokens earned per second of time regardless of traffic,
	// >= 0 (Finagle's minimum retry rate): a low-rate client can still hedge.
	PerSecond float64
	// Reserve is the balance a latency hedge needs to be admitted for
	// certain, > 0 and at most the bucket size; default 1. Below it and
	// above 0, when Reserve <= 1, a hedge is admitted with probability
	// equal to the balance (fractional tokens: an instance holding 0.02
	// tokens admits 2% of the hedges it is asked for, so a fleet's burst
	// is the sum of its balances, not one hedge per instance). gRPC's
	// retry throttling (A6) hedges only while the balance is above half
	// the bucket (Reserve = Burst/2), with no fractional admission.
	Reserve float64
	// Debt lets failover alternates charged under ChargeFailover push the
	// balance below zero, as hedgelab's first budget did: after a one-minute
	// 503 storm the budget stayed in debt for minutes and latency hedging
	// stayed off. Default false: a failover charge never takes the balance
	// below 0 (gRPC keeps retry tokens in [0, max]). Latency hedges are
	// admitted and charged at once ([Budget.Admit]), so they never owe
	// more than the one token of a fractional admission.
	Debt bool
	// ChargeFailover makes failover alternates ([hedging.SpawnCause.Failover]) spend
	// tokens too. Default false: a failover alternate is the spec's failover
	// (§6.5 #9) taking the place of the region-changing retry the
	// non-hedged path would send, the budget cannot deny it (it ignores the
	// threshold), and charging it only turns latency hedging off after an
	// error storm.
	ChargeFailover bool
}

// Budget caps the hedge rate of a hedging strategy with a token bucket
// — hedgelab's proposal for spec §17 Q11, not in the spec or its peer SDKs
// (the idea is gRPC's hedging throttle and Envoy's retry budget). It is a
// gate on sending the hedge, beside the strategy's threshold policy, never
// around it: set it as the strategy's [hedging.HedgingStrategy.Gate]
// ([hedging.HedgeGate]). Every hedge-eligible operation earns Ratio tokens
// when its threshold is chosen (up to the bucket size,
// [Budget.Observe] of [hedging.OperationStarted]), and when an operation's threshold fires the
// alternate goes out only if the bucket admits it, which charges it in the
// same step ([Budget.Admit]). The threshold itself is the policy's,
// unchanged. Admission and charge at one point means that in any window at
// most Ratio × operations + bucket size alternates go out, whatever the
// threshold (a budget admitting at the operation's start and charging a
// threshold later let more than twice the bound out on budget-onset), and a
// spent budget sends no latency hedge at all rather than falling back to a
// long threshold (budget-fallback). A saturated or throttled region is thus
// not flooded
// with alternates (spec §9.3). The same tokens admit the reads a tripped
// partition breaker (§9.5) moves to the alternate region
// ([Budget.Admit] with Redirect; before, a budget capped hedges, not that moved
// load), so hedges and moved reads together stay within the bound. See
// [BudgetConfig] for the fleet sizing, the floor and the failover decision.
//
// Failure kinds it survives (around [P99Dynamic] at 20%; the figures in
// notebook 01): extra load whatever the threshold (budget-fallback,
// budget-onset) and a fleet's onset (fleet-10000-burst), and the breaker's
// moved load (shared-alternate). Kinds it does not survive: a slow primary
// beyond its ratio waits unhedged (incident-us-east1-2019,
// exclude-regions-503, budget-after-503-storm); whatever its policy does
// not survive (deadline-below-floor; gc-pause-hot-partition with a
// count-only breaker).
type Budget struct {
	cfg    BudgetConfig
	mu     sync.Mutex
	tokens float64
	last   time.Duration // time of the last PerSecond refill
	opsW   float64       // decayed operation count (BurstSeconds)
	opsAt  time.Duration // time opsW was last decayed; -1 before the first
	draws  uint64        // fractional admissions drawn so far
	denied int64
	// wantOps is how many more operations the bucket may hold a whole
	// token after a denied hedge (a bucket below one token).
	wantOps float64
}

// A Budget is a hedge gate.
var _ hedging.HedgeGate = (*Budget)(nil)

// NewBudget returns the hedge budget cfg, a gate for
// [hedging.HedgingStrategy.Gate]. Errors name the bad field ("budget:
// burst must be > 0, got 0").
func NewBudget(cfg BudgetConfig) (*Budget, error) {
	if cfg.Reserve == 0 {
		cfg.Reserve = 1
	}
	switch {
	case !(cfg.Ratio > 0 && cfg.Ratio <= 1):
		return nil, fmt.Errorf("budget: ratio must be in (0,1], got %v", cfg.Ratio)
	case cfg.BurstSeconds != 0 && cfg.Burst != 0:
		return nil, fmt.Errorf("budget: burst (%v tokens) and burst seconds (%v s) are exclusive", cfg.Burst, cfg.BurstSeconds)
	case cfg.BurstSeconds == 0 && (!(cfg.Burst > 0) || math.IsInf(cfg.Burst, 0)):
		return nil, fmt.Errorf("budget: burst must be > 0, got %v", cfg.Burst)
	case !(cfg.BurstSeconds >= 0) || math.IsInf(cfg.BurstSeconds, 0):
		return nil, fmt.Errorf("budget: burst seconds must be >= 0, got %v", cfg.BurstSeconds)
	case !(cfg.PerSecond >= 0) || math.IsInf(cfg.PerSecond, 0):
		return nil, fmt.Errorf("budget: per-second refill must be >= 0, got %v", cfg.PerSecond)
	case !(cfg.Reserve > 0) || (cfg.BurstSeconds == 0 && cfg.Reserve > cfg.Burst):
		return nil, fmt.Errorf("budget: reserve must be in (0, burst=%v], got %v", cfg.Burst, cfg.Reserve)
	}
	b := &Budget{cfg: cfg, tokens: cfg.Burst, last: -1, opsAt: -1}
	return b, nil
}

// Config returns the configuration with defaults applied.
func (p *Budget) Config() BudgetConfig { return p.cfg }

// Name returns "budget(<ratio>)", as "budget(0.05)".
func (p *Budget) Name() string {
	return fmt.Sprintf("budget(%g)", p.cfg.Ratio)
}

// capacity returns the bucket size in tokens; p.mu must be held.
func (p *Budget) capacity() float64 {
	if p.cfg.BurstSeconds == 0 {
		return p.cfg.Burst
	}
	tau := max(p.cfg.BurstSeconds, 10)
	return max(p.cfg.Ratio, p.cfg.Ratio*(p.opsW/tau)*p.cfg.BurstSeconds)
}

// Observe earns one hedge-eligible operation's Ratio tokens (and
// PerSecond's since the last operation), up to the bucket size, when it
// starts ([hedging.OperationStarted]: once per operation, when its
// threshold is chosen); and charges a failover alternate (spec §6.5 #9)
// when it is sent ([hedging.AlternateSent]) under ChargeFailover, never
// below 0 unless Debt (see [BudgetConfig.Debt]) — a latency hedge was
// charged when [Budget.Admit] admitted it.
func (p *Budget) Observe(now time.Duration, o hedging.Observation) {
	switch {
	case o.Event == hedging.OperationStarted:
		p.earn(now)
	case o.Event == hedging.AlternateSent && o.Cause != hedging.SpawnThreshold && p.cfg.ChargeFailover:
		p.mu.Lock()
		if p.cfg.Debt {
			p.tokens--
		} else {
			p.tokens = min(p.tokens, max(p.tokens-1, 0))
		}
		p.mu.Unlock()
	}
}

// earn adds one operation's tokens at now.
func (p *Budget) earn(now time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	earn := p.cfg.Ratio
	if p.cfg.PerSecond > 0 && p.last >= 0 && now > p.last {
		earn += p.cfg.PerSecond * (now - p.last).Seconds()
	}
	p.last = now
	if p.cfg.BurstSeconds > 0 {
		if p.opsAt >= 0 && now > p.opsAt {
			p.opsW *= math.Exp(-(now - p.opsAt).Seconds() / max(p.cfg.BurstSeconds, 10))
		}
		p.opsAt = max(p.opsAt, now)
		p.opsW++
	}
	c := p.capacity()
	if p.wantOps > 0 {
		c = max(c, 1)
		p.wantOps--
	}
	p.tokens = math.Min(c, p.tokens+earn)
}

// Admit admits and charges one latency hedge due at now, or one read
// that a tripped partition breaker (spec §9.5) sends to the alternate
// region first (a.Redirect; [hedging.Client.Begin] asks the strategy's
// gate before it routes such a read): a token either way, since each is
// one more read on the alternate. So the budget bounds hedges and moved
// reads together: in any window at most Ratio × operations + bucket size
// of both. See [BudgetConfig.Reserve] for fractional admission.
func (p *Budget) Admit(now time.Duration, a hedging.Admission) bool {
	return p.take(now)
}

// take admits and charges one read on the alternate at now; see
// [BudgetConfig.Reserve] for fractional admission.
func (p *Budget) take(now time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.tokens >= p.cfg.Reserve:
	case p.cfg.Reserve <= 1 && p.tokens > 0 && p.draw(now) < p.tokens:
	default:
		p.denied++
		p.wantOps = 1 / p.cfg.Ratio
		return false
	}
	p.tokens--
	return true
}

// draw returns a deterministic pseudo-random number in [0, 1) from the
// time and the number of draws so far (splitmix64); p.mu must be held.
func (p *Budget) draw(now time.Duration) float64 {
	p.draws++
	z := uint64(now) + p.draws*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

// Tokens returns the current token balance.
func (p *Budget) Tokens() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tokens
}

// Denied returns how many latency hedges and breaker redirects
// ([Budget.Admit] with Redirect) the budget refused.
func (p *Budget) Denied() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.denied
}
