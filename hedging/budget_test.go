package hedging_test

import (
	"fmt"
	"testing"
	"time"

	"hedgelab/hedging"
)

func TestNewBudgetedPolicyErrors(t *testing.T) {
	inner := hedging.StaticPolicy{T: hedging.MustThreshold(100 * time.Millisecond)}
	for _, c := range []struct {
		inner        hedging.ThresholdPolicy
		ratio, burst float64
		want         string
	}{
		{nil, 0.1, 10, "budget: inner policy is nil"},
		{inner, 0, 10, "budget: ratio must be in (0,1], got 0"},
		{inner, 1.5, 10, "budget: ratio must be in (0,1], got 1.5"},
		{inner, 0.1, 0, "budget: burst must be > 0, got 0"},
	} {
		if _, err := hedging.NewBudgetedPolicy(c.inner, c.ratio, c.burst); err == nil || err.Error() != c.want {
			t.Errorf("NewBudgetedPolicy(%v, %v) = %v, want %q", c.ratio, c.burst, err, c.want)
		}
	}
}

// With a primary that is always slower than the threshold, an unbudgeted
// policy hedges every operation; a budget of 10% hedges ~10% of them (plus
// the initial burst): the gate refuses the rest when their threshold fires,
// and their primaries answer alone.
func TestBudgetedPolicyCapsHedgeRate(t *testing.T) {
	for _, c := range []struct {
		ratio  float64
		lo, hi float64
		budget bool
	}{
		{0, 0.999, 1.0, false},
		{0.1, 0.09, 0.12, true},
		{0.5, 0.48, 0.52, true},
	} {
		var policy hedging.ThresholdPolicy = hedging.StaticPolicy{T: hedging.MustThreshold(50 * time.Millisecond)}
		var bp *hedging.BudgetedPolicy
		if c.budget {
			var err error
			bp, err = hedging.NewBudgetedPolicy(policy, c.ratio, 20)
			if err != nil {
				t.Fatal(err)
			}
			policy = bp
		}
		client, err := hedging.NewClient(hedging.Config{
			Regions:                      []hedging.Endpoint{{Region: "A", Key: "a"}, {Region: "B", Key: "b"}},
			Strategy:                     hedging.Hedging(hedging.NewPolicyStrategy(policy)),
			ConsecutiveHedgeWinThreshold: 1 << 30,
		})
		if err != nil {
			t.Fatal(err)
		}
		const n = 5000
		hedged := 0
		now := time.Duration(0)
		for i := 0; i < n; i++ {
			now += 10 * time.Millisecond
			var r hedging.Race
			op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
			e := client.Begin(&r, now, &op)
			var primary hedging.Attempt
			var timerAt time.Duration
			for j := 0; j < e.Len(); j++ {
				if a := e.At(j); a.Kind == hedging.ActSend {
					primary = a.Attempt
				} else if a.Kind == hedging.ActTimer && a.Timer == hedging.TimerThreshold {
					timerAt = a.At
				}
			}
			// The primary answers after 200 ms, after the 50 ms threshold;
			// the alternate, when the budget admits it, after 5 ms.
			e = r.TimerFired(timerAt, hedging.TimerThreshold)
			if e.Len() > 0 && e.At(0).Kind == hedging.ActSend {
				alt := e.At(0).Attempt
				r.Responded(timerAt+5*time.Millisecond, alt, hedging.Result{Status: hedging.Status{Code: 200}})
				hedged++
			} else {
				r.Responded(now+200*time.Millisecond, primary, hedging.Result{Status: hedging.Status{Code: 200}})
			}
			if !r.Done() {
				t.Fatal("race not done")
			}
		}
		rate := float64(hedged) / n
		if rate < c.lo || rate > c.hi {
			t.Errorf("ratio %v: hedge rate %.3f, want [%v, %v]", c.ratio, rate, c.lo, c.hi)
		}
		if bp != nil && bp.Denied() == 0 {
			t.Errorf("ratio %v: no operation was denied", c.ratio)
		}
		if bp != nil && bp.Name() != fmt.Sprintf("static(50ms)+budget(%g)", c.ratio) {
			t.Errorf("Name = %q", bp.Name())
		}
	}
}
