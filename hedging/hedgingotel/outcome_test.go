package hedgingotel_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"hedgelab/hedging"
	"hedgelab/hedging/hedgingotel"
)

// otClient returns a client over regions A and B, threshold 100 ms, one
// attempt per leg, reporting to obs, whose transport is *tr at call time.
func otClient(t *testing.T, obs hedging.Observer, tr *hedging.Transport) *hedging.Client {
	t.Helper()
	c, err := hedging.NewClient(hedging.Config{
		Regions:  []hedging.Endpoint{{Region: "A", Key: "a"}, {Region: "B", Key: "b"}},
		Strategy: hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(100 * time.Millisecond))),
		Transport: sendFunc(func(ctx context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result {
			return (*tr).Send(ctx, op, a)
		}),
		Observer: obs,
		Retry:    hedging.RetryOptions{MaxAttempts: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// otReader returns an Observer on a fresh MeterProvider and its reader.
func otReader(t *testing.T) (*hedgingotel.Observer, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	obs, err := hedgingotel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	if err != nil {
		t.Fatal(err)
	}
	return obs, reader
}

// Issue 18: a primary answering 429 or 500 in 12 ms was counted as a
// successful primary win (71% failed operations all primary_won in a 408
// storm). result keeps the spec's value (primary_won: the primary answered
// first); outcome says the operation failed. A final 404 is the service's
// answer (final_error), a 200 a success; only successes record latency.
func TestOutcomeSeparatesFailedWinsFromSuccesses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obs, reader := otReader(t)
		var tr hedging.Transport
		c := otClient(t, obs, &tr)
		for _, code := range []int{429, 500, 408, 404, 200} {
			tr = scripted(leg{12 * time.Millisecond, code, 1}, leg{})
			resp, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Partition: "p"})
			if (err == nil) != (code < 405) {
				t.Errorf("%d: Do = %v, %v", code, resp, err)
			}
		}
		synctest.Wait()
		got := collect(t, reader)
		eqSorted(t, hedgingotel.MetricOperations, counterOf(t, got, hedgingotel.MetricOperations), map[string]int64{
			"outcome=transient_error,result=primary_won": 3,
			"outcome=final_error,result=primary_won":     1,
			"outcome=success,result=primary_won":         1,
		})
		eqSorted(t, hedgingotel.MetricFirstResponseLatency, histOf(t, got, hedgingotel.MetricFirstResponseLatency),
			map[string][2]float64{"was_hedge=false": {2, 24}})
	})
}

// alternate_spawned_total carries the cause: the threshold elapsing, or a
// failover on the primary's 503 (sent at once, spec §7.2.1).
func TestAlternateSpawnedByCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obs, reader := otReader(t)
		var tr hedging.Transport
		c := otClient(t, obs, &tr)
		for _, p := range []leg{{time.Second, 200, 1}, {5 * time.Millisecond, 503, 1}, {10 * time.Millisecond, 200, 1}} {
			tr = scripted(p, leg{20 * time.Millisecond, 200, 1})
			if _, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Partition: "p"}); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		eqSorted(t, hedgingotel.MetricAlternateSpawned, counterOf(t, collect(t, reader), hedgingotel.MetricAlternateSpawned),
			map[string]int64{"cause=threshold": 1, "cause=503": 1})
	})
}

// Issue 18: a loser's RU that lands as the race ends was left out of
// ru_charge_total. The alternate (sent at 100 ms, 30 ms) and the primary
// (130 ms) answer 200 at the same instant: the primary wins the tie and the
// alternate's answer, already in, is the loser's: RU 5 + 3.
func TestLoserRUAtRaceEndIsCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obs, reader := otReader(t)
		tr := hedging.Transport(scripted(leg{130 * time.Millisecond, 200, 5}, leg{30 * time.Millisecond, 200, 3}))
		c := otClient(t, obs, &tr)
		resp, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Partition: "p"})
		if err != nil {
			t.Fatal(err)
		}
		if ts := resp.Diagnostics.TerminalState(); ts != hedging.PrimaryWonAfterHedge || resp.RequestCharge != 5 || resp.Diagnostics.RequestChargeTotal() != 8 {
			t.Errorf("%v, caller RU %v, total %v; want PrimaryWonAfterHedge, 5, 8", ts, resp.RequestCharge, resp.Diagnostics.RequestChargeTotal())
		}
		synctest.Wait()
		got := collect(t, reader)
		eqSorted(t, hedgingotel.MetricRUChargeTotal, histOf(t, got, hedgingotel.MetricRUChargeTotal), map[string][2]float64{"winner_region=A": {1, 8}})
		eqSorted(t, hedgingotel.MetricRUChargeWinner, histOf(t, got, hedgingotel.MetricRUChargeWinner), map[string][2]float64{"was_hedge=false": {1, 5}})
	})
}

// The zero Observer records to the global MeterProvider; a nil *Observer
// (say, New's result when its error was ignored) is refused by NewClient.
func TestObserverZeroValueAndNil(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	synctest.Test(t, func(t *testing.T) {
		tr := hedging.Transport(scripted(leg{time.Millisecond, 200, 1}, leg{}))
		c := otClient(t, &hedgingotel.Observer{}, &tr)
		if _, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Partition: "p"}); err != nil {
			t.Fatal(err)
		}
	})
	eqSorted(t, hedgingotel.MetricOperations, counterOf(t, collect(t, reader), hedgingotel.MetricOperations),
		map[string]int64{"outcome=success,result=primary_won": 1})

	var nilObs *hedgingotel.Observer
	_, err := hedging.NewClient(hedging.Config{Observer: nilObs})
	if err == nil || !strings.Contains(err.Error(), "Config.Observer is a nil *hedgingotel.Observer") {
		t.Errorf("NewClient with a nil *Observer: %v, want an error naming it", err)
	}
}
