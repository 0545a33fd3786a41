package hedging_test

import (
	"testing"
	"time"

	"hedgelab/hedging"
)

// PlanHedge answers what Begin then does (spec §5.1, §6.3, §17 Q11): for
// each operation the plan's Hedged, primary region and threshold equal
// those of the race Begin starts, and the alternate is the region the
// threshold timer would send to.
func TestPlanHedgeMatchesBegin(t *testing.T) {
	for _, tc := range []struct {
		name    string
		phase   hedging.PhaseSet
		op      hedging.Operation
		hedged  bool
		primary hedging.Region
		alt     hedging.Region
	}{
		{"query page, Phase 2", hedging.Phase2, hedging.Operation{Kind: hedging.QueryPage, Partition: "p"}, true, "West", "East"},
		{"query page, Phase 1: not in the allowed set", hedging.Phase1, hedging.Operation{Kind: hedging.QueryPage, Partition: "p"}, false, "", ""},
		{"write: never hedged", hedging.Phase2, hedging.Operation{Kind: hedging.Create, Partition: "p"}, false, "", ""},
		{"disabled per operation", hedging.Phase2, hedging.Operation{Kind: hedging.QueryPage, Partition: "p", Strategy: hedging.Disabled}, false, "", ""},
		{"West excluded", hedging.Phase2, hedging.Operation{Kind: hedging.QueryPage, Partition: "p", ExcludeRegions: []hedging.Region{"West"}}, true, "East", "North"},
		{"one region left", hedging.Phase2, hedging.Operation{Kind: hedging.QueryPage, Partition: "p", ExcludeRegions: []hedging.Region{"West", "North"}}, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := phase2Client(t, tc.phase, phase2Regions, nil)
			now := 3 * time.Second
			p := c.PlanHedge(now, &tc.op)
			if p.Hedged != tc.hedged || p.Primary != tc.primary || p.Alternate != tc.alt || p.Declined {
				t.Errorf("PlanHedge = %+v, want hedged %v between %q and %q", p, tc.hedged, tc.primary, tc.alt)
			}
			var r hedging.Race
			htBegin(c, &r, now, &tc.op)
			if r.Hedged() != p.Hedged || p.Threshold != r.Threshold() {
				t.Errorf("Begin: hedged %v threshold %v; PlanHedge: %v, %v", r.Hedged(), r.Threshold(), p.Hedged, p.Threshold)
			}
			if p.Hedged && (r.Endpoint(hedging.Primary).Region != p.Primary || p.Threshold.Get() != 100*time.Millisecond) {
				t.Errorf("Begin sent the primary to %q; PlanHedge says %q at %v", r.Endpoint(hedging.Primary).Region, p.Primary, p.Threshold)
			}
		})
	}
}
