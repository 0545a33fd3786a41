package hedging

import "time"

// ThresholdPolicy chooses the threshold of each hedged operation and
// learns from what became of them (spec §17 Q11: the threshold "is
// computed by the evaluator and passed into execute_hedged()"; a policy
// is an extension beyond §4.1's fixed threshold). The race calls
// Threshold once per hedged operation, when it begins, and Observe with
// the operation's events (see [Observation]). Implementations are safe
// for concurrent use and take the current time as a parameter; they never
// read a clock. The policies under study are in hedging/threshold.
type ThresholdPolicy interface {
	// Threshold returns the threshold of the operation q describes at
	// now, and whether to hedge it at all: hedge false arms no threshold
	// timer (the spec's failover alternate, §6.5 #9, is unaffected). A
	// zero Threshold with hedge true selects the strategy's fallback
	// ([HedgingStrategy.Threshold]).
	Threshold(now time.Duration, q ThresholdQuery) (t Threshold, hedge bool)
	// Observe reports one event of a hedged operation.
	Observe(now time.Duration, o Observation)
	// Name identifies the policy in reports ("static(200ms)", "p99_dynamic").
	Name() string
}

// ThresholdQuery describes an operation whose threshold is being chosen.
type ThresholdQuery struct {
	// Primary is the region of the operation's primary attempt (§6.2) and
	// Alternate the region a hedge would go to (§6.3): the first two
	// applicable regions in race order.
	Primary, Alternate Region
	// Kind is the operation's kind: a query page and a point read have
	// different latencies.
	Kind OperationKind
	// Remaining is the time left until the operation's deadline (§9.4); 0
	// = no deadline.
	Remaining time.Duration
}

// ObservationEvent names what an [Observation] reports.
type ObservationEvent uint8

// The events of a hedged operation, in the order the race reports them.
const (
	// OperationStarted: the operation begins and its threshold is about to
	// be chosen (a hedge budget earns its tokens here).
	OperationStarted ObservationEvent = iota + 1
	// AlternateSent: the alternate was sent, for Cause.
	AlternateSent
	// OperationEnded: the race ended; Latency, Legs, Winner say how.
	OperationEnded
)

// Observation is what the race tells a hedged operation's [ThresholdPolicy]
// and [HedgeGate] (both see every event; each reads what it needs). It is
// the one place where an attempt's answer is classified for learning: a
// final response is a latency of its region; a transient answer (503,
// 410, 404/1002, a retried 429, a transport error) is not, and neither is
// a refusal by the client's own throughput-control gate (a local 429,
// §9.3 #2), which never left the client.
type Observation struct {
	Event ObservationEvent
	// Primary and Alternate are the operation's primary region and the
	// region its hedge goes (or would go) to, as in [ThresholdQuery].
	Primary, Alternate Region
	Kind               OperationKind
	// Cause is why the alternate was sent (AlternateSent; OperationEnded
	// when it was): the threshold, or a failover cause (§6.5 #9).
	Cause SpawnCause
	// The rest describes an ended operation (OperationEnded).
	//
	// Threshold is the threshold the race armed; Declined says the policy
	// chose not to hedge the operation (no threshold timer).
	Threshold Threshold
	Declined  bool
	// Latency is the time from the operation's start to its end.
	Latency time.Duration
	// Legs holds what became of the primary ([Primary]) and alternate
	// ([Alternate]) legs.
	Legs [2]LegEnd
	// Winner is the leg whose final response the operation returned, when
	// Won.
	Winner Leg
	Won    bool
}

// LegOutcome is how one leg of a hedged operation ended.
type LegOutcome uint8

// The outcomes of a leg.
const (
	// LegNotSent: the leg was never sent (no hedge).
	LegNotSent LegOutcome = iota
	// LegAnswered: a final response (§7.1) arrived, after Elapsed: a
	// latency of the leg's region, unless [LegEnd.FinalError] says the
	// response was a final error.
	LegAnswered
	// LegCancelled: the race ended (the other leg won, or the deadline)
	// while the leg was in flight or waiting to retry: Elapsed is a lower
	// bound of its latency (censored).
	LegCancelled
	// LegFailed: the leg stopped on a transient answer or a transport
	// error without a final response: it did not answer, and Elapsed is
	// no latency.
	LegFailed
)

// LegEnd is what became of one leg of a hedged operation.
type LegEnd struct {
	// Region is where the leg's attempts went (a leg inside a race retries
	// locally, §8.4).
	Region  Region
	Outcome LegOutcome
	// Elapsed is the time from the leg's first attempt to its final
	// response (LegAnswered), its cancellation (LegCancelled) or its last
	// answer (LegFailed).
	Elapsed time.Duration
	// FinalError says the leg's final response (LegAnswered) has a status
	// of 400 or more: final by §7.1/§7.2 (404 with sub-status 0, 409, 412,
	// 429/3200, ...), so it ends the race, yet the operation fails for its
	// caller when it wins. Elapsed is then when the leg failed, not a
	// latency of a successful answer.
	FinalError bool
	// LocalThrottle says an attempt of the leg was refused by the client's
	// own throughput-control gate (a local 429, §9.3 #2: the gate is
	// saturated), and RetryAfter is the longest the leg waited after such
	// a refusal before retrying (the 429's retry-after or the client's
	// RetryOptions.ThrottleBackoff, whichever is longer).
	LocalThrottle bool
	RetryAfter    time.Duration
}

// HedgeGate admits the extra reads a [HedgingStrategy] sends to the
// alternate region (a hedge budget, [hedgelab/hedging/threshold.Budget];
// spec §17 Q11 extension, to keep a saturated region from being flooded,
// §9.3). It sits beside the strategy's threshold or [ThresholdPolicy],
// which says when a hedge is due; the gate says whether it goes out. Set
// it in [HedgingStrategy.Gate]. The race asks Admit at two points of a
// hedged operation:
//
//   - in [Client.Begin], with Redirect set, when a tripped partition
//     breaker (§9.5) would start the read on the alternate region instead
//     of its demoted primary (one extra read there that no hedge sent):
//     true sends it there first, false keeps it on its primary (whose
//     threshold may then hedge it). A primary demoted by a 503 mark (§6.5
//     #10) is not gated;
//   - when the threshold timer fires, just before the alternate would be
//     sent: false means it is not sent and the primary runs alone.
//
// Admission and charge are one step: an implementation that returns true
// has already charged. Failover alternates (§6.5 #9) are not gated. The
// gate also sees the operation's [Observation]s: OperationStarted once,
// after a redirect's Admit and before the threshold is chosen (in
// [Client.Begin], and [Client.PlanHedge] for a hedge unit above the race),
// AlternateSent for every alternate sent, OperationEnded. Implementations
// are safe for concurrent use, take the current time as a parameter and
// never read a clock.
type HedgeGate interface {
	// Admit admits and charges one extra read on the alternate region.
	Admit(now time.Duration, a Admission) bool
	// Observe reports one event of a hedged operation.
	Observe(now time.Duration, o Observation)
	// Name identifies the gate in reports ("budget(0.05)").
	Name() string
}

// Admission is one extra read a [HedgeGate] is asked to admit.
type Admission struct {
	// Primary is the operation's primary region: for a redirect, the
	// demoted region the read moves from.
	Primary Region
	Kind    OperationKind
	// Redirect marks a read a tripped partition breaker moves to the
	// alternate; otherwise it is a latency hedge due now.
	Redirect bool
}

// thresholdOp returns the threshold of one operation and whether the
// policy declined to hedge it, after reporting the operation's start to
// the strategy's gate. A zero threshold from the policy selects the
// strategy's fallback; a strategy without a policy has its fixed
// threshold.
func (s HedgingStrategy) thresholdOp(now time.Duration, q ThresholdQuery) (Threshold, bool) {
	if s.Gate != nil {
		s.Gate.Observe(now, Observation{Event: OperationStarted, Primary: q.Primary, Alternate: q.Alternate, Kind: q.Kind})
	}
	if s.policy == nil {
		return s.threshold, false
	}
	t, hedge := s.policy.Threshold(now, q)
	if t.IsZero() {
		t = s.threshold
	}
	return t, !hedge
}

// remaining returns the time left until the race's deadline at now, or 0
// when it has none.
func (r *Race) remaining(now time.Duration) time.Duration {
	if !r.hasDeadline {
		return 0
	}
	return max(r.deadline-now, 1)
}

// observe reports o (its regions and kind filled in) to the strategy's
// policy and gate.
func (r *Race) observe(now time.Duration, o Observation) {
	s := &r.strategy
	if s.policy == nil && s.Gate == nil {
		return
	}
	o.Primary, o.Kind = r.regions[0].Region, r.op.Kind
	if len(r.regions) > 1 {
		o.Alternate = r.regions[1].Region
	}
	if s.policy != nil {
		s.policy.Observe(now, o)
	}
	if s.Gate != nil {
		s.Gate.Observe(now, o)
	}
}

// ended reports the end of a hedged race at now (OperationEnded).
func (r *Race) ended(now time.Duration) {
	if r.strategy.policy == nil && r.strategy.Gate == nil {
		return
	}
	o := Observation{Event: OperationEnded, Cause: r.diag.spawnCause, Threshold: r.threshold, Declined: r.declined,
		Latency: now - r.start, Winner: r.winner, Won: r.hasWinner}
	for l := range r.legs {
		lg := &r.legs[l]
		e := &o.Legs[l]
		if !lg.started {
			continue
		}
		e.Region, e.LocalThrottle, e.RetryAfter = lg.endpoint.Region, lg.throttled, lg.throttleWait
		switch {
		case lg.cancelled || !lg.done:
			e.Outcome, e.Elapsed = LegCancelled, now-lg.startAt
		case lg.last.Final() && !lg.last.LocalThrottle:
			e.Outcome, e.Elapsed, e.FinalError = LegAnswered, lg.elapsed, finalError(lg.last.Status)
		default:
			e.Outcome, e.Elapsed = LegFailed, lg.elapsed
		}
	}
	r.observe(now, o)
}

// admitHedge asks the strategy's gate, if any, whether the latency hedge
// due at now may go out.
func (r *Race) admitHedge(now time.Duration) bool {
	return r.strategy.Gate == nil || r.strategy.Gate.Admit(now, Admission{Primary: r.regions[0].Region, Kind: r.op.Kind})
}
