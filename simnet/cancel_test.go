package simnet_test

import (
	"testing"

	"hedgelab/hedging"
	"hedgelab/simnet"
)

// cancelScenario: primary answers in 5 ms, the alternate (sent at the 1 ms
// threshold) is slower, so every alternate is cancelled.
func cancelScenario(t *testing.T, altRTT float64, altServers int, altService float64) *simnet.Config {
	return &simnet.Config{
		Seed: 1, MaxOps: 200, ClientRegion: "c",
		Endpoints: []simnet.Endpoint{{Region: "A", Replica: "a"}, {Region: "B", Replica: "b"}},
		Replicas: []simnet.Replica{
			{Name: "a", Region: "c", Default: constant(t, 5)},
			{Name: "b", Region: "pb", Servers: altServers, Default: constant(t, altService)},
		},
		RTTMs:    map[string]map[string]float64{"c": {"pb": altRTT}},
		Workload: simnet.Workload{RatePerSec: 10},
		Client:   hedging.Config{Retry: hedging.RetryOptions{MaxAttempts: 1}, ConsecutiveHedgeWinThreshold: 1 << 30},
	}
}

// A request cannot be recalled once sent: a cancelled alternate still on
// the wire reaches its replica, is served and charges its RU (§14.2).
func TestCancelledWhileTravellingIsStillCharged(t *testing.T) {
	st, err := simnet.Run(cancelScenario(t, 20, 0, 1), staticPolicy(1), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Terminal[hedging.PrimaryWonAfterHedge] != st.Ops {
		t.Fatalf("terminal states %v, want every op PrimaryWonAfterHedge", st.Terminal)
	}
	if st.RUCharged != 2*st.RUReturned || st.RUMultiplier() != 2 {
		t.Errorf("RU charged %v, returned %v: every cancelled alternate should still be charged", st.RUCharged, st.RUReturned)
	}
}

// A cancelled alternate still queued when the cancellation reaches the
// replica is removed and never charged; one already in service is charged.
func TestCancelledWhileQueuedIsRemoved(t *testing.T) {
	// One server busy 150 ms per request at 10 requests/s: most alternates
	// queue behind the previous one and are removed.
	st, err := simnet.Run(cancelScenario(t, 0, 1, 150), staticPolicy(1), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Removed == 0 {
		t.Fatal("no queued attempt was removed")
	}
	served := st.RUCharged - st.RUReturned
	if served <= 0 || served+float64(st.Removed) != float64(st.Ops) {
		t.Errorf("alternates served %v + removed %d should equal ops %d", served, st.Removed, st.Ops)
	}
}
