package hedging

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"time"
)

// Leg names one side of a race.
type Leg uint8

// The two legs of a race (spec §6.1: at most two concurrent attempts).
const (
	Primary   Leg = 0
	Alternate Leg = 1
)

// WinsTie reports whether l's result is fed to the race before m's when
// both are available at the same instant: the one tie-break for
// simultaneous answers, obeyed by every driver ([Client.Do] and the simnet
// event loop). The primary's result comes first, as the spec's biased
// select polls the primary arm before the alternate's (§6.4), so of two
// final answers at one instant the primary's is returned: it is what the
// non-hedged path would have returned, it spares a spurious hedge win in the
// breaker (§9.5) and the caller is charged the primary's RU (§17 Q3).
// Results of one leg never tie (at most one attempt per leg is in flight).
func (l Leg) WinsTie(m Leg) bool { return l == Primary && m == Alternate }

// String returns "primary" or "alternate".
func (l Leg) String() string {
	if l == Alternate {
		return "alternate"
	}
	return "primary"
}

// Attempt is one transport attempt the driver must perform.
type Attempt struct {
	Leg Leg
	// Seq identifies the attempt within its race; pass the Attempt back to
	// [Race.Responded] unchanged.
	Seq uint32
	// Endpoint is where to send it.
	Endpoint Endpoint
	// Excluded is the leg's ExcludeRegions set: the user's for the primary,
	// user ∪ (all \ {alternate}) for the alternate (§6.3). Read-only.
	Excluded []Region
	// Hedging is the ExecutionContext::Hedging marker, set on the alternate's
	// attempts only (§10.2).
	Hedging bool
	// HubRegionProcessingOnly asks the transport to send
	// x-ms-cosmos-hub-region-processing-only: True (§9.6).
	HubRegionProcessingOnly bool
	// SessionLSN is the session token (highest LSN seen for the partition)
	// to send with the request (§9.2); 0 when none.
	SessionLSN int64
}

// Result is what one attempt returned.
type Result struct {
	Status        Status
	RequestCharge float64       // RU charged for this attempt (x-ms-request-charge)
	SessionLSN    int64         // session LSN returned (x-ms-session-token); 0 = none
	RetryAfter    time.Duration // server-suggested backoff for 429s; 0 = none
	// LocalThrottle marks a 429 produced by the client's local
	// throughput-control gate, before the network (§9.3 #2): the race then
	// does not fan out.
	LocalThrottle bool
	// Err is a transport error (no response); such a result is transient.
	Err error
	// Body is the response body, for transports that have one (nil
	// otherwise). The race never reads it: finality is decided from the
	// status alone (§7.2). [Client.Do] hands the winner's body to the
	// caller unread and closes every other body it receives.
	Body io.ReadCloser
	// Page is what the response says as a page of a feed (its
	// continuation, serving region and the replica's applied LSN); nil when
	// the transport reports none, as for a point read, which so pays one
	// pointer for it. Only the winner's reaches the caller, as its body
	// does (spec §16 Phase 2).
	Page *PageInfo
}

// Final reports whether the result ends a race: no transport error and
// IsFinal(Status).
func (r Result) Final() bool { return r.Err == nil && IsFinal(r.Status) }

// ActionKind is what an [Action] asks the driver to do.
type ActionKind uint8

// Action kinds.
const (
	// ActSend: perform Action.Attempt now and report it with Race.Responded.
	ActSend ActionKind = iota + 1
	// ActCancel: cancel the in-flight attempt of Action.Leg (context cancel in
	// real time; dequeue or let finish in a simulation, §14.2). Its result,
	// if it still arrives, decides nothing (only its RU is counted).
	ActCancel
	// ActTimer: call Race.TimerFired(e, Action.At, Action.Timer) at time
	// Action.At. Timers are never cancelled explicitly: a stale timer is
	// ignored by the race, so drivers may cancel lazily.
	ActTimer
)

// TimerKind names a race timer.
type TimerKind uint8

// Race timers.
const (
	TimerThreshold        TimerKind = iota + 1 // the hedging threshold (§6.4)
	TimerDeadline                              // the end-to-end deadline (§9.4)
	TimerHarvest                               // end of the harvest window (§6.5 #7)
	TimerBackoffPrimary                        // end of the primary leg's retry backoff
	TimerBackoffAlternate                      // end of the alternate leg's retry backoff
)

// CancelReason is why an attempt is cancelled: the reason field of the
// cosmos.hedge.canceled event and label of cosmos.hedge.canceled_total
// (spec §10.4).
type CancelReason uint8

// Cancel reasons (spec §10.4).
const (
	CancelWinnerFound CancelReason = iota + 1 // "winner_found": the other leg won
	CancelDeadline                            // "deadline": the end-to-end deadline passed
	CancelAppCanceled                         // "app_canceled": the caller cancelled
)

var cancelReasonNames = [...]string{"", "winner_found", "deadline", "app_canceled"}

// String returns the spec's name: "winner_found", "deadline" or
// "app_canceled".
func (r CancelReason) String() string {
	if int(r) < len(cancelReasonNames) {
		return cancelReasonNames[r]
	}
	return "CancelReason(?)"
}

// SpawnCause is why the alternate was sent (spec §6.5 #9: the threshold
// timer, or the upgrade of a region-changing retry of the primary's first
// result, §7.2.1).
type SpawnCause uint8

// Spawn causes. Every cause but SpawnThreshold is a failover.
const (
	SpawnThreshold       SpawnCause = iota + 1 // "threshold": no final response by the threshold
	Spawn503                                   // "503": the primary answered 503
	SpawnSessionNotAvail                       // "404/1002": ReadSessionNotAvailable
	SpawnThrottle3092                          // "429/3092": SystemResourceUnavailable
	SpawnTransportError                        // "transport_error": the primary got no response
	// SpawnRegionalFailure ("regional_failure"): a metadata read's primary
	// answered 500, 410/1022 or 403/1008 (spec §16 Phase 2, as .NET's
	// MetadataHedgingStrategy).
	SpawnRegionalFailure
)

var spawnCauseNames = [...]string{"", "threshold", "503", "404/1002", "429/3092", "transport_error", "regional_failure"}

// String returns the cause as logged in the cause field of
// cosmos.hedge.alternate_spawned: "threshold", "503", "404/1002",
// "429/3092", "transport_error" or "regional_failure" ("" for the zero
// value: not spawned).
func (c SpawnCause) String() string {
	if int(c) < len(spawnCauseNames) {
		return spawnCauseNames[c]
	}
	return "SpawnCause(?)"
}

// Failover reports whether the alternate was sent on a region-changing
// result of the primary rather than on the threshold.
func (c SpawnCause) Failover() bool { return c > SpawnThreshold }

// spawnCauseOf maps a primary result that upgrades to a hedge to its cause.
func spawnCauseOf(res Result) SpawnCause {
	switch {
	case res.Err != nil:
		return SpawnTransportError
	case res.Status.Code == 503:
		return Spawn503
	case res.Status.Code == 404:
		return SpawnSessionNotAvail
	case res.Status.Code == 429:
		return SpawnThrottle3092
	}
	return SpawnRegionalFailure
}

// Action is one effect the driver must perform.
type Action struct {
	Kind    ActionKind
	Leg     Leg           // ActSend, ActCancel
	Reason  CancelReason  // ActCancel
	Timer   TimerKind     // ActTimer
	At      time.Duration // ActTimer: when to fire; ActSend: now
	Attempt Attempt       // ActSend
}

// Effects is the list of actions returned by one call into the race core,
// to be performed in order. It is a small value (no allocation).
type Effects struct {
	n int
	a [4]Action
}

// Len returns the number of actions.
func (e *Effects) Len() int { return e.n }

// At returns action i (0 <= i < Len()), in place: the pointer is into e
// (an Action is 96 bytes; drivers read it without a copy).
func (e *Effects) At(i int) *Action { return &e.a[i] }

// next appends a zero action and returns it to be filled in place.
func (e *Effects) next() *Action {
	a := &e.a[e.n]
	e.n++
	*a = Action{}
	return a
}

// timer appends the ActTimer action for timer t at at.
func (e *Effects) timer(t TimerKind, at time.Duration) {
	a := e.next()
	a.Kind, a.Timer, a.At = ActTimer, t, at
}

type racePhase uint8

const (
	phaseRunning racePhase = iota
	phaseHarvesting
	phaseDone
)

type legState struct {
	// Flags and counters first, packed: what every response reads.
	started    bool
	inFlight   bool
	backingOff bool
	done       bool // the leg will make no more attempts
	completed  bool // the leg produced a result before the race ended
	hub        bool // per-state hub-region latch (§9.6.1)
	cancelled  bool // the race cancelled the in-flight attempt seq when it ended
	// throttled: an attempt was refused by the client's local
	// throughput-control gate; throttleWait is the longest retry-after it
	// gave (for the policy's [LegEnd]).
	throttled bool
	seq       uint32
	// attempts and sessionRetries count this leg's attempts and its
	// session (404/1002) retries: bounded by Retry.MaxAttempts.
	attempts       int32
	sessionRetries int32
	charge         float64
	startAt        time.Duration
	sentAt         time.Duration
	elapsed        time.Duration
	throttleWait   time.Duration
	backoffAt      time.Duration // when the retry backoff ends
	tried          uint64        // bit i: candidates[i] was tried
	endpoint       Endpoint
	candidates     []Endpoint
	excluded       []Region
	last           Result
}

// Race is one logical operation's hedge race (spec §6.4, execute_hedged),
// written once as a deterministic state machine: time and results are
// inputs, and every call yields the [Effects] the driver must perform.
// It reads no clock, starts no goroutine and performs no I/O; a driver
// serialises calls into it. A Race is a value: a driver may keep many in a
// slice and reuse them; [Client.Begin] resets it. The happy path (primary
// final before the threshold) allocates nothing (§6.5 #3).
//
// Use: c.Begin(&e, &r, now, op); perform e; on every attempt result call
// r.Responded(&e, ...), on every timer r.TimerFired(&e, ...), on
// application cancellation e = r.Cancel(...); perform e each time; stop
// when r.Done().
//
// When hedging is not active for the operation (strategy Disabled, a write,
// fewer than two distinct applicable regions, ...) the same Race runs the
// plain path: one leg with normal cross-region failover retries and no hedge
// diagnostics.
//
// A copy of a Race that has run shares the room its routing reorders
// regions in with the original: run one of the two, not both.
type Race struct {
	// What a race on the happy path touches is contiguous: raceState,
	// diag, the primary's leg; the alternate's leg is last.
	raceState
	// diag is the race's hedge diagnostics; Begin clears only its
	// decisions (finish writes the rest when the race ends, and diag is
	// read only once the race is done).
	diag HedgeDiagnostics
	// legs are the two legs' states. Begin resets the primary's, and the
	// alternate's only when altUsed: a race that spawns no alternate (the
	// common case) leaves it as Begin found it, all zero.
	legs    [2]legState
	altUsed bool
	// diagAltZero: diag's alternate leg holds what finish writes for an
	// alternate leg that was never used (all zero), so finish need not
	// write it again while altUsed stays false.
	diagAltZero bool
	// cleared: a driver that keeps the value between races (Client.Do's
	// pooled engine) has already cleared raceState and the legs Begin
	// would clear, so Begin does not clear them again.
	cleared bool
	// scratch backs the reordered regions when routing demotes one (a
	// tripped partition, a 503 mark): off the happy path, so out of line,
	// allocated on the first reordering and kept for every later race run
	// in the same value. It is written before it is read, so Begin leaves
	// it as it is.
	scratch *raceScratch
}

// raceScratch is a Race's room for its reordered regions.
type raceScratch [7]Endpoint

// raceState is the part of a Race that Begin resets.
type raceState struct {
	c                          *Client
	ctx                        context.Context // slog events' context
	op                         *Operation
	hedged                     bool
	strategy                   HedgingStrategy
	threshold                  Threshold
	start                      time.Duration
	deadline                   time.Duration
	hasDeadline                bool
	regions                    []Endpoint
	phase                      racePhase
	spawned                    bool
	noFanOut                   bool
	hubEligible                bool
	hubLatch                   *atomic.Bool
	observedSessionUnavailable bool
	seq                        uint32
	last                       Leg           // leg of the most recent transient result
	lastStatus                 Status        // the most recent transient status (zero when none)
	transients                 uint32        // how many transient results noteTransient recorded
	pending                    TerminalState // terminal state decided when the deadline fired
	harvestAt                  time.Duration // end of the harvest window
	cause                      error         // deadline or cancellation cause
	winner                     Leg
	hasWinner                  bool
	doneAt                     time.Duration
	totalCharge                float64
	err                        error
	tripped                    bool
	declined                   bool // the ThresholdPolicy chose not to hedge this operation
	legHeld                    bool // the alternate holds a slot of op.Legs
	logging                    bool // the client has a logger
}

// Begin starts the race for op at now into r (which it resets) and writes
// into e (whose previous actions it discards) the effects to perform: the
// primary's attempt at once, the threshold timer when hedging is active and
// the threshold falls before the deadline (§14.3), and the deadline timer
// when op has a Timeout. Strategy resolution (§11.3.1), eligibility (§5.1),
// region ordering (ExcludeRegions, location marks, tripped partitions) and
// the distinctness check (§6.4.1) happen here, once. op must stay valid and
// unmodified until the race is done, except that the race may set
// op.HubRegionProcessingOnly. A driver keeps one Effects and reuses it for
// every call into the race (no allocation, no copy).
func (c *Client) Begin(e *Effects, r *Race, now time.Duration, op *Operation) {
	e.n = 0
	c.begin(context.Background(), e, r, now, op, 0)
}

// begin is Begin with the context the race's slog events are logged with
// and an extra absolute deadline (on the same clock as now; 0 = none), for
// drivers whose caller carries its own deadline, such as Client.Do's
// context: the race's deadline is the earlier of it and now+op.Timeout,
// shared by both legs (§9.4), and a threshold at or after it arms no
// alternate (§14.3). It writes the effects into e.
func (c *Client) begin(ctx context.Context, e *Effects, r *Race, now time.Duration, op *Operation, deadline time.Duration) {
	// Attempt sequence numbers keep growing across reuse of r, so a result
	// of an earlier race on the same value is recognised as stale.
	seq := r.seq
	// Clearing in place and then setting fields spares the copy of a
	// composite literal built on the stack.
	if !r.cleared {
		r.raceState = raceState{}
		r.legs[Primary] = legState{}
		if r.altUsed {
			r.legs[Alternate] = legState{}
		}
	}
	r.cleared, r.altUsed = false, false
	r.c, r.op, r.start, r.seq, r.ctx = c, op, now, seq, ctx
	r.logging = c.logging
	r.diag.diagDecisions = diagDecisions{}
	if op.Timeout > 0 {
		r.deadline, r.hasDeadline = now+op.Timeout, true
	}
	if deadline > 0 && (!r.hasDeadline || deadline < r.deadline) {
		r.deadline, r.hasDeadline = deadline, true
	}
	applicable := applicableRegions(c.regions, op.ExcludeRegions)
	r.regions = c.orderRegions(r, now, op.Partition, applicable, true)
	strategy, ok := c.eligible(op, r.regions)
	// orderRegions returns applicable itself when nothing moved (the
	// common case): the same first element, so no value comparison.
	if ok && len(applicable) > 0 && &r.regions[0] != &applicable[0] && r.regions[0] != applicable[0] &&
		!c.admitRedirect(now, op, strategy, applicable[0]) {
		r.regions = c.orderRegions(r, now, op.Partition, applicable, false)
	}
	r.hubEligible = !op.Kind.IsMetadata() && !c.multiMaster
	p := &r.legs[Primary]
	p.started, p.startAt, p.excluded = true, now, op.ExcludeRegions
	switch {
	case c.writesToHub(op.Kind):
		p.candidates = c.write[:]
	case len(r.regions) == 0:
		r.finishError(e, now, Status{}, ErrNoRegion)
		return
	case ok:
		p.candidates = r.regions[:1] // inside a race both legs retry locally (§8.4)
	default:
		p.candidates = r.regions
	}
	p.endpoint = p.candidates[0]
	p.tried = 1
	if ok {
		r.hedged = true
		r.strategy = strategy
		r.threshold, r.declined = strategy.thresholdOp(now, ThresholdQuery{Primary: r.regions[0].Region, Alternate: r.regions[1].Region,
			Kind: op.Kind, Remaining: r.remaining(now)})
		r.diag.threshold = r.threshold
		r.diag.primaryRegion = r.regions[0].Region
		if r.logEnabled(slog.LevelDebug) {
			r.log(slog.LevelDebug, "cosmos.hedge.enabled_for_operation",
				slog.Int64("threshold_ms", r.threshold.Get().Milliseconds()), slog.Int("region_count", len(r.regions)))
		}
	}
	r.send(e, now, Primary)
	if r.hedged && !r.declined && (!r.hasDeadline || now+r.threshold.Get() < r.deadline) {
		e.timer(TimerThreshold, now+r.threshold.Get())
	}
	if r.hasDeadline {
		e.timer(TimerDeadline, r.deadline)
	}
}

// eligible resolves op's strategy and reports whether op is hedged over
// the ordered applicable regions (spec §4.3, §5.1, §6.4.1): the decision
// [Client.Begin] makes before its first attempt.
func (c *Client) eligible(op *Operation, regions []Endpoint) (HedgingStrategy, bool) {
	strategy, resolved := c.defStrategy, c.defResolved
	if op.Strategy.isSet() || op.HedgingEnabled != SwitchUnset {
		layers := c.layers
		layers.Operation = op.HedgingEnabled
		strategy, resolved = resolveStrategy(layers.effective(), op.Strategy, c.cfg.Strategy, c.cfg.RequestTimeout)
	}
	ok, _ := shouldHedge(eligibility{
		StrategyResolved:  resolved,
		PreferredRegions:  len(c.regions),
		ApplicableRegions: len(regions),
		Kind:              op.Kind,
		Allowed:           c.phase,
		Affinity:          op.Continuation.Affinity,
	})
	if ok && !distinct(regions[0], regions[1]) {
		ok = false // replica aliasing: no distinct alternate (§6.4.1)
	}
	if ok && op.Kind.IsMetadata() {
		// The strategy decided that the read is hedged; its threshold is
		// the fixed metadata one (spec §16 Phase 2; Rust
		// evaluate_hedge_eligibility overrides only the threshold).
		strategy = NewHedgingStrategy(Threshold{MetadataThreshold})
	}
	return strategy, ok
}

// HedgePlan is what the race would decide for an operation before its
// first attempt: whether it is hedged, between which regions, and when.
type HedgePlan struct {
	// Hedged: op is eligible (spec §5.1) and has a distinct alternate
	// (§6.4.1); Declined: its ThresholdPolicy declined to hedge it, so no
	// threshold applies.
	Hedged, Declined bool
	// Primary and Alternate are the regions of the first two applicable
	// endpoints in race order (§6.2, §6.3, unavailable or breaker-demoted
	// ones last); set only when Hedged.
	Primary, Alternate Region
	// Threshold is the threshold the race would arm (§4.1, §17 Q11: the
	// strategy's policy at now, or its fallback); zero unless Hedged.
	Threshold Threshold
}

// PlanHedge returns the [HedgePlan] of op at now: the eligibility,
// region order and threshold rule [Client.Begin] applies, for a hedge
// unit above the race that hedges by the same rule (a whole feed
// operation, spec §17 Q9). It sends nothing and changes no state but
// the strategy's gate's, which hears of the operation as from Begin
// ([HedgeGate.OperationStarted]: a budget earns its tokens); the deadline
// a policy sees is op.Timeout. A write on a single-master account
// or an operation with no applicable region is not Hedged.
func (c *Client) PlanHedge(now time.Duration, op *Operation) HedgePlan {
	var p HedgePlan
	if c.writesToHub(op.Kind) {
		return p
	}
	var r Race
	regions := c.orderRegions(&r, now, op.Partition, applicableRegions(c.regions, op.ExcludeRegions), true)
	if len(regions) == 0 {
		return p
	}
	strategy, ok := c.eligible(op, regions)
	if !ok {
		return p
	}
	p.Hedged, p.Primary, p.Alternate = true, regions[0].Region, regions[1].Region
	p.Threshold, p.Declined = strategy.thresholdOp(now, ThresholdQuery{Primary: p.Primary, Alternate: p.Alternate, Kind: op.Kind,
		Remaining: max(op.Timeout, 0)})
	return p
}

// writesToHub reports whether an operation of kind sends its primary
// attempt to the single write region rather than to the first applicable
// read region: a write on a single-master account (never hedged, spec §13).
func (c *Client) writesToHub(kind OperationKind) bool {
	return kind.IsWrite() && c.write[0].Region != ""
}

// PrimaryEndpoint returns the endpoint the primary attempt of an
// operation of kind with ExcludeRegions excluded goes to while no region
// is marked unavailable and no partition breaker has tripped (the steady
// state a capacity estimate needs): the write region for a write on a
// single-master account, otherwise the first preferred region not in
// excluded (spec §6.2, §6.3: regions[0], normal routing). ok is false when every region is excluded
// (the operation fails with [ErrNoRegion]). It is the routing [Client.Begin]
// uses, without the unavailability marks.
func (c *Client) PrimaryEndpoint(kind OperationKind, excluded []Region) (e Endpoint, ok bool) {
	if c.writesToHub(kind) {
		return c.write[0], true
	}
	regions := applicableRegions(c.regions, excluded)
	if len(regions) == 0 {
		return Endpoint{}, false
	}
	return regions[0], true
}

// orderRegions returns the applicable regions with every endpoint that is
// marked unavailable for the partition, or (when breaker) whose partition
// breaker tripped on the consecutive-hedge-win signal (§9.5), moved to the
// end (in order). It copies only when something has to move.
func (c *Client) orderRegions(r *Race, now time.Duration, partition string, regions []Endpoint, breaker bool) []Endpoint {
	var demoted uint64
	if breaker && c.hot.ntripped.Load() != 0 {
		demoted = c.tracker.unhealthyMask(now, partition, regions)
	}
	if c.hot.nmarks.Load() > 0 {
		for i, e := range regions {
			if i < 64 && c.store.Unavailable(now, partition, e) {
				demoted |= 1 << i
			}
		}
	}
	if demoted == 0 {
		return regions
	}
	var out []Endpoint
	if len(regions) <= len(raceScratch{}) {
		if r.scratch == nil {
			r.scratch = new(raceScratch) // once per Race value, on its first reordering
		}
		out = r.scratch[:0:len(r.scratch)]
	} else {
		out = make([]Endpoint, 0, len(regions))
	}
	for i, e := range regions {
		if i >= 64 || demoted&(1<<i) == 0 {
			out = append(out, e)
		}
	}
	for i, e := range regions {
		if i < 64 && demoted&(1<<i) != 0 {
			out = append(out, e)
		}
	}
	return out
}

// admitRedirect reports whether a hedged operation whose primary the
// partition breaker demoted (§9.5) may start on another region: yes when
// primary is demoted by a 503 mark (availability, not load) or the
// strategy has no gate, otherwise the gate's answer, which charged it
// ([HedgeGate.Admit] with Redirect set).
func (c *Client) admitRedirect(now time.Duration, op *Operation, s HedgingStrategy, primary Endpoint) bool {
	if s.Gate == nil || c.store.Unavailable(now, op.Partition, primary) {
		return true
	}
	return s.Gate.Admit(now, Admission{Primary: primary.Region, Kind: op.Kind, Redirect: true})
}

func (r *Race) hubHeader(l Leg) bool {
	if r.legs[l].hub || r.op.HubRegionProcessingOnly {
		return true
	}
	return r.hubLatch != nil && r.hubLatch.Load()
}

func (r *Race) send(e *Effects, now time.Duration, l Leg) {
	lg := &r.legs[l]
	r.seq++
	lg.seq = r.seq
	lg.inFlight = true
	lg.attempts++
	lg.sentAt = now
	a := e.next()
	a.Kind, a.Leg, a.At = ActSend, l, now
	at := &a.Attempt
	at.Leg, at.Seq, at.Endpoint, at.Excluded = l, r.seq, lg.endpoint, lg.excluded
	at.Hedging = l == Alternate
	at.HubRegionProcessingOnly = r.hubHeader(l)
	if r.c.hot.any.Load() { // the store's own check, on the client's first line
		at.SessionLSN = r.c.sessions.Get(r.op.Partition)
	}
}

// spawnAlternate is the single body behind both entry points of §6.5 #9:
// the threshold timer and the upgrade of a region-changing retry.
func (r *Race) spawnAlternate(e *Effects, now time.Duration, cause SpawnCause) {
	r.spawned = true
	r.altUsed = true
	r.diag.spawnCause = cause
	alt := &r.legs[Alternate]
	alt.started, alt.startAt = true, now
	alt.candidates = r.regions[1:2]
	alt.endpoint = r.regions[1]
	alt.tried = 1
	alt.excluded = alternateExcludeRegions(r.op.ExcludeRegions, r.c.regions, alt.endpoint.Region)
	if r.hubEligible {
		r.hubLatch = new(atomic.Bool)
		r.hubLatch.Store(r.legs[Primary].hub || r.op.HubRegionProcessingOnly)
	}
	r.observe(now, Observation{Event: AlternateSent, Cause: cause})
	if r.logEnabled(slog.LevelDebug) {
		r.log(slog.LevelDebug, "cosmos.hedge.alternate_spawned",
			slog.String("target_region", string(alt.endpoint.Region)), slog.Int64("elapsed_ms", (now-r.start).Milliseconds()),
			slog.String("cause", cause.String()))
	}
	r.send(e, now, Alternate)
}

// TimerFired reports that timer t, armed by an earlier ActTimer, fired at
// now, and writes the effects to perform into e (whose previous actions it
// discards), as [Client.Begin]. Stale timers (the race moved on) are
// ignored.
func (r *Race) TimerFired(e *Effects, now time.Duration, t TimerKind) {
	e.n = 0
	switch t {
	// Each timer is checked against the time it was armed for, so a stale
	// timer (of this race, or of an earlier race on the same value) is
	// ignored.
	case TimerThreshold:
		if r.phase == phaseRunning && r.hedged && !r.spawned && !r.noFanOut && now >= r.start+r.threshold.Get() &&
			(!r.hasDeadline || now < r.deadline) && r.acquireLeg() {
			if r.admitHedge(now) {
				r.spawnAlternate(e, now, SpawnThreshold)
			} else {
				r.releaseLeg()
			}
		}
	case TimerDeadline:
		if r.phase == phaseRunning && r.hasDeadline && now >= r.deadline {
			r.deadlineFired(e, now, context.DeadlineExceeded)
		}
	case TimerHarvest:
		if r.phase == phaseHarvesting && now >= r.harvestAt {
			r.endHarvest(e, now)
		}
	case TimerBackoffPrimary, TimerBackoffAlternate:
		l := Primary
		if t == TimerBackoffAlternate {
			l = Alternate
		}
		// Nothing is sent at or after the deadline (§9.4): the deadline
		// timer ends the race.
		if lg := &r.legs[l]; r.phase == phaseRunning && lg.backingOff && now >= lg.backoffAt &&
			(!r.hasDeadline || now < r.deadline) {
			lg.backingOff = false
			r.send(e, now, l)
		}
	}
}

// Cancel reports application cancellation at now (a cancelled context);
// cause is returned by errors.Is on the outcome (context.Canceled or
// context.DeadlineExceeded). It behaves like the deadline firing (§6.5 #7).
func (r *Race) Cancel(now time.Duration, cause error) (e Effects) {
	if r.phase == phaseRunning {
		r.deadlineFired(&e, now, cause)
	}
	return
}

// Responded reports the result res of attempt a (as given in its ActSend)
// at now, and writes the effects to perform into e (whose previous actions
// it discards), as [Client.Begin]; a and res are read, not retained.
// Results of stale attempts (cancelled, or of a finished race) are
// ignored, except that the RU of an attempt the race cancelled when it
// ended is added to the total RU ([OperationEvent.TotalRequestCharge],
// [HedgeDiagnostics.RequestChargeTotal]).
func (r *Race) Responded(e *Effects, now time.Duration, a *Attempt, res *Result) {
	e.n = 0
	lg := &r.legs[a.Leg]
	if r.phase == phaseDone && lg.cancelled && a.Seq == lg.seq {
		r.lateCharge(a.Leg, res.RequestCharge)
		return
	}
	if r.phase == phaseDone || !lg.inFlight || a.Seq != lg.seq {
		return
	}
	lg.inFlight = false
	lg.last = *res
	lg.elapsed = now - lg.startAt
	lg.charge += res.RequestCharge
	r.totalCharge += res.RequestCharge
	c := r.c
	if res.Err == nil {
		if res.Status.Code >= 403 || c.hot.nruns.Load() != 0 { // observe's own check, on the client's first line
			c.store.observe(now, r.op.Partition, lg.endpoint, res.Status) // §6.5 #10
		}
		c.sessions.merge(r.op.Partition, res.SessionLSN) // §9.2
	}
	if res.LocalThrottle {
		lg.throttled, lg.throttleWait = true, max(lg.throttleWait, r.throttleDelay(*res))
	}
	if r.phase == phaseHarvesting {
		lg.done, lg.completed = true, true
		r.noteTransient(a.Leg, *res)
		if !r.legs[Primary].inFlight && !r.legs[Alternate].inFlight {
			r.endHarvest(e, now)
		}
		return
	}
	final := finalFor(r.op.Kind, res)
	if r.hedged && a.Leg == Alternate && r.op.Kind.IsMetadata() && (!final || finalError(res.Status)) {
		r.discardAlternate(e, now)
		return
	}
	if final {
		r.legFinal(e, now, a.Leg)
		return
	}
	r.noteTransient(a.Leg, *res)
	if res.Err == nil && res.Status.Code == 404 && res.Status.SubStatus == SubStatusReadSessionNotAvailable &&
		r.hubEligible && lg.sessionRetries == 0 && !lg.hub {
		lg.hub = true // §9.6.1 four conditions
		if r.hubLatch != nil {
			r.hubLatch.Store(true)
		}
		r.observedSessionUnavailable = true
	}
	if res.LocalThrottle && a.Leg == Primary && !r.spawned {
		r.noFanOut = true // §9.3 #2: the alternate would hit the same gate
	}
	// Upgrade path (§6.5 #9, §7.2.1): a result the non-hedged path would
	// answer with a region-changing retry — a spawn-eligible status, or a
	// transport error (no response at all) — sends the alternate now.
	if r.hedged && a.Leg == Primary && !r.spawned && !r.noFanOut && (res.Err != nil || canSpawnHedge(r.op.Kind, res.Status)) &&
		(!r.hasDeadline || now < r.deadline) {
		if r.acquireLeg() {
			r.spawnAlternate(e, now, spawnCauseOf(*res))
		} else {
			// Refused by the leg gate: fall back to the plain path's
			// sequential failover (the Rust driver's budget refusal), and
			// send no alternate later.
			r.noFanOut = true
			lg.candidates = r.regions
		}
	}
	if delay, ok := r.retry(now, a.Leg, *res); ok {
		if delay > 0 {
			lg.backingOff, lg.backoffAt = true, now+delay
			timer := TimerBackoffPrimary
			if a.Leg == Alternate {
				timer = TimerBackoffAlternate
			}
			e.timer(timer, now+delay)
		} else {
			r.send(e, now, a.Leg)
		}
		return
	}
	r.legTransient(e, now, a.Leg, *res)
}

// retry decides whether leg l retries after the transient res, moving the
// leg's endpoint when the trigger is region-changing and the leg has an
// untried candidate. A pinned leg (one candidate) always retries locally: it
// never leaves its ExcludeRegions (§8.4). It returns the backoff before the
// retry.
func (r *Race) retry(now time.Duration, l Leg, res Result) (time.Duration, bool) {
	lg := &r.legs[l]
	if int(lg.attempts) >= r.c.cfg.Retry.MaxAttempts || (r.hasDeadline && now >= r.deadline) {
		return 0, false
	}
	var regionChanging bool
	var delay time.Duration
	st := res.Status
	switch {
	case st.Code == 429 && res.Err == nil:
		regionChanging = st.SubStatus == SubStatusSystemResourceUnavailable && !res.LocalThrottle
		delay = r.throttleDelay(res)
		// A wait beyond the cap, or one that cannot end before the
		// deadline (nothing is sent at or after it, §9.4), is not
		// honoured: the leg ends on this 429 now.
		if delay > r.c.cfg.Retry.MaxRetryAfter || (r.hasDeadline && now+delay >= r.deadline) {
			return 0, false
		}
	case res.Err != nil || canSpawnHedge(r.op.Kind, st):
		regionChanging = true // 503, 404/1002, a metadata read's regional failure
		if res.Err == nil && st.Code == 404 {
			lg.sessionRetries++
		}
	case st.Code == 410, st.Code == 408:
		// local retry (address refresh / timeout) in the same region
	default:
		return 0, false // 500 and other transients are not retried
	}
	if regionChanging {
		r.moveEndpoint(now, lg)
	}
	return delay, true
}

// throttleDelay is how long a leg waits after the 429 res before it
// retries: the server's retry-after or the client's throttle backoff,
// whichever is longer.
func (r *Race) throttleDelay(res Result) time.Duration {
	return max(res.RetryAfter, r.c.cfg.Retry.ThrottleBackoff)
}

// moveEndpoint switches lg to its first untried candidate, preferring ones
// not marked unavailable; with none left it stays put (local retry).
func (r *Race) moveEndpoint(now time.Duration, lg *legState) {
	next := -1
	for i := range lg.candidates {
		if i < 64 && lg.tried&(1<<i) == 0 {
			if !r.c.store.Unavailable(now, r.op.Partition, lg.candidates[i]) {
				next = i
				break
			}
			if next < 0 {
				next = i
			}
		}
	}
	if next >= 0 {
		lg.tried |= 1 << next
		lg.endpoint = lg.candidates[next]
	}
}

// noteTransient records res, leg l's result, as the race's most recent
// transient one when it is not final for the operation's kind (the one
// classification, finalFor): its status is the one an error reports, and a
// driver that keeps a body keeps the one of the result that moved
// transients (a metadata alternate's discarded answer never does).
func (r *Race) noteTransient(l Leg, res Result) {
	if !finalFor(r.op.Kind, &res) {
		r.last, r.lastStatus = l, res.Status
		r.transients++
	}
}

func (r *Race) legFinal(e *Effects, now time.Duration, l Leg) {
	lg := &r.legs[l]
	lg.done, lg.completed = true, true
	if !r.hedged {
		r.finishWinner(e, now, l, 0)
		return
	}
	c := r.c
	var state TerminalState
	if l == Primary {
		if c.hot.keyedPair(r.op.Partition, r.regions[0].Region) { // recordPrimaryFinal's own check, on the client's first line
			c.tracker.recordPrimaryFinal(&c.hot, now, r.op.Partition, r.regions[0].Region) // §9.5 #2
		}
		state = PrimaryWonPreThreshold
		if r.spawned {
			state = PrimaryWonAfterHedge
		}
	} else {
		r.tripped = c.tracker.recordHedgeWin(&c.hot, now, r.op.Partition, r.regions[0].Region) // §9.5, §6.5 #8
		if r.logEnabled(slog.LevelDebug) {
			r.log(slog.LevelDebug, "cosmos.hedge.recorded_alternate_win",
				slog.String("primary_region", string(r.regions[0].Region)), slog.String("partition", r.op.Partition))
		}
		state = AlternateWon
	}
	if p, a := &r.legs[Primary], &r.legs[Alternate]; p.inFlight || a.inFlight || p.backingOff || a.backingOff {
		// Only then has cancelOthers anything to do (a primary that won
		// before the threshold leaves nothing in flight).
		r.cancelOthers(e, now, CancelWinnerFound)
	}
	r.finishWinner(e, now, l, state)
}

func (r *Race) legTransient(e *Effects, now time.Duration, l Leg, res Result) {
	lg := &r.legs[l]
	lg.done, lg.completed = true, true
	r.noteTransient(l, res)
	if !r.hedged {
		r.finishError(e, now, res.Status, transientCause(res))
		return
	}
	if l == Primary && !r.spawned {
		// A pre-threshold transient that does not change region (or a local
		// throttle, §9.3 #2) is returned as the primary's result, exactly as
		// the non-hedged path would (§6.4 happy-path arm).
		// No response was returned, so response_region stays unset (§10.1).
		r.diag.terminalState = PrimaryWonPreThreshold
		r.finishError(e, now, res.Status, transientCause(res))
		return
	}
	other := &r.legs[1-l]
	if other.started && !other.done {
		if l == Alternate {
			r.releaseLeg()
		}
		return // a transient keeps the other leg racing
	}
	// Both transient (§14.1): fan the 1002 discovery into the parent (§9.6.7).
	if r.observedSessionUnavailable {
		r.op.HubRegionProcessingOnly = true
		if r.hubLatch != nil {
			r.hubLatch.Store(true)
		}
	}
	r.diag.terminalState = BothTransient
	if r.logEnabled(slog.LevelWarn) {
		r.log(slog.LevelWarn, "cosmos.hedge.both_transient", slog.Int("last_status_code", res.Status.Code))
	}
	r.finishError(e, now, res.Status, transientCause(res))
}

// discardAlternate ends a metadata read's alternate leg on an answer that is
// not a clean success (spec §16 Phase 2, "primary is authoritative": .NET
// ResolveWinnerAsync, Rust classify_secondary_hedge_result): the answer is
// discarded, the leg is not retried, and the race waits for the primary;
// if the primary has already ended transient, the race ends with the
// primary's answer as BothTransient.
func (r *Race) discardAlternate(e *Effects, now time.Duration) {
	alt := &r.legs[Alternate]
	alt.done, alt.completed = true, true
	r.releaseLeg()
	p := &r.legs[Primary]
	if !p.done {
		return
	}
	r.diag.terminalState = BothTransient
	if r.logEnabled(slog.LevelWarn) {
		r.log(slog.LevelWarn, "cosmos.hedge.both_transient", slog.Int("last_status_code", p.last.Status.Code))
	}
	r.finishError(e, now, p.last.Status, transientCause(p.last))
}

// acquireLeg asks op.Legs, if any, for a slot for the alternate about to
// be sent, and reports whether it may go; a refusal is recorded in the
// diagnostics (HedgeRefused).
func (r *Race) acquireLeg() bool {
	if r.op.Legs == nil {
		return true
	}
	if !r.op.Legs.AcquireLeg() {
		r.diag.hedgeRefused = true
		return false
	}
	r.legHeld = true
	return true
}

// releaseLeg returns the alternate's slot of op.Legs, if it holds one.
func (r *Race) releaseLeg() {
	if r.legHeld {
		r.legHeld = false
		r.op.Legs.ReleaseLeg()
	}
}

func transientCause(res Result) error {
	if res.Err != nil {
		return res.Err
	}
	return ErrTransient
}

func (r *Race) deadlineFired(e *Effects, now time.Duration, cause error) {
	r.cause = cause
	if !r.hedged || !r.spawned {
		r.cancelOthers(e, now, reasonFor(cause))
		if r.hedged {
			r.diag.terminalState = DeadlineExceededPreThreshold
		}
		r.finishError(e, now, r.lastStatus, cause)
		return
	}
	p, a := &r.legs[Primary], &r.legs[Alternate]
	if p.done || a.done {
		r.pending = CancelledAwaitingPartner
	} else {
		r.pending = BothTransientDeadlineElapsed
	}
	// Stop backoffs; harvest what is in flight for up to HarvestWindow.
	p.backingOff, a.backingOff = false, false
	if !p.inFlight && !a.inFlight {
		r.endHarvest(e, now)
		return
	}
	r.phase = phaseHarvesting
	r.harvestAt = now + HarvestWindow
	e.timer(TimerHarvest, r.harvestAt)
}

func reasonFor(cause error) CancelReason {
	if cause == context.Canceled {
		return CancelAppCanceled
	}
	return CancelDeadline
}

func (r *Race) endHarvest(e *Effects, now time.Duration) {
	r.cancelOthers(e, now, reasonFor(r.cause))
	r.diag.terminalState = r.pending
	r.finishError(e, now, r.lastStatus, r.cause)
}

// cancelOthers cancels every in-flight attempt at now.
func (r *Race) cancelOthers(e *Effects, now time.Duration, reason CancelReason) {
	for l := Primary; l <= Alternate; l++ {
		lg := &r.legs[l]
		lg.backingOff = false
		if lg.inFlight {
			lg.inFlight = false
			lg.done = true
			lg.cancelled = true
			a := e.next()
			a.Kind, a.Leg, a.Reason = ActCancel, l, reason
			if r.hedged && r.logEnabled(slog.LevelDebug) {
				r.log(slog.LevelDebug, "cosmos.hedge.canceled", slog.String("which", l.String()),
					slog.String("target_region", string(lg.endpoint.Region)), slog.String("reason", reason.String()))
			}
		}
	}
}

// lateCharge adds the RU of the answer of leg l's attempt that the race
// cancelled when it ended, and that still reached the driver: the race is
// decided and ignores the answer, but the RU was consumed, and §10.4's
// ru_charge_total counts the loser's. Counted once per cancelled attempt,
// in the totals and in the diagnostics (those of the race's Error too).
func (r *Race) lateCharge(l Leg, ru float64) {
	lg := &r.legs[l]
	lg.cancelled = false
	lg.charge += ru
	r.totalCharge += ru
	if !r.hedged {
		return
	}
	ds := [2]*HedgeDiagnostics{&r.diag}
	if e, ok := r.err.(*Error); ok && e.Diagnostics != nil {
		ds[1] = e.Diagnostics
	}
	for _, d := range ds {
		if d != nil {
			d.legs[l].charge, d.totalCharge = lg.charge, r.totalCharge
		}
	}
}

func (r *Race) finishWinner(e *Effects, now time.Duration, l Leg, state TerminalState) {
	r.winner, r.hasWinner = l, true
	if r.hedged {
		r.diag.terminalState = state
		r.diag.response = uint8(l) + 1
		if r.logEnabled(slog.LevelDebug) {
			r.log(slog.LevelDebug, "cosmos.hedge.winner_selected", slog.String("winner_region", string(r.legs[l].endpoint.Region)),
				slog.Int64("elapsed_ms", (now-r.start).Milliseconds()), slog.Bool("was_hedge", state == AlternateWon))
		}
	}
	r.finish(now)
}

func (r *Race) finishError(e *Effects, now time.Duration, st Status, cause error) {
	err := &Error{Status: st, Cause: cause}
	r.finish(now)
	if r.hedged {
		d := r.diag
		err.Diagnostics = &d
	}
	r.err = err
}

func (r *Race) finish(now time.Duration) {
	r.phase = phaseDone
	r.doneAt = now
	r.releaseLeg()
	if r.hedged {
		for l := range r.legs {
			if l == int(Alternate) && !r.altUsed && r.diagAltZero {
				// The alternate's state is Begin's zero and its
				// diagnostics were written from that zero and left as they
				// were (lateCharge writes only a cancelled leg's): the
				// same values again.
				break
			}
			lg := &r.legs[l]
			// Every field, in place (no literal built and copied).
			d := &r.diag.legs[l]
			d.endpoint, d.attempts, d.lastStatus = lg.endpoint, lg.attempts, lg.last.Status
			d.completed, d.elapsed, d.charge = lg.completed, lg.elapsed, lg.charge
		}
		r.diagAltZero = !r.altUsed
		r.diag.totalCharge = r.totalCharge
		r.ended(now) // a superseded primary's elapsed time is a lower bound of its latency (censoring)
	}
}

// Done reports whether the race has ended (a result or an error is ready).
func (r *Race) Done() bool { return r.phase == phaseDone }

// DoneAt returns when the race ended: the caller's answer time.
func (r *Race) DoneAt() time.Duration { return r.doneAt }

// Start returns when the race began.
func (r *Race) Start() time.Duration { return r.start }

// Result returns the returned response and nil, or the zero Result and an
// *[Error] when no final response was produced. A final 4xx is a response,
// not an error: inspect its Status. Valid once Done.
func (r *Race) Result() (Result, error) {
	if r.err != nil {
		return Result{}, r.err
	}
	return r.legs[r.winner].last, nil
}

// Status returns the returned response's status (a final 4xx included),
// or the zero Status for an error outcome: Result's status without the
// copy of the whole Result. Valid once Done.
func (r *Race) Status() Status {
	if r.err != nil {
		return Status{}
	}
	return r.legs[r.winner].last.Status
}

// Err returns the outcome's error, or nil when a response was returned.
func (r *Race) Err() error { return r.err }

// Winner returns the leg whose response was returned, and false for an
// error outcome.
func (r *Race) Winner() (Leg, bool) { return r.winner, r.hasWinner }

// Diagnostics returns the race's hedge diagnostics and true iff a hedging
// strategy was resolved and active for the operation (the attachment
// contract of §10.1). Valid once Done; the pointer is into r.
func (r *Race) Diagnostics() (*HedgeDiagnostics, bool) {
	if !r.hedged {
		return nil, false
	}
	return &r.diag, true
}

// Threshold returns the threshold chosen for the operation (zero when not
// hedged).
func (r *Race) Threshold() Threshold { return r.threshold }

// AlternateSpawned reports whether the alternate was sent.
func (r *Race) AlternateSpawned() bool { return r.spawned }

// Attempts returns how many transport attempts were sent across both legs,
// retries included.
func (r *Race) Attempts() int { return int(r.legs[Primary].attempts) + int(r.legs[Alternate].attempts) }

// Endpoint returns the endpoint of leg l's latest attempt.
func (r *Race) Endpoint(l Leg) Endpoint { return r.legs[l].endpoint }

// RequestCharge returns the caller-visible RU: the returned response's
// charge only (§17 Q3); 0 for an error outcome.
func (r *Race) RequestCharge() float64 {
	if r.err != nil {
		return 0
	}
	return r.legs[r.winner].last.RequestCharge
}

// TrippedBreaker reports whether this race's alternate win tripped the
// partition breaker (§9.5).
func (r *Race) TrippedBreaker() bool { return r.tripped }
