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
// Failure kinds it survives (notebook 01's scorecard; the cases are in
// scenarios/testdata/policy-cases): hedges that cannot win while answers
// come within a second (far-primary, low-rate-client, cold-fleet,
// correlated-both-slow, flap-60s: it hedges almost nothing), warm-up at any
// arrival rate (it learns nothing), and a request timeout below a fixed
// floor (deadline-below-floor: p99 33.0 ms at a 20 ms threshold). Kinds it
// does not survive: a slow primary with a fast alternate waits a second
// (primary-slow 1011 ms, cold-start 1018, breaker-trip 1009); every answer
// slower than a second is hedged for nothing (both-slow RU 2.000,
// heavy-everywhere 1.343, budget-fallback 1.750); an operation deadline
// that is not the request timeout (deadline-short: 20% errors).
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
// the cap bounds (gradual-slowdown p99 142 ms against 535 unhedged,
// flap-60s), and warm-up bias. Kinds it does not survive: a steady primary
// slower than the cap, every read of which it hedges for nothing
// (far-primary, low-rate-client, cold-fleet, both-slow: RU 2.000;
// correlated-both-slow 1.334); a cap above the threshold that pays
// (partial-slowdown 136 ms against 69–89, censored-p90, primary-slow); a
// deadline below its 50 ms floor (deadline-below-floor: 6.00% errors); the
// count-only breaker on GC pauses (gc-pause-hot-partition).
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
// ratio (far-primary RU 1.003, cold-fleet 1.008, correlated-both-slow
// 1.014, both-slow 1.002), and an error storm (exclude-regions-503). Kinds
// it does not survive: a slow primary beyond its ratio waits unhedged
// (cold-start p99 2002 ms, incident-north-europe-2022 5001, feed-fan-out
// 1998); a healthy service still pays its ratio (healthy RU 1.020,
// warmup-bias 1.020); a deadline below its threshold (deadline-below-floor
// 5.85% errors, deadline-short 19.88%); a fleet's burst
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
// default: p99 ≈ 2 s at a 50 ms threshold); hedges that cannot win still
// cost tokenRatio (far-primary RU 1.100, low-rate-client 1.105, cold-fleet
// 1.118); a slow-down's onset (budget-onset), a majority slow-down
// (flap-60s), a deadline below its threshold (deadline-below-floor) and the
// count-only breaker on GC pauses.
func RetryThrottle(maxTokens, tokenRatio float64) BudgetConfig {
	return BudgetConfig{Ratio: tokenRatio, Burst: maxTokens, Reserve: maxTokens / 2, ChargeFailover: true}
}
