package scenarios_test

import (
	"math"
	"testing"

	"hedgelab/scenarios"
)

// [[workload.rate_changes]]: a step and a ramp of the client's rate show in
// the timeline's operation counts (within 5 standard deviations of the
// Poisson count), and the run stays deterministic.
func TestRateChanges(t *testing.T) {
	src := `name = "rate-changes"
seed = 3
duration_s = 40
timeline_window_s = 5
[client]
region = "A"
[[endpoints]]
region = "A"
replica = "a"
[[replicas]]
name = "a"
region = "A"
service = { family = "constant", value_ms = 1.0 }
[workload]
rate_per_s = 100
[[workload.rate_changes]]
at_s = 10
rate_per_s = 1000
[[workload.rate_changes]]
at_s = 20
ramp_s = 10
rate_per_s = 0
[[policies]]
name = "disabled"
type = "disabled"
`
	s, err := scenarios.Parse("rate-changes.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	cfg, pols, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	st := simB(t, cfg, pols, 1)["disabled"]
	// Expected operations per 5 s window: 100/s, 1000/s, a ramp 1000 -> 0
	// over [20, 30) s, then none.
	want := []float64{500, 500, 5000, 5000, 3750, 1250, 0, 0}
	for i, w := range st.Timeline {
		if d := math.Abs(float64(w.Ops) - want[i]); d > 5*math.Sqrt(max(want[i], 1)) {
			t.Errorf("window %d: %d operations, want about %.0f", i, w.Ops, want[i])
		}
	}
	again := simB(t, cfg, pols, 1)["disabled"]
	if again.Ops != st.Ops {
		t.Errorf("not deterministic: %d then %d operations", st.Ops, again.Ops)
	}
}
