package simnet_test

import (
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"
)

// feedAccount is a two-region account (primary "A", alternate "B", 20 ms
// apart) with 8 ms lognormal pages, a constant 2 ms write, Phase 2 on and
// a workload of mix.
func feedAccount(tb testing.TB, rate float64, d time.Duration, mix ...simnet.MixEntry) *simnet.Config {
	page := mustBuild(tb, dist.Spec{Family: "lognormal", MedianMs: f(8), P99Ms: f(20)})
	return &simnet.Config{
		Seed:         7,
		Duration:     d,
		ClientRegion: "A",
		Endpoints:    []simnet.Endpoint{{Region: "A", Replica: "a"}, {Region: "B", Replica: "b"}},
		Replicas: []simnet.Replica{
			{Name: "a", Region: "A", Default: page},
			{Name: "b", Region: "B", Default: page},
		},
		RTTMs:           map[string]map[string]float64{"A": {"B": 20}},
		SameRegionRTTMs: 1,
		Workload:        simnet.Workload{RatePerSec: rate, Partitions: 8, Mix: mix},
		Client:          hedging.Config{Phase: hedging.Phase2},
	}
}

func TestFeedSmoke(t *testing.T) {
	cfg := feedAccount(t, 50, 10*time.Second, simnet.MixEntry{Kind: hedging.QueryPage, Weight: 1}, simnet.MixEntry{Kind: hedging.Upsert, Weight: 1})
	cfg.Feed = &simnet.Feed{Pages: mustBuild(t, dist.Spec{Family: "constant", ValueMs: f(5)}), FanOut: 2,
		ChangeFeed: simnet.ChangeFeed{Pollers: 2, PollInterval: time.Second},
		Setup:      simnet.Setup{Collection: true, PKRanges: true, QueryPlan: true}}
	st, err := simnet.Run(cfg, staticPolicy(30), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fs := st.Feed
	t.Logf("%+v", *fs)
	for i, k := range fs.Kinds {
		t.Logf("kind %d ops %d err %d p50 %.1f p99 %.1f setup %.3f", i, k.Ops, k.Errors, k.QuantileMs(.5), k.QuantileMs(.99), k.SetupShare())
	}
	_ = feed.DefaultMaxFanOut
}
