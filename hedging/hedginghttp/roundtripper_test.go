package hedginghttp_test

// Tests of NewRoundTripper and of streaming responses, inside
// testing/synctest bubbles: httptest servers listen on in-memory pipes
// (net.Pipe), so fake time drives handlers and clients alike, latencies are
// exact and nothing sleeps for real. Helpers are prefixed "st".

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/hedginghttp"
	"hedgelab/hedging/threshold"
)

// stListener is a net.Listener whose connections are in-memory pipes.
type stListener struct {
	name  string
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *stListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *stListener) Close() error { l.once.Do(func() { close(l.done) }); return nil }

func (l *stListener) Addr() net.Addr { return stAddr(l.name) }

type stAddr string

func (a stAddr) Network() string { return "pipe" }
func (a stAddr) String() string  { return string(a) }

// stNet is a set of in-memory httptest servers, one per host name, and an
// http.Transport that dials them. Create it inside the bubble.
type stNet struct {
	t       *testing.T
	servers map[string]*stListener
	tr      *http.Transport
	hits    sync.Map // host -> *atomic.Int32
}

func newStNet(t *testing.T) *stNet {
	n := &stNet{t: t, servers: map[string]*stListener{}}
	n.tr = &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
		l, ok := n.servers[strings.ToLower(addr)] // host names are case-insensitive
		if !ok {
			return nil, errors.New("no such host " + addr)
		}
		c1, c2 := net.Pipe()
		select {
		case l.conns <- c2:
			return c1, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
	t.Cleanup(n.tr.CloseIdleConnections)
	return n
}

// serve starts a server for host ("a.test:80") and returns its base URL.
func (n *stNet) serve(host string, h http.HandlerFunc) string {
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := n.hits.LoadOrStore(host, new(atomic.Int32))
		c.(*atomic.Int32).Add(1)
		h(w, r)
	}))
	_ = ts.Listener.Close()
	l := &stListener{name: host, conns: make(chan net.Conn), done: make(chan struct{})}
	ts.Listener = l
	n.servers[host] = l
	ts.Start()
	n.t.Cleanup(ts.Close)
	return ts.URL
}

func (n *stNet) hitCount(host string) int {
	c, ok := n.hits.Load(host)
	if !ok {
		return 0
	}
	return int(c.(*atomic.Int32).Load())
}

// stWait answers after d, or returns early when the client goes away.
func stWait(r *http.Request, d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-r.Context().Done():
		return false
	}
}

// stRoundTripper builds a RoundTripper for regions A (URL a) and B (URL b).
func stRoundTripper(t *testing.T, n *stNet, a, b string, opts ...hedginghttp.Option) *http.Client {
	t.Helper()
	return stRegions(t, n, []hedginghttp.Region{{Name: "A", URL: a}, {Name: "B", URL: b}}, opts...)
}

// stRegions builds a RoundTripper over n for regions.
func stRegions(t *testing.T, n *stNet, regions []hedginghttp.Region, opts ...hedginghttp.Option) *http.Client {
	t.Helper()
	rt, err := hedginghttp.NewRoundTripper(n.tr, regions, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: rt}
}

// Issue 11 #2 and #3: region A's final 400 has its headers at 120 ms and
// streams a 64 KB body until 200 ms; region B (hedged at 100 ms) would
// answer 200 at 152 ms. The 400 is final at its headers: it is returned at
// 120 ms with its whole body readable, and B's request is cancelled.
func TestStreamingFinalStatusWinsAtHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newStNet(t)
		chunk := bytes.Repeat([]byte("x"), 1024)
		a := n.serve("a.test:80", func(w http.ResponseWriter, r *http.Request) {
			if !stWait(r, 120*time.Millisecond) {
				return
			}
			w.WriteHeader(http.StatusBadRequest)
			w.(http.Flusher).Flush()
			for i := range 64 {
				if i > 0 && !stWait(r, 80*time.Millisecond/63) {
					return
				}
				_, _ = w.Write(chunk)
				w.(http.Flusher).Flush()
			}
		})
		var bCancelled atomic.Bool
		b := n.serve("b.test:80", func(w http.ResponseWriter, r *http.Request) {
			if !stWait(r, 52*time.Millisecond) {
				bCancelled.Store(true)
				return
			}
			_, _ = io.WriteString(w, "ok")
		})
		hc := stRoundTripper(t, n, a, b, hedginghttp.WithThreshold(100*time.Millisecond))
		start := time.Now()
		resp, err := hc.Get(a + "/docs/1")
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); resp.StatusCode != 400 || took != 120*time.Millisecond {
			t.Errorf("got %d after %v, want 400 after 120ms", resp.StatusCode, took)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || len(body) != 64<<10 {
			t.Errorf("body: %d bytes, %v; want 64 KiB", len(body), err)
		}
		synctest.Wait()
		if !bCancelled.Load() {
			t.Error("region B's request was not cancelled")
		}
	})
}

// Issue 11 #3: a 512 KB body of the winner (the alternate) is read intact
// after the loser (the slow primary) was cancelled.
func TestWinnerLargeBodyIntact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newStNet(t)
		want := make([]byte, 512<<10)
		for i := range want {
			want[i] = byte(i * 7)
		}
		var aCancelled atomic.Bool
		a := n.serve("a.test:80", func(w http.ResponseWriter, r *http.Request) {
			if !stWait(r, 5*time.Second) {
				aCancelled.Store(true)
				return
			}
			_, _ = io.WriteString(w, "late")
		})
		b := n.serve("b.test:80", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get(hedginghttp.HeaderExecutionContext) != "hedging" {
				t.Error("the alternate lacks the hedging marker")
			}
			stWait(r, 10*time.Millisecond)
			for off := 0; off < len(want); off += 32 << 10 {
				_, _ = w.Write(want[off : off+32<<10])
				w.(http.Flusher).Flush()
			}
		})
		hc := stRoundTripper(t, n, a, b, hedginghttp.WithThreshold(50*time.Millisecond))
		resp, err := hc.Get(a + "/docs/big")
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if !aCancelled.Load() {
			t.Error("the primary's request was not cancelled")
		}
		got, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("body: %d bytes (err %v), equal %v; want the 512 KiB sent", len(got), err, bytes.Equal(got, want))
		}
		if resp.Request.URL.Host != "b.test:80" {
			t.Errorf("answered by %q, want b.test:80", resp.Request.URL.Host)
		}
	})
}

// Only reads are hedged; a write, a body that cannot be replayed and a
// request to another host are sent once; a POST marked idempotent with a
// replayable body is hedged and both regions receive the body.
func TestRoundTripperWhatIsHedged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		req    func(base string) *http.Request
		wantB  int
		bodyOK bool
	}{
		{"GET", func(base string) *http.Request { r, _ := http.NewRequest("GET", base+"/x", nil); return r }, 1, false},
		{"POST", func(base string) *http.Request {
			r, _ := http.NewRequest("POST", base+"/x", strings.NewReader("doc"))
			return r
		}, 0, false},
		{"idempotent POST", func(base string) *http.Request {
			r, _ := http.NewRequest("POST", base+"/x", strings.NewReader("doc"))
			r.Header.Set("Idempotency-Key", "k1")
			return r
		}, 1, true},
		{"idempotent POST without GetBody", func(base string) *http.Request {
			r, _ := http.NewRequest("POST", base+"/x", io.NopCloser(strings.NewReader("doc")))
			r.Header.Set("Idempotency-Key", "k1")
			return r
		}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newStNet(t)
				var bodies sync.Map
				h := func(host string) http.HandlerFunc {
					return func(w http.ResponseWriter, r *http.Request) {
						b, _ := io.ReadAll(r.Body)
						bodies.Store(host, string(b))
						if host == "a.test:80" && !stWait(r, time.Second) {
							return
						}
						_, _ = io.WriteString(w, host)
					}
				}
				a, b := n.serve("a.test:80", h("a.test:80")), n.serve("b.test:80", h("b.test:80"))
				hc := stRoundTripper(t, n, a, b, hedginghttp.WithThreshold(10*time.Millisecond))
				resp, err := hc.Do(tc.req(a))
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				synctest.Wait()
				if got := n.hitCount("b.test:80"); got != tc.wantB {
					t.Errorf("region B got %d requests, want %d", got, tc.wantB)
				}
				if tc.bodyOK {
					for _, host := range []string{"a.test:80", "b.test:80"} {
						if v, _ := bodies.Load(host); v != "doc" {
							t.Errorf("%s received body %q, want the replayed \"doc\"", host, v)
						}
					}
				}
			})
		})
	}
	t.Run("other host", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			n := newStNet(t)
			ok := func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }
			a, b, c := n.serve("a.test:80", ok), n.serve("b.test:80", ok), n.serve("c.test:80", ok)
			hc := stRoundTripper(t, n, a, b, hedginghttp.WithThreshold(time.Nanosecond))
			resp, err := hc.Get(c + "/x")
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			synctest.Wait()
			if n.hitCount("a.test:80")+n.hitCount("b.test:80") != 0 || n.hitCount("c.test:80") != 1 {
				t.Error("a request to another host was hedged")
			}
		})
	})
}

// Classification follows §7.2 with x-ms-substatus: a 404 with sub-status
// 1002 is transient (the alternate is sent at once and wins); a plain 404
// is final and returned.
func TestRoundTripperSubStatus(t *testing.T) {
	for _, tc := range []struct {
		sub      string
		wantCode int
	}{{"1002", 200}, {"", 404}} {
		t.Run("404/"+tc.sub, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newStNet(t)
				a := n.serve("a.test:80", func(w http.ResponseWriter, r *http.Request) {
					if tc.sub != "" {
						w.Header().Set(hedginghttp.HeaderSubStatus, tc.sub)
					}
					w.WriteHeader(404)
				})
				b := n.serve("b.test:80", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
				hc := stRoundTripper(t, n, a, b, hedginghttp.WithThreshold(time.Second))
				resp, err := hc.Get(a + "/x")
				if err != nil {
					t.Fatal(err)
				}
				_ = resp.Body.Close()
				if resp.StatusCode != tc.wantCode {
					t.Errorf("status %d, want %d", resp.StatusCode, tc.wantCode)
				}
				synctest.Wait()
			})
		})
	}
}

// Both regions transient: the most recent transient response is returned,
// with its body, as a plain transport would; when the deadline ends the
// race with no response at all, a *hedging.Error.
func TestRoundTripperBothTransient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newStNet(t)
		busy := func(d time.Duration, body string) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				stWait(r, d)
				w.WriteHeader(503)
				_, _ = io.WriteString(w, body)
			}
		}
		// A: 503 at 1 ms (the alternate goes at once; A retries locally,
		// 503 at 2 and 3 ms); B: 503 at 1 + 10 ms, the most recent.
		a, b := n.serve("a.test:80", busy(time.Millisecond, "busy A")), n.serve("b.test:80", busy(10*time.Millisecond, "busy B"))
		hc := stRoundTripper(t, n, a, b, hedginghttp.WithThreshold(time.Second))
		resp, err := hc.Get(a + "/x")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != 503 || string(body) != "busy B" {
			t.Errorf("got %d %q, want B's 503 \"busy B\"", resp.StatusCode, body)
		}
		synctest.Wait()
	})
	synctest.Test(t, func(t *testing.T) {
		n := newStNet(t)
		slow := func(w http.ResponseWriter, r *http.Request) { stWait(r, time.Hour) }
		a, b := n.serve("a.test:80", slow), n.serve("b.test:80", slow)
		hc := stRoundTripper(t, n, a, b, hedginghttp.WithThreshold(10*time.Millisecond), hedginghttp.WithTimeout(100*time.Millisecond))
		start := time.Now()
		_, err := hc.Get(a + "/x")
		var he *hedging.Error
		if !errors.As(err, &he) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want a *hedging.Error with DeadlineExceeded", err)
		}
		if took := time.Since(start); took != 100*time.Millisecond+hedging.HarvestWindow {
			t.Errorf("returned after %v, want timeout + harvest window", took)
		}
		synctest.Wait()
	})
}

// Bad input to NewRoundTripper is a clear error.
func TestNewRoundTripperErrors(t *testing.T) {
	ok := []hedginghttp.Region{{Name: "A", URL: "http://a.test"}, {Name: "B", URL: "http://b.test"}}
	for _, tc := range []struct {
		name    string
		next    http.RoundTripper
		regions []hedginghttp.Region
		opts    []hedginghttp.Option
		want    string
	}{
		{"nil next", nil, ok, nil, "next is nil"},
		{"no regions", http.DefaultTransport, nil, nil, "no regions"},
		{"duplicate", http.DefaultTransport, []hedginghttp.Region{{"A", "http://a.test"}, {"A", "http://b.test"}}, nil, `regions[1]: region "A" listed twice`},
		{"empty name", http.DefaultTransport, []hedginghttp.Region{{"", "http://a.test"}}, nil, "regions[0]: empty name"},
		{"unparsable URL", http.DefaultTransport, []hedginghttp.Region{{"A", "http://a.test"}, {"B", "http://[::1"}}, nil, `regions[1] ("B"): parse`},
		{"no scheme", http.DefaultTransport, []hedginghttp.Region{{"A", "a.test"}}, nil, `want scheme://host`},
		{"zero threshold", http.DefaultTransport, ok, []hedginghttp.Option{hedginghttp.WithThreshold(0)}, "threshold must be positive"},
		{"nil policy", http.DefaultTransport, ok, []hedginghttp.Option{hedginghttp.WithPolicy(nil)}, "WithPolicy(nil)"},
		{"nil gate", http.DefaultTransport, ok, []hedginghttp.Option{hedginghttp.WithHedgeGate(nil)}, "WithHedgeGate(nil)"},
		// A gate from threshold.NewBudget whose error was not checked.
		{"nil budget", http.DefaultTransport, ok, []hedginghttp.Option{hedginghttp.WithHedgeGate((*threshold.Budget)(nil))}, "Gate is a nil *threshold.Budget"},
		{"nil recommended", http.DefaultTransport, ok, []hedginghttp.Option{hedginghttp.WithPolicy((*threshold.Recommended)(nil))}, "policy is a nil *threshold.Recommended"},
		{"negative timeout", http.DefaultTransport, ok, []hedginghttp.Option{hedginghttp.WithTimeout(-1)}, "timeout must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := hedginghttp.NewRoundTripper(tc.next, tc.regions, tc.opts...)
			if err == nil || rt != nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewRoundTripper = %v, %v; want an error containing %q", rt, err, tc.want)
			}
		})
	}
}
