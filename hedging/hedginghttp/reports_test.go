package hedginghttp_test

// Issue 27's table of public reports from other hedging libraries that a
// service written against this package tripped on, and issue 26 rows A3
// and A4: each is a test asserting the value the report says is right.
// Helpers are prefixed "rp".

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"hedgelab/hedging"
	"hedgelab/hedging/hedginghttp"
)

// rpGet sends a GET of url through hc with the header pairs kv, drains and
// closes the body, and returns the response (its Body consumed).
func rpGet(t *testing.T, hc *http.Client, ctx context.Context, url string, kv ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp
}

// elastic/apm-agent-go #455, kedacore/keda #7898: a wrapping RoundTripper
// must forward CloseIdleConnections. After requests to two loopback
// regions, http.Client.CloseIdleConnections closes next's connections, so
// no connection goroutine is left (the report: 4 → 13 goroutines, goleak
// failing).
func TestReportCloseIdleConnectionsForwarded(t *testing.T) {
	before := goleak.IgnoreCurrent()
	slow := make(chan struct{})
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-slow:
			case <-r.Context().Done():
			}
		}
		_, _ = io.WriteString(w, "a")
	}))
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "b") }))
	tr := &http.Transport{}
	rt, err := hedginghttp.NewRoundTripper(tr, []hedginghttp.Region{{Name: "A", URL: a.URL}, {Name: "B", URL: b.URL}},
		hedginghttp.WithThreshold(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: rt}
	for range 20 {
		rpGet(t, hc, context.Background(), a.URL+"/docs/1")
	}
	// One hedged request: both regions have a connection.
	if resp := rpGet(t, hc, context.Background(), a.URL+"/slow"); resp.Request.URL.Host != strings.TrimPrefix(b.URL, "http://") {
		t.Fatalf("hedged request answered by %s, want region B", resp.Request.URL.Host)
	}
	close(slow)
	defer a.Close()
	defer b.Close()
	hc.CloseIdleConnections()
	// The servers still run (their accept loops are ignored): only the
	// connections' goroutines, client and server side, could be left.
	if err := goleak.Find(before, goleak.IgnoreAnyFunction("net/http/httptest.(*Server).goServe.func1")); err != nil {
		t.Errorf("after CloseIdleConnections: %v", err)
	}
}

// rpCounting is a RoundTripper that counts CloseIdleConnections calls.
type rpCounting struct {
	http.RoundTripper
	closed atomic.Int32
}

func (c *rpCounting) CloseIdleConnections() { c.closed.Add(1) }

// The Transport forwards CloseIdleConnections too (hedging.Client.Do users).
func TestTransportCloseIdleConnections(t *testing.T) {
	next := &rpCounting{RoundTripper: http.DefaultTransport}
	(&hedginghttp.Transport{RoundTripper: next}).CloseIdleConnections()
	rt, err := hedginghttp.NewRoundTripper(next, []hedginghttp.Region{{Name: "A", URL: "http://a.test"}})
	if err != nil {
		t.Fatal(err)
	}
	rt.(interface{ CloseIdleConnections() }).CloseIdleConnections()
	if n := next.closed.Load(); n != 2 {
		t.Errorf("next.CloseIdleConnections called %d times, want 2", n)
	}
}

// vercel/fetch-retry PR #31: the standard Retry-After header, in seconds
// or as an HTTP-date, is honoured (the report: 3 requests in 12 ms to a
// region that asked for a 1 s pause). A region answering 429 with
// Retry-After: 1 is asked again 1 s later, and the second answer is
// returned; a wait above the cap (hedging.DefaultMaxRetryAfter, 30 s) is
// not waited: the 429 is returned at once.
func TestReportStandardRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name     string
		value    func(now time.Time) string
		wantGap  time.Duration // between the first two requests; 0: only one request
		wantCode int
	}{
		{"seconds", func(time.Time) string { return "1" }, time.Second, 200},
		{"HTTP-date", func(now time.Time) string { return now.Add(2 * time.Second).UTC().Format(http.TimeFormat) }, 2 * time.Second, 200},
		{"date in the past", func(now time.Time) string { return now.Add(-time.Hour).UTC().Format(http.TimeFormat) }, 5 * time.Millisecond, 200},
		{"above the 30 s cap", func(time.Time) string { return "31" }, 0, 429},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newStNet(t)
				var mu sync.Mutex
				var at []time.Time
				urlA := n.serve("a.test:80", func(w http.ResponseWriter, _ *http.Request) {
					mu.Lock()
					at = append(at, time.Now())
					first := len(at) == 1
					mu.Unlock()
					if first {
						w.Header().Set(hedginghttp.HeaderRetryAfter, tc.value(time.Now()))
						w.WriteHeader(http.StatusTooManyRequests)
					}
				})
				hc := stRegions(t, n, []hedginghttp.Region{{Name: "A", URL: urlA}}, hedginghttp.WithThreshold(time.Hour))
				resp := rpGet(t, hc, context.Background(), urlA+"/docs/1")
				mu.Lock()
				defer mu.Unlock()
				if resp.StatusCode != tc.wantCode {
					t.Errorf("status %d, want %d", resp.StatusCode, tc.wantCode)
				}
				switch {
				case tc.wantGap == 0 && len(at) != 1:
					t.Errorf("%d requests, want 1 (the wait is above the cap)", len(at))
				case tc.wantGap > 0 && (len(at) != 2 || at[1].Sub(at[0]) != tc.wantGap):
					t.Errorf("requests at %v, want two %v apart", at, tc.wantGap)
				}
			})
		})
	}
}

// Azure/azure-sdk-for-python PR #39883: mark an endpoint unavailable only
// after consecutive failures. Region A answers 503 to 30% of requests
// (the 3rd, 6th and 9th of every 10) and never twice in a row; the leg's
// local retry of a 503 goes to A again (§8.4) and is answered. With the
// spec's rule the first 503 benches A for 5 s and A serves 3 of 100 reads
// (two, then the retry of the third; the report: 3.7% with random 503s);
// WithUnavailable(2, 5 s) keeps A primary and A serves all 100.
func TestReportConsecutive503s(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []hedginghttp.Option
		served int // reads A answered with 200
	}{
		{"spec rule: one 503 marks", nil, 3},
		{"two consecutive 503s mark", []hedginghttp.Option{hedginghttp.WithUnavailable(2, 5*time.Second)}, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newStNet(t)
				var k atomic.Int32
				var okA atomic.Int32
				urlA := n.serve("a.test:80", func(w http.ResponseWriter, _ *http.Request) {
					if i := k.Add(1) - 1; i%10 == 2 || i%10 == 5 || i%10 == 8 {
						w.WriteHeader(http.StatusServiceUnavailable)
						return
					}
					okA.Add(1)
				})
				urlB := n.serve("b.test:80", func(http.ResponseWriter, *http.Request) {})
				hc := stRoundTripper(t, n, urlA, urlB, append([]hedginghttp.Option{hedginghttp.WithThreshold(time.Second)}, tc.opts...)...)
				for range 100 {
					if resp := rpGet(t, hc, context.Background(), urlA+"/docs/1"); resp.StatusCode != 200 {
						t.Fatalf("status %d", resp.StatusCode)
					}
					time.Sleep(time.Millisecond)
				}
				if got := int(okA.Load()); got != tc.served {
					t.Errorf("region A served %d of 100 reads, want %d", got, tc.served)
				}
			})
		})
	}
}

// WithUnavailable's arguments are checked.
func TestWithUnavailableErrors(t *testing.T) {
	for _, o := range []hedginghttp.Option{hedginghttp.WithUnavailable(0, time.Second), hedginghttp.WithUnavailable(2, 0)} {
		if _, err := hedginghttp.NewRoundTripper(http.DefaultTransport, []hedginghttp.Region{{Name: "A", URL: "http://a.test"}}, o); err == nil {
			t.Error("NewRoundTripper accepted an invalid WithUnavailable")
		}
	}
}

// Azure/azure-sdk-for-python PRs #42584, #45141: switch hedging off for one
// request. Region A answers after 100 ms, the threshold is 10 ms: a plain
// request is hedged (B answers); one made with WithoutHedging's context,
// or carrying X-Hedgelab-Hedging: off, goes to A alone, and the header
// does not reach the service.
func TestReportPerRequestOptOut(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		kv     []string
		hedged bool
	}{
		{"default", context.Background(), nil, true},
		{"context", hedginghttp.WithoutHedging(context.Background()), nil, false},
		{"header", context.Background(), []string{hedginghttp.HeaderHedging, "off"}, false},
		{"header on", context.Background(), []string{hedginghttp.HeaderHedging, "on"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newStNet(t)
				var leaked atomic.Int32
				check := func(r *http.Request) {
					if _, ok := r.Header[hedginghttp.HeaderHedging]; ok {
						leaked.Add(1)
					}
				}
				urlA := n.serve("a.test:80", func(w http.ResponseWriter, r *http.Request) {
					check(r)
					stWait(r, 100*time.Millisecond)
				})
				urlB := n.serve("b.test:80", func(_ http.ResponseWriter, r *http.Request) { check(r) })
				hc := stRoundTripper(t, n, urlA, urlB, hedginghttp.WithThreshold(10*time.Millisecond))
				resp := rpGet(t, hc, tc.ctx, urlA+"/docs/1", tc.kv...)
				synctest.Wait()
				wantHost, wantB := "a.test:80", 0
				if tc.hedged {
					wantHost, wantB = "b.test:80", 1
				}
				if resp.Request.URL.Host != wantHost || n.hitCount("b.test:80") != wantB {
					t.Errorf("answered by %s, region B asked %d times; want %s and %d", resp.Request.URL.Host, n.hitCount("b.test:80"), wantHost, wantB)
				}
				if leaked.Load() != 0 && tc.kv != nil && tc.kv[1] == "off" {
					t.Errorf("%s reached the service", hedginghttp.HeaderHedging)
				}
			})
		})
	}
}

// Issue 26 A4: a Cosmos DB query page is a POST with
// x-ms-documentdb-isquery: True, hedged as the .NET and Java SDKs hedge
// every query page, without an Idempotency-Key: region A answers after
// 100 ms, the threshold is 10 ms, so B answers with the same query body.
// A POST without the header is still sent once.
func TestReportQueryPostHedged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		query  bool
		hedged bool
	}{{"query", true, true}, {"other POST", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newStNet(t)
				var bodyB atomic.Value
				urlA := n.serve("a.test:80", func(w http.ResponseWriter, r *http.Request) { stWait(r, 100*time.Millisecond) })
				urlB := n.serve("b.test:80", func(_ http.ResponseWriter, r *http.Request) {
					b, _ := io.ReadAll(r.Body)
					bodyB.Store(string(b))
				})
				hc := stRoundTripper(t, n, urlA, urlB, hedginghttp.WithThreshold(10*time.Millisecond))
				const q = `{"query":"SELECT * FROM c"}`
				req, _ := http.NewRequest(http.MethodPost, urlA+"/dbs/d/colls/c/docs", bytes.NewReader([]byte(q)))
				if tc.query {
					req.Header.Set(hedginghttp.HeaderIsQuery, "True")
				}
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_ = resp.Body.Close()
				synctest.Wait()
				if tc.hedged {
					if got, _ := bodyB.Load().(string); resp.Request.URL.Host != "b.test:80" || got != q {
						t.Errorf("answered by %s, B got body %q; want B and %q", resp.Request.URL.Host, got, q)
					}
				} else if n.hitCount("b.test:80") != 0 {
					t.Errorf("a POST without %s was hedged", hedginghttp.HeaderIsQuery)
				}
			})
		})
	}
}

// Issue 26 A3: a change-feed cursor belongs to the region that served the
// page. Region A answers the cold page 503, so it fails over (a cold
// change-feed page is not hedged, issue 26 A7) and region B serves it
// (ETag "b-1"); an ordinary http.Client sends the next page to the first
// region's URL with that ETag: it goes to B, pinned there, and A never sees
// B's cursor.
func TestReportChangeFeedCursorFollowsServingRegion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newStNet(t)
		var cursorAtA atomic.Int32
		urlA := n.serve("a.test:80", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get(hedginghttp.HeaderIfNoneMatch) != "" {
				cursorAtA.Add(1)
				w.Header().Set("Etag", "a-1")
				return
			}
			w.WriteHeader(http.StatusServiceUnavailable)
		})
		var pageB atomic.Int32
		urlB := n.serve("b.test:80", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Etag", "b-"+string(rune('0'+pageB.Add(1))))
		})
		hc := stRoundTripper(t, n, urlA, urlB, hedginghttp.WithThreshold(10*time.Millisecond))
		cf := []string{hedginghttp.HeaderAIM, hedginghttp.IncrementalFeed}
		r1 := rpGet(t, hc, context.Background(), urlA+"/feed", cf...)
		if r1.Header.Get("Etag") != "b-1" {
			t.Fatalf("cold page ETag %q, want b-1 (A failed, B serves)", r1.Header.Get("Etag"))
		}
		r2 := rpGet(t, hc, context.Background(), urlA+"/feed", append(cf, hedginghttp.HeaderIfNoneMatch, "b-1")...)
		synctest.Wait()
		if r2.Request.URL.Host != "b.test:80" || r2.Header.Get("Etag") != "b-2" || cursorAtA.Load() != 0 {
			t.Errorf("page 2 served by %s (ETag %q), A saw %d cursors; want b.test:80, b-2, 0",
				r2.Request.URL.Host, r2.Header.Get("Etag"), cursorAtA.Load())
		}
	})
}

// Issue 26 A1 with A3: when the region that served a cursor fails the page
// that sends it back (503, or a dropped connection: no final response),
// the RoundTripper forgets the cursor's serving region, so the caller's
// retry of the same cursor, addressed to the other region, resumes the
// chain there, pinned to it. A serves the cold page (ETag "a-1") and then
// fails; page 2 addressed to B's URL is pinned to A (remembered) and fails;
// its retry goes to B alone with "a-1" (A is not tried again), and B's
// cursor "b-1" then follows B even when addressed to A.
func TestReportFailedPinnedCursorResumesElsewhere(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(http.ResponseWriter)
	}{
		{"503", func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) }},
		{"dropped connection", func(http.ResponseWriter) { panic(http.ErrAbortHandler) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newStNet(t)
				var down atomic.Bool
				var cursorsAtA atomic.Int32
				urlA := n.serve("a.test:80", func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get(hedginghttp.HeaderIfNoneMatch) != "" {
						cursorsAtA.Add(1)
					}
					if down.Load() {
						tc.fail(w)
						return
					}
					w.Header().Set("Etag", "a-1")
				})
				var mu sync.Mutex
				var atB []string // the cursors B received
				urlB := n.serve("b.test:80", func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					atB = append(atB, r.Header.Get(hedginghttp.HeaderIfNoneMatch))
					mu.Unlock()
					w.Header().Set("Etag", "b-1")
				})
				hc := stRoundTripper(t, n, urlA, urlB, hedginghttp.WithThreshold(10*time.Millisecond))
				page := func(url, cursor string) (*http.Response, error) {
					req, err := http.NewRequest(http.MethodGet, url+"/feed", nil)
					if err != nil {
						t.Fatal(err)
					}
					req.Header.Set(hedginghttp.HeaderAIM, hedginghttp.IncrementalFeed)
					if cursor != "" {
						req.Header.Set(hedginghttp.HeaderIfNoneMatch, cursor)
					}
					resp, err := hc.Do(req)
					if err == nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						_ = resp.Body.Close()
					}
					return resp, err
				}
				r1, err := page(urlA, "")
				if err != nil || r1.Header.Get("Etag") != "a-1" {
					t.Fatalf("cold page: %v, ETag %q; want A's a-1", err, r1.Header.Get("Etag"))
				}
				down.Store(true)
				r2, err := page(urlB, "a-1")
				synctest.Wait()
				if err == nil && r2.StatusCode != http.StatusServiceUnavailable {
					t.Fatalf("page 2 (pinned to A, which fails): status %d, want A's failure", r2.StatusCode)
				}
				mu.Lock()
				if len(atB) != 0 {
					t.Fatalf("page 2 reached B with %q; want A alone (pinned)", atB)
				}
				mu.Unlock()
				hitsA := n.hitCount("a.test:80")
				r3, err := page(urlB, "a-1")
				synctest.Wait()
				if err != nil {
					t.Fatalf("retry addressed to B: %v", err)
				}
				mu.Lock()
				gotB := append([]string(nil), atB...)
				mu.Unlock()
				if r3.Request.URL.Host != "b.test:80" || r3.Header.Get("Etag") != "b-1" || len(gotB) != 1 || gotB[0] != "a-1" ||
					n.hitCount("a.test:80") != hitsA {
					t.Errorf("retry served by %s (ETag %q), B saw cursors %q, A hit %d more times; want b.test:80, b-1, [a-1], 0",
						r3.Request.URL.Host, r3.Header.Get("Etag"), gotB, n.hitCount("a.test:80")-hitsA)
				}
				r4, err := page(urlA, "b-1")
				synctest.Wait()
				if err != nil || r4.Request.URL.Host != "b.test:80" {
					t.Errorf("page 4 (B's cursor addressed to A): %v, served by %v; want b.test:80", err, r4)
				}
				if cursorsAtA.Load() < 1 {
					t.Errorf("A saw no cursor; want page 2 pinned there")
				}
			})
		})
	}
}

var _ = hedging.Primary
