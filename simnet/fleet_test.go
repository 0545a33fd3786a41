package simnet_test

import (
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/threshold"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"
)

// perInstance runs cfg under p and returns the operations each instance
// ran, by partition.
func perInstance(t *testing.T, cfg *simnet.Config, p simnet.Policy) (*simnet.Stats, []map[string]int) {
	t.Helper()
	by := make([]map[string]int, max(cfg.Fleet.Instances, 1))
	for i := range by {
		by[i] = map[string]int{}
	}
	st, err := simnet.Run(cfg, p, 0, simnet.RunOptions{OnCompleteInstance: func(inst int, r *hedging.Race, op *hedging.Operation) {
		by[inst][op.Partition]++
	}})
	if err != nil {
		t.Fatal(err)
	}
	return st, by
}

// assignment = partition: all of partition p's operations run on instance
// p mod Instances; instances beyond the partitions get nothing.
func TestFleetPartitionAssignment(t *testing.T) {
	cfg := threeRegions(t, 2000, 5*time.Second)
	cfg.Fleet = simnet.Fleet{Instances: 20, Assignment: simnet.AssignPartition}
	st, by := perInstance(t, cfg, staticPolicy(20))
	var total int
	for inst, parts := range by {
		for part, n := range parts {
			p, _ := strconv.Atoi(part)
			if p%20 != inst {
				t.Errorf("partition %s: %d ops on instance %d, want all on %d", part, n, inst, p%20)
			}
			total += n
		}
		if inst < 16 && len(parts) != 1 {
			t.Errorf("instance %d ran %d partitions, want 1", inst, len(parts))
		}
		if inst >= 16 && len(parts) != 0 {
			t.Errorf("instance %d ran partitions %v; there are only 16", inst, parts)
		}
	}
	if int64(total) != st.Ops || st.Ops < 9000 {
		t.Errorf("%d ops seen of %d", total, st.Ops)
	}
}

// assignment = uniform: each instance gets about its share of every
// partition; a closed loop's client c runs on instance c mod Instances.
func TestFleetUniformAssignment(t *testing.T) {
	cfg := threeRegions(t, 20000, 5*time.Second)
	cfg.Fleet = simnet.Fleet{Instances: 10}
	st, by := perInstance(t, cfg, staticPolicy(20))
	for inst, parts := range by {
		n := 0
		for _, c := range parts {
			n += c
		}
		if want := float64(st.Ops) / 10; float64(n) < 0.95*want || float64(n) > 1.05*want || len(parts) != 16 {
			t.Errorf("instance %d: %d ops over %d partitions, want ~%.0f over 16", inst, n, len(parts), want)
		}
	}

	cfg = threeRegions(t, 0, 2*time.Second)
	cfg.Workload = simnet.Workload{Clients: 3, Think: mustBuild(t, dist.Spec{Family: "constant", ValueMs: f(5)}), Partitions: 4}
	cfg.Fleet = simnet.Fleet{Instances: 5}
	_, by = perInstance(t, cfg, staticPolicy(20))
	for inst, parts := range by {
		if busy := len(parts) > 0; busy != (inst < 3) {
			t.Errorf("closed loop of 3 clients: instance %d ran %v", inst, parts)
		}
	}
}

// Spreading operations over instances changes nothing a policy without
// state sees: under the disabled policy (no hedging, no breaker, no
// marks in this 503-free scenario) a fleet of 100 gives exactly the
// single client's measurements — the assignment draw consumes nothing of
// the workload's or the network's random streams.
func TestFleetKeepsTheWorkload(t *testing.T) {
	cfg := threeRegions(t, 2000, 5*time.Second)
	one, err := simnet.Run(cfg, disabledPolicy(), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []simnet.Assignment{simnet.AssignUniform, simnet.AssignPartition} {
		cfg.Fleet = simnet.Fleet{Instances: 100, Assignment: a}
		many, err := simnet.Run(cfg, disabledPolicy(), 0, simnet.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if one.Ops < 9000 || !reflect.DeepEqual(one, many) {
			t.Errorf("%v: 100 instances: ops %d p99 %.2f ms; 1 instance: ops %d p99 %.2f ms", a, many.Ops, many.QuantileMs(0.99), one.Ops, one.QuantileMs(0.99))
		}
	}
}

// firstLeave runs cfg under p and returns, per instance that ran any
// operation, the start time of its first operation whose threshold is not
// initial (never: the run's end).
func firstLeave(t *testing.T, cfg *simnet.Config, p simnet.Policy, initial time.Duration) []time.Duration {
	t.Helper()
	n := max(cfg.Fleet.Instances, 1)
	first := make([]time.Duration, n)
	seen := make([]bool, n)
	for i := range first {
		first[i] = -1
	}
	_, err := simnet.Run(cfg, p, 0, simnet.RunOptions{OnCompleteInstance: func(inst int, r *hedging.Race, op *hedging.Operation) {
		seen[inst] = true
		if first[inst] < 0 && r.Threshold().Get() != initial {
			first[inst] = r.Start()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	var out []time.Duration
	for i := range first {
		if !seen[i] {
			continue
		}
		if first[i] < 0 {
			first[i] = cfg.Duration
		}
		out = append(out, first[i])
	}
	slices.Sort(out)
	return out
}

// The dynamic threshold's warm-up is per instance: TPS §4.2 as written
// (1 s initial threshold until 100 observations) leaves its initial value
// within ~1 s for one client at 500 reads/s, but 100 instances at 5
// reads/s each (the same total rate) each need their own 100 observations,
// ~20 s.
func TestFleetWarmupIsPerInstance(t *testing.T) {
	tps := simnet.Policy{Name: "p99-tps", New: func() (hedging.AvailabilityStrategy, error) {
		p, err := threshold.NewP99Dynamic(threshold.TPSLiteral())
		if err != nil {
			return hedging.AvailabilityStrategy{}, err
		}
		return hedging.Hedging(hedging.NewPolicyStrategy(p)), nil
	}}
	initial := threshold.TPSLiteral().Initial
	cfg := threeRegions(t, 500, 60*time.Second)
	one := firstLeave(t, cfg, tps, initial)
	cfg.Fleet = simnet.Fleet{Instances: 100}
	many := firstLeave(t, cfg, tps, initial)
	t.Logf("one instance leaves the initial threshold at %v; 100 instances: first %v, median %v, last %v", one[0], many[0], many[len(many)/2], many[len(many)-1])
	if len(one) != 1 || one[0] > 2*time.Second {
		t.Errorf("one instance at 500/s: threshold leaves its initial value at %v, want within ~1 s", one)
	}
	if len(many) != 100 || many[0] < 10*time.Second || many[len(many)/2] < 15*time.Second || many[len(many)/2] > 30*time.Second {
		t.Errorf("100 instances at 5/s: first leave %v, median %v, want each after its own ~100 observations (~20 s)", many[0], many[len(many)/2])
	}
}

// The partition breaker is per instance: with the primary always slow,
// every alternate wins, and each instance's tracker needs its own N
// consecutive wins on a partition before it routes that partition away.
// One client trips each of the 16 partitions once per probe interval;
// 10 instances trip each (instance, partition) pair, about 10 times as
// often, and take longer to do so.
func TestFleetBreakerIsPerInstance(t *testing.T) {
	cfg := threeRegions(t, 1000, 20*time.Second)
	cfg.Replicas[0].Default = mustBuild(t, dist.Spec{Family: "constant", ValueMs: f(300)})
	cfg.Client.ConsecutiveHedgeWinThreshold = 5
	cfg.Client.ProbeInterval = time.Minute // one trip per pair in the run
	trips := func(n int) (int64, time.Duration) {
		cfg.Fleet = simnet.Fleet{Instances: n}
		var last time.Duration
		st, err := simnet.Run(cfg, staticPolicy(20), 0, simnet.RunOptions{OnComplete: func(r *hedging.Race, op *hedging.Operation) {
			if r.TrippedBreaker() {
				last = max(last, r.DoneAt())
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		return st.BreakerTrips, last
	}
	one, oneLast := trips(1)
	ten, tenLast := trips(10)
	t.Logf("trips: 1 instance %d (last at %v), 10 instances %d (last at %v)", one, oneLast, ten, tenLast)
	if one != 16 {
		t.Errorf("one instance tripped %d times, want once per partition (16)", one)
	}
	if ten != 160 {
		t.Errorf("10 instances tripped %d times, want once per instance and partition (160)", ten)
	}
	if tenLast < 5*oneLast {
		t.Errorf("the last trip came at %v with 10 instances, %v with one: want ~10x later (each pair sees 1/10 of the wins)", tenLast, oneLast)
	}
}

// benchFleet is the simulator benchmark (BenchmarkSimulatedPointReads:
// b.N point reads over three regions under a static 20 ms threshold) with
// the workload spread over a fleet of n instances (uniform assignment; 0
// or 1 = one client).
func benchFleet(b *testing.B, n int) {
	cfg := threeRegions(b, 100000, 0)
	cfg.MaxOps = int64(b.N)
	cfg.Fleet = simnet.Fleet{Instances: n}
	b.ReportAllocs()
	b.ResetTimer()
	st, err := simnet.Run(cfg, staticPolicy(20), 0, simnet.RunOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(st.Ops)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(float64(st.Events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkSimulatedPointReadsFleet1000 is the simulator benchmark with
// 1000 client instances at the same total rate (issue 10's target: at
// most 1.5x BenchmarkSimulatedPointReads per operation).
func BenchmarkSimulatedPointReadsFleet1000(b *testing.B) { benchFleet(b, 1000) }

// BenchmarkSimulatedPointReadsFleet1 is the same path with one instance
// ([fleet] instances = 1): the cost of the fleet code when unused.
func BenchmarkSimulatedPointReadsFleet1(b *testing.B) { benchFleet(b, 1) }
