package feed

import (
	"errors"
	"time"

	"hedgelab/hedging"
)

// ErrCopyLost is the cause a caller cancels the pages in flight of the copy
// that lost a [Whole] race with.
var ErrCopyLost = errors.New("feed: the other copy of the whole operation finished first")

// Whole hedges one feed operation as a unit instead of page by page: the
// per-operation baseline of the research behind spec §17 Q9, which no SDK
// ships (every SDK hedges one page). The primary copy runs the plan pinned
// to the operation's primary region; once the operation's threshold has
// passed without the copy finishing, a second copy runs the whole plan from
// the beginning pinned to the alternate region; the first copy to drain
// every leaf wins and the other is cancelled. Eligibility, the two regions
// and the threshold are the race's own rule ([hedging.Client.PlanHedge] of
// the template with the first leaf's kind and partition, at the first
// Next), so an operation the race would not hedge runs one copy. A copy
// that fails while the alternate copy has not started starts it at once
// (the failover of spec §6.5 #9); the operation fails when both copies
// fail, with the later error.
//
// Like [Driver] it is a deterministic state machine with no clock and no
// I/O: call Next for pages to race (each naming its copy by leg), Deliver
// with each page's outcome, Due for when Next must next be called although
// no page was delivered (the threshold), until Done. Each copy is a
// [Driver] with Config.Pin set, so every invariant of Driver holds per copy.
type Whole struct {
	c       *hedging.Client
	copies  [2]*Driver
	cfg     Config // the alternate copy's
	leaves  []Leaf
	plan    hedging.HedgePlan
	started bool
	start   time.Duration
	spawned bool
	winner  hedging.Leg
	won     bool
	failed  [2]bool
}

// NewWhole returns a whole-operation hedge of leaves on client c under cfg
// (whose Pin it sets per copy). Errors: those of [New] for the plan, and a
// cfg.Pin already set.
func NewWhole(c *hedging.Client, leaves []Leaf, cfg Config) (*Whole, error) {
	if cfg.Pin != "" {
		return nil, errors.New("feed: NewWhole: Config.Pin is set per copy and must be empty")
	}
	if len(leaves) == 0 {
		return nil, errors.New("feed: NewWhole: no leaves")
	}
	w := &Whole{c: c, leaves: leaves}
	var err error
	if w.copies[hedging.Primary], err = New(c, leaves, cfg); err != nil {
		return nil, err
	}
	w.cfg = cfg
	return w, nil
}

// begin plans the hedge at now: the race's rule on the template with the
// first leaf's kind and partition.
func (w *Whole) begin(now time.Duration) {
	w.started, w.start = true, now
	op := w.cfg.Template
	op.Kind, op.Partition = w.leaves[0].Kind, w.leaves[0].Partition
	w.plan = w.c.PlanHedge(now, &op)
	if w.plan.Hedged {
		w.copies[hedging.Primary].cfg.Pin = w.plan.Primary // nothing sent yet
		w.cfg.Pin = w.plan.Alternate
	}
}

// spawn starts the alternate copy.
func (w *Whole) spawn() {
	w.spawned = true
	w.copies[hedging.Alternate], _ = New(w.c, w.leaves, w.cfg)
}

// Due returns when the alternate copy is due (the operation's start plus
// its threshold) while it has not started and may, and false otherwise.
func (w *Whole) Due() (time.Duration, bool) {
	if !w.started || w.spawned || w.won || !w.plan.Hedged || w.plan.Declined || w.failed[hedging.Primary] {
		return 0, false
	}
	return w.start + w.plan.Threshold.Get(), true
}

// Next returns the next page to race at now and the copy it belongs to,
// and false when none may start now. The first call starts the
// operation's clock; a call at or after Due starts the alternate copy.
func (w *Whole) Next(now time.Duration) (hedging.Leg, Page, bool) {
	if !w.started {
		w.begin(now)
	}
	if at, ok := w.Due(); ok && now >= at {
		w.spawn()
	}
	if w.won {
		return 0, Page{}, false
	}
	for _, l := range []hedging.Leg{hedging.Primary, hedging.Alternate} {
		if d := w.copies[l]; d != nil && !w.failed[l] {
			if p, ok := d.Next(now); ok {
				return l, p, true
			}
		}
	}
	return 0, Page{}, false
}

// Deliver hands the outcome of page p of copy leg to the copy's driver at
// now (as [Driver.Deliver]). When it drains the copy, the copy wins: the
// caller then cancels the other copy's pages in flight (whose later
// deliveries return [ErrStale]). Errors: [ErrStale] for a page not in
// flight, or of a copy that lost or failed.
func (w *Whole) Deliver(now time.Duration, leg hedging.Leg, p Page, out Outcome) (Delivery, error) {
	leg &= 1
	d := w.copies[leg]
	if d == nil || w.won || w.failed[leg] {
		return Delivery{}, ErrStale
	}
	del, err := d.Deliver(now, p, out)
	if err != nil || !d.Done() {
		return del, err
	}
	if d.Err() == nil {
		w.won, w.winner = true, leg
		return del, nil
	}
	w.failed[leg] = true
	if leg == hedging.Primary && !w.spawned && w.plan.Hedged && !w.plan.Declined {
		w.spawn()
	}
	return del, nil
}

// Done reports whether the operation has ended: a copy drained every leaf,
// or every copy started failed and no alternate copy may start.
func (w *Whole) Done() bool {
	if w.won {
		return true
	}
	if !w.started {
		return false
	}
	return w.failed[hedging.Primary] && (!w.spawned || w.failed[hedging.Alternate])
}

// NoteSetup records the outcome of a setup stage raced before the
// operation's first page, as [Driver.NoteSetup] (counted on the primary
// copy).
func (w *Whole) NoteSetup(out Outcome) { w.copies[hedging.Primary].NoteSetup(out) }

// Winner returns the copy that drained first, and false when none has.
func (w *Whole) Winner() (hedging.Leg, bool) { return w.winner, w.won }

// Spawned reports whether the alternate copy started.
func (w *Whole) Spawned() bool { return w.spawned }

// Copy returns the driver of copy leg, nil when the copy never started
// (read its Diagnostics and Continuation).
func (w *Whole) Copy(leg hedging.Leg) *Driver { return w.copies[leg&1] }

// Err returns nil when a copy won, and otherwise the error of the copy
// that failed last (a *[LeafError]).
func (w *Whole) Err() error {
	switch {
	case w.won:
		return nil
	case w.failed[hedging.Alternate]:
		return w.copies[hedging.Alternate].Err()
	}
	return w.copies[hedging.Primary].Err()
}

// Unit is what a feed operation hedges: each page request (the spec §16
// Phase 2 unit, what every SDK ships) or the whole operation ([Whole], the
// baseline of spec §17 Q9's study).
type Unit uint8

// Hedge units.
const (
	// UnitPage hedges each page as one race ([Driver]). Default.
	UnitPage Unit = iota
	// UnitOperation hedges the whole operation ([Whole]).
	UnitOperation
)

var unitNames = [...]string{"page", "operation"}

// String returns "page" or "operation".
func (u Unit) String() string { return enumName(unitNames[:], u, "Unit") }

// ParseUnit maps a name written by [Unit.String] to its unit, or returns
// an error naming the unknown value.
func ParseUnit(s string) (Unit, error) { return parseEnum[Unit](unitNames[:], s, "hedge unit") }
