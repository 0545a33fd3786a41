package hedging

import (
	"context"
	"errors"
	"time"
)

// Observer receives what [Client.Do] saw, for metrics (spec §10.4; the
// hedgingotel sub-package implements it with OpenTelemetry). Set it in
// Config.Observer; a nil Observer costs nothing.
//
// Do calls ObserveAttempt once per attempt it started, when the attempt's
// result reached Do or when the race ended without it (Abandoned), and
// then ObserveOperation once, before it returns. Both are called with
// Do's ctx, so values such as the trace span are at hand, and one at a time
// for an operation: on Do's goroutine, or, for a [Cancellable] transport
// whose race a timer or ctx's end took over while the primary's attempt
// ran on Do's goroutine, on the goroutine that drives the race;
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
	// Operation is a copy of the caller's operation as Do received it
	// (read-only; the one the transport read).
	Operation *Operation
	// Diagnostics are the race's hedge diagnostics, nil when hedging was not
	// active (the operation counts as "disabled" in
	// cosmos.hedge.operations_total).
	Diagnostics *HedgeDiagnostics
	// Err is Do's error, nil when a final response was returned.
	Err error
	// Outcome is what the caller got, by class (success, final 4xx,
	// transient, ...): the diagnostics' terminal state says which leg
	// answered, not whether the answer was a success.
	Outcome Outcome
	// Elapsed is the time from the start of Do to the race's decision.
	Elapsed time.Duration
	// WinnerRegion is the region of the returned response ("" on error).
	WinnerRegion Region
	// RequestCharge is the caller-visible RU: the winner's (spec §17 Q3).
	RequestCharge float64
	// TotalRequestCharge is the RU of every attempt whose answer reached
	// Do before it returned, losers included (cosmos.hedge.ru_charge_total):
	// a loser's answer that lands as the race ends counts; that of an
	// attempt still running when Do returns (Abandoned) cannot.
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
	res, _ := r.Result()
	ev := OperationEvent{
		Outcome:            outcomeOf(res.Status, err),
		Operation:          s.transportOp(),
		Err:                err,
		Elapsed:            r.DoneAt() - s.begin,
		RequestCharge:      r.RequestCharge(),
		TotalRequestCharge: r.totalCharge,
		Cancelled:          s.cancelled,
		Abandoned:          s.abandoned,
	}
	if w, ok := r.Winner(); ok {
		ev.WinnerRegion = r.Endpoint(w).Region
	}
	if d, ok := r.Diagnostics(); ok {
		ev.Diagnostics = d
		ev.ConsecutiveAlternateWins = s.c.tracker.Consecutive(s.opr.Partition, d.PrimaryRegion())
	}
	s.obs.ObserveOperation(s.ctx, ev)
}

// Outcome classifies what an operation returned to its caller. It extends
// spec §10.4: operations_total's result (primary_won, alternate_won, ...)
// and the terminal state (§10.1) say which leg answered, not whether the
// answer was a success; a primary answering 429 or 500 in 12 ms ends
// PrimaryWonPreThreshold, with OutcomeTransient.
type Outcome uint8

// The outcomes, by what Do returned.
const (
	// OutcomeSuccess: a final response with a status below 400.
	OutcomeSuccess Outcome = iota + 1
	// OutcomeFinalError: a final response with a status of 400 or more
	// (400, 404/0, 409, 412, 429/3200, ...): the service's answer, which no
	// other region would change (§7.2).
	OutcomeFinalError
	// OutcomeTransient: no final response; the last answer had a transient
	// status (408, 410, 429, 500, 503, 404/1002, ...), returned as an
	// [Error] with Cause [ErrTransient].
	OutcomeTransient
	// OutcomeTransportError: no final response; the last attempt got no
	// response (the transport's error), or no region applied ([ErrNoRegion]).
	OutcomeTransportError
	// OutcomeDeadline: the operation's deadline (op.Timeout or ctx's)
	// ended it.
	OutcomeDeadline
	// OutcomeCanceled: the caller cancelled ctx.
	OutcomeCanceled
)

var outcomeNames = [...]string{"", "success", "final_error", "transient_error", "transport_error", "deadline_exceeded", "canceled"}

// String returns the outcome as the hedgingotel outcome attribute writes
// it: "success", "final_error", "transient_error", "transport_error",
// "deadline_exceeded" or "canceled".
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) && o != 0 {
		return outcomeNames[o]
	}
	return "Outcome(?)"
}

// outcomeOf classifies Do's return: the final status st when err is nil.
func outcomeOf(st Status, err error) Outcome {
	switch {
	case err == nil && st.Code < 400:
		return OutcomeSuccess
	case err == nil:
		return OutcomeFinalError
	case errors.Is(err, context.DeadlineExceeded):
		return OutcomeDeadline
	case errors.Is(err, context.Canceled):
		return OutcomeCanceled
	case errors.Is(err, ErrTransient):
		return OutcomeTransient
	}
	return OutcomeTransportError
}
