package hedging_test

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"hedgelab/hedging"
)

// TestDoInlineShape reruns the real-time driver's tests with a transport
// that declares it returns on cancel (hedging.Cancellable): the primary's
// first attempt then runs on the caller's goroutine and a callback takes
// the race over only when a timer is due or ctx ends. Every race case, the
// tie rules and the contexts' and bodies' contracts must hold as in the
// goroutine-per-attempt shape.
func TestDoInlineShape(t *testing.T) {
	dtInline = true
	defer func() { dtInline = false }()
	for name, test := range map[string]func(*testing.T){
		"RaceCases":                   TestDoRaceCases,
		"TieAtThreshold":              TestDoTieAtThreshold,
		"LoserCancelled":              TestDoLoserCancelled,
		"ContextCancel":               TestDoContextCancel,
		"AttemptContext":              TestDoAttemptContext,
		"DerivedContextCancelled":     TestDoDerivedContextCancelled,
		"RetryBackoff":                TestDoRetryBackoff,
		"OpTimeout":                   TestDoOpTimeout,
		"Errors":                      TestDoErrors,
		"ConcurrentRealTime":          TestDoConcurrentRealTime,
		"FansSessionUnavailable":      TestDoFansSessionUnavailableIntoOperation,
		"AttemptCancelCause":          TestDoAttemptCancelCause,
		"BodyFollowsCallerContext":    TestDoBodyFollowsCallerContext,
		"BodyCloseReleases":           TestDoBodyCloseReleases,
		"ErrorBodyFollowsCaller":      TestDoErrorBodyFollowsCallerContext,
		"LaterOperationDoesNotCut":    TestDoLaterOperationDoesNotCutEarlierBody,
		"BodiesUnderCancellation":     TestDoBodiesUnderConcurrentCancellation,
		"RetryAfterCap":               TestDoRetryAfterCap,
		"WinnerBodyLoserBodyClosed":   TestDoWinnerBodyReturnedLoserBodyClosed,
		"AbandonedAndTransientBodies": TestDoAbandonedAndTransientBodiesClosed,
		"TransportPanicRecovered":     TestDoTransportPanicRecovered,
	} {
		t.Run(name, test)
	}
}

// On the happy path of the inline shape the primary's Send runs on the
// caller's goroutine (no goroutine is started: spec §6.5 goal 6), and
// before the threshold no other goroutine exists for the operation; in the
// goroutine-per-attempt shape Send runs on a goroutine of its own.
func TestDoInlinePrimaryOnCallerGoroutine(t *testing.T) {
	for _, inline := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			var during int
			tr := hedging.Transport(dtSendFunc(func(context.Context, *hedging.Operation, hedging.Attempt) hedging.Result {
				time.Sleep(10 * time.Millisecond) // the threshold timer is armed meanwhile
				during = runtime.NumGoroutine()
				return dtOK(200)
			}))
			if inline {
				tr = dtPrompt{tr}
			}
			c, err := hedging.NewClient(hedging.Config{Regions: dtHedgingCfg(time.Second, "A", "B").Regions,
				Strategy: dtHedgingCfg(time.Second).Strategy, Transport: tr})
			if err != nil {
				t.Fatal(err)
			}
			before := runtime.NumGoroutine()
			resp, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead})
			if err != nil || resp.Diagnostics.TerminalState() != hedging.PrimaryWonPreThreshold {
				t.Fatalf("%v %v", resp, err)
			}
			want := before + 1
			if inline {
				want = before
			}
			if during != want {
				t.Errorf("inline %v: %d goroutines during Send, %d before Do; want %d", inline, during, before, want)
			}
		})
	}
}

// The inline shape's happy path allocates once: the answer, which holds
// the primary attempt's context too (the other shape adds that context,
// 2, and the copy of the Operation rides with the answer).
func TestDoInlineHappyPathAllocs(t *testing.T) {
	if dtRaceEnabled() {
		t.Skip("allocation counts are meaningless under -race")
	}
	tr := dtPrompt{dtSendFunc(func(context.Context, *hedging.Operation, hedging.Attempt) hedging.Result {
		return hedging.Result{Status: hedging.Status{Code: 200}, RequestCharge: 1}
	})}
	c, err := hedging.NewClient(hedging.Config{Regions: dtHedgingCfg(time.Second, "A", "B").Regions,
		Strategy: dtHedgingCfg(time.Second).Strategy, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	op := &hedging.Operation{Kind: hedging.PointRead, Partition: "0"}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := c.Do(context.Background(), op); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Errorf("inline Do happy path allocates %.2f times per op, want <= 1 (the answer)", allocs)
	}
}

// The wake timer of a pooled engine stays armed after a happy-path
// operation (re-arming it per request costs a timer-heap update), so it may
// fire during a later operation of the same engine before that
// operation's threshold: the callback then takes the race over early. The
// early fire must not count as the threshold (no alternate before it), and
// the threshold must still fire after it (the race is not left without a
// timer). Real time (pooled engines are never used inside a synctest
// bubble), with margins of hundreds of milliseconds either way; what is
// asserted is who answered and whether the alternate was sent, not how
// long anything took. One P, so that every operation gets the same
// pooled engine (sync.Pool's caches are per P).
func TestDoInlineEarlyWake(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const threshold = time.Second
	var (
		slow    chan struct{} // non-nil: the primary's Send waits for it (or its ctx)
		calledB int
	)
	tr := dtPrompt{dtSendFunc(func(ctx context.Context, _ *hedging.Operation, a hedging.Attempt) hedging.Result {
		if a.Endpoint.Region == "B" {
			calledB++ // the race's callbacks run one at a time with Do's caller
			return dtOK(200)
		}
		if slow != nil {
			select {
			case <-slow:
			case <-ctx.Done():
				return hedging.Result{Err: ctx.Err()}
			}
		}
		return dtOK(200)
	})}
	c := dtClient(t, dtHedgingCfg(threshold, "A", "B"), tr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	do := func() *hedging.Response {
		t.Helper()
		resp, err := c.Do(ctx, &hedging.Operation{Kind: hedging.PointRead, Partition: "0"})
		if err != nil {
			t.Fatalf("Do: %v", err)
		}
		if resp.Result.Body != nil {
			_ = resp.Result.Body.Close()
		}
		return resp
	}

	// The primary answers at 700 ms of a 1 s threshold; the wake armed by
	// the fast operation fires at about 400 ms.
	do()
	time.Sleep(threshold * 6 / 10)
	slow = make(chan struct{})
	release := time.AfterFunc(threshold*7/10, func() { close(slow) })
	resp := do()
	release.Stop()
	if st := resp.Diagnostics.TerminalState(); resp.Region != "A" || st != hedging.PrimaryWonPreThreshold || calledB != 0 {
		t.Errorf("early wake, primary before the threshold: region %s state %v, B called %d times; want A PrimaryWonPreThreshold, 0",
			resp.Region, st, calledB)
	}

	// The primary never answers: after the early wake the threshold still
	// fires and the alternate wins.
	slow = nil
	do()
	time.Sleep(threshold * 6 / 10)
	slow = make(chan struct{})
	resp = do()
	if st := resp.Diagnostics.TerminalState(); resp.Region != "B" || st != hedging.AlternateWon || calledB != 1 {
		t.Errorf("early wake, silent primary: region %s state %v, B called %d times; want B AlternateWon, 1", resp.Region, st, calledB)
	}
}
