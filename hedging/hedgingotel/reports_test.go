package hedgingotel_test

// Issue 27's reports on metrics: two clients on one MeterProvider, the
// cause of an alternate win, and the attempts a client-side limiter
// refuses. Each asserts the value a dashboard should show.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"hedgelab/hedging"
	"hedgelab/hedging/hedgingotel"
)

// grafana/loki PR #10281, grafana/dskit PR #115: two clients' metrics must
// stay apart. Two clients on one MeterProvider, labelled client=orders and
// client=users, each run two operations; orders' alternate wins twice on
// partition p, users' primary wins: operations_total has two series of 2
// and the breaker gauge one point per client (orders 2, users 0), not one
// point overwritten by the last client.
func TestReportTwoClientsStayApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		client := func(name string, p, a leg) *hedging.Client {
			obs, err := hedgingotel.New(mp, hedgingotel.WithAttributes(attribute.String("client", name)))
			if err != nil {
				t.Fatal(err)
			}
			tr := hedging.Transport(scripted(p, a))
			return otClient(t, obs, &tr)
		}
		orders := client("orders", leg{time.Second, 200, 1}, leg{10 * time.Millisecond, 200, 1})
		users := client("users", leg{10 * time.Millisecond, 200, 1}, leg{})
		for range 2 {
			for _, c := range []*hedging.Client{orders, users} {
				if _, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Partition: "p"}); err != nil {
					t.Fatal(err)
				}
			}
		}
		got := collect(t, reader)
		eqSorted(t, hedgingotel.MetricOperations, counterOf(t, got, hedgingotel.MetricOperations), map[string]int64{
			"cause=threshold,client=orders,outcome=success,result=alternate_won": 2,
			"client=users,outcome=success,result=primary_won":                    2,
		})
		g := got[hedgingotel.MetricConsecutiveAlternateWins].Data.(metricdata.Gauge[int64])
		points := map[string]int64{}
		for _, dp := range g.DataPoints {
			points[dp.Attributes.Encoded(attribute.DefaultEncoder())] = dp.Value
		}
		eqSorted(t, hedgingotel.MetricConsecutiveAlternateWins, points, map[string]int64{
			"client=orders,partition=p,primary_region=A": 2,
			"client=users,partition=p,primary_region=A":  0,
		})
	})
}

// cristalhq/hedgedhttp #42: "of the hedges sent at the threshold, how
// many helped?" Four reads hedge at the threshold and the alternate wins
// one; two more fail over on the primary's 503 and the alternate wins
// both. alternate_won over alternate_spawned reads 3/6 = 50%, and
// alternate_won{cause=threshold} over spawned{cause=threshold} 1/4 = 25%,
// the truth.
func TestReportAlternateWonByCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obs, reader := otReader(t)
		var tr hedging.Transport
		c := otClient(t, obs, &tr)
		for i, p := range []leg{
			{200 * time.Millisecond, 200, 1}, // hedged at 100 ms, alternate (200 ms) loses
			{200 * time.Millisecond, 200, 1},
			{200 * time.Millisecond, 200, 1},
			{time.Second, 200, 1}, // hedged at 100 ms, alternate wins
			{5 * time.Millisecond, 503, 1},
			{5 * time.Millisecond, 503, 1},
		} {
			a := leg{200 * time.Millisecond, 200, 1}
			if i >= 3 {
				a = leg{20 * time.Millisecond, 200, 1}
			}
			tr = scripted(p, a)
			// A partition per read: the breaker never demotes A.
			if _, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Partition: string(rune('a' + i))}); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		got := collect(t, reader)
		ops, spawned := counterOf(t, got, hedgingotel.MetricOperations), counterOf(t, got, hedgingotel.MetricAlternateSpawned)
		helped := float64(ops["cause=threshold,outcome=success,result=alternate_won"]) / float64(spawned["cause=threshold"])
		if helped != 0.25 {
			t.Errorf("threshold hedges that helped: %v (operations %v, spawned %v), want 0.25", helped, ops, spawned)
		}
	})
}

// limiter is a client-side rate limiter inside the transport: it refuses
// an attempt once its tokens are spent (a token per attempt, none
// refilled), as a RoundTripper wrapping golang.org/x/time/rate would.
type limiter struct {
	hedging.Transport
	mu             sync.Mutex
	tokens         int
	refused        [2]int // by leg
	errRateLimited error
}

func (l *limiter) Send(ctx context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result {
	l.mu.Lock()
	if l.tokens == 0 {
		l.refused[a.Leg]++
		l.mu.Unlock()
		return hedging.Result{Err: l.errRateLimited}
	}
	l.tokens--
	l.mu.Unlock()
	return l.Transport.Send(ctx, op, a)
}

// alexfalkowski/go-service PR #2380: hedges consume a client-side limiter,
// which then refuses attempts the caller never sees. Every read hedges
// (primary 200 ms, threshold 100 ms, alternate 20 ms, one attempt per leg)
// through a limiter of 25 tokens: 12 reads take 24; the 13th's primary
// takes the last and its hedge is refused (the primary still answers);
// the 14th and 15th are refused on the primary and on the alternate the
// refusal fails over to at once. The caller sees 2 failed reads; the
// limiter refused 5 attempts, and attempts_total counts each as
// transport_error on its leg: primary 2, alternate 3.
func TestReportLimiterRefusalsCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obs, reader := otReader(t)
		lim := &limiter{Transport: scripted(leg{200 * time.Millisecond, 200, 1}, leg{20 * time.Millisecond, 200, 1}),
			tokens: 25, errRateLimited: errors.New("rate limited")}
		tr := hedging.Transport(lim)
		c := otClient(t, obs, &tr)
		failed := 0
		for i := range 15 {
			if _, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Partition: string(rune('a' + i))}); err != nil {
				failed++
			}
		}
		synctest.Wait()
		at := counterOf(t, collect(t, reader), hedgingotel.MetricAttempts)
		p, a := at["leg=primary,outcome=transport_error"], at["leg=alternate,outcome=transport_error"]
		if failed != 2 || lim.refused != [2]int{2, 3} || p != 2 || a != 3 {
			t.Errorf("caller saw %d failures, limiter refused %v, attempts_total transport_error primary %d alternate %d; want 2, [2 3], 2, 3 (%v)",
				failed, lim.refused, p, a, at)
		}
	})
}
