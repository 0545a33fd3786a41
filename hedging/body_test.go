package hedging_test

// Tests for issue 11 items 2, 3, 7 and 8 at the level of Client.Do: bodies,
// transport panics, the spawn cause, the Observer and slog's context.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"hedgelab/hedging"
)

// trackedBody is a response body that records whether it was closed.
type trackedBody struct {
	io.Reader
	closed atomic.Bool
}

func (b *trackedBody) Close() error { b.closed.Store(true); return nil }

func newBody(s string) *trackedBody { return &trackedBody{Reader: strings.NewReader(s)} }

// unwrapBody returns the transport's body behind a body Client.Do handed
// out (nil for nil).
func unwrapBody(b io.ReadCloser) io.ReadCloser {
	if u, ok := b.(interface{ Unwrap() io.ReadCloser }); ok {
		return u.Unwrap()
	}
	return b
}

// A tie between two final answers: the primary's body reaches the caller
// unread and open; the alternate's is closed by Do.
func TestDoWinnerBodyReturnedLoserBodyClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pb, ab := newBody("from A"), newBody("from B")
		tr := dtSendFunc(func(ctx context.Context, _ *hedging.Operation, a hedging.Attempt) hedging.Result {
			lat, b := 70*time.Millisecond, pb
			if a.Leg == hedging.Alternate {
				lat, b = 50*time.Millisecond, ab
			}
			select {
			case <-time.After(lat):
				res := dtOK(200)
				res.Body = b
				return res
			case <-ctx.Done():
				return hedging.Result{Err: ctx.Err()}
			}
		})
		c := dtClient(t, dtHedgingCfg(20*time.Millisecond, "A", "B"), tr)
		resp, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead})
		if err != nil {
			t.Fatal(err)
		}
		if unwrapBody(resp.Result.Body) != io.ReadCloser(pb) || pb.closed.Load() || !ab.closed.Load() {
			t.Fatalf("winner body %v (primary closed %v), alternate closed %v; want the primary's, open, and the alternate's closed",
				resp.Result.Body, pb.closed.Load(), ab.closed.Load())
		}
		got, _ := io.ReadAll(resp.Result.Body)
		if string(got) != "from A" {
			t.Errorf("body %q", got)
		}
	})
}

// A loser that answers after Do returned (it ignores cancellation) has its
// body closed by its own goroutine; transient bodies are closed at once.
func TestDoAbandonedAndTransientBodiesClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		late, transient := newBody("late"), newBody("busy")
		var n atomic.Int32
		tr := dtSendFunc(func(ctx context.Context, _ *hedging.Operation, a hedging.Attempt) hedging.Result {
			if a.Leg == hedging.Primary {
				if n.Add(1) == 1 {
					time.Sleep(time.Millisecond)
					return hedging.Result{Status: hedging.Status{Code: 503}, Body: transient}
				}
				return hedging.Result{Err: io.EOF}
			}
			time.Sleep(time.Second) // deaf to cancellation
			return hedging.Result{Status: hedging.Status{Code: 200}, Body: late}
		})
		cfg := dtHedgingCfg(10*time.Millisecond, "A", "B")
		c := dtClient(t, cfg, tr)
		// The primary's 503 spawns the alternate, which hangs past the
		// 100 ms timeout; the race ends at timeout + harvest window.
		_, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Timeout: 100 * time.Millisecond})
		if err == nil {
			t.Fatal("want an error")
		}
		if !transient.closed.Load() {
			t.Error("the transient 503's body was not closed")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if !late.closed.Load() {
			t.Error("the abandoned attempt's body was not closed")
		}
	})
}

// A transport that panics is reported as a transport error on its leg:
// the primary's panic upgrades into a hedge (cause transport_error) and the
// alternate's answer is returned.
func TestDoTransportPanicRecovered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := dtSendFunc(func(ctx context.Context, _ *hedging.Operation, a hedging.Attempt) hedging.Result {
			if a.Leg == hedging.Primary {
				panic("boom")
			}
			return dtOK(200)
		})
		cfg := dtHedgingCfg(time.Second, "A", "B")
		cfg.Retry.MaxAttempts = 1
		c := dtClient(t, cfg, tr)
		resp, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead})
		if err != nil {
			t.Fatal(err)
		}
		cause, ok := resp.Diagnostics.SpawnCause()
		if resp.Leg != hedging.Alternate || !ok || cause != hedging.SpawnTransportError {
			t.Errorf("leg %v cause %v %v, want alternate, transport_error", resp.Leg, cause, ok)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		tr := dtSendFunc(func(context.Context, *hedging.Operation, hedging.Attempt) hedging.Result { panic("boom") })
		c := dtClient(t, dtHedgingCfg(time.Second, "A"), tr)
		_, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead})
		if err == nil || !strings.Contains(err.Error(), "transport panicked on the primary leg") || !strings.Contains(err.Error(), "boom") {
			t.Errorf("err = %v, want the recovered panic", err)
		}
	})
}

type ctxKey struct{}

// ctxHandler is a slog handler that records each record's message, its
// cause attribute and a value of the context it was logged with.
type ctxHandler struct {
	mu   *sync.Mutex
	recs *[]string
}

func (h ctxHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h ctxHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h ctxHandler) WithGroup(string) slog.Handler            { return h }
func (h ctxHandler) Handle(ctx context.Context, r slog.Record) error {
	var b bytes.Buffer
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "cause" || a.Key == "elapsed_ms" {
			b.WriteString(" " + a.Key + "=" + a.Value.String())
		}
		return true
	})
	v, _ := ctx.Value(ctxKey{}).(string)
	b.WriteString(" ctx=" + v)
	h.mu.Lock()
	*h.recs = append(*h.recs, b.String())
	h.mu.Unlock()
	return nil
}

// Issue 11 #7 and #8: a 503 failover at 5 ms logs alternate_spawned with
// cause=503 (a threshold hedge with cause=threshold), the diagnostics record
// the cause, and every event is logged with the caller's context.
func TestDoSpawnCauseLoggedWithCallerContext(t *testing.T) {
	for _, tc := range []struct {
		name    string
		primary hedging.Result
		pLat    time.Duration
		want    hedging.SpawnCause
		wantLog string
	}{
		{"503 failover", hedging.Result{Status: hedging.Status{Code: 503}}, 5 * time.Millisecond, hedging.Spawn503,
			"cosmos.hedge.alternate_spawned elapsed_ms=5 cause=503 ctx=trace-1"},
		{"404/1002 failover", hedging.Result{Status: hedging.Status{Code: 404, SubStatus: 1002}}, 5 * time.Millisecond, hedging.SpawnSessionNotAvail,
			"cosmos.hedge.alternate_spawned elapsed_ms=5 cause=404/1002 ctx=trace-1"},
		{"429/3092 failover", hedging.Result{Status: hedging.Status{Code: 429, SubStatus: 3092}}, 5 * time.Millisecond, hedging.SpawnThrottle3092,
			"cosmos.hedge.alternate_spawned elapsed_ms=5 cause=429/3092 ctx=trace-1"},
		{"threshold", dtOK(200), time.Second, hedging.SpawnThreshold,
			"cosmos.hedge.alternate_spawned elapsed_ms=100 cause=threshold ctx=trace-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var recs []string
				cfg := dtHedgingCfg(100*time.Millisecond, "A", "B")
				cfg.Retry.MaxAttempts = 1
				cfg.Logger = slog.New(ctxHandler{&mu, &recs})
				tr := &dtTransport{start: time.Now()}
				tr.script = dtLegs(tc.pLat, tc.primary, 10*time.Millisecond, dtOK(200))
				c := dtClient(t, cfg, tr)
				ctx := context.WithValue(context.Background(), ctxKey{}, "trace-1")
				resp, err := c.Do(ctx, &hedging.Operation{Kind: hedging.PointRead})
				if err != nil {
					t.Fatal(err)
				}
				if got, ok := resp.Diagnostics.SpawnCause(); !ok || got != tc.want {
					t.Errorf("diagnostics cause %v %v, want %v", got, ok, tc.want)
				}
				found := false
				for _, r := range recs {
					if strings.HasPrefix(r, "cosmos.hedge.alternate_spawned") {
						found = r == tc.wantLog
						if !found {
							t.Errorf("log %q, want %q", r, tc.wantLog)
						}
					}
					if !strings.HasSuffix(r, "ctx=trace-1") {
						t.Errorf("event logged without the caller's context: %q", r)
					}
				}
				if !found {
					t.Errorf("no alternate_spawned event in %q", recs)
				}
			})
		})
	}
}

// recObserver records what an Observer sees.
type recObserver struct {
	mu       sync.Mutex
	attempts []hedging.AttemptEvent
	ops      []hedging.OperationEvent
	ctxVals  []string
}

func (o *recObserver) ObserveAttempt(ctx context.Context, ev hedging.AttemptEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.attempts = append(o.attempts, ev)
	v, _ := ctx.Value(ctxKey{}).(string)
	o.ctxVals = append(o.ctxVals, v)
}

func (o *recObserver) ObserveOperation(ctx context.Context, ev hedging.OperationEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ev.Diagnostics = nil // points into pooled state; checked below via fields
	o.ops = append(o.ops, ev)
	v, _ := ctx.Value(ctxKey{}).(string)
	o.ctxVals = append(o.ctxVals, v)
}

// The Observer is called once per attempt (the abandoned one included) and
// once per operation, with the caller's context.
func TestDoObserver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var returned atomic.Int32
		obs := &recObserver{}
		cfg := dtHedgingCfg(50*time.Millisecond, "A", "B")
		cfg.Observer = obs
		c := dtClient(t, cfg, hungPrimary(time.Second, 40*time.Millisecond, hedging.Result{Status: hedging.Status{Code: 200}, RequestCharge: 2.5}, &returned))
		ctx := context.WithValue(context.Background(), ctxKey{}, "trace-2")
		if _, err := c.Do(ctx, &hedging.Operation{Kind: hedging.PointRead, Partition: "p"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if len(obs.attempts) != 2 || len(obs.ops) != 1 {
			t.Fatalf("%d attempt and %d operation events, want 2 and 1", len(obs.attempts), len(obs.ops))
		}
		alt, prim := obs.attempts[0], obs.attempts[1]
		if alt.Attempt.Leg != hedging.Alternate || alt.Latency != 40*time.Millisecond || alt.Result.RequestCharge != 2.5 || alt.Abandoned {
			t.Errorf("alternate event %+v", alt)
		}
		if prim.Attempt.Leg != hedging.Primary || !prim.Abandoned || prim.Latency != 90*time.Millisecond {
			t.Errorf("primary event %+v, want abandoned after 90ms", prim)
		}
		op := obs.ops[0]
		if op.Abandoned != 1 || op.Cancelled[hedging.CancelWinnerFound] != 1 || op.WinnerRegion != "B" ||
			op.Elapsed != 90*time.Millisecond || op.RequestCharge != 2.5 || op.ConsecutiveAlternateWins != 1 {
			t.Errorf("operation event %+v", op)
		}
		for _, v := range obs.ctxVals {
			if v != "trace-2" {
				t.Errorf("observer called with context value %q", v)
			}
		}
	})
}

// Both legs transient: the *Error carries the body of the most recent
// transient response (the one whose status it reports); the earlier one is
// closed.
func TestDoErrorCarriesLastTransientBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pb, ab := newBody("busy A"), newBody("busy B")
		tr := dtSendFunc(func(ctx context.Context, _ *hedging.Operation, a hedging.Attempt) hedging.Result {
			if a.Leg == hedging.Primary {
				time.Sleep(120 * time.Millisecond)
				return hedging.Result{Status: hedging.Status{Code: 500}, Body: pb}
			}
			time.Sleep(50 * time.Millisecond)
			return hedging.Result{Status: hedging.Status{Code: 408}, Body: ab}
		})
		cfg := dtHedgingCfg(100*time.Millisecond, "A", "B")
		cfg.Retry.MaxAttempts = 1
		c := dtClient(t, cfg, tr)
		_, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead})
		var he *hedging.Error
		if !errors.As(err, &he) || he.Status.Code != 408 || unwrapBody(he.Body) != io.ReadCloser(ab) {
			t.Fatalf("err = %v (body %v), want the alternate's 408 with its body", err, he.Body)
		}
		if !pb.closed.Load() || ab.closed.Load() {
			t.Errorf("primary body closed %v, alternate body closed %v; want true, false", pb.closed.Load(), ab.closed.Load())
		}
		_ = he.Body.Close()
	})
}

// Both legs of a metadata read fail and the race ends with the primary's
// status (the primary is authoritative, its 403/1008 a regional failure,
// spec §16 Phase 2): the *Error's body is the primary's, the one whose
// status it reports, and the discarded alternate's is closed, whichever
// answered first.
func TestDoMetadataErrorBodyMatchesStatus(t *testing.T) {
	notFound := hedging.Status{Code: 403, SubStatus: hedging.SubStatusDatabaseAccountNotFound}
	for _, tc := range []struct {
		name               string
		primaryAt, altAt   time.Duration // when each leg answers, after it is sent
		primary, alternate hedging.Status
	}{
		{"alternate 500 first, primary 403/1008 after threshold", 200 * time.Millisecond, 50 * time.Millisecond, notFound, hedging.Status{Code: 500}},
		{"primary 403/1008 upgrades, alternate 500 later", 10 * time.Millisecond, 50 * time.Millisecond, notFound, hedging.Status{Code: 500}},
		{"primary 503 upgrades, alternate 403/1008 later", 10 * time.Millisecond, 50 * time.Millisecond, hedging.Status{Code: 503}, notFound},
		{"alternate 403/1008 first, primary 500 after threshold", 200 * time.Millisecond, 50 * time.Millisecond, hedging.Status{Code: 500}, notFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pb, ab := newBody("primary"), newBody("alternate")
				tr := dtSendFunc(func(ctx context.Context, _ *hedging.Operation, a hedging.Attempt) hedging.Result {
					if a.Leg == hedging.Primary {
						time.Sleep(tc.primaryAt)
						return hedging.Result{Status: tc.primary, Body: pb}
					}
					time.Sleep(tc.altAt)
					return hedging.Result{Status: tc.alternate, Body: ab}
				})
				cfg := dtHedgingCfg(100*time.Millisecond, "A", "B")
				cfg.Retry.MaxAttempts = 1
				cfg.Phase = hedging.Phase2
				c := dtClient(t, cfg, tr)
				_, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.MetadataRead})
				var he *hedging.Error
				if !errors.As(err, &he) || he.Status != tc.primary || unwrapBody(he.Body) != io.ReadCloser(pb) {
					t.Fatalf("err = %v (body %v), want the primary's %v with its body", err, he, tc.primary)
				}
				if pb.closed.Load() || !ab.closed.Load() {
					t.Errorf("primary body closed %v, alternate body closed %v; want false, true", pb.closed.Load(), ab.closed.Load())
				}
				_ = he.Body.Close()
			})
		})
	}
}
