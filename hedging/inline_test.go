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
