package simnet_test

import (
	"math"
	"slices"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"
)

// collect runs cfg under p and returns every operation's latency in ms.
func collect(t *testing.T, cfg *simnet.Config, p simnet.Policy) []float64 {
	t.Helper()
	var lat []float64
	_, err := simnet.Run(cfg, p, 0, simnet.RunOptions{OnComplete: func(r *hedging.Race, _ *hedging.Operation) {
		lat = append(lat, float64(r.DoneAt()-r.Start())/float64(time.Millisecond))
	}})
	if err != nil {
		t.Fatal(err)
	}
	return lat
}

// twoIndependentLegs is a scenario with no network delay, no queueing and
// no feedback (the breaker never trips), so the primary's latency X and the
// alternate's Y are independent draws from x and y.
func twoIndependentLegs(x, y dist.Sampler, ops int64) *simnet.Config {
	return &simnet.Config{
		Seed: 7, MaxOps: ops, ClientRegion: "c",
		Endpoints: []simnet.Endpoint{{Region: "A", Replica: "a"}, {Region: "B", Replica: "b"}},
		Replicas: []simnet.Replica{
			{Name: "a", Region: "pa", Default: x},
			{Name: "b", Region: "pb", Default: y},
		},
		Workload: simnet.Workload{RatePerSec: 1000, Partitions: 64},
		Client:   hedging.Config{Retry: hedging.RetryOptions{MaxAttempts: 1}, ConsecutiveHedgeWinThreshold: math.MaxInt32},
	}
}

// ksDistance returns sup |F_n(t) - F(t)| for the sorted sample xs.
func ksDistance(xs []float64, cdf func(float64) float64) float64 {
	slices.Sort(xs)
	n := float64(len(xs))
	d := 0.0
	for i, x := range xs {
		f := cdf(x)
		d = math.Max(d, math.Max(math.Abs(float64(i+1)/n-f), math.Abs(f-float64(i)/n)))
	}
	return d
}

// TestHedgedLatencyMatchesTheory checks the simulated hedged latency T with
// threshold d against P(T>t) = P(X>t) for t<d and P(X>t)·P(Y>t−d) for t≥d.
// One-sample Kolmogorov–Smirnov with n = 200 000: the critical distance at
// α = 0.001 is 1.949/√n ≈ 0.0044. Durations are kept in nanoseconds, so
// discretisation is far below that.
func TestHedgedLatencyMatchesTheory(t *testing.T) {
	const n = 200_000
	build := func(s dist.Spec) dist.Sampler { return mustBuild(t, s) }
	cases := []struct {
		name string
		x, y dist.Sampler
		d    float64
	}{
		{"exponential", build(dist.Spec{Family: "exponential", MeanMs: f(10)}), build(dist.Spec{Family: "exponential", MeanMs: f(5)}), 15},
		{"lognormal", build(dist.Spec{Family: "lognormal", MedianMs: f(4), P99Ms: f(40)}), build(dist.Spec{Family: "lognormal", MedianMs: f(6), P99Ms: f(20)}), 8},
		{"pareto", build(dist.Spec{Family: "pareto", XmMs: f(2), Alpha: f(1.5)}), build(dist.Spec{Family: "pareto", XmMs: f(3), Alpha: f(2.5)}), 6},
	}
	crit := 1.949 / math.Sqrt(n)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := c.d
			pol := staticPolicy(d)
			lat := collect(t, twoIndependentLegs(c.x, c.y, n), pol)
			if len(lat) != n {
				t.Fatalf("got %d ops", len(lat))
			}
			cdf := func(x float64) float64 {
				sx := 1 - c.x.CDF(x)
				if x < d {
					return 1 - sx
				}
				return 1 - sx*(1-c.y.CDF(x-d))
			}
			if D := ksDistance(lat, cdf); D > crit {
				t.Errorf("KS distance %.5f > %.5f", D, crit)
			} else {
				t.Logf("KS distance %.5f (critical %.5f)", D, crit)
			}
			// Without hedging the same draws follow X itself.
			off := collect(t, twoIndependentLegs(c.x, c.y, n), disabledPolicy())
			if D := ksDistance(off, c.x.CDF); D > crit {
				t.Errorf("unhedged KS distance %.5f > %.5f", D, crit)
			}
			// And the hedged distribution is measurably different from X.
			if D := ksDistance(lat, c.x.CDF); D < 10*crit {
				t.Errorf("hedged sample too close to X (D=%.5f): hedging had no effect?", D)
			}
		})
	}
}

// erlangC is the probability that an arrival waits in an M/M/k queue with
// offered load a = λ/μ.
func erlangC(k int, a float64) float64 {
	sum, term := 0.0, 1.0
	for i := 0; i < k; i++ {
		if i > 0 {
			term *= a / float64(i)
		}
		sum += term
	}
	last := term * a / float64(k) // a^k/k!
	rho := a / float64(k)
	top := last / (1 - rho)
	return top / (sum + top)
}

// TestQueueMeanSojourn checks an M/M/1 and an M/M/4 replica against the
// textbook mean sojourn time, within 2%.
func TestQueueMeanSojourn(t *testing.T) {
	cases := []struct {
		name      string
		servers   int
		rate, svc float64 // arrivals per second, mean service ms
	}{
		{"M/M/1 rho=0.7", 1, 700, 1},
		{"M/M/4 rho=0.8", 4, 3200, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			exp := mustBuild(t, dist.Spec{Family: "exponential", MeanMs: f(c.svc)})
			cfg := &simnet.Config{
				Seed: 3, MaxOps: 1_000_000, ClientRegion: "c",
				Endpoints: []simnet.Endpoint{{Region: "A", Replica: "a"}},
				Replicas:  []simnet.Replica{{Name: "a", Region: "pa", Servers: c.servers, Default: exp}},
				Workload:  simnet.Workload{RatePerSec: c.rate},
			}
			lat := collect(t, cfg, disabledPolicy())
			mean := 0.0
			for _, x := range lat {
				mean += x
			}
			mean /= float64(len(lat))
			mu := 1 / c.svc         // per ms
			lambda := c.rate / 1000 // per ms
			a := lambda / mu
			want := erlangC(c.servers, a)/(float64(c.servers)*mu-lambda) + 1/mu
			if rel := math.Abs(mean-want) / want; rel > 0.02 {
				t.Errorf("mean sojourn %.4f ms, textbook %.4f ms (%.1f%% off)", mean, want, 100*rel)
			} else {
				t.Logf("mean sojourn %.4f ms, textbook %.4f ms", mean, want)
			}
		})
	}
}

// TestDeterminism: one seed gives identical results; another seed differs.
func TestDeterminism(t *testing.T) {
	run := func(seed uint64) *simnet.Stats {
		cfg := threeRegions(t, 2000, 5*time.Second)
		cfg.Seed = seed
		st, err := simnet.Run(cfg, staticPolicy(20), 0, simnet.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	a, b, c := run(1), run(1), run(2)
	same := func(x, y *simnet.Stats) bool {
		return x.Ops == y.Ops && x.Hedged == y.Hedged && x.Attempts == y.Attempts && x.RUCharged == y.RUCharged &&
			x.Terminal == y.Terminal && x.Latency.Equals(y.Latency) && x.Events == y.Events
	}
	if !same(a, b) {
		t.Error("two runs with the same seed differ")
	}
	if same(a, c) {
		t.Error("runs with different seeds are identical")
	}
}

// TestCommonRandomNumbers: policies compared in one run see the same
// arrivals and base latencies, so with hedging disabled by a per-operation
// switch on every operation the results are identical to a disabled policy.
func TestCommonRandomNumbers(t *testing.T) {
	cfg := threeRegions(t, 2000, 5*time.Second)
	off, err := simnet.Run(cfg, disabledPolicy(), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workload.DisabledFraction = 1
	perOp, err := simnet.Run(cfg, staticPolicy(20), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !off.Latency.Equals(perOp.Latency) || off.Ops != perOp.Ops {
		t.Errorf("per-operation Disabled under a hedging policy should reproduce the disabled policy exactly")
	}
	// Adding a fourth region that nobody uses changes nothing.
	cfg2 := threeRegions(t, 2000, 5*time.Second)
	cfg2.Endpoints = append(cfg2.Endpoints, simnet.Endpoint{Region: "West US 2", Replica: "wus2"})
	cfg2.Replicas = append(cfg2.Replicas, simnet.Replica{Name: "wus2", Region: "West US 2", Default: cfg2.Replicas[1].Default})
	cfg2.RTTMs["East US"]["West US 2"] = 71
	more, err := simnet.Run(cfg2, disabledPolicy(), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !off.Latency.Equals(more.Latency) {
		t.Errorf("adding an unused region changed the disabled policy's latencies")
	}
}
