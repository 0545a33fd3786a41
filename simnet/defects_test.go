package simnet_test

import (
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"
)

// TestFeedStaleAdvanceHarmless is issue 24's crash
// (crash-pollers-stale-advance): two pages of one poll answered at the
// same instant each queue an advance of the poll; the first ends it, and
// the second reached the finished poll (a nil driver). With constant
// service times and no jitter every leaf of every poll answers at one
// instant, so every poll has stale advances; the run must end with every
// poll counted once.
func TestFeedStaleAdvanceHarmless(t *testing.T) {
	cfg := feedAccount(t, 5, 5*time.Second, simnet.MixEntry{Kind: hedging.Upsert, Weight: 1})
	page := mustBuild(t, dist.Spec{Family: "constant", ValueMs: f(4)})
	for i := range cfg.Replicas {
		cfg.Replicas[i].Default = page
	}
	cfg.Consistency = simnet.Eventual
	cfg.Feed = &simnet.Feed{ChangeFeed: simnet.ChangeFeed{Pollers: 2, PollInterval: 50 * time.Millisecond}}
	for _, pol := range []simnet.Policy{disabledPolicy(), staticPolicy(2)} {
		st, err := simnet.Run(cfg, pol, 0, simnet.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		polls := st.Feed.Kinds[simnet.FeedChangeFeed].Ops
		// Two pollers, each polling every 50 ms plus the poll's own 5 ms
		// (more when hedged), while arrivals run (5 s): at most
		// 2 × 5 s / 55 ms ≈ 182 polls, each counted once, and each at least
		// one page from each of its 4 leaves (8 partitions / 2 pollers).
		if polls < 150 || polls > 182 {
			t.Errorf("%s: %d polls, want at most 182", pol.Name, polls)
		}
		if st.Feed.Pages < 4*polls {
			t.Errorf("%s: %d pages over %d polls, want at least 4 per poll", pol.Name, st.Feed.Pages, polls)
		}
	}
}
