package simnet

// This file holds the run's work limits: what one run is expected to
// send (Config.ExpectedWork, checked by Validate and by the scenario
// loader against its own limit) and the hard cap that ends a run that
// sends more (Run returns ErrWorkLimit). A unit of work is one request:
// every transport attempt of an operation, a feed page, a setup
// (metadata) read or a change-feed poll — first attempts, retries and
// alternates alike — and every try of a background request. So no input
// hangs a run: an operation that is one query of 10⁷ pages counts 10⁷
// units, not one.

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
)

// MaxRunWork is the most units of work (requests: attempts and
// background tries) one run may send. Validate refuses a Config whose
// expected work ([Config.ExpectedWork]) is above it, and Run ends a run
// that sends more (or more than RunOptions.MaxWork) with an error
// wrapping [ErrWorkLimit]: retries, or cold restarts re-reading a change
// feed, can take a run past its expectation. It is the scale of
// MaxOpsLimit: a point read is one unit.
const MaxRunWork = 2_000_000_000

// MaxOperationPages bounds the pages one feed operation may race: a
// query's leaves × its largest page count per leaf (× 2 when the whole
// operation is hedged), the largest fan-out (MaxFeedLeaves) at the default
// page cap (DefaultMaxFeedPages). Above it, one operation alone would be
// minutes of simulation while the operation count looked small.
const MaxOperationPages = MaxFeedLeaves * DefaultMaxFeedPages

// ErrWorkLimit is wrapped by the error of a run that sent more requests
// than its hard cap (MaxRunWork, or RunOptions.MaxWork).
var ErrWorkLimit = errors.New("simnet: the run's work limit was reached")

// Work is a run's expected work by source, in requests (one per race:
// retries and alternates come on top, so the run sends at least this
// many): its own estimate of what the configuration asks for, an upper
// estimate where the run's course decides (polls are counted as if each
// took no time).
type Work struct {
	// Operations is the workload's operations (rate × duration at the
	// highest rate, or MaxOps, or clients × duration / mean think time);
	// FeedOperations the queries and ReadMany calls among them, whose
	// requests are their pages and setup reads.
	Operations, FeedOperations float64
	// Pages is the query and ReadMany pages (of both copies when
	// Feed.HedgeUnit is the operation) and SetupReads the metadata reads
	// before them (the query plan per query, the cold caches' collection
	// and partition-key-range reads per instance).
	Pages, SetupReads float64
	// Polls is the change-feed polls and PollPages their pages: one per
	// polled partition and poll, plus the committed writes in full pages.
	Polls, PollPages float64
	// Background is the background arrivals (rate × window × targeted
	// replicas; retries come on top).
	Background float64
}

// Total returns the expected requests: every source but Polls (a poll's
// requests are its pages) and FeedOperations (theirs are their pages and
// setup reads).
func (w Work) Total() float64 {
	return w.Operations - w.FeedOperations + w.Pages + w.SetupReads + w.PollPages + w.Background
}

// runLength returns how long the run admits arrivals: Duration, or the
// time MaxOps takes at the workload's rate (the shorter of the two).
func (c *Config) runLength() time.Duration {
	w := &c.Workload
	est := math.Inf(1) // seconds
	if c.MaxOps > 0 {
		switch {
		case w.RatePerSec > 0:
			est = float64(c.MaxOps) / w.RatePerSec
		case w.Clients > 0 && w.Think != nil && w.Think.Mean() > 0:
			est = float64(c.MaxOps) * w.Think.Mean() / 1000 / float64(w.Clients)
		}
	}
	if c.Duration > 0 && c.Duration.Seconds() < est {
		return c.Duration
	}
	if math.IsInf(est, 0) || est >= MaxDelay.Seconds() {
		return MaxDelay
	}
	return time.Duration(est * float64(time.Second))
}

// ExpectedWork returns the run's expected work (see [Work]). It needs a
// Config whose other fields are valid.
func (c *Config) ExpectedWork() Work {
	var wk Work
	w := &c.Workload
	length := c.runLength().Seconds()
	switch {
	case w.RatePerSec > 0:
		wk.Operations = w.maxRate() * length
	case w.Clients > 0 && w.Think != nil:
		wk.Operations = float64(w.Clients) * length * 1000 / w.Think.Mean()
	}
	if c.MaxOps > 0 {
		wk.Operations = min(wk.Operations, float64(c.MaxOps))
	}
	if !(wk.Operations >= 0) { // NaN: a think time with mean 0
		wk.Operations = math.Inf(1)
	}
	share := func(kind func(hedging.OperationKind) bool) float64 {
		var all, k float64
		for _, m := range w.Mix {
			all += m.Weight
			if kind(m.Kind) {
				k += m.Weight
			}
		}
		if all == 0 {
			return 0
		}
		return k / all
	}
	nparts := max(w.Partitions, 1)
	for _, b := range c.Background {
		n := 0
		for i := range c.Replicas {
			if c.Replicas[i].Targeted(b.Target) {
				n++
			}
		}
		end := length
		if b.End > 0 {
			end = min(end, b.End.Seconds())
		}
		wk.Background += b.RatePerSec * max(end-b.Start.Seconds(), 0) * float64(n)
	}
	f := c.Feed
	if f == nil {
		return wk
	}
	queries := wk.Operations * share(func(k hedging.OperationKind) bool { return k == hedging.QueryPage })
	readMany := wk.Operations * share(func(k hedging.OperationKind) bool { return k == hedging.ReadManyPage })
	copies := 1.0
	if f.HedgeUnit == feed.UnitOperation {
		copies = 2
	}
	pages := 1.0
	if f.Pages != nil {
		pages = min(max(f.Pages.Mean(), 1), float64(f.maxPages()))
		if !(pages >= 1) {
			pages = float64(f.maxPages())
		}
	}
	n := f.readManyItems()
	wk.Pages = copies * (queries*float64(max(f.FanOut, 1))*pages + readMany*float64(min(n, nparts)+n/feed.MaxReadManyIDs))
	wk.FeedOperations = queries + readMany
	stages := 0.0
	if f.Setup.Collection {
		stages++
	}
	if f.Setup.PKRanges {
		stages++
	}
	cf := &f.ChangeFeed
	if cf.Pollers > 0 && cf.PollInterval > 0 {
		wk.Polls = float64(min(cf.Pollers, nparts)) * (length/cf.PollInterval.Seconds() + 1)
		writes := wk.Operations * share(hedging.OperationKind.IsWrite)
		wk.PollPages = float64(nparts)*(length/cf.PollInterval.Seconds()+1) + writes/float64(f.itemsPerPage())
	}
	wk.SetupReads = stages * min(queries+readMany+wk.Polls, float64(max(c.Fleet.Instances, 1)))
	if f.Setup.QueryPlan {
		wk.SetupReads += queries
	}
	return wk
}

// OperationPages returns the most pages one query may race: its leaves
// (FanOut) × the largest page count per leaf (the upper end of Pages,
// rounded and clamped to 1..MaxPages as the run draws it), × 2 when the
// whole operation is hedged (HedgeUnit). Validate refuses a Feed above
// MaxOperationPages.
func (f *Feed) OperationPages() float64 {
	pages := 1.0
	if f.Pages != nil {
		pages = min(max(math.Round(f.Pages.Quantile(1)), 1), float64(f.maxPages()))
	}
	n := float64(max(f.FanOut, 1)) * pages
	if f.HedgeUnit == feed.UnitOperation {
		n *= 2
	}
	return n
}

// validateWork checks one operation's pages against MaxOperationPages and
// the run's expected work against MaxRunWork.
func (c *Config) validateWork() error {
	if f := c.Feed; f != nil {
		if n := f.OperationPages(); n > MaxOperationPages {
			return fmt.Errorf("simnet: a query may race %.3g pages (Feed.FanOut × the largest page count per leaf); the limit is %d (MaxOperationPages)", n, MaxOperationPages)
		}
	}
	if n := c.ExpectedWork().Total(); !(n <= MaxRunWork) {
		return fmt.Errorf("simnet: the run would send %.3g requests (operations, pages, setup reads, polls, background requests); the limit is %d (MaxRunWork)", n, int64(MaxRunWork))
	}
	return nil
}

// overWork reports whether the run has sent more requests than its hard
// cap allows (checked by the event loop every cancelCheckEvents events),
// and records the error that ends it.
func (s *sim) overWork() bool {
	n := s.stats.Attempts + s.bgTries
	if n <= s.workLimit {
		return false
	}
	s.workErr = fmt.Errorf("%w: %d requests sent (attempts and background tries) by virtual time %v, above the limit of %d; the scenario asks for more work than its configuration predicted (%.3g requests)",
		ErrWorkLimit, n, s.now, s.workLimit, s.cfg.ExpectedWork().Total())
	return true
}

// eventBound is the most events a run of c may process before its work
// invariant fails: a wide margin (8 events an attempt, every attempt a
// leg may make on both legs, 4 times the expected work, plus 2^20) over
// what its configuration leads one to expect.
func (c *Config) eventBound() int64 {
	attempts := float64(cmp.Or(c.Client.Retry.MaxAttempts, 3))
	b := 4*c.ExpectedWork().Total()*8*2*attempts + (1 << 20)
	if b > math.MaxInt64/2 || math.IsNaN(b) {
		return math.MaxInt64 / 2
	}
	return int64(b)
}
