package scenarios_test

// Behaviour tests of the fleet and capacity scenarios (issue 10): each is
// simulated shortened and checked against what its header says it shows.

import (
	"slices"
	"testing"
	"time"

	"hedgelab/internal/longtest"
	"hedgelab/simnet"
)

// stormRun simulates hedging-storm shortened to 150 s with the slow-down
// from 30 s to 120 s (5 s windows), with extra parameters, under the
// policies named, for one replication.
func stormRun(t *testing.T, names []string, params ...any) map[string]*simnet.Stats {
	t.Helper()
	params = append([]any{"duration_s", 150, "episodes.0.start_s", 30, "episodes.0.end_s", 120}, params...)
	_, cfg, pols := libB(t, "hedging-storm", params...)
	return simB(t, cfg, libBPick(t, pols, names...), 1)
}

// stormAlt returns the alternate's (eastus2) capacity figures of s: its
// utilisation per 5 s window, its tenants' p99 (ms) and its refusals.
func stormAlt(t *testing.T, s *simnet.Stats) (windows []float64, bgP99 float64, refusedClient, refusedBackground int64) {
	t.Helper()
	c := s.Capacity
	if c == nil {
		t.Fatal("no capacity figures")
	}
	i := slices.IndexFunc(c.Replicas, func(r simnet.ReplicaStats) bool { return r.Name == "eastus2" })
	if i < 0 {
		t.Fatal("no replica eastus2")
	}
	r := c.Replicas[i]
	return c.WindowUtilisation(i, s.WindowWidth), c.BackgroundQuantileMs(i, 0.99), r.RefusedClient, r.RefusedBackground
}

// windowsIn returns the values of the 5 s windows starting in [fromS, toS).
func windowsIn(vals []float64, w time.Duration, fromS, toS float64) []float64 {
	var out []float64
	for i, v := range vals {
		if s := (time.Duration(i) * w).Seconds(); s >= fromS && s < toS {
			out = append(out, v)
		}
	}
	return out
}

// TestLongLibStormHedgingStorm: with its tenants at 85%, the alternate
// saturates under static-50ms for the whole slow-down (tenants' p99 ×5 and
// more, refusals); a 5% budget with the default per-instance burst of 100
// saturates it while the fleet's 10000 tokens last, then holds it under
// 92%; the same budget with a burst of 1 never saturates it and leaves its
// tenants' p99 within 10% of no hedging's. Everything is back to baseline
// in the first window after the slow-down.
func TestLongLibStormHedgingStorm(t *testing.T) {
	longtest.Skip(t)
	m := stormRun(t, []string{"disabled", "static-50ms", "budget-5pct", "budget-5pct-burst1"})
	w := m["disabled"].WindowWidth
	dis, disBG, rc, rb := stormAlt(t, m["disabled"])
	if rc != 0 || rb != 0 {
		t.Errorf("disabled: refusals %d/%d, want none", rc, rb)
	}
	within(t, "disabled: alternate utilisation in every window", slices.Max(dis), 0.8, 0.88)
	within(t, "disabled: tenants' p99 ms", disBG, 10, 20)
	baseMax := slices.Max(windowsIn(dis, w, 0, 30))

	st, stBG, rc, rb := stormAlt(t, m["static-50ms"])
	within(t, "static-50ms: lowest utilisation of a slow-down window", slices.Min(windowsIn(st, w, 35, 120)), 0.99, 1.001)
	if stBG < 5*disBG {
		t.Errorf("static-50ms: tenants' p99 %.1f ms, want >= 5 × disabled's %.1f ms", stBG, disBG)
	}
	if rb < 1000 || rc < 100 {
		t.Errorf("static-50ms: refused %d client / %d tenants' requests, want >= 100 / 1000", rc, rb)
	}
	// The storm still cuts the client's p99 (its hedges wait in a full
	// queue, but beat +200 ms).
	within(t, "static-50ms p99 / disabled p99", m["static-50ms"].QuantileMs(0.99)/m["disabled"].QuantileMs(0.99), 0.7, 0.95)
	// Back to baseline in the first window after the slow-down.
	within(t, "static-50ms: largest utilisation after the slow-down", slices.Max(windowsIn(st, w, 120, 150)), 0, baseMax+0.02)
	for i := 24; i < 30; i++ { // the windows from 120 s
		within(t, sprintf("static-50ms: windowed p99 at %d s (ms)", 5*i), libBWindowP99(m["static-50ms"], i), 0, 1.1*libBWindowP99(m["disabled"], 0))
	}

	b, bBG, rc, rb := stormAlt(t, m["budget-5pct"])
	within(t, "budget-5pct: utilisation of the slow-down's first window (the burst)", b[6], 0.99, 1.001)
	within(t, "budget-5pct: largest utilisation from 40 s into the slow-down", slices.Max(windowsIn(b, w, 70, 120)), 0.85, 0.92)
	if rc == 0 || rb == 0 || bBG < 5*disBG {
		t.Errorf("budget-5pct: refused %d client / %d tenants' requests, tenants' p99 %.1f ms: want refusals and >= 5 × %.1f ms (the burst's storm)", rc, rb, bBG, disBG)
	}

	b1, b1BG, rc, rb := stormAlt(t, m["budget-5pct-burst1"])
	if rc != 0 || rb != 0 {
		t.Errorf("budget-5pct-burst1: refusals %d/%d, want none", rc, rb)
	}
	within(t, "budget-5pct-burst1: largest window utilisation", slices.Max(b1), 0.85, 0.91)
	within(t, "budget-5pct-burst1: tenants' p99 / disabled's", b1BG/disBG, 1, 1.1)
	// 5% of the slow-down's reads, plus the 100 instances' full buckets of
	// 1 token when it starts (the budget admits and charges at once, so
	// it delivers its whole ratio).
	b1s := m["budget-5pct-burst1"]
	within(t, "budget-5pct-burst1 hedge rate (5% of the slow-down's reads + the fleet's burst at most)", hedgeRate(b1s), 0.005, 0.05*0.6+100/float64(b1s.Ops))
}

// TestLongLibStormFleetBurst: the budget's bucket is per instance. With 1000
// instances a 5% budget's default burst (100 000 tokens for the fleet)
// outlasts a 90 s slow-down: it hedges exactly what static-50ms hedges.
// A burst of 1 still bounds it.
func TestLongLibStormFleetBurst(t *testing.T) {
	longtest.Skip(t)
	m := stormRun(t, []string{"static-50ms", "budget-5pct", "budget-5pct-burst1"}, "fleet.instances", 1000)
	if a, b := m["budget-5pct"].Hedged, m["static-50ms"].Hedged; a != b {
		t.Errorf("1000 instances: budget-5pct hedged %d, static-50ms %d: want the same (the budget never binds)", a, b)
	}
	_, _, _, rb := stormAlt(t, m["budget-5pct"])
	if rb == 0 {
		t.Error("1000 instances: budget-5pct refused no tenants' request, want the storm")
	}
	b1, _, rc, rb := stormAlt(t, m["budget-5pct-burst1"])
	if rc != 0 || rb != 0 {
		t.Errorf("1000 instances: budget-5pct-burst1 refusals %d/%d, want none", rc, rb)
	}
	within(t, "1000 instances: budget-5pct-burst1 largest window utilisation", slices.Max(b1), 0.85, 0.93)
}
