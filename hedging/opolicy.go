package hedging

import "time"

// ThresholdPolicy chooses the hedging threshold of each operation (spec
// §17 Q11: the threshold "is computed by the evaluator and passed into
// execute_hedged()"). Implementations are safe for concurrent use and take
// the current time as a parameter; they never read a clock.
//
// Besides Observe, the race reports to a policy through the optional
// interfaces [SpawnObserver] (an alternate was sent, and why) and
// [SupersededObserver] (a primary was cancelled before it answered).
type ThresholdPolicy interface {
	// Threshold returns the threshold for an operation whose primary region
	// is primary, at now. The zero Threshold means "no opinion" and selects
	// the strategy's fallback.
	Threshold(now time.Duration, primary Region) Threshold
	// Observe feeds the latency of one completed attempt to region.
	Observe(now time.Duration, region Region, latency time.Duration)
	// Name identifies the policy in reports ("static(200ms)", "p99_dynamic").
	Name() string
}

// SupersededObserver is implemented by threshold policies that learn from
// censored primaries. The race calls PrimarySuperseded when it cancels a
// hedged operation's in-flight primary attempt — because the alternate won,
// or at the deadline — with the attempt's elapsed time so far: a lower bound
// of that attempt's latency, which Observe never sees. Because the
// alternate is sent at the threshold, a superseded primary's elapsed time is
// always at least the threshold it was hedged at.
type SupersededObserver interface {
	PrimarySuperseded(now time.Duration, region Region, elapsed time.Duration)
}

// SpawnObserver is implemented by threshold policies that need to know when
// an alternate is actually sent, for example to charge a hedge budget. The
// race calls AlternateSpawned once per spawned alternate, on the hedged path
// only, with the cause ([SpawnCause], defined with the race core).
type SpawnObserver interface {
	AlternateSpawned(now time.Duration, primary Region, cause SpawnCause)
}

// AttemptEnd describes one attempt of a hedged operation that ended, as the
// race reports it to an [OperationPolicy] (spec §17 Q11 extension).
type AttemptEnd struct {
	// Primary is the operation's primary region (the key a policy learns
	// under); Region is the region this attempt went to.
	Primary, Region Region
	// Kind is the operation's kind: policies learn per kind, because a
	// query page and a point read have different latencies.
	Kind OperationKind
	// Leg is the attempt's leg.
	Leg Leg
	// Elapsed is the time from sending the attempt to its answer, or to
	// its cancellation when Answered is false.
	Elapsed time.Duration
	// Answered is false when the race cancelled the attempt (the other leg
	// won, or the deadline passed): Elapsed is then a lower bound of the
	// attempt's latency (censored).
	Answered bool
	// LocalThrottle marks an answer that is the client's own
	// throughput-control gate refusing the attempt before the network
	// (a local 429, §9.3 #2): Elapsed is no latency of Region, and the
	// gate is saturated, so an alternate would take a token another
	// operation needs (§9.3: "at worst adds 2× TC pressure").
	LocalThrottle bool
}

// OperationPolicy is an optional extension of [ThresholdPolicy] for
// policies that decide per operation kind, inside the operation's deadline,
// and may decline to hedge at all. When the strategy's policy implements
// it, the race calls ThresholdOp instead of Threshold and AttemptEnded
// instead of Observe and [SupersededObserver.PrimarySuperseded].
type OperationPolicy interface {
	ThresholdPolicy
	// ThresholdOp returns the threshold of one operation of kind whose
	// primary region is primary, at now; remaining is the time left
	// until the operation's deadline (0 = no deadline). hedge false means
	// "do not hedge this operation": no threshold timer is armed (the
	// spec's failover alternate, §6.5 #9, is unaffected).
	ThresholdOp(now time.Duration, primary Region, kind OperationKind, remaining time.Duration) (t Threshold, hedge bool)
	// AttemptEnded reports one attempt of a hedged operation that
	// answered (any final or transient result without a transport error)
	// or was cancelled.
	AttemptEnded(now time.Duration, a AttemptEnd)
}

// HedgeGate admits the extra reads a [HedgingStrategy] sends to the
// alternate region (a hedge budget, [hedgelab/hedging/threshold.Budget];
// spec §17 Q11 extension, to keep a saturated region from being flooded,
// §9.3). It sits beside the strategy's threshold or [ThresholdPolicy],
// which says when a hedge is due; the gate says whether it goes out. Set
// it in [HedgingStrategy.Gate]. The race calls it at three points of a
// hedged operation, with the operation's primary region and kind:
//
//   - AdmitRedirect, first, in [Client.Begin], when a tripped partition
//     breaker (§9.5) would start the read on the alternate region instead
//     of its demoted primary from (one extra read there that no hedge
//     sent): true sends it there first, false keeps it on its primary
//     (whose threshold may then hedge it). A primary demoted by a 503
//     mark (§6.5 #10) is not gated.
//   - OperationStarted, once, when the operation's threshold is chosen
//     ([Client.Begin], and [Client.PlanHedge] for a hedge unit above the
//     race): a budget earns its tokens there.
//   - AdmitHedge, when the threshold timer fires, just before the
//     alternate would be sent: false means it is not sent and the primary
//     runs alone.
//
// Admission and charge are one step: an implementation that returns true
// has already charged. Failover alternates (§6.5 #9) are not gated; a gate
// that also implements [SpawnObserver] is told of every alternate sent,
// with its cause. Implementations are safe for concurrent use, take the
// current time as a parameter and never read a clock.
type HedgeGate interface {
	// AdmitRedirect admits and charges one read moved off its demoted
	// primary from.
	AdmitRedirect(now time.Duration, from Region, kind OperationKind) bool
	// OperationStarted reports one hedged operation.
	OperationStarted(now time.Duration, primary Region, kind OperationKind)
	// AdmitHedge admits and charges one latency hedge due at now.
	AdmitHedge(now time.Duration, primary Region, kind OperationKind) bool
	// Name identifies the gate in reports ("budget(0.05)").
	Name() string
}

// thresholdOp returns the threshold of one operation and whether the
// policy declined to hedge it, after reporting the operation to the
// strategy's gate ([HedgeGate.OperationStarted]). A zero threshold from
// the policy selects the strategy's fallback, as
// [HedgingStrategy.thresholdFor].
func (s HedgingStrategy) thresholdOp(now time.Duration, primary Region, kind OperationKind, remaining time.Duration) (Threshold, bool) {
	if s.Gate != nil {
		s.Gate.OperationStarted(now, primary, kind)
	}
	if op, ok := s.policy.(OperationPolicy); ok {
		t, hedge := op.ThresholdOp(now, primary, kind, remaining)
		if t.IsZero() {
			t = s.threshold
		}
		return t, !hedge
	}
	return s.thresholdFor(now, primary), false
}

// remaining returns the time left until the race's deadline at now, or 0
// when it has none.
func (r *Race) remaining(now time.Duration) time.Duration {
	if !r.hasDeadline {
		return 0
	}
	return max(r.deadline-now, 1)
}

// attemptEnded reports the end of leg l's attempt to the strategy's
// policy: [OperationPolicy.AttemptEnded] when it implements it, otherwise
// Observe for an answer and PrimarySuperseded for a cancelled primary.
func (r *Race) attemptEnded(now time.Duration, l Leg, answered bool) {
	lg := &r.legs[l]
	elapsed := now - lg.sentAt
	reportAttempt(r.strategy.policy, now, AttemptEnd{Primary: r.regions[0].Region, Region: lg.endpoint.Region, Kind: r.op.Kind,
		Leg: l, Elapsed: elapsed, Answered: answered, LocalThrottle: answered && lg.last.LocalThrottle})
}

// reportAttempt reports the end of one attempt to p:
// [OperationPolicy.AttemptEnded] when p implements it; otherwise
// [ThresholdPolicy.Observe] for an answered attempt and
// [SupersededObserver.PrimarySuperseded] for a cancelled primary (a
// cancelled alternate is not reported).
func reportAttempt(p ThresholdPolicy, now time.Duration, a AttemptEnd) {
	if op, ok := p.(OperationPolicy); ok {
		op.AttemptEnded(now, a)
		return
	}
	switch {
	case a.Answered:
		p.Observe(now, a.Region, a.Elapsed)
	case a.Leg == Primary:
		if o, ok := p.(SupersededObserver); ok {
			o.PrimarySuperseded(now, a.Region, a.Elapsed)
		}
	}
}

// admitHedge asks the strategy's gate, if any, whether the latency hedge
// due at now may go out ([HedgeGate.AdmitHedge]).
func (r *Race) admitHedge(now time.Duration) bool {
	return r.strategy.Gate == nil || r.strategy.Gate.AdmitHedge(now, r.regions[0].Region, r.op.Kind)
}
