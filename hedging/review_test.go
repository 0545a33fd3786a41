package hedging_test

// Regression tests for the deviations found by the spec-compliance review.

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"hedgelab/hedging"
)

func rvClient(t *testing.T, th time.Duration, attempts int) *hedging.Client {
	t.Helper()
	cfg := dtHedgingCfg(th, "A", "B")
	cfg.Retry.MaxAttempts = attempts
	c, err := hedging.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func rvSend(e hedging.Effects, leg hedging.Leg) (hedging.Attempt, bool) {
	for i := 0; i < e.Len(); i++ {
		if a := e.At(i); a.Kind == hedging.ActSend && a.Leg == leg {
			return a.Attempt, true
		}
	}
	return hedging.Attempt{}, false
}

// A transport error before the threshold is a region-changing failure like
// a 503: the race upgrades into the alternate instead of retrying only the
// primary's region (§6.5 #9, §8.4).
func TestTransportErrorUpgradesIntoHedge(t *testing.T) {
	c := rvClient(t, 500*time.Millisecond, 3)
	var r hedging.Race
	op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
	p, _ := rvSend(htBegin(c, &r, 0, &op), hedging.Primary)
	e := htResponded(&r, 5*time.Millisecond, p, hedging.Result{Err: errors.New("connection refused")})
	alt, ok := rvSend(e, hedging.Alternate)
	if !ok || alt.Endpoint.Region != "B" {
		t.Fatalf("no alternate to B after a transport error: %+v", e)
	}
	htResponded(&r, 20*time.Millisecond, alt, hedging.Result{Status: hedging.Status{Code: 200}})
	if d, _ := r.Diagnostics(); !r.Done() || d.TerminalState() != hedging.AlternateWon {
		t.Fatalf("done %v, state %v", r.Done(), d.TerminalState())
	}
}

// A retry whose backoff ends exactly at the deadline is not sent (§9.4).
func TestNoRetryAtTheDeadline(t *testing.T) {
	c := rvClient(t, 200*time.Millisecond, 3)
	var r hedging.Race
	op := hedging.Operation{Kind: hedging.PointRead, Partition: "p", Timeout: 300 * time.Millisecond}
	p, _ := rvSend(htBegin(c, &r, 0, &op), hedging.Primary)
	htResponded(&r, 100*time.Millisecond, p, hedging.Result{Status: hedging.Status{Code: 429}, RetryAfter: 200 * time.Millisecond})
	htTimerFired(&r, 200*time.Millisecond, hedging.TimerThreshold)
	e := htTimerFired(&r, 300*time.Millisecond, hedging.TimerBackoffPrimary)
	if _, sent := rvSend(e, hedging.Primary); sent {
		t.Fatal("a primary retry was sent at the deadline")
	}
}

// Reusing a Race value: results and timers of the previous race on it are
// ignored.
func TestReusedRaceIgnoresStaleEvents(t *testing.T) {
	c := rvClient(t, 100*time.Millisecond, 1)
	var r hedging.Race
	op1 := hedging.Operation{Kind: hedging.PointRead, Partition: "p", Timeout: time.Second}
	p1, _ := rvSend(htBegin(c, &r, 0, &op1), hedging.Primary)
	alt1, _ := rvSend(htTimerFired(&r, 100*time.Millisecond, hedging.TimerThreshold), hedging.Alternate)
	htResponded(&r, 120*time.Millisecond, alt1, hedging.Result{Status: hedging.Status{Code: 200}})
	if !r.Done() {
		t.Fatal("first race not done")
	}
	op2 := hedging.Operation{Kind: hedging.PointRead, Partition: "p", Timeout: 10 * time.Second}
	htBegin(c, &r, 150*time.Millisecond, &op2)
	htResponded(&r, 160*time.Millisecond, p1, hedging.Result{Status: hedging.Status{Code: 404}})
	htTimerFired(&r, 1000*time.Millisecond, hedging.TimerDeadline) // the first race's deadline
	if r.Done() {
		res, err := r.Result()
		t.Fatalf("the second race ended on a stale event: %v %v", res.Status, err)
	}
}

// A context deadline equal to the threshold sends no alternate (§14.3), and
// a context already cancelled sends nothing and attaches no diagnostics.
func TestDoContextDeadlineAndPreCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &dtTransport{start: time.Now(), script: dtLegs(2*time.Second, dtOK(200), 10*time.Millisecond, dtOK(200))}
		c := dtClient(t, dtHedgingCfg(200*time.Millisecond, "A", "B"), tr)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := c.Do(ctx, &hedging.Operation{Kind: hedging.PointRead, Partition: "p"})
		var he *hedging.Error
		if !errors.As(err, &he) || !errors.Is(err, context.DeadlineExceeded) || he.Diagnostics == nil ||
			he.Diagnostics.TerminalState() != hedging.DeadlineExceededPreThreshold {
			t.Fatalf("err = %v", err)
		}
		if n := tr.legs(); n != 1 {
			t.Fatalf("%d legs sent, want 1", n)
		}
		done, cancel2 := context.WithCancel(context.Background())
		cancel2()
		_, err = c.Do(done, &hedging.Operation{Kind: hedging.PointRead, Partition: "p"})
		if !errors.As(err, &he) || !errors.Is(err, context.Canceled) || he.Diagnostics != nil {
			t.Fatalf("pre-cancelled: err = %v, diagnostics %v", err, he.Diagnostics)
		}
		if n := len(tr.snapshot()); n != 1 {
			t.Fatalf("pre-cancelled Do sent %d attempts in total, want the first test's 1", n)
		}
	})
}
