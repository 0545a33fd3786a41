package hedging_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"hedgelab/hedging"
)

// p2Cfg is a Phase 2 account of regions A and B, hedging at 50 ms with up
// to three attempts per leg.
func p2Cfg(strategy hedging.AvailabilityStrategy) hedging.Config {
	return hedging.Config{Regions: htRegions("A", "B"), Strategy: strategy, Phase: hedging.Phase2,
		Retry: hedging.RetryOptions{MaxAttempts: 3}}
}

// The metadata rows of spec §16 Phase 2 as the SDKs ship them (.NET
// MetadataHedgingStrategy, Rust evaluate_hedge_eligibility and
// classify_secondary_hedge_result), through the race core, against the
// same script on a data-plane read: a fixed 1.5 s threshold whatever the
// strategy's, an immediate hedge on a regional failure, and a primary that
// stays authoritative (the alternate's non-success is discarded and never
// retried).
func TestMetadataReadRules(t *testing.T) {
	ms := htMillisecond
	transport := hedging.Result{Err: errors.New("connection refused")}
	for _, tc := range []struct {
		name     string
		kind     hedging.OperationKind
		prim     htScript
		alt      htResp
		spawnAt  time.Duration // -1: never spawned
		cause    hedging.SpawnCause
		state    hedging.TerminalState
		status   hedging.Status // the returned status (the error's, for an error)
		altTries int
	}{
		{"metadata: fixed 1.5 s threshold, not the strategy's 50 ms", hedging.MetadataRead,
			htLegs(htR(1600*ms, 200, 0), htResp{}), htR(10*ms, 200, 0), 1500 * ms, hedging.SpawnThreshold, hedging.AlternateWon, htSt(200, 0), 1},
		{"data plane: the strategy's 50 ms", hedging.QueryPage,
			htLegs(htR(1600*ms, 200, 0), htResp{}), htR(10*ms, 200, 0), 50 * ms, hedging.SpawnThreshold, hedging.AlternateWon, htSt(200, 0), 1},
		{"query plan: a data-plane read, the strategy's 50 ms", hedging.QueryPlan,
			htLegs(htR(1600*ms, 200, 0), htResp{}), htR(10*ms, 200, 0), 50 * ms, hedging.SpawnThreshold, hedging.AlternateWon, htSt(200, 0), 1},
		{"metadata: 500 hedges at once", hedging.MetadataRead,
			htLegs(htR(5*ms, 500, 0), htResp{}), htR(10*ms, 200, 0), 5 * ms, hedging.SpawnRegionalFailure, hedging.AlternateWon, htSt(200, 0), 1},
		{"metadata: 410/1022 hedges at once", hedging.MetadataRead,
			htLegs(htR(5*ms, 410, 1022), htResp{}), htR(10*ms, 200, 0), 5 * ms, hedging.SpawnRegionalFailure, hedging.AlternateWon, htSt(200, 0), 1},
		{"metadata: 403/1008 hedges at once", hedging.MetadataRead,
			htLegs(htR(5*ms, 403, 1008), htResp{}), htR(10*ms, 200, 0), 5 * ms, hedging.SpawnRegionalFailure, hedging.AlternateWon, htSt(200, 0), 1},
		{"metadata: 503 hedges at once", hedging.MetadataRead,
			htLegs(htR(5*ms, 503, 0), htResp{}), htR(10*ms, 200, 0), 5 * ms, hedging.Spawn503, hedging.AlternateWon, htSt(200, 0), 1},
		{"metadata: no response hedges at once", hedging.MetadataRead,
			htLegs(htResp{lat: 5 * ms, res: transport}, htResp{}), htR(10*ms, 200, 0), 5 * ms, hedging.SpawnTransportError, hedging.AlternateWon, htSt(200, 0), 1},
		{"data plane: 500 does not hedge at once", hedging.QueryPage,
			htLegs(htR(5*ms, 500, 0), htResp{}), htR(10*ms, 200, 0), -1, 0, hedging.PrimaryWonPreThreshold, htSt(500, 0), 0},
		{"data plane: 403/1008 is final", hedging.PointRead,
			htLegs(htR(5*ms, 403, 1008), htResp{}), htR(10*ms, 200, 0), -1, 0, hedging.PrimaryWonPreThreshold, htSt(403, 1008), 0},
		{"metadata: 410/0 is a local retry, not a regional failure", hedging.MetadataRead,
			htLegs(htR(5*ms, 410, 0), htResp{}), htR(10*ms, 200, 0), -1, 0, hedging.PrimaryWonPreThreshold, htSt(410, 0), 0},
		{"metadata: the alternate's 404 is discarded, the primary's answer returned", hedging.MetadataRead,
			htLegs(htR(2000*ms, 200, 0), htResp{}), htR(10*ms, 404, 0), 1500 * ms, hedging.SpawnThreshold, hedging.PrimaryWonAfterHedge, htSt(200, 0), 1},
		{"data plane: the alternate's 404 wins", hedging.QueryPage,
			htLegs(htR(2000*ms, 200, 0), htResp{}), htR(10*ms, 404, 0), 50 * ms, hedging.SpawnThreshold, hedging.AlternateWon, htSt(404, 0), 1},
		{"metadata: the alternate's 503 is not retried", hedging.MetadataRead,
			htLegs(htR(2000*ms, 200, 0), htResp{}), htR(10*ms, 503, 0), 1500 * ms, hedging.SpawnThreshold, hedging.PrimaryWonAfterHedge, htSt(200, 0), 1},
		{"data plane: the alternate's 503 is retried locally", hedging.QueryPage,
			htLegs(htR(2000*ms, 200, 0), htResp{}), htR(10*ms, 503, 0), 50 * ms, hedging.SpawnThreshold, hedging.PrimaryWonAfterHedge, htSt(200, 0), 3},
		{"metadata: both fail, the primary's error is returned", hedging.MetadataRead,
			htLegs(htR(5*ms, 500, 0), htResp{}), htR(1*ms, 404, 0), 5 * ms, hedging.SpawnRegionalFailure, hedging.BothTransient, htSt(500, 0), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := htClient(t, p2Cfg(htHedging(50*ms)))
			op := &hedging.Operation{Kind: tc.kind, Partition: "p"}
			script := func(a hedging.Attempt, n int) htResp {
				if a.Leg == hedging.Alternate {
					return tc.alt
				}
				return tc.prim(a, n)
			}
			d := htNewDriver(t, c, op, script).run()
			alts := d.legAttempts(hedging.Alternate)
			switch {
			case tc.spawnAt < 0 && len(alts) > 0:
				t.Fatalf("alternate sent at +%v, want none", alts[0].at-d.start)
			case tc.spawnAt >= 0 && (len(alts) == 0 || alts[0].at-d.start != tc.spawnAt):
				t.Fatalf("alternate attempts %v, want the first at +%v", alts, tc.spawnAt)
			}
			if len(alts) != tc.altTries {
				t.Errorf("alternate sent %d attempts, want %d", len(alts), tc.altTries)
			}
			diag, ok := d.r.Diagnostics()
			if !ok {
				t.Fatal("not hedged")
			}
			if cause, _ := diag.SpawnCause(); cause != tc.cause || diag.TerminalState() != tc.state {
				t.Errorf("cause %v, state %v; want %v, %v", cause, diag.TerminalState(), tc.cause, tc.state)
			}
			res, err := d.r.Result()
			var he *hedging.Error
			switch {
			case err == nil && res.Status != tc.status:
				t.Errorf("returned %v, want %v", res.Status, tc.status)
			case errors.As(err, &he) && he.Status != tc.status:
				t.Errorf("error status %v, want %v", he.Status, tc.status)
			}
		})
	}
}

// A6: Disabled disables metadata hedging too (spec §4.2: a client-level
// Disabled suppresses hedging for every operation), and the master switch
// decides it as for any read; the fixed threshold replaces only the
// threshold (Rust: "the enablement decision still comes from
// resolve_availability_strategy").
func TestMetadataHedgingFollowsTheStrategy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		client   hedging.AvailabilityStrategy
		op       hedging.AvailabilityStrategy
		env      hedging.EnvConfig
		hedged   bool
		declined bool
	}{
		{"client Disabled", hedging.Disabled, hedging.AvailabilityStrategy{}, hedging.EnvConfig{}, false, false},
		{"operation Disabled", htHedging(50 * htMillisecond), hedging.Disabled, hedging.EnvConfig{}, false, false},
		{"kill switch", htHedging(50 * htMillisecond), hedging.AvailabilityStrategy{}, hedging.EnvConfig{HedgingEnabledOverride: hedging.SwitchOff}, false, false},
		{"client hedging", htHedging(50 * htMillisecond), hedging.AvailabilityStrategy{}, hedging.EnvConfig{}, true, false},
		{"driver default", hedging.AvailabilityStrategy{}, hedging.AvailabilityStrategy{}, hedging.EnvConfig{}, true, false},
		{"override on over Disabled", hedging.Disabled, hedging.AvailabilityStrategy{}, hedging.EnvConfig{HedgingEnabledOverride: hedging.SwitchOn}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := p2Cfg(tc.client)
			cfg.Env = tc.env
			c := htClient(t, cfg)
			op := &hedging.Operation{Kind: hedging.MetadataRead, Partition: "p", Strategy: tc.op}
			var r hedging.Race
			e := htBegin(c, &r, 0, op)
			if r.Hedged() != tc.hedged || hasThresholdTimer(e) != tc.hedged {
				t.Fatalf("Hedged %v, threshold armed %v; want %v", r.Hedged(), hasThresholdTimer(e), tc.hedged)
			}
			if tc.hedged && r.Threshold().Get() != hedging.MetadataThreshold {
				t.Errorf("threshold %v, want %v", r.Threshold(), hedging.MetadataThreshold)
			}
			if p := c.PlanHedge(0, op); p.Hedged != tc.hedged || tc.hedged && p.Threshold.Get() != hedging.MetadataThreshold {
				t.Errorf("PlanHedge = %+v; want hedged %v at %v", p, tc.hedged, hedging.MetadataThreshold)
			}
		})
	}
}

// htLegGate is a LegGate of capacity slots that records its peak.
type htLegGate struct {
	mu             sync.Mutex
	cap, use, peak int
	refused        int
}

func (g *htLegGate) AcquireLeg() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.use >= g.cap {
		g.refused++
		return false
	}
	g.use++
	g.peak = max(g.peak, g.use)
	return true
}

func (g *htLegGate) ReleaseLeg() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.use == 0 {
		panic("ReleaseLeg without a slot")
	}
	g.use--
}

func (g *htLegGate) inUse() int { g.mu.Lock(); defer g.mu.Unlock(); return g.use }

// A5: Operation.Legs bounds alternate legs in flight. A slot is taken
// only when an alternate is about to be sent and returned when that leg
// ends: an operation whose primary answers before the threshold takes
// none; a refused threshold hedge leaves the primary alone; a refused
// failover upgrade fails over sequentially (the plain path), as the Rust
// driver's budget refusal does.
func TestLegGate(t *testing.T) {
	ms := htMillisecond
	for _, tc := range []struct {
		name      string
		capacity  int
		prim, alt htResp
		sampleAt  time.Duration // gate in use at +sampleAt
		inUseThen int
		spawned   bool
		refused   bool
		primTo    []hedging.Region // regions of the primary leg's attempts
	}{
		{"primary before the threshold takes no slot", 1, htR(20*ms, 200, 0), htR(10*ms, 200, 0), 10 * ms, 0, false, false, []hedging.Region{"A"}},
		{"an alternate holds a slot while in flight", 1, htR(200*ms, 200, 0), htR(100*ms, 200, 0), 60 * ms, 1, true, false, []hedging.Region{"A"}},
		{"the slot is returned when the alternate leg ends", 1, htR(200*ms, 200, 0), htR(10*ms, 404, 1003), 100 * ms, 0, true, false, []hedging.Region{"A"}},
		{"a full gate refuses the threshold hedge", 0, htR(200*ms, 200, 0), htR(10*ms, 200, 0), 60 * ms, 0, false, true, []hedging.Region{"A"}},
		{"a full gate turns a failover upgrade into sequential failover", 0, htR(5*ms, 503, 0), htR(10*ms, 200, 0), 1 * ms, 0, false, true, []hedging.Region{"A", "B"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := p2Cfg(htHedging(50 * ms))
			cfg.Retry.MaxAttempts = 1
			if len(tc.primTo) > 1 {
				cfg.Retry.MaxAttempts = 3
			}
			c := htClient(t, cfg)
			g := &htLegGate{cap: tc.capacity}
			op := &hedging.Operation{Kind: hedging.QueryPage, Partition: "p", Legs: g}
			script := func(a hedging.Attempt, n int) htResp {
				if a.Leg == hedging.Alternate {
					return tc.alt
				}
				if n > 0 {
					return htR(10*ms, 200, 0)
				}
				return tc.prim
			}
			d := htNewDriver(t, c, op, script)
			sampled := -1
			d.at(d.start+tc.sampleAt, func(time.Duration) hedging.Effects { sampled = g.inUse(); return hedging.Effects{} })
			d.run()
			if sampled != tc.inUseThen {
				t.Errorf("slots in use at +%v = %d, want %d", tc.sampleAt, sampled, tc.inUseThen)
			}
			if g.inUse() != 0 {
				t.Errorf("slots in use after the race = %d, want 0", g.inUse())
			}
			if d.r.AlternateSpawned() != tc.spawned {
				t.Errorf("AlternateSpawned = %v, want %v", d.r.AlternateSpawned(), tc.spawned)
			}
			diag, _ := d.r.Diagnostics()
			if diag.HedgeRefused() != tc.refused {
				t.Errorf("HedgeRefused = %v, want %v", diag.HedgeRefused(), tc.refused)
			}
			var to []hedging.Region
			for _, s := range d.legAttempts(hedging.Primary) {
				to = append(to, s.a.Endpoint.Region)
			}
			if len(to) != len(tc.primTo) || to[len(to)-1] != tc.primTo[len(tc.primTo)-1] {
				t.Errorf("primary attempts went to %v, want %v", to, tc.primTo)
			}
			if _, err := d.r.Result(); err != nil {
				t.Errorf("err = %v, want the response", err)
			}
		})
	}
}

// Two races share a gate of one slot: the second's threshold hedge is
// refused while the first's alternate is out, and admitted once it ended.
func TestLegGateShared(t *testing.T) {
	ms := htMillisecond
	c := htClient(t, p2Cfg(htHedging(50*ms)))
	g := &htLegGate{cap: 1}
	ops := [3]hedging.Operation{}
	var races [3]hedging.Race
	for i := range ops {
		ops[i] = hedging.Operation{Kind: hedging.QueryPage, Partition: "p", Legs: g}
	}
	htBegin(c, &races[0], 0, &ops[0])
	htBegin(c, &races[1], 0, &ops[1])
	e0 := htTimerFired(&races[0], 50*ms, hedging.TimerThreshold)
	htTimerFired(&races[1], 50*ms, hedging.TimerThreshold)
	if !races[0].AlternateSpawned() || races[1].AlternateSpawned() || g.peak != 1 {
		t.Fatalf("spawned %v/%v peak %d; want the first only", races[0].AlternateSpawned(), races[1].AlternateSpawned(), g.peak)
	}
	htResponded(&races[0], 60*ms, e0.At(0).Attempt, hedging.Result{Status: htSt(200, 0)})
	if g.inUse() != 0 {
		t.Fatalf("in use after the first race = %d", g.inUse())
	}
	htBegin(c, &races[2], 60*ms, &ops[2])
	if htTimerFired(&races[2], 110*ms, hedging.TimerThreshold); !races[2].AlternateSpawned() {
		t.Errorf("a later race's hedge was refused with the slot free")
	}
}

// §5.1 row 4a through Begin: a change-feed page whose cursor is
// region-affine is not hedged, its cold first page included, whatever the
// master switch says; with a portable cursor (.NET) every page is.
func TestRegionAffineChangeFeedNeverHedged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cont   hedging.Continuation
		env    hedging.EnvConfig
		hedged bool
	}{
		{"cold, region-affine", hedging.Continuation{Affinity: hedging.RegionAffine}, hedging.EnvConfig{}, false},
		{"cold, region-affine, override on", hedging.Continuation{Affinity: hedging.RegionAffine}, hedging.EnvConfig{HedgingEnabledOverride: hedging.SwitchOn}, false},
		{"with a region-affine cursor", hedging.Continuation{Token: "7", Affinity: hedging.RegionAffine, IssuedBy: "A"}, hedging.EnvConfig{}, false},
		{"cold, portable", hedging.Continuation{}, hedging.EnvConfig{}, true},
		{"with a portable cursor", hedging.Continuation{Token: "7", IssuedBy: "A"}, hedging.EnvConfig{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := p2Cfg(htHedging(50 * htMillisecond))
			cfg.Env = tc.env
			c := htClient(t, cfg)
			var r hedging.Race
			htBegin(c, &r, 0, &hedging.Operation{Kind: hedging.ChangeFeedPage, Partition: "p", Continuation: tc.cont})
			if r.Hedged() != tc.hedged {
				t.Errorf("Hedged = %v, want %v", r.Hedged(), tc.hedged)
			}
		})
	}
}
