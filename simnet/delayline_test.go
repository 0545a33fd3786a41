package simnet

import (
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet/dist"
)

func mustDist(t *testing.T, s dist.Spec) dist.Sampler {
	t.Helper()
	d, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func fp(v float64) *float64 { return &v }

// Evaluating arrivals at unqueued replicas at send time must give exactly
// the results of the event path: same latencies, states, RU and counters.
func TestDelayLineMatchesEventPath(t *testing.T) {
	body := dist.Spec{Family: "lognormal", MedianMs: fp(2), P99Ms: fp(8)}
	cfg := &Config{
		Seed: 5, Duration: 20 * time.Second, ClientRegion: "A",
		Endpoints: []Endpoint{{Region: "A", Replica: "a"}, {Region: "B", Replica: "b"}, {Region: "C", Replica: "c"}},
		Replicas: []Replica{
			{Name: "a", Region: "A", Default: mustDist(t, dist.Spec{Family: "mixture", Components: []dist.Component{
				{Weight: 0.95, Spec: body}, {Weight: 0.05, Spec: dist.Spec{Family: "uniform", MinMs: fp(100), MaxMs: fp(300)}}}})},
			{Name: "b", Region: "B", Default: mustDist(t, body)},
			{Name: "c", Region: "C", Servers: 2, Default: mustDist(t, body)},
		},
		RTTMs:            map[string]map[string]float64{"A": {"B": 8, "C": 20}},
		Jitter:           mustDist(t, dist.Spec{Family: "exponential", MeanMs: fp(0.3)}),
		Episodes:         []Episode{{Target: "a", Start: 5 * time.Second, End: 12 * time.Second, RampUp: time.Second, AddMs: 50, Fraction: 0.3, FailRate: 0.1}},
		Faults:           []Fault{{Status: hedging.Status{Code: 503}, Probability: 0.01, Targets: []string{"b"}}},
		Workload:         Workload{RatePerSec: 2000, Partitions: 8, ExcludeFraction: 0.1, Exclude: []string{"B"}},
		OperationTimeout: 150 * time.Millisecond,
	}
	pol := Policy{Name: "static", New: func() (hedging.AvailabilityStrategy, error) {
		return hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(20 * time.Millisecond))), nil
	}}
	run := func(delayLine bool) *Stats {
		strategy, _ := pol.New()
		s, err := newSim(cfg, strategy, cfg.Seed)
		if err != nil {
			t.Fatal(err)
		}
		if !s.delayLine {
			t.Fatal("this configuration should allow the delay line")
		}
		s.delayLine = delayLine
		s.run(nil)
		return s.stats
	}
	fast, slow := run(true), run(false)
	if !fast.Latency.Equals(slow.Latency) || fast.Ops != slow.Ops || fast.Terminal != slow.Terminal ||
		fast.RUCharged != slow.RUCharged || fast.RUReturned != slow.RUReturned || fast.Attempts != slow.Attempts ||
		fast.Errors != slow.Errors || fast.Faults != slow.Faults || fast.BreakerTrips != slow.BreakerTrips {
		t.Errorf("delay line differs from the event path:\nfast %+v\nslow %+v", fast, slow)
	}
	if fast.Events >= slow.Events {
		t.Errorf("delay line processed %d events, event path %d", fast.Events, slow.Events)
	}
	if fast.Hedged == 0 || fast.Faults == 0 || fast.Terminal[hedging.AlternateWon] == 0 || fast.Terminal[hedging.PrimaryWonAfterHedge] == 0 {
		t.Errorf("scenario too tame: hedged %d faults %d terminal %v", fast.Hedged, fast.Faults, fast.Terminal)
	}
}
