package dist

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// phi is the standard normal CDF, accurate in both tails.
func phi(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// phiInv is the standard normal quantile function for p in [0, 1]
// (AS241, accurate in the tails; ±Inf at 0 and 1).
func phiInv(p float64) float64 { return mathext.NormalQuantile(p) }

// z99 is the 0.99 quantile of the standard normal distribution
// (≈ 2.326347874). It is computed with the same function that Quantile uses,
// so a lognormal built from (median_ms, p99_ms) reproduces p99_ms exactly up
// to rounding.
var z99 = phiInv(0.99)

// ---------------------------------------------------------------- constant

type constant struct{ v float64 }

// NewConstant returns a distribution that always yields valueMs
// milliseconds. It returns an error if valueMs is NaN, ±Inf or negative.
func NewConstant(valueMs float64) (Sampler, error) {
	if err := needNonNeg("constant", "value_ms", valueMs); err != nil {
		return nil, err
	}
	return &constant{v: valueMs}, nil
}

func (c *constant) Sample(*rand.Rand) float64 { return c.v }

func (c *constant) CDF(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return math.NaN()
	case x < c.v:
		return 0
	}
	return 1
}

func (c *constant) Quantile(p float64) float64 {
	if badP(p) {
		return math.NaN()
	}
	return c.v
}

func (c *constant) Mean() float64  { return c.v }
func (c *constant) String() string { return fmt.Sprintf("constant(value_ms=%.4g)", c.v) }

// ---------------------------------------------------------------- uniform

type uniform struct{ lo, hi float64 }

// NewUniform returns the continuous uniform distribution on
// [minMs, maxMs] milliseconds; minMs == maxMs is allowed and behaves like a
// constant. It returns an error if either bound is NaN or ±Inf, if minMs is
// negative, or if maxMs < minMs.
func NewUniform(minMs, maxMs float64) (Sampler, error) {
	if err := needNonNeg("uniform", "min_ms", minMs); err != nil {
		return nil, err
	}
	if err := needFinite("uniform", "max_ms", maxMs); err != nil {
		return nil, err
	}
	if maxMs < minMs {
		return nil, fmt.Errorf("uniform: max_ms (%g) must be >= min_ms (%g)", maxMs, minMs)
	}
	return &uniform{lo: minMs, hi: maxMs}, nil
}

func (u *uniform) Sample(r *rand.Rand) float64 {
	return u.lo + (u.hi-u.lo)*r.Float64()
}

func (u *uniform) CDF(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return math.NaN()
	case x < u.lo:
		return 0
	case x >= u.hi:
		return 1
	}
	return (x - u.lo) / (u.hi - u.lo)
}

func (u *uniform) Quantile(p float64) float64 {
	if badP(p) {
		return math.NaN()
	}
	return u.lo + p*(u.hi-u.lo)
}

func (u *uniform) Mean() float64 { return u.lo + (u.hi-u.lo)/2 }
func (u *uniform) String() string {
	return fmt.Sprintf("uniform(min_ms=%.4g, max_ms=%.4g)", u.lo, u.hi)
}

// ---------------------------------------------------------------- exponential

type exponential struct{ mean, off float64 }

// NewExponential returns offsetMs + Exp(mean meanMs), in milliseconds: an
// exponential distribution with mean meanMs (rate 1/meanMs) shifted right by
// offsetMs, so its overall mean is offsetMs + meanMs. Pass offsetMs = 0 for
// no shift. It returns an error if meanMs is not finite and > 0 or if
// offsetMs is not finite and >= 0.
func NewExponential(meanMs, offsetMs float64) (Sampler, error) {
	if err := needPos("exponential", "mean_ms", meanMs); err != nil {
		return nil, err
	}
	if err := needNonNeg("exponential", "offset_ms", offsetMs); err != nil {
		return nil, err
	}
	return &exponential{mean: meanMs, off: offsetMs}, nil
}

func (e *exponential) Sample(r *rand.Rand) float64 {
	return clampSample(e.off + e.mean*r.ExpFloat64())
}

func (e *exponential) CDF(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return math.NaN()
	case x <= e.off:
		return 0
	}
	return -math.Expm1(-(x - e.off) / e.mean)
}

func (e *exponential) Quantile(p float64) float64 {
	if badP(p) {
		return math.NaN()
	}
	return e.off - e.mean*math.Log1p(-p)
}

func (e *exponential) Mean() float64 { return e.off + e.mean }
func (e *exponential) String() string {
	return fmt.Sprintf("exponential(mean_ms=%.4g, offset_ms=%.4g)", e.mean, e.off)
}

// ---------------------------------------------------------------- normal

// truncNormal is N(mu, sigma²) conditioned on X >= 0.
type truncNormal struct {
	mu, sigma float64
	pa        float64 // Φ(-mu/sigma): untruncated mass below 0
	z         float64 // 1 - pa = Φ(mu/sigma) >= 0.5: mass kept
}

// NewNormal returns the normal distribution with mean meanMs and standard
// deviation stddevMs (ms), truncated at 0: it is N(meanMs, stddevMs²)
// conditioned on being >= 0.
//
// Sample uses REJECTION (redraws until the value is >= 0), not clamping, so
// there is no atom at 0 and CDF/Quantile/Mean are those of the truncated
// normal. Because meanMs must be >= 0 at least half of all draws are
// accepted, so the expected number of draws per sample is at most 2 (and
// ≈ 1 when meanMs is a few stddevMs above 0). Note that Mean() exceeds
// meanMs when the truncation matters.
//
// It returns an error if meanMs is not finite and >= 0 or if stddevMs is
// not finite and > 0.
func NewNormal(meanMs, stddevMs float64) (Sampler, error) {
	if err := needFinite("normal", "mean_ms", meanMs); err != nil {
		return nil, err
	}
	if meanMs < 0 {
		return nil, fmt.Errorf("normal: mean_ms must be >= 0 (the distribution is truncated at 0), got %g", meanMs)
	}
	if err := needPos("normal", "stddev_ms", stddevMs); err != nil {
		return nil, err
	}
	a := -meanMs / stddevMs
	return &truncNormal{mu: meanMs, sigma: stddevMs, pa: phi(a), z: phi(-a)}, nil
}

func (n *truncNormal) Sample(r *rand.Rand) float64 {
	for {
		x := n.mu + n.sigma*r.NormFloat64()
		if x >= 0 {
			return clampSample(x)
		}
	}
}

func (n *truncNormal) CDF(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return math.NaN()
	case x <= 0:
		return 0
	}
	s := (x - n.mu) / n.sigma
	if s <= 0 {
		return math.Max(0, (phi(s)-n.pa)/n.z)
	}
	return 1 - phi(-s)/n.z
}

func (n *truncNormal) Quantile(p float64) float64 {
	if badP(p) {
		return math.NaN()
	}
	var x float64
	if t := n.pa + p*n.z; t <= 0.5 {
		x = n.mu + n.sigma*phiInv(t)
	} else {
		// Work with the upper tail for precision when p is close to 1.
		x = n.mu - n.sigma*phiInv((1-p)*n.z)
	}
	return math.Max(0, x)
}

func (n *truncNormal) Mean() float64 {
	a := -n.mu / n.sigma
	pdf := math.Exp(-a*a/2) / math.Sqrt(2*math.Pi)
	return n.mu + n.sigma*pdf/n.z
}

func (n *truncNormal) String() string {
	return fmt.Sprintf("normal(mean_ms=%.4g, stddev_ms=%.4g, truncated at 0)", n.mu, n.sigma)
}

// ---------------------------------------------------------------- lognormal

type logNormal struct{ mu, sigma, off float64 }

// NewLogNormal returns offsetMs + exp(mu + sigma·Z) milliseconds with Z
// standard normal: mu and sigma are the mean and standard deviation of the
// natural logarithm of the unshifted value in ms, so its median is exp(mu).
// Pass offsetMs = 0 for no shift. It returns an error if mu is not finite
// or so large that exp(mu) overflows, if sigma is not finite and > 0, or if
// offsetMs is not finite and >= 0.
func NewLogNormal(mu, sigma, offsetMs float64) (Sampler, error) {
	if err := needFinite("lognormal", "mu", mu); err != nil {
		return nil, err
	}
	if math.IsInf(math.Exp(mu), 0) {
		return nil, fmt.Errorf("lognormal: mu (%g) is too large: exp(mu) overflows", mu)
	}
	if err := needPos("lognormal", "sigma", sigma); err != nil {
		return nil, err
	}
	if err := needNonNeg("lognormal", "offset_ms", offsetMs); err != nil {
		return nil, err
	}
	return &logNormal{mu: mu, sigma: sigma, off: offsetMs}, nil
}

// NewLogNormalFromQuantiles returns the lognormal whose median is medianMs
// and whose 99th percentile is p99Ms, shifted right by offsetMs (so the
// resulting median is offsetMs + medianMs and the p99 is offsetMs + p99Ms):
// mu = ln(medianMs), sigma = ln(p99Ms/medianMs)/2.326347874. It returns an
// error if medianMs is not finite and > 0, if p99Ms is not finite or not
// greater than medianMs, or if offsetMs is not finite and >= 0.
func NewLogNormalFromQuantiles(medianMs, p99Ms, offsetMs float64) (Sampler, error) {
	if err := needPos("lognormal", "median_ms", medianMs); err != nil {
		return nil, err
	}
	if err := needFinite("lognormal", "p99_ms", p99Ms); err != nil {
		return nil, err
	}
	if !(p99Ms > medianMs) {
		return nil, fmt.Errorf("lognormal: p99_ms (%g) must be greater than median_ms (%g)", p99Ms, medianMs)
	}
	sigma := math.Log(p99Ms/medianMs) / z99
	if !(sigma > 0) { // p99Ms only one ulp above medianMs
		return nil, fmt.Errorf("lognormal: p99_ms (%g) is too close to median_ms (%g)", p99Ms, medianMs)
	}
	if err := needNonNeg("lognormal", "offset_ms", offsetMs); err != nil {
		return nil, err
	}
	return &logNormal{mu: math.Log(medianMs), sigma: sigma, off: offsetMs}, nil
}

func (l *logNormal) Sample(r *rand.Rand) float64 {
	return clampSample(l.off + math.Exp(l.mu+l.sigma*r.NormFloat64()))
}

func (l *logNormal) CDF(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return math.NaN()
	case x <= l.off:
		return 0
	}
	return phi((math.Log(x-l.off) - l.mu) / l.sigma)
}

func (l *logNormal) Quantile(p float64) float64 {
	if badP(p) {
		return math.NaN()
	}
	return l.off + math.Exp(l.mu+l.sigma*phiInv(p))
}

func (l *logNormal) Mean() float64 { return l.off + math.Exp(l.mu+l.sigma*l.sigma/2) }
func (l *logNormal) String() string {
	return fmt.Sprintf("lognormal(mu=%.4g, sigma=%.4g, offset_ms=%.4g; median_ms=%.4g)",
		l.mu, l.sigma, l.off, l.Quantile(0.5))
}

// ---------------------------------------------------------------- gamma

type gamma struct {
	d     distuv.Gamma // unit scale (Beta = 1)
	scale float64
}

// NewGamma returns the gamma distribution with shape k = shape and scale
// θ = scaleMs milliseconds (mean k·θ, variance k·θ²). It returns an error if
// shape or scaleMs is not finite and > 0, or if shape is so small
// (subnormal) that 1/shape overflows.
func NewGamma(shape, scaleMs float64) (Sampler, error) {
	if err := needPos("gamma", "shape", shape); err != nil {
		return nil, err
	}
	if err := needPos("gamma", "scale_ms", scaleMs); err != nil {
		return nil, err
	}
	if err := needInvertible("gamma", "shape", shape); err != nil {
		return nil, err
	}
	return &gamma{d: distuv.Gamma{Alpha: shape, Beta: 1}, scale: scaleMs}, nil
}

func (g *gamma) Sample(r *rand.Rand) float64 {
	d := g.d
	d.Src = r
	return clampSample(d.Rand() * g.scale)
}

func (g *gamma) CDF(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return math.NaN()
	case x <= 0:
		return 0
	}
	return g.d.CDF(x / g.scale)
}

func (g *gamma) Quantile(p float64) float64 {
	switch {
	case badP(p):
		return math.NaN()
	case p == 0:
		return 0
	case p == 1:
		return math.Inf(1)
	}
	return g.unitQuantile(p) * g.scale
}

// unitQuantile inverts the regularized incomplete gamma function P(k, x)
// for unit scale. gonum's GammaIncRegInv is the starting point, but it
// returns 0 for small p when the shape is small (e.g. k = 0.1, p = 0.01,
// where the answer is ≈ 6e-21), so the result is polished by safeguarded
// Newton iterations on t = ln x, using the complementary function Q = 1 - P
// when p > 0.5 for precision in the upper tail.
func (g *gamma) unitQuantile(p float64) float64 {
	k := g.d.Alpha
	upper := p > 0.5
	// h(t) is increasing in t and zero at the answer.
	h := func(t float64) float64 {
		x := math.Exp(t)
		if upper {
			return (1 - p) - mathext.GammaIncRegComp(k, x)
		}
		return mathext.GammaIncReg(k, x) - p
	}
	// dh/dt = x·pdf(x).
	dh := func(t float64) float64 {
		lg, _ := math.Lgamma(k)
		return math.Exp(k*t - math.Exp(t) - lg)
	}
	tol := 1e-14 * math.Min(p, 1-p)

	var t float64
	if x0 := mathext.GammaIncRegInv(k, p); x0 > 0 && !math.IsInf(x0, 0) {
		t = math.Log(x0)
	} else {
		// Small-x approximation P(k, x) ≈ x^k / Γ(k+1).
		lg, _ := math.Lgamma(k + 1)
		t = (math.Log(p) + lg) / k
	}
	const tMin, tMax = -745.0, 709.0 // ln of the smallest subnormal / largest float64
	t = math.Max(tMin, math.Min(tMax, t))
	ht := h(t)
	if math.Abs(ht) <= tol {
		return math.Exp(t)
	}
	// Bracket the root: lo has h < 0, hi has h > 0.
	lo, hi := t, t
	for step := 1.0; ; step *= 2 {
		if ht < 0 {
			lo, hi = hi, math.Min(tMax, hi+step)
			if ht = h(hi); ht >= 0 || hi == tMax {
				break
			}
		} else {
			hi, lo = lo, math.Max(tMin, lo-step)
			if ht = h(lo); ht <= 0 || lo == tMin {
				break
			}
		}
	}
	t = lo + (hi-lo)/2
	for range 200 {
		v := h(t)
		if math.Abs(v) <= tol {
			break
		}
		if v < 0 {
			lo = t
		} else {
			hi = t
		}
		next := t - v/dh(t)
		if !(next > lo && next < hi) { // Newton left the bracket: bisect
			next = lo + (hi-lo)/2
		}
		if next == t || hi-lo <= 1e-15*math.Max(1, math.Abs(t)) {
			break
		}
		t = next
	}
	return math.Exp(t)
}

func (g *gamma) Mean() float64 { return g.d.Alpha * g.scale }
func (g *gamma) String() string {
	return fmt.Sprintf("gamma(shape=%.4g, scale_ms=%.4g)", g.d.Alpha, g.scale)
}

// ---------------------------------------------------------------- weibull

type weibull struct{ k, invK, lambda float64 }

// NewWeibull returns the Weibull distribution with shape k = shape and scale
// λ = scaleMs milliseconds: CDF(x) = 1 - exp(-(x/λ)^k). It returns an error
// if shape or scaleMs is not finite and > 0, or if shape is so
// small (subnormal) that 1/shape overflows.
func NewWeibull(shape, scaleMs float64) (Sampler, error) {
	if err := needPos("weibull", "shape", shape); err != nil {
		return nil, err
	}
	if err := needPos("weibull", "scale_ms", scaleMs); err != nil {
		return nil, err
	}
	if err := needInvertible("weibull", "shape", shape); err != nil {
		return nil, err
	}
	return &weibull{k: shape, invK: 1 / shape, lambda: scaleMs}, nil
}

// Sample uses λ·E^(1/k) with E ~ Exp(1), which is exactly Weibull(k, λ).
func (w *weibull) Sample(r *rand.Rand) float64 {
	return clampSample(w.lambda * math.Pow(r.ExpFloat64(), w.invK))
}

func (w *weibull) CDF(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return math.NaN()
	case x <= 0:
		return 0
	}
	return -math.Expm1(-math.Pow(x/w.lambda, w.k))
}

func (w *weibull) Quantile(p float64) float64 {
	if badP(p) {
		return math.NaN()
	}
	return w.lambda * math.Pow(-math.Log1p(-p), w.invK)
}

func (w *weibull) Mean() float64 {
	lg, _ := math.Lgamma(1 + w.invK)
	return w.lambda * math.Exp(lg)
}

func (w *weibull) String() string {
	return fmt.Sprintf("weibull(shape=%.4g, scale_ms=%.4g)", w.k, w.lambda)
}

// ---------------------------------------------------------------- pareto

type pareto struct{ xm, alpha, invAlpha float64 }

// NewPareto returns the (type I) Pareto distribution with minimum xmMs
// milliseconds and tail index alpha: CDF(x) = 1 - (xmMs/x)^alpha for
// x >= xmMs. Its mean is alpha·xmMs/(alpha-1) for alpha > 1 and +Inf
// otherwise. It returns an error if xmMs or alpha is not finite and > 0, or
// if alpha is so small (subnormal) that 1/alpha overflows.
func NewPareto(xmMs, alpha float64) (Sampler, error) {
	if err := needPos("pareto", "xm_ms", xmMs); err != nil {
		return nil, err
	}
	if err := needPos("pareto", "alpha", alpha); err != nil {
		return nil, err
	}
	if err := needInvertible("pareto", "alpha", alpha); err != nil {
		return nil, err
	}
	return &pareto{xm: xmMs, alpha: alpha, invAlpha: 1 / alpha}, nil
}

// Sample uses xm·exp(E/alpha) with E ~ Exp(1), which is exactly Pareto.
func (p *pareto) Sample(r *rand.Rand) float64 {
	return clampSample(p.xm * math.Exp(r.ExpFloat64()*p.invAlpha))
}

func (p *pareto) CDF(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return math.NaN()
	case x <= p.xm:
		return 0
	}
	return -math.Expm1(p.alpha * math.Log(p.xm/x))
}

func (p *pareto) Quantile(prob float64) float64 {
	if badP(prob) {
		return math.NaN()
	}
	return p.xm * math.Exp(-math.Log1p(-prob)*p.invAlpha)
}

func (p *pareto) Mean() float64 {
	if p.alpha <= 1 {
		return math.Inf(1)
	}
	return p.alpha * p.xm / (p.alpha - 1)
}

func (p *pareto) String() string {
	return fmt.Sprintf("pareto(xm_ms=%.4g, alpha=%.4g)", p.xm, p.alpha)
}
