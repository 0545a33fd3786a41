package hedging_test

// Tests of the real-time driver, Client.Do, run inside testing/synctest
// bubbles: time is fake, so latencies are exact and nothing sleeps for real.
// Helpers are prefixed "dt" so that they cannot collide with other test
// files of the package.

import (
	"context"
	"errors"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/internal/answer"
	"hedgelab/internal/racecases"
)

// dtCall is one Send seen by a dtTransport.
type dtCall struct {
	a         hedging.Attempt
	sentAt    time.Duration // fake time since the test's start
	cancelled bool          // its context was cancelled before it answered
}

// dtTransport is a scripted Transport: script(a, n) gives the latency and
// result of the n-th attempt (0-based) of a's leg. Send waits that long in
// (fake) time unless its context is cancelled first.
type dtTransport struct {
	start  time.Time
	script func(a hedging.Attempt, n int) (time.Duration, hedging.Result)

	mu    sync.Mutex
	calls []dtCall
	legN  [2]int
	// active counts Sends that have not returned yet.
	active atomic.Int32
}

func (f *dtTransport) Send(ctx context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result {
	f.active.Add(1)
	defer f.active.Add(-1)
	f.mu.Lock()
	n := f.legN[a.Leg]
	f.legN[a.Leg]++
	idx := len(f.calls)
	f.calls = append(f.calls, dtCall{a: a, sentAt: time.Since(f.start)})
	f.mu.Unlock()
	lat, res := f.script(a, n)
	t := time.NewTimer(lat)
	defer t.Stop()
	select {
	case <-t.C:
		return res
	case <-ctx.Done():
		f.mu.Lock()
		f.calls[idx].cancelled = true
		f.mu.Unlock()
		return hedging.Result{Err: ctx.Err()}
	}
}

func (f *dtTransport) snapshot() []dtCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]dtCall(nil), f.calls...)
}

// legs returns how many distinct legs were sent.
func (f *dtTransport) legs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.legN {
		if c > 0 {
			n++
		}
	}
	return n
}

func dtOK(code int) hedging.Result {
	return hedging.Result{Status: hedging.Status{Code: code}, RequestCharge: 1}
}

// dtLegs scripts a fixed latency and result per leg.
func dtLegs(pLat time.Duration, p hedging.Result, aLat time.Duration, a hedging.Result) func(hedging.Attempt, int) (time.Duration, hedging.Result) {
	return func(at hedging.Attempt, _ int) (time.Duration, hedging.Result) {
		if at.Leg == hedging.Alternate {
			return aLat, a
		}
		return pLat, p
	}
}

// dtInline makes dtClient declare its transport [hedging.Cancellable], so
// that Client.Do runs the primary's first attempt on the caller's
// goroutine (TestDoInlineShape reruns the driver's tests so).
var dtInline bool

// dtPrompt declares a transport that returns on cancel.
type dtPrompt struct{ hedging.Transport }

func (dtPrompt) ReturnsOnCancel() bool { return true }

func dtClient(t testing.TB, cfg hedging.Config, tr hedging.Transport) *hedging.Client {
	t.Helper()
	if dtInline {
		tr = dtPrompt{tr}
	}
	cfg.Transport = tr
	c, err := hedging.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func dtHedgingCfg(th time.Duration, regions ...string) hedging.Config {
	var cfg hedging.Config
	for _, r := range regions {
		cfg.Regions = append(cfg.Regions, hedging.Endpoint{Region: hedging.Region(r), Key: "ep-" + r})
	}
	cfg.Strategy = hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(th)))
	return cfg
}

// dtOutcome runs one case through Client.Do inside the current bubble and
// reads the outcome in the racecases vocabulary.
func dtOutcome(t *testing.T, c racecases.Case) (racecases.Outcome, *hedging.Response) {
	t.Helper()
	cfg, op, err := racecases.Build(c)
	if err != nil {
		t.Fatal(err)
	}
	tr := &dtTransport{start: time.Now()}
	tr.script = func(a hedging.Attempt, _ int) (time.Duration, hedging.Result) {
		return racecases.Ms(c.LegFor(a.Leg).LatencyMs), c.ResultFor(a.Leg)
	}
	client := dtClient(t, cfg, tr)
	start := time.Now()
	resp, err := client.Do(context.Background(), &op)
	o := racecases.Outcome{TerminalState: "none", Winner: "none", Attempts: tr.legs()}
	o.LatencyMs = float64(time.Since(start)) / float64(time.Millisecond)
	var diag *hedging.HedgeDiagnostics
	if err != nil {
		var he *hedging.Error
		if !errors.As(err, &he) {
			t.Fatalf("Do error %v (%T) is not a *hedging.Error", err, err)
		}
		if resp != nil {
			t.Fatalf("Do returned a response with error %v", err)
		}
		diag = he.Diagnostics
	} else {
		diag = resp.Diagnostics
		o.Winner = resp.Leg.String()
		o.Status = resp.Result.Status.Code
		if got := float64(resp.Elapsed) / float64(time.Millisecond); got != o.LatencyMs {
			t.Errorf("Response.Elapsed = %gms, want the observed %gms", got, o.LatencyMs)
		}
	}
	if diag != nil {
		o.TerminalState = diag.TerminalState().String()
	}
	// Do returns without waiting for a cancelled loser; the scripted
	// transport returns as soon as its context is cancelled, so once the
	// bubble is idle (no fake time passes) no Send may still be running.
	synctest.Wait()
	if n := tr.active.Load(); n != 0 {
		t.Errorf("%d Sends still running after the bubble settled", n)
	}
	return o, resp
}

// TestDoRaceCases runs every shared and extra race case through Client.Do
// in a synctest bubble with a scripted transport, and requires the same
// terminal state, winner, legs, answer time and status as the case and as
// the hand-driven core runner (runManual, racecases_test.go).
func TestDoRaceCases(t *testing.T) {
	cases, err := racecases.LoadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				got, _ := dtOutcome(t, c)
				if err := c.Check(got); err != nil {
					t.Errorf("Do: %v (outcome %+v)", err, got)
				}
				if core := runManual(t, c); got != core {
					t.Errorf("Do outcome %+v != core outcome %+v", got, core)
				}
			})
		})
	}
}

// TestDoTieAtThreshold repeats the tie case ("primary answers exactly at the
// threshold") many times. In a bubble the primary's Send and the threshold
// timer wake at the same fake instant; Do collects delivered results (and
// yields twice) before acting on a due timer, so the primary should be seen
// first. The count of runs that saw the timer first is logged; the test
// fails if any did, because then real-time tie handling is not what the doc
// of Do claims in the one setting where it can be checked exactly.
func TestDoTieAtThreshold(t *testing.T) {
	cases, err := racecases.LoadAll()
	if err != nil {
		t.Fatal(err)
	}
	var tie racecases.Case
	for _, c := range cases {
		if c.Primary.LatencyMs == c.ThresholdMs && c.Expect.Winner == "primary" && c.DeadlineMs == 0 {
			tie = c
		}
	}
	if tie.Name == "" {
		t.Fatal("no tie case in the case table")
	}
	const runs = 500
	bad := 0
	for range runs {
		synctest.Test(t, func(t *testing.T) {
			got, _ := dtOutcome(t, tie)
			if tie.Check(got) != nil {
				bad++
			}
		})
	}
	t.Logf("%q: %d of %d runs saw the timer before the response", tie.Name, bad, runs)
	if bad > 0 {
		t.Errorf("tie resolved against the response in %d of %d runs", bad, runs)
	}
}

// TestDoLoserCancelled checks that the losing primary's context is
// cancelled, that its Send returns at once, and that the caller sees
// the alternate's answer at threshold + alternate latency.
func TestDoLoserCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &dtTransport{start: time.Now()}
		tr.script = dtLegs(5*time.Second, dtOK(200), 30*time.Millisecond, dtOK(200))
		c := dtClient(t, dtHedgingCfg(200*time.Millisecond, "A", "B"), tr)
		resp, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Partition: "p"})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Leg != hedging.Alternate || resp.Region != "B" || resp.Elapsed != 230*time.Millisecond {
			t.Errorf("got leg %v region %q elapsed %v, want alternate B 230ms", resp.Leg, resp.Region, resp.Elapsed)
		}
		if d := time.Since(tr.start); d != 230*time.Millisecond {
			t.Errorf("Do returned at %v, want 230ms", d)
		}
		synctest.Wait()
		calls := tr.snapshot()
		if len(calls) != 2 || !calls[0].cancelled || calls[1].cancelled {
			t.Fatalf("calls = %+v, want the primary cancelled and the alternate answered", calls)
		}
		if calls[1].sentAt != 200*time.Millisecond || !calls[1].a.Hedging || calls[0].a.Hedging {
			t.Errorf("alternate sent at %v hedging=%v (primary hedging=%v), want 200ms true (false)",
				calls[1].sentAt, calls[1].a.Hedging, calls[0].a.Hedging)
		}
		if tr.active.Load() != 0 {
			t.Error("a Send was still running after Do returned")
		}
		if got := resp.Diagnostics.TerminalState(); got != hedging.AlternateWon {
			t.Errorf("terminal state %v", got)
		}
	})
}

// TestDoContextCancel covers application cancellation: before the
// threshold it ends the race at once (DeadlineExceededPreThreshold,
// context.Canceled); during a hedge it harvests for HarvestWindow.
func TestDoContextCancel(t *testing.T) {
	t.Run("before threshold", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tr := &dtTransport{start: time.Now()}
			tr.script = dtLegs(5*time.Second, dtOK(200), 5*time.Second, dtOK(200))
			c := dtClient(t, dtHedgingCfg(200*time.Millisecond, "A", "B"), tr)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			resp, err := c.Do(ctx, &hedging.Operation{Kind: hedging.PointRead})
			if resp != nil || !errors.Is(err, context.Canceled) {
				t.Fatalf("Do = %v, %v; want nil, context.Canceled", resp, err)
			}
			var he *hedging.Error
			if !errors.As(err, &he) || he.Diagnostics == nil ||
				he.Diagnostics.TerminalState() != hedging.DeadlineExceededPreThreshold {
				t.Fatalf("error %v: want *Error with DeadlineExceededPreThreshold diagnostics", err)
			}
			if d := time.Since(tr.start); d != 50*time.Millisecond {
				t.Errorf("returned at %v, want 50ms", d)
			}
			synctest.Wait()
			if calls := tr.snapshot(); len(calls) != 1 || !calls[0].cancelled {
				t.Errorf("calls = %+v, want one cancelled primary", calls)
			}
		})
	})
	t.Run("mid-race deadline harvests", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tr := &dtTransport{start: time.Now()}
			tr.script = dtLegs(5*time.Second, dtOK(200), 5*time.Second, dtOK(200))
			c := dtClient(t, dtHedgingCfg(100*time.Millisecond, "A", "B"), tr)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := c.Do(ctx, &hedging.Operation{Kind: hedging.PointRead})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want DeadlineExceeded", err)
			}
			var he *hedging.Error
			errors.As(err, &he)
			if he.Diagnostics.TerminalState() != hedging.BothTransientDeadlineElapsed {
				t.Errorf("state %v", he.Diagnostics.TerminalState())
			}
			if d := time.Since(tr.start); d != 300*time.Millisecond+hedging.HarvestWindow {
				t.Errorf("returned at %v, want deadline + harvest window", d)
			}
		})
	})
	t.Run("already cancelled sends nothing", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tr := &dtTransport{start: time.Now()}
			tr.script = dtLegs(time.Millisecond, dtOK(200), time.Millisecond, dtOK(200))
			c := dtClient(t, dtHedgingCfg(100*time.Millisecond, "A", "B"), tr)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := c.Do(ctx, &hedging.Operation{Kind: hedging.PointRead})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v", err)
			}
			if n := len(tr.snapshot()); n != 0 {
				t.Errorf("%d attempts sent", n)
			}
		})
	})
}

// TestDoAttemptContext checks what a Transport sees: the caller's values
// and deadline, and a Done channel that only the race closes.
func TestDoAttemptContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type key struct{}
		ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), key{}, "v"), time.Hour)
		defer cancel()
		want, _ := ctx.Deadline()
		var checked atomic.Bool
		tr := hedging.Transport(dtSendFunc(func(actx context.Context, _ *hedging.Operation, _ hedging.Attempt) hedging.Result {
			dl, ok := actx.Deadline()
			if actx.Value(key{}) != "v" || !ok || !dl.Equal(want) || actx.Err() != nil {
				t.Errorf("attempt ctx: value %v deadline %v %v err %v", actx.Value(key{}), dl, ok, actx.Err())
			}
			// A context derived from the attempt's is cancelled with it.
			child, stop := context.WithCancel(actx)
			defer stop()
			select {
			case <-child.Done():
				t.Error("child done before the attempt was cancelled")
			default:
			}
			checked.Store(true)
			return dtOK(200)
		}))
		c := dtClient(t, dtHedgingCfg(time.Second, "A", "B"), tr)
		if _, err := c.Do(ctx, &hedging.Operation{Kind: hedging.PointRead}); err != nil {
			t.Fatal(err)
		}
		if !checked.Load() {
			t.Fatal("transport not called")
		}
	})
}

// dtSendFunc adapts a function to hedging.Transport.
type dtSendFunc func(ctx context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result

func (f dtSendFunc) Send(ctx context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result {
	return f(ctx, op, a)
}

// TestDoDerivedContextCancelled checks that a context derived from the
// attempt's (as net/http derives one per request) is cancelled when the
// race cancels the attempt.
func TestDoDerivedContextCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := dtSendFunc(func(ctx context.Context, _ *hedging.Operation, a hedging.Attempt) hedging.Result {
			if a.Leg == hedging.Alternate {
				return dtOK(200)
			}
			child, stop := context.WithCancel(ctx)
			defer stop()
			<-child.Done()
			return hedging.Result{Err: context.Cause(child)}
		})
		c := dtClient(t, dtHedgingCfg(10*time.Millisecond, "A", "B"), tr)
		resp, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead})
		if err != nil || resp.Leg != hedging.Alternate {
			t.Fatalf("Do = %+v, %v", resp, err)
		}
	})
}

// TestDoRetryBackoff runs a plain (non-hedged) write through a 429 with a
// retry-after: Do must arm the core's backoff timer and retry.
func TestDoRetryBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &dtTransport{start: time.Now()}
		tr.script = func(a hedging.Attempt, n int) (time.Duration, hedging.Result) {
			if n == 0 {
				return 10 * time.Millisecond, hedging.Result{Status: hedging.Status{Code: 429}, RetryAfter: 40 * time.Millisecond}
			}
			return 10 * time.Millisecond, dtOK(201)
		}
		c := dtClient(t, dtHedgingCfg(time.Second, "A", "B"), tr)
		resp, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.Create})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Result.Status.Code != 201 || resp.Diagnostics != nil || resp.Elapsed != 60*time.Millisecond {
			t.Errorf("resp = %+v, want 201 after 10+40+10ms, no diagnostics", resp)
		}
		if calls := tr.snapshot(); len(calls) != 2 || calls[1].sentAt != 50*time.Millisecond {
			t.Errorf("calls = %+v", calls)
		}
	})
}

// TestDoOpTimeout checks op.Timeout, the core's own deadline timer.
func TestDoOpTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &dtTransport{start: time.Now()}
		tr.script = dtLegs(time.Hour, dtOK(200), time.Hour, dtOK(200))
		c := dtClient(t, dtHedgingCfg(time.Second, "A", "B"), tr)
		_, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Timeout: 250 * time.Millisecond})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
		if d := time.Since(tr.start); d != 250*time.Millisecond {
			t.Errorf("returned at %v", d)
		}
	})
}

// TestDoErrors covers the errors Do itself returns.
func TestDoErrors(t *testing.T) {
	c, err := hedging.NewClient(dtHedgingCfg(time.Second, "A", "B"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(context.Background(), &hedging.Operation{}); !errors.Is(err, hedging.ErrNoTransport) {
		t.Errorf("no transport: err = %v", err)
	}
	synctest.Test(t, func(t *testing.T) {
		tr := dtSendFunc(func(context.Context, *hedging.Operation, hedging.Attempt) hedging.Result {
			return hedging.Result{Err: errBoom}
		})
		c := dtClient(t, dtHedgingCfg(time.Second, "A"), tr)
		_, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead})
		var he *hedging.Error
		if !errors.Is(err, errBoom) || !errors.As(err, &he) || he.Diagnostics != nil {
			t.Errorf("transport error: err = %v", err)
		}
		c = dtClient(t, dtHedgingCfg(time.Second, "A"), tr)
		_, err = c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, ExcludeRegions: []hedging.Region{"A"}})
		if !errors.Is(err, hedging.ErrNoRegion) {
			t.Errorf("no region: err = %v", err)
		}
	})
}

var errBoom = errors.New("boom")

// TestDoConcurrentRealTime runs many operations at once on one client in
// real time (-race) with an in-memory transport that answers
// at once, half of them through a hedge with a 1 ms threshold (their primary
// blocks until cancelled; the others have a one-hour threshold).
func TestDoConcurrentRealTime(t *testing.T) {
	tr := dtSendFunc(func(ctx context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result {
		if op.Partition == "slow" && a.Leg == hedging.Primary {
			<-ctx.Done()
			return hedging.Result{Err: ctx.Err()}
		}
		return hedging.Result{Status: hedging.Status{Code: 200}, RequestCharge: 2}
	})
	c := dtClient(t, dtHedgingCfg(time.Hour, "A", "B"), tr)
	quick := hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(time.Millisecond)))
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 50 {
				op := &hedging.Operation{Kind: hedging.PointRead, Partition: "fast"}
				if (g+i)%2 == 0 {
					op.Partition, op.Strategy = "slow", quick
				}
				p := op.Partition
				resp, err := c.Do(context.Background(), op)
				if err != nil {
					t.Error(err)
					return
				}
				want := hedging.Primary
				if p == "slow" {
					want = hedging.Alternate
				}
				if resp.Leg != want || resp.RequestCharge != 2 || resp.Diagnostics == nil {
					t.Errorf("%s: resp = %+v", p, resp)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestDoHappyPathAllocs measures the allocations of Do over an in-memory
// transport that answers at once (the driver's own cost; the race core
// allocates nothing on this path). The budget is 3: the operation's answer
// (the Response with its diagnostics, the body wrapper and the copy of the
// Operation, one object) and the primary's context (2,
// context.WithCancelCause). The primary runs on the caller's goroutine, so
// there is no goroutine closure; the engine (race, slots, timers, channels)
// is pooled. Skipped under the race detector, whose sync.Pool
// drops items at random.
func TestDoHappyPathAllocs(t *testing.T) {
	if dtRaceEnabled() {
		t.Skip("allocation counts are meaningless under -race")
	}
	tr := dtSendFunc(func(context.Context, *hedging.Operation, hedging.Attempt) hedging.Result {
		return hedging.Result{Status: hedging.Status{Code: 200}, RequestCharge: 1}
	})
	c := dtClient(t, dtHedgingCfg(time.Second, "A", "B"), tr)
	op := &hedging.Operation{Kind: hedging.PointRead, Partition: "0"}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := c.Do(ctx, op); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("Do happy path: %.2f allocs/op", allocs)
	if allocs > 3 {
		t.Errorf("Do happy path allocates %.2f times per op, want <= 3 (the answer, the primary's context)", allocs)
	}
}

func dtRaceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// Do fans a 1002 discovery of a race that ends with both legs transient
// into the caller's operation (§9.6.7), as the race core does with the
// operation it is given, although Do's race works on its own copy: the
// caller's next Do of op asks for the hub region. Without a 1002 op is
// left alone.
func TestDoFansSessionUnavailableIntoOperation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		primary hedging.Result
		want    bool
	}{
		{"primary_1002", hedging.Result{Status: hedging.Status{Code: 404, SubStatus: 1002}}, true},
		{"no_1002", hedging.Result{Status: hedging.Status{Code: 503}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := &dtTransport{start: time.Now(), script: dtLegs(300*time.Millisecond, tc.primary, 400*time.Millisecond, hedging.Result{Status: hedging.Status{Code: 503}})}
				c := dtClient(t, dtHedgingCfg(100*time.Millisecond, "A", "B"), tr)
				op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
				resp, err := c.Do(context.Background(), &op)
				var he *hedging.Error
				if resp != nil || !errors.As(err, &he) || he.Diagnostics == nil || he.Diagnostics.TerminalState() != hedging.BothTransient {
					t.Fatalf("Do = %v, %v; want a BothTransient *hedging.Error", resp, err)
				}
				if he.Body != nil {
					_ = he.Body.Close()
				}
				if op.HubRegionProcessingOnly != tc.want {
					t.Errorf("op.HubRegionProcessingOnly = %v after Do, want %v", op.HubRegionProcessingOnly, tc.want)
				}
			})
		})
	}
}

// dtHolder is an Operation.Request holding its operation's answer, as
// hedginghttp's RoundTrip does; diag is where Do copies the diagnostics
// (nil: the holder never reads them).
type dtHolder struct {
	ans  answer.Storage[hedging.Response]
	diag *hedging.HedgeDiagnostics
}

func (h *dtHolder) AnswerStorage() (*answer.Storage[hedging.Response], *hedging.HedgeDiagnostics) {
	return &h.ans, h.diag
}

// A holder of the answer gets the Response in its own storage; Do copies
// the race's diagnostics only to the place the holder gives (the happy
// path of hedginghttp's RoundTrip, which never reads them, gives none), in
// both shapes of the driver. Without a holder Do attaches them (§10.1).
func TestDoAnswerHolderDiagnostics(t *testing.T) {
	for _, inline := range []bool{false, true} {
		var tr hedging.Transport = dtSendFunc(func(context.Context, *hedging.Operation, hedging.Attempt) hedging.Result {
			return hedging.Result{Status: hedging.Status{Code: 200}, RequestCharge: 2}
		})
		if inline {
			tr = dtPrompt{tr}
		}
		cfg := dtHedgingCfg(time.Second, "A", "B")
		cfg.Transport = tr
		c, err := hedging.NewClient(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, give := range []bool{false, true} {
			h := &dtHolder{}
			if give {
				h.diag = new(hedging.HedgeDiagnostics)
			}
			resp, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Partition: "0", Request: h})
			if err != nil {
				t.Fatal(err)
			}
			if resp != &h.ans.Resp {
				t.Fatalf("inline=%v: the Response is not the holder's", inline)
			}
			if resp.RequestCharge != 2 || resp.Region != "A" {
				t.Fatalf("inline=%v: Response %+v", inline, resp)
			}
			switch {
			case !give && resp.Diagnostics != nil:
				t.Fatalf("inline=%v: diagnostics copied for a holder that gave no place", inline)
			case give && resp.Diagnostics != h.diag:
				t.Fatalf("inline=%v: diagnostics %p, want the holder's %p", inline, resp.Diagnostics, h.diag)
			case give && (h.diag.TerminalState() != hedging.PrimaryWonPreThreshold || h.diag.PrimaryRegion() != "A"):
				t.Fatalf("inline=%v: diagnostics %v", inline, h.diag)
			}
		}
		resp, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Partition: "0"})
		if err != nil || resp.Diagnostics == nil || resp.Diagnostics.TerminalState() != hedging.PrimaryWonPreThreshold {
			t.Fatalf("inline=%v: without a holder: %v %v", inline, resp, err)
		}
	}
}
