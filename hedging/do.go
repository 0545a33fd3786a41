package hedging

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Response is the answer of [Client.Do]: the final response of the leg that
// won the race (spec §6.4), or of the single leg when hedging was not active.
// A final 4xx (404/0, 409, 429/3200, ...) is a Response, not an error:
// inspect Result.Status.
type Response struct {
	// Result is the winning attempt's result: status, its RU charge, the
	// session LSN and retry-after it carried. Result.Err is always nil.
	// Result.Body, when the transport returned one, is the winner's body,
	// unread: the caller must read and close it.
	Result Result
	// Leg is the leg that answered: Primary, or Alternate for a hedge win.
	Leg Leg
	// Endpoint is where the winning attempt went; Region is its region
	// (the response_region of spec §10.1).
	Endpoint Endpoint
	Region   Region
	// RequestCharge is the caller-visible request charge in RU: the winning
	// response's charge only (spec §17 Q3). The RU of every attempt of the
	// race, losers included, is Diagnostics.RequestChargeTotal().
	RequestCharge float64
	// Elapsed is the answer time: from the start of Do until the race
	// produced this response, which is also when Do returns.
	Elapsed time.Duration
	// Diagnostics are the race's hedge diagnostics; nil if and only if no
	// hedging strategy was active for the operation (the attachment
	// contract of spec §10.1: a write, a Disabled strategy, fewer than two
	// distinct applicable regions, ...).
	Diagnostics *HedgeDiagnostics
}

// responseBox holds, in a single allocation, a Response, the copy of its
// diagnostics and the context of the operation's first attempt. The box is
// allocated when Do starts; the caller's *Response points into it.
type responseBox struct {
	resp Response
	diag HedgeDiagnostics
	// ctx0 is the first attempt's context. An attempt context is never
	// reused (net/http may still read a request's context from a background
	// dial after the request returned), so each attempt needs its own; the
	// first one rides along with the Response to save an allocation.
	ctx0 attemptCtx
}

// ErrNoTransport is returned by [Client.Do] when Config.Transport is nil.
var ErrNoTransport = errors.New("hedging: Config.Transport is nil")

// Do runs op as one hedged logical operation in real time and returns the
// final response of the winning leg (spec §6, execute_hedged).
//
// The primary attempt is sent at once on its own goroutine through
// Config.Transport. When hedging is active and no final response has
// arrived by the threshold, exactly one alternate attempt is sent, pinned to
// regions[1]; the first final response wins and the other attempt's context
// is cancelled (spec §6.5, §8.3, §12). op.Timeout, when set, is the
// end-to-end deadline shared by both legs (§9.4), enforced by the race
// itself. Cancelling ctx, or ctx's deadline passing, ends the operation like
// the deadline does (§6.5 #7): before the alternate was sent it returns at
// once; during a hedge it harvests in-flight attempts for up to
// [HarvestWindow] to enrich the diagnostics.
//
// Errors: an operation that produced no final response returns a nil
// *Response and an *[Error] whose Cause satisfies errors.Is with
// context.DeadlineExceeded (op.Timeout or ctx's deadline), context.Canceled
// (ctx cancelled), [ErrTransient] (both legs transient, §14.1, or a single
// transient result) or the transport's own error; its Diagnostics follow the
// same attachment contract as Response.Diagnostics. [ErrNoTransport] is
// returned when Config.Transport is nil.
//
// Attempts and cancellation: each attempt runs on its own goroutine with a
// context that carries ctx's values and the operation's deadline (the
// earlier of ctx's deadline and op.Timeout after Do started, so a transport
// can propagate the remaining budget) and that the race cancels when the
// attempt loses or the operation ends (ctx's own cancellation reaches
// attempts through the race, after the harvest window when a hedge is in
// flight). Do returns as soon as the race has decided (spec §6.5 #7,
// §14.2), whatever a losing transport does: an attempt still running then
// is cancelled and abandoned; when its Send eventually returns, its
// goroutine closes the result's Body and exits, and touches nothing the
// caller or a later Do owns (the per-operation state of such a call is never
// pooled again). Until then the abandoned Send may still read op's slices
// (Body, ExcludeRegions): do not modify their contents while an attempt may
// be running; op itself is copied and may be reused at once. A Transport may
// read its attempt's context after Send returned (as net/http does from a
// background dial), but its Done channel means nothing by then. A panic in
// Send is recovered and reported as a transport error (Result.Err) on its
// leg.
//
// Bodies: the winner's Result.Body reaches the caller unread in
// Response.Result.Body. When the operation ends without a final response,
// the body of the most recent transient response (the one whose status the
// *Error reports) is handed over in Error.Body. Every other body Do
// receives (losers, earlier transient results, results arriving after the
// race ended) is closed by Do.
//
// Time: the race runs on [Client.Now], a monotonic clock shared by all
// operations of the process, so the client's shared state (hedge-win
// tracker, location marks, threshold policy) sees one timeline. Ties: the
// race core sees a response that lands at the same instant as a timer
// (threshold, deadline, harvest) first (spec §6.4, biased select), two
// responses at the same instant in the order of [Leg.WinsTie] (the primary
// first), and a cancellation of ctx at the same instant as a due timer
// before the timer (nothing is sent after the caller cancelled). Do
// reproduces this: before acting on a due timer (or on ctx's cancellation)
// it keeps collecting results until the runtime has run its timers once
// more, then feeds results and timers to the core in timestamp order,
// results first on equal timestamps (each result is stamped when its Send
// returned). Under testing/synctest this is exact and costs no fake time:
// the barrier runs only when every goroutine of the bubble is blocked, so
// every attempt woken at the timer's instant has delivered (this relies on
// the runtime running a bubbled timer that is already in the timer heap only
// once the bubble is idle, true of Go 1.25 and 1.26). In real time it is
// one trip through the timer check, so a response that lands within
// scheduling jitter of the threshold may be seen either side of it; a tie
// has no sharper meaning in real time.
//
// Do is safe for concurrent use. A Client must not be shared between a
// testing/synctest bubble and code outside it.
//
// Observability: Config.Observer, when set, is called once per attempt and
// once per operation, on Do's goroutine with ctx (see [Observer]); slog
// events of the race are logged with ctx too.
//
// Allocation: on the happy path (the primary answers before the threshold)
// Do makes one allocation on top of what the Transport allocates: the
// returned Response (one object that also holds its diagnostics and the
// primary attempt's context); starting the attempt's goroutine allocates no
// closure (outside synctest bubbles). The
// per-operation state (the [Race], channel, timers, cancellable contexts) is
// pooled outside synctest bubbles, except after an abandoned attempt.
func (c *Client) Do(ctx context.Context, op *Operation) (*Response, error) {
	if c.cfg.Transport == nil {
		return nil, ErrNoTransport
	}
	if err := ctx.Err(); err != nil {
		// Cancelled before anything could be sent: no race was entered, so
		// no hedge diagnostics are attached (§10.1 attachment contract).
		return nil, &Error{Cause: err}
	}
	t0 := time.Now()
	s := getDoState(t0)
	s.c, s.op, s.ctx = c, op, ctx
	s.opc = *op
	s.obs = c.cfg.Observer
	s.box = new(responseBox)
	defer s.release()

	now := clockAt(t0)
	s.begin = now
	s.last = now
	// A context deadline is the race's deadline too (§9.4): a threshold at
	// or after it arms no alternate (§14.3). Attempts see the earlier of the
	// two as their context's deadline.
	var deadline time.Duration
	s.dl, s.hasDL = ctx.Deadline()
	if s.hasDL {
		deadline = max(now+s.dl.Sub(t0), now+1)
	}
	if op.Timeout > 0 {
		if dl := t0.Add(op.Timeout); !s.hasDL || dl.Before(s.dl) {
			s.dl, s.hasDL = dl, true
		}
	}
	var e Effects
	c.begin(ctx, &e, &s.race, now, op, deadline)
	if !s.race.Done() {
		s.perform(e)
		s.loop()
	}
	s.shutdown()
	return s.outcome()
}

// Now returns the time the real-time driver [Client.Do] passes to the race
// core and to the client's shared state (hedge-win tracker, location store,
// threshold policy): a monotonic duration since an arbitrary process-wide
// origin. Use it to query that state, e.g.
// c.HedgeWinTracker().Unhealthy(c.Now(), partition, region). Inside a
// testing/synctest bubble it follows the bubble's fake clock.
func (c *Client) Now() time.Duration { return clockNow() }

// processEpoch is the origin of clockNow outside synctest bubbles.
var processEpoch = time.Now()

// bubbleEpoch is the origin of clockNow inside a testing/synctest bubble,
// whose fake clock starts at midnight UTC 2000-01-01 and carries no
// monotonic reading.
var bubbleEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// clockNow reads the driver clock; see Client.Now.
func clockNow() time.Duration { return clockAt(time.Now()) }

// clockAt converts a reading of time.Now to the driver clock.
func clockAt(t time.Time) time.Duration {
	if !hasMonotonic(t) {
		return t.Sub(bubbleEpoch)
	}
	return t.Sub(processEpoch)
}

// hasMonotonic reports whether t carries a monotonic clock reading. time.Now
// always does, except inside a testing/synctest bubble; the driver uses this
// to keep bubbled channels and timers out of its pool (using a channel of one
// bubble from outside it is a fatal error).
func hasMonotonic(t time.Time) bool { return t != t.Round(0) }

// doPool recycles the per-operation state of Do. Only state created outside
// synctest bubbles is pooled.
var doPool = sync.Pool{New: func() any { return newDoState() }}

// getDoState returns a pooled state, or a fresh one inside a synctest
// bubble (detected from now, a reading of time.Now).
func getDoState(now time.Time) *doState {
	if !hasMonotonic(now) {
		s := newDoState()
		s.bubbled = true
		return s
	}
	return doPool.Get().(*doState)
}

// maxSlots bounds the attempts of one operation that can be running at once:
// at most one per leg is in flight (the race cancels attempts only when it
// ends, and abandons them then).
const maxSlots = 4

// Slot states: the attempt goroutine and Do race to move a running slot to
// delivered (the goroutine, when Send returned) or abandoned (Do, when the
// race ended first); whoever loses that race knows the other owns the result.
const (
	slotRunning uint32 = iota + 1
	slotDelivered
	slotAbandoned
)

// doState is the per-operation state of the real-time driver.
type doState struct {
	c     *Client
	op    *Operation // the caller's operation, given to the race
	opc   Operation  // a copy of it, given to the transport
	ctx   context.Context
	dl    time.Time // the operation's deadline, seen by attempts
	hasDL bool
	box   *responseBox // the Response to return; box.ctx0 is free until used
	ctx0  bool         // box.ctx0 was handed to an attempt
	race  Race
	begin time.Duration // core time of Begin
	last  time.Duration // latest core time passed to the race (kept monotonic)

	// results carries the index of a slot whose attempt returned; its
	// capacity equals the number of slots, so an attempt never blocks.
	results chan uint8
	slots   [maxSlots]attemptSlot
	running int // slots whose goroutine has not delivered yet

	timer    *time.Timer // nil until the first timer is armed
	armedAt  time.Duration
	armed    bool
	barrier  *time.Timer    // see settle; nil until first needed
	barrierC chan struct{}  // the barrier's signal
	timers   []pendingTimer // due times of the timers the core asked for
	tbuf     [8]pendingTimer

	ready [maxSlots]uint8 // slot indexes of delivered results, this batch
	nrdy  int

	obs       Observer
	lastBody  io.ReadCloser // body of the latest transient result the race saw
	cancelled [4]int        // cancellations by CancelReason
	abandoned int           // attempts still running when the race ended

	bubbled bool // created inside a synctest bubble: never pooled
}

type pendingTimer struct {
	at   time.Duration
	kind TimerKind
}

// attemptSlot is one attempt goroutine's mailbox.
type attemptSlot struct {
	s     *doState
	idx   uint8 // the slot's index in s.slots
	busy  bool
	state atomic.Uint32 // slotRunning, slotDelivered or slotAbandoned
	a     Attempt
	ctx   *attemptCtx // this attempt's context (never reused)
	res   Result
	sent  time.Duration // core time at which the attempt was started
	at    time.Duration // core time at which Send returned

	// inner is a cancellable context derived from context.Background that
	// gives the slot's attempts their Done and Err; stop cancels it. It is
	// reused, from attempt to attempt and operation to operation, until it
	// is cancelled, so the happy path allocates no cancellable context.
	inner context.Context
	stop  context.CancelFunc
	used  bool // stop was called: make a new inner before reuse
}

// cancel cancels the slot's current attempt.
func (sl *attemptSlot) cancel() {
	if !sl.used {
		sl.used = true
		sl.stop()
	}
}

func newDoState() *doState {
	s := &doState{results: make(chan uint8, maxSlots)}
	for i := range s.slots {
		s.slots[i].s = s
	}
	s.timers = s.tbuf[:0]
	return s
}

func (s *doState) clock() time.Duration { return clockNow() }

// at returns a core time for an event that happened at t, never earlier than
// a time already passed to the race.
func (s *doState) at(t time.Duration) time.Duration {
	if t > s.last {
		s.last = t
	}
	return s.last
}

// perform carries out the effects of one call into the race.
func (s *doState) perform(e Effects) {
	for i := 0; i < e.Len(); i++ {
		a := e.At(i)
		switch a.Kind {
		case ActSend:
			s.start(a.Attempt)
		case ActCancel:
			for j := range s.slots {
				if sl := &s.slots[j]; sl.busy && sl.a.Leg == a.Leg {
					sl.cancel()
					s.cancelled[a.Reason]++
				}
			}
		case ActTimer:
			s.timers = append(s.timers, pendingTimer{at: a.At, kind: a.Timer})
		}
	}
}

// start runs attempt a on a new goroutine.
func (s *doState) start(a Attempt) {
	i := 0
	for i < maxSlots && s.slots[i].busy {
		i++
	}
	if i == maxSlots {
		// Cannot happen: the core keeps at most one attempt in flight per
		// leg and cancels attempts only when the race ends.
		panic("hedging: too many concurrent attempts")
	}
	sl := &s.slots[i]
	sl.busy, sl.a, sl.sent = true, a, s.last
	sl.state.Store(slotRunning)
	if sl.inner == nil || sl.used {
		sl.inner, sl.stop = context.WithCancel(context.Background())
		sl.used = false
	}
	if !s.ctx0 {
		s.ctx0 = true
		sl.ctx = &s.box.ctx0
	} else {
		sl.ctx = new(attemptCtx)
	}
	*sl.ctx = attemptCtx{parent: s.ctx, inner: sl.inner, deadline: s.dl, hasDeadline: s.hasDL}
	s.running++
	sl.idx = uint8(i)
	if s.bubbled {
		go sl.run()
		return
	}
	startq <- sl
	go runQueued()
}

// startq hands attempts to the goroutines started for them outside
// synctest bubbles: "go runQueued()" calls a function without a closure,
// so starting an attempt allocates nothing (go sl.run() would allocate
// the closure). Every send is paired with one goroutine that receives, so
// the order in which they pair does not matter. Inside a bubble a channel
// shared with other bubbles must not be used; bubbled attempts use go
// sl.run().
var startq = make(chan *attemptSlot, 256)

func runQueued() { (<-startq).run() }

// run performs the slot's attempt and delivers its result, unless Do
// abandoned the attempt meanwhile: then it closes the result's body and
// touches nothing else.
func (sl *attemptSlot) run() {
	s, i := sl.s, sl.idx
	res := sl.send(s)
	sl.res = res
	sl.at = s.clock()
	if sl.state.CompareAndSwap(slotRunning, slotDelivered) {
		s.results <- i
		return
	}
	closeBody(res.Body)
}

// send calls the transport, reporting a panic as a transport error.
func (sl *attemptSlot) send(s *doState) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			closeBody(res.Body)
			res = Result{Err: fmt.Errorf("hedging: transport panicked on the %s leg (region %q): %v", sl.a.Leg, sl.a.Endpoint.Region, p)}
		}
	}()
	return s.c.cfg.Transport.Send(sl.ctx, &s.opc, sl.a)
}

func closeBody(b interface{ Close() error }) {
	if b != nil {
		_ = b.Close()
	}
}

// loop feeds results, timers and ctx cancellation to the race until it is
// done.
func (s *doState) loop() {
	done := s.ctx.Done()
	for !s.race.Done() {
		s.arm()
		var timerC <-chan time.Time
		if s.armed {
			timerC = s.timer.C
		}
		// now is a lower bound of the current time known without reading
		// the clock: the due time of the timer that fired, or the latest
		// stamp of a delivered result. A timer due after it fires on the
		// next round.
		var now time.Duration
		cancelled := false
		select {
		case i := <-s.results:
			s.deliverLater(i)
		case <-timerC:
			s.armed, now = false, s.armedAt
		case <-done:
			cancelled = true
		}
		s.drain()
		now = max(now, s.latestResult())
		// Settle before acting on a due timer, a cancellation, or a result
		// while another attempt is in flight: whatever else happened at
		// this instant is then seen too, and ordered by the tie rules.
		if cancelled || s.due(now) || (s.nrdy > 0 && s.running > 0) {
			s.settle()
			now = max(now, s.latestResult())
			// A cancellation at the instant of a due timer wins over the
			// timer (spec §6.4: the cancel arm of the biased select is
			// polled first), whichever the select saw first.
			if !cancelled && done != nil && s.ctx.Err() != nil {
				cancelled = true
			}
		}
		if cancelled {
			done = nil
			now = max(now, s.clock())
			// Results up to now are seen first; a timer due at the very
			// instant of the cancellation is not acted on (nothing is sent
			// after the caller cancelled).
			s.dispatch(now - 1)
			if !s.race.Done() {
				s.perform(s.race.Cancel(s.at(now), s.ctx.Err()))
			}
		} else {
			s.dispatch(now)
		}
	}
}

// deliverLater queues delivered slot i for this batch.
func (s *doState) deliverLater(i uint8) {
	s.ready[s.nrdy] = i
	s.nrdy++
	s.running--
}

// drain collects every result already delivered, without blocking.
func (s *doState) drain() {
	for {
		select {
		case i := <-s.results:
			s.deliverLater(i)
		default:
			return
		}
	}
}

// settle implements the tie rule before a timer or a cancellation is acted
// on: it keeps collecting results until a barrier timer, reset to fire "now",
// has run. The barrier is an AfterFunc timer kept in the timer heap (armed
// an hour ahead, then moved to now), so inside a testing/synctest bubble it
// runs only once every goroutine of the bubble is blocked again, at the same
// fake instant: every attempt woken at that instant has delivered by then,
// and no fake time passes. In real time it costs one trip through the
// runtime's timer check.
//
// It waits for two barriers: the runtime may still be firing the timers of
// the current instant when the first is armed (the timer that woke Do is
// only one of them) and then run that barrier in the same pass, before an
// attempt woken by a later timer of the same pass has delivered; the second
// barrier can only run in a later pass.
func (s *doState) settle() {
	if s.barrier == nil {
		s.barrierC = make(chan struct{}, 1)
		s.barrier = time.AfterFunc(time.Hour, s.fireBarrier)
	}
	for range 2 {
		s.barrier.Reset(time.Hour)
		s.barrier.Reset(0)
	wait:
		for {
			select {
			case i := <-s.results:
				s.deliverLater(i)
			case <-s.barrierC:
				break wait
			}
		}
	}
}

func (s *doState) fireBarrier() { s.barrierC <- struct{}{} }

// latestResult returns the latest stamp of this batch's results (0 if none).
func (s *doState) latestResult() time.Duration {
	var t time.Duration
	for k := 0; k < s.nrdy; k++ {
		t = max(t, s.slots[s.ready[k]].at)
	}
	return t
}

// due reports whether a pending timer is due at now.
func (s *doState) due(now time.Duration) bool {
	for _, t := range s.timers {
		if t.at <= now {
			return true
		}
	}
	return false
}

// dispatch feeds this batch's results and every timer due at now to the
// race in time order: results before timers on equal times, and results of
// the same time in the race core's tie order ([Leg.WinsTie]).
func (s *doState) dispatch(now time.Duration) {
	for {
		ri := -1
		for k := 0; k < s.nrdy; k++ {
			if ri < 0 {
				ri = k
				continue
			}
			x, y := &s.slots[s.ready[k]], &s.slots[s.ready[ri]]
			if x.at < y.at || (x.at == y.at && x.a.Leg.WinsTie(y.a.Leg)) {
				ri = k
			}
		}
		ti := -1
		for k, t := range s.timers {
			if t.at <= now && (ti < 0 || t.at < s.timers[ti].at) {
				ti = k
			}
		}
		switch {
		case ri < 0 && ti < 0:
			return
		case ri >= 0 && (ti < 0 || s.slots[s.ready[ri]].at <= s.timers[ti].at):
			i := s.ready[ri]
			s.nrdy--
			s.ready[ri] = s.ready[s.nrdy]
			s.respond(&s.slots[i])
		default:
			t := s.timers[ti]
			last := len(s.timers) - 1
			s.timers[ti] = s.timers[last]
			s.timers = s.timers[:last]
			if !s.race.Done() {
				s.perform(s.race.TimerFired(s.at(t.at), t.kind))
			}
		}
	}
}

// respond feeds a delivered slot's result to the race, reports the attempt
// to the observer and closes its body unless it is the winner's.
func (s *doState) respond(sl *attemptSlot) {
	a, res, at := sl.a, sl.res, sl.at
	sl.busy, sl.res = false, Result{}
	keep := false
	if !s.race.Done() {
		seen := !sl.used // the race ignores the result of a cancelled attempt
		s.perform(s.race.Responded(s.at(at), a, res))
		if w, ok := s.race.Winner(); s.race.Done() && ok {
			keep = w == a.Leg
		} else if seen && !res.Final() {
			// The most recent transient response: returned with the
			// error if the race ends without a final one.
			closeBody(s.lastBody)
			s.lastBody, keep = res.Body, res.Body != nil
		}
	} else {
		// Decided: a loser's answer that landed as the race ended only adds
		// its RU to the total (ru_charge_total, §10.4).
		s.race.Responded(at, a, res)
	}
	if s.obs != nil {
		s.obs.ObserveAttempt(s.ctx, AttemptEvent{Attempt: a, Result: res, Latency: at - sl.sent})
	}
	if !keep {
		closeBody(res.Body)
	}
}

// arm sets the timer to the earliest pending timer.
func (s *doState) arm() {
	if len(s.timers) == 0 {
		if s.armed {
			s.timer.Stop()
			s.armed = false
		}
		return
	}
	next := s.timers[0].at
	for _, t := range s.timers[1:] {
		next = min(next, t.at)
	}
	if s.armed && s.armedAt == next {
		return
	}
	d := next - s.clock()
	if s.timer == nil {
		s.timer = time.NewTimer(d)
	} else {
		s.timer.Reset(d)
	}
	s.armed, s.armedAt = true, next
}

// shutdown stops the timers, closes the bodies of results the race did not
// see, and cancels and abandons every attempt still running, without
// waiting for it.
func (s *doState) shutdown() {
	if s.timer != nil {
		s.timer.Stop()
		s.armed = false
	}
	if s.barrier != nil {
		s.barrier.Stop()
	}
	s.timers = s.timers[:0]
	for k := 0; k < s.nrdy; k++ {
		s.respond(&s.slots[s.ready[k]])
	}
	s.nrdy = 0
	for i := range s.slots {
		sl := &s.slots[i]
		if !sl.busy {
			continue
		}
		sl.cancel()
		if sl.state.CompareAndSwap(slotRunning, slotAbandoned) {
			s.abandoned++
			s.running--
			sl.busy = false
			if s.obs != nil {
				s.obs.ObserveAttempt(s.ctx, AttemptEvent{Attempt: sl.a, Abandoned: true, Latency: s.clock() - sl.sent})
			}
		}
	}
	// Attempts that delivered after the race ended but before they could
	// be abandoned are on the channel, or about to be (never blocking).
	for s.running > 0 {
		s.running--
		s.respond(&s.slots[<-s.results])
	}
}

// outcome builds Do's return values from the finished race.
func (s *doState) outcome() (*Response, error) {
	r := &s.race
	res, err := r.Result()
	if s.obs != nil {
		s.observeOperation(err)
	}
	if err != nil {
		var he *Error
		if s.lastBody != nil && errors.As(err, &he) && he.Status != (Status{}) {
			he.Body, s.lastBody = s.lastBody, nil
		}
		closeBody(s.lastBody)
		s.lastBody = nil
		return nil, err
	}
	closeBody(s.lastBody)
	s.lastBody = nil
	b := s.box
	w, _ := r.Winner()
	b.resp = Response{
		Result:        res,
		Leg:           w,
		Endpoint:      r.Endpoint(w),
		Region:        r.Endpoint(w).Region,
		RequestCharge: r.RequestCharge(),
		Elapsed:       r.DoneAt() - s.begin,
	}
	if d, ok := r.Diagnostics(); ok {
		b.diag = *d
		b.resp.Diagnostics = &b.diag
	}
	return &b.resp, nil
}

// release clears references and returns the state to the pool, unless an
// abandoned attempt may still touch it.
func (s *doState) release() {
	if s.abandoned > 0 {
		return // the abandoned goroutines keep it alive; never reused
	}
	s.race = Race{}
	s.c, s.op, s.ctx, s.box, s.ctx0, s.obs = nil, nil, nil, nil, false, nil
	s.opc = Operation{}
	s.cancelled = [4]int{}
	for i := range s.slots {
		s.slots[i].a, s.slots[i].ctx = Attempt{}, nil
	}
	if cap(s.timers) > len(s.tbuf) {
		s.timers = s.tbuf[:0]
	}
	if !s.bubbled {
		doPool.Put(s)
	}
}

// attemptCtx is the context of one attempt: the values of the operation's
// ctx, the operation's deadline, and the Done and Err of its slot's inner
// context, which the driver cancels to cancel the attempt. Its fields never
// change once the attempt started, so a transport goroutine that outlives
// Send may keep using it. Contexts derived from an attemptCtx (net/http
// derives one per request) find the inner context through Value and
// register with it directly, so no propagation goroutine is started.
type attemptCtx struct {
	parent      context.Context
	inner       context.Context
	deadline    time.Time
	hasDeadline bool
}

// Deadline returns the operation's deadline: the earlier of the caller's
// context deadline and op.Timeout after Do started.
func (c *attemptCtx) Deadline() (time.Time, bool) { return c.deadline, c.hasDeadline }

// Done is closed when the driver cancels the attempt.
func (c *attemptCtx) Done() <-chan struct{} { return c.inner.Done() }

// Err returns context.Canceled once the attempt was cancelled.
func (c *attemptCtx) Err() error { return c.inner.Err() }

// Value returns the operation context's value for key. The inner context,
// derived from Background, answers only the context package's own lookup of
// its cancellable parent.
func (c *attemptCtx) Value(key any) any {
	if v := c.inner.Value(key); v != nil {
		return v
	}
	return c.parent.Value(key)
}

// String describes the context for debugging.
func (c *attemptCtx) String() string { return "hedging.attemptCtx" }
