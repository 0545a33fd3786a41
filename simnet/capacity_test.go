package simnet_test

import (
	"math"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"
)

// cancelModeScenario is a closed loop of one client (think 100 ms) whose
// primary answers in exactly 5 ms (replica a, no servers, 0 ms RTT); a
// 1 ms static threshold sends every operation's alternate to replica b
// (1 ms away, one server, 150 ms per request), where it is cancelled at
// +5 ms and the cancellation arrives at +6 ms. Operations start every
// 105 ms, so an alternate arrives while the previous one, if served in
// full, is still in service.
func cancelModeScenario(t *testing.T, mode simnet.CancelMode, ops int64) *simnet.Config {
	return &simnet.Config{
		Seed: 1, MaxOps: ops, ClientRegion: "c",
		Endpoints: []simnet.Endpoint{{Region: "A", Replica: "a"}, {Region: "B", Replica: "b"}},
		Replicas: []simnet.Replica{
			{Name: "a", Region: "c", Default: constant(t, 5)},
			{Name: "b", Region: "pb", Servers: 1, Default: constant(t, 150), Cancel: mode},
		},
		RTTMs:    map[string]map[string]float64{"c": {"pb": 2}},
		Workload: simnet.Workload{Clients: 1, Think: constant(t, 100)},
		Client:   hedging.Config{Retry: hedging.RetryOptions{MaxAttempts: 1}, ConsecutiveHedgeWinThreshold: 1 << 30},
	}
}

// Each cancel mode, with exact RU and busy time: "queued" serves every
// other alternate in full (the next one queues behind it and is removed
// when its cancellation arrives); "in_service" aborts every alternate 4 ms
// into service (charged 4/150 RU) and frees the server; "none" serves
// every alternate in full, queued or not.
func TestCancelModes(t *testing.T) {
	const n = 20
	cases := []struct {
		mode            simnet.CancelMode
		altRU           float64 // RU charged for the n alternates
		busy            time.Duration
		removed, served int64
		aborted         int64
	}{
		{simnet.CancelQueued, n / 2, n / 2 * 150 * time.Millisecond, n / 2, n / 2, 0},
		{simnet.CancelInService, n * 4.0 / 150, n * 4 * time.Millisecond, 0, n, n},
		{simnet.CancelNone, n, n * 150 * time.Millisecond, 0, n, 0},
	}
	for _, c := range cases {
		t.Run(c.mode.String(), func(t *testing.T) {
			st, err := simnet.Run(cancelModeScenario(t, c.mode, n), staticPolicy(1), 0, simnet.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if st.Ops != n || st.Terminal[hedging.PrimaryWonAfterHedge] != n {
				t.Fatalf("ops %d, terminal states %v: want %d PrimaryWonAfterHedge", st.Ops, st.Terminal, n)
			}
			if got := st.RUCharged - st.RUReturned; math.Abs(got-c.altRU) > 1e-9 {
				t.Errorf("alternates charged %v RU, want %v", got, c.altRU)
			}
			b := st.Capacity.Replicas[1]
			if b.Busy != c.busy {
				t.Errorf("busy %v, want %v", b.Busy, c.busy)
			}
			if st.Removed != c.removed || b.ClientServed != c.served || b.AbortedInService != c.aborted {
				t.Errorf("removed %d, served %d, aborted %d; want %d, %d, %d", st.Removed, b.ClientServed, b.AbortedInService, c.removed, c.served, c.aborted)
			}
			// Utilisation is busy time over the run (no Duration: to its end).
			if u, want := st.Capacity.Utilisation(1), float64(c.busy)/float64(st.End); math.Abs(u-want) > 1e-12 {
				t.Errorf("utilisation %v, want %v", u, want)
			}
			if !math.IsNaN(st.Capacity.Utilisation(0)) {
				t.Errorf("utilisation of a replica without servers = %v, want NaN", st.Capacity.Utilisation(0))
			}
		})
	}
}

// in_service on a replica without servers: only the charge is pro rata.
func TestCancelInServiceWithoutServers(t *testing.T) {
	cfg := cancelModeScenario(t, simnet.CancelInService, 10)
	cfg.Replicas[1].Servers = 0
	st, err := simnet.Run(cfg, staticPolicy(1), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.RUCharged-st.RUReturned, 10*4.0/150; math.Abs(got-want) > 1e-9 {
		t.Errorf("alternates charged %v RU, want %v", got, want)
	}
	if b := st.Capacity.Replicas[1]; b.Busy != 0 || b.AbortedInService != 10 {
		t.Errorf("busy %v, aborted %d; want 0, 10", b.Busy, b.AbortedInService)
	}
}

// queueLimitScenario: three closed-loop clients (think 1 ms) at replica a
// (one server, 100 ms per request, queue_limit 1): at 1 ms client 0 is
// served and client 1 waits; client 2 is refused, and refused again every
// ms until max_ops is reached.
func queueLimitScenario(t *testing.T, overflow hedging.Status) *simnet.Config {
	return &simnet.Config{
		Seed: 1, MaxOps: 10, ClientRegion: "c",
		Endpoints: []simnet.Endpoint{{Region: "A", Replica: "a"}, {Region: "B", Replica: "b"}},
		Replicas: []simnet.Replica{
			{Name: "a", Region: "c", Servers: 1, QueueLimit: 1, OverflowStatus: overflow, Default: constant(t, 100)},
			{Name: "b", Region: "c", Default: constant(t, 1)},
		},
		Workload: simnet.Workload{Clients: 3, Think: constant(t, 1)},
	}
}

// A request refused by a full queue answers with overflow_status, and the
// client treats it as hedging classifies it: 429/3200 is final (it
// reaches the caller), 503 fails over to the next region.
func TestQueueLimitRefuses(t *testing.T) {
	throttle := hedging.Status{Code: 429, SubStatus: hedging.SubStatusRUBudgetExceeded}
	statuses := map[hedging.Status]int{}
	st, err := simnet.Run(queueLimitScenario(t, throttle), disabledPolicy(), 0, simnet.RunOptions{
		OnComplete: func(r *hedging.Race, _ *hedging.Operation) { statuses[r.Status()]++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	a := st.Capacity.Replicas[0]
	if a.RefusedClient != 8 || statuses[throttle] != 8 || statuses[hedging.Status{Code: 200}] != 2 || st.FinalErrorResponses != 8 {
		t.Errorf("refused %d, statuses %v, final error responses %d; want 8 refused answered 429/3200 and 2 served",
			a.RefusedClient, statuses, st.FinalErrorResponses)
	}
	if q := a.QueueLen; q.Max() != 1 || q.TotalCount() != 10 {
		t.Errorf("queue length max %d over %d samples, want 1 over 10 arrivals", q.Max(), q.TotalCount())
	}

	st, err = simnet.Run(queueLimitScenario(t, hedging.Status{}), disabledPolicy(), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The first refusal fails over to b and marks a unavailable (§6.4), so
	// the later operations of client 2 go to b directly.
	if st.Capacity.Replicas[0].RefusedClient != 1 || st.ReplicaAnswers[1] != 8 || st.FinalErrorResponses != 0 || st.Errors != 0 {
		t.Errorf("503: refused %d, answers from b %d, final errors %d, errors %d; want 1 refused, 8 answered by b",
			st.Capacity.Replicas[0].RefusedClient, st.ReplicaAnswers[1], st.FinalErrorResponses, st.Errors)
	}
}

// backgroundScenario: a light client reading from a (no servers) and
// background load at b (2 servers, lognormal ~2 ms) at rate per second.
func backgroundScenario(t *testing.T, rate float64) *simnet.Config {
	svc, err := dist.Spec{Family: "lognormal", MedianMs: f(2), P99Ms: f(6)}.Build()
	if err != nil {
		t.Fatal(err)
	}
	cfg := &simnet.Config{
		Seed: 7, Duration: 20 * time.Second, ClientRegion: "c",
		Endpoints: []simnet.Endpoint{{Region: "A", Replica: "a"}, {Region: "B", Replica: "b"}},
		Replicas: []simnet.Replica{
			{Name: "a", Region: "c", Default: constant(t, 2)},
			{Name: "b", Region: "pb", Servers: 2, Default: svc},
		},
		RTTMs:    map[string]map[string]float64{"c": {"pb": 10}},
		Workload: simnet.Workload{RatePerSec: 50},
	}
	if rate > 0 {
		cfg.Background = []simnet.Background{{Target: "pb", RatePerSec: rate}}
	}
	return cfg
}

// Background latency grows with the background rate (M/G/2 queueing), its
// volume is the Poisson rate, and it leaves the client's draws alone.
func TestBackgroundLoad(t *testing.T) {
	var p99 []float64
	base, err := simnet.Run(backgroundScenario(t, 0), disabledPolicy(), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rate := range []float64{200, 500, 800} {
		st, err := simnet.Run(backgroundScenario(t, rate), disabledPolicy(), 0, simnet.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b := st.Capacity.Replicas[1]
		if want := rate * 20; math.Abs(float64(b.BackgroundOps)-want) > 4*math.Sqrt(want) {
			t.Errorf("rate %v: %d background ops, want ~%v", rate, b.BackgroundOps, want)
		}
		if u, want := st.Capacity.Utilisation(1), rate*2.27/1000/2; math.Abs(u-want) > 0.1*want {
			t.Errorf("rate %v: utilisation %.3f, want ~%.3f", rate, u, want)
		}
		p99 = append(p99, st.Capacity.BackgroundQuantileMs(1, 0.99))
		if st.Latency.Mean() != base.Latency.Mean() || st.Ops != base.Ops {
			t.Errorf("rate %v: background changed the client's operations (mean %v vs %v)", rate, st.Latency.Mean(), base.Latency.Mean())
		}
	}
	if !(p99[0] < p99[1] && p99[1] < p99[2]) {
		t.Errorf("background p99 %v ms should grow with the rate 200, 500, 800/s", p99)
	}
}

// Merge adds capacity measurements of replications: counts and busy time
// sum, histograms merge, utilisation is over the summed span.
func TestMergeCapacity(t *testing.T) {
	cfg := backgroundScenario(t, 500)
	var runs []*simnet.Stats
	for r := range 2 {
		st, err := simnet.Run(cfg, disabledPolicy(), r, simnet.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, st)
	}
	m := &simnet.Stats{Latency: simnet.NewLatencyHistogram()}
	m.Merge(runs[0])
	m.Merge(runs[1])
	c, x, y := m.Capacity, runs[0].Capacity, runs[1].Capacity
	if c.Runs != 2 || c.Span != x.Span+y.Span {
		t.Fatalf("merged runs %d span %v", c.Runs, c.Span)
	}
	b, bx, by := c.Replicas[1], x.Replicas[1], y.Replicas[1]
	if b.Busy != bx.Busy+by.Busy || b.BackgroundOps != bx.BackgroundOps+by.BackgroundOps ||
		b.BackgroundLatency.TotalCount() != bx.BackgroundLatency.TotalCount()+by.BackgroundLatency.TotalCount() ||
		b.QueueLen.TotalCount() != bx.QueueLen.TotalCount()+by.QueueLen.TotalCount() {
		t.Errorf("merged replica b %+v is not the sum of %+v and %+v", b, bx, by)
	}
	if got, want := c.Utilisation(1), float64(bx.Busy+by.Busy)/(2*float64(x.Span+y.Span)); got != want {
		t.Errorf("merged utilisation %v, want %v", got, want)
	}
	w := c.WindowUtilisation(1, runs[0].WindowWidth)
	if len(w) != len(bx.BusyByWindow) || math.Abs(w[3]-float64(bx.BusyByWindow[3]+by.BusyByWindow[3])/(2*2*float64(runs[0].WindowWidth))) > 1e-12 {
		t.Errorf("window utilisation %v", w)
	}
	if c.Replicas[0].BackgroundWindows != nil || len(b.BackgroundWindows) != max(len(bx.BackgroundWindows), len(by.BackgroundWindows)) || len(b.BackgroundWindows) < 2 {
		t.Fatalf("merged background windows: a %v, b %d (runs %d, %d)", c.Replicas[0].BackgroundWindows, len(b.BackgroundWindows), len(bx.BackgroundWindows), len(by.BackgroundWindows))
	}
	for k, h := range b.BackgroundWindows {
		want := bx.BackgroundWindows[k].TotalCount() + by.BackgroundWindows[k].TotalCount()
		if h.TotalCount() != want || want == 0 {
			t.Errorf("merged background window %d holds %d, want %d", k, h.TotalCount(), want)
		}
	}
	ops, p99 := c.WindowBackground(1, 0.99)
	if ops[1] != b.BackgroundWindows[1].TotalCount() || p99[1] != float64(b.BackgroundWindows[1].ValueAtQuantile(99))/1000 {
		t.Errorf("WindowBackground window 1: %d ops, p99 %v", ops[1], p99[1])
	}
	var sum time.Duration
	for _, v := range b.BusyByWindow {
		sum += v
	}
	if sum != b.Busy {
		t.Errorf("busy by window sums to %v, busy %v", sum, b.Busy)
	}
}

// in_service, the other order: with a 10 ms round trip to b the alternate
// (sent at +1 ms) starts service at +6 ms, after its cancellation was sent
// (+5 ms) but before it arrives (+10 ms): it is aborted when it arrives,
// after 4 ms of service.
func TestCancelInServiceAfterSent(t *testing.T) {
	cfg := cancelModeScenario(t, simnet.CancelInService, 10)
	cfg.RTTMs["c"]["pb"] = 10
	st, err := simnet.Run(cfg, staticPolicy(1), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := st.Capacity.Replicas[1]
	if got, want := st.RUCharged-st.RUReturned, 10*4.0/150; math.Abs(got-want) > 1e-9 || b.Busy != 40*time.Millisecond || b.AbortedInService != 10 {
		t.Errorf("alternates charged %v RU (want %v), busy %v (want 40ms), aborted %d (want 10)", got, want, b.Busy, b.AbortedInService)
	}
}

// Background latency per timeline window is attributed by arrival: 1.5 s
// requests arriving in [5 s, 7 s) at a replica that never queues fall in
// windows 5 and 6 only (not in 7 and 8, where they finish); the windows
// sum to the run's figures; a replica without background keeps none.
func TestBackgroundWindows(t *testing.T) {
	cfg := backgroundScenario(t, 0)
	cfg.Replicas[1].Servers = 1000
	cfg.Background = []simnet.Background{{Target: "b", RatePerSec: 100, Service: constant(t, 1500), Start: 5 * time.Second, End: 7 * time.Second}}
	st, err := simnet.Run(cfg, disabledPolicy(), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := st.Capacity
	if st.WindowWidth != time.Second {
		t.Fatalf("window width %v, want 1s", st.WindowWidth)
	}
	if ops, p99 := c.WindowBackground(0, 0.99); ops != nil || p99 != nil || c.Replicas[0].BackgroundWindows != nil {
		t.Errorf("replica a without background has windows %v %v", ops, p99)
	}
	ops, p99 := c.WindowBackground(1, 0.99)
	if len(ops) != 7 {
		t.Fatalf("%d background windows (%v), want 7 (up to the last arrival's, 6)", len(ops), ops)
	}
	var sum int64
	for k, n := range ops {
		sum += n
		if (k == 5 || k == 6) != (n > 0) {
			t.Errorf("window %d: %d background requests", k, n)
		}
		if n > 0 && math.Abs(p99[k]-1500) > 15 {
			t.Errorf("window %d: p99 %v ms, want 1500", k, p99[k])
		}
		if n == 0 && !math.IsNaN(p99[k]) {
			t.Errorf("window %d without requests: p99 %v, want NaN", k, p99[k])
		}
	}
	if sum != c.Replicas[1].BackgroundOps || sum < 150 {
		t.Errorf("windows hold %d requests, run %d (want ~200)", sum, c.Replicas[1].BackgroundOps)
	}
}

// retryScenario: backgroundScenario's replica b with one server and a
// queue of one, loaded only by a background source of svcMs requests at
// rate per second, retrying refused ones retries times.
func retryScenario(t *testing.T, rate, svcMs float64, retries int) *simnet.Config {
	cfg := backgroundScenario(t, 0)
	cfg.Duration = 10 * time.Second
	cfg.Replicas[1].Servers, cfg.Replicas[1].QueueLimit = 1, 1
	cfg.Background = []simnet.Background{{Target: "b", RatePerSec: rate, Service: constant(t, svcMs), Retries: retries}}
	return cfg
}

// Retry counts are exact when every try is refused: the first request
// holds the only server for 1000 s and the second the only queue slot, so
// each later one is refused 1 + retries times, retried retries times and
// gives up once.
func TestBackgroundRetriesExact(t *testing.T) {
	var base simnet.ReplicaStats
	for _, retries := range []int{0, 3} {
		st, err := simnet.Run(retryScenario(t, 10, 1e6, retries), disabledPolicy(), 0, simnet.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b := st.Capacity.Replicas[1]
		if retries == 0 {
			base = b
			if b.RefusedBackground < 50 || b.BackgroundRetries != 0 || b.BackgroundGaveUp != 0 {
				t.Fatalf("no retries: refused %d, retries %d, gave up %d", b.RefusedBackground, b.BackgroundRetries, b.BackgroundGaveUp)
			}
			continue
		}
		n := base.RefusedBackground // requests after the first two
		if b.RefusedBackground != 4*n || b.BackgroundRetries != 3*n || b.BackgroundGaveUp != n || b.BackgroundOps != base.BackgroundOps {
			t.Errorf("3 retries: refused %d (want %d), retries %d (want %d), gave up %d (want %d), served %d (want %d)",
				b.RefusedBackground, 4*n, b.BackgroundRetries, 3*n, b.BackgroundGaveUp, n, b.BackgroundOps, base.BackgroundOps)
		}
	}
}

// Under overload with short service some retries succeed: every arrival
// is served or gives up, retried requests are served later than their
// first arrival (latency includes the backoff), and the client's
// operations (at another replica) are unchanged.
func TestBackgroundRetriesServe(t *testing.T) {
	base, err := simnet.Run(retryScenario(t, 40, 50, 0), disabledPolicy(), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := simnet.Run(retryScenario(t, 40, 50, 3), disabledPolicy(), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b0, b := base.Capacity.Replicas[1], st.Capacity.Replicas[1]
	arrivals := b0.BackgroundOps + b0.RefusedBackground
	if b.BackgroundOps+b.BackgroundGaveUp != arrivals || b.BackgroundOps <= b0.BackgroundOps || b.BackgroundRetries == 0 {
		t.Errorf("served %d + gave up %d, want %d arrivals; served %d without retries, %d retries", b.BackgroundOps, b.BackgroundGaveUp, arrivals, b0.BackgroundOps, b.BackgroundRetries)
	}
	if b.RefusedBackground != b.BackgroundRetries+b.BackgroundGaveUp {
		t.Errorf("refused %d tries, want retries %d + gave up %d", b.RefusedBackground, b.BackgroundRetries, b.BackgroundGaveUp)
	}
	// Without retries a request waits at most one 50 ms service in the
	// queue; a retried one also waits out its backoff (>= 50 ms).
	if b0.BackgroundLatency.Max() > 101_000 || b.BackgroundLatency.Max() < 102_000 {
		t.Errorf("longest background latency %d µs without retries (want <= 100 ms), %d µs with (want > 100 ms)", b0.BackgroundLatency.Max(), b.BackgroundLatency.Max())
	}
	if st.Latency.Mean() != base.Latency.Mean() || st.Ops != base.Ops {
		t.Errorf("retries changed the client's operations")
	}
}
