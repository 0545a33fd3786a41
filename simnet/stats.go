package simnet

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"hedgelab/hedging"
)

// Latency histograms record microseconds, rounded to the nearest, from 0
// to MaxDelay (1000 h; longer latencies are recorded as 1000 h); values
// from 1 µs up keep their significant digits: 3 in the run-wide histogram
// (relative error <= 0.1%), 2 in timeline windows (<= 1%). Memory is fixed
// however long the run. The mean latency is not read from a histogram but
// from the exact sum (Stats.LatencySum).
const (
	histMinMicros   = 1
	histMaxMicros   = int64(MaxDelay / time.Microsecond)
	histDigits      = 3
	windowHistDigit = 2
)

// NewLatencyHistogram returns an empty run-wide latency histogram
// (microseconds, 3 significant digits).
func NewLatencyHistogram() *hdr.Histogram { return hdr.New(histMinMicros, histMaxMicros, histDigits) }

// Window is one timeline bucket of a run, by operation start time.
type Window struct {
	// Ops, Hedged and Failed count the window's operations, those whose
	// alternate was spawned, and those that failed (see Stats.Failed).
	Ops, Hedged, Failed int64
	// ThresholdSumMs and ThresholdOps give the mean threshold chosen for
	// hedged operations in the window.
	ThresholdSumMs float64
	ThresholdOps   int64
	// Latency of the window's operations, microseconds, 2 significant digits.
	Latency *hdr.Histogram
}

// Stats are the measurements of one run of one policy.
type Stats struct {
	Policy string
	// Arrivals counts operations started (admitted by the workload); every
	// one finishes before the run ends, so Ops == Arrivals, and for an open
	// loop it is the same for every policy of a scenario (the arrivals come
	// from their own random stream) and at most Config.MaxOps per run.
	Arrivals int64
	// Ops counts finished operations; Errors those that returned an error
	// (no final response: a transient status or the deadline), a class of
	// failed operations (see Failed). A feed operation (Config.Feed: a
	// query or a ReadMany call) is one operation: its end-to-end latency,
	// failed when a leaf or setup read failed, hedged when a page was, an
	// alternate win when a page's alternate won. Change-feed polls are not
	// operations (see Feed). The attempts and RU of every page, polls'
	// included, count in Attempts; their RU counts in RUCharged and
	// RUReturned, except the polls' (FeedStats.PollRUCharged and
	// PollRUReturned), so the RU multiplier is over the same operations
	// as the hedge rate.
	Ops, Errors int64
	// Hedged counts operations whose alternate was spawned; AlternateWins
	// those with terminal state AlternateWon. FailoverHedged counts the
	// hedged operations whose alternate was sent on a region-changing result
	// of the primary (503, 404/1002, 429/3092, transport error) rather than
	// on the threshold (hedging.SpawnCause.Failover); the latency-triggered
	// ones are Hedged - FailoverHedged.
	Hedged, AlternateWins, FailoverHedged int64
	// Attempts counts transport attempts sent (both legs, retries included);
	// AlternateAttempts the attempts of alternate legs (an alternate retries
	// locally within its leg, §8.4, so a hedge may add more than one).
	Attempts, AlternateAttempts int64
	// Terminal counts terminal states, indexed by hedging.TerminalState; index
	// 0 counts operations with no hedging strategy active ("none"). In a
	// run with feeds it counts races: a point operation's, and each page
	// and setup read of a feed operation or poll (Feed.Races of them), so it
	// sums to Ops - (feed operations) + Feed.Races.
	Terminal [8]int64
	// RUCharged is the RU charged by replicas for every attempt of an
	// operation that started service (cancelled ones included, §14.2);
	// RUReturned the RU of the responses returned to callers (winners
	// only, §17 Q3). Change-feed polls are not operations: their RU is
	// FeedStats.PollRUCharged and PollRUReturned.
	RUCharged, RUReturned float64
	// Latency is the end-to-end latency of every operation, failed ones
	// included, µs; LatencySum is the exact sum of those latencies (for
	// the mean). In the Stats a run returns it is the merge of KindLatency
	// (the same counts as recording every operation in it).
	Latency    *hdr.Histogram
	LatencySum time.Duration
	// KindLatency is Latency split by operation kind (indexed by
	// hedging.OperationKind; nil for a kind with no operation): a feed
	// operation counts under its kind (query, read_many), every other
	// operation under its own.
	KindLatency [KindSlots]*hdr.Histogram
	// KindFailed counts the failed operations (see Failed) by kind,
	// indexed as KindLatency: its sum is Failed().
	KindFailed [KindSlots]int64
	// Timeline buckets operations by start time, WindowWidth wide. A run
	// with only a Duration has ceil(Duration/WindowWidth) windows; a run
	// with MaxOps grows it as operations start, up to that many windows
	// (MaxGrownWindows without a Duration; later operations count in the
	// last window).
	Timeline    []Window
	WindowWidth time.Duration
	// BreakerTrips counts partition-breaker trips (§9.5); LocalThrottles
	// counts local throughput-control 429s; Removed counts queued attempts
	// removed by cancellation.
	BreakerTrips, LocalThrottles, Removed int64
	// HubHeaderAttempts counts attempts sent with the
	// x-ms-cosmos-hub-region-processing-only header (§9.6); SessionNotAvailable
	// counts 404/1002 answers; Faults counts injected fault answers.
	HubHeaderAttempts, SessionNotAvailable, Faults int64
	// FinalErrorResponses counts operations that returned a final response
	// with status >= 400 (a 404/0, a 409, or a throttle that no region can
	// relieve such as 429/3200 or 429/3214): the other class of failed
	// operations (see Failed); FinalErrorByStatus splits it by status
	// (nil when there is none).
	FinalErrorResponses int64
	FinalErrorByStatus  map[hedging.Status]int64
	// Replicas names the replicas, in configuration order; ReplicaAttempts
	// counts the attempts sent to each and ReplicaAnswers the operations
	// whose returned response came from it (the regions used).
	Replicas                        []string
	ReplicaAttempts, ReplicaAnswers []int64
	// Capacity holds the per-replica capacity measurements (utilisation,
	// queue length, refusals, background latency); nil unless the run
	// models capacity (Config.ModelsCapacity).
	Capacity *CapacityStats
	// Feed holds the feed measurements (pages, setup, staleness, change-feed
	// duplicates and skips); nil unless the run models feeds, lag or a
	// consistency level (Config.Feed, Lag, Consistency).
	Feed *FeedStats

	// Events is the number of events processed.
	Events int64
	// legs counts the legs sent (a race's primary, and its alternate when
	// spawned: the first attempt of each); altRaces the races that sent
	// their alternate; unsent the races that ended without sending
	// anything (no applicable region). The legs invariant compares them
	// (invariants.go) at the end of each run; no figure reads them, and a
	// shard's partial result does not carry them (internal/study).
	legs, altRaces, unsent int64
	// End is the virtual time the run ended.
	End time.Duration
	// ArrivalsEnd is the virtual time at which the run stopped admitting
	// operations, i.e. the run's actual length: Config.Duration when the
	// run lasted that long, else (MaxOps reached first, or no Duration)
	// the start time of the last operation. Merge keeps the maximum.
	ArrivalsEnd time.Duration
}

// TerminalName returns the name of terminal-state index i ("none" for 0).
func TerminalName(i int) string {
	if i == 0 {
		return "none"
	}
	return hedging.TerminalState(i).String()
}

// Merge adds o's counts and histograms into s (for replications or
// shards). Timelines merge window by window.
func (s *Stats) Merge(o *Stats) {
	s.Arrivals += o.Arrivals
	s.Ops += o.Ops
	s.Errors += o.Errors
	s.LatencySum += o.LatencySum
	s.Hedged += o.Hedged
	s.FailoverHedged += o.FailoverHedged
	s.AlternateWins += o.AlternateWins
	s.Attempts += o.Attempts
	s.AlternateAttempts += o.AlternateAttempts
	for i := range s.Terminal {
		s.Terminal[i] += o.Terminal[i]
	}
	s.RUCharged += o.RUCharged
	s.RUReturned += o.RUReturned
	s.Latency.Merge(o.Latency)
	for k, h := range o.KindLatency {
		if h == nil {
			continue
		}
		if s.KindLatency[k] == nil {
			s.KindLatency[k] = NewLatencyHistogram()
		}
		s.KindLatency[k].Merge(h)
	}
	for k, n := range o.KindFailed {
		s.KindFailed[k] += n
	}
	for i := range o.Timeline {
		if i >= len(s.Timeline) {
			s.Timeline = append(s.Timeline, Window{Latency: hdr.New(histMinMicros, histMaxMicros, windowHistDigit)})
		}
		w, x := &s.Timeline[i], &o.Timeline[i]
		w.Ops += x.Ops
		w.Hedged += x.Hedged
		w.Failed += x.Failed
		w.ThresholdSumMs += x.ThresholdSumMs
		w.ThresholdOps += x.ThresholdOps
		w.Latency.Merge(x.Latency)
	}
	s.BreakerTrips += o.BreakerTrips
	s.LocalThrottles += o.LocalThrottles
	s.Removed += o.Removed
	s.HubHeaderAttempts += o.HubHeaderAttempts
	s.SessionNotAvailable += o.SessionNotAvailable
	s.Faults += o.Faults
	s.FinalErrorResponses += o.FinalErrorResponses
	for k, n := range o.FinalErrorByStatus {
		if s.FinalErrorByStatus == nil {
			s.FinalErrorByStatus = map[hedging.Status]int64{}
		}
		s.FinalErrorByStatus[k] += n
	}
	if s.Replicas == nil {
		s.Replicas = o.Replicas
		s.ReplicaAttempts = make([]int64, len(o.ReplicaAttempts))
		s.ReplicaAnswers = make([]int64, len(o.ReplicaAnswers))
	}
	for i := range o.ReplicaAttempts {
		s.ReplicaAttempts[i] += o.ReplicaAttempts[i]
		s.ReplicaAnswers[i] += o.ReplicaAnswers[i]
	}
	s.Capacity = s.Capacity.merge(o.Capacity)
	s.Feed = s.Feed.merge(o.Feed)
	s.Events += o.Events
	s.legs += o.legs
	s.altRaces += o.altRaces
	s.unsent += o.unsent
	s.End = max(s.End, o.End)
	s.ArrivalsEnd = max(s.ArrivalsEnd, o.ArrivalsEnd)
}

// RUMultiplier is RUCharged / RUReturned: the RU the operations cost per
// RU of the responses they returned. It is NaN (undefined) when no RU was
// returned — every charge 0, or no operation got a response with a
// charge — since there is then no cost to multiply.
func (s *Stats) RUMultiplier() float64 { return ruMultiplier(s.RUCharged, s.RUReturned) }

// Failed counts the operations that failed for their caller: Errors (no
// final response) plus FinalErrorResponses (a final response with status
// >= 400). A read refused with 429/3200 is a failed read.
func (s *Stats) Failed() int64 { return s.Errors + s.FinalErrorResponses }

// MeanMs returns the exact mean latency of the operations in ms (0 when
// there is none).
func (s *Stats) MeanMs() float64 {
	if s.Ops == 0 {
		return 0
	}
	return float64(s.LatencySum) / float64(s.Ops) / float64(time.Millisecond)
}

// QuantileMs returns the latency quantile q (0..1) in milliseconds.
func (s *Stats) QuantileMs(q float64) float64 {
	return float64(s.Latency.ValueAtQuantile(q*100)) / 1000
}

// KindSlots bounds the operation kinds Stats.KindLatency holds (every
// hedging.OperationKind is below it).
const KindSlots = 16

// KindOps returns the number of operations of kind k.
func (s *Stats) KindOps(k hedging.OperationKind) int64 {
	if int(k) >= KindSlots || s.KindLatency[k] == nil {
		return 0
	}
	return s.KindLatency[k].TotalCount()
}

// KindQuantileMs returns the latency quantile q (0..1) of the operations
// of kind k in milliseconds (0 when there is none).
func (s *Stats) KindQuantileMs(k hedging.OperationKind, q float64) float64 {
	if s.KindOps(k) == 0 {
		return 0
	}
	return float64(s.KindLatency[k].ValueAtQuantile(q*100)) / 1000
}

// MaxGrownWindows bounds the timeline of a run without a Duration, which
// grows as operations start (each window holds a ~40 kB histogram):
// operations starting later count in the last window. With a Duration the
// bound is ceil(Duration/TimelineWindow).
const MaxGrownWindows = 1000

// newStats returns the empty measurements of one run of cfg (timeline
// windows of cfg.TimelineWindow, default Duration/120 and at least 1 s) and
// the bound on the number of timeline windows the run may grow to.
func newStats(cfg *Config) (*Stats, int) {
	width := cfg.TimelineWindow
	if width <= 0 {
		width = max(cfg.Duration/120, time.Second)
	}
	// A run with a Duration has at most ceil(Duration/width) windows; one
	// without grows its timeline up to MaxGrownWindows. A run that MaxOps
	// may end early starts with one window and grows as operations start.
	maxWindows := MaxGrownWindows
	if cfg.Duration > 0 {
		maxWindows = int((cfg.Duration + width - 1) / width)
	}
	nwin := 1
	if cfg.Duration > 0 && cfg.MaxOps <= 0 {
		nwin = maxWindows
	}
	st := &Stats{Latency: NewLatencyHistogram(), WindowWidth: width, Timeline: make([]Window, nwin),
		ReplicaAttempts: make([]int64, len(cfg.Replicas)), ReplicaAnswers: make([]int64, len(cfg.Replicas))}
	for _, r := range cfg.Replicas {
		st.Replicas = append(st.Replicas, r.Name)
	}
	for i := range st.Timeline {
		st.Timeline[i].Latency = hdr.New(histMinMicros, histMaxMicros, windowHistDigit)
	}
	return st, maxWindows
}

// latencyMicros is latency d in whole µs for the latency histograms:
// rounded to the nearest, at most histMaxMicros.
func latencyMicros(d time.Duration) int64 {
	return min(max(int64((d+time.Microsecond/2)/time.Microsecond), 0), histMaxMicros)
}

// record adds the finished race of o to the run's measurements: latency
// histogram, counters, terminal state and its timeline window (by start).
func (s *sim) record(o *opState) {
	r := &o.race
	kind := o.op.Kind
	st := s.stats
	win := s.recordOp(kind, r.Start(), r.DoneAt()-r.Start())
	if r.Err() != nil {
		st.Errors++
		s.recordFailed(kind, win)
	} else {
		if status := r.Status(); status.Code >= 400 {
			st.finalError(status)
			s.recordFailed(kind, win)
		}
		if w, ok := r.Winner(); ok {
			// The winner's answer is its leg's latest attempt's, sent to
			// r.Endpoint(w): send found that endpoint's replica then
			// (cx.sent), so it is not looked up again.
			if a := &o.att[w]; a.cx.sent {
				st.ReplicaAnswers[a.rep]++
			} else if ri, ok := s.replicaOf(r.Endpoint(w).Key); ok {
				st.ReplicaAnswers[ri]++
			}
		}
	}
	if r.AlternateSpawned() {
		st.Hedged++
		win.Hedged++
	}
	if d, ok := st.countRace(r); ok {
		if failoverSpawn(d) {
			st.FailoverHedged++
		}
		if d.TerminalState() == hedging.AlternateWon {
			st.AlternateWins++
		}
		win.ThresholdSumMs += float64(r.Threshold().Get()) / float64(time.Millisecond)
		win.ThresholdOps++
	}
	st.RUReturned += r.RequestCharge()
}

// finalError counts an operation that returned a final response with
// status (>= 400).
func (st *Stats) finalError(status hedging.Status) {
	st.FinalErrorResponses++
	if st.FinalErrorByStatus == nil {
		st.FinalErrorByStatus = map[hedging.Status]int64{}
	}
	st.FinalErrorByStatus[status]++
}

// recordFailed counts a failed operation (see Stats.Failed) of kind in
// the run's KindFailed and in its timeline window win.
func (s *sim) recordFailed(kind hedging.OperationKind, win *Window) {
	win.Failed++
	s.stats.KindFailed[int(kind)%KindSlots]++
}

// recordOp adds one finished operation of kind that started at start and
// took lat to Ops, the latency histograms and its timeline window, which it
// returns.
func (s *sim) recordOp(kind hedging.OperationKind, start, lat time.Duration) *Window {
	st := s.stats
	us := latencyMicros(lat)
	// The pooled Latency is not recorded here: poolLatency builds it from
	// the kind histograms when the run ends (one RecordValue per operation
	// fewer; nothing reads Latency during a run).
	k := int(kind) % KindSlots
	if st.KindLatency[k] == nil {
		st.KindLatency[k] = NewLatencyHistogram()
	}
	_ = st.KindLatency[k].RecordValue(us)
	st.LatencySum += lat
	st.Ops++
	wi := int(start / st.WindowWidth)
	for wi >= len(st.Timeline) && len(st.Timeline) < s.maxWindows {
		st.Timeline = append(st.Timeline, Window{Latency: hdr.New(histMinMicros, histMaxMicros, windowHistDigit)})
	}
	wi = max(min(wi, len(st.Timeline)-1), 0)
	win := &st.Timeline[wi]
	win.Ops++
	_ = win.Latency.RecordValue(us)
	return win
}

// poolLatency merges the kind histograms into st.Latency, which then holds
// every operation of the run (recordOp records each operation only in its
// kind's histogram). Called once, when the run ends, before the invariants
// are checked.
func (st *Stats) poolLatency() {
	for _, h := range st.KindLatency {
		if h != nil {
			st.Latency.Merge(h)
		}
	}
}

// failoverSpawn reports whether the race of d sent its alternate on a
// region-changing result of the primary (hedging.SpawnCause.Failover)
// rather than on the threshold.
func failoverSpawn(d *hedging.HedgeDiagnostics) bool {
	c, ok := d.SpawnCause()
	return ok && c.Failover()
}

// countRace adds race r's terminal state and breaker trip to st (for
// every race: an operation's, or a feed page's) and returns its hedge
// diagnostics, when hedging was active. Hedged and FailoverHedged count
// operations, not races: their callers count them.
func (st *Stats) countRace(r *hedging.Race) (*hedging.HedgeDiagnostics, bool) {
	if r.TrippedBreaker() {
		st.BreakerTrips++
	}
	if r.AlternateSpawned() {
		st.altRaces++
	}
	if r.Attempts() == 0 {
		st.unsent++
	}
	d, ok := r.Diagnostics()
	if !ok {
		st.Terminal[0]++
		return nil, false
	}
	st.AlternateAttempts += int64(d.Leg(hedging.Alternate).Attempts)
	st.Terminal[d.TerminalState()]++
	return d, true
}
