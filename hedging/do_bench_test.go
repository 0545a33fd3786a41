package hedging_test

// Benchmarks of the happy path (the primary answers before the threshold):
// a plain net/http request, the same request through HTTPTransport,
// Client.Do over HTTPTransport with and without hedging, cristalhq/hedgedhttp
// configured alike, Client.Do over an in-memory transport (the driver's own
// cost), and the pure race core driven by hand. They report numbers only; no
// timing is asserted. Helpers are prefixed "bx".

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cristalhq/hedgedhttp"

	"hedgelab/hedging"
)

// bxThreshold is well above the loopback server's latency, so no benchmark
// iteration hedges.
const bxThreshold = time.Second

// bxServer starts a loopback server that answers every request at once
// with a small JSON body and a request charge, and an HTTP transport to it
// with enough idle connections for one goroutine.
func bxServer(b *testing.B) (*httptest.Server, *http.Client) {
	b.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(hedging.HeaderRequestCharge, "1")
		_, _ = io.WriteString(w, `{"id":"1"}`)
	}))
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	b.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
	})
	return srv, &http.Client{Transport: tr}
}

func bxClient(b *testing.B, srv *httptest.Server, hc *http.Client, strategy hedging.AvailabilityStrategy) *hedging.Client {
	b.Helper()
	ht := &hedging.HTTPTransport{Client: hc, BaseURLs: map[string]string{"ep-A": srv.URL, "ep-B": srv.URL + "/"}}
	c, err := hedging.NewClient(hedging.Config{
		Regions:   []hedging.Endpoint{{Region: "A", Key: "ep-A"}, {Region: "B", Key: "ep-B"}},
		Strategy:  strategy,
		Transport: ht,
	})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func bxHedging(d time.Duration) hedging.AvailabilityStrategy {
	return hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(d)))
}

func bxGet(b *testing.B, hc *http.Client, ctx context.Context, url string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		b.Fatal(err)
	}
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

// (a) A plain net/http GET: build the request, send it, drain and close the
// body.
func BenchmarkHappyPathPlainHTTP(b *testing.B) {
	srv, hc := bxServer(b)
	ctx := context.Background()
	url := srv.URL + "/docs/1"
	b.ReportAllocs()
	for b.Loop() {
		bxGet(b, hc, ctx, url)
	}
}

// (a') The same request through HTTPTransport.Send (headers parsed), no
// race: the transport's own cost.
func BenchmarkHappyPathHTTPTransportSend(b *testing.B) {
	srv, hc := bxServer(b)
	ht := &hedging.HTTPTransport{Client: hc, BaseURLs: map[string]string{"ep-A": srv.URL}}
	op := &hedging.Operation{Kind: hedging.PointRead, Partition: "0", Path: "/docs/1"}
	a := hedging.Attempt{Endpoint: hedging.Endpoint{Region: "A", Key: "ep-A"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := ht.Send(ctx, op, a); res.Err != nil || res.Status.Code != 200 {
			b.Fatalf("%+v", res)
		}
	}
}

// (b) Client.Do with hedging on (threshold 1 s) over HTTPTransport.
func BenchmarkHappyPathDoHedging(b *testing.B) {
	srv, hc := bxServer(b)
	c := bxClient(b, srv, hc, bxHedging(bxThreshold))
	op := &hedging.Operation{Kind: hedging.PointRead, Partition: "0", Path: "/docs/1"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Do(ctx, op)
		if err != nil || resp.Diagnostics.TerminalState() != hedging.PrimaryWonPreThreshold {
			b.Fatalf("%v %v", resp, err)
		}
	}
}

// (b') Client.Do with the strategy Disabled (the plain path of the same
// driver) over HTTPTransport.
func BenchmarkHappyPathDoDisabled(b *testing.B) {
	srv, hc := bxServer(b)
	c := bxClient(b, srv, hc, hedging.Disabled)
	op := &hedging.Operation{Kind: hedging.PointRead, Partition: "0", Path: "/docs/1"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Do(ctx, op); err != nil {
			b.Fatal(err)
		}
	}
}

// (c) cristalhq/hedgedhttp with the same delay (1 s) and upto=2.
func BenchmarkHappyPathHedgedHTTP(b *testing.B) {
	srv, hc := bxServer(b)
	hedged, err := hedgedhttp.NewClient(bxThreshold, 2, hc)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	url := srv.URL + "/docs/1"
	b.ReportAllocs()
	for b.Loop() {
		bxGet(b, hedged, ctx, url)
	}
}

// Client.Do over an in-memory transport that answers at once: the driver's
// own cost per operation (target: at most 2 allocations).
func BenchmarkHappyPathDoInMemory(b *testing.B) {
	tr := dtSendFunc(func(context.Context, *hedging.Operation, hedging.Attempt) hedging.Result {
		return hedging.Result{Status: hedging.Status{Code: 200}, RequestCharge: 1}
	})
	c, err := hedging.NewClient(hedging.Config{
		Regions:   []hedging.Endpoint{{Region: "A", Key: "ep-A"}, {Region: "B", Key: "ep-B"}},
		Strategy:  bxHedging(bxThreshold),
		Transport: tr,
	})
	if err != nil {
		b.Fatal(err)
	}
	op := &hedging.Operation{Kind: hedging.PointRead, Partition: "0"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Do(ctx, op); err != nil {
			b.Fatal(err)
		}
	}
}

func bxCoreClient(b *testing.B) *hedging.Client {
	b.Helper()
	c, err := hedging.NewClient(hedging.Config{
		Regions:  []hedging.Endpoint{{Region: "A", Key: "ep-A"}, {Region: "B", Key: "ep-B"}},
		Strategy: bxHedging(200 * time.Millisecond),
	})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func bxSend(b *testing.B, e hedging.Effects, leg hedging.Leg) hedging.Attempt {
	for i := 0; i < e.Len(); i++ {
		if a := e.At(i); a.Kind == hedging.ActSend && a.Leg == leg {
			return a.Attempt
		}
	}
	b.Fatalf("no send for the %v", leg)
	return hedging.Attempt{}
}

// The pure race core by hand, happy path: Begin, then the primary's final
// response at 50 ms (target: 0 allocations).
func BenchmarkRaceCoreHappyPath(b *testing.B) {
	c := bxCoreClient(b)
	op := &hedging.Operation{Kind: hedging.PointRead, Partition: "0"}
	ok := hedging.Result{Status: hedging.Status{Code: 200}, RequestCharge: 1}
	var r hedging.Race
	now := time.Second
	b.ReportAllocs()
	for b.Loop() {
		p := bxSend(b, c.Begin(&r, now, op), hedging.Primary)
		r.Responded(now+50*time.Millisecond, p, ok)
		if !r.Done() {
			b.Fatal("race not done")
		}
		now += time.Second
	}
}

// The pure race core by hand, hedged: Begin, the threshold fires and the
// alternate is sent, then the primary's final response wins
// (PrimaryWonAfterHedge, so the hedge-win tracker never trips).
func BenchmarkRaceCoreHedged(b *testing.B) {
	c := bxCoreClient(b)
	op := &hedging.Operation{Kind: hedging.PointRead, Partition: "0"}
	ok := hedging.Result{Status: hedging.Status{Code: 200}, RequestCharge: 1}
	var r hedging.Race
	now := time.Second
	b.ReportAllocs()
	for b.Loop() {
		p := bxSend(b, c.Begin(&r, now, op), hedging.Primary)
		bxSend(b, r.TimerFired(now+200*time.Millisecond, hedging.TimerThreshold), hedging.Alternate)
		r.Responded(now+250*time.Millisecond, p, ok)
		if !r.Done() || !r.AlternateSpawned() {
			b.Fatal("race not hedged and done")
		}
		now += time.Second
	}
}
