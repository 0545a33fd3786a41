package hedging_test

// Tests of what Client.Do hands out and how long it lives (issue 18 #1, #2,
// #5 and the deadline cause): attempt contexts, the winner's body, the
// retry-after cap. Helpers are prefixed "lf".

import (
	"context"
	"errors"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"hedgelab/hedging"
)

// lfCtxBody is a body that reads through its attempt's context, as
// net/http's does: Read returns data while the context is live, and the
// context's cause once it is done (blocking until then when block is set).
type lfCtxBody struct {
	ctx   context.Context
	block bool
	data  string
	off   int
}

func (b *lfCtxBody) Read(p []byte) (int, error) {
	if b.block {
		<-b.ctx.Done()
	}
	if b.ctx.Err() != nil {
		return 0, context.Cause(b.ctx)
	}
	if b.off == len(b.data) {
		return 0, io.EOF
	}
	n := copy(p, b.data[b.off:])
	b.off += n
	return n, nil
}

func (b *lfCtxBody) Close() error { return nil }

// lfContext returns the context mk makes (Background when mk is nil) and
// releases it when the test ends.
func lfContext(t *testing.T, mk func() (context.Context, func())) context.Context {
	if mk == nil {
		return context.Background()
	}
	ctx, done := mk()
	t.Cleanup(done)
	return ctx
}

// lfAttemptSeen is what a transport saw of its attempt's context once it was
// done.
type lfAttemptSeen struct {
	leg        hedging.Leg
	err, cause error
	childCause error // of a context derived from it (as net/http derives one)
}

// TestDoAttemptCancelCause: an attempt ended by the operation's deadline
// sees context.DeadlineExceeded (Err and Cause, and in a derived context),
// not Canceled; a loser sees Canceled; a caller's cancellation cause reaches
// the attempt.
func TestDoAttemptCancelCause(t *testing.T) {
	errMine := errors.New("caller gave up")
	for _, tc := range []struct {
		name      string
		threshold time.Duration
		timeout   time.Duration // op.Timeout
		ctx       func() (context.Context, func())
		altAnswer bool // the alternate answers at 60 ms; otherwise every leg waits to be cancelled
		wantErr   map[hedging.Leg]error
		wantCause map[hedging.Leg]error
	}{
		{
			name: "op.Timeout before the threshold", threshold: time.Second, timeout: 100 * time.Millisecond,
			wantErr:   map[hedging.Leg]error{hedging.Primary: context.DeadlineExceeded},
			wantCause: map[hedging.Leg]error{hedging.Primary: context.DeadlineExceeded},
		},
		{
			name: "op.Timeout during a hedge (harvested)", threshold: 50 * time.Millisecond, timeout: 100 * time.Millisecond,
			wantErr:   map[hedging.Leg]error{hedging.Primary: context.DeadlineExceeded, hedging.Alternate: context.DeadlineExceeded},
			wantCause: map[hedging.Leg]error{hedging.Primary: context.DeadlineExceeded, hedging.Alternate: context.DeadlineExceeded},
		},
		{
			name: "caller's deadline", threshold: time.Second,
			ctx: func() (context.Context, func()) {
				return context.WithTimeout(context.Background(), 100*time.Millisecond)
			},
			wantErr:   map[hedging.Leg]error{hedging.Primary: context.DeadlineExceeded},
			wantCause: map[hedging.Leg]error{hedging.Primary: context.DeadlineExceeded},
		},
		{
			name: "loser of a race", threshold: 50 * time.Millisecond, altAnswer: true,
			wantErr:   map[hedging.Leg]error{hedging.Primary: context.Canceled},
			wantCause: map[hedging.Leg]error{hedging.Primary: context.Canceled},
		},
		{
			name: "caller cancels with a cause", threshold: time.Second,
			ctx: func() (context.Context, func()) {
				ctx, cancel := context.WithCancelCause(context.Background())
				stop := time.AfterFunc(30*time.Millisecond, func() { cancel(errMine) })
				return ctx, func() { stop.Stop(); cancel(nil) }
			},
			wantErr:   map[hedging.Leg]error{hedging.Primary: context.Canceled},
			wantCause: map[hedging.Leg]error{hedging.Primary: errMine},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var seen []lfAttemptSeen
				tr := dtSendFunc(func(ctx context.Context, _ *hedging.Operation, a hedging.Attempt) hedging.Result {
					if tc.altAnswer && a.Leg == hedging.Alternate {
						time.Sleep(10 * time.Millisecond)
						return dtOK(200)
					}
					child, stop := context.WithCancel(ctx)
					defer stop()
					<-ctx.Done()
					mu.Lock()
					seen = append(seen, lfAttemptSeen{a.Leg, ctx.Err(), context.Cause(ctx), context.Cause(child)})
					mu.Unlock()
					return hedging.Result{Err: ctx.Err()}
				})
				c := dtClient(t, dtHedgingCfg(tc.threshold, "A", "B"), tr)
				ctx := lfContext(t, tc.ctx)
				_, _ = c.Do(ctx, &hedging.Operation{Kind: hedging.PointRead, Timeout: tc.timeout})
				synctest.Wait() // abandoned attempts finish
				mu.Lock()
				defer mu.Unlock()
				if len(seen) != len(tc.wantErr) {
					t.Fatalf("%d attempts cancelled (%+v), want %d", len(seen), seen, len(tc.wantErr))
				}
				for _, s := range seen {
					if s.err != tc.wantErr[s.leg] || s.cause != tc.wantCause[s.leg] || s.childCause != tc.wantCause[s.leg] {
						t.Errorf("%v: Err %v, Cause %v, derived Cause %v; want Err %v, Cause %v",
							s.leg, s.err, s.cause, s.childCause, tc.wantErr[s.leg], tc.wantCause[s.leg])
					}
				}
			})
		})
	}
}

// TestDoBodyFollowsCallerContext (issue 18 #2): the body Do hands out reads
// through its attempt's context, which ends when the caller's context ends
// or the operation's deadline passes, as net/http's own client does; the
// deadline of op.Timeout bounds the body too.
func TestDoBodyFollowsCallerContext(t *testing.T) {
	errMine := errors.New("caller gave up")
	for _, tc := range []struct {
		name    string
		timeout time.Duration // op.Timeout
		ctx     func() (context.Context, func())
		want    error
	}{
		{"cancel", 0, func() (context.Context, func()) {
			ctx, cancel := context.WithCancel(context.Background())
			stop := time.AfterFunc(300*time.Millisecond, cancel)
			return ctx, func() { stop.Stop(); cancel() }
		}, context.Canceled},
		{"cancel with a cause", 0, func() (context.Context, func()) {
			ctx, cancel := context.WithCancelCause(context.Background())
			stop := time.AfterFunc(300*time.Millisecond, func() { cancel(errMine) })
			return ctx, func() { stop.Stop(); cancel(nil) }
		}, errMine},
		{"context deadline", 0, func() (context.Context, func()) {
			return context.WithTimeout(context.Background(), 300*time.Millisecond)
		}, context.DeadlineExceeded},
		{"op.Timeout", 300 * time.Millisecond, nil, context.DeadlineExceeded},
		{"op.Timeout earlier than the context's deadline", 300 * time.Millisecond, func() (context.Context, func()) {
			return context.WithTimeout(context.Background(), time.Hour)
		}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := dtSendFunc(func(ctx context.Context, _ *hedging.Operation, _ hedging.Attempt) hedging.Result {
					res := dtOK(200)
					res.Body = &lfCtxBody{ctx: ctx, block: true}
					return res
				})
				c := dtClient(t, dtHedgingCfg(time.Second, "A", "B"), tr)
				ctx := lfContext(t, tc.ctx)
				resp, err := c.Do(ctx, &hedging.Operation{Kind: hedging.PointRead, Timeout: tc.timeout})
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Result.Body.Close()
				if _, err := io.ReadAll(resp.Result.Body); !errors.Is(err, tc.want) {
					t.Errorf("read: %v, want %v", err, tc.want)
				}
			})
		})
	}
}

// TestDoBodyCloseReleases: Close ends the attempt's context at once (cause
// context.Canceled), and the caller's later cancellation no longer reaches
// it.
func TestDoBodyCloseReleases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var actx atomic.Pointer[context.Context]
		tr := dtSendFunc(func(ctx context.Context, _ *hedging.Operation, _ hedging.Attempt) hedging.Result {
			actx.Store(&ctx)
			res := dtOK(200)
			res.Body = &lfCtxBody{ctx: ctx, data: "doc"}
			return res
		})
		c := dtClient(t, dtHedgingCfg(time.Second, "A", "B"), tr)
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		resp, err := c.Do(ctx, &hedging.Operation{Kind: hedging.PointRead, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		a := *actx.Load()
		if a.Err() != nil {
			t.Fatalf("winner's context done before the body was closed: %v", a.Err())
		}
		if got, err := io.ReadAll(resp.Result.Body); err != nil || string(got) != "doc" {
			t.Fatalf("read %q, %v", got, err)
		}
		_ = resp.Result.Body.Close()
		if context.Cause(a) != context.Canceled {
			t.Errorf("after Close: cause %v, want context.Canceled", context.Cause(a))
		}
		cancel(errors.New("later"))
		time.Sleep(2 * time.Minute) // past op.Timeout: its timer was stopped
		if context.Cause(a) != context.Canceled {
			t.Errorf("after the caller's cancel: cause %v, want context.Canceled from Close", context.Cause(a))
		}
	})
}

// TestDoErrorBodyFollowsCallerContext: the transient body handed out in
// Error.Body is governed like a winner's.
func TestDoErrorBodyFollowsCallerContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := dtSendFunc(func(ctx context.Context, _ *hedging.Operation, _ hedging.Attempt) hedging.Result {
			return hedging.Result{Status: hedging.Status{Code: 500}, Body: &lfCtxBody{ctx: ctx, block: true}}
		})
		c := dtClient(t, dtHedgingCfg(time.Second, "A", "B"), tr)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, err := c.Do(ctx, &hedging.Operation{Kind: hedging.PointRead})
		var he *hedging.Error
		if !errors.As(err, &he) || he.Body == nil {
			t.Fatalf("err = %v, want a 500 with its body", err)
		}
		defer he.Body.Close()
		time.AfterFunc(100*time.Millisecond, cancel)
		if _, err := io.ReadAll(he.Body); !errors.Is(err, context.Canceled) {
			t.Errorf("read: %v, want context.Canceled", err)
		}
	})
}

// lfRaceTransport answers partition "stream" at once with a body that
// reads through its attempt's context, and partition "cut" through the
// alternate only: its primary waits until the race cancels it.
var lfRaceTransport = dtSendFunc(func(ctx context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result {
	if op.Partition == "cut" && a.Leg == hedging.Primary {
		<-ctx.Done()
		return hedging.Result{Err: ctx.Err()}
	}
	res := dtOK(200)
	res.Body = &lfCtxBody{ctx: ctx, data: "the whole document"}
	return res
})

// lfStream returns an operation on partition "stream" that hedges after an
// hour, or on "cut" that hedges after 1 ms.
func lfOp(partition string) *hedging.Operation {
	th := time.Hour
	if partition == "cut" {
		th = time.Millisecond
	}
	return &hedging.Operation{Kind: hedging.PointRead, Partition: partition,
		Strategy: hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(th)))}
}

// TestDoLaterOperationDoesNotCutEarlierBody (issue 18 #1, the exact
// repro, in real time): operation 1 returns; operation 2 on the same client
// cancels its primary leg; operation 1's body still reads fully. It failed
// 20 of 20 times when the per-operation state was pooled.
func TestDoLaterOperationDoesNotCutEarlierBody(t *testing.T) {
	c := dtClient(t, hedging.Config{Regions: []hedging.Endpoint{{Region: "A", Key: "ep-A"}, {Region: "B", Key: "ep-B"}}}, lfRaceTransport)
	for i := range 20 {
		r1, err := c.Do(context.Background(), lfOp("stream"))
		if err != nil {
			t.Fatal(err)
		}
		r2, err := c.Do(context.Background(), lfOp("cut"))
		if err != nil || r2.Leg != hedging.Alternate {
			t.Fatalf("operation 2: %v, %v; want the alternate's answer", r2, err)
		}
		_ = r2.Result.Body.Close()
		got, err := io.ReadAll(r1.Result.Body)
		_ = r1.Result.Body.Close()
		if err != nil || string(got) != "the whole document" {
			t.Fatalf("round %d: operation 1's body read %q, %v after operation 2 cancelled a leg", i, got, err)
		}
	}
}

// TestDoBodiesUnderConcurrentCancellation (issue 18 #1 under load, run with
// -race): goroutines reading bodies while others' legs are cancelled and
// others' contexts end; every body of a live context reads fully.
func TestDoBodiesUnderConcurrentCancellation(t *testing.T) {
	c := dtClient(t, hedging.Config{Regions: []hedging.Endpoint{{Region: "A", Key: "ep-A"}, {Region: "B", Key: "ep-B"}}}, lfRaceTransport)
	var wg sync.WaitGroup
	for g := range 12 {
		wg.Go(func() {
			for range 40 {
				switch g % 3 {
				case 0: // streams
					r, err := c.Do(context.Background(), lfOp("stream"))
					if err != nil {
						t.Error(err)
						return
					}
					for range 3 {
						time.Sleep(10 * time.Microsecond) // let others cancel meanwhile
					}
					got, err := io.ReadAll(r.Result.Body)
					_ = r.Result.Body.Close()
					if err != nil || string(got) != "the whole document" {
						t.Errorf("body read %q, %v", got, err)
						return
					}
				case 1: // cancels a leg
					r, err := c.Do(context.Background(), lfOp("cut"))
					if err != nil {
						t.Error(err)
						return
					}
					_ = r.Result.Body.Close()
				case 2: // its own context ends before it reads
					ctx, cancel := context.WithCancel(context.Background())
					r, err := c.Do(ctx, lfOp("stream"))
					if err != nil {
						cancel()
						t.Error(err)
						return
					}
					cancel()
					_, err = io.ReadAll(r.Result.Body)
					_ = r.Result.Body.Close()
					// The attempt's context ends shortly after ctx (on
					// context.AfterFunc's goroutine): a read sees the
					// whole body or ctx's error, never another error.
					if err != nil && !errors.Is(err, context.Canceled) {
						t.Errorf("body read after cancel: %v", err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestDoRetryAfterCap (issue 18 #5): a 429's retry-after is honoured up to
// RetryOptions.MaxRetryAfter (30 s by default) and only when the wait ends
// before the operation's deadline; otherwise the 429 is returned at once.
// The values are the issue's: 9.2e12 ms (~292 years) and the largest
// Duration (what hedginghttp saturates 9.3e12 ms to).
func TestDoRetryAfterCap(t *testing.T) {
	for _, tc := range []struct {
		name       string
		retryAfter time.Duration
		timeout    time.Duration // op.Timeout; 0 = none
		maxWait    time.Duration // RetryOptions.MaxRetryAfter; 0 = default
		wantSends  int
		wantAt     time.Duration // when Do returns
	}{
		{"9.2e12 ms, no deadline", time.Duration(9.2e12 * float64(time.Millisecond)), 0, 0, 1, 0},
		{"largest Duration, no deadline", math.MaxInt64, 0, 0, 1, 0},
		{"60 s with a 30 s timeout", time.Minute, 30 * time.Second, 0, 1, 0},
		{"31 s, no deadline (over the cap)", 31 * time.Second, 0, 0, 1, 0},
		{"30 s, no deadline (the cap)", 30 * time.Second, 0, 0, 3, time.Minute},
		{"10 s with a 15 s timeout: honoured once, then not (20 s > 15 s)", 10 * time.Second, 15 * time.Second, 0, 2, 10 * time.Second},
		{"1 s with MaxRetryAfter 500 ms", time.Second, 0, 500 * time.Millisecond, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sends atomic.Int32
				tr := dtSendFunc(func(context.Context, *hedging.Operation, hedging.Attempt) hedging.Result {
					sends.Add(1)
					return hedging.Result{Status: hedging.Status{Code: 429}, RetryAfter: tc.retryAfter}
				})
				cfg := dtHedgingCfg(time.Hour, "A", "B")
				cfg.Retry.MaxRetryAfter = tc.maxWait
				c := dtClient(t, cfg, tr)
				start := time.Now()
				_, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Timeout: tc.timeout})
				var he *hedging.Error
				if !errors.As(err, &he) || he.Status.Code != 429 || !errors.Is(err, hedging.ErrTransient) {
					t.Fatalf("err = %v, want the 429", err)
				}
				if n := int(sends.Load()); n != tc.wantSends {
					t.Errorf("%d attempts, want %d", n, tc.wantSends)
				}
				if d := time.Since(start); d != tc.wantAt {
					t.Errorf("returned after %v, want %v", d, tc.wantAt)
				}
			})
		})
	}
}

// TestNewClientRejectsNegativeMaxRetryAfter: a negative cap is an error.
func TestNewClientRejectsNegativeMaxRetryAfter(t *testing.T) {
	cfg := dtHedgingCfg(time.Second, "A", "B")
	cfg.Retry.MaxRetryAfter = -time.Second
	if _, err := hedging.NewClient(cfg); err == nil {
		t.Error("MaxRetryAfter -1s accepted")
	}
}
