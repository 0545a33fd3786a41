package simnet_test

import (
	"context"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet"
)

// recorder is a hedging.Observer that keeps what a run reports.
type recorder struct {
	t                   *testing.T
	last                time.Duration
	answered, abandoned int64
	abandonedMs         float64
	ops, hedged         int64
	ru                  float64
	cancelled           int64
	byRegion            map[hedging.Region]int64
}

func (r *recorder) now(ctx context.Context) {
	now, ok := simnet.VirtualNow(ctx)
	if !ok {
		r.t.Fatal("Observer call without a virtual time")
	}
	if now < r.last {
		r.t.Fatalf("virtual time went back from %v to %v", r.last, now)
	}
	r.last = now
}

func (r *recorder) ObserveAttempt(ctx context.Context, ev hedging.AttemptEvent) {
	r.now(ctx)
	if ev.Latency < 0 {
		r.t.Fatalf("attempt latency %v", ev.Latency)
	}
	if ev.Abandoned {
		r.abandoned++
		r.abandonedMs += float64(ev.Latency) / 1e6
		return
	}
	r.answered++
	r.byRegion[ev.Attempt.Endpoint.Region]++
}

func (r *recorder) ObserveOperation(ctx context.Context, ev hedging.OperationEvent) {
	r.now(ctx)
	r.ops++
	r.ru += ev.RequestCharge
	if ev.Diagnostics != nil && ev.Diagnostics.TerminalState().WasHedge() {
		r.hedged++
	}
	r.cancelled += int64(ev.Cancelled[hedging.CancelWinnerFound])
	if ev.Abandoned != ev.Cancelled[hedging.CancelWinnerFound]+ev.Cancelled[hedging.CancelDeadline]+ev.Cancelled[hedging.CancelAppCanceled] {
		r.t.Fatalf("abandoned %d, cancelled %v", ev.Abandoned, ev.Cancelled)
	}
}

// The Observer hears every operation and every attempt of a run once, in
// virtual-time order: answered + abandoned attempts = Stats.Attempts, the
// operations' RU = Stats.RUReturned, and an abandoned attempt is one whose
// race ended without it (one per alternate win or primary win after the
// hedge, at most).
func TestObserverSeesEveryOperationAndAttempt(t *testing.T) {
	cfg := threeRegions(t, 200, 30*time.Second)
	rec := &recorder{t: t, byRegion: map[hedging.Region]int64{}}
	st, err := simnet.Run(cfg, staticPolicy(50), 0, simnet.RunOptions{Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	if rec.ops != st.Ops || rec.answered+rec.abandoned != st.Attempts {
		t.Fatalf("observer: %d ops, %d+%d attempts; stats: %d ops, %d attempts", rec.ops, rec.answered, rec.abandoned, st.Ops, st.Attempts)
	}
	if d := rec.ru - st.RUReturned; d > 1e-6 || d < -1e-6 {
		t.Errorf("observer RU %g, stats %g", rec.ru, st.RUReturned)
	}
	if rec.hedged != st.Hedged || rec.abandoned == 0 || rec.abandoned > st.Hedged || rec.cancelled != rec.abandoned {
		t.Errorf("hedged %d (stats %d), abandoned %d, cancelled %d", rec.hedged, st.Hedged, rec.abandoned, rec.cancelled)
	}
	if rec.byRegion["East US 2"] == 0 || rec.byRegion["East US"] < st.Ops-st.Hedged {
		t.Errorf("answers by region %v", rec.byRegion)
	}
	// The slow tail is 200-800 ms; a primary abandoned when the alternate
	// won ran at least the 50 ms threshold.
	if m := rec.abandonedMs / float64(rec.abandoned); m < 50 {
		t.Errorf("mean abandoned latency %.1f ms < the 50 ms threshold", m)
	}
	// Observing changes nothing in the run.
	plain, err := simnet.Run(cfg, staticPolicy(50), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Ops != st.Ops || plain.RUCharged != st.RUCharged || plain.LatencySum != st.LatencySum {
		t.Errorf("an observed run differs from a plain one")
	}
}
