package study_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/internal/report"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"
)

// A read that returns an error is a failed read, a final 429/3200 as much
// as a transient error. The issue: ru-budget-3200 reported error_rate 0
// with 144069 final 429s in 720917 reads (20%).
func TestFinalErrorResponsesAreFailures(t *testing.T) {
	sc, err := scenarios.Get("ru-budget-3200")
	if err != nil {
		t.Fatal(err)
	}
	cfg, pols, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	c := *cfg
	c.Duration = 60 * time.Second
	res, err := study.Simulate(&c, pols[:1], 1, study.Options{Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Policies[0].Merged
	f := study.Figures(res.Policies[0])
	throttled := f.Counters["final_error_responses@429/3200"]
	if throttled == 0 || throttled != m.FinalErrorResponses {
		t.Fatalf("final 429/3200 responses %d of %d final error responses: the scenario should throttle", throttled, m.FinalErrorResponses)
	}
	want := float64(m.Errors+throttled) / float64(m.Ops)
	if f.ErrorRate != want || f.ErrorRate < 0.15 || f.ErrorRate > 0.25 {
		t.Errorf("error_rate %v, want (errors %d + final 429/3200 %d) / ops %d = %v (~0.2)", f.ErrorRate, m.Errors, throttled, m.Ops, want)
	}
	if f.Counters["errors"] != m.Errors {
		t.Errorf("counters.errors %d, want %d", f.Counters["errors"], m.Errors)
	}
	r := study.Policy(res.Policies[0])
	var failed, ops int64
	for _, w := range r.Timeline {
		failed += int64(math.Round(w.ErrorRate * float64(w.Ops)))
		ops += w.Ops
	}
	if failed != m.Failed() || ops != m.Ops {
		t.Errorf("timeline: %d failed of %d ops, want %d of %d", failed, ops, m.Failed(), m.Ops)
	}
}

// Replications in which no operation arrived are left out of the means,
// not averaged in as zeros. The issue: at 0.01 reads/s `disabled` showed
// RU × 0.800 over 5 replications (4 with an operation, each RU × 1, and
// one empty).
func TestEmptyReplicationsAreLeftOut(t *testing.T) {
	s := runLengthScenario(t, "duration_s = 100\nreplications = 5\n", 0.01)
	cfg, pols, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	const reps = 5
	empty := 0
	for r := range reps {
		st, err := simnet.Run(cfg, pols[0], r, simnet.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Ops == 0 {
			empty++
		}
	}
	if empty == 0 || empty == reps {
		t.Fatalf("%d of %d replications empty: the case needs some, not all", empty, reps)
	}
	res, err := study.Simulate(cfg, pols, reps, study.Options{Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	var figs []report.Figures
	for _, p := range res.Policies {
		f := study.Figures(p)
		figs = append(figs, f)
		if p.EmptyReplications != empty || f.EmptyReplications != empty || len(p.PerRep) != reps-empty {
			t.Errorf("%s: %d empty replications, %d with figures; want %d and %d", p.Name, f.EmptyReplications, len(p.PerRep), empty, reps-empty)
		}
		if p.Name == "disabled" && f.RUMultiplier != 1 {
			t.Errorf("disabled: RU × %v, want 1 (every replication with an operation has RU × 1)", f.RUMultiplier)
		}
		if f.P50 <= 0 || f.Mean <= 0 {
			t.Errorf("%s: p50 %v, mean %v ms: an empty replication was averaged in", p.Name, f.P50, f.Mean)
		}
	}
	legend := report.TableLegend(figs, reps, "summary.json")
	if want := "had no operation and are left out of the means"; !strings.Contains(legend, want) {
		t.Errorf("legend %q does not say %q", legend, want)
	}
}

// The mean is exact and sub-millisecond latencies keep their digits: a
// constant 4.4 µs service at zero RTT has mean 0.0044 ms (the issue saw
// 0.005), p50 0.004 ms (µs resolution).
func TestSubMillisecondFigures(t *testing.T) {
	ms := 0.0044
	svc, err := dist.Spec{Family: "constant", ValueMs: &ms}.Build()
	if err != nil {
		t.Fatal(err)
	}
	cfg := &simnet.Config{
		Seed: 1, MaxOps: 100, ClientRegion: "c",
		Endpoints: []simnet.Endpoint{{Region: "A", Replica: "a"}},
		Replicas:  []simnet.Replica{{Name: "a", Region: "c", Default: svc}},
		Workload:  simnet.Workload{RatePerSec: 10},
	}
	pol := simnet.Policy{Name: "disabled", New: func() (hedging.AvailabilityStrategy, error) { return hedging.Disabled, nil }}
	res, err := study.Simulate(cfg, []simnet.Policy{pol}, 1, study.Options{Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	f := study.Figures(res.Policies[0])
	if math.Abs(f.Mean-0.0044) > 1e-12 || f.P50 != 0.004 {
		t.Errorf("mean %v ms, p50 %v ms; want 0.0044 and 0.004", f.Mean, f.P50)
	}
}
