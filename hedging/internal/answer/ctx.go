package answer

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Canceller cancels one attempt's context: F, the context.CancelCauseFunc
// of a context.WithCancelCause context, or X, the inline primary's Ctx
// (held as a pointer, so that passing it around allocates nothing). The
// zero Canceller cancels nothing.
type Canceller struct {
	F context.CancelCauseFunc
	X *Ctx
}

// Cancel cancels the attempt's context with cause.
func (c Canceller) Cancel(cause error) {
	if c.X != nil {
		c.X.Cancel(cause)
	} else if c.F != nil {
		c.F(cause)
	}
}

// Set reports whether c cancels a context.
func (c Canceller) Set() bool { return c.F != nil || c.X != nil }

// Ctx is the context of the primary's first attempt when hedging.Client.Do
// runs it on the caller's goroutine (hedging.Cancellable transports); Init
// readies it. It behaves as the
// context.WithCancelCause context of every other attempt, with the
// operation's deadline as its Deadline (the race, not the context, enforces
// it), but is part of the operation's answer, so it costs
// no allocation of its own; and it implements the AfterFunc method that
// the context package looks for in a parent, so a context derived from it
// (net/http derives one per request) registers with it without a children
// map. Err reports context.Canceled, or context.DeadlineExceeded when the
// cause is one; context.Cause reports the cause it was cancelled with.
type Ctx struct {
	parent   context.Context // the operation's base: ctx's values, not its cancellation
	deadline time.Time

	mu sync.Mutex
	// done holds the channel Done returns: made on the first call of Done
	// (under mu), or closedDone when cancelled before; read without mu, as
	// the context package's own cancelCtx reads its channel (the context
	// package asks for it twice when net/http derives a context).
	// It points at ch (made under mu) or at closedDone.
	done atomic.Pointer[chan struct{}]
	ch   chan struct{}
	// firstF is the first AfterFunc registration's function (the common
	// only one), live while registered, neither run nor stopped.
	firstF func()
	state  uint8 // ctxLive, ctxCanceled or ctxDeadline (what Err reports)
	hasDL  bool
	// firstLive: firstF is registered; firstUsed: the first registration
	// slot was taken (never reused).
	firstLive, firstUsed bool
	more                 *laterRegs // later registrations, made on the second

	// inner, set when the cause is not Err's error itself, is a cancelled
	// context.WithCancelCause context carrying the cause, which Value
	// forwards to so that context.Cause finds it.
	inner atomic.Pointer[context.Context]
}

// What Ctx.Err reports.
const (
	ctxLive     uint8 = iota // nil: not cancelled
	ctxCanceled              // context.Canceled
	ctxDeadline              // context.DeadlineExceeded
)

// laterRegs are Ctx's registrations after the first: the second in place
// (net/http's request registers twice, so this is one allocation on the
// happy path), any further ones by pointer.
type laterRegs struct {
	second afterReg
	rest   []*afterReg
}

// afterReg is a later registration of Ctx.AfterFunc.
type afterReg struct {
	f    func()
	live bool // registered, neither run nor stopped
}

// take returns the function to run at cancellation, if it is still live.
func (r *afterReg) take() func() {
	if !r.live {
		return nil
	}
	f := r.f
	r.live, r.f = false, nil
	return f
}

// takeFirst is take for the first registration (c.mu held).
func (c *Ctx) takeFirst() func() {
	if !c.firstLive {
		return nil
	}
	f := c.firstF
	c.firstLive, c.firstF = false, nil
	return f
}

// closedDone is the Done channel of an Ctx cancelled before Done was
// first called.
var closedDone = func() *chan struct{} { c := make(chan struct{}); close(c); return &c }()

// Init readies c for one attempt: parent gives its values (not its
// cancellation), deadline its Deadline when hasDL.
func (c *Ctx) Init(parent context.Context, deadline time.Time, hasDL bool) {
	c.parent, c.deadline, c.hasDL = parent, deadline, hasDL
}

// Deadline reports the operation's deadline, if it has one.
func (c *Ctx) Deadline() (time.Time, bool) { return c.deadline, c.hasDL }

// Done returns a channel closed when the attempt is cancelled.
func (c *Ctx) Done() <-chan struct{} {
	if d := c.done.Load(); d != nil {
		return *d
	}
	c.mu.Lock()
	d := c.done.Load()
	if d == nil {
		c.ch = make(chan struct{})
		d = &c.ch
		c.done.Store(d)
	}
	c.mu.Unlock()
	return *d
}

// Err returns nil until the attempt is cancelled; then
// context.DeadlineExceeded if the deadline ended it, else context.Canceled.
func (c *Ctx) Err() error {
	c.mu.Lock()
	st := c.state
	c.mu.Unlock()
	return stateErr(st)
}

// stateErr is the error Err reports in state st.
func stateErr(st uint8) error {
	switch st {
	case ctxCanceled:
		return context.Canceled
	case ctxDeadline:
		return context.DeadlineExceeded
	}
	return nil
}

// Value returns the value of key in the operation's context (and, once
// cancelled with a cause of its own, what context.Cause needs to find it).
func (c *Ctx) Value(key any) any {
	if in := c.inner.Load(); in != nil {
		if v := (*in).Value(key); v != nil {
			return v
		}
	}
	return c.parent.Value(key)
}

// AfterFunc arranges for f to run once the attempt is cancelled, on the
// goroutine that cancels it (synchronously: the context package's own
// children are cancelled the same way), or at once on a goroutine of its
// own when it is already cancelled. stop unregisters f; it reports whether
// it stopped f from running. The context package calls it for a context
// derived from c.
func (c *Ctx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	if c.state != ctxLive {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	if !c.firstUsed {
		c.firstF, c.firstLive, c.firstUsed = f, true, true
		c.mu.Unlock()
		return func() bool {
			c.mu.Lock()
			stopped := c.takeFirst() != nil
			c.mu.Unlock()
			return stopped
		}
	}
	defer c.mu.Unlock()
	var r *afterReg
	if c.more == nil {
		c.more = &laterRegs{}
		r = &c.more.second
	} else {
		r = &afterReg{}
		c.more.rest = append(c.more.rest, r)
	}
	r.f, r.live = f, true
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return r.take() != nil
	}
}

// Cancel cancels the attempt with cause (context.Canceled when nil): Err
// and context.Cause report it at once; then it runs the functions
// registered with AfterFunc and closes the channel of Done. Later calls
// do nothing.
func (c *Ctx) Cancel(cause error) {
	if cause == nil {
		cause = context.Canceled
	}
	c.mu.Lock()
	if c.state != ctxLive {
		c.mu.Unlock()
		return
	}
	c.state = ctxCanceled
	// context.Canceled, the common cause (a lost race, a closed body),
	// skips errors.Is's walk (its reflection costs ~240 instructions)
	// and the comparison with the error Err reports.
	if cause != context.Canceled {
		if errors.Is(cause, context.DeadlineExceeded) {
			c.state = ctxDeadline
		}
		if cause != stateErr(c.state) {
			in, cancel := context.WithCancelCause(context.Background())
			cancel(cause)
			c.inner.Store(&in)
		}
	}
	f0 := c.takeFirst()
	var more []func()
	if c.more != nil {
		if f := c.more.second.take(); f != nil {
			more = append(more, f)
		}
		for _, r := range c.more.rest {
			if f := r.take(); f != nil {
				more = append(more, f)
			}
		}
	}
	c.more = nil
	c.mu.Unlock()
	if f0 != nil {
		f0()
	}
	for _, f := range more {
		f()
	}
	// Done's channel is closed once the registered functions have run, so
	// whoever sees it closed sees every context derived from c cancelled
	// too (a context.WithCancelCause cancels its children under its lock,
	// before it returns). A channel Done makes meanwhile is this one.
	c.mu.Lock()
	if d := c.done.Load(); d != nil {
		close(*d)
	} else {
		c.done.Store(closedDone)
	}
	c.mu.Unlock()
}
