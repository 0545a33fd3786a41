// Package dist provides the latency distributions used by the hedgelab
// simulator for replica service times, network jitter and similar delays.
//
// Every value is a duration in MILLISECONDS (float64). Every distribution
// implements [Sampler]: Sample draws from a caller-supplied *rand.Rand
// (math/rand/v2) without allocating, and CDF, Quantile and Mean describe
// exactly the distribution that Sample draws from, so that
// Kolmogorov–Smirnov tests can compare samples against theory.
//
// Samples are never negative and never NaN. Families whose support could
// include negative values are truncated at 0 (see [NewNormal]). For absurd
// parameters whose draws overflow float64, Sample returns math.MaxFloat64
// instead of +Inf, so a sample is always finite.
//
// # Families
//
//	family       parameters (TOML keys)                    distribution
//	constant     value_ms                                  always value_ms
//	uniform      min_ms, max_ms                            U[min_ms, max_ms]
//	exponential  mean_ms [, offset_ms]                     offset_ms + Exp(mean mean_ms)
//	normal       mean_ms, stddev_ms                        N(mean_ms, stddev_ms²) conditioned on >= 0
//	lognormal    median_ms, p99_ms [, offset_ms]           offset_ms + LogNormal(mu=ln median_ms,
//	                                                         sigma=ln(p99_ms/median_ms)/z₀.₉₉)
//	lognormal    mu, sigma [, offset_ms]                   offset_ms + exp(mu + sigma·Z)
//	gamma        shape, scale_ms                           Gamma(shape k, scale θ), mean k·θ
//	weibull      shape, scale_ms                           Weibull(shape k, scale λ)
//	pareto       xm_ms, alpha                              Pareto(minimum xm_ms, tail index alpha)
//	empirical    quantiles = [[q, ms], ...]                piecewise-linear inverse CDF
//	mixture      [[components]] with weight + a family     pick a component by weight, sample it
//
// offset_ms is a pure shift: the whole distribution, including median_ms,
// p99_ms and mean_ms, is moved right by offset_ms. For example lognormal
// with median_ms = 4, p99_ms = 10, offset_ms = 20 has median 24 and p99 30.
// mu and sigma are the parameters of the natural logarithm of the
// (unshifted) value in ms.
//
// # TOML shape
//
// Scenario files describe a distribution with a [Spec] table; [Spec.Build]
// validates it and returns the [Sampler]. Only the keys that apply to the
// chosen family may be given.
//
//	[service_time]
//	family    = "lognormal"
//	median_ms = 4.0
//	p99_ms    = 10.0
//
//	[jitter]
//	family    = "empirical"
//	# [q, ms] pairs: q strictly increasing from exactly 0 to exactly 1,
//	# ms non-decreasing and >= 0. Sampled by linear interpolation.
//	quantiles = [[0.0, 0.2], [0.5, 0.4], [0.9, 1.0], [0.99, 3.0], [1.0, 8.0]]
//
//	[slow_replica]
//	family = "mixture"
//
//	  # Each component is a table with a weight plus the keys of its own
//	  # family, written inline at the same level (no nested "dist" table).
//	  [[slow_replica.components]]
//	  weight    = 0.99
//	  family    = "lognormal"
//	  median_ms = 4.0
//	  p99_ms    = 10.0
//
//	  [[slow_replica.components]]
//	  weight = 0.01
//	  family = "pareto"
//	  xm_ms  = 50.0
//	  alpha  = 1.5
//
// Mixture weights must be > 0 and are normalised to sum to 1, so 99 and 1
// are equivalent to 0.99 and 0.01. Components may themselves be mixtures
// ([[x.components.components]]).
//
// # Errors
//
// Constructors and [Spec.Build] never panic; for any input, including NaN
// and ±Inf, they return an error naming the offending field, e.g.
//
//	lognormal: p99_ms (3) must be greater than median_ms (5)
//	field xm_ms does not apply to family "exponential"
//	mixture: components[2]: weight must be > 0, got -1
//
// Indices such as components[2] and quantiles[3] are 0-based, matching the
// position in the TOML array. Errors do not mention file names; callers
// prefix them with the file position and TOML path.
package dist

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Sampler is a latency distribution over [0, +Inf) milliseconds.
//
// Implementations are immutable after construction and safe for concurrent
// use, provided each goroutine passes its own *rand.Rand to Sample.
type Sampler interface {
	// Sample draws one value in ms using r. It does not allocate, and the
	// result is always finite and >= 0.
	Sample(r *rand.Rand) float64
	// CDF returns P(X <= x) for x in ms. CDF(NaN) is NaN.
	CDF(x float64) float64
	// Quantile returns the smallest x (ms) with CDF(x) >= p, for p in
	// [0, 1]; Quantile(0) is the lower end of the support and Quantile(1)
	// the upper end, which may be +Inf. It returns NaN for p outside [0, 1]
	// or NaN.
	Quantile(p float64) float64
	// Mean returns the expected value in ms; +Inf for heavy-tailed
	// distributions whose mean does not exist (e.g. pareto with alpha <= 1).
	Mean() float64
	// String describes the distribution and its parameters, e.g.
	// "lognormal(mu=1.386, sigma=0.3939, offset_ms=0)".
	String() string
}

// finite reports whether v is neither NaN nor ±Inf.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// clampSample maps an overflowed draw (+Inf) to math.MaxFloat64 so that
// samples are always finite. Callers only pass non-negative, non-NaN values.
func clampSample(x float64) float64 {
	if x > math.MaxFloat64 {
		return math.MaxFloat64
	}
	return x
}

// badP reports whether p is not a valid probability.
func badP(p float64) bool { return !(p >= 0 && p <= 1) }

// needFinite returns an error unless v is finite.
func needFinite(family, field string, v float64) error {
	if !finite(v) {
		return fmt.Errorf("%s: %s must be finite, got %g", family, field, v)
	}
	return nil
}

// needNonNeg returns an error unless v is finite and >= 0.
func needNonNeg(family, field string, v float64) error {
	if err := needFinite(family, field, v); err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("%s: %s must be >= 0, got %g", family, field, v)
	}
	return nil
}

// needPos returns an error unless v is finite and > 0.
func needPos(family, field string, v float64) error {
	if err := needFinite(family, field, v); err != nil {
		return err
	}
	if v <= 0 {
		return fmt.Errorf("%s: %s must be > 0, got %g", family, field, v)
	}
	return nil
}

// needInvertible returns an error if the positive v is so small (subnormal)
// that 1/v overflows; such shape parameters would make sampling produce NaN.
func needInvertible(family, field string, v float64) error {
	if math.IsInf(1/v, 0) {
		return fmt.Errorf("%s: %s (%g) is too small", family, field, v)
	}
	return nil
}
