package threshold

import (
	"time"

	"hedgelab/hedging"
)

// DriverDefault returns the spec's driver default threshold as a policy
// (spec §5.2, scenario type "driver_default"): min(1 s, requestTimeout/2),
// 1 s when requestTimeout is zero or negative. The rule itself is
// [hedging.DriverDefaultThreshold], which the client applies when no
// strategy is set.
//
// Failure kinds it survives (the cases are in
// scenarios/testdata/policy-cases; the figures in notebook 01): hedges that
// cannot win while answers come within a second (far-primary,
// low-rate-client, cold-fleet, correlated-both-slow, flap-60s: it hedges
// almost nothing), warm-up at any arrival rate (it learns nothing), and a
// request timeout below a fixed floor (deadline-below-floor). Kinds it does
// not survive: a slow primary with a fast alternate waits a second
// (primary-slow, cold-start, breaker-trip); every answer slower than a
// second is hedged for nothing (both-slow, heavy-everywhere,
// budget-fallback); an operation deadline that is not the request timeout
// (deadline-short).
func DriverDefault(requestTimeout time.Duration) Static {
	return Static{T: hedging.DriverDefaultThreshold(requestTimeout)}
}

// CappedQuantile returns the [P99Dynamic] configuration of Cassandra's
// speculative_retry = 'MIN(99p, X ms)' (scenario type "capped_quantile"):
// the learned quantile with no median ceiling ([CeilingNone]), capped at
// limit (Max, > 0; NewP99Dynamic reports a limit below Min). The other
// fields keep the [P99DynamicConfig] defaults and may be set on the result.
//
// Failure kinds it survives: a slow-down that ratchets the quantile, which
// the cap bounds (gradual-slowdown, flap-60s), and warm-up bias. Kinds it
// does not survive: a steady primary slower than the cap, every read of
// which it hedges for nothing (far-primary, low-rate-client, cold-fleet,
// both-slow, correlated-both-slow); a cap above the threshold that pays
// (partial-slowdown, censored-p90, primary-slow); a deadline below its
// 50 ms floor (deadline-below-floor); the count-only breaker on GC pauses
// (gc-pause-hot-partition).
func CappedQuantile(limit time.Duration) P99DynamicConfig {
	return P99DynamicConfig{Ceiling: CeilingNone, Max: limit}
}

// BackupRequests returns the configuration of Finagle's
// BackupRequestFilter (scenario type "backup_requests"): a [P99Dynamic]
// at the (1 - maxExtraLoad) quantile with a 1 ms floor and no median
// ceiling, and the [Budget] that caps its hedges at maxExtraLoad per
// operation (0 < maxExtraLoad < 1) plus minPerSecond tokens per second
// (>= 0: a low-rate client can still hedge), in a bucket of burst tokens
// (> 0). Build the strategy with NewPolicyStrategy over NewP99Dynamic and
// NewBudget as its Gate; each reports a bad value, naming it.
//
// Failure kinds it survives: hedges that cannot win, which cost at most its
// ratio (far-primary, cold-fleet, correlated-both-slow, both-slow), and an
// error storm (exclude-regions-503). Kinds it does not survive: a slow
// primary beyond its ratio waits unhedged (cold-start,
// incident-north-europe-2022, feed-fan-out); a healthy service still pays
// its ratio (healthy, warmup-bias); a deadline below its threshold
// (deadline-below-floor, deadline-short); a fleet's burst
// (fleet-10000-burst); the count-only breaker on GC pauses.
func BackupRequests(maxExtraLoad, minPerSecond, burst float64) (P99DynamicConfig, BudgetConfig) {
	return P99DynamicConfig{Quantile: 1 - maxExtraLoad, Min: time.Millisecond, Ceiling: CeilingNone},
		BudgetConfig{Ratio: maxExtraLoad, Burst: burst, PerSecond: minPerSecond}
}

// RetryThrottle returns the [Budget] configuration of gRPC's retry
// throttling (gRFC A6; scenario type "retry_throttle", around a [Static]
// threshold): a bucket of maxTokens (> 0; it starts full) that every
// operation fills by tokenRatio (in (0, 1]) and every alternate, failover
// included, drains by one; a hedge goes out only while the bucket holds at
// least half (Reserve = maxTokens/2, no fractional admission): the gate
// ([hedging.HedgingStrategy.Gate]) beside a Static threshold. NewBudget
// reports a bad value, naming it.
//
// Failure kinds it survives: a learned threshold's failure modes (there is
// none to learn: censored-p90, partial-slowdown), and a sustained
// incident's extra load, capped at tokenRatio. Kinds it does not survive: a
// slow primary once the bucket is below half (cold-start, breaker-trip,
// default); hedges that cannot win still cost tokenRatio (far-primary,
// low-rate-client, cold-fleet); a slow-down's onset (budget-onset), a
// majority slow-down (flap-60s), a deadline below its threshold
// (deadline-below-floor) and the count-only breaker on GC pauses.
func RetryThrottle(maxTokens, tokenRatio float64) BudgetConfig {
	return BudgetConfig{Ratio: tokenRatio, Burst: maxTokens, Reserve: maxTokens / 2, ChargeFailover: true}
}
