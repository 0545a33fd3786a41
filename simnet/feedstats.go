package simnet

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// FeedKindStats are the measurements of one kind of feed operation.
type FeedKindStats struct {
	// Ops counts finished operations; Errors those that failed (a leaf
	// failed, with a final status >= 400 or without a final response, or
	// a setup stage did): Stats.Failed's share of them.
	Ops, Errors int64
	// Latency is the end-to-end latency of each operation, µs (3
	// significant digits), setup stages included.
	Latency *hdr.Histogram
	// SetupSum and TotalSum add up the time before the first page and the
	// whole latency of every operation: the setup-vs-pages breakdown.
	SetupSum, TotalSum time.Duration
}

// SetupShare returns SetupSum / TotalSum (0 without operations).
func (k *FeedKindStats) SetupShare() float64 {
	if k.TotalSum == 0 {
		return 0
	}
	return float64(k.SetupSum) / float64(k.TotalSum)
}

// QuantileMs returns the latency quantile q (0..1) in milliseconds.
func (k *FeedKindStats) QuantileMs(q float64) float64 {
	return float64(k.Latency.ValueAtQuantile(q*100)) / 1000
}

// ShareAtLeast returns the share of the operations whose latency is at
// least ms milliseconds (0 without operations; histogram resolution, 0.1%).
func (k *FeedKindStats) ShareAtLeast(ms float64) float64 {
	above, all := k.CountAtLeast(ms)
	if all == 0 {
		return 0
	}
	return float64(above) / float64(all)
}

// CountAtLeast returns how many operations took at least ms milliseconds
// (histogram resolution, 0.1%) and how many operations there were: the k
// and n of ShareAtLeast, for an exact interval (study.ProportionCI).
func (k *FeedKindStats) CountAtLeast(ms float64) (above, all int64) {
	for _, b := range k.Latency.Distribution() {
		all += b.Count
		if float64(b.From) >= ms*1000 {
			above += b.Count
		}
	}
	return above, all
}

// Feed operation kinds, the indexes of FeedStats.Kinds.
const (
	FeedQuery = iota
	FeedReadMany
	FeedChangeFeed
)

// FeedStats are the feed measurements of one run (spec §16 Phase 2, §17
// Q9; research note §5b.6).
type FeedStats struct {
	// Kinds holds queries, ReadMany calls and change-feed polls
	// (FeedQuery, FeedReadMany, FeedChangeFeed). Queries and ReadMany
	// calls are workload operations (in Stats.Arrivals and Ops too); polls
	// are background consumers, counted here only.
	Kinds [3]FeedKindStats
	// The drivers' diagnostics summed over every operation
	// (feed.Diagnostics): PagesGated counts pages whose alternate was due
	// but refused by the gate (Feed.GateCapacity); ColdRestarts the
	// metadata chains restarted cold and Resumes the data-plane chains
	// (change-feed cursors) resumed by failover after their pinned region
	// failed.
	Pages, PagesHedged, AlternateWins, RegionSwitches, PagesPinned, PagesGated, ColdRestarts, Resumes, SetupContacts int64
	// Races counts the feed operations' races (every page and setup read,
	// failed ones included); their terminal states count in
	// Stats.Terminal.
	Races int64
	// PageLatency is the latency of each data page's race, µs.
	PageLatency *hdr.Histogram
	// SetupReads counts the setup stages' metadata races; SetupReadsHedged
	// those that sent the alternate, SetupReadsFailover those of them whose
	// alternate went on a region-changing result of the primary rather
	// than on the threshold; SetupErrors the stages that failed (and failed
	// their operation).
	SetupReads, SetupReadsHedged, SetupReadsFailover, SetupErrors int64
	// StalePages counts returned pages whose replica had not applied every
	// committed write; MonotonicViolations the returned pages whose applied
	// LSN is below an earlier page of the same leaf (of the same query, or
	// of the same poller across polls); NotModified the 304 pages.
	StalePages, MonotonicViolations, NotModified int64
	// Changes is the changes committed on the polled partitions; Delivered
	// the changes returned by winning change-feed pages; Duplicates those
	// delivered again; Skips the changes below a partition's highest
	// delivered change that were never delivered.
	Changes, Delivered, Duplicates, Skips int64
	// StaleCacheHits counts feed pages sent with a stale metadata cache
	// (answered 410/1002 or 410/1000, then refreshed): after every
	// metadata event, and after a setup read that cached an old version.
	// StaleSetupReads counts the collection and partition-key-range reads
	// whose chosen answer came from a region that did not yet show every
	// metadata event when it served it (Setup.MetadataLagMs): the
	// stale-cache incidence of the metadata choice. StaleSetupNoNewer counts
	// those of them that no choice between the two legs could have avoided:
	// the other leg's answer carried no newer version (it was served before
	// the event too), or the read was not hedged, or the simulator does not
	// know the other leg's answer (see Setup.Latest).
	StaleCacheHits, StaleSetupReads, StaleSetupNoNewer int64
	// PeakLegsInFlight is the most hedge-leg slots held at once in one
	// instance's gate (Feed.GateCapacity; 0 without a gate).
	PeakLegsInFlight int64
	// PollRUCharged and PollRUReturned are the change-feed polls' RU,
	// charged and returned as Stats.RUCharged and RUReturned are the
	// operations' (polls are not operations).
	PollRUCharged, PollRUReturned float64
}

// PollRUMultiplier is PollRUCharged / PollRUReturned, NaN when no RU was
// returned (see Stats.RUMultiplier).
func (f *FeedStats) PollRUMultiplier() float64 {
	return ruMultiplier(f.PollRUCharged, f.PollRUReturned)
}

func newFeedStats() *FeedStats {
	st := &FeedStats{PageLatency: NewLatencyHistogram()}
	for i := range st.Kinds {
		st.Kinds[i].Latency = NewLatencyHistogram()
	}
	return st
}

// PerMillion returns n per 10⁶ committed changes (0 without changes).
func (f *FeedStats) PerMillion(n int64) float64 {
	if f.Changes == 0 {
		return 0
	}
	return float64(n) * 1e6 / float64(f.Changes)
}

// merge returns f with o added (either may be nil).
func (f *FeedStats) merge(o *FeedStats) *FeedStats {
	if o == nil {
		return f
	}
	if f == nil {
		f = newFeedStats()
	}
	for i := range f.Kinds {
		k, x := &f.Kinds[i], &o.Kinds[i]
		k.Ops += x.Ops
		k.Errors += x.Errors
		k.Latency.Merge(x.Latency)
		k.SetupSum += x.SetupSum
		k.TotalSum += x.TotalSum
	}
	f.PageLatency.Merge(o.PageLatency)
	for _, p := range [...][2]*int64{
		{&f.Races, &o.Races}, {&f.Pages, &o.Pages}, {&f.PagesHedged, &o.PagesHedged}, {&f.AlternateWins, &o.AlternateWins},
		{&f.RegionSwitches, &o.RegionSwitches}, {&f.PagesPinned, &o.PagesPinned}, {&f.PagesGated, &o.PagesGated},
		{&f.ColdRestarts, &o.ColdRestarts}, {&f.Resumes, &o.Resumes}, {&f.SetupContacts, &o.SetupContacts}, {&f.SetupReads, &o.SetupReads},
		{&f.SetupReadsHedged, &o.SetupReadsHedged}, {&f.SetupReadsFailover, &o.SetupReadsFailover}, {&f.SetupErrors, &o.SetupErrors}, {&f.StalePages, &o.StalePages},
		{&f.MonotonicViolations, &o.MonotonicViolations}, {&f.NotModified, &o.NotModified}, {&f.Changes, &o.Changes},
		{&f.Delivered, &o.Delivered}, {&f.Duplicates, &o.Duplicates}, {&f.Skips, &o.Skips}, {&f.StaleCacheHits, &o.StaleCacheHits}, {&f.StaleSetupReads, &o.StaleSetupReads}, {&f.StaleSetupNoNewer, &o.StaleSetupNoNewer},
	} {
		*p[0] += *p[1]
	}
	f.PeakLegsInFlight = max(f.PeakLegsInFlight, o.PeakLegsInFlight)
	f.PollRUCharged += o.PollRUCharged
	f.PollRUReturned += o.PollRUReturned
	return f
}
