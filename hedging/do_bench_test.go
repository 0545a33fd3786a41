package hedging_test

// Benchmarks of the driver's and the race core's own cost on the happy path
// (the primary answers before the threshold). The HTTP comparisons (plain
// net/http, NewRoundTripper, cristalhq/hedgedhttp) are in hedginghttp. They
// report numbers only; no timing is asserted. Helpers are prefixed "bx".

import (
	"context"
	"testing"
	"time"

	"hedgelab/hedging"
)

// bxThreshold is well above any benchmark's latency, so no iteration hedges.
const bxThreshold = time.Second

func bxHedging(d time.Duration) hedging.AvailabilityStrategy {
	return hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(d)))
}

// Client.Do over an in-memory transport that answers at once: the driver's
// own cost per operation (target: at most 1 allocation, the Response).
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

func bxSend(b *testing.B, e *hedging.Effects, leg hedging.Leg) hedging.Attempt {
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
	var e hedging.Effects
	now := time.Second
	b.ReportAllocs()
	for b.Loop() {
		c.Begin(&e, &r, now, op)
		p := bxSend(b, &e, hedging.Primary)
		r.Responded(&e, now+50*time.Millisecond, &p, &ok)
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
	var e hedging.Effects
	now := time.Second
	b.ReportAllocs()
	for b.Loop() {
		c.Begin(&e, &r, now, op)
		p := bxSend(b, &e, hedging.Primary)
		r.TimerFired(&e, now+200*time.Millisecond, hedging.TimerThreshold)
		bxSend(b, &e, hedging.Alternate)
		r.Responded(&e, now+250*time.Millisecond, &p, &ok)
		if !r.Done() || !r.AlternateSpawned() {
			b.Fatal("race not hedged and done")
		}
		now += time.Second
	}
}
