package scenarios_test

// Behaviour tests of the threshold-policy failure-mode scenarios (issue 9):
// each embedded scenario is simulated as shipped and checked against what
// its header says it shows, TPS §4.2 as written (p99-tps) next to the
// fixed default (p99-dynamic).

import (
	"testing"

	"hedgelab/simnet"
)

// libC simulates the embedded scenario name as shipped.
func libC(t *testing.T, name string) map[string]*simnet.Stats {
	t.Helper()
	s, cfg, pols := libB(t, name)
	return simB(t, cfg, pols, s.Replications)
}

// within checks lo <= v <= hi.
func within(t *testing.T, what string, v, lo, hi float64) {
	t.Helper()
	if v < lo || v > hi {
		t.Errorf("%s = %.4g, want in [%g, %g]", what, v, lo, hi)
	}
}

func TestLibCFarPrimary(t *testing.T) {
	m := libC(t, "far-primary")
	within(t, "p99-tps hedge rate (sketch value below most samples)", hedgeRate(m["p99-tps"]), 0.03, 0.08)
	within(t, "p99-dynamic hedge rate (bucket upper edge)", hedgeRate(m["p99-dynamic"]), 0, 0.01)
	within(t, "cassandra-100ms hedge rate (a cap below the RTT)", hedgeRate(m["cassandra-100ms"]), 0.98, 1)
	within(t, "static-50ms hedge rate", hedgeRate(m["static-50ms"]), 0.999, 1)
	within(t, "grpc-throttle-50ms hedge rate (its token ratio)", hedgeRate(m["grpc-throttle-50ms"]), 0.09, 0.12)
	// The alternate is 150 ms away: hedging cannot cut the p99 much.
	within(t, "p99-dynamic p99 / disabled p99", m["p99-dynamic"].QuantileMs(0.99)/m["disabled"].QuantileMs(0.99), 0.99, 1.01)
}

func TestLibCLowRateClient(t *testing.T) {
	m := libC(t, "low-rate-client")
	within(t, "p99-tps-init50 hedge rate (falls back to 50 ms)", hedgeRate(m["p99-tps-init50"]), 0.7, 1)
	within(t, "p99-dynamic-init50 hedge rate (keeps its last estimate)", hedgeRate(m["p99-dynamic-init50"]), 0, 0.03)
	within(t, "p99-dynamic hedge rate", hedgeRate(m["p99-dynamic"]), 0, 0.02)
	within(t, "p99-tps hedge rate", hedgeRate(m["p99-tps"]), 0.02, 0.05)
}

// ratchet checks a slow-third scenario: TPS §4.2 rides the slow reads up
// and ends near disabled's p99; the ceiling keeps them hedged.
func ratchet(t *testing.T, name string) {
	m := libC(t, name)
	dis, st := m["disabled"].QuantileMs(0.99), m["static-50ms"].QuantileMs(0.99)
	within(t, name+": p99-tps p99 / disabled p99", m["p99-tps"].QuantileMs(0.99)/dis, 0.55, 1.01)
	within(t, name+": p99-dynamic p99 / static-50ms p99", m["p99-dynamic"].QuantileMs(0.99)/st, 0.95, 1.15)
	within(t, name+": p99-dynamic hedge rate (the slow third)", hedgeRate(m["p99-dynamic"]), 0.22, 0.3)
	// Cassandra's fixed cap also holds, at its cap: p99 ≈ 100 ms + the alternate.
	within(t, name+": cassandra-100ms p99", m["cassandra-100ms"].QuantileMs(0.99), 120, 160)
	// Budgets cannot hedge a third of the reads: they stay near disabled.
	for _, n := range []string{"finagle-2pct", "grpc-throttle-50ms"} {
		within(t, name+": "+n+" p99 / disabled p99", m[n].QuantileMs(0.99)/dis, 0.95, 1.01)
	}
}

func TestLibCGradualSlowdown(t *testing.T) { ratchet(t, "gradual-slowdown") }

func TestLibCRampAfterWarmup(t *testing.T) { ratchet(t, "ramp-after-warmup") }

func TestLibCPartialSlowdown(t *testing.T) {
	m := libC(t, "partial-slowdown")
	within(t, "p90-tps hedge rate (censored: learns the fast reads' p90)", hedgeRate(m["p90-tps"]), 0.14, 0.22)
	within(t, "p90-dynamic hedge rate (lower bounds: the single-attempt p90)", hedgeRate(m["p90-dynamic"]), 0.085, 0.115)
	// p99: TPS §4.2 observes the slow 8% under its 1 s initial threshold
	// and stops hedging them; the ceiling keeps hedging them.
	within(t, "p99-tps p99 / disabled p99", m["p99-tps"].QuantileMs(0.99)/m["disabled"].QuantileMs(0.99), 0.99, 1.01)
	within(t, "p99-dynamic hedge rate", hedgeRate(m["p99-dynamic"]), 0.07, 0.09)
	within(t, "p99-dynamic p99", m["p99-dynamic"].QuantileMs(0.99), 80, 100)
}

func TestLibCTwoDocumentSizes(t *testing.T) {
	m := libC(t, "two-document-sizes")
	// The price of the median ceiling: a healthy large-document mode is
	// hedged like an incident.
	within(t, "p99-tps hedge rate", hedgeRate(m["p99-tps"]), 0.005, 0.03)
	within(t, "p99-dynamic hedge rate (pinned at the 50 ms clamp)", hedgeRate(m["p99-dynamic"]), 0.13, 0.19)
	within(t, "p99-dynamic-min10 hedge rate", hedgeRate(m["p99-dynamic-min10"]), 0.25, 0.35)
	if a, b := m["p99-dynamic"].QuantileMs(0.99), m["p99-tps"].QuantileMs(0.99); a > 0.9*b {
		t.Errorf("p99-dynamic p99 %.1f ms, want below 0.9 × p99-tps's %.1f ms (what the extra RU buys)", a, b)
	}
}
