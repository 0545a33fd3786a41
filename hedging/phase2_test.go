package hedging_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"hedgelab/hedging"
)

var phase2Kinds = []hedging.OperationKind{hedging.QueryPage, hedging.ReadManyPage, hedging.ChangeFeedPage, hedging.MetadataRead}

var phase2Regions = []hedging.Endpoint{{Region: "West", Key: "w"}, {Region: "East", Key: "e"}, {Region: "North", Key: "n"}}

// phase2Client builds a Phase 2 client over phase2Regions (or regions) with
// the environment as lookup sees it.
func phase2Client(t *testing.T, phase hedging.PhaseSet, regions []hedging.Endpoint, env map[string]string) *hedging.Client {
	t.Helper()
	ec, err := hedging.LoadEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	c, err := hedging.NewClient(hedging.Config{
		Regions:  regions,
		Strategy: hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(100 * time.Millisecond))),
		Phase:    phase,
		Env:      ec,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hasThresholdTimer reports whether e arms the threshold timer.
func hasThresholdTimer(e hedging.Effects) bool {
	for i := range e.Len() {
		if a := e.At(i); a.Kind == hedging.ActTimer && a.Timer == hedging.TimerThreshold {
			return true
		}
	}
	return false
}

// The Phase 2 rows of the spec §5.1 decision matrix, through Client.Begin
// (the race core) for every Phase 2 kind: a page of QueryItems, ReadMany,
// the change feed and a metadata read are hedged exactly when a point read
// would be, and not at all under the Phase 1 set (§5.1 †, §16 Phase 2).
func TestPhase2DecisionMatrixThroughBegin(t *testing.T) {
	for _, kind := range phase2Kinds {
		for _, tc := range []struct {
			name    string
			phase   hedging.PhaseSet
			regions []hedging.Endpoint
			op      hedging.Operation
			env     map[string]string
			hedged  bool
		}{
			{name: "row1 Disabled", phase: hedging.Phase2, regions: phase2Regions, op: hedging.Operation{Strategy: hedging.Disabled}},
			{name: "row1 env kill switch", phase: hedging.Phase2, regions: phase2Regions, env: map[string]string{hedging.EnvHedgingEnabledOverride: "false"}},
			{name: "row2 no preferred regions", phase: hedging.Phase2},
			{name: "row3 Phase 1 set", phase: hedging.Phase1, regions: phase2Regions},
			{name: "row5 one region after ExcludeRegions", phase: hedging.Phase2, regions: phase2Regions, op: hedging.Operation{ExcludeRegions: []hedging.Region{"East", "North"}}},
			{name: "row5 single-region account", phase: hedging.Phase2, regions: phase2Regions[:1]},
			{name: "row6 eligible", phase: hedging.Phase2, regions: phase2Regions, hedged: true},
			{name: "row6 eligible with a continuation", phase: hedging.Phase2, regions: phase2Regions, hedged: true,
				op: hedging.Operation{Continuation: hedging.Continuation{Token: "t1", IssuedBy: "East"}}},
			{name: "row1 env override forces on over Disabled", phase: hedging.Phase2, regions: phase2Regions, hedged: true,
				op: hedging.Operation{Strategy: hedging.Disabled}, env: map[string]string{hedging.EnvHedgingEnabledOverride: "true"}},
		} {
			t.Run(kind.String()+"/"+tc.name, func(t *testing.T) {
				c := phase2Client(t, tc.phase, tc.regions, tc.env)
				op := tc.op
				op.Kind, op.Partition = kind, "p0"
				var r hedging.Race
				e := htBegin(c, &r, 0, &op)
				if r.Hedged() != tc.hedged || hasThresholdTimer(e) != tc.hedged {
					t.Errorf("Hedged() = %v, threshold timer armed = %v; want %v", r.Hedged(), hasThresholdTimer(e), tc.hedged)
				}
			})
		}
	}
}

// The region pin (Client.Pin) survives every setting, the environment
// override forcing hedging on included (regression of azure-sdk-for-rust
// PR #4896's review: a Disabled strategy was overridden by
// AZURE_COSMOS_HEDGING_ENABLED=true and a region-affine continuation was
// raced). A pinned page arms no threshold, its primary 503 spawns no
// alternate (upgrade path suppressed), and its retries stay in the pinned
// region (no failover), for every Phase 2 kind and every layer that could
// force hedging on.
func TestPinCannotBeOverridden(t *testing.T) {
	forcing := []struct {
		name string
		env  map[string]string
		op   hedging.Operation
	}{
		{"env override true", map[string]string{hedging.EnvHedgingEnabledOverride: "true"}, hedging.Operation{}},
		{"env override true over Disabled", map[string]string{hedging.EnvHedgingEnabledOverride: "true"}, hedging.Operation{Strategy: hedging.Disabled}},
		{"env true", map[string]string{hedging.EnvHedgingEnabled: "1"}, hedging.Operation{}},
		{"operation switch on", nil, hedging.Operation{HedgingEnabled: hedging.SwitchOn}},
		{"operation strategy", nil, hedging.Operation{Strategy: hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(time.Millisecond)))}},
	}
	for _, kind := range phase2Kinds {
		for _, f := range forcing {
			for _, pin := range []hedging.Region{"West", "East"} {
				t.Run(kind.String()+"/"+f.name+"/"+string(pin), func(t *testing.T) {
					c := phase2Client(t, hedging.Phase2, phase2Regions, f.env)
					op := f.op
					op.Kind, op.Partition = kind, "p0"
					op.Continuation = hedging.Continuation{Token: "etag-7", Affinity: hedging.RegionAffine, IssuedBy: pin}
					// Control: without the pin the layer does force hedging
					// (a change feed's only with a portable cursor: §5.1 row
					// 4a refuses a region-affine one whatever the layers).
					ctl := op
					ctl.Continuation.Affinity = hedging.Portable
					var r hedging.Race
					if htBegin(c, &r, 0, &ctl); !r.Hedged() {
						t.Fatalf("control: unpinned operation not hedged; the forcing layer %q does nothing", f.name)
					}
					c.Pin(&op, pin)
					e := htBegin(c, &r, 0, &op)
					if r.Hedged() || hasThresholdTimer(e) {
						t.Fatalf("pinned: Hedged() = %v, threshold armed = %v; want no hedge", r.Hedged(), hasThresholdTimer(e))
					}
					now := time.Duration(0)
					for attempts := 0; !r.Done(); attempts++ {
						var send *hedging.Action
						for i := range e.Len() {
							if a := e.At(i); a.Kind == hedging.ActSend {
								send = a
							}
						}
						if send == nil {
							t.Fatalf("attempt %d: no send and race not done", attempts)
						}
						if send.Attempt.Leg != hedging.Primary || send.Attempt.Endpoint.Region != pin {
							t.Fatalf("attempt %d went to %s leg %v; want the primary leg in pinned %s", attempts, send.Attempt.Endpoint.Region, send.Attempt.Leg, pin)
						}
						if slices.Contains(send.Attempt.Excluded, pin) || len(send.Attempt.Excluded) != len(phase2Regions)-1 {
							t.Fatalf("attempt %d Excluded = %v; want every region but %s", attempts, send.Attempt.Excluded, pin)
						}
						now += 10 * time.Millisecond
						e = htResponded(&r, now, send.Attempt, hedging.Result{Status: hedging.Status{Code: 503}})
					}
					if _, err := r.Result(); !errors.Is(err, hedging.ErrTransient) {
						t.Errorf("pinned chain on a failing region: err = %v, want ErrTransient (the driver restarts cold)", err)
					}
					if r.AlternateSpawned() || r.Attempts() != c.Config().Retry.MaxAttempts {
						t.Errorf("AlternateSpawned = %v, Attempts = %d; want no alternate, %d local attempts", r.AlternateSpawned(), r.Attempts(), c.Config().Retry.MaxAttempts)
					}
				})
			}
		}
	}
}

// A pin on a region the client does not prefer, or one the user excluded,
// leaves no applicable region: ErrNoRegion, never a silent reroute.
func TestPinUnknownOrExcludedRegion(t *testing.T) {
	c := phase2Client(t, hedging.Phase2, phase2Regions, nil)
	for _, tc := range []struct {
		pin     hedging.Region
		exclude []hedging.Region
	}{{"South", nil}, {"East", []hedging.Region{"East"}}} {
		op := hedging.Operation{Kind: hedging.QueryPage, Partition: "p", ExcludeRegions: tc.exclude}
		c.Pin(&op, tc.pin)
		var r hedging.Race
		htBegin(c, &r, 0, &op)
		if _, err := r.Result(); !r.Done() || !errors.Is(err, hedging.ErrNoRegion) {
			t.Errorf("pin %s excluding %v: done = %v err = %v, want ErrNoRegion", tc.pin, tc.exclude, r.Done(), err)
		}
	}
}

// The race returns the winner's continuation, serving region and applied
// LSN, never the loser's (spec §16 Phase 2).
func TestRaceForwardsWinnersContinuation(t *testing.T) {
	c := phase2Client(t, hedging.Phase2, phase2Regions, nil)
	op := hedging.Operation{Kind: hedging.QueryPage, Partition: "p", Continuation: hedging.Continuation{Token: "c1"}}
	var r hedging.Race
	e := htBegin(c, &r, 0, &op)
	prim := e.At(0).Attempt
	e = htTimerFired(&r, 100*time.Millisecond, hedging.TimerThreshold)
	alt := e.At(0).Attempt
	if alt.Leg != hedging.Alternate {
		t.Fatalf("threshold sent %v, want the alternate", alt.Leg)
	}
	htResponded(&r, 120*time.Millisecond, alt, hedging.Result{Status: hedging.Status{Code: 200},
		Page: &hedging.PageInfo{Continuation: hedging.Continuation{Token: "c2-east", IssuedBy: "East"}, ServedBy: "East", AppliedLSN: 41}})
	htResponded(&r, 130*time.Millisecond, prim, hedging.Result{Status: hedging.Status{Code: 200},
		Page: &hedging.PageInfo{Continuation: hedging.Continuation{Token: "c2-west", IssuedBy: "West"}, ServedBy: "West", AppliedLSN: 40}})
	res, err := r.Result()
	if err != nil || res.Page == nil || res.Page.Continuation.Token != "c2-east" || res.Page.ServedBy != "East" || res.Page.AppliedLSN != 41 {
		t.Errorf("Result = %+v, %v; want the alternate's c2-east from East at LSN 41", res, err)
	}
}

func TestContinuationAffinityString(t *testing.T) {
	for a, want := range map[hedging.ContinuationAffinity]string{hedging.Portable: "portable", hedging.RegionAffine: "region_affine", 9: "ContinuationAffinity(9)"} {
		if got := a.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", a, got, want)
		}
	}
	if !(hedging.Continuation{}).Cold() || (hedging.Continuation{Token: "x"}).Cold() {
		t.Error("Cold() wrong")
	}
}
