package threshold_test

import (
	"fmt"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/threshold"
)

func TestNewBudgetErrors(t *testing.T) {
	for _, c := range []struct {
		ratio, burst float64
		want         string
	}{
		{0, 10, "budget: ratio must be in (0,1], got 0"},
		{1.5, 10, "budget: ratio must be in (0,1], got 1.5"},
		{0.1, 0, "budget: burst must be > 0, got 0"},
	} {
		if _, err := threshold.NewBudget(threshold.BudgetConfig{Ratio: c.ratio, Burst: c.burst}); err == nil || err.Error() != c.want {
			t.Errorf("NewBudget(ratio %v, burst %v) = %v, want %q", c.ratio, c.burst, err, c.want)
		}
	}
}

// With a primary that is always slower than the threshold, an unbudgeted
// policy hedges every operation; a budget of 10% hedges ~10% of them (plus
// the initial burst): the gate refuses the rest when their threshold fires,
// and their primaries answer alone.
func TestBudgetCapsHedgeRate(t *testing.T) {
	for _, c := range []struct {
		ratio  float64
		lo, hi float64
		budget bool
	}{
		{0, 0.999, 1.0, false},
		{0.1, 0.09, 0.12, true},
		{0.5, 0.48, 0.52, true},
	} {
		strategy := hedging.NewPolicyStrategy(threshold.Static{T: hedging.MustThreshold(50 * time.Millisecond)})
		var bp *threshold.Budget
		if c.budget {
			var err error
			bp, err = threshold.NewBudget(threshold.BudgetConfig{Ratio: c.ratio, Burst: 20})
			if err != nil {
				t.Fatal(err)
			}
			strategy.Gate = bp
		}
		client, err := hedging.NewClient(hedging.Config{
			Regions:                      []hedging.Endpoint{{Region: "A", Key: "a"}, {Region: "B", Key: "b"}},
			Strategy:                     hedging.Hedging(strategy),
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
			var e hedging.Effects
			client.Begin(&e, &r, now, &op)
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
			r.TimerFired(&e, timerAt, hedging.TimerThreshold)
			if e.Len() > 0 && e.At(0).Kind == hedging.ActSend {
				alt := e.At(0).Attempt
				r.Responded(&e, timerAt+5*time.Millisecond, &alt, &hedging.Result{Status: hedging.Status{Code: 200}})
				hedged++
			} else {
				r.Responded(&e, now+200*time.Millisecond, &primary, &hedging.Result{Status: hedging.Status{Code: 200}})
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
		if got, want := hedging.Hedging(strategy).String(), "hedging(static(50ms))"; bp != nil {
			if want = fmt.Sprintf("hedging(static(50ms)+budget(%g))", c.ratio); bp.Name() != fmt.Sprintf("budget(%g)", c.ratio) || got != want {
				t.Errorf("Name = %q, strategy %q, want %q", bp.Name(), got, want)
			}
		} else if got != want {
			t.Errorf("strategy %q, want %q", got, want)
		}
	}
}

// A fleet's burst at a slow-down's onset (fleet-10000-burst's kind): 1000
// instances at 0.2 operations/s each, after 100 s of healthy traffic, are
// each asked for one hedge. With a bucket of 1 token each, all 1000 go
// out; with a bucket of 2 s of the instance's own 5% budget, fractional
// tokens admit about Ratio × max(instances, fleet rate × 2 s) = 50.
func TestBudgetBurstSecondsBoundsAFleet(t *testing.T) {
	for _, c := range []struct {
		name   string
		cfg    threshold.BudgetConfig
		lo, hi int
	}{
		{"burst 1 token", threshold.BudgetConfig{Ratio: 0.05, Burst: 1}, 1000, 1000},
		{"burst 2 s", threshold.BudgetConfig{Ratio: 0.05, BurstSeconds: 2}, 30, 70},
	} {
		admitted := 0
		for i := range 1000 {
			b, err := threshold.NewBudget(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			now := time.Duration(i) * time.Millisecond
			for ; now < 100*time.Second; now += 5 * time.Second {
				started(b, now)
			}
			if admit(b, now) {
				admitted++
			}
		}
		if admitted < c.lo || admitted > c.hi {
			t.Errorf("%s: %d of 1000 instances sent a hedge at the onset, want in [%d, %d]", c.name, admitted, c.lo, c.hi)
		}
	}
}

// A low-rate instance delivers its budget (fleet-10000-burst's 0.2
// operations/s, 5%, 2 s): every 5 s an operation, every third or fourth of
// them slow enough to ask for a hedge (30%). Its bucket is 0.05 tokens, so
// before the fix it admitted each request with probability <= 0.05 and
// dropped what it earned while full: 1.2% of operations hedged against 5%
// (the simulator: 1.28% of the slow-down's reads). It now keeps up to one
// token while hedges are denied, and the run stays within Ratio ×
// operations + one token at every prefix.
func TestBudgetLowRateDelivers(t *testing.T) {
	b, err := threshold.NewBudget(threshold.BudgetConfig{Ratio: 0.05, BurstSeconds: 2})
	if err != nil {
		t.Fatal(err)
	}
	const ops = 20000
	admitted := 0
	for i := range ops {
		now := time.Duration(i) * 5 * time.Second
		started(b, now)
		if i*3%10 < 3 && admit(b, now) { // 30% of operations ask
			admitted++
		}
		if lim := 0.05*float64(i+1) + 1; float64(admitted) > lim {
			t.Fatalf("after %d operations %d hedges admitted, bound %.1f", i+1, admitted, lim)
		}
	}
	if got := float64(admitted) / ops; got < 0.045 {
		t.Errorf("%.2f%% of operations hedged, want >= 4.5%% of the 5%% budget", 100*got)
	}
	// Once the demand stops for 1/Ratio operations the bucket is back to
	// its size: 0.05 tokens, not a whole one.
	for i := range 40 {
		started(b, time.Duration(ops+i)*5*time.Second)
	}
	if got := b.Tokens(); got > 0.05+1e-9 {
		t.Errorf("after 40 quiet operations the balance is %.3f tokens, want <= 0.05", got)
	}
}

// Admission and charge at one point: with the threshold timer firing for
// every operation, no run of operations gets more alternates than Ratio ×
// its length + Burst (budget-onset's kind: 601 in 0.5 s against ~227).
func TestBudgetAdmitsWithinRatioPlusBurst(t *testing.T) {
	b, err := threshold.NewBudget(threshold.BudgetConfig{Ratio: 0.05, Burst: 100})
	if err != nil {
		t.Fatal(err)
	}
	admitted := make([]bool, 20000)
	for i := range admitted {
		now := time.Duration(i) * 200 * time.Microsecond
		started(b, now)
		admitted[i] = admit(b, now)
	}
	for _, w := range []int{100, 2500, 20000} {
		for s := 0; s+w <= len(admitted); s += w {
			n := 0
			for _, a := range admitted[s : s+w] {
				if a {
					n++
				}
			}
			if lim := 0.05*float64(w) + 100; float64(n) > lim {
				t.Errorf("operations [%d, %d): %d alternates, bound %.0f", s, s+w, n, lim)
			}
		}
	}
	if got := b.Denied(); got == 0 {
		t.Error("no hedge denied at a 100% demand")
	}
}
