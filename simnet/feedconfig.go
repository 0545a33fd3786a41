package simnet

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
	"hedgelab/simnet/dist"
)

// Consistency is the account's read consistency level (spec §16 Phase 2
// study: stale pages and the session hedge). It decides what a replica
// that has not applied the newest writes answers to a read.
type Consistency uint8

// Consistency levels.
const (
	// Session (the default, and the model of every run without one): a
	// read whose session token is ahead of the replica's applied LSN gets
	// 404/1002; a read without a token (or behind) is served as the replica
	// stands.
	Session Consistency = iota
	// Eventual: stale reads are allowed; no 404/1002.
	Eventual
	// ConsistentPrefix: as Eventual in this model (every replica applies a
	// prefix of the commit log, so prefixes hold by construction).
	ConsistentPrefix
	// BoundedStaleness: as Eventual, with every replica's lag clamped to
	// Config.StalenessBound.
	BoundedStaleness
	// Strong: every read sees every committed write (no lag).
	Strong
	numConsistencies
)

var consistencyNames = [...]string{"session", "eventual", "consistent_prefix", "bounded_staleness", "strong"}

// String returns the level's scenario name ("session", "eventual",
// "consistent_prefix", "bounded_staleness", "strong").
func (c Consistency) String() string {
	if c < numConsistencies {
		return consistencyNames[c]
	}
	return fmt.Sprintf("Consistency(%d)", uint8(c))
}

// ParseConsistency maps a name written by [Consistency.String] to its
// level, or returns an error naming the unknown value.
func ParseConsistency(s string) (Consistency, error) {
	for i, n := range consistencyNames {
		if n == s {
			return Consistency(i), nil
		}
	}
	return 0, fmt.Errorf("simnet: unknown consistency %q", s)
}

// LagProcess makes replication lag a process per (physical region,
// partition) instead of the constant Config.ReplicationLagMs: a static
// lognormal factor per pair, and episodes. The write (hub) region never
// lags.
type LagProcess struct {
	// Sigma is the log-standard deviation of the per-(region, partition)
	// factor exp(Sigma·Z), Z standard normal (keyed on the seed, region and
	// partition), applied to the region's ReplicationLagMs; 0 = none.
	Sigma float64
	// Episodes raise the lag for a while.
	Episodes []LagEpisode
}

// LagEpisode raises the replication lag of the replicas Target selects to
// LagMs (ms; the larger of it and the base lag applies) from Start to End.
type LagEpisode struct {
	Target     string // a replica name or a physical region (every replica in it)
	Partitions []int  // partition indexes (0 .. Workload.Partitions-1); empty = all
	Start, End time.Duration
	LagMs      float64
}

// CursorScope is what a change-feed cursor means to the service: the
// unknown fact the simulator takes as a parameter (spec §17 Q9; research
// note §5b.4).
type CursorScope uint8

// Cursor scopes.
const (
	// CursorGlobal: a cursor is a global LSN that every region resumes the
	// same way (single-write accounts, if the service does so).
	CursorGlobal CursorScope = iota
	// CursorRegionLocal: a cursor is a region-local LSN; a region resuming
	// another region's cursor reads it in its own numbering, off by
	// ChangeFeed.RegionOffset × (the difference of the two regions'
	// indexes), so it re-delivers or skips that many changes.
	CursorRegionLocal
)

// On304 is what cursor a 304 (not modified) answer of a change-feed page
// hands out.
type On304 uint8

// 304 continuation rules.
const (
	// On304Request: the request's cursor, unchanged.
	On304Request On304 = iota
	// On304ServerCurrent: the serving replica's current position (its
	// applied LSN, in its numbering), which moves the cursor back when the
	// replica lags (.NET keeps whatever ETag the winning region returned,
	// for 200 and 304 alike).
	On304ServerCurrent
)

// MetadataEventKind is a control-plane change that makes cached metadata
// stale.
type MetadataEventKind uint8

// Metadata events.
const (
	// Split: a partition-key range split; a page sent with the old map is
	// answered 410/1002 (PartitionKeyRangeGone).
	Split MetadataEventKind = iota
	// Recreate: the container was deleted and recreated (a new resource
	// id); a page sent with the old one is answered 410/1000
	// (NameCacheIsStale).
	Recreate
)

// MetadataEvent is one control-plane change at At: the metadata version
// (an ordered number, 0 at the start) increases by one.
type MetadataEvent struct {
	At   time.Duration
	Kind MetadataEventKind
}

// Feed configures the feed workloads of a run (spec §16 Phase 2, §17 Q9):
// with Config.Feed set, an operation whose mix kind is QueryPage is a
// (cross-partition) query and one whose kind is ReadManyPage a ReadMany
// call, each run page by page through a [feed.Driver] over the run's
// races; change-feed pollers run beside the workload. Without it those
// kinds stay single point-like races.
type Feed struct {
	// Pages is the number of pages per leaf of a query (rounded, clamped
	// to 1..MaxPages); nil = 1.
	Pages dist.Sampler
	// MaxPages caps Pages (1..MaxFeedPages); 0 = DefaultMaxFeedPages.
	MaxPages int
	// ItemsPerPage is the items of a full query or change-feed page
	// (1..MaxFeedItemsPerPage); 0 = DefaultItemsPerPage.
	ItemsPerPage int
	// RUCover and RUPerItem price a query, ReadMany or change-feed page at
	// RUCover + RUPerItem × items (a ReadMany point read costs the RU
	// table's point_read); both 0 = the RU table's charge of the page kind.
	RUCover, RUPerItem float64
	// FanOut is the leaves (partitions) of a query, 1..Workload.Partitions
	// and at most the driver's fan-out cap; 0 = 1.
	FanOut int
	// MaxConcurrency is the leaves of one operation with a page in flight
	// at once; 0 = all.
	MaxConcurrency int
	// MaxFanOut is the driver's fan-out cap of a query
	// (feed.Config.MaxFanOut, 1..MaxFeedLeaves); 0 = feed.DefaultMaxFanOut.
	// A ReadMany call is not capped (no SDK caps it): MaxConcurrency bounds
	// its leaves in flight.
	MaxFanOut int
	// ReadManyItems is the ids of a ReadMany call, spread round-robin over
	// the partitions from the operation's own (1..MaxFeedItems); 0 =
	// DefaultReadManyItems.
	ReadManyItems int
	// Affinity is the page-affinity policy per page kind (feed.Config).
	Affinity map[hedging.OperationKind]feed.Affinity
	// QueryContinuation is what the client takes a query continuation for
	// (default Portable); RegionAffine pins every later page.
	QueryContinuation hedging.ContinuationAffinity
	// GateCapacity is the per-instance gate on hedge legs in flight
	// (feed.Gate); 0 = no gate.
	GateCapacity int
	// HedgeUnit is what a query or ReadMany operation hedges: each page
	// (feed.UnitPage, the default) or the whole operation
	// (feed.UnitOperation, feed.Whole: a second copy of the page loop
	// pinned to the alternate region after the threshold; no SDK ships
	// it). Change-feed polls always hedge per page.
	HedgeUnit feed.Unit
	// ChangeFeed configures the pollers.
	ChangeFeed ChangeFeed
	// Setup configures the stages before a feed operation's first page.
	Setup Setup
}

// ChangeFeed configures change-feed pollers: each polls its partitions
// every PollInterval, each poll a feed operation that pages every leaf
// until a 304, resuming where the previous poll left each leaf. The commit
// log is the ground truth of what they should deliver.
type ChangeFeed struct {
	// Pollers is the number of pollers (0..MaxPollers); poller j reads the
	// partitions j, j+Pollers, ... and runs on fleet instance j mod
	// Instances.
	Pollers int
	// PollInterval is the pause between the end of a poll and the next
	// (> 0 with Pollers).
	PollInterval time.Duration
	// Scope is what a cursor means to the service; RegionOffset the shift
	// between two adjacent regions' numbering under CursorRegionLocal
	// (0..MaxRegionOffset).
	Scope        CursorScope
	RegionOffset int64
	// On304 is what cursor a 304 hands out.
	On304 On304
	// Continuation is what the client takes the cursor for (Portable:
	// hedged and failed over like a query page, as .NET does; RegionAffine:
	// pinned to the issuing region). Scenario files default to the driver's
	// rule, hedging.DefaultContinuationAffinity(hedging.ChangeFeedPage):
	// RegionAffine.
	Continuation hedging.ContinuationAffinity
}

// Setup configures the stages a feed operation runs before its first page
// (the contacts a page's hedge never sees, .NET PR #5787), each raced by its
// own feed.Driver: the collection and partition-key-range reads are
// metadata reads under feed.MetadataConfig (the race's fixed 1.5 s
// threshold when the policy hedges at all, the metadata budget,
// primary-authoritative answers); the query plan is a data-plane read
// (hedging.QueryPlan: its service time and RU are the query_plan kind's,
// its hedge the policy's, under the data-plane gate).
type Setup struct {
	// Collection and PKRanges read the container and its partition-key
	// ranges into the instance's cache when it is cold (the instance's
	// first feed operation); QueryPlan reads the query plan before every
	// query.
	Collection, PKRanges, QueryPlan bool
	// MetadataLagMs is how long each physical region takes to show a
	// metadata event (ms): a read there before that answers the previous
	// version, which the instance then caches.
	MetadataLagMs map[string]float64
	// Events are the control-plane changes, in any order.
	Events []MetadataEvent
	// MetadataBudget is the per-instance metadata hedge budget (a
	// feed.Gate); 0 = feed.DefaultMetadataBudget.
	MetadataBudget int
	// Latest selects feed.LatestWithGrace(Grace) for the collection and
	// partition-key-range reads: when both legs of a hedged read answered,
	// the instance caches the answer with the larger metadata version among
	// those within Grace of the first clean one, and its setup goes on when
	// the choice is made. False: feed.Fastest. The simulator knows a
	// cancelled leg's answer only when its replica served it before the
	// cancellation arrived; otherwise the read waits the whole Grace for it.
	Latest bool
	Grace  time.Duration
}

// MaxLagSigma bounds LagProcess.Sigma: exp(10·Z) already spans 26 orders
// of magnitude at |Z| = 3.
const MaxLagSigma = 10

// Resource limits of feed workloads: one operation's leaves, pages and ids,
// and the pollers, so a feed workload cannot exhaust memory.
const (
	MaxFeedPages        = 10_000
	DefaultMaxFeedPages = 1_000
	MaxFeedItemsPerPage = 1_000_000
	MaxFeedLeaves       = 1_000
	MaxFeedItems        = 100_000
	MaxPollers          = 1_000
	MaxMetadataEvents   = 10_000
	// MaxRegionOffset bounds ChangeFeed.RegionOffset: above any run's
	// commit log (MaxOpsLimit writes), so every offset the model tells
	// apart is allowed (a cursor moved past its log's end or before its
	// start acts alike however far), and an LSN plus the offset × a
	// region index (< maxCount replicas) cannot overflow int64.
	MaxRegionOffset = 1 << 40
)

// Defaults of Feed's zero fields.
const (
	DefaultItemsPerPage  = 100
	DefaultReadManyItems = 10
)

// maxPages returns the effective page cap.
func (f *Feed) maxPages() int { return cmp.Or(f.MaxPages, DefaultMaxFeedPages) }

// itemsPerPage returns the effective items of a full page.
func (f *Feed) itemsPerPage() int { return cmp.Or(f.ItemsPerPage, DefaultItemsPerPage) }

// fanOutCap returns the driver's effective fan-out cap.
func (f *Feed) fanOutCap() int { return cmp.Or(f.MaxFanOut, feed.DefaultMaxFanOut) }

// readManyItems returns the effective ids per ReadMany call.
func (f *Feed) readManyItems() int { return cmp.Or(f.ReadManyItems, DefaultReadManyItems) }

// validateFeed checks the feed, lag and consistency settings.
func (c *Config) validateFeed() error {
	if c.Consistency >= numConsistencies {
		return fmt.Errorf("simnet: Consistency: unknown %v", c.Consistency)
	}
	if c.StalenessBound < 0 {
		return errors.New("simnet: StalenessBound must be >= 0")
	}
	nparts := max(c.Workload.Partitions, 1)
	if c.feedOn() && nparts > MaxFeedPartitions {
		return fmt.Errorf("simnet: with Feed, Lag or a consistency level set, Workload.Partitions must be <= %d, got %d", MaxFeedPartitions, nparts)
	}
	if l := c.Lag; l != nil {
		if !(l.Sigma >= 0) || l.Sigma > MaxLagSigma {
			return fmt.Errorf("simnet: Lag.Sigma must be in [0, %g], got %g", float64(MaxLagSigma), l.Sigma)
		}
		for i, e := range l.Episodes {
			if !(e.LagMs >= 0) || e.End < e.Start {
				return fmt.Errorf("simnet: Lag.Episodes[%d]: need LagMs >= 0 and End >= Start", i)
			}
			for _, p := range e.Partitions {
				if p < 0 || p >= nparts {
					return fmt.Errorf("simnet: Lag.Episodes[%d]: partition %d out of range 0..%d", i, p, nparts-1)
				}
			}
		}
	}
	f := c.Feed
	if f == nil {
		return nil
	}
	switch {
	case f.MaxPages < 0 || f.MaxPages > MaxFeedPages:
		return fmt.Errorf("simnet: Feed.MaxPages must be in 0..%d, got %d", MaxFeedPages, f.MaxPages)
	case f.ItemsPerPage < 0 || f.ItemsPerPage > MaxFeedItemsPerPage:
		return fmt.Errorf("simnet: Feed.ItemsPerPage must be in 0..%d, got %d", MaxFeedItemsPerPage, f.ItemsPerPage)
	case !(f.RUCover >= 0) || !(f.RUPerItem >= 0):
		return errors.New("simnet: Feed.RUCover and RUPerItem must be >= 0")
	case f.MaxFanOut < 0 || f.MaxFanOut > MaxFeedLeaves:
		return fmt.Errorf("simnet: Feed.MaxFanOut must be in 0..%d, got %d", MaxFeedLeaves, f.MaxFanOut)
	case f.FanOut < 0 || f.FanOut > nparts || f.FanOut > f.fanOutCap():
		return fmt.Errorf("simnet: Feed.FanOut must be in 0..min(Partitions=%d, MaxFanOut=%d), got %d", nparts, f.fanOutCap(), f.FanOut)
	case f.MaxConcurrency < 0:
		return errors.New("simnet: Feed.MaxConcurrency must be >= 0")
	case f.ReadManyItems < 0 || f.ReadManyItems > MaxFeedItems:
		return fmt.Errorf("simnet: Feed.ReadManyItems must be in 0..%d, got %d", MaxFeedItems, f.ReadManyItems)
	case f.GateCapacity < 0:
		return errors.New("simnet: Feed.GateCapacity must be >= 0")
	case f.HedgeUnit > feed.UnitOperation:
		return fmt.Errorf("simnet: Feed.HedgeUnit: unknown unit %v", f.HedgeUnit)
	case f.QueryContinuation > hedging.RegionAffine || f.ChangeFeed.Continuation > hedging.RegionAffine:
		return errors.New("simnet: Feed: unknown continuation affinity")
	}
	for k, a := range f.Affinity {
		if _, err := feed.ParseAffinity(a.String()); err != nil {
			return fmt.Errorf("simnet: Feed.Affinity[%v]: unknown policy %v", k, a)
		}
	}
	cf := f.ChangeFeed
	switch {
	case cf.Pollers < 0 || cf.Pollers > MaxPollers:
		return fmt.Errorf("simnet: Feed.ChangeFeed.Pollers must be in 0..%d, got %d", MaxPollers, cf.Pollers)
	case cf.Pollers > 0 && (nparts+cf.Pollers-1)/cf.Pollers > f.fanOutCap():
		return fmt.Errorf("simnet: Feed.ChangeFeed: %d partitions over %d pollers make more leaves per poll than MaxFanOut %d", nparts, cf.Pollers, f.fanOutCap())
	case cf.Pollers > 0 && cf.PollInterval < time.Millisecond:
		return errors.New("simnet: Feed.ChangeFeed.PollInterval must be >= 1 ms")
	case cf.Scope > CursorRegionLocal || cf.On304 > On304ServerCurrent:
		return errors.New("simnet: Feed.ChangeFeed: unknown scope or 304 rule")
	case cf.RegionOffset < 0 || cf.RegionOffset > MaxRegionOffset:
		return fmt.Errorf("simnet: Feed.ChangeFeed.RegionOffset must be in 0..%d, got %d", int64(MaxRegionOffset), cf.RegionOffset)
	}
	for _, m := range c.Workload.Mix {
		if m.Kind == hedging.ChangeFeedPage {
			return errors.New("simnet: with Feed set, change-feed reads come from Feed.ChangeFeed.Pollers, not the mix")
		}
	}
	st := f.Setup
	if st.MetadataBudget < 0 {
		return errors.New("simnet: Feed.Setup.MetadataBudget must be >= 0")
	}
	if st.Grace < 0 || !st.Latest && st.Grace != 0 {
		return errors.New("simnet: Feed.Setup.Grace must be >= 0, and set only with Latest")
	}
	if len(st.Events) > MaxMetadataEvents {
		return fmt.Errorf("simnet: Feed.Setup.Events: %d events exceed the limit of %d", len(st.Events), MaxMetadataEvents)
	}
	for r, v := range st.MetadataLagMs {
		if !(v >= 0) {
			return fmt.Errorf("simnet: Feed.Setup.MetadataLagMs[%s] must be >= 0", r)
		}
	}
	for i, e := range st.Events {
		if e.At < 0 || e.Kind > Recreate {
			return fmt.Errorf("simnet: Feed.Setup.Events[%d]: need At >= 0 and a known kind", i)
		}
	}
	return nil
}
