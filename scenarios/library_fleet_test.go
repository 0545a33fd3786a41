package scenarios_test

import (
	"testing"

	"hedgelab/simnet"
)

// fleet-cold-start: 100 instances at 5 reads/s each warm up their own
// thresholds. TPS §4.2 (p99-tps) stays at its 1 s initial threshold for
// ~20 s in the fleet (its slow reads then take ~1 s, so its p99 is ~1 s),
// where the same 500 reads/s from one client leave it within the first
// window; the default p99-dynamic is at its 50 ms floor from the start
// either way.
func TestLibFleetColdStart(t *testing.T) {
	s, cfg, pols := libB(t, "fleet-cold-start", "duration_s", 60) // the warm-up is over by 35 s
	if cfg.Fleet.Instances != 100 {
		t.Fatalf("fleet of %d instances, want 100", cfg.Fleet.Instances)
	}
	picked := libBPick(t, pols, "p99-dynamic", "p99-tps")
	fleet := simB(t, cfg, picked, s.Replications)
	_, cfg1, _ := libB(t, "fleet-cold-start", "duration_s", 60, "fleet.instances", 1)
	one := simB(t, cfg1, picked, s.Replications)
	for i := 0; i < 8; i++ {
		t.Logf("window %d: p99-tps threshold %6.1f ms (one client %6.1f), p99-dynamic %5.1f ms (one client %5.1f)",
			i, libBThreshold(fleet["p99-tps"], i), libBThreshold(one["p99-tps"], i), libBThreshold(fleet["p99-dynamic"], i), libBThreshold(one["p99-dynamic"], i))
	}
	for i := 0; i < 3; i++ { // 0-15 s: no instance has 100 observations yet
		if thr := libBThreshold(fleet["p99-tps"], i); thr < 999 || thr > 1001 {
			t.Errorf("fleet, window %d: p99-tps mean threshold %.1f ms, want its 1000 ms initial value in every instance", i, thr)
		}
	}
	for i := 1; i < len(one["p99-tps"].Timeline); i++ {
		if thr := libBThreshold(one["p99-tps"], i); thr > 60 {
			t.Errorf("one client, window %d: p99-tps mean threshold %.1f ms, want its 50 ms clamp after the first second", i, thr)
		}
	}
	for i := 7; i < len(fleet["p99-tps"].Timeline); i++ { // from 35 s every instance is warm
		if thr := libBThreshold(fleet["p99-tps"], i); thr > 60 {
			t.Errorf("fleet, window %d: p99-tps mean threshold %.1f ms, want the 50 ms clamp once warm", i, thr)
		}
	}
	for _, m := range []map[string]*simnet.Stats{fleet, one} {
		for i := range m["p99-dynamic"].Timeline {
			if thr := libBThreshold(m["p99-dynamic"], i); thr > 60 {
				t.Errorf("window %d: p99-dynamic mean threshold %.1f ms, want its 50 ms floor from the start", i, thr)
			}
		}
		if p := m["p99-dynamic"].QuantileMs(0.99); p > 100 {
			t.Errorf("p99-dynamic p99 %.0f ms, want ~70", p)
		}
	}
	if p := fleet["p99-tps"].QuantileMs(0.99); p < 1000 {
		t.Errorf("fleet: p99-tps p99 %.0f ms, want ~1 s (its warm-up's slow reads)", p)
	}
	if p := one["p99-tps"].QuantileMs(0.99); p > 100 {
		t.Errorf("one client: p99-tps p99 %.0f ms, want ~70 (warm within a second)", p)
	}
}
