package hedgingotel_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"hedgelab/hedging"
	"hedgelab/hedging/hedgingotel"
)

// sendFunc adapts a function to hedging.Transport.
type sendFunc func(ctx context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result

func (f sendFunc) Send(ctx context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result {
	return f(ctx, op, a)
}

// script answers per leg: a latency and a status with a request charge.
type leg struct {
	lat  time.Duration
	code int
	ru   float64
}

func scripted(p, a leg) sendFunc {
	return func(ctx context.Context, _ *hedging.Operation, at hedging.Attempt) hedging.Result {
		l := p
		if at.Leg == hedging.Alternate {
			l = a
		}
		select {
		case <-time.After(l.lat):
			return hedging.Result{Status: hedging.Status{Code: l.code}, RequestCharge: l.ru}
		case <-ctx.Done():
			return hedging.Result{Err: ctx.Err()}
		}
	}
}

// Four operations through one client with the Observer: a primary win
// before the threshold (RU 1, 10 ms), an alternate win (primary cancelled,
// RU 2, 100 + 30 ms), a write (hedging disabled for it) and a both-503
// failure (RU 0.5 + 0.5). Every §10.4 metric is read back from a
// ManualReader under its exact name, type and labels.
func TestObserverRecordsReservedMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		obs, err := hedgingotel.New(mp)
		if err != nil {
			t.Fatal(err)
		}
		var tr hedging.Transport
		cfg := hedging.Config{
			Regions:  []hedging.Endpoint{{Region: "A", Key: "a"}, {Region: "B", Key: "b"}},
			Strategy: hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(100 * time.Millisecond))),
			Transport: sendFunc(func(ctx context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result {
				return tr.Send(ctx, op, a)
			}),
			Observer: obs,
			Retry:    hedging.RetryOptions{MaxAttempts: 1},
		}
		c, err := hedging.NewClient(cfg)
		if err != nil {
			t.Fatal(err)
		}
		run := func(p, a leg, kind hedging.OperationKind) error {
			tr = scripted(p, a)
			_, err := c.Do(context.Background(), &hedging.Operation{Kind: kind, Partition: "p1"})
			return err
		}
		if err := run(leg{10 * time.Millisecond, 200, 1}, leg{}, hedging.PointRead); err != nil {
			t.Fatal(err)
		}
		if err := run(leg{time.Second, 200, 9}, leg{30 * time.Millisecond, 200, 2}, hedging.PointRead); err != nil {
			t.Fatal(err)
		}
		if err := run(leg{5 * time.Millisecond, 201, 7}, leg{}, hedging.Create); err != nil {
			t.Fatal(err)
		}
		if err := run(leg{120 * time.Millisecond, 503, 0.5}, leg{150 * time.Millisecond, 503, 0.5}, hedging.PointRead); !errors.Is(err, hedging.ErrTransient) {
			t.Fatalf("err = %v, want ErrTransient", err)
		}
		synctest.Wait()

		got := collect(t, reader)
		if len(got) != 9 {
			t.Errorf("%d metrics, want the 7 of §10.4, attempts_total and attempt_latency_ms: %v", len(got), got)
		}
		counter := func(name string) map[string]int64 { t.Helper(); return counterOf(t, got, name) }
		hist := func(name string) map[string][2]float64 { t.Helper(); return histOf(t, got, name) }
		eq := func(name string, got, want any) { t.Helper(); eqSorted(t, name, got, want) }
		eq(hedgingotel.MetricOperations, counter(hedgingotel.MetricOperations),
			map[string]int64{"outcome=success,result=primary_won": 1, "cause=threshold,outcome=success,result=alternate_won": 1,
				"outcome=success,result=disabled": 1, "cause=threshold,outcome=transient_error,result=both_transient": 1})
		eq(hedgingotel.MetricAlternateSpawned, counter(hedgingotel.MetricAlternateSpawned), map[string]int64{"cause=threshold": 2})
		eq(hedgingotel.MetricCanceled, counter(hedgingotel.MetricCanceled), map[string]int64{"reason=winner_found": 1})
		eq(hedgingotel.MetricFirstResponseLatency, hist(hedgingotel.MetricFirstResponseLatency),
			map[string][2]float64{"was_hedge=false": {1, 10}, "was_hedge=true": {1, 130}})
		eq(hedgingotel.MetricRUChargeWinner, hist(hedgingotel.MetricRUChargeWinner),
			map[string][2]float64{"was_hedge=false": {1, 1}, "was_hedge=true": {1, 2}})
		eq(hedgingotel.MetricRUChargeTotal, hist(hedgingotel.MetricRUChargeTotal),
			map[string][2]float64{"winner_region=A": {1, 1}, "winner_region=B": {1, 2}, "winner_region=none": {1, 1}})
		g, ok := got[hedgingotel.MetricConsecutiveAlternateWins].Data.(metricdata.Gauge[int64])
		if !ok || len(g.DataPoints) != 1 {
			t.Fatalf("%s: %T %v, want one int64 gauge point", hedgingotel.MetricConsecutiveAlternateWins, got[hedgingotel.MetricConsecutiveAlternateWins].Data, g)
		}
		// Last value: the alternate win made the streak 1; the both-503 race
		// (no final response) neither extends nor resets it (§9.5).
		if dp := g.DataPoints[0]; dp.Value != 1 || dp.Attributes.Encoded(attribute.DefaultEncoder()) != "partition=p1,primary_region=A" {
			t.Errorf("gauge point %v = %d, want partition=p1,primary_region=A = 1", dp.Attributes.Encoded(attribute.DefaultEncoder()), dp.Value)
		}
		if u := got[hedgingotel.MetricFirstResponseLatency].Unit; u != "ms" {
			t.Errorf("latency unit %q", u)
		}
	})
}
