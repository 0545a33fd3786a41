package hedginghttp_test

// Benchmarks of the happy path (the first region answers before the
// threshold) on loopback, each through an http.Client: (a) a plain
// http.Transport, (b) NewRoundTripper over that transport, (c)
// cristalhq/hedgedhttp over that transport with the same delay, and (d)
// hedging.Client.Do over Transport. They report numbers only; no timing is
// asserted. Helpers are prefixed "bx".

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cristalhq/hedgedhttp"

	"hedgelab/hedging"
	"hedgelab/hedging/hedginghttp"
)

// bxThreshold is well above the loopback server's latency, so no benchmark
// iteration hedges.
const bxThreshold = time.Second

// bxServer starts a loopback server that answers every request at once
// with a small JSON body and a request charge, and an HTTP transport with
// enough idle connections for one goroutine.
func bxServer(b *testing.B) (*httptest.Server, *http.Transport) {
	b.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(hedginghttp.HeaderRequestCharge, "1")
		_, _ = io.WriteString(w, `{"id":"1"}`)
	}))
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	b.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
	})
	return srv, tr
}

// bxGet sends one GET through hc, drains and closes the body.
func bxGet(b *testing.B, hc *http.Client, req *http.Request) {
	resp, err := hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

func bxRequest(b *testing.B, url string) *http.Request {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url+"/docs/1", nil)
	if err != nil {
		b.Fatal(err)
	}
	return req
}

// bxLoop is the benchmark loop: a GET of url's document through rt per
// iteration, allocations reported.
func bxLoop(b *testing.B, url string, rt http.RoundTripper) {
	hc := &http.Client{Transport: rt}
	req := bxRequest(b, url)
	b.ReportAllocs()
	for b.Loop() {
		bxGet(b, hc, req)
	}
}

// (a) A plain http.Transport.
func BenchmarkHappyPathPlainTransport(b *testing.B) {
	srv, tr := bxServer(b)
	bxLoop(b, srv.URL, tr)
}

// (a') A plain http.Transport, each request under its own cancellable
// context (req.WithContext(context.WithCancel(...)), cancelled after the
// body is closed): the floor for a hedger, which must be able to cancel
// the primary when a hedge wins (spec §12), so its request context is
// cancellable by design. The difference to (a) is net/http's own cost of
// such a context (it registers its per-request context under it).
func BenchmarkHappyPathPlainCancellable(b *testing.B) {
	srv, tr := bxServer(b)
	hc := &http.Client{Transport: tr}
	req := bxRequest(b, srv.URL)
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithCancel(req.Context())
		bxGet(b, hc, req.WithContext(ctx))
		cancel()
	}
}

// (b) NewRoundTripper over the same transport, two regions, threshold 1 s.
func BenchmarkHappyPathRoundTripper(b *testing.B) {
	srv, tr := bxServer(b)
	rt, err := hedginghttp.NewRoundTripper(tr, []hedginghttp.Region{{Name: "A", URL: srv.URL}, {Name: "B", URL: "http://b.invalid"}},
		hedginghttp.WithThreshold(bxThreshold))
	if err != nil {
		b.Fatal(err)
	}
	bxLoop(b, srv.URL, rt)
}

// (c) cristalhq/hedgedhttp over the same transport, delay 1 s, upto 2.
func BenchmarkHappyPathHedgedHTTP(b *testing.B) {
	srv, tr := bxServer(b)
	rt, err := hedgedhttp.NewRoundTripper(bxThreshold, 2, tr)
	if err != nil {
		b.Fatal(err)
	}
	bxLoop(b, srv.URL, rt)
}

// (d) hedging.Client.Do over Transport (request built from the Operation).
func BenchmarkHappyPathDoTransport(b *testing.B) {
	srv, tr := bxServer(b)
	c, err := hedging.NewClient(hedging.Config{
		Regions:   []hedging.Endpoint{{Region: "A", Key: "ep-A"}, {Region: "B", Key: "ep-B"}},
		Strategy:  hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(bxThreshold))),
		Transport: &hedginghttp.Transport{RoundTripper: tr, BaseURLs: map[string]string{"ep-A": srv.URL, "ep-B": srv.URL}},
	})
	if err != nil {
		b.Fatal(err)
	}
	op := &hedging.Operation{Kind: hedging.PointRead, Partition: "0", Path: "/docs/1"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Do(ctx, op)
		if err != nil || resp.Diagnostics.TerminalState() != hedging.PrimaryWonPreThreshold {
			b.Fatalf("%v %v", resp, err)
		}
		_, _ = io.Copy(io.Discard, resp.Result.Body)
		_ = resp.Result.Body.Close()
	}
}

// BenchmarkHedgedLoserDials reports the connections dialled per hedged
// request (dials/op) when every request is hedged and the primary loses:
// region A answers after 2 ms, the threshold is 200 µs, region B answers at
// once. Over HTTP/1.1 net/http closes the connection of each cancelled
// loser, so the next request to A dials again; over HTTP/2 (here h2c,
// unencrypted) cancelling resets only the stream and the connection stays
// pooled. Quoted in the package documentation.
func BenchmarkHedgedLoserDials(b *testing.B) {
	for _, h2 := range []bool{false, true} {
		name := "http1"
		if h2 {
			name = "h2c"
		}
		b.Run(name, func(b *testing.B) {
			var protos http.Protocols
			if h2 {
				protos.SetUnencryptedHTTP2(true)
			} else {
				protos.SetHTTP1(true)
			}
			serve := func(delay time.Duration) *httptest.Server {
				ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					select {
					case <-time.After(delay):
						_, _ = io.WriteString(w, `{"id":"1"}`)
					case <-r.Context().Done():
					}
				}))
				ts.Config.Protocols = &protos
				ts.Start()
				b.Cleanup(ts.Close)
				return ts
			}
			a, bb := serve(2*time.Millisecond), serve(0)
			var dials atomic.Int64
			var d net.Dialer
			tr := &http.Transport{Protocols: &protos, MaxIdleConnsPerHost: 16,
				DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
					dials.Add(1)
					return d.DialContext(ctx, network, addr)
				}}
			b.Cleanup(tr.CloseIdleConnections)
			// A partition per request: the breaker (§9.5) would otherwise
			// demote A after five alternate wins and stop the hedging.
			var part atomic.Int64
			rt, err := hedginghttp.NewRoundTripper(tr, []hedginghttp.Region{{Name: "A", URL: a.URL}, {Name: "B", URL: bb.URL}},
				hedginghttp.WithThreshold(200*time.Microsecond),
				hedginghttp.WithPartitionKey(func(*http.Request) string { return strconv.FormatInt(part.Add(1), 10) }))
			if err != nil {
				b.Fatal(err)
			}
			bxGet(b, &http.Client{Transport: rt}, bxRequest(b, a.URL)) // warm both connections
			dials.Store(0)
			bxLoop(b, a.URL, rt)
			b.ReportMetric(float64(dials.Load())/float64(b.N), "dials/op")
		})
	}
}
