package simnet

// This file feeds a hedging.Observer from the event loop
// (RunOptions.Observer): the events [hedging.Client.Do] reports in real
// time, with virtual time in their context.

import (
	"context"
	"time"

	"hedgelab/hedging"
)

// virtualNowKey is the context key of the virtual clock.
type virtualNowKey struct{}

// clockCtx is the context the observer's calls receive: its Value of
// virtualNowKey is the run's virtual time at the call.
type clockCtx struct {
	context.Context
	s *sim
}

func (c *clockCtx) Value(key any) any {
	if key == (virtualNowKey{}) {
		return c.s.now
	}
	return c.Context.Value(key)
}

// VirtualNow returns the virtual time (from the start of the run) of an
// Observer call made by [Run], and false for a context that does not come
// from one. An Observer that exports telemetry stamps it with this time
// instead of the wall clock.
func VirtualNow(ctx context.Context) (time.Duration, bool) {
	now, ok := ctx.Value(virtualNowKey{}).(time.Duration)
	return now, ok
}

// observeAnswer reports the answer of attempt st of o, handed to its race
// now.
func (s *sim) observeAnswer(st *attemptState) {
	s.obs.ObserveAttempt(s.obsCtx, hedging.AttemptEvent{Attempt: st.a, Result: st.res, Latency: s.now - st.sentAt})
}

// observeCancel reports attempt st, cancelled now for reason: its race
// ended while it ran, and the driver does not wait for it (spec §14.2), so
// it is abandoned, as Do reports it.
func (s *sim) observeCancel(o *opState, st *attemptState, reason hedging.CancelReason) {
	if int(reason) < len(o.cancelled) {
		o.cancelled[reason]++
	}
	s.obs.ObserveAttempt(s.obsCtx, hedging.AttemptEvent{Attempt: st.a, Latency: s.now - st.sentAt, Abandoned: true})
}

// observeOperation reports the finished operation of slot o.
func (s *sim) observeOperation(o *opState) {
	ev := hedging.OperationEventOf(&o.race, &o.op, s.client(o.inst))
	for r, n := range o.cancelled {
		ev.Cancelled[r] = int(n)
		ev.Abandoned += int(n)
	}
	s.obs.ObserveOperation(s.obsCtx, ev)
}
