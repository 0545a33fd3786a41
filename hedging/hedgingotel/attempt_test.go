package hedgingotel_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"hedgelab/hedging"
	"hedgelab/hedging/hedgingotel"
)

// An alternate win (primary abandoned at 130 ms, alternate 200 after 30
// ms), a primary 200 in 10 ms and a both-503 failure: attempt_latency_ms
// holds one series per (region, leg, status), the abandoned primary's
// latency a lower bound at the race's end, in the bucket 2^(i/32) ms that
// contains it.
func TestObserverRecordsAttemptLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		obs, err := hedgingotel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
		if err != nil {
			t.Fatal(err)
		}
		var tr hedging.Transport
		c, err := hedging.NewClient(hedging.Config{
			Regions:  []hedging.Endpoint{{Region: "A", Key: "a"}, {Region: "B", Key: "b"}},
			Strategy: hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(100 * time.Millisecond))),
			Transport: sendFunc(func(ctx context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result {
				return tr.Send(ctx, op, a)
			}),
			Observer: obs,
			Retry:    hedging.RetryOptions{MaxAttempts: 1},
		})
		if err != nil {
			t.Fatal(err)
		}
		run := func(p, a leg) error {
			tr = scripted(p, a)
			_, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Partition: "p1"})
			return err
		}
		if err := run(leg{time.Second, 200, 9}, leg{30 * time.Millisecond, 200, 2}); err != nil {
			t.Fatal(err)
		}
		if err := run(leg{10 * time.Millisecond, 200, 1}, leg{}); err != nil {
			t.Fatal(err)
		}
		if err := run(leg{120 * time.Millisecond, 503, 0.5}, leg{150 * time.Millisecond, 503, 0.5}); !errors.Is(err, hedging.ErrTransient) {
			t.Fatalf("err = %v, want ErrTransient", err)
		}
		synctest.Wait()

		got := collect(t, reader)
		eqSorted(t, hedgingotel.MetricAttemptLatency, histOf(t, got, hedgingotel.MetricAttemptLatency), map[string][2]float64{
			"leg=primary,region=A,status=abandoned": {1, 130},
			"leg=alternate,region=B,status=200":     {1, 30},
			"leg=primary,region=A,status=200":       {1, 10},
			"leg=primary,region=A,status=503":       {1, 120},
			"leg=alternate,region=B,status=503":     {1, 150},
		})
		h := got[hedgingotel.MetricAttemptLatency].Data.(metricdata.Histogram[float64])
		for _, dp := range h.DataPoints {
			b := dp.Bounds
			if len(b) != 673 || b[0] != 1.0/16 || b[len(b)-1] != 1<<17 {
				t.Fatalf("bounds: %d from %g to %g, want 673 from 1/16 to 2^17 ms", len(b), b[0], b[len(b)-1])
			}
			for i := 1; i < len(b); i++ {
				if r := b[i] / b[i-1]; math.Abs(r-math.Exp2(1.0/32)) > 1e-12 {
					t.Fatalf("bounds[%d]/bounds[%d] = %g, want 2^(1/32)", i, i-1, r)
				}
			}
			for i, n := range dp.BucketCounts {
				if n == 0 {
					continue
				}
				// Bucket i holds (b[i-1], b[i]].
				if v := dp.Sum; (i > 0 && v <= b[i-1]) || (i < len(b) && v > b[i]) {
					t.Errorf("%v: %g ms in bucket %d", dp.Attributes, v, i)
				}
			}
		}
	})
}
