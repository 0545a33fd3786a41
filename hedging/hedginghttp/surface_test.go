package hedginghttp_test

// Tests of NewRoundTripper's surface (issue 18): the caller's request is
// never touched after RoundTrip returns, host spellings and region path
// prefixes, construction errors, the partition key and the per-leg hook.
// Inside testing/synctest bubbles on the in-memory network of
// roundtripper_test.go; helpers are prefixed "sf".

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/hedginghttp"
	"hedgelab/hedging/threshold"
)

// sfHit is one request a server received.
type sfHit struct {
	host, uri string
	header    http.Header
}

// sfLog records the requests of every server.
type sfLog struct {
	mu   sync.Mutex
	hits []sfHit
}

func (l *sfLog) add(host string, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hits = append(l.hits, sfHit{host, r.RequestURI, r.Header.Clone()})
}

// on returns the hits of host, in order.
func (l *sfLog) on(host string) []sfHit {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []sfHit
	for _, h := range l.hits {
		if h.host == host {
			out = append(out, h)
		}
	}
	return out
}

// sfSlowFast serves host a (answers after 1 s) and host b (answers at once
// with the request URI and its X-Req header), logging every request.
func sfSlowFast(n *stNet, log *sfLog, a, b string) (string, string) {
	ua := n.serve(a, func(w http.ResponseWriter, r *http.Request) {
		log.add(a, r)
		if stWait(r, time.Second) {
			_, _ = io.WriteString(w, "slow "+r.RequestURI)
		}
	})
	ub := n.serve(b, func(w http.ResponseWriter, r *http.Request) {
		log.add(b, r)
		_, _ = io.WriteString(w, r.RequestURI+" "+r.Header.Get("X-Req"))
	})
	return ua, ub
}

// sfGet sends req through hc and returns the status and body.
func sfGet(t *testing.T, hc *http.Client, req *http.Request) (int, string) {
	t.Helper()
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// sfHedged serves a.test (slow) and b.test (fast) as sfSlowFast does and
// returns their log, A's URL and a client hedging A to B after 10 ms with
// opts. Call it inside a bubble.
func sfHedged(t *testing.T, opts ...hedginghttp.Option) (*sfLog, string, *http.Client) {
	t.Helper()
	n := newStNet(t)
	log := new(sfLog)
	a, b := sfSlowFast(n, log, "a.test:80", "b.test:80")
	return log, a, stRoundTripper(t, n, a, b, append([]hedginghttp.Option{hedginghttp.WithThreshold(10 * time.Millisecond)}, opts...)...)
}

// Issue 18 #3: the primary leg shared the caller's header map and the
// losing leg still ran after RoundTrip returned, so a caller that reused
// req.Header after closing the body raced with it (3 races under -race).
// Each leg sends its own copy: the caller's map is never written, and
// mutating and resending req is safe while the previous request's loser
// is still being cancelled. (The race itself shows under go test -race.)
func TestRoundTripperCallerReusesRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log, a, hc := sfHedged(t)
		req, err := http.NewRequest(http.MethodGet, a+"/docs/1", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Req", "1")
		for i, want := range []string{"1", "2", "3"} {
			if i > 0 {
				req.Header.Set("X-Req", want) // the previous loser may still run
				req.Header.Set("X-Other", want)
			}
			if _, body := sfGet(t, hc, req); body != "/docs/1 "+want {
				t.Errorf("request %d: body %q, want %q", i, body, "/docs/1 "+want)
			}
		}
		synctest.Wait()
		if len(req.Header) != 2 || req.Header.Get(hedginghttp.HeaderExecutionContext) != "" {
			t.Errorf("the caller's header map was modified: %v", req.Header)
		}
		if got := len(log.on("a.test:80")); got != 3 {
			t.Errorf("region A got %d requests, want 3", got)
		}
	})
}

// The same over loopback in real time, where the race detector sees it
// (synctest's fake clock orders the goroutines of a bubble): region A
// answers after 1 ms, the threshold is 1 ms, so some requests are won by A
// while B's copy is still being sent. Before each legs' own copy, go test
// -race reported 7 races in 300 requests (Header.Clone in Send and
// net/http's writeLoop reading the caller's map while the caller set it);
// now none.
func TestRoundTripperCallerReusesRequestLoopback(t *testing.T) {
	echo := func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.Header.Get("X-Req")) }
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Millisecond):
			echo(w, r)
		}
	}))
	defer a.Close()
	b := httptest.NewServer(http.HandlerFunc(echo))
	defer b.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	rt, err := hedginghttp.NewRoundTripper(tr, []hedginghttp.Region{{Name: "A", URL: a.URL}, {Name: "B", URL: b.URL}}, hedginghttp.WithThreshold(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: rt}
	req, err := http.NewRequest(http.MethodGet, a.URL+"/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		req.Header.Set("X-Req", strconv.Itoa(i))
		if _, body := sfGet(t, hc, req); body != strconv.Itoa(i) {
			t.Fatalf("request %d: body %q", i, body)
		}
		req.Header.Set("X-Other", "y")
		req.Header.Del("X-Other")
	}
}

// Issue 18 #4: a request whose host is spelled differently from the first
// region's URL (explicit :80, upper case) was never hedged. Hosts match
// canonically; another port or another path is not the region.
func TestRoundTripperHostSpellings(t *testing.T) {
	for _, tc := range []struct {
		region, req string
		hedged      bool
	}{
		{"http://a.test", "http://a.test/x", true},
		{"http://a.test", "http://a.test:80/x", true},
		{"http://a.test", "http://A.Test/x", true},
		{"http://a.test", "HTTP://A.TEST:80/x", true},
		{"http://A.TEST:80", "http://a.test/x", true},
		{"http://a.test:80/", "http://a.test/x", true},
		{"http://a.test/api", "http://a.test/x", false},
		{"http://a.test/api", "http://a.test/apix", false},
	} {
		t.Run(tc.region+" "+tc.req, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newStNet(t)
				var log sfLog
				_, b := sfSlowFast(n, &log, "a.test:80", "b.test:80")
				hc := stRegions(t, n, []hedginghttp.Region{{Name: "A", URL: tc.region}, {Name: "B", URL: b}}, hedginghttp.WithThreshold(10*time.Millisecond))
				req, _ := http.NewRequest(http.MethodGet, tc.req, nil)
				sfGet(t, hc, req)
				synctest.Wait()
				if got := len(log.on("b.test:80")) == 1; got != tc.hedged {
					t.Errorf("hedged = %v, want %v", got, tc.hedged)
				}
			})
		})
	}
}

// Issue 18 #4: through NewRoundTripper a region URL's path prefix was
// dropped (the alternate got /a/... instead of /b/...). The copy for region
// B replaces A's prefix with B's and keeps the rest of the path (escapes
// included) and the query.
func TestRoundTripperRegionPathPrefix(t *testing.T) {
	for _, tc := range []struct{ regionA, regionB, req, wantB string }{
		{"http://gw.test/a", "http://gw.test/b", "/a/docs/1?x=1", "/b/docs/1?x=1"},
		{"http://gw.test/a/", "http://gw.test/b/", "/a/docs/1", "/b/docs/1"},
		{"http://gw.test/a", "http://gw.test/b/v2", "/a/x%2Fy", "/b/v2/x%2Fy"},
		{"http://gw.test/a", "http://gw.test", "/a", ""},
		{"http://gw.test", "http://gw.test/b", "/docs", "/b/docs"},
	} {
		t.Run(tc.req, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newStNet(t)
				var log sfLog
				gw := n.serve("gw.test:80", func(w http.ResponseWriter, r *http.Request) {
					log.add("gw", r)
					if r.Header.Get(hedginghttp.HeaderExecutionContext) == "" && !stWait(r, time.Second) {
						return // the primary is slow
					}
					_, _ = io.WriteString(w, r.RequestURI)
				})
				_ = gw
				hc := stRegions(t, n, []hedginghttp.Region{{Name: "A", URL: tc.regionA}, {Name: "B", URL: tc.regionB}}, hedginghttp.WithThreshold(10*time.Millisecond))
				req, _ := http.NewRequest(http.MethodGet, "http://gw.test"+tc.req, nil)
				_, body := sfGet(t, hc, req)
				want := tc.wantB
				if want == "" {
					want = "/"
				}
				if body != want {
					t.Errorf("answered %q, want region B's %q", body, want)
				}
				synctest.Wait()
			})
		})
	}
}

// Issue 18, hard to misuse: what panicked or went silently wrong is an
// error from NewRoundTripper, and a zero P99Dynamic is usable.
func TestNewRoundTripperRejectsMisuse(t *testing.T) {
	two := func(a, b string) []hedginghttp.Region {
		return []hedginghttp.Region{{Name: "A", URL: a}, {Name: "B", URL: b}}
	}
	ok := two("http://a.test", "http://b.test")
	var nilObs *nilObserver
	for _, tc := range []struct {
		name    string
		regions []hedginghttp.Region
		opts    []hedginghttp.Option
		want    string
	}{
		{"nil option", ok, []hedginghttp.Option{nil}, "opts[0] is nil"},
		{"nil observer", ok, []hedginghttp.Option{hedginghttp.WithObserver(nil)}, "WithObserver(nil)"},
		{"typed-nil observer", ok, []hedginghttp.Option{hedginghttp.WithObserver(nilObs)}, "Config.Observer is a nil *hedginghttp_test.nilObserver"},
		{"nil logger", ok, []hedginghttp.Option{hedginghttp.WithLogger(nil)}, "WithLogger(nil)"},
		{"nil partition key", ok, []hedginghttp.Option{hedginghttp.WithPartitionKey(nil)}, "WithPartitionKey(nil)"},
		{"nil prepare", ok, []hedginghttp.Option{hedginghttp.WithPrepare(nil)}, "WithPrepare(nil)"},
		{"same URL twice", two("http://a.test", "http://A.TEST:80/"), nil, `regions[1] ("B"): URL "http://A.TEST:80/" addresses the same requests as regions[0]`},
		{"ftp scheme", two("http://a.test", "ftp://b.test"), nil, `scheme "ftp": want http or https`},
		{"user info", two("http://a.test", "http://u:p@b.test"), nil, "user information"},
		{"query", two("http://a.test", "http://b.test/?x=1"), nil, "no query or fragment"},
		{"no host name", two("http://a.test", "http://:80"), nil, "empty host name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := hedginghttp.NewRoundTripper(http.DefaultTransport, tc.regions, tc.opts...)
			if err == nil || rt != nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewRoundTripper = %v, %v; want an error containing %q", rt, err, tc.want)
			}
		})
	}
	t.Run("zero P99Dynamic", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// WithPolicy replaces sfHedged's WithThreshold.
			_, a, hc := sfHedged(t, hedginghttp.WithPolicy(&threshold.P99Dynamic{}), hedginghttp.WithLogger(slog.New(slog.DiscardHandler)))
			req, _ := http.NewRequest(http.MethodGet, a+"/x", nil)
			// The zero policy is NewP99Dynamic's default: 50 ms until it
			// has observations.
			start := time.Now()
			if _, body := sfGet(t, hc, req); body != "/x " || time.Since(start) != 50*time.Millisecond {
				t.Errorf("body %q after %v, want region B's after the 50 ms initial threshold", body, time.Since(start))
			}
			synctest.Wait()
		})
	})
}

// nilObserver is a hedging.Observer whose nil pointer panics on use.
type nilObserver struct{ n int }

func (o *nilObserver) ObserveAttempt(context.Context, hedging.AttemptEvent)     { o.n++ }
func (o *nilObserver) ObserveOperation(context.Context, hedging.OperationEvent) { o.n++ }

// An empty Idempotency-Key value is an error and nothing is sent; an entry
// without values marks the request idempotent without sending the header
// (net/http's convention), so it is hedged.
func TestRoundTripperIdempotencyKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log, a, hc := sfHedged(t)
		req, _ := http.NewRequest(http.MethodPost, a+"/x", strings.NewReader("doc"))
		req.Header.Set("Idempotency-Key", "")
		if _, err := hc.Do(req); err == nil || !strings.Contains(err.Error(), "empty Idempotency-Key value") {
			t.Errorf("err = %v, want an empty Idempotency-Key error", err)
		}
		req, _ = http.NewRequest(http.MethodPost, a+"/x", strings.NewReader("doc"))
		req.Header["X-Idempotency-Key"] = nil
		sfGet(t, hc, req)
		synctest.Wait()
		if ha, hb := log.on("a.test:80"), log.on("b.test:80"); len(ha) != 1 || len(hb) != 1 {
			t.Fatalf("hits A %d, B %d; want 1 and 1 (only the marked request, hedged)", len(ha), len(hb))
		} else if _, sent := hb[0].header["X-Idempotency-Key"]; sent {
			t.Error("a key entry without values was sent")
		}
	})
}

// Issue 18: the whole RoundTripper was one partition, so five alternate
// wins sent every later request to the second region. The breaker is per
// partition (the Cosmos DB partition-key header by default): partition-key
// "x" trips after five alternate wins and its next request goes to B first,
// while key "y" (another partition) still goes to A first. WithPartitionKey
// replaces the key.
func TestRoundTripperPartitionKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  []hedginghttp.Option
		key  func(req *http.Request, k string)
	}{
		{"header", nil, func(req *http.Request, k string) { req.Header.Set(hedginghttp.HeaderPartitionKey, `["`+k+`"]`) }},
		{"WithPartitionKey", []hedginghttp.Option{hedginghttp.WithPartitionKey(func(r *http.Request) string { return r.URL.Query().Get("pk") })},
			func(req *http.Request, k string) { req.URL.RawQuery = "pk=" + k }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				log, a, hc := sfHedged(t, tc.opt...)
				get := func(k string) {
					req, _ := http.NewRequest(http.MethodGet, a+"/docs", nil)
					tc.key(req, k)
					sfGet(t, hc, req)
					synctest.Wait()
				}
				for range hedging.DefaultConsecutiveHedgeWinThreshold {
					get("x")
				}
				before := len(log.on("a.test:80"))
				get("x")
				if got := len(log.on("a.test:80")) - before; got != 0 {
					t.Errorf("partition x after %d alternate wins: region A got %d requests, want 0 (demoted)", hedging.DefaultConsecutiveHedgeWinThreshold, got)
				}
				get("y")
				if got := len(log.on("a.test:80")) - before; got != 1 {
					t.Errorf("partition y: region A got %d requests, want 1 (not demoted by x)", got)
				}
			})
		})
	}
}

// Credentials go to every region; WithPrepare adjusts each region's copy:
// here a per-region authorization, which each server receives, while the
// caller's request keeps none.
func TestRoundTripperPrepareSignsEachLeg(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log, a, hc := sfHedged(t,
			hedginghttp.WithPrepare(func(req *http.Request, region string) error {
				req.Header.Set("Authorization", "sig-"+region+"-"+req.URL.Host)
				return nil
			}))
		req, _ := http.NewRequest(http.MethodGet, a+"/x", nil)
		sfGet(t, hc, req)
		synctest.Wait()
		ha, hb := log.on("a.test:80"), log.on("b.test:80")
		if len(ha) != 1 || len(hb) != 1 {
			t.Fatalf("hits A %d, B %d; want 1 and 1", len(ha), len(hb))
		}
		if ga, gb := ha[0].header.Get("Authorization"), hb[0].header.Get("Authorization"); ga != "sig-A-a.test:80" || gb != "sig-B-b.test:80" {
			t.Errorf("Authorization A %q, B %q; want each region's signature", ga, gb)
		}
		if len(req.Header) != 0 {
			t.Errorf("the caller's request got headers %v", req.Header)
		}
	})
}
