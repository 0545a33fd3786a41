package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"hedgelab/internal/study"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// recovered: the baseline is the largest window before the slow-down; the
// answer is the end of the first window from which every later one is in
// the band, counted from the slow-down's end; NaN when the last window is
// still out of it.
func TestRecovered(t *testing.T) {
	w := 5 * time.Second
	band := func(b float64) float64 { return 1.1 * b }
	for _, c := range []struct {
		name string
		vals []float64
		want float64
	}{
		{"first window after the end", []float64{10, 11, 200, 200, 11, 10, 10}, 5},
		{"two windows late", []float64{10, 11, 200, 200, 50, 13, 12, 10}, 15},
		{"dips back then out again", []float64{10, 11, 200, 200, 11, 50, 10, 10}, 15},
		{"never", []float64{10, 11, 200, 200, 50, 50, 50}, math.NaN()},
		{"baseline window at the band edge", []float64{10, 11, 200, 200, 12.1, 12.1}, 5},
	} {
		got := recovered(c.vals, w, 10*time.Second, 20*time.Second, band)
		if !(got == c.want || math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("%s: recovered = %v, want %v", c.name, got, c.want)
		}
	}
}

// polStaticBudget builds what the scenario file's hedge_budget keys build,
// under the scenario's names: same hedges and latencies on a short run.
func TestStormBudgetMatchesScenario(t *testing.T) {
	s, err := scenarios.Get(stormScenario)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		path  string
		value float64
	}{{"duration_s", 20}, {"episodes.0.start_s", 5}, {"episodes.0.end_s", 15}} {
		if s, err = s.WithParam(p.path, p.value); err != nil {
			t.Fatal(err)
		}
	}
	cfg, _, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ratio, burst float64
		name         string
	}{{0.05, 100, "budget-5pct"}, {0.05, 1, "budget-5pct-burst1"}} {
		mine := polStaticBudget(c.ratio, c.burst, cfg.Client.RequestTimeout)
		if mine.Name != c.name {
			t.Errorf("polStaticBudget(%g, %g) is named %q, want %q", c.ratio, c.burst, mine.Name, c.name)
		}
		theirs, err := own(stormScenario, c.name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := study.Simulate(cfg, append(theirs, mine), 1, study.Options{})
		if err != nil {
			t.Fatal(err)
		}
		a, b := res.Policies[0].Merged, res.Policies[1].Merged
		if a.Hedged == 0 || a.Hedged != b.Hedged || a.Latency.Max() != b.Latency.Max() || a.QuantileMs(0.99) != b.QuantileMs(0.99) {
			t.Errorf("%s: scenario hedged %d (p99 %.1f), polStaticBudget %d (p99 %.1f): want the same, > 0", c.name, a.Hedged, a.QuantileMs(0.99), b.Hedged, b.QuantileMs(0.99))
		}
	}
}

// oneTokenLines says whether the ratio bound separated the one-token
// budgets that stayed under stormTarget from those that did not.
func TestOneTokenLinesBound(t *testing.T) {
	// capacity 2000, rate 2000, rho 0.82: bound (0.90-0.82) = 8%.
	st := stormSetup{Capacity: 2000, Rate: 2000}
	figs := func(peaks ...float64) map[string]stormFig {
		m := map[string]stormFig{"disabled": {BgP99: 13}}
		for i, r := range stormOneTokenRatios {
			m[fmt.Sprintf("budget-%.0fpct-burst1", 100*r)] = stormFig{UtilMax: peaks[i], BgP99: 14}
		}
		return m
	}
	got := oneTokenLines(st, 0.82, figs(0.86, 0.89, 0.91, 0.95))
	if !strings.Contains(got, "bound 8.0%") || !strings.Contains(got, "those at or under the bound stayed under 90%, those over it did not") {
		t.Errorf("separated: %q", got)
	}
	got = oneTokenLines(st, 0.82, figs(0.86, 0.89, 0.89, 0.95))
	if !strings.Contains(got, "the bound did not separate") {
		t.Errorf("10%% under 90%% though over the bound: %q", got)
	}
}

// overTarget flags only when every utilisation is above stormTarget.
func TestOverTarget(t *testing.T) {
	if got := overTarget(0.93, 0.905); got != ", over the 90% the ratio aims for but" {
		t.Errorf("both over: %q", got)
	}
	if got := overTarget(0.93, 0.89); got != "," {
		t.Errorf("one under: %q", got)
	}
}

// Each parameter path the notebook varies changes the configuration it
// names: a misspelt path (a capitalised key) would run the unchanged
// scenario and the tables would compare a run with itself.
func TestStormParamsApply(t *testing.T) {
	_, base, err := loadEdited(stormScenario, nil)
	if err != nil {
		t.Fatal(err)
	}
	alt := slices.IndexFunc(base.Replicas, func(r simnet.Replica) bool { return r.Name == stormAlternate })
	for _, c := range []struct {
		path    string
		value   float64
		changed func(cfg *simnet.Config) bool
	}{
		{stormParamBackground, 1234, func(cfg *simnet.Config) bool { return cfg.Background[0].RatePerSec == 1234 }},
		{stormParamQueueLimit, stormNoLimit, func(cfg *simnet.Config) bool { return cfg.Replicas[alt].QueueLimit == stormNoLimit }},
		{stormParamBreaker, 7, func(cfg *simnet.Config) bool { return cfg.Client.ConsecutiveHedgeWinThreshold == 7 }},
		{stormParamInstances, stormBigFleet, func(cfg *simnet.Config) bool { return cfg.Fleet.Instances == stormBigFleet }},
		{stormParamRetries, stormRetries, func(cfg *simnet.Config) bool { return cfg.Background[0].Retries == stormRetries }},
	} {
		_, cfg, err := loadEdited(stormScenario, nil, param{c.path, c.value})
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if !c.changed(cfg) {
			t.Errorf("%s = %g left the configuration unchanged", c.path, c.value)
		}
	}
}
