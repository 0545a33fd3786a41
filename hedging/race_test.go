package hedging_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"hedgelab/hedging"
)

// ---------------------------------------------------------------------------
// A scriptable, hand-driven event loop over the race core, shared by the
// core-hosted tests in this package (race_test.go, race_prop_test.go,
// diagnostics_test.go, shared_test.go, ...). Every helper is prefixed "ht"
// so that it cannot collide with helpers of other test files.
// ---------------------------------------------------------------------------

// htResp is one scripted attempt: how long it takes and what it returns.
type htResp struct {
	lat time.Duration
	res hedging.Result
}

// htScript answers the n-th attempt (0-based, counted per leg) of a leg.
type htScript func(a hedging.Attempt, n int) htResp

// htEvent kinds, in the order they are processed at the same instant: a
// response landing at the same instant as a timer is seen first (as in
// racecases_test.go), custom calls (application cancellation) last.
const (
	htKindRespond = iota
	htKindTimer
	htKindCall
)

type htEvent struct {
	at      time.Duration
	kind    int
	seq     int
	attempt hedging.Attempt
	res     hedging.Result
	timer   hedging.TimerKind
	call    func(now time.Duration) hedging.Effects
}

// htSent records one ActSend.
type htSent struct {
	at  time.Duration
	a   hedging.Attempt
	idx int // order among all sends and responses
}

// htDriver drives one race by hand and checks the driver-visible invariants
// on the way: at most one attempt in flight per leg and two in all, no
// effects after the race is done, Done turning true exactly once.
// htTB is what the driver needs from *testing.T, *testing.B or *rapid.T.
type htTB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// htGot records one response delivered to the race.
type htGot struct {
	at   time.Duration
	a    hedging.Attempt
	res  hedging.Result
	live bool // the attempt was in flight and the race not yet done
	idx  int  // order among all sends and responses
}

type htDriver struct {
	t      htTB
	c      *hedging.Client
	r      hedging.Race
	op     *hedging.Operation
	script htScript
	start  time.Duration

	q   []htEvent
	seq int
	now time.Duration

	sent          []htSent
	got           []htGot
	nrec          int
	cancels       []hedging.Leg
	perLeg        [2]int
	inFlight      map[uint32]hedging.Leg // seq -> leg of attempts in flight
	maxInFlight   int
	doneSeen      int
	lastTransient hedging.Status // status of the latest accepted transient response
	sawTransient  bool
	failures      []string

	// to drives the race with the one reused eff, as the simulator does,
	// instead of a fresh Effects per call.
	to  bool
	eff hedging.Effects
}

func (d *htDriver) fail(format string, args ...any) {
	d.failures = append(d.failures, fmt.Sprintf(format, args...))
	d.t.Errorf(format, args...)
}

func htNewDriver(t htTB, c *hedging.Client, op *hedging.Operation, script htScript) *htDriver {
	return &htDriver{t: t, c: c, op: op, script: script, start: time.Second, inFlight: map[uint32]hedging.Leg{}}
}

func (d *htDriver) push(ev htEvent) {
	d.seq++
	ev.seq = d.seq
	d.q = append(d.q, ev)
}

// at schedules call at time at (after responses and timers of that instant).
func (d *htDriver) at(at time.Duration, call func(now time.Duration) hedging.Effects) {
	d.push(htEvent{at: at, kind: htKindCall, call: call})
}

func (d *htDriver) pop() htEvent {
	sort.SliceStable(d.q, func(i, j int) bool {
		a, b := d.q[i], d.q[j]
		if a.at != b.at {
			return a.at < b.at
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		return a.seq < b.seq
	})
	ev := d.q[0]
	d.q = d.q[1:]
	return ev
}

func (d *htDriver) perform(e hedging.Effects, wasDone bool) {
	if wasDone && e.Len() > 0 {
		d.fail("t=%v: %d effects returned after the race was done (first %+v)", d.now, e.Len(), e.At(0))
	}
	for i := 0; i < e.Len(); i++ {
		a := e.At(i)
		switch a.Kind {
		case hedging.ActSend:
			if a.At != d.now {
				d.fail("ActSend at %v, want now %v", a.At, d.now)
			}
			if a.Leg != a.Attempt.Leg || a.Leg > hedging.Alternate {
				d.fail("ActSend leg %v, attempt leg %v", a.Leg, a.Attempt.Leg)
			}
			for _, l := range d.inFlight {
				if l == a.Leg {
					d.fail("t=%v: second attempt in flight on the %v leg", d.now, a.Leg)
				}
			}
			d.inFlight[a.Attempt.Seq] = a.Leg
			d.maxInFlight = max(d.maxInFlight, len(d.inFlight))
			if len(d.inFlight) > 2 {
				d.fail("t=%v: %d attempts in flight", d.now, len(d.inFlight))
			}
			n := d.perLeg[a.Leg]
			d.perLeg[a.Leg]++
			d.nrec++
			d.sent = append(d.sent, htSent{at: d.now, a: a.Attempt, idx: d.nrec})
			resp := d.script(a.Attempt, n)
			d.push(htEvent{at: d.now + resp.lat, kind: htKindRespond, attempt: a.Attempt, res: resp.res})
		case hedging.ActCancel:
			found := false
			for s, l := range d.inFlight {
				if l == a.Leg {
					delete(d.inFlight, s)
					found = true
				}
			}
			if !found {
				d.fail("t=%v: ActCancel of the %v leg with nothing in flight", d.now, a.Leg)
			}
			d.cancels = append(d.cancels, a.Leg)
		case hedging.ActTimer:
			if a.At < d.now {
				d.fail("timer %v armed in the past (%v < %v)", a.Timer, a.At, d.now)
			}
			d.push(htEvent{at: a.At, kind: htKindTimer, timer: a.Timer})
		default:
			d.fail("unknown action kind %v", a.Kind)
		}
	}
}

// run begins the race at d.start and processes events until the queue is
// empty (stale responses and timers are still delivered after the race is
// done, to check that the core ignores them).
func (d *htDriver) run() *htDriver {
	d.now = d.start
	if d.to {
		d.c.Begin(&d.eff, &d.r, d.start, d.op)
		d.perform(d.eff, false)
	} else {
		d.perform(htBegin(d.c, &d.r, d.start, d.op), false)
	}
	d.noteDone()
	for steps := 0; len(d.q) > 0; steps++ {
		if steps > 100000 {
			d.t.Fatalf("race did not settle after %d events", steps)
		}
		ev := d.pop()
		if ev.at < d.now {
			d.t.Fatalf("time went backwards: %v < %v", ev.at, d.now)
		}
		d.now = ev.at
		wasDone := d.r.Done()
		switch ev.kind {
		case htKindRespond:
			_, live := d.inFlight[ev.attempt.Seq]
			delete(d.inFlight, ev.attempt.Seq)
			if live && !wasDone && !ev.res.Final() {
				d.lastTransient, d.sawTransient = ev.res.Status, true
			}
			d.nrec++
			d.got = append(d.got, htGot{at: d.now, a: ev.attempt, res: ev.res, live: live && !wasDone, idx: d.nrec})
			if d.to {
				d.r.Responded(&d.eff, d.now, &ev.attempt, &ev.res)
				d.perform(d.eff, wasDone)
			} else {
				d.perform(htResponded(&d.r, d.now, ev.attempt, ev.res), wasDone)
			}
		case htKindTimer:
			if d.to {
				d.r.TimerFired(&d.eff, d.now, ev.timer)
				d.perform(d.eff, wasDone)
			} else {
				d.perform(htTimerFired(&d.r, d.now, ev.timer), wasDone)
			}
		case htKindCall:
			d.perform(ev.call(d.now), wasDone)
		}
		d.noteDone()
	}
	if !d.r.Done() {
		d.t.Fatalf("race not done after all events")
	}
	if d.doneSeen != 1 {
		d.t.Fatalf("Done became true %d times", d.doneSeen)
	}
	return d
}

func (d *htDriver) noteDone() {
	if d.r.Done() && d.doneSeen == 0 {
		d.doneSeen = 1
	}
	if !d.r.Done() && d.doneSeen > 0 {
		d.fail("Done went back to false")
		d.doneSeen++
	}
}

// legAttempts returns the attempts sent on leg l, in order.
func (d *htDriver) legAttempts(l hedging.Leg) []htSent {
	var out []htSent
	for _, s := range d.sent {
		if s.a.Leg == l {
			out = append(out, s)
		}
	}
	return out
}

// htBegin, htResponded and htTimerFired call the race core with a fresh
// Effects each and return it, for tests that read each call's effects on
// their own (a driver reuses one Effects: see htDriver.to).
func htBegin(c *hedging.Client, r *hedging.Race, now time.Duration, op *hedging.Operation) (e hedging.Effects) {
	c.Begin(&e, r, now, op)
	return
}

func htResponded(r *hedging.Race, now time.Duration, a hedging.Attempt, res hedging.Result) (e hedging.Effects) {
	r.Responded(&e, now, &a, &res)
	return
}

func htTimerFired(r *hedging.Race, now time.Duration, t hedging.TimerKind) (e hedging.Effects) {
	r.TimerFired(&e, now, t)
	return
}

// htRegions builds endpoints "A" -> key "ep-A".
func htRegions(names ...string) []hedging.Endpoint {
	out := make([]hedging.Endpoint, len(names))
	for i, n := range names {
		out[i] = hedging.Endpoint{Region: hedging.Region(n), Key: "ep-" + n}
	}
	return out
}

func htHedging(d time.Duration) hedging.AvailabilityStrategy {
	return hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(d)))
}

func htClient(t testing.TB, cfg hedging.Config) *hedging.Client {
	t.Helper()
	c, err := hedging.NewClient(cfg)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

// htCfg is the usual test account: regions A, B (and more), hedging with
// threshold th, retries off unless set.
func htCfg(th time.Duration, regions ...string) hedging.Config {
	return hedging.Config{Regions: htRegions(regions...), Strategy: htHedging(th), Retry: hedging.RetryOptions{MaxAttempts: 1}}
}

func htSt(code, sub int) hedging.Status { return hedging.Status{Code: code, SubStatus: sub} }

func htR(lat time.Duration, code, sub int) htResp {
	return htResp{lat: lat, res: hedging.Result{Status: htSt(code, sub), RequestCharge: 1}}
}

// htLegs answers every attempt of the primary with p and of the alternate with a.
func htLegs(p, a htResp) htScript {
	return func(at hedging.Attempt, _ int) htResp {
		if at.Leg == hedging.Alternate {
			return a
		}
		return p
	}
}

// htSeq answers the n-th attempt of each leg with the n-th scripted response
// (the last one repeats).
func htSeq(p, a []htResp) htScript {
	return func(at hedging.Attempt, n int) htResp {
		s := p
		if at.Leg == hedging.Alternate {
			s = a
		}
		return s[min(n, len(s)-1)]
	}
}

const htMillisecond = time.Millisecond

func htDiag(t testing.TB, r *hedging.Race) *hedging.HedgeDiagnostics {
	t.Helper()
	d, ok := r.Diagnostics()
	if !ok || d == nil {
		t.Fatalf("no hedge diagnostics; want them")
	}
	return d
}

func htHedgeErr(t testing.TB, r *hedging.Race) *hedging.Error {
	t.Helper()
	_, err := r.Result()
	var he *hedging.Error
	if !errors.As(err, &he) {
		t.Fatalf("Result error = %v (%T), want *hedging.Error", err, err)
	}
	return he
}

// ---------------------------------------------------------------------------
// §15.1 tests hosted by the race core.
// ---------------------------------------------------------------------------

// app_cancel_preserves_hedge_diagnostics (§6.5 #7, §14.2).
func TestRaceCoreAppCancelPreservesHedgeDiagnostics(t *testing.T) {
	t.Run("both_racing_alternate_reports_within_harvest_window", func(t *testing.T) {
		c := htClient(t, htCfg(100*htMillisecond, "A", "B"))
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
		// Primary never answers in time; the alternate (sent at t0+100ms)
		// answers at t0+320ms, inside the harvest window of a cancel at +300ms.
		d := htNewDriver(t, c, &op, htLegs(htR(time.Second, 200, 0), htR(220*htMillisecond, 200, 0)))
		d.at(d.start+300*htMillisecond, func(now time.Duration) hedging.Effects { return d.r.Cancel(now, context.Canceled) })
		d.run()

		he := htHedgeErr(t, &d.r)
		if !errors.Is(he, context.Canceled) {
			t.Errorf("errors.Is(err, context.Canceled) = false; err = %v", he)
		}
		if errors.Is(he, context.DeadlineExceeded) {
			t.Errorf("cancellation reported as a deadline: %v", he)
		}
		if he.Diagnostics == nil {
			t.Fatalf("app-cancel error carries no hedge diagnostics")
		}
		diag := he.Diagnostics
		if got := diag.TerminalState(); got != hedging.BothTransientDeadlineElapsed {
			t.Errorf("terminal state = %v, want %v", got, hedging.BothTransientDeadlineElapsed)
		}
		if diag.WasHedge() {
			t.Errorf("WasHedge = true for a cancelled race")
		}
		if alt, ok := diag.AlternateRegion(); !ok || alt != "B" {
			t.Errorf("alternate region = %q,%v; want B,true", alt, ok)
		}
		if rr, ok := diag.ResponseRegion(); ok {
			t.Errorf("response region = %q on an error outcome", rr)
		}
		if got := diag.MostAdvancedLeg(); got != hedging.Alternate {
			t.Errorf("most advanced leg = %v, want alternate (the one that reported)", got)
		}
		if l := diag.Leg(hedging.Alternate); !l.Completed || l.LastStatus != htSt(200, 0) || l.Attempts != 1 {
			t.Errorf("alternate leg diagnostics = %+v, want completed with 200 after 1 attempt", l)
		}
		if l := diag.Leg(hedging.Primary); l.Completed {
			t.Errorf("primary leg diagnostics = %+v, want not completed", l)
		}
		if got := d.r.DoneAt() - d.start; got != 300*htMillisecond+hedging.HarvestWindow {
			t.Errorf("answered at +%v, want +%v (cancel + harvest window)", got, 300*htMillisecond+hedging.HarvestWindow)
		}
		if !slices.Equal(d.cancels, []hedging.Leg{hedging.Primary}) {
			t.Errorf("cancels = %v, want [primary]", d.cancels)
		}
		if w, ok := d.r.Winner(); ok {
			t.Errorf("winner = %v on a cancelled race", w)
		}
	})
	t.Run("both_report_within_window_ends_early", func(t *testing.T) {
		c := htClient(t, htCfg(100*htMillisecond, "A", "B"))
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
		d := htNewDriver(t, c, &op, htLegs(htR(310*htMillisecond, 503, 0), htR(220*htMillisecond, 200, 0)))
		d.at(d.start+300*htMillisecond, func(now time.Duration) hedging.Effects { return d.r.Cancel(now, context.Canceled) })
		d.run()
		he := htHedgeErr(t, &d.r)
		if !errors.Is(he, context.Canceled) || he.Diagnostics == nil {
			t.Fatalf("err = %v, diagnostics %v; want Canceled with diagnostics", he, he.Diagnostics)
		}
		if got := d.r.DoneAt() - d.start; got != 320*htMillisecond {
			t.Errorf("answered at +%v, want +320ms (last harvested response)", got)
		}
		if he.Status != htSt(503, 0) {
			t.Errorf("Error.Status = %v, want 503 (the harvested transient)", he.Status)
		}
		if len(d.cancels) != 0 {
			t.Errorf("cancels = %v, want none (both legs reported)", d.cancels)
		}
	})
	t.Run("pre_threshold", func(t *testing.T) {
		c := htClient(t, htCfg(100*htMillisecond, "A", "B"))
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
		d := htNewDriver(t, c, &op, htLegs(htR(time.Second, 200, 0), htR(10*htMillisecond, 200, 0)))
		d.at(d.start+40*htMillisecond, func(now time.Duration) hedging.Effects { return d.r.Cancel(now, context.Canceled) })
		d.run()
		he := htHedgeErr(t, &d.r)
		if !errors.Is(he, context.Canceled) || he.Diagnostics == nil {
			t.Fatalf("err = %v; want Canceled with diagnostics", he)
		}
		if got := he.Diagnostics.TerminalState(); got != hedging.DeadlineExceededPreThreshold {
			t.Errorf("terminal state = %v, want DeadlineExceededPreThreshold", got)
		}
		if d.r.Legs() != 1 || d.perLeg[hedging.Alternate] != 0 {
			t.Errorf("legs = %d, alternate attempts = %d; want 1 and 0", d.r.Legs(), d.perLeg[hedging.Alternate])
		}
		if got := d.r.DoneAt() - d.start; got != 40*htMillisecond {
			t.Errorf("answered at +%v, want +40ms (no harvest before the threshold)", got)
		}
	})
	t.Run("cancel_after_done_is_ignored", func(t *testing.T) {
		c := htClient(t, htCfg(100*htMillisecond, "A", "B"))
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
		d := htNewDriver(t, c, &op, htLegs(htR(10*htMillisecond, 200, 0), htR(10*htMillisecond, 200, 0)))
		d.at(d.start+50*htMillisecond, func(now time.Duration) hedging.Effects { return d.r.Cancel(now, context.Canceled) })
		d.run() // the driver fails the test if Cancel returns effects after Done
		if _, err := d.r.Result(); err != nil {
			t.Errorf("late cancel changed the outcome: %v", err)
		}
	})
}

// The end-to-end deadline: errors.Is(err, context.DeadlineExceeded) in each
// deadline terminal state (§9.4, §10.1, §14.3).
func TestRaceCoreDeadline(t *testing.T) {
	tests := []struct {
		name      string
		threshold time.Duration
		timeout   time.Duration
		p, a      htResp
		state     hedging.TerminalState
		doneAt    time.Duration
		status    hedging.Status
		legs      int
	}{
		{"pre_threshold", 500 * htMillisecond, 200 * htMillisecond, htR(2*time.Second, 200, 0), htR(30*htMillisecond, 200, 0),
			hedging.DeadlineExceededPreThreshold, 200 * htMillisecond, hedging.Status{}, 1},
		{"both_in_flight", 100 * htMillisecond, 500 * htMillisecond, htR(2*time.Second, 200, 0), htR(2*time.Second, 200, 0),
			hedging.BothTransientDeadlineElapsed, 500*htMillisecond + hedging.HarvestWindow, hedging.Status{}, 2},
		{"awaiting_partner", 100 * htMillisecond, 500 * htMillisecond, htR(2*time.Second, 200, 0), htR(50*htMillisecond, 503, 0),
			hedging.CancelledAwaitingPartner, 500*htMillisecond + hedging.HarvestWindow, htSt(503, 0), 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := htClient(t, htCfg(tc.threshold, "A", "B"))
			op := hedging.Operation{Kind: hedging.PointRead, Partition: "p", Timeout: tc.timeout}
			d := htNewDriver(t, c, &op, htLegs(tc.p, tc.a)).run()
			he := htHedgeErr(t, &d.r)
			if !errors.Is(he, context.DeadlineExceeded) {
				t.Errorf("errors.Is(err, DeadlineExceeded) = false: %v", he)
			}
			if errors.Is(he, hedging.ErrTransient) || errors.Is(he, context.Canceled) {
				t.Errorf("deadline error also matches ErrTransient/Canceled: %v", he)
			}
			if he.Diagnostics == nil || he.Diagnostics.TerminalState() != tc.state {
				t.Fatalf("diagnostics = %v, want terminal state %v", he.Diagnostics, tc.state)
			}
			if !he.Diagnostics.TerminalState().DeadlineElapsed() {
				t.Errorf("%v.DeadlineElapsed() = false", tc.state)
			}
			if got := d.r.DoneAt() - d.start; got != tc.doneAt {
				t.Errorf("answered at +%v, want +%v", got, tc.doneAt)
			}
			if he.Status != tc.status {
				t.Errorf("Error.Status = %v, want %v", he.Status, tc.status)
			}
			if d.r.Legs() != tc.legs {
				t.Errorf("legs = %d, want %d", d.r.Legs(), tc.legs)
			}
		})
	}
}

// zero_overhead_happy_path_no_allocs (§6.5 #3) and
// shared_hub_region_latch_none_on_zero_overhead_happy_path (§9.6.2): the
// latch is an allocation, so zero allocations also proves it was never built.
func TestRaceCoreZeroOverheadHappyPathNoAllocs(t *testing.T) {
	c := htClient(t, hedging.Config{Regions: htRegions("A", "B", "C"), Strategy: htHedging(100 * htMillisecond)})
	op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
	var r hedging.Race
	ok := hedging.Result{Status: htSt(200, 0), RequestCharge: 1}
	now := time.Second
	// Warm the shared maps once (session token / tracker entries).
	e := htBegin(c, &r, now, &op)
	htResponded(&r, now+5*htMillisecond, e.At(0).Attempt, ok)

	allocs := testing.AllocsPerRun(500, func() {
		e := htBegin(c, &r, now, &op)
		a := e.At(0).Attempt
		htResponded(&r, now+5*htMillisecond, a, ok)
	})
	if allocs != 0 {
		t.Errorf("happy path allocates %v times per operation, want 0", allocs)
	}
	if !r.Done() || !r.Hedged() || r.AlternateSpawned() {
		t.Fatalf("done=%v hedged=%v spawned=%v; want a hedged race won by the primary", r.Done(), r.Hedged(), r.AlternateSpawned())
	}
	if got := htDiag(t, &r).TerminalState(); got != hedging.PrimaryWonPreThreshold {
		t.Errorf("terminal state = %v", got)
	}

	t.Run("with_local_retry_before_threshold", func(t *testing.T) {
		timeout := hedging.Result{Status: htSt(408, 0), RequestCharge: 1}
		allocs := testing.AllocsPerRun(200, func() {
			e := htBegin(c, &r, now, &op)
			e = htResponded(&r, now+5*htMillisecond, e.At(0).Attempt, timeout) // 408: local retry, no hedge upgrade
			htResponded(&r, now+10*htMillisecond, e.At(0).Attempt, ok)
		})
		if allocs != 0 {
			t.Errorf("happy path with a local retry allocates %v times, want 0", allocs)
		}
		if !r.Done() || r.AlternateSpawned() {
			t.Fatalf("done=%v spawned=%v", r.Done(), r.AlternateSpawned())
		}
	})
}

// The shared hub-region latch (§9.6), observed through
// Attempt.HubRegionProcessingOnly.
func TestRaceCoreSharedHubRegionLatch(t *testing.T) {
	type want struct {
		leg hedging.Leg
		n   int // attempt index on the leg
		hub bool
	}
	run := func(t *testing.T, cfg hedging.Config, kind hedging.OperationKind, p, a []htResp, wants []want) *htDriver {
		t.Helper()
		c := htClient(t, cfg)
		op := hedging.Operation{Kind: kind, Partition: "p"}
		d := htNewDriver(t, c, &op, htSeq(p, a)).run()
		for _, w := range wants {
			atts := d.legAttempts(w.leg)
			if w.n >= len(atts) {
				t.Fatalf("%v leg sent %d attempts, want at least %d", w.leg, len(atts), w.n+1)
			}
			if got := atts[w.n].a.HubRegionProcessingOnly; got != w.hub {
				t.Errorf("%v attempt #%d (t=+%v) HubRegionProcessingOnly = %v, want %v",
					w.leg, w.n, atts[w.n].at-d.start, got, w.hub)
			}
		}
		return d
	}
	cfg := func() hedging.Config {
		c := htCfg(100*htMillisecond, "A", "B")
		c.Retry.MaxAttempts = 3
		return c
	}

	t.Run("initialized_when_eligible", func(t *testing.T) {
		// Threshold at +100 spawns the alternate. The alternate's first
		// attempt returns 404/1002 at +300; the primary's first attempt
		// returns 503 at +400 and its local retry must already carry the
		// header through the shared latch.
		run(t, cfg(), hedging.PointRead,
			[]htResp{htR(400*htMillisecond, 503, 0), htR(time.Second, 200, 0)},
			[]htResp{htR(200*htMillisecond, 404, 1002), htR(time.Second, 503, 0)},
			[]want{{hedging.Primary, 0, false}, {hedging.Alternate, 0, false},
				{hedging.Alternate, 1, true}, {hedging.Primary, 1, true}})
	})
	t.Run("propagates_first_1002_across_hedges", func(t *testing.T) {
		// The primary observes the first 404/1002 at +300 (after the
		// threshold): (a) its own retry carries the header (per-state
		// latch), (b)+(c) the alternate — which never saw a 1002 — sends
		// its next attempt with the header.
		run(t, cfg(), hedging.PointRead,
			[]htResp{htR(300*htMillisecond, 404, 1002), htR(time.Second, 503, 0)},
			[]htResp{htR(400*htMillisecond, 503, 0), htR(time.Second, 503, 0)},
			[]want{{hedging.Primary, 0, false}, {hedging.Alternate, 0, false},
				{hedging.Primary, 1, true}, {hedging.Alternate, 1, true}})
	})
	t.Run("latch_carries_a_pre_threshold_1002_into_the_alternate", func(t *testing.T) {
		// A pre-threshold 404/1002 upgrades to a hedge at once (§7.2.1);
		// the alternate is born with the discovery already made.
		run(t, cfg(), hedging.PointRead,
			[]htResp{htR(50*htMillisecond, 404, 1002), htR(time.Second, 200, 0)},
			[]htResp{htR(time.Second, 200, 0)},
			[]want{{hedging.Primary, 0, false}, {hedging.Alternate, 0, true}, {hedging.Primary, 1, true}})
	})
	t.Run("none_on_zero_overhead_happy_path", func(t *testing.T) {
		d := run(t, cfg(), hedging.PointRead,
			[]htResp{htR(50*htMillisecond, 200, 0)}, []htResp{htR(10*htMillisecond, 200, 0)},
			[]want{{hedging.Primary, 0, false}})
		if d.r.AlternateSpawned() || len(d.sent) != 1 {
			t.Errorf("spawned=%v sent=%d; want a single primary attempt", d.r.AlternateSpawned(), len(d.sent))
		}
	})
	for _, tc := range []struct {
		name string
		cfg  func() hedging.Config
		kind hedging.OperationKind
	}{
		{"none_on_multi_master", func() hedging.Config { c := cfg(); c.MultiMaster = true; return c }, hedging.PointRead},
		{"none_on_metadata", func() hedging.Config { c := cfg(); c.Phase = hedging.Phase2; return c }, hedging.MetadataRead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := run(t, tc.cfg(), tc.kind,
				[]htResp{htR(300*htMillisecond, 404, 1002), htR(time.Second, 503, 0)},
				[]htResp{htR(400*htMillisecond, 503, 0), htR(time.Second, 503, 0)},
				nil)
			if !d.r.Hedged() || !d.r.AlternateSpawned() {
				t.Fatalf("hedged=%v spawned=%v; the alternate must spawn for this test to mean anything", d.r.Hedged(), d.r.AlternateSpawned())
			}
			switch {
			case tc.kind.IsMetadata() && d.perLeg[hedging.Alternate] != 1:
				// Primary authoritative (spec §16 Phase 2): a metadata
				// read's alternate is never retried.
				t.Fatalf("alternate sent %d attempts on a metadata read, want 1 (no retry)", d.perLeg[hedging.Alternate])
			case !tc.kind.IsMetadata() && d.perLeg[hedging.Alternate] < 2:
				t.Fatalf("alternate sent %d attempts, want a retry after the primary's 1002", d.perLeg[hedging.Alternate])
			}
			for _, s := range d.sent {
				if s.a.HubRegionProcessingOnly {
					t.Errorf("%v attempt at +%v carries the hub-region header on a %s operation", s.a.Leg, s.at-d.start, tc.name)
				}
			}
			if d.op.HubRegionProcessingOnly {
				t.Errorf("op.HubRegionProcessingOnly set on a %s operation", tc.name)
			}
		})
	}
	t.Run("no_1002_emits_no_header", func(t *testing.T) {
		d := run(t, cfg(), hedging.PointRead,
			[]htResp{htR(300*htMillisecond, 503, 0), htR(100*htMillisecond, 408, 0), htR(100*htMillisecond, 410, 0)},
			[]htResp{htR(100*htMillisecond, 410, 0), htR(100*htMillisecond, 429, 3092), htR(100*htMillisecond, 503, 0)},
			nil)
		if d.perLeg[hedging.Primary] != 3 || d.perLeg[hedging.Alternate] != 3 {
			t.Fatalf("attempts = %v, want 3 per leg", d.perLeg)
		}
		for _, s := range d.sent {
			if s.a.HubRegionProcessingOnly {
				t.Errorf("%v attempt at +%v carries the header though no leg saw 1002", s.a.Leg, s.at-d.start)
			}
		}
		if d.op.HubRegionProcessingOnly {
			t.Errorf("op.HubRegionProcessingOnly set without a 1002")
		}
	})
}

// §9.6.7 / §14.1 #2: a BothTransient race in which a leg observed 404/1002
// fans the discovery into the operation, so the caller's next attempt keeps
// the header.
func TestRaceCoreBothTransientPropagatesSessionUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p, a    htResp
		wantHub bool
	}{
		{"primary_1002", htR(300*htMillisecond, 404, 1002), htR(400*htMillisecond, 503, 0), true},
		{"alternate_1002", htR(600*htMillisecond, 503, 0), htR(100*htMillisecond, 404, 1002), true},
		{"no_1002", htR(300*htMillisecond, 503, 0), htR(400*htMillisecond, 503, 0), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := htClient(t, htCfg(100*htMillisecond, "A", "B"))
			op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
			d := htNewDriver(t, c, &op, htLegs(tc.p, tc.a)).run()
			he := htHedgeErr(t, &d.r)
			if he.Diagnostics == nil || he.Diagnostics.TerminalState() != hedging.BothTransient {
				t.Fatalf("outcome %v, want BothTransient", he)
			}
			if !errors.Is(he, hedging.ErrTransient) {
				t.Errorf("errors.Is(err, ErrTransient) = false: %v", he)
			}
			if op.HubRegionProcessingOnly != tc.wantHub {
				t.Errorf("op.HubRegionProcessingOnly = %v, want %v", op.HubRegionProcessingOnly, tc.wantHub)
			}
			// The caller's next attempt of the same operation.
			var r2 hedging.Race
			e := htBegin(c, &r2, 10*time.Second, &op)
			if got := e.At(0).Attempt.HubRegionProcessingOnly; got != tc.wantHub {
				t.Errorf("next operation's first attempt header = %v, want %v", got, tc.wantHub)
			}
		})
	}
}

// exclude_regions_honored_by_every_retry_trigger (§8.4, §6.5 #4).
func TestRaceCoreExcludeRegionsHonoredByEveryRetryTrigger(t *testing.T) {
	triggers := []struct {
		name string
		res  hedging.Result
	}{
		{"503", hedging.Result{Status: htSt(503, 0)}},
		{"404_1002", hedging.Result{Status: htSt(404, 1002)}},
		{"429_3092", hedging.Result{Status: htSt(429, 3092)}},
		{"429_generic", hedging.Result{Status: htSt(429, 0)}},
		{"429_retry_after", hedging.Result{Status: htSt(429, 0), RetryAfter: 30 * htMillisecond}},
		{"410", hedging.Result{Status: htSt(410, 0)}},
		{"408", hedging.Result{Status: htSt(408, 0)}},
		{"transport_error", hedging.Result{Err: errors.New("connection reset")}},
	}
	layouts := []struct {
		name     string
		regions  []string
		user     []hedging.Region
		primary  hedging.Region
		target   hedging.Region
		excluded []hedging.Region
	}{
		{"3_regions", []string{"A", "B", "C"}, nil, "A", "B", []hedging.Region{"A", "C"}},
		{"4_regions_user_excludes_B", []string{"A", "B", "C", "D"}, []hedging.Region{"B"}, "A", "C", []hedging.Region{"B", "A", "D"}},
	}
	for _, lay := range layouts {
		for _, tr := range triggers {
			t.Run(lay.name+"/"+tr.name, func(t *testing.T) {
				cfg := htCfg(100*htMillisecond, lay.regions...)
				cfg.Retry.MaxAttempts = 3
				c := htClient(t, cfg)
				op := hedging.Operation{Kind: hedging.PointRead, Partition: "p", ExcludeRegions: lay.user}
				trig := htResp{lat: 20 * htMillisecond, res: tr.res}
				// The primary is slow but healthy; the alternate hits the
				// trigger on every attempt until its budget is spent.
				d := htNewDriver(t, c, &op, htLegs(htR(10*time.Second, 200, 0), trig)).run()
				alts := d.legAttempts(hedging.Alternate)
				if len(alts) != 3 {
					t.Fatalf("alternate attempts = %d, want 3 (MaxAttempts)", len(alts))
				}
				for i, s := range alts {
					if s.a.Endpoint.Region != lay.target || s.a.Endpoint.Key != "ep-"+string(lay.target) {
						t.Errorf("alternate attempt #%d went to %+v, want pinned to %s", i, s.a.Endpoint, lay.target)
					}
					if !slices.Equal(s.a.Excluded, lay.excluded) {
						t.Errorf("alternate attempt #%d Excluded = %v, want %v", i, s.a.Excluded, lay.excluded)
					}
					if slices.Contains(s.a.Excluded, s.a.Endpoint.Region) {
						t.Errorf("alternate attempt #%d targets excluded region %s", i, s.a.Endpoint.Region)
					}
					if !s.a.Hedging {
						t.Errorf("alternate attempt #%d lacks the Hedging marker", i)
					}
				}
				for i, s := range d.legAttempts(hedging.Primary) {
					if s.a.Endpoint.Region != lay.primary || s.a.Hedging {
						t.Errorf("primary attempt #%d = %+v, want region %s without the Hedging marker", i, s.a.Endpoint, lay.primary)
					}
					for _, u := range lay.user {
						if s.a.Endpoint.Region == u {
							t.Errorf("primary attempt #%d targets user-excluded %s", i, u)
						}
					}
				}
				if got := htDiag(t, &d.r).TerminalState(); got != hedging.PrimaryWonAfterHedge {
					t.Errorf("terminal state = %v, want PrimaryWonAfterHedge", got)
				}
			})
		}
	}

	// Inside the race the primary is pinned too: a 503 after the threshold
	// is retried locally in regions[0] (§8.4: local-only retries).
	t.Run("primary_pinned_inside_race", func(t *testing.T) {
		cfg := htCfg(100*htMillisecond, "A", "B", "C")
		cfg.Retry.MaxAttempts = 3
		c := htClient(t, cfg)
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
		d := htNewDriver(t, c, &op, htLegs(htR(150*htMillisecond, 503, 0), htR(10*time.Second, 200, 0))).run()
		for i, s := range d.legAttempts(hedging.Primary) {
			if s.a.Endpoint.Region != "A" {
				t.Errorf("primary attempt #%d went to %s inside a race, want A", i, s.a.Endpoint.Region)
			}
		}
		if d.perLeg[hedging.Primary] != 3 {
			t.Errorf("primary attempts = %d, want 3", d.perLeg[hedging.Primary])
		}
	})

	// The non-hedged path (op Disabled) fails over cross-region on
	// region-changing triggers and stays local on the others.
	for _, tc := range []struct {
		name string
		res  hedging.Result
		want []hedging.Region
	}{
		{"503", hedging.Result{Status: htSt(503, 0)}, []hedging.Region{"A", "B", "C"}},
		{"404_1002", hedging.Result{Status: htSt(404, 1002)}, []hedging.Region{"A", "B", "C"}},
		{"transport_error", hedging.Result{Err: errors.New("reset")}, []hedging.Region{"A", "B", "C"}},
		{"429_3092", hedging.Result{Status: htSt(429, 3092)}, []hedging.Region{"A", "B", "C"}},
		{"408", hedging.Result{Status: htSt(408, 0)}, []hedging.Region{"A", "A", "A"}},
		{"410", hedging.Result{Status: htSt(410, 0)}, []hedging.Region{"A", "A", "A"}},
		{"429_generic", hedging.Result{Status: htSt(429, 0)}, []hedging.Region{"A", "A", "A"}},
	} {
		t.Run("non_hedged_"+tc.name, func(t *testing.T) {
			cfg := htCfg(100*htMillisecond, "A", "B", "C")
			cfg.Retry.MaxAttempts = 3
			c := htClient(t, cfg)
			op := hedging.Operation{Kind: hedging.PointRead, Partition: "p", Strategy: hedging.Disabled}
			d := htNewDriver(t, c, &op, htLegs(htResp{lat: 20 * htMillisecond, res: tc.res}, htR(0, 200, 0))).run()
			var got []hedging.Region
			for _, s := range d.sent {
				if s.a.Leg != hedging.Primary || s.a.Hedging {
					t.Errorf("non-hedged operation sent %+v", s.a)
				}
				got = append(got, s.a.Endpoint.Region)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("attempt regions = %v, want %v", got, tc.want)
			}
			if d.r.Hedged() {
				t.Errorf("Hedged() = true for an op with Strategy Disabled")
			}
		})
	}
	t.Run("non_hedged_503_then_success_in_B", func(t *testing.T) {
		cfg := htCfg(100*htMillisecond, "A", "B", "C")
		cfg.Retry.MaxAttempts = 3
		c := htClient(t, cfg)
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p", Strategy: hedging.Disabled}
		d := htNewDriver(t, c, &op, htSeq([]htResp{htR(20*htMillisecond, 503, 0), htR(20*htMillisecond, 200, 0)}, nil)).run()
		res, err := d.r.Result()
		if err != nil || res.Status.Code != 200 || d.r.Endpoint(hedging.Primary).Region != "B" {
			t.Errorf("result %v, %v at %v; want 200 from B", res.Status, err, d.r.Endpoint(hedging.Primary))
		}
	})
}

// RU accounting (§9.3, §10.4, §17 Q3): the caller sees the winner's charge,
// the total counts every attempt that reported before the race ended.
func TestRaceCoreRequestCharge(t *testing.T) {
	charge := func(r htResp, ru float64) htResp { r.res.RequestCharge = ru; return r }
	t.Run("primary_wins_after_transient_alternate", func(t *testing.T) {
		c := htClient(t, htCfg(100*htMillisecond, "A", "B"))
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
		d := htNewDriver(t, c, &op, htLegs(charge(htR(500*htMillisecond, 200, 0), 5), charge(htR(100*htMillisecond, 503, 0), 2))).run()
		if got := d.r.RequestCharge(); got != 5 {
			t.Errorf("RequestCharge = %v, want 5 (winner only)", got)
		}
		if got := d.r.TotalRequestCharge(); got != 7 {
			t.Errorf("TotalRequestCharge = %v, want 7 (both legs)", got)
		}
		diag := htDiag(t, &d.r)
		if diag.RequestChargeTotal() != 7 || diag.Leg(hedging.Primary).RequestCharge != 5 || diag.Leg(hedging.Alternate).RequestCharge != 2 {
			t.Errorf("diagnostics charges total=%v primary=%v alternate=%v; want 7, 5, 2",
				diag.RequestChargeTotal(), diag.Leg(hedging.Primary).RequestCharge, diag.Leg(hedging.Alternate).RequestCharge)
		}
	})
	t.Run("alternate_wins_primary_cancelled", func(t *testing.T) {
		c := htClient(t, htCfg(100*htMillisecond, "A", "B"))
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
		d := htNewDriver(t, c, &op, htLegs(charge(htR(time.Second, 200, 0), 5), charge(htR(50*htMillisecond, 200, 0), 3))).run()
		// The cancelled primary's answer (RU 5) reaches the race after it
		// ended: it decides nothing and is not the caller's charge, but the
		// loser's RU is in the total (§10.4 ru_charge_total) and the
		// diagnostics.
		if d.r.RequestCharge() != 3 || d.r.TotalRequestCharge() != 8 {
			t.Errorf("charges = %v / %v, want 3 / 8 (the winner's; both legs')", d.r.RequestCharge(), d.r.TotalRequestCharge())
		}
		if diag := htDiag(t, &d.r); diag.RequestChargeTotal() != 8 || diag.Leg(hedging.Primary).RequestCharge != 5 {
			t.Errorf("diagnostics total=%v primary=%v, want 8, 5", diag.RequestChargeTotal(), diag.Leg(hedging.Primary).RequestCharge)
		}
	})
	t.Run("retries_sum_into_total", func(t *testing.T) {
		cfg := htCfg(100*htMillisecond, "A", "B")
		cfg.Retry.MaxAttempts = 3
		c := htClient(t, cfg)
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
		d := htNewDriver(t, c, &op, htSeq(
			[]htResp{charge(htR(20*htMillisecond, 408, 0), 1), charge(htR(20*htMillisecond, 200, 0), 4)}, nil)).run()
		if d.r.RequestCharge() != 4 || d.r.TotalRequestCharge() != 5 {
			t.Errorf("charges = %v / %v, want 4 / 5", d.r.RequestCharge(), d.r.TotalRequestCharge())
		}
	})
	t.Run("error_outcome_has_no_caller_charge", func(t *testing.T) {
		c := htClient(t, htCfg(100*htMillisecond, "A", "B"))
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
		d := htNewDriver(t, c, &op, htLegs(charge(htR(300*htMillisecond, 503, 0), 2), charge(htR(100*htMillisecond, 503, 0), 2))).run()
		if d.r.RequestCharge() != 0 || d.r.TotalRequestCharge() != 4 {
			t.Errorf("charges = %v / %v, want 0 / 4", d.r.RequestCharge(), d.r.TotalRequestCharge())
		}
	})
}

// §9.3 mitigation #2: a local throughput-control 429 on the primary means
// the alternate would hit the same gate: no alternate is ever spawned.
func TestRaceCoreLocalThrottleNeverFansOut(t *testing.T) {
	for _, sub := range []int{0, hedging.SubStatusSystemResourceUnavailable} {
		t.Run(fmt.Sprintf("429_%d", sub), func(t *testing.T) {
			cfg := htCfg(100*htMillisecond, "A", "B")
			cfg.Retry.MaxAttempts = 3
			c := htClient(t, cfg)
			op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
			local := htResp{lat: 0, res: hedging.Result{Status: htSt(429, sub), LocalThrottle: true}}
			// Throttled locally, then a slow success well after the threshold.
			d := htNewDriver(t, c, &op, htSeq([]htResp{local, htR(400*htMillisecond, 200, 0)}, []htResp{htR(10*htMillisecond, 200, 0)})).run()
			if d.r.AlternateSpawned() || d.perLeg[hedging.Alternate] != 0 || d.r.Legs() != 1 {
				t.Errorf("alternate spawned after a local throttle (attempts %v)", d.perLeg)
			}
			res, err := d.r.Result()
			if err != nil || res.Status.Code != 200 {
				t.Errorf("outcome %v, %v; want the primary's 200", res.Status, err)
			}
			for _, s := range d.sent {
				if s.a.Endpoint.Region != "A" {
					t.Errorf("attempt to %s after a local throttle, want A only", s.a.Endpoint.Region)
				}
			}
		})
	}
	t.Run("service_side_429_3092_does_fan_out", func(t *testing.T) {
		cfg := htCfg(100*htMillisecond, "A", "B")
		cfg.Retry.MaxAttempts = 3
		c := htClient(t, cfg)
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
		d := htNewDriver(t, c, &op, htSeq([]htResp{htR(10*htMillisecond, 429, 3092), htR(400*htMillisecond, 200, 0)}, []htResp{htR(10*htMillisecond, 200, 0)})).run()
		if !d.r.AlternateSpawned() {
			t.Errorf("a service-side 429/3092 did not upgrade to a hedge")
		}
		if alts := d.legAttempts(hedging.Alternate); len(alts) != 1 || alts[0].at != d.start+10*htMillisecond {
			t.Errorf("alternate attempts %+v, want one sent at +10ms (upgrade path)", alts)
		}
	})
}

// PPCB routing (§9.5): once the consecutive-hedge-win tracker trips, Begin
// routes the partition's next read to regions[1] first, until the probe
// interval has passed.
func TestRaceCorePPCBRoutingAfterTrip(t *testing.T) {
	cfg := htCfg(100*htMillisecond, "A", "B", "C")
	cfg.ConsecutiveHedgeWinThreshold = 2
	cfg.ProbeInterval = 10 * time.Second
	c := htClient(t, cfg)
	slowA := htLegs(htR(time.Second, 200, 0), htR(20*htMillisecond, 200, 0))

	var tripped []bool
	for i := 0; i < 2; i++ {
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "hot"}
		d := htNewDriver(t, c, &op, slowA)
		d.start = time.Duration(i+1) * time.Second
		d.run()
		if got := htDiag(t, &d.r).TerminalState(); got != hedging.AlternateWon {
			t.Fatalf("race %d ended %v, want AlternateWon", i, got)
		}
		tripped = append(tripped, d.r.TrippedBreaker())
	}
	if !slices.Equal(tripped, []bool{false, true}) {
		t.Fatalf("TrippedBreaker per race = %v, want [false true]", tripped)
	}
	if !c.HedgeWinTracker().Unhealthy(3*time.Second, "hot", "A") {
		t.Fatalf("tracker does not report (hot, A) unhealthy after the trip")
	}

	begin := func(at time.Duration, partition string) (hedging.Attempt, *hedging.Race) {
		var r hedging.Race
		op := &hedging.Operation{Kind: hedging.PointRead, Partition: partition}
		e := htBegin(c, &r, at, op)
		return e.At(0).Attempt, &r
	}
	a, r := begin(3*time.Second, "hot")
	if a.Endpoint.Region != "B" {
		t.Errorf("next read of the tripped partition went to %s, want B (regions[1])", a.Endpoint.Region)
	}
	if !r.Hedged() {
		t.Errorf("the rerouted read is not hedged")
	}
	// With A demoted the race's alternate is C, and the primary is B.
	e := htTimerFired(r, 3*time.Second+100*htMillisecond, hedging.TimerThreshold)
	if e.Len() != 1 || e.At(0).Attempt.Endpoint.Region != "C" {
		t.Errorf("alternate after the trip = %+v, want region C", e)
	}
	if a, _ := begin(3*time.Second, "cold"); a.Endpoint.Region != "A" {
		t.Errorf("another partition went to %s, want A (isolation)", a.Endpoint.Region)
	}
	// After the probe interval the primary is tried again (failback).
	if a, _ := begin(13*time.Second, "hot"); a.Endpoint.Region != "A" {
		t.Errorf("after the probe interval the read went to %s, want A", a.Endpoint.Region)
	}
}

// LocationEffects (§6.5 #10): a 503 on a leg marks (partition, endpoint) in
// the shared store, and the next operation routes around it.
func TestRaceCoreLocationEffects(t *testing.T) {
	cfg := htCfg(100*htMillisecond, "A", "B", "C")
	cfg.UnavailableFor = 5 * time.Second
	c := htClient(t, cfg)
	op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
	d := htNewDriver(t, c, &op, htLegs(htR(200*htMillisecond, 200, 0), htR(50*htMillisecond, 503, 0))).run()
	if got := htDiag(t, &d.r).TerminalState(); got != hedging.PrimaryWonAfterHedge {
		t.Fatalf("terminal state %v", got)
	}
	at := d.r.DoneAt()
	if !c.LocationStore().Unavailable(at, "p", hedging.Endpoint{Region: "B", Key: "ep-B"}) {
		t.Errorf("the alternate's 503 did not mark (p, B)")
	}
	var r hedging.Race
	op2 := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
	htBegin(c, &r, at, &op2)
	e := htTimerFired(&r, at+100*htMillisecond, hedging.TimerThreshold)
	if e.Len() != 1 || e.At(0).Attempt.Endpoint.Region != "C" {
		t.Errorf("alternate of the next read = %+v, want C (B demoted)", e)
	}
}

// The pre-threshold upgrade path (§6.5 #9, §7.2.1): a region-changing
// transient spawns the alternate at once; a non-changing one does not.
func TestRaceCoreUpgradePath(t *testing.T) {
	for _, tc := range []struct {
		st    hedging.Status
		spawn bool
	}{
		{htSt(503, 0), true}, {htSt(404, 1002), true}, {htSt(429, 3092), true},
		{htSt(429, 0), false}, {htSt(408, 0), false}, {htSt(410, 0), false}, {htSt(500, 0), false},
	} {
		t.Run(tc.st.String(), func(t *testing.T) {
			c := htClient(t, htCfg(time.Second, "A", "B"))
			op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
			var r hedging.Race
			e := htBegin(c, &r, 0, &op)
			e = htResponded(&r, 10*htMillisecond, e.At(0).Attempt, hedging.Result{Status: tc.st})
			spawned := false
			for i := 0; i < e.Len(); i++ {
				if a := e.At(i); a.Kind == hedging.ActSend && a.Leg == hedging.Alternate {
					spawned = true
				}
			}
			if spawned != tc.spawn || r.AlternateSpawned() != tc.spawn {
				t.Errorf("after a pre-threshold %v: spawned=%v, want %v", tc.st, spawned, tc.spawn)
			}
		})
	}
}

// Stale inputs are ignored: a response for an old Seq and timers after
// the race has ended return no effects (property also checked by htDriver).
func TestRaceCoreIgnoresStaleInputs(t *testing.T) {
	c := htClient(t, htCfg(100*htMillisecond, "A", "B"))
	op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
	var r hedging.Race
	e := htBegin(c, &r, 0, &op)
	first := e.At(0).Attempt
	stale := first
	stale.Seq += 100
	if got := htResponded(&r, 10*htMillisecond, stale, hedging.Result{Status: htSt(200, 0)}); got.Len() != 0 || r.Done() {
		t.Fatalf("a response with an unknown Seq was accepted")
	}
	htResponded(&r, 20*htMillisecond, first, hedging.Result{Status: htSt(200, 0)})
	if !r.Done() {
		t.Fatal("not done after the primary's 200")
	}
	for _, tk := range []hedging.TimerKind{hedging.TimerThreshold, hedging.TimerDeadline, hedging.TimerHarvest, hedging.TimerBackoffPrimary, hedging.TimerBackoffAlternate} {
		if got := htTimerFired(&r, time.Second, tk); got.Len() != 0 {
			t.Errorf("stale timer %v produced %d effects", tk, got.Len())
		}
	}
	if got := htResponded(&r, 30*htMillisecond, first, hedging.Result{Status: htSt(503, 0)}); got.Len() != 0 {
		t.Errorf("a duplicate response produced effects")
	}
	if res, err := r.Result(); err != nil || res.Status.Code != 200 {
		t.Errorf("outcome changed by stale input: %v, %v", res.Status, err)
	}
}

// Error.Status is documented as "the most recent transient status (zero
// when none arrived)". When the deadline fires while a leg is retrying after
// a transient response, that response has arrived and must be reported.
func TestRaceCoreErrorStatusIsLastTransientSeen(t *testing.T) {
	for _, tc := range []struct {
		name     string
		strategy hedging.AvailabilityStrategy
		first    hedging.Status
	}{
		{"non_hedged_503_failover_then_deadline", hedging.Disabled, htSt(503, 0)},
		{"hedged_pre_threshold_408_local_retry_then_deadline", hedging.AvailabilityStrategy{}, htSt(408, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := htCfg(time.Second, "A", "B")
			cfg.Retry.MaxAttempts = 3
			c := htClient(t, cfg)
			op := hedging.Operation{Kind: hedging.PointRead, Partition: "p", Strategy: tc.strategy, Timeout: 500 * htMillisecond}
			d := htNewDriver(t, c, &op, htSeq([]htResp{{lat: 100 * htMillisecond, res: hedging.Result{Status: tc.first}}, htR(time.Second, 200, 0)}, nil)).run()
			he := htHedgeErr(t, &d.r)
			if !errors.Is(he, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want a deadline", he)
			}
			if he.Status != tc.first {
				t.Errorf("Error.Status = %v, want %v (the transient that arrived before the deadline)", he.Status, tc.first)
			}
		})
	}
}

// §14.3 / §9.4: nothing is sent at or after the deadline. Begin only arms the
// threshold timer when threshold < Timeout and retry() refuses to retry at
// the deadline, but the upgrade path spawns the alternate even when the
// primary's region-changing transient lands exactly at the deadline.
func TestRaceCoreNoUpgradeSpawnAtDeadline(t *testing.T) {
	cfg := htCfg(200*htMillisecond, "A", "B")
	cfg.Retry.MaxAttempts = 3
	c := htClient(t, cfg)
	op := hedging.Operation{Kind: hedging.PointRead, Partition: "p", Timeout: 100 * htMillisecond}
	d := htNewDriver(t, c, &op, htLegs(htR(100*htMillisecond, 503, 0), htR(10*htMillisecond, 200, 0))).run()
	if d.r.AlternateSpawned() || d.perLeg[hedging.Alternate] != 0 {
		t.Errorf("alternate sent at the deadline instant (attempts %v)", d.perLeg)
	}
	if got := d.r.DoneAt() - d.start; got != 100*htMillisecond {
		t.Errorf("answered at +%v, want +100ms", got)
	}
}

// A Race reused after a race that spawned the alternate starts clean: the
// next race, answered by the primary before the threshold, reports one leg,
// one attempt and an alternate leg that never ran.
func TestRaceCoreReuseAfterHedgeStartsClean(t *testing.T) {
	c := htClient(t, hedging.Config{Regions: htRegions("A", "B", "C"), Strategy: htHedging(100 * htMillisecond)})
	op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
	var r hedging.Race
	ok := hedging.Result{Status: htSt(200, 0), RequestCharge: 1}
	now := time.Second
	e := htBegin(c, &r, now, &op)
	primary := e.At(0).Attempt
	e = htTimerFired(&r, now+100*htMillisecond, hedging.TimerThreshold)
	if e.Len() != 1 || e.At(0).Kind != hedging.ActSend {
		t.Fatalf("threshold timer: %d effects, want the alternate's send", e.Len())
	}
	htResponded(&r, now+120*htMillisecond, e.At(0).Attempt, ok)
	if w, _ := r.Winner(); !r.Done() || w != hedging.Alternate {
		t.Fatalf("first race: done %v winner %v, want the alternate's win", r.Done(), w)
	}
	htResponded(&r, now+150*htMillisecond, primary, ok) // the loser, late: ignored

	now = 2 * time.Second
	e = htBegin(c, &r, now, &op)
	htResponded(&r, now+5*htMillisecond, e.At(0).Attempt, ok)
	d, hedged := r.Diagnostics()
	if !r.Done() || !hedged || r.AlternateSpawned() || r.Legs() != 1 || r.Attempts() != 1 || r.TotalRequestCharge() != 1 {
		t.Fatalf("second race: done %v spawned %v legs %d attempts %d RU %v, want one leg, one attempt, 1 RU",
			r.Done(), r.AlternateSpawned(), r.Legs(), r.Attempts(), r.TotalRequestCharge())
	}
	if got := d.Leg(hedging.Alternate); got != (hedging.LegDiagnostics{}) {
		t.Errorf("second race's alternate leg diagnostics %+v, want zero", got)
	}
	if got := d.TerminalState(); got != hedging.PrimaryWonPreThreshold {
		t.Errorf("second race's terminal state %v, want PrimaryWonPreThreshold", got)
	}
}

// Status is the returned response's status (a final 4xx included) and zero
// for an error outcome, as Result's.
func TestRaceCoreStatus(t *testing.T) {
	c := htClient(t, hedging.Config{Regions: htRegions("A", "B"), Strategy: htHedging(100 * htMillisecond)})
	op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
	now := time.Second
	for _, res := range []hedging.Result{
		{Status: htSt(200, 0)},
		{Status: htSt(404, 0)},
		{Status: htSt(500, 0)}, // transient, not retried: an error outcome
	} {
		var r hedging.Race
		e := htBegin(c, &r, now, &op)
		htResponded(&r, now+5*htMillisecond, e.At(0).Attempt, res)
		got, err := r.Result()
		if !r.Done() || r.Status() != got.Status {
			t.Errorf("%v: done %v, Status() %v, Result().Status %v", res.Status, r.Done(), r.Status(), got.Status)
		}
		if want := res.Status; err != nil {
			want = hedging.Status{}
			if r.Status() != want {
				t.Errorf("%v: error outcome, Status() %v, want zero", res.Status, r.Status())
			}
		} else if r.Status() != want {
			t.Errorf("Status() %v, want %v", r.Status(), want)
		}
	}
}

// obsLog is a [hedging.ThresholdPolicy] that records the operations the
// race reports ended and hedges every operation at 100 ms.
type obsLog struct {
	ends []hedging.Observation
}

func (l *obsLog) Threshold(time.Duration, hedging.ThresholdQuery) (hedging.Threshold, bool) {
	return hedging.MustThreshold(100 * htMillisecond), true
}

func (l *obsLog) Observe(_ time.Duration, o hedging.Observation) {
	if o.Event == hedging.OperationEnded {
		l.ends = append(l.ends, o)
	}
}

func (l *obsLog) Name() string { return "observation-log" }

// §9.3 #2: the race tells the policy that the primary leg met the
// client's own throughput-control gate (a local 429 is no latency of the
// region) and how long it waited before its retry, and that the leg's
// final answer came 5 ms (the backoff) + 10 ms after it began.
func TestRaceReportsLocalThrottleToPolicy(t *testing.T) {
	cfg := htCfg(100*htMillisecond, "A", "B")
	cfg.Retry.MaxAttempts = 3
	pol := &obsLog{}
	cfg.Strategy = hedging.Hedging(hedging.NewPolicyStrategy(pol))
	c := htClient(t, cfg)
	op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
	local := htResp{lat: 0, res: hedging.Result{Status: htSt(429, 0), LocalThrottle: true}}
	htNewDriver(t, c, &op, htSeq([]htResp{local, htR(10*htMillisecond, 200, 0)}, []htResp{htR(10*htMillisecond, 200, 0)})).run()
	want := hedging.LegEnd{Region: "A", Outcome: hedging.LegAnswered, Elapsed: 15 * htMillisecond, LocalThrottle: true, RetryAfter: 5 * htMillisecond}
	if len(pol.ends) != 1 || pol.ends[0].Legs[hedging.Primary] != want || pol.ends[0].Legs[hedging.Alternate].Outcome != hedging.LegNotSent {
		t.Errorf("policy told %+v; want one ended operation whose primary leg is %+v and no alternate", pol.ends, want)
	}
}

// Errors are not latencies: a 503 of the primary is no answer (its leg,
// retried in its region, is cancelled when the failover alternate wins),
// and an alternate that answers only 503s failed.
func TestRaceClassifiesLegsForPolicy(t *testing.T) {
	cfg := htCfg(100*htMillisecond, "A", "B")
	cfg.Retry.MaxAttempts = 2
	pol := &obsLog{}
	cfg.Strategy = hedging.Hedging(hedging.NewPolicyStrategy(pol))
	c := htClient(t, cfg)
	op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
	// Primary: 503 at 2 ms, then its local retry answers at +50 ms; the
	// failover alternate answers 200 at 12 ms after it was sent.
	htNewDriver(t, c, &op, htSeq([]htResp{htR(2*htMillisecond, 503, 0), htR(50*htMillisecond, 200, 0)}, []htResp{htR(12*htMillisecond, 200, 0)})).run()
	// A second operation (partition q): the alternate answers 503 twice,
	// the primary answers at 150 ms.
	op2 := hedging.Operation{Kind: hedging.PointRead, Partition: "q"}
	htNewDriver(t, c, &op2, htSeq([]htResp{htR(150*htMillisecond, 200, 0)}, []htResp{htR(time.Millisecond, 503, 0), htR(time.Millisecond, 503, 0)})).run()
	if len(pol.ends) != 2 {
		t.Fatalf("%d operations reported, want 2", len(pol.ends))
	}
	a, b := pol.ends[0], pol.ends[1]
	if p := a.Legs[hedging.Primary]; p.Outcome != hedging.LegCancelled || a.Cause != hedging.Spawn503 || !a.Won || a.Winner != hedging.Alternate ||
		a.Legs[hedging.Alternate].Outcome != hedging.LegAnswered || a.Legs[hedging.Alternate].Elapsed != 12*htMillisecond {
		t.Errorf("503 primary: %+v; want the primary cancelled (its 503 no answer), the alternate answered in 12ms", a)
	}
	if alt := b.Legs[hedging.Alternate]; alt.Outcome != hedging.LegFailed || b.Legs[hedging.Primary].Outcome != hedging.LegAnswered ||
		b.Cause != hedging.SpawnThreshold || b.Latency != 150*htMillisecond {
		t.Errorf("503 alternate: %+v; want the alternate failed, the primary answered at 150ms", b)
	}
}

// A final error is final (it ends the race) but no successful answer: the
// policy's LegEnd says so in FinalError, from the race's own classification
// (§7.1, §7.2), for the leg that won and for the one that lost alike.
func TestRaceReportsFinalErrorToPolicy(t *testing.T) {
	for _, tc := range []struct {
		code, sub int
		want      bool
	}{{200, 0, false}, {304, 0, false}, {404, 0, true}, {409, 0, true}, {412, 0, true}, {429, 3200, true}} {
		cfg := htCfg(100*htMillisecond, "A", "B")
		pol := &obsLog{}
		cfg.Strategy = hedging.Hedging(hedging.NewPolicyStrategy(pol))
		c := htClient(t, cfg)
		// The primary answers tc's status at 5 ms (before the threshold);
		// a second operation's primary is slow (300 ms) and its hedge,
		// sent at 100 ms, answers tc's status 10 ms later.
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
		htNewDriver(t, c, &op, htSeq([]htResp{htR(5*htMillisecond, tc.code, tc.sub)}, nil)).run()
		op2 := hedging.Operation{Kind: hedging.PointRead, Partition: "q"}
		htNewDriver(t, c, &op2, htSeq([]htResp{htR(300*htMillisecond, 200, 0)}, []htResp{htR(10*htMillisecond, tc.code, tc.sub)})).run()
		if len(pol.ends) != 2 {
			t.Fatalf("%d/%d: %d operations reported, want 2", tc.code, tc.sub, len(pol.ends))
		}
		p := pol.ends[0].Legs[hedging.Primary]
		if p.Outcome != hedging.LegAnswered || p.FinalError != tc.want || p.Elapsed != 5*htMillisecond {
			t.Errorf("%d/%d primary: %+v; want answered at 5ms, FinalError %v", tc.code, tc.sub, p, tc.want)
		}
		a := pol.ends[1].Legs[hedging.Alternate]
		if a.Outcome != hedging.LegAnswered || a.FinalError != tc.want || pol.ends[1].Winner != hedging.Alternate {
			t.Errorf("%d/%d alternate: %+v (winner %v); want it answered and won, FinalError %v", tc.code, tc.sub, a, pol.ends[1].Winner, tc.want)
		}
		if pol.ends[1].Legs[hedging.Primary].FinalError {
			t.Errorf("%d/%d: the cancelled primary is flagged a final error", tc.code, tc.sub)
		}
	}
}
