package hedging

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"hedgelab/hedging/internal/answer"
)

// Response is the answer of [Client.Do]: the final response of the leg that
// won the race (spec §6.4), or of the single leg when hedging was not active.
// A final 4xx (404/0, 409, 429/3200, ...) is a Response, not an error:
// inspect Result.Status.
type Response struct {
	// Result is the winning attempt's result: status, its RU charge, the
	// session LSN and retry-after it carried. Result.Err is always nil.
	// Result.Body, when the transport returned one, is the winner's body,
	// unread, governed by the caller's context (see [Client.Do], Bodies):
	// the caller must read and close it.
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

// ErrNoTransport is returned by [Client.Do] when Config.Transport is nil.
var ErrNoTransport = errors.New("hedging: Config.Transport is nil")

// Do runs op as one hedged logical operation in real time and returns the
// final response of the winning leg (spec §6, execute_hedged).
//
// The primary attempt is sent at once through Config.Transport: on the
// caller's goroutine when the transport is [Cancellable] (then nothing
// else runs for the operation until a timer is due or ctx ends: no hedge
// task and no per-hedge state on the happy path, spec §6.5 goal 6), on a
// goroutine of its own otherwise. When hedging is active and no final response has
// arrived by the threshold, exactly one alternate attempt is sent, pinned to
// regions[1]; the first final response wins and the other attempt is
// cancelled (spec §6.5, §8.3, §12). The operation's deadline is the earlier
// of ctx's deadline and op.Timeout after Do started, shared by both legs
// (§9.4). When it passes, or ctx is cancelled, before the alternate was sent
// Do returns at once; during a hedge it first harvests the attempts in
// flight for up to [HarvestWindow] to enrich the diagnostics (§6.5 #7).
//
// Errors: an operation that produced no final response returns a nil
// *Response and an *[Error] whose Cause satisfies errors.Is with
// context.DeadlineExceeded (the operation's deadline), context.Canceled
// (ctx cancelled), [ErrTransient] (both legs transient, §14.1, or a single
// transient result) or the transport's own error; its Diagnostics follow the
// same attachment contract as Response.Diagnostics. [ErrNoTransport] is
// returned when Config.Transport is nil.
//
// Attempt contexts: each attempt gets a fresh context, made by
// context.WithCancelCause from context.WithoutCancel(ctx) (the inline
// primary's, see Allocation, is one of hedging's own that behaves the
// same, Err and context.Cause included): it carries ctx's
// values, its Deadline reports the operation's deadline (so a transport can
// propagate the remaining budget), and only the race cancels it — ctx's own
// end reaches attempts through the race, after the harvest window when a
// hedge is in flight. The race cancels an attempt when it loses (cause
// context.Canceled), when the deadline ends it (Err and context.Cause report
// context.DeadlineExceeded) or when ctx is cancelled (cause
// context.Cause(ctx)). Do returns as soon as the race has decided, whatever
// a losing transport does: an attempt still running then is cancelled and
// abandoned, and its goroutine closes its result's Body when Send returns;
// with a [Cancellable] transport the primary's first attempt, which runs on
// Do's goroutine, is cancelled and Do returns once that Send has returned.
// Until then an abandoned Send may still read op's slices (Body,
// ExcludeRegions): do not modify their contents while an attempt may be
// running; op itself is copied and may be reused at once. A panic in Send is
// recovered and reported as a transport error (Result.Err) on its leg.
//
// Bodies: the winner's body reaches the caller unread in
// Response.Result.Body; when the operation ends without a final response,
// the body of the most recent transient response (the one whose status the
// *Error reports) reaches it in Error.Body. Such a body is the transport's,
// wrapped (its Unwrap method returns the transport's body), and keeps its
// attempt's context live until it is closed, except that the context is
// cancelled when ctx ends (cause context.Cause(ctx)) or the operation's
// deadline passes (context.DeadlineExceeded): a transport whose body reads
// through its attempt's context, as net/http's does, then ends a read in
// progress with that error, as net/http's own client would. Close releases
// what the body held. Every other body Do receives (losers, earlier
// transient results, results arriving after the race ended) is closed by Do.
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
// Do is safe for concurrent use. Nothing Do hands out or leaves running
// (the Response, a body, an attempt's context, the copy of op a transport
// reads) is reused by a later operation: those are allocated for each
// operation. Only the engine that drives the race (the race core's state,
// the attempt slots, timers and channels) is pooled, and only when no
// abandoned attempt can still reach it; nothing handed out points into it.
//
// Allocation: on the happy path (the primary answers before the threshold)
// Do allocates, on top of what the Transport allocates, once for a
// Cancellable transport: the answer (the Response, its diagnostics, the
// body wrapper and the primary's attempt context, one object; the context
// also spares a context derived from it, as net/http derives one per
// request, the children map of context.WithCancelCause: it registers
// through the context's AfterFunc method); and 3 times otherwise: the
// answer with the copy of op, and the attempt's context (2). op itself does
// not escape, so a caller's Operation may live on its stack. A caller
// context that can end adds, for a Cancellable transport, its
// context.AfterFunc registration (the callback that takes the race over
// when ctx ends). An operation with a deadline adds one per attempt that
// runs on a goroutine of its own (the context reporting it); a caller
// context that can end adds context.WithoutCancel's, and then a handed-out
// body context.AfterFunc's; op.Timeout, when it is the earlier deadline,
// adds the handed-out body's timer.
//
// Observability: Config.Observer, when set, is called once per attempt and
// once per operation, with ctx, never concurrently for one operation (see
// [Observer]); slog events of the race are logged with ctx too.
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
	h, held := op.Request.(answerHolder)
	switch {
	case c.inline:
		// The primary's first attempt reads the race's copy of op, opr (it
		// ends before Do returns); an attempt that may outlive Do gets a
		// fresh one (detached).
		if held {
			s.ans, s.diag = h.AnswerStorage()
		} else {
			a := new(opAnswer)
			s.ans, s.diag = &a.Storage, &a.Diag
		}
	case held:
		s.ans, s.diag = h.AnswerStorage() // detached copies opr for the first attempt
	default:
		ao := &answerOp{opc: *op}
		s.ans, s.diag, s.opd = &ao.Storage, &ao.Diag, &ao.opc
	}
	s.opr = *op
	s.c, s.ctx, s.base, s.obs = c, ctx, ctx, c.cfg.Observer
	defer s.release()
	if ctx.Done() != nil {
		// Attempts carry ctx's values but not its cancellation, which
		// reaches them through the race (harvest window, §6.5 #7). A ctx
		// that can never end is its own WithoutCancel.
		s.base = context.WithoutCancel(ctx)
	}

	now := s.clockAt(t0)
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
			s.dl, s.hasDL, s.opDeadline = dl, true, true
		}
	}
	e := &s.eff
	e.n = 0
	c.begin(ctx, e, &s.race, now, &s.opr, deadline)
	if !s.race.Done() {
		if c.inline {
			s.runInline(e)
		} else {
			s.perform(e)
			s.loop()
		}
	}
	s.shutdown()
	if s.opr.HubRegionProcessingOnly {
		// The race fanned a 1002 discovery into the operation (§9.6.7):
		// the caller's next attempt of op goes to the hub region.
		op.HubRegionProcessingOnly = true
	}
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

// doPool recycles the engine of Do (see doState) between operations,
// outside synctest bubbles.
var doPool = sync.Pool{New: func() any { return newDoState() }}

// getDoState returns a pooled engine, or a fresh one inside a synctest
// bubble (detected from now, a reading of time.Now).
func getDoState(now time.Time) *doState {
	if !hasMonotonic(now) {
		s := newDoState()
		s.bubbled = true
		return s
	}
	return doPool.Get().(*doState)
}

func newDoState() *doState {
	s := &doState{results: make(chan uint8, maxSlots), loopDone: make(chan struct{}, 1)}
	s.wakeFn, s.ctxFn = s.takeByTimer, s.takeByCtx
	for i := range s.slots {
		sl := &s.slots[i]
		sl.s, sl.idx = s, uint8(i)
		sl.runFn = sl.run // made once per engine: go sl.runFn() allocates nothing
	}
	s.timers = s.tbuf[:0]
	return s
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

// doState is the engine of one call of Do: the race, the attempt slots,
// the timers and the result channel. It is pooled, so nothing Do hands out
// (the Response, a body, an attempt's context, the Operation a transport
// reads) points into it: those are made fresh for every operation (answer,
// and one context per attempt), release clears every reference the engine
// holds to them, and an engine that an abandoned attempt's goroutine may
// still touch is never reused.
type doState struct {
	c *Client
	// opr is the race's copy of the caller's operation: the race may set
	// its HubRegionProcessingOnly (§9.6.7), which Do copies back to the
	// caller's. Keeping the race off the caller's pointer lets a caller's
	// Operation stay on its stack. The inline primary's first attempt
	// (Client.inline) reads opr too: the race writes it only once both
	// legs delivered (a both-transient 1002, §9.6.7), when no attempt on
	// the caller's goroutine is running; a second copy would cost a copy
	// and a clearing per operation.
	opr Operation
	// opd is the copy every attempt that may outlive Do reads, made fresh
	// for the operation (with the answer, or by detached when the first
	// such attempt starts).
	opd *Operation
	ans *answer.Storage[Response] // this operation's fresh part
	// diag is where the Response's diagnostics are copied (beside ans in
	// Do's own answer); nil when op.Request holds the answer and never
	// reads them (answerHolder).
	diag  *HedgeDiagnostics
	ctx   context.Context
	base  context.Context // the parent of the attempts' contexts: ctx without its cancellation
	dl    time.Time       // the operation's deadline, seen by attempts
	hasDL bool
	// opDeadline: dl comes from op.Timeout (earlier than ctx's deadline),
	// so a handed-out body needs its own timer to end at dl.
	opDeadline bool
	race       Race
	// eff holds the effects of the latest call into the race, performed
	// before the next call (one Effects for every call, as Begin asks of a
	// driver: no copy of its 392 bytes per call).
	eff   Effects
	begin time.Duration // core time of Begin
	last  time.Duration // latest core time passed to the race (kept monotonic)

	// results carries the index of a slot whose attempt returned; its
	// capacity equals the number of slots, so an attempt never blocks.
	results chan uint8
	slots   [maxSlots]attemptSlot
	used    int // slots[:used] have run an attempt of this operation
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

	obs        Observer
	win        answer.Canceller // cancels the winner's attempt context
	lastBody   io.ReadCloser    // body of the latest transient result the race saw
	lastCancel answer.Canceller // cancels lastBody's attempt context
	cancelled  [4]int           // cancellations by CancelReason
	abandoned  int              // attempts still running when the race ended

	bubbled bool // created inside a synctest bubble: never pooled

	// The inline shape (Client.inline, see runInline): while the caller's
	// goroutine runs the primary's first attempt, a callback — the wake
	// timer at the earliest pending timer, or ctx's end — may take the
	// race over and drive it (loop) until it is done. mode says who
	// drives; whoever moves it from modeInline (compare-and-swap) owns the
	// race, so the hand-over takes no lock. What a callback reads of the
	// engine (wakeAt) is written before mode becomes modeInline.
	mode   atomic.Uint32
	taker  uint8         // the callback that took the race over (modeDispatcher); written by it
	wake   *time.Timer   // AfterFunc timer of the inline phase; nil until first needed
	wakeOn bool          // wake was armed for this operation
	wakeAt time.Duration // when this operation needs wake to fire (core time)
	// wakeDue bounds from above when wake, last armed, fires (core time);
	// wakeFired is set by wake's callback when it runs. An operation whose
	// wake time is no earlier than a pending wakeDue leaves the timer as it
	// is (see armWake).
	wakeDue   time.Duration
	wakeFired atomic.Bool
	woke      time.Duration // > 0: loop starts as if a timer fired at woke
	wakeFn    func()        // s.takeByTimer, bound once per engine
	ctxFn     func()        // s.takeByCtx, bound once per engine
	stopCtx   func() bool   // unregisters ctxFn from ctx; nil when not registered
	loopDone  chan struct{} // the taker's loop ended (capacity 1)
	spoiled   bool          // a callback may still touch the engine: never pooled
}

// Who drives the race of an inline operation.
const (
	modeCaller     uint32 = iota // the caller's goroutine (no callback can take over)
	modeInline                   // the caller is in the primary's Send; a callback may take over
	modeDispatcher               // a callback took over and runs loop
)

// Callbacks that may take an inline operation over.
const (
	takerTimer uint8 = iota + 1
	takerCtx
)

// opAnswer is the part of an operation that Do hands out, fresh for every
// operation in one object: the Response, its diagnostics, the body handed
// to the caller and the context of the primary's first attempt when it
// runs on the caller's goroutine (Client.inline). Do allocates it, unless
// op.Request holds the answer (answerHolder).
type opAnswer struct {
	answer.Storage[Response]
	Diag HedgeDiagnostics
}

// answerHolder is an op.Request that carries the operation's answer, and
// a place for its diagnostics unless it never reads them (hedginghttp's
// RoundTrip hands its caller an http.Response, never the Response).
type answerHolder = answer.Holder[Response, HedgeDiagnostics]

// answerOp is an answer with the copy of the Operation the attempts read,
// in one object: what Do allocates when every attempt may outlive it (a
// transport that is not Cancellable).
type answerOp struct {
	opAnswer
	opc Operation
}

// detached returns the copy of the operation that an attempt which may
// outlive Do reads, making it on first use (inline operations).
func (s *doState) detached() *Operation {
	if s.opd == nil {
		s.opd = new(Operation)
		*s.opd = s.opr
	}
	return s.opd
}

// transportOp is the copy of the operation the transport was given (the
// OperationEvent's): the detached one once made, else the race's, which
// the inline primary read. The race marks its copy only once both legs
// ended transient, so the alternate ran, on a goroutine, reading opd: the
// event reports op as Do received it.
func (s *doState) transportOp() *Operation {
	if s.opd != nil {
		return s.opd
	}
	return &s.opr
}

type pendingTimer struct {
	at   time.Duration
	kind TimerKind
}

// attemptSlot is one attempt goroutine's mailbox. A slot is reused once its
// attempt delivered; every attempt gets a new context.
type attemptSlot struct {
	s         *doState
	idx       uint8  // the slot's index in s.slots
	runFn     func() // sl.run, bound once when the engine is made
	busy      bool
	state     atomic.Uint32 // slotRunning, slotDelivered or slotAbandoned
	a         Attempt
	op        *Operation       // the copy of the operation the attempt reads
	ctx       context.Context  // this attempt's context
	cancel    answer.Canceller // cancels ctx
	cancelled bool             // the race cancelled the attempt
	res       Result
	sent      time.Duration // core time at which the attempt was started
	at        time.Duration // core time at which Send returned
}

// stop cancels the slot's current attempt for the race, with cause.
func (sl *attemptSlot) stop(cause error) {
	if !sl.cancelled {
		sl.cancelled = true
		sl.cancel.Cancel(cause)
	}
}

// clock reads the driver clock (see Client.Now). Outside a synctest bubble
// it reads the monotonic clock alone (time.Since of a monotonic reading
// skips time.Now's wall-clock read).
func (s *doState) clock() time.Duration {
	if s.bubbled {
		return clockNow()
	}
	return time.Since(processEpoch)
}

// clockAt converts t, a reading of time.Now, to the driver clock: clockAt's
// conversion, with the bubble test getDoState made for this engine (one
// test of t's monotonic reading per operation, not two).
func (s *doState) clockAt(t time.Time) time.Duration {
	if s.bubbled {
		return t.Sub(bubbleEpoch)
	}
	return t.Sub(processEpoch)
}

// at returns a core time for an event that happened at t, never earlier than
// a time already passed to the race.
func (s *doState) at(t time.Duration) time.Duration {
	if t > s.last {
		s.last = t
	}
	return s.last
}

// cause is the cancellation cause an attempt cancelled for reason sees.
func (s *doState) cause(reason CancelReason) error {
	switch reason {
	case CancelDeadline:
		return context.DeadlineExceeded
	case CancelAppCanceled:
		if err := context.Cause(s.ctx); err != nil {
			return err
		}
	}
	return context.Canceled
}

// perform carries out the effects of one call into the race.
func (s *doState) perform(e *Effects) {
	for i := 0; i < e.Len(); i++ {
		a := e.At(i)
		switch a.Kind {
		case ActSend:
			s.start(a.Attempt)
		case ActCancel:
			for j := range s.slots {
				if sl := &s.slots[j]; sl.busy && sl.a.Leg == a.Leg {
					sl.stop(s.cause(a.Reason))
					s.cancelled[a.Reason]++
				}
			}
		case ActTimer:
			s.timers = append(s.timers, pendingTimer{at: a.At, kind: a.Timer})
		}
	}
}

// start runs attempt a on a new goroutine with a new context.
func (s *doState) start(a Attempt) {
	sl := s.claim(a, false)
	sl.op = s.detached()
	go sl.runFn()
}

// claim readies a free slot for attempt a, with a new context, and counts
// it as running; the caller runs it (start, or runInline on the caller's
// goroutine). inline: the attempt is the inline primary's, whose context is
// the answer's inlineCtx.
func (s *doState) claim(a Attempt, inline bool) *attemptSlot {
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
	s.used = max(s.used, i+1)
	sl.busy, sl.a, sl.sent = true, a, s.last
	sl.state.Store(slotRunning)
	sl.cancelled = false
	if inline {
		x := &s.ans.Ctx
		x.Init(s.base, s.dl, s.hasDL)
		sl.ctx, sl.cancel = x, answer.Canceller{X: x}
	} else {
		ctx, cancel := context.WithCancelCause(s.base)
		sl.ctx, sl.cancel = ctx, answer.Canceller{F: cancel}
		if s.hasDL {
			sl.ctx = &deadlineCtx{Context: ctx, deadline: s.dl}
		}
	}
	s.running++
	return sl
}

// runInline drives an operation whose transport returns on cancel
// ([Cancellable]) from Begin's effects e: the primary's first attempt runs
// on the caller's goroutine, and nothing else exists unless a timer (the
// threshold, the deadline) is due or ctx ends while it runs. Then the
// callback that notices (the wake timer's, or ctx's context.AfterFunc)
// takes the race over and drives it with loop, exactly as the caller would
// have (spec §6.5 goal 6: the alternate's goroutine is started only when
// the threshold fires); the caller, once its Send returns, delivers the
// result like any attempt and waits for that loop to end. When the Send
// returns first, the caller stops the callbacks and goes on driving the
// race itself: on the happy path it feeds the result straight to the race.
func (s *doState) runInline(e *Effects) {
	var sl *attemptSlot
	for i := 0; i < e.Len(); i++ {
		switch a := e.At(i); a.Kind {
		case ActSend:
			if sl == nil {
				sl = s.claim(a.Attempt, true)
				sl.op = &s.opr
			} else {
				s.start(a.Attempt) // cannot happen: Begin sends the primary only
			}
		case ActTimer:
			s.timers = append(s.timers, pendingTimer{at: a.At, kind: a.Timer})
		}
	}
	if sl == nil {
		s.loop()
		return
	}
	watch := s.ctx.Done() != nil
	callbacks := len(s.timers) > 0 || watch
	if callbacks {
		// Once mode is modeInline a callback may take the race over and
		// change its state (timers, last): what the caller needs of it is
		// read before, and wakeAt, which a callback reads, written before.
		// A callback that runs before mode is modeInline finds nothing to
		// do, so the callbacks are armed after.
		wake := len(s.timers) > 0
		var d time.Duration
		if wake {
			s.wakeAt = s.nextTimer()
			d = s.wakeAt - s.last // the clock of Begin: the wake fires no earlier than wakeAt
		}
		s.mode.Store(modeInline)
		if wake {
			s.armWake(d)
		}
		if watch {
			s.stopCtx = context.AfterFunc(s.ctx, s.ctxFn)
		}
	}
	res := sl.send(s)
	at := s.clock()
	took := !callbacks || s.mode.CompareAndSwap(modeInline, modeCaller)
	sl.res, sl.at = res, at
	sl.state.Store(slotDelivered)
	if !took {
		// A callback drives the race: deliver as an attempt goroutine
		// does, and wait for its loop to end (which orders its writes,
		// taker's included, before ours).
		s.results <- sl.idx
		<-s.loopDone
		taker := s.taker
		s.taker = 0
		s.mode.Store(modeCaller) // a stray callback finds nothing to do
		s.quiesce(taker)
		return
	}
	if callbacks {
		s.quiesce(0)
	}
	if !s.due(at) && s.ctx.Err() == nil {
		// Nothing else happened by the time Send returned: the loop would
		// feed this result alone, at once.
		s.running--
		s.respond(sl)
	} else {
		s.results <- sl.idx // the loop orders it against timers and ctx
	}
	if !s.race.Done() {
		s.loop()
	}
}

// nextTimer returns the due time of the earliest pending timer (there is
// one).
func (s *doState) nextTimer() time.Duration {
	next := s.timers[0].at
	for _, t := range s.timers[1:] {
		next = min(next, t.at)
	}
	return next
}

// armWake makes the wake timer fire no later than wakeAt, the earliest
// pending timer, once mode is modeInline. A wake still pending from an
// earlier operation of this engine that fires by then is left as it is
// (outside synctest bubbles, quiesce leaves it armed): re-arming a timer
// costs a heap update per request, and a wake that fires before wakeAt
// only starts the race's loop early (takeover), which then arms the timer
// the race asked for. wakeFired is read after mode became modeInline: a
// callback that ran before that set it first, so the timer is re-armed.
//
// armWake runs after mode became modeInline, when a callback may already
// drive the race: it reads nothing the race changes (d, wakeAt's distance
// from Begin's clock, is computed before).
func (s *doState) armWake(d time.Duration) {
	if s.wake != nil && !s.bubbled && !s.wakeFired.Load() && s.wakeDue <= s.wakeAt {
		s.wakeOn = true
		return
	}
	s.wakeFired.Store(false)
	if s.wake == nil {
		s.wake = time.AfterFunc(d, s.wakeFn)
	} else {
		s.wake.Reset(d)
	}
	// The timer fires about d after now: no later than this bound.
	s.wakeDue = s.clock() + d
	s.wakeOn = true
}

func (s *doState) takeByTimer() {
	s.wakeFired.Store(true)
	s.takeover(takerTimer)
}
func (s *doState) takeByCtx() { s.takeover(takerCtx) }

// takeover is the wake timer's and ctx's callback during the inline phase:
// unless the caller's Send has returned (or the other callback took over),
// it drives the race to its end and signals loopDone, its last touch of the
// engine.
func (s *doState) takeover(by uint8) {
	if !s.mode.CompareAndSwap(modeInline, modeDispatcher) {
		return
	}
	s.taker = by
	if by == takerTimer && s.clock() >= s.wakeAt {
		s.woke = s.wakeAt // not an early fire (a wake armed for an earlier operation)
	}
	s.loop()
	s.loopDone <- struct{}{}
}

// quiesce unregisters the inline phase's callbacks once the caller drives
// the race again (mode is modeCaller), or once taker's loop ended. A ctx
// callback that can no longer be stopped may still run (and find nothing
// to do): the engine is then never reused. The wake timer is left armed
// (outside synctest bubbles): stopping it and arming it again for the next
// operation would re-add it to the runtime's timer heap, which wakes the
// network poller (a syscall per request), while re-arming an armed timer
// later does not. A late fire finds no inline operation (nothing to do),
// or takes the engine's next inline operation over before its timer is
// due, which only starts its loop early: takeover is correct whenever the
// caller's Send has not returned.
//
// Of the shapes weighed (README, "Benchmarks"), this is the cheapest that
// is correct. Stopping the timer here costs the netpoller wake of each
// re-add. A timer made lazily, once a request outlives a fraction of its
// threshold, needs something already running to notice that: another
// timer (a shared one stays in a P's timer heap, as this one does, and
// adds a registration per request), or a goroutine, which is what the
// inline shape avoids. What remains of this one, the P's timer check
// reading the clock while its heap is not empty, is paid by any process
// that has a timer at all (an idle connection's, a server's deadline).
func (s *doState) quiesce(taker uint8) {
	if s.wakeOn {
		s.wakeOn = false
		if s.bubbled {
			s.wake.Stop() // a bubbled engine is never reused
		}
	}
	if s.stopCtx != nil {
		if !s.stopCtx() && taker != takerCtx {
			s.spoiled = true
		}
		s.stopCtx = nil
	}
}

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
	return s.c.cfg.Transport.Send(sl.ctx, sl.op, sl.a)
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
		// now is a lower bound of the current time known without reading
		// the clock: the due time of the timer that fired, or the latest
		// stamp of a delivered result. A timer due after it fires on the
		// next round.
		var now time.Duration
		cancelled := false
		if s.woke > 0 {
			// The wake timer, due at woke, took the race over (takeover):
			// it stands for the first round's timer.
			now, s.woke = s.woke, 0
		} else {
			s.arm()
			var timerC <-chan time.Time
			if s.armed {
				timerC = s.timer.C
			}
			select {
			case i := <-s.results:
				s.deliverLater(i)
			case <-timerC:
				s.armed, now = false, s.armedAt
			case <-done:
				cancelled = true
			}
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
				e := s.race.Cancel(s.at(now), s.ctx.Err())
				s.perform(&e)
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
				s.race.TimerFired(&s.eff, s.at(t.at), t.kind)
				s.perform(&s.eff)
			}
		}
	}
}

// respond feeds a delivered slot's result to the race and reports the
// attempt to the observer. Unless the result is the winner's or the latest
// transient one (which may be handed to the caller), it closes the body and
// cancels the attempt's context, which nothing uses any more.
func (s *doState) respond(sl *attemptSlot) {
	a, res, at, cancel := sl.a, sl.res, sl.at, sl.cancel
	seen := !sl.cancelled // the race ignores the result of a cancelled attempt
	sl.busy, sl.res = false, Result{}
	keep := false
	if !s.race.Done() {
		noted := s.race.transients
		s.race.Responded(&s.eff, s.at(at), &a, &res)
		s.perform(&s.eff)
		if w, ok := s.race.Winner(); s.race.Done() && ok {
			if w == a.Leg {
				keep, s.win = true, cancel
			}
		} else if seen && s.race.transients != noted {
			// The race's most recent transient response (its status is
			// the one an error reports): returned with the error if the
			// race ends without a final one.
			s.dropLast()
			if res.Body != nil {
				s.lastBody, s.lastCancel, keep = res.Body, cancel, true
			}
		}
	} else {
		// Decided: a loser's answer that landed as the race ended only adds
		// its RU to the total (ru_charge_total, §10.4).
		s.race.Responded(&s.eff, at, &a, &res)
	}
	if s.obs != nil {
		s.obs.ObserveAttempt(s.ctx, AttemptEvent{Attempt: a, Result: res, Latency: at - sl.sent})
	}
	if !keep {
		closeBody(res.Body)
		cancel.Cancel(context.Canceled)
	}
}

// dropLast closes the latest transient body kept and cancels its attempt's
// context.
func (s *doState) dropLast() {
	if s.lastBody != nil {
		closeBody(s.lastBody)
		s.lastCancel.Cancel(context.Canceled)
		s.lastBody, s.lastCancel = nil, answer.Canceller{}
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
	if s.armed {
		// Only an armed timer can still fire: one that is not was stopped
		// (arm) or fired and was received (loop), and Stop would find
		// nothing to do (~100 instructions on every later operation of an
		// engine whose loop once armed it).
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
		sl.stop(context.Canceled)
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

// outcome builds Do's return values from the finished race, handing the
// winner's body (or, on an error, the latest transient body) to the caller.
func (s *doState) outcome() (*Response, error) {
	r := &s.race
	res, err := r.Result()
	if s.obs != nil {
		s.observeOperation(err)
	}
	if err != nil {
		var he *Error
		if s.lastBody != nil && errors.As(err, &he) && he.Status != (Status{}) {
			he.Body = s.hand(s.lastBody, s.lastCancel)
			s.lastBody, s.lastCancel = nil, answer.Canceller{}
		}
		s.dropLast()
		return nil, err
	}
	s.dropLast()
	w, _ := r.Winner()
	ans := s.ans
	ans.Resp = Response{
		Result:        res,
		Leg:           w,
		Endpoint:      r.Endpoint(w),
		Region:        r.Endpoint(w).Region,
		RequestCharge: r.RequestCharge(),
		Elapsed:       r.DoneAt() - s.begin,
	}
	ans.Resp.Result.Body = s.hand(res.Body, s.win)
	if d, ok := r.Diagnostics(); ok && s.diag != nil {
		*s.diag = *d
		ans.Resp.Diagnostics = s.diag
	}
	return &ans.Resp, nil
}

// release clears every reference the engine holds to this operation and
// returns it to the pool, unless an abandoned attempt may still touch it.
func (s *doState) release() {
	if s.abandoned > 0 || s.bubbled || s.spoiled {
		return // the abandoned goroutines or callbacks keep it alive; never reused
	}
	if s.opr.ExcludeRegions != nil || s.race.altUsed {
		// The actions' Excluded sets: the caller's op.ExcludeRegions, or
		// the alternate's set made from it (the rest of an action is
		// configuration).
		for i := range s.eff.a {
			s.eff.a[i].Attempt.Excluded = nil
		}
	}
	// Only the parts of the race that refer to this operation (its
	// context, op, results and their bodies, op's slices) are cleared;
	// diag and scratch hold configuration values only, and Begin
	// overwrites what it reads of them.
	s.race.raceState = raceState{}
	s.race.legs[Primary] = legState{}
	if s.race.altUsed { // else Begin's zero: the happy path skips ~230 B
		s.race.legs[Alternate] = legState{}
		s.race.altUsed = false
	}
	s.race.cleared = true // Begin need not clear them again
	s.c, s.ans, s.diag, s.ctx, s.base, s.obs = nil, nil, nil, nil, nil, nil
	s.opr, s.opd = Operation{}, nil
	s.win, s.lastBody, s.lastCancel = answer.Canceller{}, nil, answer.Canceller{}
	s.dl, s.hasDL, s.opDeadline = time.Time{}, false, false
	s.cancelled = [4]int{}
	for i := range s.slots[:s.used] {
		sl := &s.slots[i]
		sl.a, sl.op, sl.ctx, sl.cancel, sl.res = Attempt{}, nil, nil, answer.Canceller{}, Result{}
	}
	s.used = 0
	if cap(s.timers) > len(s.tbuf) {
		s.timers = s.tbuf[:0]
	}
	doPool.Put(s)
}

// hand returns body, the result of the attempt whose context cancel
// cancels, as the caller receives it: tied to ctx and to the operation's
// deadline, and released on Close (see answer.Body). Without a body the
// attempt's context is cancelled at once.
func (s *doState) hand(body io.ReadCloser, cancel answer.Canceller) io.ReadCloser {
	if !cancel.Set() {
		return body // not an attempt's result (cannot happen)
	}
	if body == nil {
		cancel.Cancel(context.Canceled)
		return nil
	}
	b := &s.ans.Body
	b.RC, b.Cancel = body, cancel
	if ctx := s.ctx; ctx.Done() != nil {
		b.StopCtx = context.AfterFunc(ctx, func() { cancel.Cancel(context.Cause(ctx)) })
	}
	if s.opDeadline {
		b.Timer = time.AfterFunc(time.Until(s.dl), func() { cancel.Cancel(context.DeadlineExceeded) })
	}
	return b
}

// deadlineCtx is an attempt's context when the operation has a deadline:
// the attempt's cancellable context, reporting that deadline. The race, not
// the context, enforces it (attempts in flight are harvested past it, §6.5
// #7) and cancels the context with cause context.DeadlineExceeded when the
// deadline ends the attempt; Err then reports context.DeadlineExceeded, as
// it does for a context whose deadline passed. Contexts derived from it find
// the embedded cancellable context through Value and register with it
// directly (no goroutine).
type deadlineCtx struct {
	context.Context
	deadline time.Time
}

// Deadline returns the operation's deadline.
func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// Err returns nil until the attempt is cancelled; then
// context.DeadlineExceeded if the deadline ended it, else context.Canceled.
func (c *deadlineCtx) Err() error {
	err := c.Context.Err()
	if err != nil && errors.Is(context.Cause(c.Context), context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return err
}
