package simnet_test

import (
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet"
)

// tiedPair: two operations a microsecond apart (rate 1e6/s), each read
// from a (one server, 10 ms) with its second copy sent to b (one server,
// 10 ms) at the 1 ms threshold; zero RTT, so a replica's cancellation
// reaches the other at once.
func tiedPair(t *testing.T, mode simnet.CancelMode) (lat []time.Duration, st *simnet.Stats) {
	cfg := &simnet.Config{
		Seed: 1, MaxOps: 2, ClientRegion: "c",
		Endpoints: []simnet.Endpoint{{Region: "A", Replica: "a"}, {Region: "B", Replica: "b"}},
		Replicas: []simnet.Replica{
			{Name: "a", Region: "c", Servers: 1, Cancel: mode, Default: constant(t, 10)},
			{Name: "b", Region: "c", Servers: 1, Cancel: mode, Default: constant(t, 10)},
		},
		Workload: simnet.Workload{RatePerSec: 1e6},
		Client:   hedging.Config{Retry: hedging.RetryOptions{MaxAttempts: 1}, ConsecutiveHedgeWinThreshold: 1 << 30},
	}
	st, err := simnet.Run(cfg, staticPolicy(1), 0, simnet.RunOptions{OnComplete: func(r *hedging.Race, _ *hedging.Operation) {
		lat = append(lat, r.DoneAt()-r.Start())
	}})
	if err != nil {
		t.Fatal(err)
	}
	return lat, st
}

// With tied requests the losing copy stops when the winner starts: op 1's
// primary starts at once on a, so its copy to b is dropped when it gets
// there; op 2's primary waits behind op 1 on a, its copy starts on b at
// 1 ms and has a remove op 2's primary from the queue. Two copies served,
// RU × 1, latencies 10 ms and 11 ms. Cancelling on the winner's answer
// (queued) serves all four copies: b serves op 1's needless copy from 1 ms
// and op 2's copy after it from 11 ms, before op 2's primary, started on a
// at 10 ms, answers at 20 ms.
func TestTiedRequestsCancelOnStart(t *testing.T) {
	lat, st := tiedPair(t, simnet.CancelOnStart)
	var served int64
	for _, r := range st.Capacity.Replicas {
		served += r.ClientServed
	}
	if st.Ops != 2 || served != 2 || st.RUMultiplier() != 1 || st.Removed != 1 {
		t.Errorf("on_start: %d ops, %d copies served, RU × %v, %d removed from a queue; want 2, 2, 1, 1", st.Ops, served, st.RUMultiplier(), st.Removed)
	}
	if len(lat) != 2 || lat[0] != 10*time.Millisecond || lat[1] < 11*time.Millisecond || lat[1] > 11*time.Millisecond+2*time.Microsecond {
		t.Errorf("on_start latencies %v, want [10ms ~11ms]", lat)
	}
	_, st = tiedPair(t, simnet.CancelQueued)
	served = 0
	for _, r := range st.Capacity.Replicas {
		served += r.ClientServed
	}
	if served != 4 || st.RUMultiplier() != 2 {
		t.Errorf("queued: %d copies served, RU × %v; want 4 and 2", served, st.RUMultiplier())
	}
}
