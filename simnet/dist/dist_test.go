package dist

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// ok returns a function that unwraps a constructor's (Sampler, error),
// failing the test on error: ok(t)(NewGamma(2, 3)).
func ok(t testing.TB) func(Sampler, error) Sampler {
	return func(s Sampler, err error) Sampler {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

type tcase struct {
	name string
	s    Sampler
	// continuous: no atoms, so the KS test and CDF(Quantile(p)) == p apply.
	continuous bool
}

func cases(t testing.TB) []tcase {
	mk := ok(t)
	ln, _ := NewLogNormalFromQuantiles(4, 10, 0)
	par, _ := NewPareto(50, 3.5)
	ex, _ := NewExponential(2, 0.5)
	nm, _ := NewNormal(1, 1)
	return []tcase{
		{"constant", mk(NewConstant(3)), false},
		{"uniform", mk(NewUniform(1, 5)), true},
		{"exponential", mk(NewExponential(2, 0.5)), true},
		{"exponential/no-offset", mk(NewExponential(7, 0)), true},
		{"normal/truncation-matters", mk(NewNormal(1, 1)), true},
		{"normal/half", mk(NewNormal(0, 2)), true},
		{"normal/far-from-zero", mk(NewNormal(10, 1)), true},
		{"lognormal/median-p99", mk(NewLogNormalFromQuantiles(4, 10, 0)), true},
		{"lognormal/mu-sigma-offset", mk(NewLogNormal(0, 0.5, 1)), true},
		{"gamma/shape-0.5", mk(NewGamma(0.5, 2)), true},
		{"gamma/shape-3", mk(NewGamma(3, 1.5)), true},
		{"gamma/shape-0.1", mk(NewGamma(0.1, 1)), true},
		{"weibull/1.5", mk(NewWeibull(1.5, 3)), true},
		{"weibull/0.7", mk(NewWeibull(0.7, 2)), true},
		{"pareto", mk(NewPareto(1, 3.5)), true},
		{"empirical", mk(NewEmpirical([][2]float64{{0, 1}, {0.5, 2}, {0.9, 5}, {0.99, 20}, {1, 50}})), true},
		{"empirical/atom", mk(NewEmpirical([][2]float64{{0, 1}, {0.3, 2}, {0.6, 2}, {1, 4}})), false},
		{"mixture/lognormal+pareto", mk(NewMixture([]WeightedSampler{{99, ln}, {1, par}})), true},
		{"mixture/exp+normal", mk(NewMixture([]WeightedSampler{{0.7, ex}, {0.3, nm}})), true},
	}
}

const nSamples = 200_000

func draw(s Sampler, n int) []float64 {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = s.Sample(r)
	}
	return xs
}

// TestSampleMatchesTheory checks Sample against Mean, Quantile and CDF.
//
// Tolerances are 5 standard errors (a false failure would have probability
// below 1e-6 for a fresh seed; the seed is fixed, so the test is
// deterministic):
//   - mean: 5·s/√N with s the sample standard deviation;
//   - quantiles: the fraction of samples <= Quantile(p) is binomial, so it
//     must be within 5·√(p(1-p)/N) of p — distribution-free, and it checks
//     Quantile against Sample directly;
//   - KS: sup|F_N - CDF| < 1.95/√N, the 0.1% critical value of the
//     Kolmogorov distribution (continuous cases only).
func TestSampleMatchesTheory(t *testing.T) {
	for _, tc := range cases(t) {
		t.Run(tc.name, func(t *testing.T) {
			xs := draw(tc.s, nSamples)
			n := float64(len(xs))
			var sum, sumsq float64
			for _, x := range xs {
				if !(x >= 0) || math.IsInf(x, 0) {
					t.Fatalf("sample %v is not finite and >= 0", x)
				}
				sum += x
				sumsq += x * x
			}
			mean := sum / n
			sd := math.Sqrt(math.Max(0, sumsq/n-mean*mean))
			tol := 5*sd/math.Sqrt(n) + 1e-12*math.Abs(mean)
			if want := tc.s.Mean(); math.Abs(mean-want) > tol {
				t.Errorf("sample mean %.6g, Mean() %.6g, tolerance %.3g", mean, want, tol)
			}

			slices.Sort(xs)
			for _, p := range []float64{0.1, 0.5, 0.9, 0.99} {
				q := tc.s.Quantile(p)
				// Fraction of samples <= q.
				k, _ := slices.BinarySearchFunc(xs, q, func(a, b float64) int {
					if a <= b {
						return -1
					}
					return 1
				})
				frac := float64(k) / n
				tolP := 5 * math.Sqrt(p*(1-p)/n)
				if !tc.continuous {
					// With atoms the fraction at Quantile(p) is >= p.
					if frac < p-tolP {
						t.Errorf("p=%v: fraction <= Quantile(p)=%.6g is %.5f, want >= %v", p, q, frac, p)
					}
					continue
				}
				if math.Abs(frac-p) > tolP {
					t.Errorf("p=%v: fraction <= Quantile(p)=%.6g is %.5f, tolerance %.3g", p, q, frac, tolP)
				}
			}

			if !tc.continuous {
				return
			}
			var d float64
			for i, x := range xs {
				f := tc.s.CDF(x)
				d = max(d, math.Abs(float64(i+1)/n-f), math.Abs(float64(i)/n-f))
			}
			if crit := 1.95 / math.Sqrt(n); d > crit {
				t.Errorf("KS statistic %.5f > %.5f", d, crit)
			}
		})
	}
}

func TestCDFQuantileRoundTrip(t *testing.T) {
	ps := []float64{1e-6, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.999999}
	for _, tc := range cases(t) {
		t.Run(tc.name, func(t *testing.T) {
			prev := math.Inf(-1)
			for _, p := range ps {
				q := tc.s.Quantile(p)
				if !(q >= prev) {
					t.Errorf("Quantile not non-decreasing: Quantile(%v)=%v < %v", p, q, prev)
				}
				prev = q
				got := tc.s.CDF(q)
				if tc.continuous {
					if math.Abs(got-p) > 1e-9 {
						t.Errorf("CDF(Quantile(%v)) = %.15g", p, got)
					}
				} else if got < p-1e-12 {
					t.Errorf("CDF(Quantile(%v)) = %.15g, want >= p", p, got)
				}
			}
			// Edges.
			for _, bad := range []float64{-0.1, 1.1, math.NaN(), math.Inf(1)} {
				if q := tc.s.Quantile(bad); !math.IsNaN(q) {
					t.Errorf("Quantile(%v) = %v, want NaN", bad, q)
				}
			}
			if c := tc.s.CDF(math.NaN()); !math.IsNaN(c) {
				t.Errorf("CDF(NaN) = %v, want NaN", c)
			}
			if c := tc.s.CDF(-1); c != 0 {
				t.Errorf("CDF(-1) = %v, want 0", c)
			}
			if c := tc.s.CDF(math.Inf(1)); c != 1 {
				t.Errorf("CDF(+Inf) = %v, want 1", c)
			}
			if q := tc.s.Quantile(0); !(q >= 0) || tc.s.CDF(q) < 0 {
				t.Errorf("Quantile(0) = %v", q)
			}
			if q0, q1 := tc.s.Quantile(0), tc.s.Quantile(1); !(q1 >= q0) {
				t.Errorf("Quantile(1) = %v < Quantile(0) = %v", q1, q0)
			}
			if tc.s.String() == "" {
				t.Error("empty String()")
			}
		})
	}
}

func TestLogNormalFromMedianP99(t *testing.T) {
	s := ok(t)(NewLogNormalFromQuantiles(4, 10, 0))
	if got := s.Quantile(0.5); math.Abs(got-4) > 1e-9 {
		t.Errorf("Quantile(0.5) = %.15g, want 4", got)
	}
	if got := s.Quantile(0.99); math.Abs(got-10) > 1e-9 {
		t.Errorf("Quantile(0.99) = %.15g, want 10", got)
	}
	// The documented constant.
	if math.Abs(z99-2.326347874) > 1e-9 {
		t.Errorf("z99 = %.12g", z99)
	}
	// offset_ms shifts the whole distribution.
	s = ok(t)(NewLogNormalFromQuantiles(4, 10, 20))
	if got := s.Quantile(0.5); math.Abs(got-24) > 1e-9 {
		t.Errorf("shifted Quantile(0.5) = %.15g, want 24", got)
	}
	if got := s.Quantile(0.99); math.Abs(got-30) > 1e-9 {
		t.Errorf("shifted Quantile(0.99) = %.15g, want 30", got)
	}
	// mu/sigma form agrees with the quantile form.
	s2 := ok(t)(NewLogNormal(math.Log(4), math.Log(2.5)/2.326347874, 20))
	if a, b := s.Quantile(0.9), s2.Quantile(0.9); math.Abs(a-b) > 1e-6 {
		t.Errorf("mu/sigma form Quantile(0.9) = %v, median/p99 form %v", b, a)
	}
}

func TestClosedFormMeans(t *testing.T) {
	tests := []struct {
		name string
		s    Sampler
		want float64
	}{
		{"half-normal", ok(t)(NewNormal(0, 2)), 2 * math.Sqrt(2/math.Pi)},
		{"normal far from 0", ok(t)(NewNormal(100, 1)), 100},
		{"exponential+offset", ok(t)(NewExponential(2, 3)), 5},
		{"pareto alpha=1", ok(t)(NewPareto(1, 1)), math.Inf(1)},
		{"pareto alpha=2", ok(t)(NewPareto(3, 2)), 6},
		{"weibull k=1 is exponential", ok(t)(NewWeibull(1, 4)), 4},
		{"gamma", ok(t)(NewGamma(2, 3)), 6},
		{"uniform", ok(t)(NewUniform(2, 4)), 3},
		{"empirical", ok(t)(NewEmpirical([][2]float64{{0, 0}, {0.5, 2}, {1, 2}})), 1.5},
		{"lognormal", ok(t)(NewLogNormal(1, 0.5, 2)), 2 + math.Exp(1.125)},
	}
	for _, tt := range tests {
		if got := tt.s.Mean(); !(got == tt.want || math.Abs(got-tt.want) < 1e-12*tt.want) {
			t.Errorf("%s: Mean() = %.15g, want %.15g", tt.name, got, tt.want)
		}
	}
}

func TestEmpiricalInterpolation(t *testing.T) {
	e := ok(t)(NewEmpirical([][2]float64{{0, 1}, {0.3, 2}, {0.6, 2}, {1, 4}}))
	tests := []struct{ p, q float64 }{{0, 1}, {0.15, 1.5}, {0.3, 2}, {0.45, 2}, {0.6, 2}, {0.8, 3}, {1, 4}}
	for _, tt := range tests {
		if got := e.Quantile(tt.p); math.Abs(got-tt.q) > 1e-12 {
			t.Errorf("Quantile(%v) = %v, want %v", tt.p, got, tt.q)
		}
	}
	cdf := []struct{ x, f float64 }{{0.5, 0}, {1, 0}, {1.5, 0.15}, {2, 0.6}, {3, 0.8}, {4, 1}, {9, 1}}
	for _, tt := range cdf {
		if got := e.CDF(tt.x); math.Abs(got-tt.f) > 1e-12 {
			t.Errorf("CDF(%v) = %v, want %v", tt.x, got, tt.f)
		}
	}
}

func TestDeterminism(t *testing.T) {
	for _, tc := range cases(t) {
		a, b := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
		c := rand.New(rand.NewPCG(3, 4))
		same := true
		for i := range 1000 {
			x, y := tc.s.Sample(a), tc.s.Sample(b)
			if x != y {
				t.Fatalf("%s: sample %d differs with the same seed: %v vs %v", tc.name, i, x, y)
			}
			if tc.s.Sample(c) != x {
				same = false
			}
		}
		if same && tc.name != "constant" {
			t.Errorf("%s: a different seed gave the same sequence", tc.name)
		}
	}
}

func TestSampleAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range cases(t) {
		if n := testing.AllocsPerRun(1000, func() { _ = tc.s.Sample(r) }); n != 0 {
			t.Errorf("%s: Sample allocates %v times per call", tc.name, n)
		}
	}
}

func TestOverflowClamped(t *testing.T) {
	// Absurd but valid parameters whose draws overflow float64.
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range []Sampler{
		ok(t)(NewPareto(1e300, 1e-3)),
		ok(t)(NewLogNormal(700, 100, 0)),
		ok(t)(NewExponential(1e308, 1e308)),
		ok(t)(NewWeibull(1e-3, 1e300)),
		ok(t)(NewGamma(1e300, 1e300)),
		ok(t)(NewNormal(1e308, 1e308)),
	} {
		for range 1000 {
			if x := s.Sample(r); !(x >= 0 && x <= math.MaxFloat64) {
				t.Fatalf("%v: sample %v", s, x)
			}
		}
	}
}

func TestMixtureQuantileBisection(t *testing.T) {
	// A mixture of two identical exponentials is that exponential.
	e := ok(t)(NewExponential(3, 1))
	m := ok(t)(NewMixture([]WeightedSampler{{1, e}, {2, e}}))
	for _, p := range []float64{0, 0.1, 0.5, 0.99, 1} {
		if a, b := m.Quantile(p), e.Quantile(p); !(a == b || math.Abs(a-b) < 1e-12*b) {
			t.Errorf("Quantile(%v) = %v, want %v", p, a, b)
		}
	}
	// Disjoint supports: 30% uniform[0,1], 70% constant 10.
	u := ok(t)(NewUniform(0, 1))
	c := ok(t)(NewConstant(10))
	m = ok(t)(NewMixture([]WeightedSampler{{0.3, u}, {0.7, c}}))
	tests := []struct{ p, q float64 }{{0, 0}, {0.15, 0.5}, {0.3, 1}, {0.31, 10}, {1, 10}}
	for _, tt := range tests {
		if got := m.Quantile(tt.p); math.Abs(got-tt.q) > 1e-9 {
			t.Errorf("Quantile(%v) = %v, want %v", tt.p, got, tt.q)
		}
	}
}

// TestGammaQuantileWideRange covers shapes where gonum's GammaIncRegInv
// alone is inaccurate (small shape, small p).
func TestGammaQuantileWideRange(t *testing.T) {
	for _, k := range []float64{0.01, 0.1, 0.5, 1, 2.5, 10, 1000} {
		g := ok(t)(NewGamma(k, 2))
		for _, p := range []float64{1e-12, 1e-6, 0.01, 0.3, 0.5, 0.7, 0.99, 1 - 1e-9} {
			q := g.Quantile(p)
			if !(q > 0) || math.IsInf(q, 0) {
				t.Errorf("k=%v: Quantile(%v) = %v", k, p, q)
				continue
			}
			c := g.CDF(q)
			if q < 1e-300 {
				// The exact quantile underflows float64; the smallest
				// representable x with CDF(x) >= p is returned instead.
				if c < p {
					t.Errorf("k=%v: CDF(Quantile(%v)) = %.15g < p", k, p, c)
				}
				continue
			}
			if math.Abs(c-p) > 1e-9*math.Max(p, 1e-3) {
				t.Errorf("k=%v: CDF(Quantile(%v)) = %.15g", k, p, c)
			}
		}
	}
}
