package simnet_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"
)

// feedAccount is a two-region account (primary "A", alternate "B", 20 ms
// apart) with 8 ms lognormal pages, Phase 2 on and a workload of mix over
// 8 partitions.
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
		RTTMs:            map[string]map[string]float64{"A": {"B": 20}},
		SameRegionRTTMs:  1,
		ReplicationLagMs: map[string]float64{"B": 50},
		Workload:         simnet.Workload{RatePerSec: rate, Partitions: 8, Mix: mix},
		Client:           hedging.Config{Phase: hedging.Phase2},
	}
}

// fullFeed is a feed workload using every part of the model: queries,
// ReadMany, pollers, setup stages, a split, a lag process and a gate.
func fullFeed(tb testing.TB) *simnet.Config {
	cfg := feedAccount(tb, 60, 10*time.Second, simnet.MixEntry{Kind: hedging.QueryPage, Weight: 1},
		simnet.MixEntry{Kind: hedging.ReadManyPage, Weight: 1}, simnet.MixEntry{Kind: hedging.Upsert, Weight: 2})
	cfg.Episodes = []simnet.Episode{{Target: "a", Start: 2 * time.Second, End: 6 * time.Second, AddMs: 100, Factor: 1}}
	cfg.Consistency = simnet.Eventual
	cfg.Lag = &simnet.LagProcess{Sigma: 0.5, Episodes: []simnet.LagEpisode{{Target: "B", Start: 3 * time.Second, End: 5 * time.Second, LagMs: 1000}}}
	cfg.Fleet.Instances = 3
	cfg.Feed = &simnet.Feed{Pages: mustBuild(tb, dist.Spec{Family: "uniform", MinMs: f(1), MaxMs: f(6)}), FanOut: 3, MaxConcurrency: 2,
		ReadManyItems: 12, RUCover: 2.8, RUPerItem: 0.1, GateCapacity: 4,
		Affinity:   map[hedging.OperationKind]feed.Affinity{hedging.QueryPage: feed.BreakerDriven},
		ChangeFeed: simnet.ChangeFeed{Pollers: 3, PollInterval: 200 * time.Millisecond, Scope: simnet.CursorRegionLocal, RegionOffset: 3},
		Setup: simnet.Setup{Collection: true, PKRanges: true, QueryPlan: true, MetadataLagMs: map[string]float64{"B": 500},
			Events: []simnet.MetadataEvent{{At: 4 * time.Second, Kind: simnet.Recreate}, {At: 7 * time.Second, Kind: simnet.Split}}}}
	return cfg
}

// feedDigest renders every feed measurement of st, histograms by their
// quantiles and counts.
func feedDigest(st *simnet.Stats) string {
	f := st.Feed
	var b strings.Builder
	for _, k := range f.Kinds {
		fmt.Fprintf(&b, "%d %d %d %d %v %v|", k.Ops, k.Errors, k.Latency.TotalCount(), k.Latency.ValueAtQuantile(99), k.SetupSum, k.TotalSum)
	}
	g := *f
	g.Kinds, g.PageLatency = [3]simnet.FeedKindStats{}, nil
	fmt.Fprintf(&b, "%+v %d %d %v %v", g, f.PageLatency.TotalCount(), f.PageLatency.ValueAtQuantile(50), st.RUCharged, st.RUReturned)
	return b.String()
}

func TestFeedDeterministic(t *testing.T) {
	cfg := fullFeed(t)
	a, err := simnet.Run(cfg, staticPolicy(30), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := simnet.Run(fullFeed(t), staticPolicy(30), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if da, db := feedDigest(a), feedDigest(b); da != db {
		t.Fatalf("same config and seed, different feed measurements:\n%s\n%s", da, db)
	}
	f := a.Feed
	for i, k := range f.Kinds {
		if k.Ops == 0 {
			t.Errorf("kind %d: no operation", i)
		}
	}
	if f.SetupReads == 0 || f.StaleCacheHits == 0 || f.Delivered == 0 || f.PeakLegsInFlight > 4 || f.Pages == 0 {
		t.Errorf("a model part did nothing: %+v", *f)
	}
}

// TestFeedReadManyPlan: 12 ids over 8 partitions from the operation's own
// make 8 groups (4 of 2 ids, 4 of 1): 4 query pages and 4 point reads per
// call, each one page.
func TestFeedReadManyPlan(t *testing.T) {
	cfg := feedAccount(t, 20, 5*time.Second, simnet.MixEntry{Kind: hedging.ReadManyPage, Weight: 1})
	cfg.Feed = &simnet.Feed{ReadManyItems: 12, RUCover: 2.8, RUPerItem: 1}
	cfg.RU = map[hedging.OperationKind]float64{hedging.PointRead: 1}
	st, err := simnet.Run(cfg, disabledPolicy(), 0, simnet.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	calls := st.Feed.Kinds[simnet.FeedReadMany].Ops
	if calls == 0 || st.Feed.Pages != 8*calls || st.Ops != calls {
		t.Fatalf("%d calls, %d pages, %d operations; want 8 pages per call, each call one operation", calls, st.Feed.Pages, st.Ops)
	}
	// Per call: 4 query pages of 2 ids (2.8 + 2 RU) and 4 point reads (1 RU).
	if want := float64(calls) * (4*4.8 + 4*1); math.Abs(st.RUReturned-want) > 1e-6*want {
		t.Errorf("RU returned %.1f, want %.1f", st.RUReturned, want)
	}
}

func TestFeedValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(*simnet.Config)
		want string
	}{
		{"fan-out above partitions", func(c *simnet.Config) { c.Feed.FanOut = 9 }, "Feed.FanOut"},
		{"pages cap", func(c *simnet.Config) { c.Feed.MaxPages = simnet.MaxFeedPages + 1 }, "Feed.MaxPages"},
		{"read-many ids", func(c *simnet.Config) { c.Feed.ReadManyItems = simnet.MaxFeedItems + 1 }, "Feed.ReadManyItems"},
		{"pollers", func(c *simnet.Config) { c.Feed.ChangeFeed.Pollers = simnet.MaxPollers + 1 }, "Pollers"},
		{"poll interval", func(c *simnet.Config) { c.Feed.ChangeFeed.Pollers = 1 }, "PollInterval"},
		{"change feed in the mix", func(c *simnet.Config) {
			c.Workload.Mix = append(c.Workload.Mix, simnet.MixEntry{Kind: hedging.ChangeFeedPage, Weight: 1})
		}, "Pollers, not the mix"},
		{"affinity", func(c *simnet.Config) {
			c.Feed.Affinity = map[hedging.OperationKind]feed.Affinity{hedging.QueryPage: 9}
		}, "Feed.Affinity"},
		{"partitions", func(c *simnet.Config) { c.Workload.Partitions = simnet.MaxFeedPartitions + 1 }, "Workload.Partitions"},
		{"consistency", func(c *simnet.Config) { c.Consistency = 9 }, "Consistency"},
		{"lag episode partition", func(c *simnet.Config) {
			c.Lag = &simnet.LagProcess{Episodes: []simnet.LagEpisode{{Target: "B", Partitions: []int{8}}}}
		}, "Lag.Episodes[0]"},
		{"lag sigma", func(c *simnet.Config) { c.Lag = &simnet.LagProcess{Sigma: -1} }, "Lag.Sigma"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := feedAccount(t, 10, time.Second, simnet.MixEntry{Kind: hedging.QueryPage, Weight: 1})
			cfg.Feed = &simnet.Feed{}
			tc.edit(cfg)
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

// BenchmarkSimulatedFeedQueries is the feed path's cost per page: 10-page
// queries over 4 leaves, hedged at 30 ms; ns/page is the wall time per
// page (every event of the run included: the query's setup and pages).
func BenchmarkSimulatedFeedQueries(b *testing.B) {
	cfg := feedAccount(b, 1000, 0, simnet.MixEntry{Kind: hedging.QueryPage, Weight: 1})
	cfg.Feed = &simnet.Feed{Pages: mustBuild(b, dist.Spec{Family: "constant", ValueMs: f(10)}), FanOut: 4}
	cfg.MaxOps = max(int64(b.N)/40, 1)
	b.ReportAllocs()
	b.ResetTimer()
	st, err := simnet.Run(cfg, staticPolicy(30), 0, simnet.RunOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(st.Feed.Pages)/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(max(st.Feed.Pages, 1)), "ns/page")
}

// BenchmarkSimulatedChangeFeedPolls is the change feed's cost per poll:
// 16 pollers over 64 partitions, each reading its 4 partitions' pages
// every 10 ms, hedged at 30 ms (a portable cursor: each page is raced),
// while 1000 upserts/s commit the changes they deliver; b.N is about the
// number of polls, and ns/poll the wall time per poll, the upserts' races
// included (about two per poll: polls/upsert).
func BenchmarkSimulatedChangeFeedPolls(b *testing.B) {
	cfg := feedAccount(b, 1000, 0, simnet.MixEntry{Kind: hedging.Upsert, Weight: 1})
	cfg.Workload.Partitions = 64
	cfg.Feed = &simnet.Feed{ChangeFeed: simnet.ChangeFeed{Pollers: 16, PollInterval: 10 * time.Millisecond, Continuation: hedging.Portable}}
	cfg.MaxOps = max(2*int64(b.N), 1) // ~0.5 polls per upsert
	b.ReportAllocs()
	b.ResetTimer()
	st, err := simnet.Run(cfg, staticPolicy(30), 0, simnet.RunOptions{})
	if err != nil {
		b.Fatal(err)
	}
	polls := st.Feed.Kinds[simnet.FeedChangeFeed].Ops
	if polls == 0 {
		b.Fatal("no change-feed poll finished")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(polls), "ns/poll")
	b.ReportMetric(float64(polls)/float64(st.Ops), "polls/upsert")
	b.ReportMetric(float64(st.Feed.Pages)/float64(polls), "pages/poll")
}
