package simnet_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"
)

// overloaded is issue 24's hostile-queue-1e6-oom: 10⁵ reads a second
// into two replicas of one server each (1 ms a read) with a queue of 10⁶,
// so nearly every operation waits and stays alive; before the memory
// bound it ran out of memory (2 GB resident when killed under
// ulimit -v 4000000) instead of being refused.
func overloaded(tb testing.TB, queueLimit int) *simnet.Config {
	svc := mustBuild(tb, dist.Spec{Family: "constant", ValueMs: f(1)})
	return &simnet.Config{
		Seed:         1,
		Duration:     10 * time.Second,
		ClientRegion: "A",
		Endpoints:    []simnet.Endpoint{{Region: "A", Replica: "a"}, {Region: "B", Replica: "b"}},
		Replicas: []simnet.Replica{
			{Name: "a", Region: "A", Servers: 1, QueueLimit: queueLimit, Default: svc},
			{Name: "b", Region: "B", Servers: 1, QueueLimit: queueLimit, Default: svc},
		},
		RTTMs:           map[string]map[string]float64{"A": {"B": 8}},
		SameRegionRTTMs: 0.5,
		Workload:        simnet.Workload{RatePerSec: 1e5, Partitions: 10},
		Client:          hedging.Config{RequestTimeout: time.Second},
	}
}

// TestMemoryLiveOperations: a run whose operations pile up faster than
// the replicas serve them ends with ErrMemoryLimit naming
// MaxLiveOperations, rather than running out of memory.
func TestMemoryLiveOperations(t *testing.T) {
	_, err := simnet.Run(overloaded(t, 1_000_000), staticPolicy(3), 0, simnet.RunOptions{})
	if !errors.Is(err, simnet.ErrMemoryLimit) || !strings.Contains(err.Error(), "MaxLiveOperations") {
		t.Fatalf("Run = %v, want ErrMemoryLimit (MaxLiveOperations)", err)
	}
}

// TestMemoryBoundedQueue: the same overload with a queue of 100 holds few
// operations at once (the queue refuses the rest), so it runs to the end.
func TestMemoryBoundedQueue(t *testing.T) {
	cfg := overloaded(t, 100)
	cfg.Duration = time.Second
	st, err := simnet.Run(cfg, staticPolicy(3), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatalf("Run = %v, want a bounded run", err)
	}
	if st.Ops < 90_000 {
		t.Errorf("%d operations, want about 10⁵", st.Ops)
	}
}

// TestMemoryPendingRequests: background requests are no operations, but
// 10⁶ a second into one server of 1 ms with no queue limit fill the
// replica's queue; the run ends with ErrMemoryLimit naming
// MaxPendingRequests.
func TestMemoryPendingRequests(t *testing.T) {
	cfg := overloaded(t, 0)
	cfg.Workload.RatePerSec = 10
	cfg.Background = []simnet.Background{{Target: "a", RatePerSec: 1e6}}
	_, err := simnet.Run(cfg, staticPolicy(3), 0, simnet.RunOptions{})
	if !errors.Is(err, simnet.ErrMemoryLimit) || !strings.Contains(err.Error(), "MaxPendingRequests") {
		t.Fatalf("Run = %v, want ErrMemoryLimit (MaxPendingRequests)", err)
	}
}
