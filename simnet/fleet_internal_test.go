package simnet

import (
	"math/bits"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"hedgelab/hedging"
	"hedgelab/hedging/threshold"
	"hedgelab/simnet/dist"
)

// fleetMemConfig is a 2-region account at 2 reads/s per instance with a
// 5% slow tail on the primary (200-800 ms, hedged at the policy's 50 ms
// floor), the workload spread uniformly over n instances, for d, with a
// fixed number of timeline windows (so the measurements' size does not
// depend on d).
func fleetMemConfig(t testing.TB, n int, d time.Duration) *Config {
	body := dist.Spec{Family: "lognormal", MedianMs: fp(2), P99Ms: fp(8)}
	slow := dist.Spec{Family: "mixture", Components: []dist.Component{
		{Weight: 0.95, Spec: body}, {Weight: 0.05, Spec: dist.Spec{Family: "uniform", MinMs: fp(200), MaxMs: fp(800)}}}}
	build := func(s dist.Spec) dist.Sampler {
		x, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	return &Config{
		Seed: 3, Duration: d, TimelineWindow: d / 10, ClientRegion: "A",
		Endpoints: []Endpoint{{Region: "A", Replica: "a"}, {Region: "B", Replica: "b"}},
		Replicas:  []Replica{{Name: "a", Region: "A", Default: build(slow)}, {Name: "b", Region: "B", Default: build(body)}},
		RTTMs:     map[string]map[string]float64{"A": {"B": 8}},
		Workload:  Workload{RatePerSec: 2 * float64(n), Partitions: 16},
		Fleet:     Fleet{Instances: n},
	}
}

// fleetRetained runs cfg under the default p99-dynamic policy and returns
// the heap the finished simulation still holds (everything it allocated
// and kept: op slots, event queue, clients and their policy state,
// measurements), the peak number of op slots (operations in flight at
// once, cancelled attempts still travelling included) and the operations
// simulated.
func fleetRetained(t testing.TB, cfg *Config) (heap uint64, slots int, ops int64) {
	p := Policy{Name: "p99-dynamic", New: func() (hedging.AvailabilityStrategy, error) {
		d, err := threshold.NewP99Dynamic(threshold.P99DynamicConfig{})
		if err != nil {
			return hedging.AvailabilityStrategy{}, err
		}
		return hedging.Hedging(hedging.NewPolicyStrategy(d)), nil
	}}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	strategy, err := p.New()
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSim(cfg, strategy, cfg.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.initFleet(p); err != nil {
		t.Fatal(err)
	}
	s.run(nil)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	return after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc), len(s.ops), s.stats.Ops
}

// Memory grows with instances and operations in flight, not with the
// number of operations: a 200-instance fleet simulated 4 times as long
// holds about the same heap and the same number of op slots. Both runs
// last longer than the policy's 60 s window, whose per-instance sketches
// fill (and grow to the range observed) during the first window.
// Memory grows with instances and operations in flight, not with the
// number of operations: a 200-instance fleet simulated 4 times as long
// holds about the same heap and the same number of op slots. Both runs
// last longer than the policy's 60 s window, whose per-instance sketches
// fill (and grow to the range observed) during the first window.
// BenchmarkFleetMemory measures 1000 instances.
func TestFleetMemoryFlatInOperations(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 200k operations")
	}
	shortHeap, shortSlots, shortOps := fleetRetained(t, fleetMemConfig(t, 200, 80*time.Second))
	longHeap, longSlots, longOps := fleetRetained(t, fleetMemConfig(t, 200, 320*time.Second))
	t.Logf("200 instances: %d ops hold %d B in %d slots; %d ops hold %d B in %d slots", shortOps, shortHeap, shortSlots, longOps, longHeap, longSlots)
	if longOps < 3*shortOps {
		t.Fatalf("ops %d and %d: want the long run ~4x the short", shortOps, longOps)
	}
	if float64(longSlots) > 1.5*float64(shortSlots) {
		t.Errorf("op slots grew from %d to %d with 4x the operations; want ~flat (operations in flight)", shortSlots, longSlots)
	}
	// What grows is the policies' sketches, whose buckets widen to the
	// range of latencies observed (bounded: 2048 buckets a sketch): a few
	// bytes per extra operation, where keeping anything per operation
	// would cost at least an op slot (unsafe.Sizeof(opState{}) bytes).
	perOp := (float64(longHeap) - float64(shortHeap)) / float64(longOps-shortOps)
	if float64(longHeap) > 1.25*float64(shortHeap) || perOp > 32 {
		t.Errorf("retained heap grew from %d B to %d B with 4x the operations (%.1f B per extra op; an op slot is %d B); want ~flat",
			shortHeap, longHeap, perOp, unsafe.Sizeof(opState{}))
	}
	// Each instance's state (policy windows, tracker) is counted: 200
	// instances hold more than 200 × 1 kB beyond one client's run.
	oneHeap, _, _ := fleetRetained(t, fleetMemConfig(t, 1, 80*time.Second))
	if longHeap < oneHeap+200*1000 {
		t.Errorf("200 instances hold %d B, one holds %d B: want each instance's state counted", longHeap, oneHeap)
	}
}

// BenchmarkFleetMemory reports the heap a finished 1000-instance run at
// 2000 reads/s holds (retained-B), per instance beyond one (B/instance,
// against a 1-instance run at the same total rate and length) and per
// extra simulated operation (B/extra-op, from an 80 s and a 320 s run),
// with the peak op slots.
func BenchmarkFleetMemory(b *testing.B) {
	var perInst, perOp, heap, slots float64
	for b.Loop() {
		short, _, shortOps := fleetRetained(b, fleetMemConfig(b, 1000, 80*time.Second))
		long, sl, longOps := fleetRetained(b, fleetMemConfig(b, 1000, 320*time.Second))
		oneCfg := fleetMemConfig(b, 1, 320*time.Second)
		oneCfg.Workload.RatePerSec = 2000
		one, _, _ := fleetRetained(b, oneCfg)
		heap, slots = float64(long), float64(sl)
		perInst = (float64(long) - float64(one)) / 999
		perOp = (float64(long) - float64(short)) / float64(longOps-shortOps)
	}
	b.ReportMetric(heap, "retained-B")
	b.ReportMetric(perInst, "B/instance")
	b.ReportMetric(perOp, "B/extra-op")
	b.ReportMetric(slots, "op-slots")
}

// A fleet builds an instance (its client and policy state) only when an
// operation reaches it: 100000 instances running 20 operations hold at
// most 20 clients beside the first, not 100000 (each holding its own
// p99-dynamic sketches).
func TestFleetBuildsInstancesOnFirstUse(t *testing.T) {
	cfg := fleetMemConfig(t, MaxInstances, time.Second)
	cfg.Workload.RatePerSec = 20
	cfg.TimelineWindow = time.Second
	p := Policy{Name: "p", New: func() (hedging.AvailabilityStrategy, error) { return hedging.Disabled, nil }}
	s, err := newSim(cfg, hedging.Disabled, cfg.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.initFleet(p); err != nil {
		t.Fatal(err)
	}
	s.run(nil)
	built := s.group.Built()
	if s.stats.Ops == 0 {
		t.Fatal("no operation simulated")
	}
	if s.group.Len() != MaxInstances || built < 2 || int64(built) > s.stats.Ops+1 {
		t.Errorf("%d instances, %d built for %d operations; want %d instances, 2..%d built",
			s.group.Len(), built, s.stats.Ops, MaxInstances, s.stats.Ops+1)
	}
}

// TestInstanceOfKeyedDraw: instanceOf's written-out draw is the keyed draw
// mix64(seed ^ key(purposeInstance, idx, 0, 0)) mapped onto [0, n), the
// assignment every earlier result was made with.
func TestInstanceOfKeyedDraw(t *testing.T) {
	for _, seed := range []uint64{0, 1, 42, 1 << 63, 0xdeadbeefcafef00d} {
		for _, n := range []int{2, 3, 1000, MaxInstances} {
			s := &sim{cfg: &Config{}, seed: seed, instances: int32(n)}
			for idx := uint64(0); idx < 2000; idx += 7 {
				hi, _ := bits.Mul64(mix64(seed^key(purposeInstance, idx, 0, 0)), uint64(n))
				if got := s.instanceOf(idx, 0, -1); got != int32(hi) {
					t.Fatalf("seed %d, n %d, idx %d: instanceOf = %d, want %d", seed, n, idx, got, hi)
				}
			}
		}
	}
}
