package hedging

import (
	"context"
	"time"
)

// Observer receives what [Client.Do] saw, for metrics (spec §10.4; the
// hedgingotel sub-package implements it with OpenTelemetry). Set it in
// Config.Observer; a nil Observer costs nothing.
//
// Do calls ObserveAttempt once per attempt it started, when the attempt's
// result reached Do or when the race ended without it (Abandoned), and
// then ObserveOperation once, before it returns. Both are called on Do's
// goroutine with Do's ctx, so values such as the trace span are at hand;
// they must not block and must not keep the events' pointers beyond the
// call. Implementations must be safe for concurrent use (Do is).
type Observer interface {
	ObserveAttempt(ctx context.Context, ev AttemptEvent)
	ObserveOperation(ctx context.Context, ev OperationEvent)
}

// AttemptEvent is one transport attempt of an operation.
type AttemptEvent struct {
	// Attempt is what was sent: leg, endpoint, hedging marker.
	Attempt Attempt
	// Result is what the transport returned (zero when Abandoned). Its Body
	// belongs to Do: do not read or keep it.
	Result Result
	// Latency is the time from sending the attempt to its result, or to its
	// abandonment.
	Latency time.Duration
	// Abandoned: the race ended while the attempt was still running; it was
	// cancelled and Do returned without waiting for it (spec §14.2).
	Abandoned bool
}

// OperationEvent is one finished operation of [Client.Do].
type OperationEvent struct {
	// Operation is the caller's operation (read-only).
	Operation *Operation
	// Diagnostics are the race's hedge diagnostics, nil when hedging was not
	// active (the operation counts as "disabled" in
	// cosmos.hedge.operations_total).
	Diagnostics *HedgeDiagnostics
	// Err is Do's error, nil when a final response was returned.
	Err error
	// Elapsed is the time from the start of Do to the race's decision.
	Elapsed time.Duration
	// WinnerRegion is the region of the returned response ("" on error).
	WinnerRegion Region
	// RequestCharge is the caller-visible RU: the winner's (spec §17 Q3).
	RequestCharge float64
	// TotalRequestCharge is the RU of every attempt that reported before
	// the race ended (cosmos.hedge.ru_charge_total).
	TotalRequestCharge float64
	// Cancelled counts attempts cancelled before completion, indexed by
	// [CancelReason] (cosmos.hedge.canceled_total); index 0 is unused.
	Cancelled [4]int
	// Abandoned counts attempts still running when Do returned.
	Abandoned int
	// ConsecutiveAlternateWins is the partition breaker's counter for
	// (Operation.Partition, Diagnostics.PrimaryRegion()) after the operation
	// (cosmos.hedge.consecutive_alternate_wins, §9.5); 0 when not hedged.
	ConsecutiveAlternateWins int
}

// observeOperation reports the finished operation to the observer.
func (s *doState) observeOperation(err error) {
	r := &s.race
	ev := OperationEvent{
		Operation:          s.op,
		Err:                err,
		Elapsed:            r.DoneAt() - s.begin,
		RequestCharge:      r.RequestCharge(),
		TotalRequestCharge: r.TotalRequestCharge(),
		Cancelled:          s.cancelled,
		Abandoned:          s.abandoned,
	}
	if w, ok := r.Winner(); ok {
		ev.WinnerRegion = r.Endpoint(w).Region
	}
	if d, ok := r.Diagnostics(); ok {
		ev.Diagnostics = d
		ev.ConsecutiveAlternateWins = s.c.tracker.Consecutive(s.op.Partition, d.PrimaryRegion())
	}
	s.obs.ObserveOperation(s.ctx, ev)
}
