package simnet

import (
	"slices"
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

// mixedConfig exercises every path a shortcut of the event loop could
// change: a slow tail on the primary, jitter, a queued replica, an episode
// with failures, injected faults, ExcludeRegions and a deadline.
func mixedConfig(t *testing.T) *Config {
	body := dist.Spec{Family: "lognormal", MedianMs: fp(2), P99Ms: fp(8)}
	return &Config{
		Seed: 5, Duration: 20 * time.Second, ClientRegion: "A",
		Endpoints: []Endpoint{{Region: "A", Replica: "a"}, {Region: "B", Replica: "b"}, {Region: "C", Replica: "c"}},
		Replicas: []Replica{
			{Name: "a", Region: "A", Default: mustDist(t, dist.Spec{Family: "mixture", Components: []dist.Component{
				{Weight: 0.95, Spec: body}, {Weight: 0.05, Spec: dist.Spec{Family: "uniform", MinMs: fp(100), MaxMs: fp(300)}}}})},
			{Name: "b", Region: "B", Default: mustDist(t, body)},
			{Name: "c", Region: "C", Servers: 2, Default: mustDist(t, body)},
		},
		RTTMs:  map[string]map[string]float64{"A": {"B": 8, "C": 20}},
		Jitter: mustDist(t, dist.Spec{Family: "exponential", MeanMs: fp(0.3)}),
		Episodes: []Episode{
			{Target: "a", Start: 5 * time.Second, End: 12 * time.Second, RampUp: time.Second, AddMs: 50, Fraction: 0.3, FailRate: 0.1},
			{Target: "b", Start: 14 * time.Second, End: 16 * time.Second, AddMs: 200, Fraction: 0.5}, // past the deadline
		},
		Faults:           []Fault{{Status: hedging.Status{Code: 503}, Probability: 0.01, Targets: []string{"b"}}},
		Workload:         Workload{RatePerSec: 2000, Partitions: 8, ExcludeFraction: 0.1, Exclude: []string{"B"}},
		OperationTimeout: 150 * time.Millisecond,
	}
}

// runBothWays runs cfg under a static 20 ms threshold once as is and once
// with tweak applied to the simulator, and fails unless both give exactly
// the same measurements and the tweaked run processed fewer events.
func runBothWays(t *testing.T, cfg *Config, tweak func(*sim)) {
	t.Helper()
	run := func(tweaked bool) *Stats {
		strategy := hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(20 * time.Millisecond)))
		s, err := newSim(cfg, strategy, cfg.Seed)
		if err != nil {
			t.Fatal(err)
		}
		if tweaked {
			tweak(s)
		}
		s.run(nil)
		return s.stats
	}
	fast, slow := run(false), run(true)
	if !fast.Latency.Equals(slow.Latency) || fast.Ops != slow.Ops || fast.Terminal != slow.Terminal ||
		fast.RUCharged != slow.RUCharged || fast.RUReturned != slow.RUReturned || fast.Attempts != slow.Attempts ||
		fast.Errors != slow.Errors || fast.Faults != slow.Faults || fast.BreakerTrips != slow.BreakerTrips ||
		fast.Hedged != slow.Hedged || fast.Removed != slow.Removed || fast.End != slow.End ||
		!slices.Equal(fast.ReplicaAnswers, slow.ReplicaAnswers) || !slices.Equal(fast.ReplicaAttempts, slow.ReplicaAttempts) {
		t.Errorf("shortcut changes the results:\nwith    %+v\nwithout %+v", fast, slow)
	}
	for i := range fast.Timeline {
		if a, b := fast.Timeline[i], slow.Timeline[i]; a.Ops != b.Ops || a.Hedged != b.Hedged || a.Failed != b.Failed ||
			a.ThresholdSumMs != b.ThresholdSumMs || !a.Latency.Equals(b.Latency) {
			t.Errorf("window %d differs", i)
		}
	}
	if fast.Events >= slow.Events {
		t.Errorf("with the shortcut %d events, without %d", fast.Events, slow.Events)
	}
	if fast.Hedged == 0 || fast.Faults == 0 || fast.Errors == 0 || fast.Terminal[hedging.AlternateWon] == 0 || fast.Terminal[hedging.PrimaryWonAfterHedge] == 0 {
		t.Errorf("scenario too tame: hedged %d faults %d errors %d terminal %v", fast.Hedged, fast.Faults, fast.Errors, fast.Terminal)
	}
}

// Evaluating arrivals at unqueued replicas at send time must give exactly
// the results of the event path: same latencies, states, RU and counters.
func TestDelayLineMatchesEventPath(t *testing.T) {
	cfg := mixedConfig(t)
	runBothWays(t, cfg, func(s *sim) {
		if !s.delayLine {
			t.Fatal("this configuration should allow the delay line")
		}
		s.delayLine = false
	})
}

// Keeping dead timers out of the queue (park) must not change any result.
func TestParkedTimersMatchQueuedTimers(t *testing.T) {
	runBothWays(t, mixedConfig(t), func(s *sim) { s.parking = false })
}

// A run ends when its last event falls due, even a dead timer that is no
// longer queued: a sparse run whose last operation answers before its
// threshold ends at that threshold either way.
func TestParkedTimersKeepTheEnd(t *testing.T) {
	cfg := mixedConfig(t)
	cfg.Workload.RatePerSec, cfg.Duration, cfg.OperationTimeout = 5, 4*time.Second, 0
	cfg.Episodes, cfg.Faults = nil, nil
	cfg.Replicas = slices.Clone(cfg.Replicas)
	cfg.Replicas[0].Default = cfg.Replicas[1].Default // no slow tail
	var end [2]time.Duration
	for i, parking := range []bool{true, false} {
		s, err := newSim(cfg, hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(20*time.Millisecond))), cfg.Seed)
		if err != nil {
			t.Fatal(err)
		}
		s.parking = parking
		s.run(nil)
		end[i] = s.stats.End
		if parking && s.deadEnd != s.stats.End {
			t.Errorf("the last event should be a dropped threshold timer: End %v, latest dropped timer %v", s.stats.End, s.deadEnd)
		}
	}
	if end[0] != end[1] {
		t.Errorf("End with parked timers %v, with queued timers %v", end[0], end[1])
	}
}
