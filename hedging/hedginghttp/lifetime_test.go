package hedginghttp_test

// Tests of how long what NewRoundTripper returns lives (issue 18 #1, #2),
// of the retry-after cap through HTTP (#5) and of the header parsing (#5,
// #6). Helpers are prefixed "lt".

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/hedginghttp"
)

// ltChunk is one chunk of the streamed document.
var ltChunk = strings.Repeat("x", 1024)

// ltLoopback starts two real loopback servers, A and B, and a RoundTripper
// over them hedging after 50 ms. Region A serves
//
//   - /stream: 32 chunks of 1 KB, flushed one by one;
//   - /held: one chunk, then the rest once the test sends on release;
//   - /slow: nothing until the client goes away (a leg to cancel);
//   - /stall: one chunk, then nothing until the client goes away.
//
// Region B serves the same, except that it answers /slow with "B" at once.
func ltLoopback(t *testing.T, release <-chan struct{}) *http.Client {
	t.Helper()
	serve := func(region string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ltServe(w, r, region, release)
		}))
	}
	a, b := serve("A"), serve("B")
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		a.Close()
		b.Close()
	})
	rt, err := hedginghttp.NewRoundTripper(tr, []hedginghttp.Region{{Name: "A", URL: a.URL}, {Name: "B", URL: b.URL}},
		hedginghttp.WithThreshold(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	// The client's base URL is region A's.
	return &http.Client{Transport: ltBase{rt, a.URL}}
}

// ltServe is region's handler; see ltLoopback.
func ltServe(w http.ResponseWriter, r *http.Request, region string, release <-chan struct{}) {
	f := w.(http.Flusher)
	switch r.URL.Path {
	case "/stream":
		for range 32 {
			_, _ = io.WriteString(w, ltChunk)
			f.Flush()
			runtime.Gosched()
		}
	case "/held":
		_, _ = io.WriteString(w, "part1")
		f.Flush()
		select {
		case <-release:
			_, _ = io.WriteString(w, "part2")
		case <-r.Context().Done():
		}
	case "/slow":
		if region == "B" {
			_, _ = io.WriteString(w, "B")
			return
		}
		<-r.Context().Done()
	case "/stall":
		_, _ = io.WriteString(w, ltChunk)
		f.Flush()
		<-r.Context().Done()
	}
}

// ltBase prefixes request paths with a base URL.
type ltBase struct {
	rt   http.RoundTripper
	base string
}

func (b ltBase) RoundTrip(req *http.Request) (*http.Response, error) { return b.rt.RoundTrip(req) }

func ltGet(t *testing.T, ctx context.Context, hc *http.Client, path string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, hc.Transport.(ltBase).base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return hc.Do(req)
}

// TestRoundTripperLaterRequestDoesNotCutEarlierBody (issue 18 #1, the exact
// repro on loopback): request 1 returns; request 2 is hedged and its
// primary leg cancelled; request 1's body still reads fully. It failed 20
// of 20 times when the per-operation state (and an attempt context with it)
// was pooled.
func TestRoundTripperLaterRequestDoesNotCutEarlierBody(t *testing.T) {
	release := make(chan struct{}, 20)
	hc := ltLoopback(t, release)
	for i := range 20 {
		r1, err := ltGet(t, context.Background(), hc, "/held")
		if err != nil {
			t.Fatal(err)
		}
		r2, err := ltGet(t, context.Background(), hc, "/slow")
		if err != nil {
			t.Fatal(err)
		}
		b2, _ := io.ReadAll(r2.Body)
		_ = r2.Body.Close()
		if string(b2) != "B" {
			t.Fatalf("request 2 answered %q, want B's answer (a hedge that cancelled A's leg)", b2)
		}
		release <- struct{}{}
		b1, err := io.ReadAll(r1.Body)
		_ = r1.Body.Close()
		if err != nil || string(b1) != "part1part2" {
			t.Fatalf("round %d: request 1's body read %q, %v after request 2 cancelled a leg", i, b1, err)
		}
	}
}

// TestRoundTripperStress (run with -race): goroutines stream 32 KB bodies
// while others' primary legs are cancelled by hedges, others cancel their
// context mid-body and others' deadlines pass mid-body. Every streamed body
// reads whole; every ended context ends its body with its own error.
func TestRoundTripperStress(t *testing.T) {
	hc := ltLoopback(t, nil)
	want := strings.Repeat(ltChunk, 32)
	var wg sync.WaitGroup
	for g := range 12 {
		wg.Go(func() {
			for range 15 {
				switch g % 4 {
				case 0, 1: // streams
					r, err := ltGet(t, context.Background(), hc, "/stream")
					if err != nil {
						t.Error(err)
						return
					}
					got, err := io.ReadAll(r.Body)
					_ = r.Body.Close()
					if err != nil || string(got) != want {
						t.Errorf("streamed body: %d bytes, %v; want %d bytes", len(got), err, len(want))
						return
					}
				case 2: // a hedge cancels the primary leg
					r, err := ltGet(t, context.Background(), hc, "/slow")
					if err != nil {
						t.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, r.Body)
					_ = r.Body.Close()
				case 3: // cancel, or a deadline, mid-body
					ctx, cancel := context.WithCancel(context.Background())
					wantErr := context.Canceled
					if g%8 == 7 {
						ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
						wantErr = context.DeadlineExceeded
					}
					r, err := ltGet(t, ctx, hc, "/stall")
					if err != nil {
						cancel()
						if !errors.Is(err, wantErr) {
							t.Error(err)
						}
						return
					}
					if wantErr == context.Canceled {
						// The deadline may pass at any time; a cancel comes
						// after the first chunk.
						if _, err := io.ReadFull(r.Body, make([]byte, len(ltChunk))); err != nil {
							t.Errorf("first chunk: %v", err)
						}
						cancel()
					}
					_, err = io.ReadAll(r.Body)
					_ = r.Body.Close()
					cancel()
					if !errors.Is(err, wantErr) {
						t.Errorf("stalled body after the context ended: %v, want %v", err, wantErr)
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestRoundTripperBodyFollowsCallerContext (issue 18 #2): a body that
// stalls after its first chunk ends when the request's context is
// cancelled or its deadline passes, or when WithTimeout's bound passes, with
// that context error, as through a plain http.Transport.
func TestRoundTripperBodyFollowsCallerContext(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []hedginghttp.Option
		ctx  func() (context.Context, func())
		want error
	}{
		{"cancel at 300 ms", nil, func() (context.Context, func()) {
			ctx, cancel := context.WithCancel(context.Background())
			stop := time.AfterFunc(300*time.Millisecond, cancel)
			return ctx, func() { stop.Stop(); cancel() }
		}, context.Canceled},
		{"context deadline 300 ms", nil, func() (context.Context, func()) {
			return context.WithTimeout(context.Background(), 300*time.Millisecond)
		}, context.DeadlineExceeded},
		{"WithTimeout 300 ms", []hedginghttp.Option{hedginghttp.WithTimeout(300 * time.Millisecond)}, nil, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newStNet(t)
				a := n.serve("a.test:80", func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.WriteString(w, "first")
					w.(http.Flusher).Flush()
					stWait(r, 2*time.Second)
				})
				b := n.serve("b.test:80", func(w http.ResponseWriter, _ *http.Request) {})
				hc := stRoundTripper(t, n, a, b, append(tc.opts, hedginghttp.WithThreshold(time.Second))...)
				ctx := context.Background()
				if tc.ctx != nil {
					var done func()
					ctx, done = tc.ctx()
					defer done()
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a+"/doc", nil)
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				got, err := io.ReadAll(resp.Body)
				if string(got) != "first" || !errors.Is(err, tc.want) {
					t.Errorf("read %q, %v; want \"first\", %v", got, err, tc.want)
				}
			})
		})
	}
}

// ltRecordRT records the errors of the requests it passes on.
type ltRecordRT struct {
	next http.RoundTripper
	mu   sync.Mutex
	errs []error
}

func (r *ltRecordRT) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
	return resp, err
}

// TestRoundTripperDeadlineEndsAttemptWithDeadlineExceeded: an attempt that
// the operation's deadline (WithTimeout) ends fails in net/http with
// context.DeadlineExceeded, not context.Canceled.
func TestRoundTripperDeadlineEndsAttemptWithDeadlineExceeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newStNet(t)
		a := n.serve("a.test:80", func(w http.ResponseWriter, r *http.Request) { stWait(r, time.Hour) })
		b := n.serve("b.test:80", func(w http.ResponseWriter, r *http.Request) { stWait(r, time.Hour) })
		rec := &ltRecordRT{next: n.tr}
		rt, err := hedginghttp.NewRoundTripper(rec, []hedginghttp.Region{{Name: "A", URL: a}, {Name: "B", URL: b}},
			hedginghttp.WithThreshold(50*time.Millisecond), hedginghttp.WithTimeout(100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, a+"/doc", nil)
		if _, err := rt.RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("RoundTrip: %v, want DeadlineExceeded", err)
		}
		synctest.Wait() // the abandoned attempts return
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.errs) != 2 {
			t.Fatalf("%d attempts, want 2", len(rec.errs))
		}
		for i, err := range rec.errs {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("attempt %d: %v, want DeadlineExceeded", i, err)
			}
		}
	})
}

// TestRoundTripperRetryAfter (issue 18 #5): a 429 whose retry-after the
// race will not wait (beyond the 30 s cap, or past the deadline) is
// returned at once, after one request; 9.2e12 ms must not wait ~292 years,
// 9.3e12 ms must not overflow to a 5 ms backoff, and 60 s with a 30 s
// timeout must not wait the 30 s. A short retry-after is honoured (three
// requests, the default MaxAttempts). Time is the bubble's fake time: the
// in-memory network takes none.
func TestRoundTripperRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name, header string
		opts         []hedginghttp.Option
		wantHits     int
		wantAt       time.Duration // (fake) time RoundTrip returns at
	}{
		{"9.2e12 ms", "9.2e12", nil, 1, 0},
		{"9.3e12 ms", "9.3e12", nil, 1, 0},
		{"60 s with WithTimeout 30 s", "60000", []hedginghttp.Option{hedginghttp.WithTimeout(30 * time.Second)}, 1, 0},
		{"31 s (over the cap)", "31000", nil, 1, 0},
		{"10 ms", "10", nil, 3, 20 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newStNet(t)
				a := n.serve("a.test:80", func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set(hedginghttp.HeaderRetryAfterMs, tc.header)
					w.WriteHeader(http.StatusTooManyRequests)
				})
				b := n.serve("b.test:80", func(w http.ResponseWriter, _ *http.Request) {})
				hc := stRoundTripper(t, n, a, b, append(tc.opts, hedginghttp.WithThreshold(time.Hour))...)
				start := time.Now()
				resp, err := hc.Get(a + "/doc")
				if err != nil {
					t.Fatalf("err %v, want the 429", err)
				}
				at := time.Since(start)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusTooManyRequests || n.hitCount("a.test:80") != tc.wantHits || at != tc.wantAt {
					t.Errorf("status %d after %d requests at %v, want 429 after %d at %v",
						resp.StatusCode, n.hitCount("a.test:80"), at, tc.wantHits, tc.wantAt)
				}
			})
		})
	}
}

// ltHeaderRT answers every request with the given headers.
type ltHeaderRT http.Header

func (h ltHeaderRT) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 429, Header: http.Header(h), Body: http.NoBody}, nil
}

// TestTransportChargeAndRetryAfterHeaders (issue 18 #5, #6): a request
// charge that is not a finite number >= 0 reads as zero; a retry-after
// that is not a finite number > 0 reads as zero, and one beyond the largest
// Duration saturates at it (9.3e12 ms used to overflow to a negative
// Duration, hence the 5 ms default backoff).
func TestTransportChargeAndRetryAfterHeaders(t *testing.T) {
	for _, tc := range []struct {
		charge, retry string
		wantCharge    float64
		wantRetry     time.Duration
	}{
		{"2.5", "12", 2.5, 12 * time.Millisecond},
		{" 1 ", " 0.5 ", 1, 500 * time.Microsecond},
		{"", "", 0, 0},
		{"NaN", "NaN", 0, 0},
		{"Inf", "Inf", 0, 0},
		{"+Inf", "+Inf", 0, 0},
		{"-Inf", "-Inf", 0, 0},
		{"-1", "-5", 0, 0},
		{"0", "0", 0, 0},
		{"garbage", "garbage", 0, 0},
		{"1e400", "1e400", 0, 0}, // out of float64's range: a parse error
		{"3", "9.2e12", 3, 9_200_000_000_000_000_000},
		{"3", "9.3e12", 3, time.Duration(1<<63 - 1)},
		{"3", "1e300", 3, time.Duration(1<<63 - 1)},
	} {
		h := http.Header{}
		if tc.charge != "" {
			h.Set(hedginghttp.HeaderRequestCharge, tc.charge)
		}
		if tc.retry != "" {
			h.Set(hedginghttp.HeaderRetryAfterMs, tc.retry)
		}
		tr := &hedginghttp.Transport{RoundTripper: ltHeaderRT(h), BaseURLs: map[string]string{"k": "http://a.test"}}
		res := tr.Send(context.Background(), &hedging.Operation{}, hedging.Attempt{Endpoint: hedging.Endpoint{Region: "A", Key: "k"}})
		_ = res.Body.Close()
		if res.Err != nil || res.RequestCharge != tc.wantCharge || res.RetryAfter != tc.wantRetry {
			t.Errorf("charge %q, retry-after %q: RequestCharge %v, RetryAfter %v (err %v); want %v, %v",
				tc.charge, tc.retry, res.RequestCharge, res.RetryAfter, res.Err, tc.wantCharge, tc.wantRetry)
		}
	}
}
