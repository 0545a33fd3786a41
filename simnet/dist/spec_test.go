package dist

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func f(v float64) *float64 { return &v }

func TestConstructorErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	ok := ok(t)(NewConstant(1))
	tests := []struct {
		name string
		fn   func() (Sampler, error)
		want string
	}{
		{"constant negative", func() (Sampler, error) { return NewConstant(-1) }, "constant: value_ms must be >= 0, got -1"},
		{"constant NaN", func() (Sampler, error) { return NewConstant(nan) }, "constant: value_ms must be finite, got NaN"},
		{"uniform min<0", func() (Sampler, error) { return NewUniform(-1, 2) }, "uniform: min_ms must be >= 0, got -1"},
		{"uniform max inf", func() (Sampler, error) { return NewUniform(1, inf) }, "uniform: max_ms must be finite, got +Inf"},
		{"uniform max<min", func() (Sampler, error) { return NewUniform(2, 1) }, "uniform: max_ms (1) must be >= min_ms (2)"},
		{"exponential mean 0", func() (Sampler, error) { return NewExponential(0, 0) }, "exponential: mean_ms must be > 0, got 0"},
		{"exponential offset<0", func() (Sampler, error) { return NewExponential(1, -2) }, "exponential: offset_ms must be >= 0, got -2"},
		{"exponential offset NaN", func() (Sampler, error) { return NewExponential(1, nan) }, "exponential: offset_ms must be finite, got NaN"},
		{"normal mean<0", func() (Sampler, error) { return NewNormal(-1, 1) }, "normal: mean_ms must be >= 0 (the distribution is truncated at 0), got -1"},
		{"normal mean inf", func() (Sampler, error) { return NewNormal(-inf, 1) }, "normal: mean_ms must be finite, got -Inf"},
		{"normal sd 0", func() (Sampler, error) { return NewNormal(1, 0) }, "normal: stddev_ms must be > 0, got 0"},
		{"lognormal p99<median", func() (Sampler, error) { return NewLogNormalFromQuantiles(5, 3, 0) }, "lognormal: p99_ms (3) must be greater than median_ms (5)"},
		{"lognormal p99=median", func() (Sampler, error) { return NewLogNormalFromQuantiles(5, 5, 0) }, "lognormal: p99_ms (5) must be greater than median_ms (5)"},
		{"lognormal median 0", func() (Sampler, error) { return NewLogNormalFromQuantiles(0, 3, 0) }, "lognormal: median_ms must be > 0, got 0"},
		{"lognormal p99 NaN", func() (Sampler, error) { return NewLogNormalFromQuantiles(1, nan, 0) }, "lognormal: p99_ms must be finite, got NaN"},
		{"lognormal offset<0", func() (Sampler, error) { return NewLogNormalFromQuantiles(1, 2, -1) }, "lognormal: offset_ms must be >= 0, got -1"},
		{"lognormal mu NaN", func() (Sampler, error) { return NewLogNormal(nan, 1, 0) }, "lognormal: mu must be finite, got NaN"},
		{"lognormal mu huge", func() (Sampler, error) { return NewLogNormal(1000, 1, 0) }, "lognormal: mu (1000) is too large: exp(mu) overflows"},
		{"lognormal sigma<0", func() (Sampler, error) { return NewLogNormal(0, -1, 0) }, "lognormal: sigma must be > 0, got -1"},
		{"lognormal mu/sigma offset inf", func() (Sampler, error) { return NewLogNormal(0, 1, inf) }, "lognormal: offset_ms must be finite, got +Inf"},
		{"gamma shape 0", func() (Sampler, error) { return NewGamma(0, 1) }, "gamma: shape must be > 0, got 0"},
		{"gamma scale<0", func() (Sampler, error) { return NewGamma(1, -1) }, "gamma: scale_ms must be > 0, got -1"},
		{"gamma shape subnormal", func() (Sampler, error) { return NewGamma(1e-320, 1) }, "gamma: shape (1e-320) is too small"},
		{"weibull shape NaN", func() (Sampler, error) { return NewWeibull(nan, 1) }, "weibull: shape must be finite, got NaN"},
		{"weibull scale 0", func() (Sampler, error) { return NewWeibull(1, 0) }, "weibull: scale_ms must be > 0, got 0"},
		{"weibull shape subnormal", func() (Sampler, error) { return NewWeibull(1e-320, 1) }, "weibull: shape (1e-320) is too small"},
		{"pareto xm 0", func() (Sampler, error) { return NewPareto(0, 1) }, "pareto: xm_ms must be > 0, got 0"},
		{"pareto alpha inf", func() (Sampler, error) { return NewPareto(1, inf) }, "pareto: alpha must be finite, got +Inf"},
		{"pareto alpha subnormal", func() (Sampler, error) { return NewPareto(1, 1e-320) }, "pareto: alpha (1e-320) is too small"},
		{"empirical empty", func() (Sampler, error) { return NewEmpirical(nil) }, "empirical: quantiles needs at least 2 [q, ms] points (q = 0 and q = 1), got 0"},
		{"empirical one", func() (Sampler, error) { return NewEmpirical([][2]float64{{0, 1}}) }, "empirical: quantiles needs at least 2 [q, ms] points (q = 0 and q = 1), got 1"},
		{"empirical first q", func() (Sampler, error) { return NewEmpirical([][2]float64{{0.1, 1}, {1, 2}}) }, "empirical: quantiles[0]: q must be 0, got 0.1"},
		{"empirical last q", func() (Sampler, error) { return NewEmpirical([][2]float64{{0, 1}, {0.9, 2}}) }, "empirical: quantiles[1]: the last q must be 1, got 0.9"},
		{"empirical q > 1", func() (Sampler, error) { return NewEmpirical([][2]float64{{0, 1}, {1.5, 2}, {2, 3}}) }, "empirical: quantiles[1]: q must be <= 1, got 1.5"},
		{"empirical q repeat", func() (Sampler, error) {
			return NewEmpirical([][2]float64{{0, 1}, {0.5, 2}, {0.5, 3}, {1, 4}})
		}, "empirical: quantiles[2]: q (0.5) must be greater than the previous q (0.5)"},
		{"empirical ms decreasing", func() (Sampler, error) {
			return NewEmpirical([][2]float64{{0, 1}, {0.5, 4}, {0.7, 3}, {1, 5}})
		}, "empirical: quantiles[2]: ms (3) must be >= the previous ms (4)"},
		{"empirical ms<0", func() (Sampler, error) { return NewEmpirical([][2]float64{{0, -1}, {1, 2}}) }, "empirical: quantiles[0]: ms must be >= 0, got -1"},
		{"empirical q NaN", func() (Sampler, error) { return NewEmpirical([][2]float64{{0, 1}, {nan, 2}}) }, "empirical: quantiles[1]: q must be finite, got NaN"},
		{"empirical ms inf", func() (Sampler, error) { return NewEmpirical([][2]float64{{0, 1}, {1, inf}}) }, "empirical: quantiles[1]: ms must be finite, got +Inf"},
		{"mixture empty", func() (Sampler, error) { return NewMixture(nil) }, "mixture: needs at least one component"},
		{"mixture weight<0", func() (Sampler, error) {
			return NewMixture([]WeightedSampler{{1, ok}, {1, ok}, {-1, ok}})
		}, "mixture: components[2]: weight must be > 0, got -1"},
		{"mixture weight NaN", func() (Sampler, error) { return NewMixture([]WeightedSampler{{nan, ok}}) }, "mixture: components[0]: weight must be > 0, got NaN"},
		{"mixture weight inf", func() (Sampler, error) { return NewMixture([]WeightedSampler{{inf, ok}}) }, "mixture: components[0]: weight must be finite, got +Inf"},
		{"mixture nil", func() (Sampler, error) { return NewMixture([]WeightedSampler{{1, nil}}) }, "mixture: components[0]: sampler is nil"},
		{"mixture overflow", func() (Sampler, error) {
			return NewMixture([]WeightedSampler{{math.MaxFloat64, ok}, {math.MaxFloat64, ok}})
		}, "mixture: total weight overflows"},
	}
	for _, tt := range tests {
		s, err := tt.fn()
		if err == nil {
			t.Errorf("%s: got %v, want error %q", tt.name, s, tt.want)
			continue
		}
		if s != nil {
			t.Errorf("%s: non-nil Sampler returned with error", tt.name)
		}
		if err.Error() != tt.want {
			t.Errorf("%s:\n got  %q\n want %q", tt.name, err, tt.want)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	const all = "constant, uniform, exponential, normal, lognormal, gamma, weibull, pareto, empirical, mixture"
	good := Spec{Family: "constant", ValueMs: f(1)}
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"no family", Spec{}, "family is required (one of " + all + ")"},
		{"unknown family", Spec{Family: "lognormall"}, `unknown family "lognormall" (want one of ` + all + ")"},
		{"case matters", Spec{Family: "Constant", ValueMs: f(1)}, `unknown family "Constant" (want one of ` + all + ")"},
		{"xm on exponential", Spec{Family: "exponential", MeanMs: f(1), XmMs: f(2)}, `field xm_ms does not apply to family "exponential"`},
		{"offset on gamma", Spec{Family: "gamma", Shape: f(1), ScaleMs: f(1), OffsetMs: f(1)}, `field offset_ms does not apply to family "gamma"`},
		{"quantiles on constant", Spec{Family: "constant", ValueMs: f(1), Quantiles: [][2]float64{{0, 1}}}, `field quantiles does not apply to family "constant"`},
		{"components on normal", Spec{Family: "normal", Components: []Component{{1, good}}}, `field components does not apply to family "normal"`},
		{"constant missing", Spec{Family: "constant"}, `family "constant" needs value_ms`},
		{"uniform missing max", Spec{Family: "uniform", MinMs: f(1)}, `family "uniform" needs max_ms`},
		{"exponential missing", Spec{Family: "exponential", OffsetMs: f(1)}, `family "exponential" needs mean_ms`},
		{"normal missing", Spec{Family: "normal"}, `family "normal" needs mean_ms and stddev_ms`},
		{"gamma missing", Spec{Family: "gamma"}, `family "gamma" needs shape and scale_ms`},
		{"weibull missing scale", Spec{Family: "weibull", Shape: f(1)}, `family "weibull" needs scale_ms`},
		{"pareto missing alpha", Spec{Family: "pareto", XmMs: f(1)}, `family "pareto" needs alpha`},
		{"empirical missing", Spec{Family: "empirical"}, `family "empirical" needs quantiles`},
		{"mixture missing", Spec{Family: "mixture"}, `family "mixture" needs components`},
		{"lognormal nothing", Spec{Family: "lognormal"}, `family "lognormal" needs median_ms and p99_ms, or mu and sigma`},
		{"lognormal only median", Spec{Family: "lognormal", MedianMs: f(4)}, `family "lognormal" needs median_ms and p99_ms, or mu and sigma`},
		{"lognormal only sigma", Spec{Family: "lognormal", Sigma: f(1), OffsetMs: f(1)}, `family "lognormal" needs median_ms and p99_ms, or mu and sigma`},
		{"lognormal both", Spec{Family: "lognormal", MedianMs: f(4), P99Ms: f(10), Mu: f(1)}, `family "lognormal" takes median_ms and p99_ms, or mu and sigma, not both`},
		{"lognormal bad quantiles", Spec{Family: "lognormal", MedianMs: f(5), P99Ms: f(3)}, "lognormal: p99_ms (3) must be greater than median_ms (5)"},
		{"lognormal NaN sigma", Spec{Family: "lognormal", Mu: f(1), Sigma: f(math.NaN())}, "lognormal: sigma must be finite, got NaN"},
		{"constant inf", Spec{Family: "constant", ValueMs: f(math.Inf(-1))}, "constant: value_ms must be finite, got -Inf"},
		{"mixture bad weight", Spec{Family: "mixture", Components: []Component{{1, good}, {2, good}, {-1, good}}},
			"mixture: components[2]: weight must be > 0, got -1"},
		{"mixture missing weight", Spec{Family: "mixture", Components: []Component{{0, good}}},
			"mixture: components[0]: weight must be > 0, got 0"},
		{"mixture bad component", Spec{Family: "mixture", Components: []Component{{1, good}, {1, Spec{Family: "lognormal", MedianMs: f(5), P99Ms: f(3)}}}},
			"mixture: components[1]: lognormal: p99_ms (3) must be greater than median_ms (5)"},
		{"mixture component field", Spec{Family: "mixture", Components: []Component{{1, Spec{Family: "exponential", MeanMs: f(1), XmMs: f(1)}}}},
			`mixture: components[0]: field xm_ms does not apply to family "exponential"`},
		{"nested mixture", Spec{Family: "mixture", Components: []Component{{1, Spec{Family: "mixture", Components: []Component{{1, Spec{Family: "nope"}}}}}}},
			`mixture: components[0]: mixture: components[0]: unknown family "nope" (want one of ` + all + ")"},
	}
	for _, tt := range tests {
		s, err := tt.spec.Build()
		if err == nil {
			t.Errorf("%s: got %v, want error %q", tt.name, s, tt.want)
			continue
		}
		if s != nil {
			t.Errorf("%s: non-nil Sampler returned with error", tt.name)
		}
		if err.Error() != tt.want {
			t.Errorf("%s:\n got  %q\n want %q", tt.name, err, tt.want)
		}
	}
}

func TestBuildEachFamily(t *testing.T) {
	tests := []struct {
		spec Spec
		want string
	}{
		{Spec{Family: "constant", ValueMs: f(2)}, "constant(value_ms=2)"},
		{Spec{Family: "uniform", MinMs: f(1), MaxMs: f(3)}, "uniform(min_ms=1, max_ms=3)"},
		{Spec{Family: "exponential", MeanMs: f(2)}, "exponential(mean_ms=2, offset_ms=0)"},
		{Spec{Family: "exponential", MeanMs: f(2), OffsetMs: f(1)}, "exponential(mean_ms=2, offset_ms=1)"},
		{Spec{Family: "normal", MeanMs: f(5), StddevMs: f(1)}, "normal(mean_ms=5, stddev_ms=1, truncated at 0)"},
		{Spec{Family: "lognormal", MedianMs: f(4), P99Ms: f(10)}, "lognormal(mu=1.386, sigma=0.3939, offset_ms=0; median_ms=4)"},
		{Spec{Family: "lognormal", Mu: f(0), Sigma: f(1), OffsetMs: f(2)}, "lognormal(mu=0, sigma=1, offset_ms=2; median_ms=3)"},
		{Spec{Family: "gamma", Shape: f(2), ScaleMs: f(3)}, "gamma(shape=2, scale_ms=3)"},
		{Spec{Family: "weibull", Shape: f(2), ScaleMs: f(3)}, "weibull(shape=2, scale_ms=3)"},
		{Spec{Family: "pareto", XmMs: f(2), Alpha: f(3)}, "pareto(xm_ms=2, alpha=3)"},
		{Spec{Family: "empirical", Quantiles: [][2]float64{{0, 1}, {1, 3}}}, "empirical(2 points, min_ms=1, median_ms=2, max_ms=3)"},
		{Spec{Family: "mixture", Components: []Component{
			{3, Spec{Family: "constant", ValueMs: f(1)}},
			{1, Spec{Family: "constant", ValueMs: f(2)}},
		}}, "mixture(0.75×constant(value_ms=1), 0.25×constant(value_ms=2))"},
	}
	for _, tt := range tests {
		s, err := tt.spec.Build()
		if err != nil {
			t.Errorf("%+v: %v", tt.spec, err)
			continue
		}
		if got := s.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// TestTOMLDecode checks the documented TOML shapes decode cleanly (every key
// consumed) and build the expected distributions.
func TestTOMLDecode(t *testing.T) {
	const doc = `
[service_time]
family    = "lognormal"
median_ms = 4.0
p99_ms    = 10.0

[jitter]
family    = "empirical"
quantiles = [[0.0, 0.2], [0.5, 0.4], [0.9, 1.0], [0.99, 3.0], [1.0, 8.0]]

[slow_replica]
family = "mixture"

  [[slow_replica.components]]
  weight    = 0.99
  family    = "lognormal"
  median_ms = 4.0
  p99_ms    = 10.0

  [[slow_replica.components]]
  weight = 0.01
  family = "pareto"
  xm_ms  = 50.0
  alpha  = 1.5

[nested]
family = "mixture"
  [[nested.components]]
  weight = 1
  family = "constant"
  value_ms = 1
  [[nested.components]]
  weight = 1
  family = "mixture"
    [[nested.components.components]]
    weight = 1
    family = "uniform"
    min_ms = 2
    max_ms = 4
`
	var sc struct {
		ServiceTime Spec `toml:"service_time"`
		Jitter      Spec `toml:"jitter"`
		SlowReplica Spec `toml:"slow_replica"`
		Nested      Spec `toml:"nested"`
	}
	md, err := toml.Decode(doc, &sc)
	if err != nil {
		t.Fatal(err)
	}
	if u := md.Undecoded(); len(u) != 0 {
		t.Fatalf("undecoded keys: %v", u)
	}

	st := ok(t)(sc.ServiceTime.Build())
	if q := st.Quantile(0.99); math.Abs(q-10) > 1e-9 {
		t.Errorf("service_time p99 = %v", q)
	}
	j := ok(t)(sc.Jitter.Build())
	if q := j.Quantile(0.95); math.Abs(q-(1.0+(0.05/0.09)*2.0)) > 1e-12 {
		t.Errorf("jitter Quantile(0.95) = %v", q)
	}
	sr := ok(t)(sc.SlowReplica.Build())
	if len(sc.SlowReplica.Components) != 2 || sc.SlowReplica.Components[1].Weight != 0.01 ||
		*sc.SlowReplica.Components[1].XmMs != 50 {
		t.Fatalf("components decoded wrong: %+v", sc.SlowReplica.Components)
	}
	if want := "mixture(0.99×lognormal("; !strings.HasPrefix(sr.String(), want) {
		t.Errorf("String() = %q", sr.String())
	}
	// 1% pareto(50, 1.5): CDF(50) is the lognormal mass below 50 ≈ 0.99.
	if c := sr.CDF(50); math.Abs(c-0.99) > 1e-6 {
		t.Errorf("CDF(50) = %v", c)
	}
	n := ok(t)(sc.Nested.Build())
	if m := n.Mean(); math.Abs(m-2) > 1e-12 {
		t.Errorf("nested mean = %v, want 2", m)
	}

	// A misspelled key is reported by the decoder's metadata (the caller's
	// job), not silently accepted.
	var bad struct{ D Spec }
	md, err = toml.Decode("[D]\nfamily = \"constant\"\nvalue = 3\n", &bad)
	if err != nil {
		t.Fatal(err)
	}
	if u := md.Undecoded(); len(u) != 1 || u[0].String() != "D.value" {
		t.Errorf("undecoded = %v, want [D.value]", u)
	}
}

// FuzzSpecBuild feeds random field values (including NaN, ±Inf, negative
// and subnormal numbers) and random subsets of fields to Build. Build must
// not panic; if it succeeds the sampler must yield finite samples >= 0 and
// CDF/Quantile must not panic.
func FuzzSpecBuild(f *testing.F) {
	f.Add(uint8(4), uint32(0b11), 4.0, 10.0, 0.0, 0.0, uint8(0))
	f.Add(uint8(7), uint32(0b11), 1.0, 0.5, 0.0, 0.0, uint8(0))
	f.Add(uint8(8), uint32(0), 0.1, 1.0, 0.9, 5.0, uint8(3))
	f.Add(uint8(9), uint32(0b11|4<<16|7<<24), 1.0, 2.0, 0.3, 1.0, uint8(2))
	f.Add(uint8(5), uint32(0b11), 1e-300, 1e300, 0.0, 0.0, uint8(0))
	f.Add(uint8(3), uint32(0b11), math.Inf(1), math.NaN(), 0.0, 0.0, uint8(0))
	f.Add(uint8(2), uint32(0b11|1<<31), 1.0, 1.0, 0.0, 0.0, uint8(0))
	f.Fuzz(func(t *testing.T, fam uint8, mask uint32, a, b, c, d float64, nq uint8) {
		vals := []float64{a, b, c, d}
		ptr := func(i int) *float64 {
			v := vals[i%len(vals)]
			return &v
		}
		// mk sets the keys that apply to the family when their mask bit is
		// set (so most inputs reach the constructors), and with bit 31 one
		// key that does not apply.
		mk := func(fam uint8, mask uint32) Spec {
			s := Spec{Family: families[int(fam)%len(families)]}
			if fam == 255 {
				s.Family = "bogus"
			}
			ptrs := map[string]**float64{
				"value_ms": &s.ValueMs, "min_ms": &s.MinMs, "max_ms": &s.MaxMs, "mean_ms": &s.MeanMs,
				"stddev_ms": &s.StddevMs, "median_ms": &s.MedianMs, "p99_ms": &s.P99Ms, "mu": &s.Mu,
				"sigma": &s.Sigma, "shape": &s.Shape, "scale_ms": &s.ScaleMs, "xm_ms": &s.XmMs,
				"alpha": &s.Alpha, "offset_ms": &s.OffsetMs,
			}
			for i, key := range allowed[s.Family] {
				if p, ok := ptrs[key]; ok && mask&(1<<i) != 0 {
					*p = ptr(i)
				}
			}
			if mask&(1<<31) != 0 {
				s.XmMs, s.Quantiles = ptr(0), [][2]float64{{0, 1}}
			}
			// Empirical table: q from a, ms from c/d, nq points.
			for i := range int(nq % 6) {
				q := float64(i) / math.Max(1, float64(nq%6-1))
				if i == 1 && mask&(1<<8) != 0 {
					q = a
				}
				s.Quantiles = append(s.Quantiles, [2]float64{q, c + float64(i)*d})
			}
			return s
		}
		s := mk(fam, mask)
		if s.Family == "mixture" {
			// Two components built from the same values with other families.
			s.Components = []Component{
				{Weight: c, Spec: mk(uint8(mask>>16), mask)},
				{Weight: d, Spec: mk(uint8(mask>>24), mask>>1)},
			}
		}
		sm, err := s.Build()
		if err != nil {
			if sm != nil {
				t.Fatal("non-nil Sampler with error")
			}
			return
		}
		r := rand.New(rand.NewPCG(uint64(mask), 7))
		for range 64 {
			if x := sm.Sample(r); !(x >= 0) || math.IsInf(x, 0) {
				t.Fatalf("%v: sample %v", sm, x)
			}
		}
		_ = sm.CDF(a)
		_ = sm.CDF(b)
		_ = sm.Quantile(0.5)
		_ = sm.Mean()
		_ = sm.String()
	})
}

// BenchmarkSample measures Sample for every test case; names are
// BenchmarkSample/<family>[/<variant>].
func BenchmarkSample(b *testing.B) {
	for _, tc := range cases(b) {
		b.Run(tc.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			var sink float64
			for b.Loop() {
				sink += tc.s.Sample(r)
			}
			_ = sink
		})
	}
}
