package simnet

import (
	"hedgelab/hedging"

	"testing"
	"time"
)

// Steps and ramps of the arrival rate: RateAt is the rate in force, and
// overlapping or negative changes are refused with their index.
func TestRateAt(t *testing.T) {
	w := Workload{RatePerSec: 100, RateChanges: []RateChange{
		{At: 5 * time.Second, RatePerSec: 1000},
		{At: 7 * time.Second, Ramp: 2 * time.Second, RatePerSec: 0},
	}}
	for _, c := range []struct {
		at   time.Duration
		want float64
	}{{0, 100}, {4999 * time.Millisecond, 100}, {5 * time.Second, 1000}, {7 * time.Second, 1000},
		{8 * time.Second, 500}, {9 * time.Second, 0}, {time.Hour, 0}} {
		if got := w.RateAt(c.at); got != c.want {
			t.Errorf("RateAt(%v) = %v, want %v", c.at, got, c.want)
		}
	}
	if err := w.validateRateChanges(); err != nil {
		t.Fatal(err)
	}
	w.RateChanges[1].At = 4 * time.Second
	if err := w.validateRateChanges(); err == nil || err.Error() != "simnet: Workload.RateChanges[1]: starts at 4s, before the previous change ends (5s)" {
		t.Errorf("overlap: %v", err)
	}
}

// FirstArrival draws arrivals as Run does, rate changes included: a
// workload at 0.01 reads/s that steps to 200 reads/s at 5 ms has its
// first operation well inside a 1 s run, although the starting rate alone
// would put it past the end (FirstArrival drew at RatePerSec before, and
// so refused such a scenario). Over 20 replications FirstArrival and Run
// agree on whether, and when, the first operation arrives.
func TestFirstArrivalFollowsRateChanges(t *testing.T) {
	cfg := mixedConfig(t)
	cfg.Duration = time.Second
	cfg.Episodes, cfg.Faults = nil, nil
	cfg.Workload = Workload{RatePerSec: 0.01, RateChanges: []RateChange{{At: 5 * time.Millisecond, RatePerSec: 200}}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	pol := Policy{Name: "disabled", New: func() (hedging.AvailabilityStrategy, error) { return hedging.Disabled, nil }}
	for r := range 20 {
		first, ok := cfg.FirstArrival(r)
		if !ok {
			t.Fatalf("replication %d: FirstArrival says none arrives (first at %v)", r, first)
		}
		// Cut the run at the first arrival and just after it: Run sees
		// none, then one, exactly when FirstArrival says it arrives.
		ops := func(d time.Duration) int64 {
			c := *cfg
			c.Duration = d
			st, err := Run(&c, pol, r, RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return st.Ops
		}
		if before, after := ops(first), ops(first+time.Microsecond); before != 0 || after == 0 {
			t.Errorf("replication %d: FirstArrival %v, but Run has %d ops cut there and %d cut 1 µs later", r, first, before, after)
		}
	}
}
