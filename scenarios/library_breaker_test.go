package scenarios_test

import (
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet"
)

// breakerRouting is what the partition breaker did to the reads of one run
// of shared-alternate that start during the slow-down (65-150 s): the share
// routed to West Europe as primary (their partition's North Europe breaker
// had tripped) and the trips by the tripped pair's primary region.
type breakerRouting struct {
	ops, routedWE     int
	tripsNE, tripsWE  int
	tripsAll, counted int64
}

// runBreakerRouting simulates policy of shared-alternate (replication 0)
// and classifies its reads by HedgeDiagnostics.PrimaryRegion (regions[0]
// after the breaker's demotions, spec §6.2, §9.5).
func runBreakerRouting(t *testing.T, policy string) breakerRouting {
	t.Helper()
	_, cfg, pols := libB(t, "shared-alternate", "replications", 1)
	var b breakerRouting
	st, err := simnet.Run(cfg, libBPick(t, pols, policy)[0], 0, simnet.RunOptions{OnComplete: func(r *hedging.Race, _ *hedging.Operation) {
		d, ok := r.Diagnostics()
		if !ok {
			t.Fatalf("%s: race without diagnostics", policy)
		}
		if r.TrippedBreaker() {
			b.counted++
		}
		if s := r.Start(); s < 65*time.Second || s >= 150*time.Second {
			return
		}
		b.ops++
		we := d.PrimaryRegion() == "West Europe"
		if we {
			b.routedWE++
		}
		if r.TrippedBreaker() {
			if we {
				b.tripsWE++
			} else {
				b.tripsNE++
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	b.tripsAll = st.BreakerTrips
	return b
}

// TestLibCapSharedAlternateBreakerRouting explains why static-20ms trips
// partition breakers in shared-alternate without filling West Europe's
// queue while static-100ms fills it. Once a partition's North Europe
// breaker trips, its reads go to West Europe first (17 ms away, ~21 ms with
// queueing). Under static-20ms most of them pass the threshold and hedge
// back to North Europe, whose 70% fast reads win; those alternate wins are
// consecutive hedge wins against (partition, West Europe), which trips too
// (§9.5 #1: the counter is per partition and primary region), and with both
// regions demoted the partition reads North Europe first again. Under
// static-100ms West Europe answers well within the threshold (~45 ms), its
// breaker never trips, and the partitions stay on West Europe for the
// probe interval: about 20% of reads instead of about 8%.
func TestLibCapSharedAlternateBreakerRouting(t *testing.T) {
	s20 := runBreakerRouting(t, "static-20ms")
	s100 := runBreakerRouting(t, "static-100ms")
	for name, b := range map[string]breakerRouting{"static-20ms": s20, "static-100ms": s100} {
		if b.counted != b.tripsAll {
			t.Errorf("%s: %d races report TrippedBreaker, Stats.BreakerTrips = %d", name, b.counted, b.tripsAll)
		}
		if b.tripsNE < 50 {
			t.Errorf("%s: %d North Europe trips during the slow-down, want the breakers to trip", name, b.tripsNE)
		}
	}
	if s100.tripsWE != 0 {
		t.Errorf("static-100ms: %d West Europe trips; its failed-over reads (~45 ms) should never hedge", s100.tripsWE)
	}
	if s20.tripsWE < s20.tripsNE/2 {
		t.Errorf("static-20ms: %d West Europe trips for %d North Europe trips; want the failed-over reads' hedges back to North Europe to trip West Europe too", s20.tripsWE, s20.tripsNE)
	}
	within(t, "static-20ms: share of reads routed to West Europe", libBRate(int64(s20.routedWE), int64(s20.ops)), 0.03, 0.13)
	within(t, "static-100ms: share of reads routed to West Europe", libBRate(int64(s100.routedWE), int64(s100.ops)), 0.15, 0.30)
}
