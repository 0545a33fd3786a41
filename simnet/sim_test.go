package simnet_test

import (
	"slices"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"
)

func mustBuild(tb testing.TB, s dist.Spec) dist.Sampler {
	tb.Helper()
	d, err := s.Build()
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func f(v float64) *float64 { return &v }

// threeRegions is a 3-region account with a lognormal in-region service
// time and a 5% slow tail on the primary.
func threeRegions(tb testing.TB, rate float64, d time.Duration) *simnet.Config {
	body := dist.Spec{Family: "lognormal", MedianMs: f(2), P99Ms: f(8)}
	slow := dist.Spec{Family: "mixture", Components: []dist.Component{
		{Weight: 0.95, Spec: body},
		{Weight: 0.05, Spec: dist.Spec{Family: "uniform", MinMs: f(200), MaxMs: f(800)}},
	}}
	return &simnet.Config{
		Seed:         42,
		Duration:     d,
		ClientRegion: "East US",
		Endpoints: []simnet.Endpoint{
			{Region: "East US", Replica: "eus"}, {Region: "East US 2", Replica: "eus2"}, {Region: "Central US", Replica: "cus"},
		},
		Replicas: []simnet.Replica{
			{Name: "eus", Region: "East US", Default: mustBuild(tb, slow)},
			{Name: "eus2", Region: "East US 2", Default: mustBuild(tb, body)},
			{Name: "cus", Region: "Central US", Default: mustBuild(tb, body)},
		},
		RTTMs:           map[string]map[string]float64{"East US": {"East US 2": 8, "Central US": 28}},
		SameRegionRTTMs: 1,
		Workload:        simnet.Workload{RatePerSec: rate, Partitions: 16},
	}
}

func staticPolicy(ms float64) simnet.Policy {
	return simnet.Policy{Name: "static", New: func() (hedging.AvailabilityStrategy, error) {
		return hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(time.Duration(ms * float64(time.Millisecond))))), nil
	}}
}

func disabledPolicy() simnet.Policy {
	return simnet.Policy{Name: "disabled", New: func() (hedging.AvailabilityStrategy, error) { return hedging.Disabled, nil }}
}

func TestHedgingCutsTheSlowTail(t *testing.T) {
	cfg := threeRegions(t, 2000, 20*time.Second)
	off, err := simnet.Run(cfg, disabledPolicy(), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	on, err := simnet.Run(cfg, staticPolicy(20), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if off.Ops != on.Ops || off.Ops < 35000 {
		t.Fatalf("ops: off %d on %d", off.Ops, on.Ops)
	}
	// 5% of primaries take 200–800 ms; with a 20 ms threshold the alternate
	// (8 ms RTT + ~2 ms) answers by ~35 ms.
	if p99 := off.QuantileMs(0.99); p99 < 200 {
		t.Errorf("disabled p99 = %.1fms, want >= 200", p99)
	}
	if p99 := on.QuantileMs(0.99); p99 > 40 {
		t.Errorf("hedged p99 = %.1fms, want <= 40", p99)
	}
	if hr := float64(on.Hedged) / float64(on.Ops); hr < 0.04 || hr > 0.08 {
		t.Errorf("hedge rate %.3f, want ≈ 0.05", hr)
	}
	if m := on.RUMultiplier(); m < 1.03 || m > 1.08 {
		t.Errorf("RU multiplier %.3f, want ≈ 1.05", m)
	}
	if off.Hedged != 0 || off.Terminal[0] != off.Ops {
		t.Errorf("disabled policy hedged %d ops, terminal none %d", off.Hedged, off.Terminal[0])
	}
}

func BenchmarkSimulatedPointReads(b *testing.B) { benchFleet(b, 0) }

// Absurd but valid distributions must not overflow virtual time: delays
// are capped at MaxDelay and nothing panics.
func TestExtremeDelaysAreCapped(t *testing.T) {
	cfg := threeRegions(t, 1e-300, 10*time.Second)
	cfg.MaxOps = 3
	if _, err := simnet.Run(cfg, staticPolicy(20), 0, simnet.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg = threeRegions(t, 100, 10*time.Second)
	cfg.Replicas[0].Default = mustBuild(t, dist.Spec{Family: "pareto", XmMs: f(1), Alpha: f(0.01)})
	st, err := simnet.Run(cfg, disabledPolicy(), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Ops == 0 || st.QuantileMs(0.5) < 1 || st.QuantileMs(1) > float64(simnet.MaxDelay.Milliseconds())*1.01 {
		t.Errorf("ops %d, p50 %v ms, max %v ms", st.Ops, st.QuantileMs(0.5), st.QuantileMs(1))
	}
}

// A fault rule restricted to partitions answers only their operations.
func TestFaultPartitions(t *testing.T) {
	cfg := threeRegions(t, 2000, 5*time.Second)
	cfg.Faults = []simnet.Fault{{Status: hedging.Status{Code: 429, SubStatus: hedging.SubStatusHotPartitionKeyThrottled}, Probability: 1, Partitions: []int{3}}}
	throttled := map[string]int{}
	st, err := simnet.Run(cfg, staticPolicy(20), 0, simnet.RunOptions{OnComplete: func(r *hedging.Race, op *hedging.Operation) {
		if res, err := r.Result(); err == nil && res.Status.SubStatus == hedging.SubStatusHotPartitionKeyThrottled {
			throttled[op.Partition]++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(throttled) != 1 || throttled["3"] == 0 || st.FinalErrorResponses != int64(throttled["3"]) {
		t.Errorf("throttled by partition %v, final error responses %d", throttled, st.FinalErrorResponses)
	}
}

// Regions used: attempts and answers per replica add up, and a region that
// is neither primary nor alternate (the third preferred region) is unused.
func TestReplicaCounts(t *testing.T) {
	st, err := simnet.Run(threeRegions(t, 2000, 5*time.Second), staticPolicy(20), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.Replicas, []string{"eus", "eus2", "cus"}) {
		t.Fatalf("replicas %v", st.Replicas)
	}
	var attempts, answers int64
	for i := range st.Replicas {
		attempts += st.ReplicaAttempts[i]
		answers += st.ReplicaAnswers[i]
	}
	if attempts != st.Attempts || answers != st.Ops-st.Errors {
		t.Errorf("attempts %d of %d, answers %d of %d", attempts, st.Attempts, answers, st.Ops-st.Errors)
	}
	if st.ReplicaAttempts[2] != 0 || st.ReplicaAnswers[1] == 0 || st.ReplicaAnswers[1] != st.AlternateWins {
		t.Errorf("per replica attempts %v answers %v, alternate wins %d", st.ReplicaAttempts, st.ReplicaAnswers, st.AlternateWins)
	}
}
