package study_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/internal/study"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"
)

func TestCI95(t *testing.T) {
	// mean 2, sd 1, n 3: t(0.975, 2) = 4.302653 -> half width 4.302653/sqrt(3)
	ci := study.CI95([]float64{1, 2, 3})
	h := 4.302652729696142 / math.Sqrt(3)
	if math.Abs(ci[0]-(2-h)) > 1e-9 || math.Abs(ci[1]-(2+h)) > 1e-9 {
		t.Errorf("CI95(1,2,3) = %v, want [%v, %v]", ci, 2-h, 2+h)
	}
	if ci := study.CI95([]float64{5}); ci != [2]float64{5, 5} {
		t.Errorf("CI95 of one value = %v", ci)
	}
	if ci := study.CI95([]float64{4, 4, 4, 4}); ci != [2]float64{4, 4} {
		t.Errorf("CI95 of constant values = %v", ci)
	}
}

func scenario(t testing.TB) (*simnet.Config, []simnet.Policy) {
	t.Helper()
	mean := 2.0
	exp, err := dist.Spec{Family: "exponential", MeanMs: &mean}.Build()
	if err != nil {
		t.Fatal(err)
	}
	cfg := &simnet.Config{
		Seed: 9, Duration: 5 * time.Second, ClientRegion: "c",
		Endpoints: []simnet.Endpoint{{Region: "A", Replica: "a"}, {Region: "B", Replica: "b"}},
		Replicas:  []simnet.Replica{{Name: "a", Region: "pa", Default: exp}, {Name: "b", Region: "pb", Default: exp}},
		Workload:  simnet.Workload{RatePerSec: 500},
	}
	th := hedging.MustThreshold(3 * time.Millisecond)
	return cfg, []simnet.Policy{
		{Name: "off", New: func() (hedging.AvailabilityStrategy, error) { return hedging.Disabled, nil }},
		{Name: "3ms", New: func() (hedging.AvailabilityStrategy, error) {
			return hedging.Hedging(hedging.NewHedgingStrategy(th)), nil
		}},
	}
}

// SimulateAll runs several inputs on one pool and gives each exactly what
// Simulate gives it alone; errors name the failing input.
func TestSimulateAllMatchesSimulate(t *testing.T) {
	cfg, pols := scenario(t)
	other := *cfg
	other.Seed++
	inputs := []study.Input{
		{Config: cfg, Policies: pols, Replications: 2},
		{Config: &other, Policies: pols[1:], Replications: 3},
	}
	all, err := study.SimulateAll(inputs, study.Options{Parallel: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range inputs {
		one, err := study.Simulate(in.Config, in.Policies, in.Replications, study.Options{Parallel: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(all[i].Policies) != len(one.Policies) || all[i].Replications != one.Replications {
			t.Fatalf("input %d: %d policies, %d replications; alone %d, %d", i, len(all[i].Policies), all[i].Replications, len(one.Policies), one.Replications)
		}
		for p := range one.Policies {
			a, b := all[i].Policies[p], one.Policies[p]
			if a.Name != b.Name || !a.Merged.Latency.Equals(b.Merged.Latency) || a.Merged.Ops != b.Merged.Ops || a.Merged.RUCharged != b.Merged.RUCharged {
				t.Errorf("input %d policy %s differs from running it alone", i, b.Name)
			}
		}
	}
	if all[0].Policies[1].Merged.Latency.Equals(all[1].Policies[0].Merged.Latency) {
		t.Error("different seeds gave identical histograms")
	}
	inputs[1].Label, inputs[1].Replications = "point 2", 0
	if _, err := study.SimulateAll(inputs, study.Options{}); err == nil || !strings.HasPrefix(err.Error(), "point 2: replications") {
		t.Errorf("error %v, want it to name point 2", err)
	}
}

// The merged result does not depend on the number of workers, and the
// figures follow from the merged histograms.
func TestSimulateDeterministicAcrossWorkers(t *testing.T) {
	cfg, pols := scenario(t)
	a, err := study.Simulate(cfg, pols, 4, study.Options{Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := study.Simulate(cfg, pols, 4, study.Options{Parallel: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Policies {
		fa, fb := study.Figures(a.Policies[i]), study.Figures(b.Policies[i])
		if fa.P99 != fb.P99 || fa.Ops != fb.Ops || fa.CI95["p99_ms"] != fb.CI95["p99_ms"] || fa.RUMultiplier != fb.RUMultiplier {
			t.Errorf("policy %s differs between 1 and 3 workers: %+v vs %+v", fa.Policy, fa, fb)
		}
		if len(a.Policies[i].PerRep) != 4 || fa.CI95 == nil {
			t.Errorf("want 4 replications with CIs")
		}
		ci := fa.CI95["p99_ms"]
		if !(ci[0] <= fa.P99 && fa.P99 <= ci[1]) {
			t.Errorf("p99 %v outside its CI %v", fa.P99, ci)
		}
		if ci := fa.CI95["ru_multiplier"]; !(ci[0] <= fa.RUMultiplier && fa.RUMultiplier <= ci[1]) {
			t.Errorf("RU multiplier %v outside its CI %v", fa.RUMultiplier, ci)
		}
	}
	off, on := study.Figures(a.Policies[0]), study.Figures(a.Policies[1])
	if off.HedgeRate != 0 || on.HedgeRate <= 0 || on.P99 >= off.P99 {
		t.Errorf("hedging at 3 ms should hedge and cut p99: off %+v on %+v", off, on)
	}
	if off.TerminalStates["none"] != off.Ops {
		t.Errorf("disabled policy terminal states %v", off.TerminalStates)
	}
}

func TestPolicyCCDFAndTimeline(t *testing.T) {
	cfg, pols := scenario(t)
	res, err := study.Simulate(cfg, pols, 1, study.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := study.Policy(res.Policies[1])
	if len(p.CCDF) < 20 || p.CCDF[0].Y != 1 {
		t.Fatalf("CCDF has %d points, first %+v", len(p.CCDF), p.CCDF)
	}
	for i := 1; i < len(p.CCDF); i++ {
		if p.CCDF[i].Y >= p.CCDF[i-1].Y || p.CCDF[i].X < p.CCDF[i-1].X {
			t.Fatalf("CCDF not monotone at %d: %+v %+v", i, p.CCDF[i-1], p.CCDF[i])
		}
	}
	if last := p.CCDF[len(p.CCDF)-1].Y; last*float64(p.Ops) < 1 {
		t.Errorf("CCDF goes below 1/ops: %v", last)
	}
	if len(p.Timeline) == 0 || p.Timeline[0].MeanThresholdMs != 3 {
		t.Errorf("timeline %+v", p.Timeline)
	}
	if _, err := study.Simulate(cfg, nil, 1, study.Options{}); err == nil {
		t.Error("no policies: want an error")
	}
	if _, err := study.Simulate(cfg, pols, 0, study.Options{}); err == nil {
		t.Error("0 replications: want an error")
	}
}

// liveHeapAfter returns the live heap (bytes, after a GC) while the result
// of Simulate with reps replications is still referenced.
func liveHeapAfter(t testing.TB, cfg *simnet.Config, pols []simnet.Policy, reps int) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := study.Simulate(cfg, pols, reps, study.Options{Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(res)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

// Replications are merged as they finish: what a result holds does not
// grow with the number of replications (issue 12: ~1.1 MB per policy ×
// replication before, as every replication's Stats was kept).
func TestSimulateMemoryFlatInReplications(t *testing.T) {
	cfg, pols := scenario(t)
	cfg.Duration = time.Second
	few := liveHeapAfter(t, cfg, pols, 2)
	many := liveHeapAfter(t, cfg, pols, 42)
	perRep := (float64(many) - float64(few)) / 40 / float64(len(pols))
	t.Logf("retained: %d B with 2 replications, %d B with 42: %.0f B per policy × replication", few, many, perRep)
	if perRep > 4096 {
		t.Errorf("result retains %.0f B per policy × replication; want only the per-replication figures (< 4 KiB)", perRep)
	}
}

// BenchmarkReplicationMemory reports the bytes a result retains per
// policy × replication (retained-B/rep) and the allocations per
// replication.
func BenchmarkReplicationMemory(b *testing.B) {
	cfg, pols := scenario(b)
	cfg.Duration = time.Second
	const reps = 20
	var perRep float64
	for b.Loop() {
		few := liveHeapAfter(b, cfg, pols, 1)
		many := liveHeapAfter(b, cfg, pols, reps+1)
		perRep = (float64(many) - float64(few)) / reps / float64(len(pols))
	}
	b.ReportMetric(perRep, "retained-B/rep")
}

// max_ms is the true maximum over all replications (the merged
// histogram's), not the mean of the per-replication maxima; it has no
// confidence interval.
func TestMaxIsTrueMaximum(t *testing.T) {
	cfg, pols := scenario(t)
	res, err := study.Simulate(cfg, pols, 5, study.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Policies {
		f := study.Figures(p)
		want := float64(p.Merged.Latency.Max()) / 1000
		if f.Max != want {
			t.Errorf("%s: max_ms = %v, want the largest latency of any replication %v", p.Name, f.Max, want)
		}
		if _, ok := f.CI95["max_ms"]; ok {
			t.Errorf("%s: max_ms has a CI95; a maximum is not a mean", p.Name)
		}
	}
}

// A cancelled context stops Simulate with the context's error and no result.
func TestSimulateCancelled(t *testing.T) {
	cfg, pols := scenario(t)
	cfg.Duration = time.Hour // long: only cancellation ends it early
	ctx, cancel := context.WithCancel(context.Background())
	var progress atomic.Int64
	go func() {
		for progress.Load() < 1000 {
			runtime.Gosched()
		}
		cancel()
	}()
	res, err := study.Simulate(cfg, pols, 3, study.Options{Context: ctx, Progress: &progress})
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("Simulate after cancel = %v, %v; want nil, context.Canceled", res, err)
	}
	if n := progress.Load(); n > 500*3600*2*3/2 {
		t.Errorf("%d operations finished; cancellation should stop well before the end", n)
	}
}

// Issue (fixA item 2): the CCDF and quantile table stopped short of the
// maximum (disabled in default: CCDF ended at 2830 ms, max_ms 3188.7),
// because the tail grid stops at the largest grid probability ≥ 1/ops.
// Both now end at max_ms, the merged histogram's maximum, with several
// replications as with one.
func TestCCDFAndQuantilesEndAtMax(t *testing.T) {
	cfg, pols := scenario(t)
	for _, reps := range []int{1, 3} {
		res, err := study.Simulate(cfg, pols, reps, study.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range res.Policies {
			p := study.Policy(pr)
			last := p.CCDF[len(p.CCDF)-1]
			if last.X != p.Max {
				t.Errorf("reps %d %s: CCDF ends at %v ms, max_ms %v", reps, p.Policy, last.X, p.Max)
			}
			if want := 1 / float64(p.Ops); math.Abs(last.Y-want) > 1e-15 {
				t.Errorf("reps %d %s: CCDF's last probability %v, want 1/ops = %v", reps, p.Policy, last.Y, want)
			}
			for i := 1; i < len(p.CCDF); i++ {
				if p.CCDF[i].Y >= p.CCDF[i-1].Y || p.CCDF[i].X < p.CCDF[i-1].X {
					t.Fatalf("reps %d %s: CCDF not monotone at %d: %+v %+v", reps, p.Policy, i, p.CCDF[i-1], p.CCDF[i])
				}
			}
			q := p.Quantiles[len(p.Quantiles)-1]
			if q.Q != 1 || q.Ms != p.Max {
				t.Errorf("reps %d %s: quantile table ends at q=%v %v ms, want q=1 at max_ms %v", reps, p.Policy, q.Q, q.Ms, p.Max)
			}
			// The maximum over replications survives merging.
			var repMax float64
			for _, v := range pr.PerRep {
				repMax = max(repMax, v[5])
			}
			if p.Max != repMax {
				t.Errorf("reps %d %s: max_ms %v, largest replication maximum %v", reps, p.Policy, p.Max, repMax)
			}
		}
	}
}
