package hedging_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"hedgelab/hedging"
)

// htOutcomeKinds is the mix of attempt outcomes the property tests draw
// from: finals, transients of every retry class, transport errors and a
// local throughput-control throttle.
var htOutcomeKinds = []hedging.Result{
	{Status: htSt(200, 0)},
	{Status: htSt(200, 0)},
	{Status: htSt(404, 0)},
	{Status: htSt(409, 0)},
	{Status: htSt(403, 3)},
	{Status: htSt(429, 3200)},
	{Status: htSt(503, 0)},
	{Status: htSt(503, 0)},
	{Status: htSt(404, 1002)},
	{Status: htSt(429, 3092)},
	{Status: htSt(429, 0)},
	{Status: htSt(429, 0), RetryAfter: 7 * time.Millisecond},
	{Status: htSt(410, 0)},
	{Status: htSt(408, 0)},
	{Status: htSt(500, 0)},
	{Err: errors.New("connection reset")},
	{Status: htSt(429, 0), LocalThrottle: true},
}

// htScenario is one randomly drawn race.
type htScenario struct {
	regions   []string
	user      []hedging.Region
	threshold time.Duration
	timeout   time.Duration
	attempts  int
	disabled  bool
	cancelAt  time.Duration // 0 = no application cancel
}

func htDrawScenario(t *rapid.T) htScenario {
	var s htScenario
	n := rapid.IntRange(2, 4).Draw(t, "regions")
	s.regions = []string{"A", "B", "C", "D"}[:n]
	for _, r := range s.regions {
		if rapid.IntRange(0, 3).Draw(t, "exclude_"+r) == 0 {
			s.user = append(s.user, hedging.Region(r))
		}
	}
	s.threshold = time.Duration(rapid.IntRange(1, 300).Draw(t, "threshold_ms")) * time.Millisecond
	if rapid.Bool().Draw(t, "has_deadline") {
		s.timeout = time.Duration(rapid.IntRange(1, 1000).Draw(t, "deadline_ms")) * time.Millisecond
	}
	s.attempts = rapid.IntRange(1, 4).Draw(t, "max_attempts")
	s.disabled = rapid.IntRange(0, 7).Draw(t, "disabled") == 0
	if rapid.IntRange(0, 4).Draw(t, "app_cancel") == 0 {
		s.cancelAt = time.Duration(rapid.IntRange(1, 800).Draw(t, "cancel_ms")) * time.Millisecond
	}
	return s
}

// htRunScenario builds a fresh client and drives one race with random
// per-attempt latencies and outcomes.
func htRunScenario(t *rapid.T, s htScenario) *htDriver {
	return htRunScenarioWith(t, s, false, nil)
}

// htRunScenarioWith is htRunScenario with one Effects reused by every
// call into the race (as the simulator does) when to is set. Every
// answer drawn is kept in answers, by leg and attempt number, and an
// answer found there is replayed instead of drawn (nil: draw every one).
func htRunScenarioWith(t *rapid.T, s htScenario, to bool, answers map[[2]int]htResp) *htDriver {
	cfg := hedging.Config{
		Regions:  htRegions(s.regions...),
		Strategy: htHedging(s.threshold),
		Retry:    hedging.RetryOptions{MaxAttempts: s.attempts},
	}
	c, err := hedging.NewClient(cfg)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	op := &hedging.Operation{Kind: hedging.PointRead, Partition: "p", ExcludeRegions: s.user, Timeout: s.timeout}
	if s.disabled {
		op.Strategy = hedging.Disabled
	}
	script := func(a hedging.Attempt, n int) htResp {
		k := [2]int{int(a.Leg), n}
		if r, ok := answers[k]; ok {
			return r
		}
		lat := time.Duration(rapid.SampledFrom([]int{0, 1, 50, 99, 100, 150, 200, 300, 500, 1500}).Draw(t, "latency_ms")) * time.Millisecond
		res := rapid.SampledFrom(htOutcomeKinds).Draw(t, "outcome")
		res.RequestCharge = float64(rapid.IntRange(0, 5).Draw(t, "ru"))
		res.SessionLSN = int64(rapid.IntRange(0, 100).Draw(t, "lsn"))
		if answers != nil {
			answers[k] = htResp{lat: lat, res: res}
		}
		return htResp{lat: lat, res: res}
	}
	d := htNewDriver(t, c, op, script)
	d.to = to
	if s.cancelAt > 0 {
		d.at(d.start+s.cancelAt, func(now time.Duration) hedging.Effects { return d.r.Cancel(now, context.Canceled) })
	}
	return d.run()
}

// The race invariants of spec §6.5 and §10.1 over random races.
func TestRaceCoreProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := htDrawScenario(t)
		d := htRunScenario(t, s)
		r := &d.r
		applicable := hedging.ApplicableRegions(htRegions(s.regions...), s.user)

		// At most two attempts in flight, one per leg (checked as they
		// happen by htDriver), and never more than two legs.
		if d.maxInFlight > 2 {
			t.Fatalf("%d attempts in flight", d.maxInFlight)
		}
		if r.Legs() > 2 || r.Legs() < 1 && len(d.sent) > 0 {
			t.Fatalf("Legs() = %d", r.Legs())
		}
		if (d.perLeg[hedging.Alternate] > 0) != r.AlternateSpawned() || (r.Legs() == 2) != r.AlternateSpawned() {
			t.Fatalf("alternate attempts %d, spawned %v, legs %d", d.perLeg[hedging.Alternate], r.AlternateSpawned(), r.Legs())
		}
		for l, n := range d.perLeg {
			if n > s.attempts {
				t.Fatalf("%v leg sent %d attempts, MaxAttempts %d", hedging.Leg(l), n, s.attempts)
			}
		}
		if r.Attempts() != len(d.sent) {
			t.Fatalf("Attempts() = %d, sent %d", r.Attempts(), len(d.sent))
		}

		// Routing: no attempt ever targets a user-excluded region; the
		// alternate always targets applicable[1], pinned by its Excluded set.
		for _, snt := range d.sent {
			a := snt.a
			if slices.Contains(s.user, a.Endpoint.Region) {
				t.Fatalf("%v attempt targets user-excluded %s (excluded %v)", a.Leg, a.Endpoint.Region, s.user)
			}
			switch a.Leg {
			case hedging.Alternate:
				if !r.Hedged() {
					t.Fatalf("alternate attempt on a non-hedged race")
				}
				if a.Endpoint != applicable[1] || !a.Hedging {
					t.Fatalf("alternate attempt to %+v (hedging %v), want %+v", a.Endpoint, a.Hedging, applicable[1])
				}
				want := hedging.AlternateExcludeRegions(s.user, htRegions(s.regions...), applicable[1].Region)
				if !slices.Equal(a.Excluded, want) || slices.Contains(a.Excluded, a.Endpoint.Region) {
					t.Fatalf("alternate Excluded = %v, want %v", a.Excluded, want)
				}
				for _, e := range applicable {
					if e != applicable[1] && !slices.Contains(a.Excluded, e.Region) {
						t.Fatalf("alternate pin %v leaves %s reachable", a.Excluded, e.Region)
					}
				}
			case hedging.Primary:
				if a.Hedging {
					t.Fatalf("primary attempt carries the Hedging marker")
				}
				if r.Hedged() && a.Endpoint != applicable[0] {
					t.Fatalf("primary attempt of a hedged race left regions[0]: %+v", a.Endpoint)
				}
				if !slices.Equal(a.Excluded, s.user) {
					t.Fatalf("primary Excluded = %v, want the user's %v", a.Excluded, s.user)
				}
			}
		}

		// The alternate is spawned by the threshold timer or by the upgrade
		// of a region-changing primary transient, never otherwise.
		if alts := d.legAttempts(hedging.Alternate); len(alts) > 0 {
			at, idx := alts[0].at, alts[0].idx
			byTimer := at == d.start+s.threshold
			// The upgrade happens inside the Responded call of the response
			// recorded just before the alternate's first send.
			var trigger *htGot
			for i := range d.got {
				if d.got[i].idx < idx {
					trigger = &d.got[i]
				}
			}
			byUpgrade := trigger != nil && trigger.live && trigger.at == at && trigger.a.Leg == hedging.Primary &&
				!trigger.res.LocalThrottle && (trigger.res.Err != nil || hedging.CanSpawnHedge(hedging.PointRead, trigger.res.Status))
			if !byTimer && !byUpgrade {
				t.Fatalf("alternate spawned at +%v: neither the threshold (%v) nor an upgrade (trigger %+v)", at-d.start, s.threshold, trigger)
			}
			// (Spawning exactly at the deadline instant is the skipped BUG
			// test TestRaceCoreNoUpgradeSpawnAtDeadline.)
			if s.timeout > 0 && at-d.start > s.timeout {
				t.Fatalf("alternate spawned at +%v, after the deadline %v", at-d.start, s.timeout)
			}
			for _, g := range d.got {
				if g.live && g.idx < idx && g.a.Leg == hedging.Primary && g.res.LocalThrottle {
					t.Fatalf("alternate spawned after a local throttle on the primary")
				}
			}
		}

		// Exactly one terminal state; WasHedge iff AlternateWon.
		diag, hasDiag := r.Diagnostics()
		if hasDiag != r.Hedged() {
			t.Fatalf("diagnostics present %v, hedged %v", hasDiag, r.Hedged())
		}
		w, won := r.Winner()
		res, err := r.Result()
		if (err == nil) != won {
			t.Fatalf("err %v but winner present %v", err, won)
		}
		if hasDiag {
			st := diag.TerminalState()
			if !slices.Contains(hedging.TerminalStates[:], st) {
				t.Fatalf("terminal state %v is not one of the seven", st)
			}
			if diag.WasHedge() != (st == hedging.AlternateWon) {
				t.Fatalf("WasHedge %v with state %v", diag.WasHedge(), st)
			}
			if won && (w == hedging.Alternate) != (st == hedging.AlternateWon) {
				t.Fatalf("winner %v with state %v", w, st)
			}
			if st.Requests() != r.Legs() {
				t.Fatalf("state %v implies %d requests, race sent %d legs", st, st.Requests(), r.Legs())
			}
			if _, ok := diag.AlternateRegion(); ok != r.AlternateSpawned() {
				t.Fatalf("alternate region present %v, spawned %v", ok, r.AlternateSpawned())
			}
			// A response region exactly when a response was returned (§10.1).
			if rr, ok := diag.ResponseRegion(); ok != won || (won && rr != r.Endpoint(w).Region) {
				t.Fatalf("response region %q,%v for %v (won %v)", rr, ok, st, won)
			}
			if diag.RequestChargeTotal() != r.TotalRequestCharge() {
				t.Fatalf("diagnostics total %v, race total %v", diag.RequestChargeTotal(), r.TotalRequestCharge())
			}
		} else if d.perLeg[hedging.Alternate] > 0 {
			t.Fatalf("non-hedged race sent an alternate")
		}

		// The returned response is a final one that really arrived; an error
		// carries the last transient status seen.
		if err == nil {
			if !res.Final() {
				t.Fatalf("returned a non-final response %v", res.Status)
			}
			found := false
			for _, g := range d.got {
				if g.live && g.a.Leg == w && g.res.Status == res.Status && g.res.Final() {
					found = true
				}
			}
			if !found {
				t.Fatalf("returned %v, which no live %v attempt produced", res.Status, w)
			}
			if r.RequestCharge() != res.RequestCharge {
				t.Fatalf("RequestCharge %v, response charge %v", r.RequestCharge(), res.RequestCharge)
			}
		} else {
			var he *hedging.Error
			if !errors.As(err, &he) {
				t.Fatalf("error %v (%T) is not *hedging.Error", err, err)
			}
			if (he.Diagnostics != nil) != r.Hedged() {
				t.Fatalf("Error.Diagnostics present %v, hedged %v", he.Diagnostics != nil, r.Hedged())
			}
			cancelled := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
			if !cancelled {
				if !d.sawTransient && !errors.Is(err, hedging.ErrNoRegion) {
					t.Fatalf("transient error %v but no transient was seen", err)
				}
				if he.Status != d.lastTransient {
					t.Fatalf("Error.Status = %v, last transient seen %v", he.Status, d.lastTransient)
				}
			} else if he.Status != (hedging.Status{}) {
				// Deadline/cancel: at least one of the transients seen (the
				// exact "last one" is the skipped BUG test below).
				seen := false
				for _, g := range d.got {
					seen = seen || (g.live && !g.res.Final() && g.res.Status == he.Status)
				}
				if !seen {
					t.Fatalf("Error.Status %v was never seen", he.Status)
				}
			}
			if cancelled && hasDiag && !diag.TerminalState().DeadlineElapsed() {
				t.Fatalf("cancellation with terminal state %v", diag.TerminalState())
			}
		}

		// Deadline: the answer never comes later than deadline + harvest.
		if s.timeout > 0 && r.DoneAt()-d.start > s.timeout+hedging.HarvestWindow {
			t.Fatalf("answered at +%v, deadline %v", r.DoneAt()-d.start, s.timeout)
		}
		if r.DoneAt() < d.start {
			t.Fatalf("DoneAt %v before start", r.DoneAt())
		}
	})
}

// The strict form of "an error's Status is the last transient status seen",
// including deadline and cancellation outcomes.
func TestRaceCorePropertyErrorStatusIsLastTransient(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := htRunScenario(t, htDrawScenario(t))
		var he *hedging.Error
		if errors.As(d.r.Err(), &he) && he.Status != d.lastTransient {
			t.Fatalf("Error.Status = %v, last transient seen %v", he.Status, d.lastTransient)
		}
	})
}

// The same core is deterministic: the same inputs give the same outcome.
func TestRaceCoreDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := htDrawScenario(t)
		seed := rapid.Uint64().Draw(t, "seed")
		run := func() (hedging.TerminalState, time.Duration, int, error) {
			c, _ := hedging.NewClient(hedging.Config{Regions: htRegions(s.regions...), Strategy: htHedging(s.threshold), Retry: hedging.RetryOptions{MaxAttempts: s.attempts}})
			op := &hedging.Operation{Kind: hedging.PointRead, Partition: "p", ExcludeRegions: s.user, Timeout: s.timeout}
			x := seed
			d := htNewDriver(t, c, op, func(a hedging.Attempt, n int) htResp {
				x = x*6364136223846793005 + 1442695040888963407
				k := htOutcomeKinds[(x>>33)%uint64(len(htOutcomeKinds))]
				return htResp{lat: time.Duration((x>>40)%400) * time.Millisecond, res: k}
			}).run()
			var st hedging.TerminalState
			if diag, ok := d.r.Diagnostics(); ok {
				st = diag.TerminalState()
			}
			return st, d.r.DoneAt(), len(d.sent), d.r.Err()
		}
		s1, t1, n1, e1 := run()
		s2, t2, n2, e2 := run()
		if s1 != s2 || t1 != t2 || n1 != n2 || (e1 == nil) != (e2 == nil) {
			t.Fatalf("non-deterministic: (%v %v %d %v) vs (%v %v %d %v)", s1, t1, n1, e1, s2, t2, n2, e2)
		}
	})
}

// One Effects reused by every call into the race (Begin, Responded,
// TimerFired: as the simulator drives it) drives a race exactly as a fresh
// Effects per call does: same attempts, cancels, outcome and diagnostics
// over random races, with the same answers.
func TestRaceCoreReusedEffectsMatchesFresh(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := htDrawScenario(t)
		answers := map[[2]int]htResp{}
		want := htRunScenarioWith(t, s, false, answers)
		got := htRunScenarioWith(t, s, true, answers)
		if !slices.EqualFunc(got.sent, want.sent, func(a, b htSent) bool { return htSameAttempt(a.a, b.a) && a.at == b.at && a.idx == b.idx }) {
			t.Fatalf("sent %+v, want %+v", got.sent, want.sent)
		}
		if !slices.Equal(got.cancels, want.cancels) || len(got.got) != len(want.got) {
			t.Fatalf("cancels %v responses %d, want %v and %d", got.cancels, len(got.got), want.cancels, len(want.got))
		}
		gr, gerr := got.r.Result()
		wr, werr := want.r.Result()
		if gr.Status != wr.Status || gr.RequestCharge != wr.RequestCharge || fmt.Sprint(gerr) != fmt.Sprint(werr) ||
			got.r.DoneAt() != want.r.DoneAt() || got.r.TotalRequestCharge() != want.r.TotalRequestCharge() {
			t.Fatalf("outcome %+v %v at %v, want %+v %v at %v", gr, gerr, got.r.DoneAt(), wr, werr, want.r.DoneAt())
		}
		gd, gok := got.r.Diagnostics()
		wd, wok := want.r.Diagnostics()
		if gok != wok || gok && fmt.Sprintf("%+v", *gd) != fmt.Sprintf("%+v", *wd) {
			t.Fatalf("diagnostics %+v, want %+v", gd, wd)
		}
	})
}

// htSameAttempt compares two attempts field by field (Excluded by value).
func htSameAttempt(a, b hedging.Attempt) bool {
	return a.Leg == b.Leg && a.Seq == b.Seq && a.Endpoint == b.Endpoint && slices.Equal(a.Excluded, b.Excluded) &&
		a.Hedging == b.Hedging && a.HubRegionProcessingOnly == b.HubRegionProcessingOnly && a.SessionLSN == b.SessionLSN
}
