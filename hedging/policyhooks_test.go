package hedging_test

// Tests of the race's threshold-policy hooks (spec §17 Q11): a policy
// strategy sets the race's threshold, the race reports superseded
// primaries and spawn causes, and the hedge-win tracker's minimum span. The
// policies themselves are tested in hedging/threshold.

import (
	"slices"
	"sync"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/threshold"
)

// A policy strategy drives the race threshold and learns from its legs.
func TestPolicyStrategyInRace(t *testing.T) {
	t.Run("static policy sets the threshold", func(t *testing.T) {
		st := hedging.Hedging(hedging.NewPolicyStrategy(threshold.Static{T: hedging.MustThreshold(300 * time.Millisecond)}))
		c := htClient(t, hedging.Config{Regions: htRegions("A", "B"), Strategy: st})
		var r hedging.Race
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
		e := htBegin(c, &r, 0, &op)
		if r.Threshold().Get() != 300*time.Millisecond {
			t.Errorf("race threshold = %v, want 300ms", r.Threshold())
		}
		if e.At(1).Kind != hedging.ActTimer || e.At(1).At != 300*time.Millisecond {
			t.Errorf("threshold timer = %+v, want at 300ms", e.At(1))
		}
	})
	t.Run("zero policy threshold falls back", func(t *testing.T) {
		st := hedging.Hedging(hedging.NewPolicyStrategy(threshold.Static{}))
		c := htClient(t, hedging.Config{Regions: htRegions("A", "B"), Strategy: st})
		var r hedging.Race
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
		htBegin(c, &r, 0, &op)
		if r.Threshold().Get() != time.Second {
			t.Errorf("race threshold = %v, want the 1s fallback", r.Threshold())
		}
	})
	t.Run("p99 learns primary latency", func(t *testing.T) {
		p, err := threshold.NewP99Dynamic(threshold.P99DynamicConfig{MinSamples: 20, Refresh: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		c := htClient(t, hedging.Config{Regions: htRegions("A", "B"), Strategy: hedging.Hedging(hedging.NewPolicyStrategy(p)), Retry: hedging.RetryOptions{MaxAttempts: 1}})
		for i := 0; i < 30; i++ {
			htRace(t, c, time.Duration(i+1)*time.Second, "p", htR(120*htMillisecond, 200, 0), htR(time.Second, 200, 0))
		}
		var r hedging.Race
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
		htBegin(c, &r, 40*time.Second, &op)
		if got := r.Threshold().Get(); got < 115*time.Millisecond || got > 125*time.Millisecond {
			t.Errorf("learned threshold = %v, want ≈120ms", got)
		}
	})
}

// recorder is a policy that records what the race tells it: the elapsed
// time of every primary it cancelled and the cause of every alternate.
type recorder struct {
	threshold.Static
	mu         sync.Mutex
	superseded []time.Duration
	causes     []hedging.SpawnCause
}

func (r *recorder) Observe(_ time.Duration, o hedging.Observation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch o.Event {
	case hedging.AlternateSent:
		r.causes = append(r.causes, o.Cause)
	case hedging.OperationEnded:
		if p := o.Legs[hedging.Primary]; p.Outcome == hedging.LegCancelled {
			if p.Region != "A" {
				panic("superseded primary reported for region " + string(p.Region))
			}
			r.superseded = append(r.superseded, p.Elapsed)
		}
	}
}

// The race reports superseded primaries (alternate won, deadline) with their
// elapsed time, never a primary that answered; and the cause of each spawn.
func TestRaceReportsSupersededAndSpawnCause(t *testing.T) {
	rec := &recorder{Static: threshold.Static{T: hedging.MustThreshold(100 * htMillisecond)}}
	c := htClient(t, hedging.Config{Regions: htRegions("A", "B"), Strategy: hedging.Hedging(hedging.NewPolicyStrategy(rec)),
		Retry: hedging.RetryOptions{MaxAttempts: 1}, ConsecutiveHedgeWinThreshold: 1000})
	htRace(t, c, 1*time.Second, "p", htR(time.Second, 200, 0), htR(10*htMillisecond, 200, 0))     // alternate wins at 110 ms
	htRace(t, c, 2*time.Second, "p", htR(10*htMillisecond, 200, 0), htR(time.Second, 200, 0))     // primary pre-threshold
	htRace(t, c, 3*time.Second, "p", htR(150*htMillisecond, 200, 0), htR(time.Second, 200, 0))    // primary after hedge
	htRace(t, c, 4*time.Second, "p", htR(5*htMillisecond, 503, 0), htR(20*htMillisecond, 200, 0)) // failover upgrade at 5 ms
	if !slices.Equal(rec.superseded, []time.Duration{110 * htMillisecond, 5*htMillisecond + 20*htMillisecond}[:1]) {
		t.Errorf("superseded = %v, want [110ms] (only the primary that lost; a 503 primary answered)", rec.superseded)
	}
	want := []hedging.SpawnCause{hedging.SpawnThreshold, hedging.SpawnThreshold, hedging.Spawn503}
	if !slices.Equal(rec.causes, want) {
		t.Errorf("spawn causes = %v, want %v", rec.causes, want)
	}
	// The deadline supersedes a primary that never answered.
	rec.superseded = nil
	var r hedging.Race
	op := hedging.Operation{Kind: hedging.PointRead, Partition: "p", Timeout: 300 * htMillisecond}
	htBegin(c, &r, 10*time.Second, &op)
	htTimerFired(&r, 10*time.Second+100*htMillisecond, hedging.TimerThreshold)
	e := htTimerFired(&r, 10*time.Second+300*htMillisecond, hedging.TimerDeadline)
	for i := 0; i < e.Len(); i++ {
		if a := e.At(i); a.Kind == hedging.ActTimer && a.Timer == hedging.TimerHarvest {
			htTimerFired(&r, a.At, hedging.TimerHarvest)
		}
	}
	if len(rec.superseded) != 1 || rec.superseded[0] < 300*htMillisecond {
		t.Errorf("deadline: superseded = %v, want one elapsed >= 300ms", rec.superseded)
	}
}

// Q7 with a minimum streak span: three alternate wins within a 15 ms
// pause do not trip at N = 3 with a 1 s span; a streak that lasts 1 s does.
func TestHedgeWinMinSpan(t *testing.T) {
	tr := hedging.NewHedgeWinTrackerSpan(3, 30*time.Second, time.Second)
	for i := range 6 {
		if tr.RecordHedgeWin(10*time.Second+time.Duration(i)*3*time.Millisecond, "p0", "A") {
			t.Fatalf("tripped on win %d of a 15 ms pause", i+1)
		}
	}
	tr.RecordPrimaryFinal(11*time.Second, "p0", "A")
	tripped := false
	for i := range 5 {
		if tr.RecordHedgeWin(20*time.Second+time.Duration(i)*400*time.Millisecond, "p0", "A") {
			tripped = true
		}
	}
	if !tripped {
		t.Error("a 1.6 s streak of 5 wins did not trip")
	}
}

// gateLog is a HedgeGate that records each call ("start A", "hedge A",
// "redirect A", "spawn 503") and admits hedges while admit is true.
type gateLog struct {
	mu    sync.Mutex
	admit bool
	calls []string
}

func (g *gateLog) add(s string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, s)
}
func (g *gateLog) Admit(_ time.Duration, a hedging.Admission) bool {
	if a.Redirect {
		g.add("redirect " + string(a.Primary))
	} else {
		g.add("hedge " + string(a.Primary))
	}
	return g.admit
}
func (g *gateLog) Observe(_ time.Duration, o hedging.Observation) {
	switch o.Event {
	case hedging.OperationStarted:
		g.add("start " + string(o.Primary))
	case hedging.AlternateSent:
		g.add("spawn " + o.Cause.String())
	}
}
func (g *gateLog) Name() string { return "log" }

// A strategy's gate sits beside its threshold: the race tells it of each
// hedged operation once, asks it when the threshold fires (a refusal sends
// no alternate and leaves the threshold alone), tells it of each alternate
// sent (failover included, which it cannot refuse), and PlanHedge tells it
// of the operation as Begin does. The policy's threshold is unchanged.
func TestHedgeGateBesideThreshold(t *testing.T) {
	g := &gateLog{admit: true}
	s := hedging.NewPolicyStrategy(threshold.Static{T: hedging.MustThreshold(100 * htMillisecond)})
	s.Gate = g
	if got := hedging.Hedging(s).String(); got != "hedging(static(100ms)+log)" {
		t.Errorf("String = %q", got)
	}
	c := htClient(t, hedging.Config{Regions: htRegions("A", "B"), Strategy: hedging.Hedging(s),
		Retry: hedging.RetryOptions{MaxAttempts: 1}, ConsecutiveHedgeWinThreshold: 1000})
	if st := htRace(t, c, 1*time.Second, "p", htR(time.Second, 200, 0), htR(10*htMillisecond, 200, 0)); st != hedging.AlternateWon {
		t.Errorf("admitted hedge: %v, want AlternateWon", st)
	}
	g.admit = false
	if st := htRace(t, c, 2*time.Second, "p", htR(time.Second, 200, 0), htR(10*htMillisecond, 200, 0)); st.WasHedge() {
		t.Errorf("refused hedge: %v, want the primary alone", st)
	}
	htRace(t, c, 3*time.Second, "p", htR(5*htMillisecond, 503, 0), htR(20*htMillisecond, 200, 0)) // failover, not gated
	op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
	if p := c.PlanHedge(4*time.Second, &op); !p.Hedged || p.Threshold.Get() != 100*htMillisecond {
		t.Errorf("PlanHedge = %+v", p)
	}
	// A's 503 marked it unavailable (§6.5 #10): the plan starts on B, and
	// a move by a mark is not a redirect the gate is asked for.
	want := []string{"start A", "hedge A", "spawn threshold", "start A", "hedge A", "start A", "spawn 503", "start B"}
	if !slices.Equal(g.calls, want) {
		t.Errorf("gate calls = %q, want %q", g.calls, want)
	}
}
