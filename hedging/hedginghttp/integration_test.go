package hedginghttp_test

// Integration tests of spec §15.2 (fault injection): Client.Do over
// HTTPTransport against real httptest servers on loopback, one per region.
// Each runs in a testing/synctest bubble over an in-memory network (stNet):
// the servers' delays, the thresholds and the deadlines are the bubble's
// fake time, and the network takes none, so a duration a test asserts is
// exact and does not depend on the machine's load. Helpers are prefixed "hx".

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/hedginghttp"
)

// hxReply is what a region server does for one request: wait Delay (or
// until the client goes away), then answer Status with the given headers.
type hxReply struct {
	Delay     time.Duration
	Status    int
	SubStatus int
	Charge    float64
	RetryMs   int
	Session   string // x-ms-session-token to return
}

// hxHit is one request a region server received.
type hxHit struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// hxRegion is one region's server: it counts hits, records them and
// reports requests whose client went away before the answer.
type hxRegion struct {
	Name  string
	URL   string              // the server's base URL on the bubble's network
	reply func(n int) hxReply // n is the 1-based hit number

	mu        sync.Mutex
	hits      []hxHit
	cancelled chan struct{} // one value per request abandoned by the client
}

// hxNewRegion starts region name's server on nw (host "<name>.test:80").
func hxNewRegion(nw *stNet, name string, reply func(n int) hxReply) *hxRegion {
	r := &hxRegion{Name: name, reply: reply, cancelled: make(chan struct{}, 64)}
	r.URL = nw.serve(strings.ToLower(name)+".test:80", r.serve)
	return r
}

// hxTest runs body in parallel with the package's other parallel tests, in
// a synctest bubble with a fresh in-memory network.
func hxTest(t *testing.T, body func(t *testing.T, nw *stNet)) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) { body(t, newStNet(t)) })
}

func (r *hxRegion) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.hits = append(r.hits, hxHit{Method: req.Method, Path: req.URL.Path, Header: req.Header.Clone(), Body: body})
	n := len(r.hits)
	r.mu.Unlock()
	rep := r.reply(n)
	if rep.Delay > 0 {
		t := time.NewTimer(rep.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-req.Context().Done():
			r.cancelled <- struct{}{}
			return
		}
	}
	h := w.Header()
	if rep.SubStatus != 0 {
		h.Set(hedginghttp.HeaderSubStatus, strconv.Itoa(rep.SubStatus))
	}
	if rep.Charge != 0 {
		h.Set(hedginghttp.HeaderRequestCharge, strconv.FormatFloat(rep.Charge, 'f', -1, 64))
	}
	if rep.RetryMs != 0 {
		h.Set(hedginghttp.HeaderRetryAfterMs, strconv.Itoa(rep.RetryMs))
	}
	if rep.Session != "" {
		h.Set(hedginghttp.HeaderSessionToken, rep.Session)
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, `{"region":"`+r.Name+`"}`)
}

func (r *hxRegion) Hits() []hxHit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hxHit(nil), r.hits...)
}

func (r *hxRegion) HitCount() int { return len(r.Hits()) }

// waitCancelled waits (bounded, in the bubble's time) until the server saw
// one abandoned request.
func (r *hxRegion) waitCancelled(t *testing.T) {
	t.Helper()
	select {
	case <-r.cancelled:
	case <-time.After(2 * time.Second):
		t.Errorf("region %s: the abandoned request's handler never observed cancellation", r.Name)
	}
}

// hxReplyAll answers every request the same way.
func hxReplyAll(rep hxReply) func(int) hxReply { return func(int) hxReply { return rep } }

// hxSetup builds a client over HTTPTransport for the given region servers
// (in preference order); edit adjusts the configuration.
func hxSetup(t *testing.T, nw *stNet, threshold time.Duration, edit func(*hedging.Config), regions ...*hxRegion) *hedging.Client {
	t.Helper()
	ht := &hedginghttp.Transport{RoundTripper: nw.tr, BaseURLs: map[string]string{}}
	cfg := hedging.Config{
		Strategy:  hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(threshold))),
		Transport: ht,
	}
	for _, r := range regions {
		key := "ep-" + r.Name
		cfg.Regions = append(cfg.Regions, hedging.Endpoint{Region: hedging.Region(r.Name), Key: key})
		ht.BaseURLs[key] = r.URL
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := hedging.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func hxRead() *hedging.Operation {
	return &hedging.Operation{Kind: hedging.PointRead, Partition: "0", Path: "/dbs/db/colls/c/docs/1"}
}

// hxDo runs op with a bounded context and returns the response, the
// (bubble's) time Do took and the error.
func hxDo(t *testing.T, c *hedging.Client, op *hedging.Operation) (*hedging.Response, time.Duration, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	resp, err := c.Do(ctx, op)
	took := time.Since(start)
	if resp != nil && resp.Result.Body != nil {
		_, _ = io.Copy(io.Discard, resp.Result.Body)
		_ = resp.Result.Body.Close()
	}
	return resp, took, err
}

func hxMustOK(t *testing.T, resp *hedging.Response, err error) *hedging.Response {
	t.Helper()
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	return resp
}

func hxHeader(h hxHit, name string) string { return h.Header.Get(name) }

// hedging_read_primary_slow: 2 s delay on A, threshold 200 ms: B wins,
// was_hedge, alternate_region B.
func TestIntegrationReadPrimarySlow(t *testing.T) {
	hxTest(t, func(t *testing.T, nw *stNet) {
		a := hxNewRegion(nw, "A", hxReplyAll(hxReply{Delay: 2 * time.Second}))
		b := hxNewRegion(nw, "B", hxReplyAll(hxReply{Charge: 1.25}))
		c := hxSetup(t, nw, 200*time.Millisecond, nil, a, b)
		resp, took, err := hxDo(t, c, hxRead())
		resp = hxMustOK(t, resp, err)
		d := resp.Diagnostics
		alt, ok := d.AlternateRegion()
		if resp.Region != "B" || resp.Leg != hedging.Alternate || !d.TerminalState().WasHedge() || !ok || alt != "B" {
			t.Errorf("region %s leg %v was_hedge %v alternate %q,%v; want B alternate true B", resp.Region, resp.Leg, d.TerminalState().WasHedge(), alt, ok)
		}
		if resp.RequestCharge != 1.25 {
			t.Errorf("RequestCharge = %v, want the winner's 1.25", resp.RequestCharge)
		}
		if took != 200*time.Millisecond {
			t.Errorf("took %v, want the 200ms threshold (B answers at once)", took)
		}
		bh := b.Hits()
		if len(bh) != 1 || hxHeader(bh[0], hedginghttp.HeaderExecutionContext) != "hedging" {
			t.Errorf("B hits %+v: want one, marked hedging", bh)
		}
		if ah := a.Hits(); len(ah) != 1 || hxHeader(ah[0], hedginghttp.HeaderExecutionContext) != "" {
			t.Errorf("A hits %+v: want one, unmarked", ah)
		}
		a.waitCancelled(t)
	})
}

// hedging_read_primary_fast: no faults: primary wins before the threshold,
// diagnostics attached with was_hedge=false and no alternate.
func TestIntegrationReadPrimaryFast(t *testing.T) {
	hxTest(t, func(t *testing.T, nw *stNet) {
		a := hxNewRegion(nw, "A", hxReplyAll(hxReply{Charge: 2}))
		b := hxNewRegion(nw, "B", hxReplyAll(hxReply{}))
		c := hxSetup(t, nw, 200*time.Millisecond, nil, a, b)
		resp, _, err := hxDo(t, c, hxRead())
		resp = hxMustOK(t, resp, err)
		d := resp.Diagnostics
		if d == nil {
			t.Fatal("no hedge diagnostics although hedging was active")
		}
		if _, ok := d.AlternateRegion(); ok || d.TerminalState().WasHedge() || d.TerminalState() != hedging.PrimaryWonPreThreshold {
			t.Errorf("diagnostics %v: want PrimaryWonPreThreshold, no alternate", d)
		}
		if resp.Region != "A" || resp.RequestCharge != 2 || b.HitCount() != 0 || a.HitCount() != 1 {
			t.Errorf("region %s charge %v hits A=%d B=%d", resp.Region, resp.RequestCharge, a.HitCount(), b.HitCount())
		}
	})
}

// hedging_read_primary_503: 503 on A: the retry upgrades into an immediate
// hedge and B wins with success, well before the threshold.
func TestIntegrationReadPrimary503(t *testing.T) {
	hxTest(t, func(t *testing.T, nw *stNet) {
		a := hxNewRegion(nw, "A", hxReplyAll(hxReply{Status: 503}))
		b := hxNewRegion(nw, "B", hxReplyAll(hxReply{}))
		c := hxSetup(t, nw, 500*time.Millisecond, nil, a, b)
		resp, took, err := hxDo(t, c, hxRead())
		resp = hxMustOK(t, resp, err)
		if resp.Region != "B" || resp.Result.Status.Code != 200 || !resp.Diagnostics.TerminalState().WasHedge() {
			t.Errorf("region %s status %v diag %v: want B 200 AlternateWon", resp.Region, resp.Result.Status, resp.Diagnostics)
		}
		if took != 0 {
			t.Errorf("took %v, want 0: the 503 upgrades into a hedge at once, not at the 500ms threshold", took)
		}
		if n := a.HitCount(); n < 1 || n > 3 {
			t.Errorf("A hits = %d, want 1..3 (local retries only)", n)
		}
	})
}

// hedging_read_both_regions_slow (scaled): A answers after 300 ms, B after
// 300 ms from the 100 ms threshold: whichever responds first (A) wins and
// the other is cancelled.
func TestIntegrationReadBothRegionsSlow(t *testing.T) {
	hxTest(t, func(t *testing.T, nw *stNet) {
		a := hxNewRegion(nw, "A", hxReplyAll(hxReply{Delay: 300 * time.Millisecond}))
		b := hxNewRegion(nw, "B", hxReplyAll(hxReply{Delay: 300 * time.Millisecond}))
		c := hxSetup(t, nw, 100*time.Millisecond, nil, a, b)
		resp, took, err := hxDo(t, c, hxRead())
		resp = hxMustOK(t, resp, err)
		if resp.Region != "A" || resp.Diagnostics.TerminalState() != hedging.PrimaryWonAfterHedge {
			t.Errorf("region %s state %v: want A PrimaryWonAfterHedge", resp.Region, resp.Diagnostics.TerminalState())
		}
		if took != 300*time.Millisecond {
			t.Errorf("took %v, want 300ms (A's answer; B's would come at 400ms)", took)
		}
		if a.HitCount() != 1 || b.HitCount() != 1 {
			t.Errorf("hits A=%d B=%d, want 1 each", a.HitCount(), b.HitCount())
		}
		b.waitCancelled(t)
	})
}

// hedging_write_not_hedged (scaled): a slow write on a multi-master account
// never fans out; it returns after the delay with no diagnostics.
func TestIntegrationWriteNotHedged(t *testing.T) {
	hxTest(t, func(t *testing.T, nw *stNet) {
		a := hxNewRegion(nw, "A", hxReplyAll(hxReply{Delay: 300 * time.Millisecond, Status: 201}))
		b := hxNewRegion(nw, "B", hxReplyAll(hxReply{Status: 201}))
		c := hxSetup(t, nw, 50*time.Millisecond, func(cfg *hedging.Config) { cfg.MultiMaster = true }, a, b)
		op := &hedging.Operation{Kind: hedging.Create, Partition: "0", Method: http.MethodPost, Path: "/docs", Body: []byte(`{"id":"1"}`)}
		resp, took, err := hxDo(t, c, op)
		resp = hxMustOK(t, resp, err)
		if resp.Result.Status.Code != 201 || resp.Diagnostics != nil || resp.Region != "A" {
			t.Errorf("resp %+v: want 201 from A, no diagnostics", resp)
		}
		if took != 300*time.Millisecond {
			t.Errorf("took %v, want A's full 300ms delay", took)
		}
		ah := a.Hits()
		if b.HitCount() != 0 || len(ah) != 1 || ah[0].Method != http.MethodPost || ah[0].Path != "/docs" || string(ah[0].Body) != `{"id":"1"}` {
			t.Errorf("hits A=%+v B=%d: want one POST /docs with the body on A, none on B", ah, b.HitCount())
		}
	})
}

// hedging_disabled_per_operation: client hedging on, operation Disabled: no
// alternate, the normal path.
func TestIntegrationDisabledPerOperation(t *testing.T) {
	hxTest(t, func(t *testing.T, nw *stNet) {
		a := hxNewRegion(nw, "A", hxReplyAll(hxReply{Delay: 200 * time.Millisecond}))
		b := hxNewRegion(nw, "B", hxReplyAll(hxReply{}))
		c := hxSetup(t, nw, 50*time.Millisecond, nil, a, b)
		op := hxRead()
		op.Strategy = hedging.Disabled
		resp, took, err := hxDo(t, c, op)
		resp = hxMustOK(t, resp, err)
		if resp.Diagnostics != nil || resp.Region != "A" || b.HitCount() != 0 || took != 200*time.Millisecond {
			t.Errorf("resp %+v took %v B hits %d: want A after 200ms, no hedge, no diagnostics", resp, took, b.HitCount())
		}
	})
}

// hedging_respects_deadline: the context deadline (100 ms) is before the
// threshold (300 ms): no alternate, a deadline error, the primary's request
// abandoned.
func TestIntegrationRespectsDeadline(t *testing.T) {
	hxTest(t, func(t *testing.T, nw *stNet) {
		a := hxNewRegion(nw, "A", hxReplyAll(hxReply{Delay: 2 * time.Second}))
		b := hxNewRegion(nw, "B", hxReplyAll(hxReply{}))
		c := hxSetup(t, nw, 300*time.Millisecond, nil, a, b)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		resp, err := c.Do(ctx, hxRead())
		took := time.Since(start)
		var he *hedging.Error
		if resp != nil || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &he) {
			t.Fatalf("Do = %v, %v; want a *hedging.Error with DeadlineExceeded", resp, err)
		}
		if he.Diagnostics == nil || he.Diagnostics.TerminalState() != hedging.DeadlineExceededPreThreshold {
			t.Errorf("diagnostics %v: want DeadlineExceededPreThreshold", he.Diagnostics)
		}
		if took != 100*time.Millisecond || b.HitCount() != 0 {
			t.Errorf("took %v, B hits %d: want the 100ms deadline and no alternate", took, b.HitCount())
		}
		a.waitCancelled(t)
	})
}

// hedging_cancels_loser: B wins; A's handler observes the cancellation of
// its request, and A was hit at most once.
func TestIntegrationCancelsLoser(t *testing.T) {
	hxTest(t, func(t *testing.T, nw *stNet) {
		a := hxNewRegion(nw, "A", hxReplyAll(hxReply{Delay: 2 * time.Second}))
		b := hxNewRegion(nw, "B", hxReplyAll(hxReply{}))
		c := hxSetup(t, nw, 50*time.Millisecond, nil, a, b)
		resp, _, err := hxDo(t, c, hxRead())
		resp = hxMustOK(t, resp, err)
		if resp.Region != "B" {
			t.Errorf("winner %s, want B", resp.Region)
		}
		a.waitCancelled(t)
		if n := a.HitCount(); n > 1 {
			t.Errorf("A hit %d times, want <= 1", n)
		}
	})
}

// hedging_failback_to_primary: A is slow for its first 3 requests, then
// fast: the first reads are hedged, the later ones complete on the primary
// before the threshold.
func TestIntegrationFailbackToPrimary(t *testing.T) {
	hxTest(t, func(t *testing.T, nw *stNet) {
		a := hxNewRegion(nw, "A", func(n int) hxReply {
			if n <= 3 {
				return hxReply{Delay: 2 * time.Second}
			}
			return hxReply{}
		})
		b := hxNewRegion(nw, "B", hxReplyAll(hxReply{}))
		// The fast reads answer at once (the bubble's network takes no time),
		// before the 500 ms threshold; the slow ones (2 s) cross it.
		c := hxSetup(t, nw, 500*time.Millisecond, func(cfg *hedging.Config) { cfg.ConsecutiveHedgeWinThreshold = 10 }, a, b)
		for i := range 6 {
			resp, _, err := hxDo(t, c, hxRead())
			resp = hxMustOK(t, resp, err)
			want, state := hedging.Region("B"), hedging.AlternateWon
			if i >= 3 {
				want, state = "A", hedging.PrimaryWonPreThreshold
			}
			if resp.Region != want || resp.Diagnostics.TerminalState() != state {
				t.Errorf("read %d: region %s state %v, want %s %v", i, resp.Region, resp.Diagnostics.TerminalState(), want, state)
			}
		}
		if got := c.HedgeWinTracker().Consecutive("0", "A"); got != 0 {
			t.Errorf("consecutive alternate wins = %d after primary wins, want 0", got)
		}
		if b.HitCount() != 3 || a.HitCount() != 6 {
			t.Errorf("hits A=%d B=%d, want 6 and 3", a.HitCount(), b.HitCount())
		}
		for range 3 {
			a.waitCancelled(t)
		}
	})
}

// hedging_exclude_regions_under_503_retry: three regions; the alternate (B)
// gets a 503, retries locally (MaxAttempts 3) and wins; the healthy third
// region C, excluded by the alternate's ExcludeRegions, is never hit.
func TestIntegrationExcludeRegionsUnder503Retry(t *testing.T) {
	hxTest(t, func(t *testing.T, nw *stNet) {
		a := hxNewRegion(nw, "A", hxReplyAll(hxReply{Delay: 2 * time.Second}))
		b := hxNewRegion(nw, "B", func(n int) hxReply {
			if n == 1 {
				return hxReply{Status: 503}
			}
			return hxReply{}
		})
		cr := hxNewRegion(nw, "C", hxReplyAll(hxReply{}))
		c := hxSetup(t, nw, 50*time.Millisecond, func(cfg *hedging.Config) { cfg.Retry.MaxAttempts = 3 }, a, b, cr)
		resp, _, err := hxDo(t, c, hxRead())
		resp = hxMustOK(t, resp, err)
		if resp.Region != "B" || resp.Leg != hedging.Alternate {
			t.Errorf("winner %s %v, want the alternate B", resp.Region, resp.Leg)
		}
		if cr.HitCount() != 0 || b.HitCount() != 2 {
			t.Errorf("hits B=%d C=%d, want 2 and 0", b.HitCount(), cr.HitCount())
		}
		if l := resp.Diagnostics.Leg(hedging.Alternate); l.Attempts != 2 || l.Endpoint.Region != "B" {
			t.Errorf("alternate leg %+v, want 2 attempts on B", l)
		}
		a.waitCancelled(t)
	})
}

// hedging_alternate_wins_trip_ppcb: N consecutive alternate wins mark the
// partition unhealthy for the primary region; the next read goes to B first.
func TestIntegrationAlternateWinsTripPPCB(t *testing.T) {
	hxTest(t, func(t *testing.T, nw *stNet) {
		const n = 3
		a := hxNewRegion(nw, "A", hxReplyAll(hxReply{Delay: 2 * time.Second}))
		b := hxNewRegion(nw, "B", hxReplyAll(hxReply{}))
		c := hxSetup(t, nw, 500*time.Millisecond, func(cfg *hedging.Config) {
			cfg.ConsecutiveHedgeWinThreshold = n
			cfg.HedgeWinMinSpan = -1 // the spec's count-only rule
		}, a, b)
		for i := range n {
			if c.HedgeWinTracker().Unhealthy(c.Now(), "0", "A") {
				t.Fatalf("tripped after %d wins, want %d", i, n)
			}
			resp, _, err := hxDo(t, c, hxRead())
			resp = hxMustOK(t, resp, err)
			if !resp.Diagnostics.TerminalState().WasHedge() {
				t.Fatalf("read %d not won by the alternate: %v", i, resp.Diagnostics)
			}
		}
		if !c.HedgeWinTracker().Unhealthy(c.Now(), "0", "A") {
			t.Fatalf("partition not unhealthy for A after %d alternate wins", n)
		}
		resp, _, err := hxDo(t, c, hxRead())
		resp = hxMustOK(t, resp, err)
		if resp.Region != "B" || resp.Leg != hedging.Primary || resp.Diagnostics.PrimaryRegion() != "B" {
			t.Errorf("after the trip: region %s leg %v primary %s, want B as the primary", resp.Region, resp.Leg, resp.Diagnostics.PrimaryRegion())
		}
		if st := resp.Diagnostics.TerminalState(); st != hedging.PrimaryWonPreThreshold {
			t.Errorf("after the trip: state %v, want PrimaryWonPreThreshold", st)
		}
		if a.HitCount() != n {
			t.Errorf("A hits = %d, want %d (none after the trip)", a.HitCount(), n)
		}
		for range n {
			a.waitCancelled(t)
		}
	})
}

// hedging_hub_region_header_propagates_across_hedges: A answers 404/1002
// then (slowly) 200; B answers 503 then 200. A's retry carries the hub
// header (its own latch) and every attempt on B carries it too (the shared
// latch), although B never returned 1002.
func TestIntegrationHubRegionHeaderPropagatesAcrossHedges(t *testing.T) {
	hxTest(t, func(t *testing.T, nw *stNet) {
		a := hxNewRegion(nw, "A", func(n int) hxReply {
			if n == 1 {
				return hxReply{Status: 404, SubStatus: 1002}
			}
			return hxReply{Delay: 2 * time.Second}
		})
		b := hxNewRegion(nw, "B", func(n int) hxReply {
			if n == 1 {
				return hxReply{Status: 503}
			}
			return hxReply{Delay: 20 * time.Millisecond}
		})
		c := hxSetup(t, nw, 500*time.Millisecond, nil, a, b)
		resp, _, err := hxDo(t, c, hxRead())
		resp = hxMustOK(t, resp, err)
		if resp.Region != "B" {
			t.Errorf("winner %s, want B", resp.Region)
		}
		ah, bh := a.Hits(), b.Hits()
		if len(ah) != 2 || hxHeader(ah[0], hedginghttp.HeaderHubRegionProcessingOnly) != "" ||
			hxHeader(ah[1], hedginghttp.HeaderHubRegionProcessingOnly) != "True" {
			t.Errorf("A hits %+v: want the first without and the retry with the hub header", ah)
		}
		if len(bh) != 2 {
			t.Fatalf("B hits = %d, want 2", len(bh))
		}
		for i, h := range bh {
			if hxHeader(h, hedginghttp.HeaderHubRegionProcessingOnly) != "True" || hxHeader(h, hedginghttp.HeaderExecutionContext) != "hedging" {
				t.Errorf("B attempt %d headers %v: want the hub header and the hedging marker", i, h.Header)
			}
		}
		a.waitCancelled(t)
	})
}

// A generic 429 with x-ms-retry-after-ms is retried in the primary's region
// after the suggested backoff, without fanning out (spec §7.2.1).
func TestIntegrationThrottleRetryAfter(t *testing.T) {
	hxTest(t, func(t *testing.T, nw *stNet) {
		a := hxNewRegion(nw, "A", func(n int) hxReply {
			if n == 1 {
				return hxReply{Status: 429, RetryMs: 40}
			}
			return hxReply{}
		})
		b := hxNewRegion(nw, "B", hxReplyAll(hxReply{}))
		c := hxSetup(t, nw, 500*time.Millisecond, nil, a, b)
		resp, took, err := hxDo(t, c, hxRead())
		resp = hxMustOK(t, resp, err)
		if resp.Region != "A" || resp.Diagnostics.TerminalState() != hedging.PrimaryWonPreThreshold || a.HitCount() != 2 || b.HitCount() != 0 {
			t.Errorf("region %s state %v hits A=%d B=%d", resp.Region, resp.Diagnostics.TerminalState(), a.HitCount(), b.HitCount())
		}
		if took != 40*time.Millisecond {
			t.Errorf("took %v, want the 40ms backoff and no hedge", took)
		}
	})
}

// The session token returned by one read is sent with the next (spec §9.2).
func TestIntegrationSessionTokenRoundTrip(t *testing.T) {
	hxTest(t, func(t *testing.T, nw *stNet) {
		a := hxNewRegion(nw, "A", hxReplyAll(hxReply{Session: "0:-1#42"}))
		b := hxNewRegion(nw, "B", hxReplyAll(hxReply{}))
		c := hxSetup(t, nw, 500*time.Millisecond, nil, a, b)
		for range 2 {
			resp, _, err := hxDo(t, c, hxRead())
			resp = hxMustOK(t, resp, err)
			if resp.Result.SessionLSN != 42 {
				t.Errorf("SessionLSN = %d, want 42", resp.Result.SessionLSN)
			}
		}
		ah := a.Hits()
		if len(ah) != 2 || hxHeader(ah[0], hedginghttp.HeaderSessionToken) != "" || hxHeader(ah[1], hedginghttp.HeaderSessionToken) != "0:42" {
			t.Errorf("session headers %q %q, want none then 0:42",
				hxHeader(ah[0], hedginghttp.HeaderSessionToken), hxHeader(ah[1], hedginghttp.HeaderSessionToken))
		}
	})
}

// TestTransportSend exercises Transport directly: request shape, headers
// both ways, the unread body, and its errors.
func TestTransportSend(t *testing.T) {
	hxTest(t, func(t *testing.T, nw *stNet) {
		r := hxNewRegion(nw, "A", hxReplyAll(hxReply{Status: 429, SubStatus: 3200, Charge: 3.5, RetryMs: 12, Session: "0:7"}))
		ht := &hedginghttp.Transport{
			RoundTripper: nw.tr,
			BaseURLs:     map[string]string{"k": r.URL},
			Prepare: func(req *http.Request, _ *hedging.Operation, _ hedging.Attempt) error {
				req.Header.Set("Authorization", "token")
				return nil
			},
		}
		op := &hedging.Operation{Partition: "p1", Method: http.MethodPut, Path: "/x", Body: []byte("payload")}
		a := hedging.Attempt{Endpoint: hedging.Endpoint{Region: "A", Key: "k"}, Hedging: true, HubRegionProcessingOnly: true, SessionLSN: 99}
		res := ht.Send(context.Background(), op, a)
		body := res.Body
		res.Body = nil
		want := hedging.Result{Status: hedging.Status{Code: 429, SubStatus: 3200}, RequestCharge: 3.5, SessionLSN: 7, RetryAfter: 12 * time.Millisecond}
		if res != want {
			t.Errorf("Send = %+v, want %+v", res, want)
		}
		hr, ok := hedginghttp.HTTPResponse(body)
		if !ok || hr.StatusCode != 429 {
			t.Fatalf("HTTPResponse(%T) = %v, %v", body, hr, ok)
		}
		if got, _ := io.ReadAll(body); string(got) != `{"region":"A"}` {
			t.Errorf("body %q", got)
		}
		_ = body.Close()
		h := r.Hits()
		if len(h) != 1 {
			t.Fatalf("hits = %d", len(h))
		}
		hit := h[0]
		if hit.Method != http.MethodPut || hit.Path != "/x" || string(hit.Body) != "payload" ||
			hxHeader(hit, hedginghttp.HeaderHubRegionProcessingOnly) != "True" ||
			hxHeader(hit, hedginghttp.HeaderSessionToken) != "p1:99" ||
			hxHeader(hit, hedginghttp.HeaderExecutionContext) != "hedging" ||
			hxHeader(hit, "Authorization") != "token" {
			t.Errorf("request %s %s %q headers %v", hit.Method, hit.Path, hit.Body, hit.Header)
		}

		// No base URL for the endpoint, whether the request is built from op or
		// copied from op.Request.
		const noBase = `hedginghttp: no base URL for endpoint "z" (region "Z")`
		res = ht.Send(context.Background(), op, hedging.Attempt{Endpoint: hedging.Endpoint{Region: "Z", Key: "z"}})
		if res.Err == nil || res.Err.Error() != noBase {
			t.Errorf("unknown endpoint: Err = %v, want %q", res.Err, noBase)
		}
		req, err := http.NewRequest(http.MethodGet, r.URL+"/x", nil)
		if err != nil {
			t.Fatal(err)
		}
		res = ht.Send(context.Background(), &hedging.Operation{Request: req}, hedging.Attempt{Endpoint: hedging.Endpoint{Region: "Z", Key: "z"}})
		if res.Err == nil || res.Err.Error() != noBase {
			t.Errorf("unknown endpoint, op.Request: Err = %v, want %q", res.Err, noBase)
		}
		// A cancelled context.
		cctx, cancel := context.WithCancel(context.Background())
		cancel()
		if res := ht.Send(cctx, op, a); !errors.Is(res.Err, context.Canceled) || res.Final() {
			t.Errorf("cancelled: Err = %v", res.Err)
		}
	})
}

func TestParseSessionLSN(t *testing.T) {
	for in, want := range map[string]int64{
		"": 0, "0:42": 42, "0:-1#42": 42, "1:7,0:42": 42, "0:42, 1:7": 42, "garbage": 0, "0:x": 0, "17": 17, "0:-1": 0,
	} {
		if got := hedginghttp.ParseSessionLSN(in); got != want {
			t.Errorf("ParseSessionLSN(%q) = %d, want %d", in, got, want)
		}
	}
}

// FuzzParseSessionLSN checks that any header value parses without panicking
// to a non-negative LSN.
func FuzzParseSessionLSN(f *testing.F) {
	for _, s := range []string{"0:42", "0:-1#42", "1:7,0:42", ",,:", "#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n := hedginghttp.ParseSessionLSN(s); n < 0 {
			t.Fatalf("ParseSessionLSN(%q) = %d", s, n)
		}
	})
}
