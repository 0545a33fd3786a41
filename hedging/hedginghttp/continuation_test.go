package hedginghttp_test

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
	"hedgelab/hedging/hedginghttp"
)

// Feed pages through NewRoundTripper (spec §16 Phase 2, issue 20): a
// region-affine continuation goes to the region the request addresses
// alone (hedging.Client.Pin), even with AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE
// forcing hedging on; a portable one is hedged, or pinned by the rules'
// Policy; the response, with its next continuation, is the winner's. Region
// A ("a.test") is the first region; the handlers answer after delay[host]
// with status[host] (200 when unset) and hand out "<host>-next" as the
// next continuation in x-ms-continuation, If-None-Match's ETag and
// x-page-token.
func TestRoundTripperContinuation(t *testing.T) {
	const (
		a, b = "a.test:80", "b.test:80"
		slow = time.Second // A's delay in the slow rows; the threshold is 10 ms
	)
	cosmosQuery := map[string]string{"x-ms-continuation": "tok-1"}
	cosmosChangeFeed := map[string]string{"A-IM": "Incremental feed", "If-None-Match": `"etag-7"`}
	custom := hedginghttp.ContinuationRules{Continuation: "x-page-token", ChangeFeed: "x-feed", ChangeFeedValue: "changes", ChangeFeedContinuation: "x-feed-etag"}
	for _, tc := range []struct {
		name     string
		rules    *hedginghttp.ContinuationRules // nil: the default (Cosmos DB's)
		override bool                           // AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE=true
		to       string                         // the region the request addresses
		header   map[string]string
		delay    map[string]time.Duration
		status   map[string]int
		wantA    int // requests region A got; -1: at least one
		wantB    int
		winner   string
		code     int
	}{
		{name: "portable query continuation is hedged", to: a, header: cosmosQuery,
			delay: map[string]time.Duration{a: slow}, wantA: 1, wantB: 1, winner: b, code: 200},
		{name: "portable continuation from region B races from the first region", to: b, header: cosmosQuery,
			wantA: 1, wantB: 0, winner: a, code: 200},
		{name: "change feed pinned to the first region: no alternate while it is slow", to: a, header: cosmosChangeFeed,
			override: true, delay: map[string]time.Duration{a: slow}, wantA: 1, wantB: 0, winner: a, code: 200},
		{name: "change feed pinned to region B, which issued it", to: b, header: cosmosChangeFeed,
			override: true, delay: map[string]time.Duration{b: slow}, wantA: 0, wantB: 1, winner: b, code: 200},
		{name: "change feed pinned: a 503 does not fail over", to: a, header: cosmosChangeFeed,
			override: true, status: map[string]int{a: 503}, wantA: -1, wantB: 0, winner: a, code: 503},
		{name: "cold change feed (no ETag) is not hedged (region-affine chain, §5.1 row 4a)", to: a, header: map[string]string{"A-IM": "Incremental feed"},
			delay: map[string]time.Duration{a: slow}, wantA: 1, wantB: 0, winner: a, code: 200},
		{name: "change feed from now (If-None-Match: *) is no cursor: not pinned, fails over", to: a,
			header: map[string]string{"A-IM": "Incremental feed", "If-None-Match": "*"},
			status: map[string]int{a: 503}, wantA: 1, wantB: 1, winner: b, code: 200},
		{name: "change feed from now is not hedged", to: a, override: true,
			header: map[string]string{"A-IM": "Incremental feed", "If-None-Match": "*"},
			delay:  map[string]time.Duration{a: slow}, wantA: 1, wantB: 0, winner: a, code: 200},
		{name: "cold change feed with a portable cursor (.NET) is hedged", to: a,
			rules: &hedginghttp.ContinuationRules{Classify: func(*http.Request, hedging.OperationKind) hedging.ContinuationAffinity {
				return hedging.Portable
			}},
			header: map[string]string{"A-IM": "Incremental feed"}, delay: map[string]time.Duration{a: slow}, wantA: 1, wantB: 1, winner: b, code: 200},
		{name: "custom headers: change feed pinned", to: a, rules: &custom, override: true,
			header: map[string]string{"X-Feed": "changes", "X-Feed-Etag": "e1"},
			delay:  map[string]time.Duration{a: slow}, wantA: 1, wantB: 0, winner: a, code: 200},
		{name: "custom headers: a portable page token from region B races from A", to: b, rules: &custom,
			header: map[string]string{"X-Page-Token": "p1"}, wantA: 1, wantB: 0, winner: a, code: 200},
		{name: "custom headers: Cosmos DB's change-feed headers are a plain read", to: a, rules: &custom,
			header: cosmosChangeFeed, delay: map[string]time.Duration{a: slow}, wantA: 1, wantB: 1, winner: b, code: 200},
		{name: "custom classifier: query continuation region-affine", to: a, override: true,
			rules: &hedginghttp.ContinuationRules{Classify: func(*http.Request, hedging.OperationKind) hedging.ContinuationAffinity {
				return hedging.RegionAffine
			}},
			header: cosmosQuery, delay: map[string]time.Duration{a: slow}, wantA: 1, wantB: 0, winner: a, code: 200},
		{name: "policy pin_always pins a portable continuation to region B", to: b, override: true,
			rules:  &hedginghttp.ContinuationRules{Policy: feed.PinAlways},
			header: cosmosQuery, delay: map[string]time.Duration{b: slow}, wantA: 0, wantB: 1, winner: b, code: 200},
		{name: "policy pin_after_hedge_win: a page from the first region is not pinned", to: a,
			rules:  &hedginghttp.ContinuationRules{Policy: feed.PinAfterHedgeWin},
			header: cosmosQuery, delay: map[string]time.Duration{a: slow}, wantA: 1, wantB: 1, winner: b, code: 200},
		{name: "policy pin_after_hedge_win: a page after an alternate win is pinned", to: b, override: true,
			rules:  &hedginghttp.ContinuationRules{Policy: feed.PinAfterHedgeWin},
			header: cosmosQuery, delay: map[string]time.Duration{b: slow}, wantA: 0, wantB: 1, winner: b, code: 200},
		{name: "policy breaker_driven: breaker closed, not pinned", to: b,
			rules:  &hedginghttp.ContinuationRules{Policy: feed.BreakerDriven},
			header: cosmosQuery, wantA: 1, wantB: 0, winner: a, code: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.override {
				t.Setenv(hedging.EnvHedgingEnabledOverride, "true")
			}
			synctest.Test(t, func(t *testing.T) {
				n := newStNet(t)
				h := func(host string) http.HandlerFunc {
					return func(w http.ResponseWriter, r *http.Request) {
						if !stWait(r, tc.delay[host]) {
							return
						}
						next := strings.TrimSuffix(host, ".test:80") + "-next"
						w.Header().Set("X-Ms-Continuation", next)
						w.Header().Set("Etag", next)
						w.Header().Set("X-Page-Token", next)
						w.WriteHeader(cmp.Or(tc.status[host], 200))
						_, _ = io.WriteString(w, host)
					}
				}
				urlA, urlB := n.serve(a, h(a)), n.serve(b, h(b))
				opts := []hedginghttp.Option{hedginghttp.WithThreshold(10 * time.Millisecond)}
				if tc.rules != nil {
					opts = append(opts, hedginghttp.WithContinuation(*tc.rules))
				}
				hc := stRoundTripper(t, n, urlA, urlB, opts...)
				base := urlA
				if tc.to == b {
					base = urlB
				}
				resp, body := stGetPage(t, hc, base, tc.header)
				synctest.Wait()
				gotA, gotB := n.hitCount(a), n.hitCount(b)
				if tc.wantA < 0 && gotA < 1 || tc.wantA >= 0 && gotA != tc.wantA || gotB != tc.wantB {
					t.Errorf("requests: A %d, B %d; want A %d, B %d (-1: at least one)", gotA, gotB, tc.wantA, tc.wantB)
				}
				if resp.StatusCode != tc.code || string(body) != tc.winner {
					t.Errorf("response %d %q, want %d %q", resp.StatusCode, body, tc.code, tc.winner)
				}
				// Only the winner's continuation goes forward, and the
				// response's Request addresses the region it came from:
				// the region the next page must address.
				wantNext := strings.TrimSuffix(tc.winner, ".test:80") + "-next"
				if got := resp.Header.Get("X-Ms-Continuation"); got != wantNext {
					t.Errorf("x-ms-continuation %q, want the winner's %q", got, wantNext)
				}
				if resp.Request.URL.Host != tc.winner {
					t.Errorf("response's Request addresses %q, want the serving region %q", resp.Request.URL.Host, tc.winner)
				}
			})
		})
	}
}

// stGetPage sends a GET of a feed page with header through hc and returns
// the response with its body read and closed.
func stGetPage(t *testing.T, hc *http.Client, base string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/dbs/d/colls/c/docs", nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp, body
}

// The chain in practice (spec §16 Phase 2, A7): page 1 of a change feed is
// cold and not hedged although region A is slow (a region-affine change
// feed never is, §5.1 row 4a), page 2 addresses the region of page 1's
// response with its ETag and stays there, and B is never asked, with the
// environment forcing hedging on.
func TestRoundTripperChangeFeedChain(t *testing.T) {
	t.Setenv(hedging.EnvHedgingEnabledOverride, "true")
	synctest.Test(t, func(t *testing.T) {
		n := newStNet(t)
		var page atomic.Int32
		urlA := n.serve("a.test:80", func(w http.ResponseWriter, r *http.Request) {
			if stWait(r, time.Second) {
				w.Header().Set("Etag", fmt.Sprintf("a-etag-%d", page.Add(1)))
			}
		})
		urlB := n.serve("b.test:80", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Etag", "b-etag")
		})
		hc := stRoundTripper(t, n, urlA, urlB, hedginghttp.WithThreshold(10*time.Millisecond))
		get := func(url, etag string) *http.Response {
			h := map[string]string{hedginghttp.HeaderAIM: hedginghttp.IncrementalFeed}
			if etag != "" {
				h[hedginghttp.HeaderIfNoneMatch] = etag
			}
			resp, _ := stGetPage(t, hc, url, h)
			return resp
		}
		r1 := get(urlA, "")
		if r1.Request.URL.Host != "a.test:80" || r1.Header.Get("Etag") != "a-etag-1" {
			t.Fatalf("page 1 from %s with ETag %q, want a.test:80's a-etag-1 (not hedged)", r1.Request.URL.Host, r1.Header.Get("Etag"))
		}
		r2 := get(r1.Request.URL.Scheme+"://"+r1.Request.URL.Host, r1.Header.Get("Etag"))
		synctest.Wait()
		if r2.Header.Get("Etag") != "a-etag-2" || n.hitCount("a.test:80") != 2 || n.hitCount("b.test:80") != 0 {
			t.Errorf("page 2 ETag %q, requests A %d B %d; want a-etag-2 and A 2, B 0",
				r2.Header.Get("Etag"), n.hitCount("a.test:80"), n.hitCount("b.test:80"))
		}
	})
}

// WithContinuation rejects an unknown policy; NewRoundTripper rejects an
// environment override that does not parse.
func TestWithContinuationErrors(t *testing.T) {
	next := http.DefaultTransport
	regions := []hedginghttp.Region{{Name: "A", URL: "http://a.test"}, {Name: "B", URL: "http://b.test"}}
	if _, err := hedginghttp.NewRoundTripper(next, regions, hedginghttp.WithContinuation(hedginghttp.ContinuationRules{Policy: feed.Affinity(9)})); err == nil ||
		!strings.Contains(err.Error(), "Policy") {
		t.Errorf("unknown policy: err = %v, want one naming Policy", err)
	}
	t.Setenv(hedging.EnvHedgingEnabledOverride, "maybe")
	if _, err := hedginghttp.NewRoundTripper(next, regions); err == nil || !strings.Contains(err.Error(), hedging.EnvHedgingEnabledOverride) {
		t.Errorf("bad override: err = %v, want one naming %s", err, hedging.EnvHedgingEnabledOverride)
	}
}

// BreakerDriven (spec §9.5): after five alternate wins on a partition the
// breaker demotes region A, and a query page addressing region B is then
// pinned there, so B's slowness sends no copy to A; with the policy none the
// same page is hedged to A.
func TestRoundTripperContinuationBreakerDriven(t *testing.T) {
	for _, tc := range []struct {
		policy   feed.Affinity
		wantNewA int // requests A gets for the page after the breaker opened
	}{{feed.BreakerDriven, 0}, {feed.AffinityNone, 1}} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newStNet(t)
				var slowB atomic.Bool
				urlA := n.serve("a.test:80", func(w http.ResponseWriter, r *http.Request) {
					if !slowB.Load() {
						stWait(r, time.Second) // A slow until the breaker opened
					}
				})
				urlB := n.serve("b.test:80", func(w http.ResponseWriter, r *http.Request) {
					if slowB.Load() {
						stWait(r, time.Second)
					}
				})
				hc := stRoundTripper(t, n, urlA, urlB, hedginghttp.WithThreshold(10*time.Millisecond),
					hedginghttp.WithContinuation(hedginghttp.ContinuationRules{Policy: tc.policy}))
				get := func(url, token string) {
					h := map[string]string{}
					if token != "" {
						h[hedginghttp.HeaderContinuation] = token
					}
					stGetPage(t, hc, url, h)
				}
				for i := range hedging.DefaultConsecutiveHedgeWinThreshold {
					if i == hedging.DefaultConsecutiveHedgeWinThreshold-1 {
						time.Sleep(hedging.DefaultHedgeWinMinSpan) // fake time: the streak lasts the span
					}
					get(urlA, "") // B wins each race
				}
				synctest.Wait()
				slowB.Store(true)
				before := n.hitCount("a.test:80")
				get(urlB, "tok")
				synctest.Wait()
				if got := n.hitCount("a.test:80") - before; got != tc.wantNewA {
					t.Errorf("region A got %d requests for the page from B, want %d", got, tc.wantNewA)
				}
			})
		})
	}
}
