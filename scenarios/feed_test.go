package scenarios_test

import (
	"strings"
	"testing"

	"hedgelab/hedging"
	"hedgelab/scenarios"
)

// feedBase is a valid feed scenario; each case of TestFeedKeyErrors
// appends one defect (lines 1-38 are this text).
const feedBase = `name = "feed-errors"
seed = 1
duration_s = 10

[client]
region = "A"
phase = 2

[[endpoints]]
region = "A"
replica = "a"

[[endpoints]]
region = "B"
replica = "b"

[[replicas]]
name = "a"
region = "A"
service = { family = "constant", value_ms = 5.0 }

[[replicas]]
name = "b"
region = "B"
service = { family = "constant", value_ms = 5.0 }

[network.rtt_ms]
"A" = { "B" = 10.0 }

[workload]
rate_per_s = 10
mix = { query = 1 }
partitions = 4

[[policies]]
name = "off"
type = "disabled"
`

// TestFeedKeyErrors checks the new keys' errors name file, line and field.
func TestFeedKeyErrors(t *testing.T) {
	cases := []struct{ name, add, want string }{
		{"valid", "[feed]\npages = 3\nfan_out = 4\n", ""},
		{"pages range", "[feed]\npages = 0\n", "f.toml:40: feed.pages: must be between 1 and 1000, got 0"},
		{"pages and dist", "[feed]\npages = 2\npages_dist = { family = \"constant\", value_ms = 2.0 }\n", "f.toml:41: feed.pages_dist: set pages (a fixed count) or pages_dist, not both"},
		{"fan-out", "[feed]\nfan_out = 5\n", "f.toml:40: feed.fan_out: must be between 0 and 4, got 5"},
		{"affinity", "[feed.affinity]\nquery = \"sticky\"\n", "f.toml:40: feed.affinity.query: must be none, pin_after_hedge_win, pin_always or breaker_driven, got \"sticky\""},
		{"affinity kind", "[feed.affinity]\nquerry = \"none\"\n", "f.toml:40: feed.affinity.querry: unknown operation kind \"querry\""},
		{"hedge unit", "[feed]\nhedge_unit = \"query\"\n", "f.toml:40: feed.hedge_unit: must be \"page\" or \"operation\", got \"query\""},
		{"hedge unit empty", "[feed]\nhedge_unit = \"\"\n", "f.toml:40: feed.hedge_unit: must be \"page\" or \"operation\", got \"\""},
		{"hedge unit valid", "[feed]\nhedge_unit = \"operation\"\n", ""},
		{"continuation", "[feed]\nquery_continuation = \"sticky\"\n", "f.toml:40: feed.query_continuation: must be \"portable\" or \"region_affine\", got \"sticky\""},
		{"poll interval", "[feed.change_feed]\npollers = 2\n", "f.toml:39: feed.change_feed.poll_interval_ms: must be >= 1 with pollers > 0, got 0"},
		{"scope", "[feed.change_feed]\nscope = \"planet\"\n", "f.toml:40: feed.change_feed.scope: must be \"global\" or \"region_local\", got \"planet\""},
		{"on 304", "[feed.change_feed]\non_304 = \"later\"\n", "f.toml:40: feed.change_feed.on_304: must be \"request\" or \"server_current\", got \"later\""},
		{"pollers", "[feed.change_feed]\npollers = 1001\npoll_interval_ms = 10\n", "f.toml:40: feed.change_feed.pollers: must be between 0 and 1000, got 1001"},
		{"event kind", "[feed.setup]\n[[feed.setup.events]]\nat_s = 1\nkind = \"merge\"\n", "f.toml:42: feed.setup.events.0.kind: must be \"split\" or \"recreate\", got \"merge\""},
		{"metadata lag region", "[feed.setup]\nmetadata_lag_ms = { \"C\" = 5.0 }\n", "f.toml:40: feed.setup.metadata_lag_ms.C: unknown physical region \"C\""},
		{"read many is not capped by max_fan_out (A10)", "[feed]\nmax_fan_out = 2\n", ""},
		{"metadata choice", "[feed.setup]\nmetadata_choice = \"newest\"\n", "f.toml:40: feed.setup.metadata_choice: must be \"fastest\" or \"latest\", got \"newest\""},
		{"grace without latest", "[feed.setup]\nmetadata_grace_ms = 50.0\n", "f.toml:40: feed.setup.metadata_grace_ms: applies only to metadata_choice = \"latest\""},
		{"unknown key", "[feed]\npagez = 2\n", "f.toml:40: feed.pagez: unknown field"},
		{"consistency", "[account]\nconsistency = \"linearizable\"\n", "f.toml:40: account.consistency: must be session, eventual, consistent_prefix, bounded_staleness or strong, got \"linearizable\""},
		{"bound needed", "[account]\nconsistency = \"bounded_staleness\"\n", "f.toml:39: account.staleness_bound_ms: required (> 0) with consistency = \"bounded_staleness\""},
		{"lag target", "[lag]\n[[lag.episodes]]\ntarget = \"C\"\nstart_s = 0\nend_s = 1\n", "f.toml:41: lag.episodes.0.target: unknown target \"C\""},
		{"lag window", "[lag]\n[[lag.episodes]]\ntarget = \"B\"\nstart_s = 2\nend_s = 1\n", "f.toml:43: lag.episodes.0.end_s: must be > start_s (2), got 1"},
		{"lag sigma", "[lag]\nsigma = -1.0\n", "f.toml:40: lag.sigma: must be between 0 and 10, got -1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := scenarios.Parse("f.toml", []byte(feedBase+"\n"+tc.add))
			if err == nil {
				_, _, err = s.Config()
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid file: %v", err)
			case tc.want == "":
			case err == nil:
				t.Fatalf("no error, want %q", tc.want)
			case !strings.HasPrefix(err.Error(), tc.want):
				t.Fatalf("error\n%v\nwant prefix\n%s", err, tc.want)
			}
		})
	}
}

// FuzzFeedKeys: any text appended to a valid file (new [feed], [lag] or
// consistency keys among it) gives a configuration or an error, never a
// panic.
func FuzzFeedKeys(f *testing.F) {
	f.Add("[feed]\npages = 3\nfan_out = 2\n[feed.change_feed]\npollers = 2\npoll_interval_ms = 100\n")
	f.Add("[feed.setup]\ncollection = true\n[[feed.setup.events]]\nat_s = 1\nkind = \"split\"\n")
	f.Add("[lag]\nsigma = 0.5\n[account]\nconsistency = \"eventual\"\n")
	f.Fuzz(func(t *testing.T, add string) {
		s, err := scenarios.Parse("f.toml", []byte(feedBase+"\n"+add))
		if err != nil {
			return
		}
		_, _, _ = s.Config()
	})
}

// TestFeedContinuationDefaults: a file that does not say what the client
// takes a cursor for gets the driver's rule, hedging.DefaultContinuationAffinity
// (spec §16, §17 Q9): change-feed cursors pinned (region_affine), query
// continuations portable; the keys override it.
func TestFeedContinuationDefaults(t *testing.T) {
	for _, tc := range []struct {
		add               string
		query, changeFeed hedging.ContinuationAffinity
	}{
		{"[feed]\npages = 2\n", hedging.Portable, hedging.RegionAffine},
		{"[feed]\nquery_continuation = \"region_affine\"\n[feed.change_feed]\ncontinuation = \"portable\"\n", hedging.RegionAffine, hedging.Portable},
	} {
		s, err := scenarios.Parse("f.toml", []byte(feedBase+"\n"+tc.add))
		if err != nil {
			t.Fatal(err)
		}
		cfg, _, err := s.Config()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Feed.QueryContinuation != tc.query || cfg.Feed.ChangeFeed.Continuation != tc.changeFeed {
			t.Errorf("%q: query %v change feed %v, want %v %v", tc.add, cfg.Feed.QueryContinuation, cfg.Feed.ChangeFeed.Continuation, tc.query, tc.changeFeed)
		}
	}
}
