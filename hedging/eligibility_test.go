package hedging_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"hedgelab/hedging"
)

var htAllKinds = []hedging.OperationKind{
	hedging.PointRead, hedging.QueryPage, hedging.ReadManyPage, hedging.ChangeFeedPage, hedging.MetadataRead,
	hedging.Create, hedging.Replace, hedging.Upsert, hedging.Delete, hedging.Patch, hedging.StoredProcedure, hedging.QueryPlan,
}

var htWrites = []hedging.OperationKind{hedging.Create, hedging.Replace, hedging.Upsert, hedging.Delete, hedging.Patch}

// Every row of the §5.1 decision matrix, with the deciding row, and
// first-match-wins ordering between rows.
func TestShouldHedgeDecisionMatrix(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    hedging.Eligibility
		want hedging.Reason
	}{
		// Row 1.
		{"row1 no strategy", hedging.Eligibility{StrategyResolved: false, PreferredRegions: 3, ApplicableRegions: 3, Kind: hedging.PointRead, Allowed: hedging.Phase1}, hedging.ReasonNoStrategy},
		{"row1 beats row2 (no regions)", hedging.Eligibility{PreferredRegions: 0, Kind: hedging.PointRead, Allowed: hedging.Phase1}, hedging.ReasonNoStrategy},
		{"row1 beats row4 (write, no strategy)", hedging.Eligibility{PreferredRegions: 3, ApplicableRegions: 3, Kind: hedging.Create, Allowed: hedging.PhaseFuture.With(hedging.Create)}, hedging.ReasonNoStrategy},
		// Row 2.
		{"row2 empty preferred list", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 0, ApplicableRegions: 0, Kind: hedging.PointRead, Allowed: hedging.Phase1}, hedging.ReasonNoPreferredRegions},
		{"row2 beats row3", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 0, Kind: hedging.QueryPage, Allowed: hedging.Phase1}, hedging.ReasonNoPreferredRegions},
		{"row2 beats row4", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 0, Kind: hedging.Create, Allowed: hedging.Phase1.With(hedging.Create)}, hedging.ReasonNoPreferredRegions},
		// Row 3.
		{"row3 query in phase 1", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 3, Kind: hedging.QueryPage, Allowed: hedging.Phase1}, hedging.ReasonNotInPhase},
		{"row3 metadata in phase 1", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 3, Kind: hedging.MetadataRead, Allowed: hedging.Phase1}, hedging.ReasonNotInPhase},
		{"row3 sproc in phase 2", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 3, Kind: hedging.StoredProcedure, Allowed: hedging.Phase2}, hedging.ReasonNotInPhase},
		{"row3 write in phase 1 (write not in the set)", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 3, Kind: hedging.Create, Allowed: hedging.Phase1}, hedging.ReasonNotInPhase},
		{"row3 beats row5", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 1, ApplicableRegions: 1, Kind: hedging.QueryPage, Allowed: hedging.Phase1}, hedging.ReasonNotInPhase},
		{"row3 empty phase set", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 3, Kind: hedging.PointRead, Allowed: 0}, hedging.ReasonNotInPhase},
		{"row3 unknown kind", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 3, Kind: hedging.OperationKind(200), Allowed: ^hedging.PhaseSet(0)}, hedging.ReasonNotInPhase},
		// Row 4: only reachable with a custom set that admits a write.
		{"row4 create in custom set", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 3, Kind: hedging.Create, Allowed: hedging.Phase1.With(hedging.Create)}, hedging.ReasonWrite},
		{"row4 beats row5", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 1, Kind: hedging.Patch, Allowed: hedging.Phase1.With(hedging.Patch)}, hedging.ReasonWrite},
		// Row 4a (spec §16 Phase 2): a change-feed page whose cursor is
		// region-affine, the cold page included, is never hedged.
		{"row4a region-affine change feed", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 3, Kind: hedging.ChangeFeedPage, Allowed: hedging.Phase2, Affinity: hedging.RegionAffine}, hedging.ReasonRegionAffineFeed},
		{"row4a beats row5", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 1, Kind: hedging.ChangeFeedPage, Allowed: hedging.Phase2, Affinity: hedging.RegionAffine}, hedging.ReasonRegionAffineFeed},
		{"row4a portable change feed hedged", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 3, Kind: hedging.ChangeFeedPage, Allowed: hedging.Phase2, Affinity: hedging.Portable}, hedging.ReasonEligible},
		{"row4a only the change feed", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 3, Kind: hedging.MetadataRead, Allowed: hedging.Phase2, Affinity: hedging.RegionAffine}, hedging.ReasonEligible},
		{"row3 beats row4a", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 3, Kind: hedging.ChangeFeedPage, Allowed: hedging.Phase1, Affinity: hedging.RegionAffine}, hedging.ReasonNotInPhase},
		// Row 5.
		{"row5 one applicable", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 1, Kind: hedging.PointRead, Allowed: hedging.Phase1}, hedging.ReasonTooFewRegions},
		{"row5 zero applicable", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 0, Kind: hedging.PointRead, Allowed: hedging.Phase1}, hedging.ReasonTooFewRegions},
		{"row5 single-region account", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 1, ApplicableRegions: 1, Kind: hedging.PointRead, Allowed: hedging.Phase1}, hedging.ReasonTooFewRegions},
		// Row 6.
		{"row6 read two regions", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 2, ApplicableRegions: 2, Kind: hedging.PointRead, Allowed: hedging.Phase1}, hedging.ReasonEligible},
		{"row6 query in phase 2", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 4, ApplicableRegions: 3, Kind: hedging.QueryPage, Allowed: hedging.Phase2}, hedging.ReasonEligible},
		{"row6 metadata in phase 2", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 2, ApplicableRegions: 2, Kind: hedging.MetadataRead, Allowed: hedging.Phase2}, hedging.ReasonEligible},
		{"row6 query plan in phase 2", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 2, ApplicableRegions: 2, Kind: hedging.QueryPlan, Allowed: hedging.Phase2}, hedging.ReasonEligible},
		{"row6 sproc in future", hedging.Eligibility{StrategyResolved: true, PreferredRegions: 2, ApplicableRegions: 2, Kind: hedging.StoredProcedure, Allowed: hedging.PhaseFuture}, hedging.ReasonEligible},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason := hedging.ShouldHedge(tc.e)
			if reason != tc.want {
				t.Errorf("ShouldHedge(%+v) reason = %v (%d), want %v (%d)", tc.e, reason, reason, tc.want, tc.want)
			}
			if ok != (tc.want == hedging.ReasonEligible) {
				t.Errorf("ShouldHedge ok = %v with reason %v", ok, reason)
			}
		})
	}
}

func TestReasonString(t *testing.T) {
	for r, want := range map[hedging.Reason]string{
		hedging.ReasonNoStrategy:         "no strategy",
		hedging.ReasonNoPreferredRegions: "no preferred regions",
		hedging.ReasonNotInPhase:         "not in phase-allowed set",
		hedging.ReasonWrite:              "write",
		hedging.ReasonRegionAffineFeed:   "region-affine change feed",
		hedging.ReasonTooFewRegions:      "fewer than 2 applicable regions",
		hedging.ReasonEligible:           "eligible",
		0:                                "Reason(0)",
		99:                               "Reason(99)",
	} {
		if got := r.String(); got != want {
			t.Errorf("Reason(%d).String() = %q, want %q", r, got, want)
		}
	}
	// Rows are numbered 1..6 in spec order.
	if hedging.ReasonNoStrategy != 1 || hedging.ReasonEligible != 6 {
		t.Errorf("reasons are not numbered as the §5.1 rows")
	}
}

// Phase-allowed sets (§5.1 row 3 footnote, §16) for every kind.
func TestPhaseSetMembership(t *testing.T) {
	type m struct{ p1, p2, future bool }
	want := map[hedging.OperationKind]m{
		hedging.PointRead:       {true, true, true},
		hedging.QueryPage:       {false, true, true},
		hedging.ReadManyPage:    {false, true, true},
		hedging.ChangeFeedPage:  {false, true, true},
		hedging.MetadataRead:    {false, true, true},
		hedging.QueryPlan:       {false, true, true},
		hedging.Create:          {false, false, false},
		hedging.Replace:         {false, false, false},
		hedging.Upsert:          {false, false, false},
		hedging.Delete:          {false, false, false},
		hedging.Patch:           {false, false, false},
		hedging.StoredProcedure: {false, false, true},
	}
	if len(want) != len(htAllKinds) {
		t.Fatalf("table covers %d kinds, there are %d", len(want), len(htAllKinds))
	}
	for _, k := range htAllKinds {
		w := want[k]
		got := m{hedging.Phase1.Allows(k), hedging.Phase2.Allows(k), hedging.PhaseFuture.Allows(k)}
		if got != w {
			t.Errorf("%v: phase1/phase2/future = %v, want %v", k, got, w)
		}
	}
	for _, k := range []hedging.OperationKind{12, 31, 32, 200, 255} {
		if hedging.PhaseFuture.Allows(k) || (^hedging.PhaseSet(0)).Allows(k) {
			t.Errorf("Allows(%v) true for an unknown kind", k)
		}
	}
	custom := hedging.Phase1.With(hedging.Create)
	if !custom.Allows(hedging.Create) || !custom.Allows(hedging.PointRead) || custom.Allows(hedging.QueryPage) {
		t.Errorf("Phase1.With(Create) = %b", custom)
	}
	if hedging.Phase1.Allows(hedging.Create) {
		t.Errorf("With mutated Phase1")
	}
}

func TestOperationKind(t *testing.T) {
	names := []string{"read", "query", "read_many", "change_feed", "metadata_read", "create", "replace", "upsert", "delete", "patch", "stored_procedure", "query_plan"}
	for i, k := range htAllKinds {
		if k.String() != names[i] {
			t.Errorf("%d.String() = %q, want %q", k, k.String(), names[i])
		}
		back, err := hedging.ParseOperationKind(k.String())
		if err != nil || back != k {
			t.Errorf("ParseOperationKind(%q) = %v, %v; want %v", k.String(), back, err, k)
		}
		isWrite := false
		for _, w := range htWrites {
			isWrite = isWrite || w == k
		}
		if k.IsWrite() != isWrite {
			t.Errorf("%v.IsWrite() = %v", k, k.IsWrite())
		}
		if k.IsMetadata() != (k == hedging.MetadataRead) {
			t.Errorf("%v.IsMetadata() = %v", k, k.IsMetadata())
		}
	}
	for _, bad := range []string{"", "Read", "READ", " read", "write", "readmany", "bogus"} {
		k, err := hedging.ParseOperationKind(bad)
		if err == nil {
			t.Errorf("ParseOperationKind(%q) = %v, nil; want an error", bad, k)
			continue
		}
		if !strings.Contains(err.Error(), `"`+bad+`"`) {
			t.Errorf("error %q does not name the value %q", err, bad)
		}
	}
	if got := hedging.OperationKind(200).String(); got != "OperationKind(200)" {
		t.Errorf("unknown kind String() = %q", got)
	}
}

// htBeginOutcome begins one operation on a fresh client and answers the
// primary's first attempt with 200; it returns the race.
func htBeginOutcome(t *testing.T, cfg hedging.Config, op hedging.Operation) (*hedging.Race, hedging.Effects) {
	t.Helper()
	c := htClient(t, cfg)
	if op.Partition == "" {
		op.Partition = "p"
	}
	r := new(hedging.Race)
	e := htBegin(c, r, 0, &op)
	return r, e
}

// The §15.1 should_hedge_* tests.
func TestShouldHedgeSpecTests(t *testing.T) {
	multi := hedging.Config{Regions: htRegions("A", "B", "C"), Strategy: htHedging(100 * time.Millisecond)}

	t.Run("should_hedge_read_multi_region", func(t *testing.T) {
		ok, reason := hedging.ShouldHedge(hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 3, Kind: hedging.PointRead, Allowed: hedging.Phase1})
		if !ok || reason != hedging.ReasonEligible {
			t.Errorf("ShouldHedge = %v, %v", ok, reason)
		}
		r, e := htBeginOutcome(t, multi, hedging.Operation{Kind: hedging.PointRead})
		if !r.Hedged() {
			t.Fatalf("a read on a 3-region account is not hedged")
		}
		// The threshold timer is armed at the threshold.
		armed := false
		for i := 0; i < e.Len(); i++ {
			if a := e.At(i); a.Kind == hedging.ActTimer && a.Timer == hedging.TimerThreshold && a.At == 100*time.Millisecond {
				armed = true
			}
		}
		if !armed {
			t.Errorf("Begin did not arm the threshold timer at 100ms: %+v", e)
		}
	})
	t.Run("should_hedge_read_single_region", func(t *testing.T) {
		ok, reason := hedging.ShouldHedge(hedging.Eligibility{StrategyResolved: true, PreferredRegions: 1, ApplicableRegions: 1, Kind: hedging.PointRead, Allowed: hedging.Phase1})
		if ok || reason != hedging.ReasonTooFewRegions {
			t.Errorf("ShouldHedge = %v, %v", ok, reason)
		}
		r, e := htBeginOutcome(t, hedging.Config{Regions: htRegions("A"), Strategy: htHedging(100 * time.Millisecond)}, hedging.Operation{Kind: hedging.PointRead})
		if r.Hedged() {
			t.Errorf("a single-region read is hedged")
		}
		for i := 0; i < e.Len(); i++ {
			if e.At(i).Kind == hedging.ActTimer && e.At(i).Timer == hedging.TimerThreshold {
				t.Errorf("threshold timer armed on a single-region account")
			}
		}
	})
	t.Run("should_hedge_excluded_to_one_region", func(t *testing.T) {
		ok, reason := hedging.ShouldHedge(hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 1, Kind: hedging.PointRead, Allowed: hedging.Phase1})
		if ok || reason != hedging.ReasonTooFewRegions {
			t.Errorf("ShouldHedge = %v, %v", ok, reason)
		}
		r, e := htBeginOutcome(t, multi, hedging.Operation{Kind: hedging.PointRead, ExcludeRegions: []hedging.Region{"A", "C"}})
		if r.Hedged() {
			t.Errorf("hedged with a single applicable region left")
		}
		if got := e.At(0).Attempt.Endpoint.Region; got != "B" {
			t.Errorf("primary went to %s, want the only applicable region B", got)
		}
	})
	t.Run("should_hedge_no_preferred_regions", func(t *testing.T) {
		ok, reason := hedging.ShouldHedge(hedging.Eligibility{StrategyResolved: true, PreferredRegions: 0, Kind: hedging.PointRead, Allowed: hedging.Phase1})
		if ok || reason != hedging.ReasonNoPreferredRegions {
			t.Errorf("ShouldHedge = %v, %v", ok, reason)
		}
		r, e := htBeginOutcome(t, hedging.Config{Strategy: htHedging(100 * time.Millisecond)}, hedging.Operation{Kind: hedging.PointRead})
		if r.Hedged() || !r.Done() || e.Len() != 0 {
			t.Fatalf("hedged=%v done=%v effects=%d; want an immediate non-hedged error", r.Hedged(), r.Done(), e.Len())
		}
		if _, err := r.Result(); !errors.Is(err, hedging.ErrNoRegion) {
			t.Errorf("err = %v, want ErrNoRegion", err)
		}
		if _, ok := r.Diagnostics(); ok {
			t.Errorf("diagnostics attached without preferred regions")
		}
	})
	t.Run("should_hedge_write_never", func(t *testing.T) {
		for _, k := range htWrites {
			for _, set := range []hedging.PhaseSet{hedging.Phase1, hedging.Phase2, hedging.PhaseFuture, ^hedging.PhaseSet(0)} {
				ok, reason := hedging.ShouldHedge(hedging.Eligibility{StrategyResolved: true, PreferredRegions: 5, ApplicableRegions: 5, Kind: k, Allowed: set})
				if ok {
					t.Errorf("%v hedged with phase set %b (reason %v)", k, set, reason)
				}
			}
			for _, cfg := range []hedging.Config{
				multi,
				{Regions: htRegions("A", "B", "C"), Strategy: htHedging(time.Millisecond), MultiMaster: true, Phase: ^hedging.PhaseSet(0)},
				{Regions: htRegions("A", "B"), WriteRegion: "B", Phase: hedging.PhaseFuture},
			} {
				r, _ := htBeginOutcome(t, cfg, hedging.Operation{Kind: k, HedgingEnabled: hedging.SwitchOn})
				if r.Hedged() {
					t.Errorf("%v hedged through Begin (cfg %+v)", k, cfg.Phase)
				}
			}
		}
	})
	t.Run("should_hedge_non_document", func(t *testing.T) {
		ok, reason := hedging.ShouldHedge(hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 3, Kind: hedging.MetadataRead, Allowed: hedging.Phase1})
		if ok || reason != hedging.ReasonNotInPhase {
			t.Errorf("ShouldHedge(metadata, Phase1) = %v, %v", ok, reason)
		}
		if r, _ := htBeginOutcome(t, multi, hedging.Operation{Kind: hedging.MetadataRead}); r.Hedged() {
			t.Errorf("metadata read hedged in phase 1 (the client default)")
		}
		cfg := multi
		cfg.Phase = hedging.Phase2
		if r, _ := htBeginOutcome(t, cfg, hedging.Operation{Kind: hedging.MetadataRead}); !r.Hedged() {
			t.Errorf("metadata read not hedged in phase 2")
		}
	})
	t.Run("should_hedge_disabled_override", func(t *testing.T) {
		c := htClient(t, multi)
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p", Strategy: hedging.Disabled}
		d := htNewDriver(t, c, &op, htLegs(htR(2*time.Second, 200, 0), htR(10*time.Millisecond, 200, 0))).run()
		if d.r.Hedged() {
			t.Errorf("op Disabled did not override the client's hedging")
		}
		if _, ok := d.r.Diagnostics(); ok {
			t.Errorf("diagnostics attached to a Disabled operation")
		}
		if d.perLeg[hedging.Alternate] != 0 || d.r.AlternateSpawned() {
			t.Errorf("alternate sent for a Disabled operation")
		}
		if res, err := d.r.Result(); err != nil || res.Status.Code != 200 {
			t.Errorf("outcome %v, %v; want the primary's 200 after 2s", res.Status, err)
		}
		// A sibling operation on the same client still hedges.
		sib := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
		var r hedging.Race
		htBegin(c, &r, 0, &sib)
		if !r.Hedged() {
			t.Errorf("a sibling operation lost the client's hedging")
		}
	})
}
