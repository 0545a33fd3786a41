package simnet

import (
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
