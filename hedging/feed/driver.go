package feed

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"hedgelab/hedging"
)

// DefaultMaxFanOut is the most leaves one feed operation may have when
// Config.MaxFanOut is 0: the Rust driver's default max fan-out (100
// physical partitions).
const DefaultMaxFanOut = 100

// DefaultMaxPinRecoveries is how many times a leaf's pinned chain may
// recover from its pinned region's failure, when Config.MaxPinRecoveries is
// 0.
const DefaultMaxPinRecoveries = 1

// Config configures a [Driver] (spec §16 Phase 2).
type Config struct {
	// Template carries the per-operation settings every page inherits:
	// Strategy, HedgingEnabled, ExcludeRegions, Timeout (per page), Method,
	// Path, Body, Request. Propagating them to every page avoids the .NET
	// ReadMany bug where a per-request strategy was silently dropped. Its
	// Kind, Partition and Continuation are ignored (each leaf sets them).
	Template hedging.Operation
	// Affinity is the page-affinity policy per page kind; a kind not listed
	// takes [DefaultAffinity].
	Affinity map[hedging.OperationKind]Affinity
	// MaxConcurrency is how many leaves may have a page in flight at once;
	// 0 = all leaves.
	MaxConcurrency int
	// MaxFanOut is the most leaves a query, change-feed or metadata plan
	// may have (the Rust driver's max_fan_out); 0 = [DefaultMaxFanOut]. A
	// ReadMany plan (every leaf a ReadManyPage or a PointRead, as
	// [ReadManyPlan] makes) has no cap, as no SDK caps it (.NET bounds its
	// concurrency with a semaphore: set MaxConcurrency).
	MaxFanOut int
	// MaxPinRecoveries is how many times one leaf's pinned chain may
	// recover after its pinned region failed (a cold restart, or a resume
	// by failover; see [Driver]); 0 = [DefaultMaxPinRecoveries].
	MaxPinRecoveries int
	// Gate, when set, is the client's gate on hedge legs in flight (the
	// data plane's, or the metadata budget): every page carries it as
	// Operation.Legs, so a slot is held only while a page's alternate is
	// out. Nil: no gate.
	Gate *Gate
	// Pin, when set, pins every page of every leaf to this region
	// ([hedging.Client.Pin]: no page hedge, no failover), over any affinity
	// policy: one copy of a whole-operation hedge ([Whole]). A page that
	// fails without a response fails its leaf (a cold restart could not
	// leave the region).
	Pin hedging.Region
}

// Page is one page request the driver asks to be raced, the hedge unit of
// spec §16 Phase 2: perform Op as one
// hedge race ([hedging.Client.Do], or Begin and the race methods) and hand
// its outcome back to [Driver.Deliver] with this Page.
type Page struct {
	// Leaf is the index of the leaf in the plan; Epoch counts the leaf's
	// cold restarts; Seq is the page's index within the epoch.
	Leaf, Epoch, Seq int
	// Op is the page's operation: the leaf's kind, partition and current
	// continuation, the template's settings, and, when pinned, the pin's
	// ExcludeRegions.
	Op hedging.Operation
	// Pinned is the region the page is pinned to; "" when not pinned.
	Pinned hedging.Region
	// Resume: the leaf's pinned region failed and this page resumes the
	// chain from the same continuation unpinned (Strategy Disabled: the
	// plain path's sequential failover, as the .NET and Java retry
	// policies fail a change-feed page over).
	Resume bool
}

// Outcome is what one page's race produced (spec §6.4 execute_hedged's
// answer): its returned result (the
// winner's) or its error, and what the driver's policies need to know.
// Build it with [FromResponse] or [FromRace].
type Outcome struct {
	// Result is the returned (winning) result; zero when Err is set.
	Result hedging.Result
	// Err is set when the race produced no final response.
	Err error
	// Region is the region of the endpoint that answered.
	Region hedging.Region
	// Leg is the leg that answered.
	Leg hedging.Leg
	// Legs is how many legs the race sent (1 or 2); Attempts how many
	// transport attempts (retries included; at least 1).
	Legs, Attempts int
	// PrimaryRegion is the race's primary region when it was hedged, "" when
	// hedging was not active.
	PrimaryRegion hedging.Region
	// HedgeRefused: an alternate was due but the gate
	// (Operation.Legs) had no slot ([hedging.HedgeDiagnostics.HedgeRefused]).
	HedgeRefused bool
}

// FromRace returns the outcome of a finished race (Done).
func FromRace(r *hedging.Race) Outcome {
	o := Outcome{Legs: 1, Attempts: r.Attempts()}
	if r.AlternateSpawned() {
		o.Legs = 2
	}
	o.Result, o.Err = r.Result()
	if l, ok := r.Winner(); ok {
		o.Leg, o.Region = l, r.Endpoint(l).Region
	}
	if d, ok := r.Diagnostics(); ok {
		o.PrimaryRegion, o.HedgeRefused = d.PrimaryRegion(), d.HedgeRefused()
	}
	return o
}

// FromResponse returns the outcome of [hedging.Client.Do]. Without hedge
// diagnostics (hedging not active) Attempts is 1, a lower bound.
func FromResponse(resp *hedging.Response, err error) Outcome {
	o := Outcome{Legs: 1, Attempts: 1, Err: err}
	var d *hedging.HedgeDiagnostics
	if err != nil {
		var he *hedging.Error
		if errors.As(err, &he) {
			d = he.Diagnostics
		}
	} else {
		o.Result, o.Leg, o.Region, d = resp.Result, resp.Leg, resp.Region, resp.Diagnostics
	}
	if d != nil {
		o.PrimaryRegion, o.HedgeRefused = d.PrimaryRegion(), d.HedgeRefused()
		o.Attempts = max(1, d.Leg(hedging.Primary).Attempts+d.Leg(hedging.Alternate).Attempts)
		if _, ok := d.AlternateRegion(); ok {
			o.Legs = 2
		}
	}
	return o
}

// served is the region that served the page: the server's word when the
// transport reported it (under redirects it differs from the endpoint).
func (o *Outcome) served() hedging.Region {
	if pg := o.Result.Page; pg != nil && pg.ServedBy != "" {
		return pg.ServedBy
	}
	return o.Region
}

// Diagnostics describe one feed operation (spec §10 and the §16 Phase 2 G2
// caveat): the per-page races' own HedgeDiagnostics stay on each page's
// outcome.
type Diagnostics struct {
	// Pages is the pages delivered with a response, every leaf and epoch.
	Pages int
	// PagesHedged is the pages whose race sent the alternate, delivered or
	// not (a failed page's race counts).
	PagesHedged int
	// AlternateWins is the pages the alternate answered.
	AlternateWins int
	// RegionSwitches counts consecutive pages of one leaf (same epoch)
	// served by different regions.
	RegionSwitches int
	// PagesPinned is the pages sent pinned; PagesGated the pages whose
	// alternate was due but refused by the gate (every slot held by other
	// pages' alternates in flight).
	PagesPinned, PagesGated int
	// ColdRestarts is how many metadata chains restarted cold after their
	// pinned region failed; Resumes how many data-plane chains resumed
	// from their continuation by failover.
	ColdRestarts, Resumes int
	// SetupContacts is the transport attempts of the setup stages
	// (collection, partition-key ranges, query plan) reported with
	// [Driver.NoteSetup] before the first page was sent: contacts the
	// pages' hedge diagnostics never show (§16 G2 caveat).
	SetupContacts int
}

// LeafError is the error of a feed operation whose leaf failed: a page
// ended with a final non-success status, or without a final response and
// with no cold restart left.
type LeafError struct {
	Leaf      int
	Partition string
	// Epoch and Seq identify the failed page.
	Epoch, Seq int
	// Status is the page's final status (zero when Err is set).
	Status hedging.Status
	// Err is the race's error (nil for a final status).
	Err error
}

// Error names the leaf, the page and the cause.
func (e *LeafError) Error() string {
	cause := "status " + e.Status.String()
	if e.Err != nil {
		cause = e.Err.Error()
	}
	return fmt.Sprintf("feed: leaf %d (partition %q) page %d.%d: %s", e.Leaf, e.Partition, e.Epoch, e.Seq, cause)
}

// Unwrap returns Err.
func (e *LeafError) Unwrap() error { return e.Err }

// ErrStale is returned by [Driver.Deliver] for a page that is not in
// flight: delivered already, or of an earlier epoch of its leaf.
var ErrStale = errors.New("feed: page is not in flight (delivered already, or stale)")

// Delivery says what one delivered page did to its leaf.
type Delivery struct {
	// Page is the delivered page.
	Page Page
	// OK: the page returned a response whose continuation was forwarded.
	OK bool
	// Restarted: the leaf's pinned region failed and its (metadata) chain
	// restarted cold: drop what its earlier pages of Page.Epoch delivered.
	Restarted bool
	// Resumed: the leaf's pinned region failed and its chain resumes from
	// the same continuation by failover (the next page); nothing to drop.
	Resumed bool
	// LeafDone: the leaf is drained (no continuation, or a 304).
	LeafDone bool
}

type leafState struct {
	cont       hedging.Continuation
	chain      hedging.ContinuationAffinity // the affinity of the leaf's cursors (its cold page's)
	resume     bool                         // the next page resumes cont unpinned after the pin failed
	policyPin  hedging.Region               // pin set by the affinity policy ("" = none)
	pinnedFrom hedging.Region               // BreakerDriven: the primary whose breaker opened
	epoch, seq int
	restarts   int
	lastRegion hedging.Region // region of the epoch's previous page
	active     bool
	inFlight   bool
	done       bool
}

// Driver runs one feed operation (a query, a ReadMany, a change-feed poll
// or a metadata feed) as a sequence of page races, leaf by leaf (spec §16
// Phase 2, §17 Q9). It is a deterministic state machine: call Next for
// pages to race, Deliver with each page's outcome, until Done. It reads no
// clock and performs no I/O; calls must be serialised.
//
// Invariants: a page is delivered at most once (a second Deliver of it
// returns [ErrStale]); a leaf has at most one page in flight, and its next
// page carries exactly the continuation of the previous page's returned
// (winning) result; leaves are activated in plan order, at most
// MaxConcurrency at a time; a leaf is pinned while its continuation is
// region-affine or its affinity policy pinned it.
//
// When a pinned page fails without a response (its region failed), the
// chain recovers, up to MaxPinRecoveries times per leaf (spec §16 Phase 2,
// as the SDKs do): a metadata chain (the partition-key-range ETag)
// restarts cold, a new epoch with no continuation and no pin (the Rust
// driver's without_orphaned_continuation: a fresh read of the whole map
// loses nothing); a data-plane chain (a change-feed cursor, a query
// continuation) keeps its continuation and resumes by failover: the next
// page carries the same continuation unpinned and unhedged (the plain
// path's failover, as the .NET and Java retry policies fail a change-feed
// page over), and is pinned again to the region that serves it. Restarting
// a change feed cold would deliver its whole log again.
type Driver struct {
	c       *hedging.Client
	cfg     Config
	leaves  []Leaf
	st      []leafState
	nextNew int // first leaf not yet activated
	active  int // activated and not done
	flight  int // pages in flight
	started bool
	err     error
	diag    Diagnostics
}

// New returns a driver for the leaves of one feed operation on client c
// (whose Config.Phase must allow the leaves' kinds, e.g. hedging.Phase2,
// for their pages to be hedged). Errors: more leaves than MaxFanOut, a
// negative setting, an unknown affinity policy, a leaf with an empty partition, a kind that is not a
// read, or a region-affine Start that names no issuing region.
func New(c *hedging.Client, leaves []Leaf, cfg Config) (*Driver, error) {
	if cfg.MaxConcurrency < 0 || cfg.MaxFanOut < 0 || cfg.MaxPinRecoveries < 0 {
		return nil, errors.New("feed: MaxConcurrency, MaxFanOut and MaxPinRecoveries must not be negative")
	}
	if cfg.MaxFanOut == 0 {
		cfg.MaxFanOut = DefaultMaxFanOut
	}
	if cfg.MaxPinRecoveries == 0 {
		cfg.MaxPinRecoveries = DefaultMaxPinRecoveries
	}
	if len(leaves) > cfg.MaxFanOut && !readMany(leaves) {
		return nil, fmt.Errorf("feed: %d leaves exceed the fan-out cap MaxFanOut=%d", len(leaves), cfg.MaxFanOut)
	}
	if cfg.MaxConcurrency == 0 || cfg.MaxConcurrency > len(leaves) {
		cfg.MaxConcurrency = len(leaves)
	}
	for kind, a := range cfg.Affinity {
		if a >= numAffinities {
			return nil, fmt.Errorf("feed: Config.Affinity[%v]: unknown policy %v", kind, a)
		}
	}
	d := &Driver{c: c, cfg: cfg, leaves: leaves, st: make([]leafState, len(leaves))}
	for i, l := range leaves {
		switch {
		case l.Partition == "":
			return nil, fmt.Errorf("feed: leaf %d: empty partition", i)
		case !pageKind(l.Kind):
			return nil, fmt.Errorf("feed: leaf %d: kind %v is not a read", i, l.Kind)
		case l.Start.Affinity == hedging.RegionAffine && !l.Start.Cold() && l.Start.IssuedBy == "":
			return nil, fmt.Errorf("feed: leaf %d: region-affine start continuation names no issuing region", i)
		}
		d.st[i].cont, d.st[i].chain = l.Start, l.Start.Affinity
	}
	return d, nil
}

// readMany reports whether leaves is a ReadMany plan: every leaf a
// ReadManyPage or a PointRead (a one-id group).
func readMany(leaves []Leaf) bool {
	for _, l := range leaves {
		if l.Kind != hedging.ReadManyPage && l.Kind != hedging.PointRead {
			return false
		}
	}
	return true
}

// pageKind reports whether kind can be a feed page: a read of the Phase 2
// set (spec §5.1 †) or a point read (a one-item ReadMany group).
func pageKind(kind hedging.OperationKind) bool {
	switch kind {
	case hedging.PointRead, hedging.QueryPage, hedging.ReadManyPage, hedging.ChangeFeedPage, hedging.MetadataRead, hedging.QueryPlan:
		return true
	}
	return false
}

// affinity returns the policy of kind.
func (d *Driver) affinity(kind hedging.OperationKind) Affinity {
	if a, ok := d.cfg.Affinity[kind]; ok {
		return a
	}
	return DefaultAffinity(kind)
}

// pin returns the region leaf i's next page is pinned to, "" for none: the
// issuing region of a region-affine continuation, else the policy's pin;
// none for a page that resumes after its pinned region failed.
func (s *leafState) pin() hedging.Region {
	if s.resume {
		return ""
	}
	if s.cont.Affinity == hedging.RegionAffine && !s.cont.Cold() {
		return s.cont.IssuedBy
	}
	return s.policyPin
}

// Next returns the next page to race at now, and false when none may start
// now: every active leaf has a page in flight, the rest wait for a
// concurrency slot, the operation failed, or it is done. Call it until it
// returns false after every Deliver.
func (d *Driver) Next(now time.Duration) (Page, bool) {
	if d.err != nil {
		return Page{}, false
	}
	for d.active < d.cfg.MaxConcurrency && d.nextNew < len(d.leaves) {
		d.st[d.nextNew].active = true
		d.nextNew++
		d.active++
	}
	for i := range d.nextNew {
		s := &d.st[i]
		if !s.active || s.inFlight || s.done {
			continue
		}
		l := &d.leaves[i]
		if s.policyPin != "" && d.affinity(l.Kind) == BreakerDriven &&
			!d.c.HedgeWinTracker().Unhealthy(now, l.Partition, s.pinnedFrom) {
			s.policyPin, s.pinnedFrom = "", "" // the breaker let the primary back
		}
		p := Page{Leaf: i, Epoch: s.epoch, Seq: s.seq, Pinned: cmp.Or(d.cfg.Pin, s.pin()), Resume: s.resume}
		p.Op = d.cfg.Template
		p.Op.Kind, p.Op.Partition, p.Op.Continuation = l.Kind, l.Partition, s.cont
		if d.cfg.Gate != nil {
			p.Op.Legs = d.cfg.Gate
		}
		if l.Request != nil {
			p.Op.Request = l.Request
		}
		switch {
		case p.Pinned != "":
			d.c.Pin(&p.Op, p.Pinned)
			d.diag.PagesPinned++
		case p.Resume:
			p.Op.Strategy = hedging.Disabled
		}
		s.inFlight = true
		d.flight++
		d.started = true
		return p, true
	}
	return Page{}, false
}

// Deliver hands the outcome of page p's race to the driver at now and
// returns what it did to the leaf. Only the outcome's (the winner's)
// continuation is forwarded. Errors: [ErrStale] for a page not in flight
// (nothing changes). A leaf failure is not an error of Deliver: it ends the
// operation, reported by Err.
func (d *Driver) Deliver(now time.Duration, p Page, out Outcome) (Delivery, error) {
	if p.Leaf < 0 || p.Leaf >= len(d.st) {
		return Delivery{}, ErrStale
	}
	s := &d.st[p.Leaf]
	if !s.inFlight || p.Epoch != s.epoch || p.Seq != s.seq {
		return Delivery{}, ErrStale
	}
	s.inFlight = false
	d.flight--
	l := &d.leaves[p.Leaf]
	del := Delivery{Page: p}
	if out.Legs > 1 {
		d.diag.PagesHedged++
	}
	if out.HedgeRefused {
		d.diag.PagesGated++
	}
	fail := func(st hedging.Status, err error) {
		if d.err == nil {
			d.err = &LeafError{Leaf: p.Leaf, Partition: l.Partition, Epoch: p.Epoch, Seq: p.Seq, Status: st, Err: err}
		}
		d.finishLeaf(s)
	}
	switch {
	case out.Err != nil && p.Pinned != "" && d.cfg.Pin == "" && s.restarts < d.cfg.MaxPinRecoveries && l.Kind.IsMetadata():
		// The pinned region failed: a metadata chain restarts cold (Rust
		// without_orphaned_continuation).
		s.restarts++
		s.epoch++
		s.seq = 0
		s.cont, s.policyPin, s.pinnedFrom, s.lastRegion = hedging.Continuation{Affinity: s.chain}, "", "", ""
		d.diag.ColdRestarts++
		del.Restarted = true
		return del, nil
	case out.Err != nil && p.Pinned != "" && d.cfg.Pin == "" && s.restarts < d.cfg.MaxPinRecoveries:
		// The pinned region failed: a data-plane chain resumes from its
		// continuation by failover (the .NET and Java retry policies).
		s.restarts++
		s.resume, s.policyPin, s.pinnedFrom = true, "", ""
		d.diag.Resumes++
		del.Resumed = true
		return del, nil
	case out.Err != nil:
		fail(hedging.Status{}, out.Err)
		return del, nil
	case out.Result.Status.Code >= 400:
		fail(out.Result.Status, nil)
		return del, nil
	}
	del.OK = true
	s.resume = false
	d.diag.Pages++
	served := out.served()
	if out.Leg == hedging.Alternate {
		d.diag.AlternateWins++
	}
	if s.lastRegion != "" && served != s.lastRegion {
		d.diag.RegionSwitches++
	}
	s.lastRegion = served
	s.seq++
	s.cont = hedging.Continuation{}
	if out.Result.Page != nil {
		s.cont = out.Result.Page.Continuation
	}
	if s.cont.IssuedBy == "" && !s.cont.Cold() {
		s.cont.IssuedBy = served
	}
	a := d.affinity(l.Kind)
	open := a == BreakerDriven && out.PrimaryRegion != "" && d.c.HedgeWinTracker().Unhealthy(now, l.Partition, out.PrimaryRegion)
	if pin := a.PinAfter(s.policyPin, served, out.Leg, open); pin != s.policyPin {
		s.policyPin = pin
		if open {
			s.pinnedFrom = out.PrimaryRegion
		}
	}
	if s.cont.Cold() || out.Result.Status.Code == 304 {
		d.finishLeaf(s)
		del.LeafDone = true
	}
	return del, nil
}

func (d *Driver) finishLeaf(s *leafState) {
	if !s.done {
		s.done = true
		d.active--
	}
}

// NoteSetup records the outcome of a setup stage of this operation (a
// collection, partition-key-range or query-plan read) raced before its
// first page; its attempts count as SetupContacts until the first page is
// sent, and are ignored after.
func (d *Driver) NoteSetup(out Outcome) {
	if !d.started {
		d.diag.SetupContacts += out.Attempts
	}
}

// Done reports whether the operation has ended: every leaf drained, or a
// leaf failed, and no page in flight.
func (d *Driver) Done() bool {
	return d.flight == 0 && (d.err != nil || d.active == 0 && d.nextNew == len(d.leaves))
}

// InFlight returns the number of pages in flight.
func (d *Driver) InFlight() int { return d.flight }

// Err returns the *[LeafError] that ended the operation, or nil.
func (d *Driver) Err() error { return d.err }

// Continuation returns leaf i's current continuation: after Done, where a
// change-feed consumer resumes the leaf next time.
func (d *Driver) Continuation(i int) hedging.Continuation { return d.st[i].cont }

// Diagnostics returns the operation's feed diagnostics so far.
func (d *Driver) Diagnostics() Diagnostics { return d.diag }
