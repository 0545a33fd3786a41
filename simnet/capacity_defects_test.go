package simnet_test

import (
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet"
)

// TestUtilisationWithinRun is the fuzzer's fuzz-utilisation-above-one
// (issue 24): a background service that started before the run's last
// event but ends after it was counted busy in full, while the measured
// span ends at the last event, so utilisation came out at 1.10. The
// replica here has one server, a constant 3 ms service and background
// requests every 0.1 ms on average with one queue place, so its server is
// busy from the first background arrival to past the run's end; the
// client's one operation (answered by the other replica in 5 ms + 2 ms
// RTT) ends the run mid-service. Busy time counts only within the
// measured span: it equals the served requests' service time less the
// part of the last one past the span, which is under one service time.
func TestUtilisationWithinRun(t *testing.T) {
	cfg := &simnet.Config{
		Seed: 1, MaxOps: 1, ClientRegion: "c",
		Endpoints: []simnet.Endpoint{{Region: "A", Replica: "a"}},
		Replicas: []simnet.Replica{
			{Name: "a", Region: "c", Default: constant(t, 5)},
			{Name: "b", Region: "pb", Servers: 1, QueueLimit: 1, Default: constant(t, 3)},
		},
		RTTMs:      map[string]map[string]float64{"c": {"pb": 2}},
		Workload:   simnet.Workload{RatePerSec: 1000},
		Background: []simnet.Background{{Target: "b", RatePerSec: 10000}},
	}
	st, err := simnet.Run(cfg, disabledPolicy(), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := st.Capacity
	b := c.Replicas[1]
	if c.Span != st.End || c.Span <= 0 {
		t.Fatalf("span %v, want the run's end %v", c.Span, st.End)
	}
	served := time.Duration(b.BackgroundOps+b.ClientServed) * 3 * time.Millisecond
	if b.Busy > c.Span || b.Busy > served || b.Busy <= served-3*time.Millisecond {
		t.Errorf("busy %v over span %v with %d requests of 3 ms served (%v): want at most the span, and within one service of %v",
			b.Busy, c.Span, b.BackgroundOps+b.ClientServed, served, served)
	}
	if u, want := c.Utilisation(1), float64(b.Busy)/float64(c.Span); u != want || u > 1 {
		t.Errorf("utilisation %v, want busy/span = %v, at most 1", u, want)
	}
	var byWindow time.Duration
	for _, w := range b.BusyByWindow {
		byWindow += w
	}
	if byWindow != b.Busy {
		t.Errorf("busy by window sums to %v, want busy %v", byWindow, b.Busy)
	}
}

// TestAbortWakesOnce is the fuzzer's fuzz-serverfree-storm (issue 24):
// with cancel = "in_service", every abort of work in service while the
// queue held requests queued a server-free event of its own beside the
// pending one, and each of those events, on firing, queued another: the
// chains never merged, and an overloaded queue (here one 10 ms server
// offered 200 operations a second, cut off by a 50 ms operation timeout)
// ran millions of events. A replica has at most one pending wake, so the
// events per operation stay bounded: an arrival, a service, an answer, a
// wake, the timeout and its cancellation.
func TestAbortWakesOnce(t *testing.T) {
	cfg := &simnet.Config{
		Seed: 3, MaxOps: 2000, ClientRegion: "c",
		Endpoints: []simnet.Endpoint{{Region: "A", Replica: "a"}},
		Replicas: []simnet.Replica{
			{Name: "a", Region: "c", Servers: 1, Cancel: simnet.CancelInService, Default: constant(t, 10)},
		},
		Workload: simnet.Workload{RatePerSec: 200},
		Client:   hedging.Config{Retry: hedging.RetryOptions{MaxAttempts: 1}},
	}
	cfg.OperationTimeout = 50 * time.Millisecond
	st, err := simnet.Run(cfg, disabledPolicy(), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := st.Capacity.Replicas[0]
	if r.AbortedInService == 0 {
		t.Fatalf("no abort in service: the scenario does not exercise the defect")
	}
	if perOp := float64(st.Events) / float64(st.Ops); perOp > 12 {
		t.Errorf("%d events for %d operations (%.1f each, %d aborted in service), want at most 12 each", st.Events, st.Ops, perOp, r.AbortedInService)
	}
}
