package hedging_test

// Tests for issue 11 items 1, 4, 5 and 6 (prompt return, a visible
// deadline, a cancel at the threshold instant, one tie-break). All but the
// last use only the Transport API that predates the issue, so they run
// unchanged against the old driver, where each of them fails.

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"hedgelab/hedging"
)

// hungPrimary is a transport whose primary ignores cancellation and answers
// only after hang; the alternate answers altRes after altLat, honouring
// cancellation.
func hungPrimary(hang time.Duration, altLat time.Duration, altRes hedging.Result, returned *atomic.Int32) dtSendFunc {
	return func(ctx context.Context, _ *hedging.Operation, a hedging.Attempt) hedging.Result {
		if a.Leg == hedging.Primary {
			time.Sleep(hang) // fake time; deliberately deaf to ctx
			returned.Add(1)
			return dtOK(200)
		}
		select {
		case <-time.After(altLat):
			return altRes
		case <-ctx.Done():
			return hedging.Result{Err: ctx.Err()}
		}
	}
}

// Issue 11 #1: a primary that ignores cancellation and hangs 10 s must not
// hold the caller: the alternate's 200 at 90 ms (threshold 50 + 40 ms) is
// returned at 90 ms, within op.Timeout = 2 s. The hung attempt's goroutine
// finishes on its own at 10 s (synctest.Test fails on a leaked goroutine).
func TestDoHungLoserReturnsPromptly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var returned atomic.Int32
		c := dtClient(t, dtHedgingCfg(50*time.Millisecond, "A", "B"),
			hungPrimary(10*time.Second, 40*time.Millisecond, dtOK(200), &returned))
		start := time.Now()
		resp, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Timeout: 2 * time.Second})
		took := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if took != 90*time.Millisecond || resp.Elapsed != 90*time.Millisecond || resp.Leg != hedging.Alternate {
			t.Errorf("Do returned after %v (Elapsed %v, leg %v), want 90ms, 90ms, alternate", took, resp.Elapsed, resp.Leg)
		}
		if returned.Load() != 0 {
			t.Error("the hung primary returned before Do")
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if returned.Load() != 1 {
			t.Error("the hung primary never returned")
		}
	})
}

// Issue 11 #1 with a context deadline and both legs hung: Do returns at the
// deadline plus the harvest window (1 s + 50 ms), not when the transports
// give up at 10 s.
func TestDoHungLegsDeadlinePlusHarvest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := dtSendFunc(func(ctx context.Context, _ *hedging.Operation, a hedging.Attempt) hedging.Result {
			time.Sleep(10 * time.Second)
			return dtOK(200)
		})
		c := dtClient(t, dtHedgingCfg(100*time.Millisecond, "A", "B"), tr)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		_, err := c.Do(ctx, &hedging.Operation{Kind: hedging.PointRead})
		if took := time.Since(start); took != time.Second+hedging.HarvestWindow {
			t.Errorf("Do returned after %v, want 1s + HarvestWindow", took)
		}
		var he *hedging.Error
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &he) ||
			he.Diagnostics.TerminalState() != hedging.BothTransientDeadlineElapsed {
			t.Errorf("err = %v, want DeadlineExceeded with BothTransient{deadline_elapsed=true}", err)
		}
		time.Sleep(10 * time.Second) // let the abandoned attempts finish
	})
}

// Issue 11 #4: an attempt's context carries the operation's deadline: start
// + op.Timeout, or the caller's deadline when that is earlier.
func TestDoAttemptSeesOperationDeadline(t *testing.T) {
	for _, tc := range []struct {
		name       string
		timeout    time.Duration
		ctxTimeout time.Duration // 0 = none
		want       time.Duration // after start
	}{
		{"op.Timeout only", 2 * time.Second, 0, 2 * time.Second},
		{"earlier context deadline", 2 * time.Second, time.Second, time.Second},
		{"earlier op.Timeout", 500 * time.Millisecond, time.Second, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var got time.Duration
				var ok bool
				tr := dtSendFunc(func(ctx context.Context, _ *hedging.Operation, _ hedging.Attempt) hedging.Result {
					var dl time.Time
					dl, ok = ctx.Deadline()
					got = dl.Sub(start)
					return dtOK(200)
				})
				c := dtClient(t, dtHedgingCfg(time.Second, "A", "B"), tr)
				ctx := context.Background()
				if tc.ctxTimeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.ctxTimeout)
					defer cancel()
				}
				if _, err := c.Do(ctx, &hedging.Operation{Kind: hedging.PointRead, Timeout: tc.timeout}); err != nil {
					t.Fatal(err)
				}
				if !ok || got != tc.want {
					t.Errorf("attempt deadline = start+%v (set %v), want start+%v", got, ok, tc.want)
				}
			})
		})
	}
}

// Issue 11 #5: a cancellation at the very instant of the threshold wins
// over the threshold (spec §6.4, the cancel arm is polled first): one
// attempt, and Do returns at 20 ms, in every run.
func TestDoCancelAtThresholdInstant(t *testing.T) {
	const runs = 200
	bad := 0
	for range runs {
		synctest.Test(t, func(t *testing.T) {
			tr := &dtTransport{start: time.Now()}
			tr.script = dtLegs(5*time.Second, dtOK(200), 50*time.Millisecond, dtOK(200))
			c := dtClient(t, dtHedgingCfg(20*time.Millisecond, "A", "B"), tr)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(20*time.Millisecond, cancel)
			_, err := c.Do(ctx, &hedging.Operation{Kind: hedging.PointRead})
			took := time.Since(tr.start)
			synctest.Wait()
			if n := len(tr.snapshot()); n != 1 || took != 20*time.Millisecond || !errors.Is(err, context.Canceled) {
				bad++
				if bad == 1 {
					t.Errorf("%d attempts, returned at %v, err %v; want 1 attempt at 20ms, context.Canceled", n, took, err)
				}
			}
		})
	}
	if bad > 0 {
		t.Errorf("%d of %d runs sent the alternate or returned late", bad, runs)
	}
}

// Issue 11 #6: two final answers at the same instant (the primary at 70 ms,
// the alternate sent at the 20 ms threshold answering after 50 ms): the
// primary wins in every run (hedging.Leg.WinsTie), as in the simulator.
func TestDoTieBetweenLegsPrimaryWins(t *testing.T) {
	const runs = 300
	alt := 0
	for range runs {
		synctest.Test(t, func(t *testing.T) {
			tr := &dtTransport{start: time.Now()}
			tr.script = dtLegs(70*time.Millisecond, dtOK(200), 50*time.Millisecond, dtOK(200))
			c := dtClient(t, dtHedgingCfg(20*time.Millisecond, "A", "B"), tr)
			resp, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Elapsed != 70*time.Millisecond {
				t.Errorf("Elapsed %v, want 70ms", resp.Elapsed)
			}
			if resp.Leg != hedging.Primary || resp.Diagnostics.TerminalState() != hedging.PrimaryWonAfterHedge {
				alt++
			}
		})
	}
	if alt > 0 {
		t.Errorf("the alternate won %d of %d ties", alt, runs)
	}
}

// Abandonment under concurrency, in real time (run with -race): every
// primary blocks, deaf to cancellation, until the test releases it after
// all operations returned; the alternates answer at once. Every Do returns
// the alternate's answer while its primary is still blocked, and the
// abandoned attempts then finish without touching reused state (TestMain's
// goleak check sees no goroutine left).
func TestDoAbandonedAttemptsConcurrent(t *testing.T) {
	release := make(chan struct{})
	var blocked, finished atomic.Int32
	tr := dtSendFunc(func(ctx context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result {
		if a.Leg == hedging.Primary {
			blocked.Add(1)
			<-release
			finished.Add(1)
			return hedging.Result{Status: hedging.Status{Code: 200}, Body: newBody("late")}
		}
		return hedging.Result{Status: hedging.Status{Code: 200}, Body: newBody(op.Path)}
	})
	c := dtClient(t, dtHedgingCfg(time.Millisecond, "A", "B"), tr)
	const n = 64
	errs := make(chan error, n)
	for i := range n {
		go func() {
			path := "/docs/" + string(rune('a'+i%26))
			resp, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Path: path})
			if err == nil {
				b, _ := io.ReadAll(resp.Result.Body)
				if resp.Leg != hedging.Alternate || string(b) != path {
					err = errors.New("wrong answer " + string(b))
				}
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	// Every Do returned while no primary could finish. A primary's
	// goroutine may not have been scheduled yet when its Do returned (a
	// loaded machine), so wait for all n to have been called before
	// releasing them: a liveness check, not a timing one.
	if got := finished.Load(); got != 0 {
		t.Errorf("%d primaries finished before release; want 0", got)
	}
	for deadline := time.Now().Add(time.Minute); blocked.Load() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d primaries called after a minute", blocked.Load(), n)
		}
	}
	close(release)
	// The next operations reuse pooled state while nothing is abandoned.
	for range 16 {
		if _, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead}); err != nil {
			t.Fatal(err)
		}
	}
}
