package hedging

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultConsecutiveHedgeWinThreshold is the number of consecutive
// alternate wins on one (partition, primary region) pair that marks the
// partition unhealthy for that region (spec §9.5 #3, .NET v3 convention).
const DefaultConsecutiveHedgeWinThreshold = 5

// DefaultHedgeWinMinSpan is the least time a run of alternate wins on one
// (partition, primary region) must last before the breaker trips
// ([Config.HedgeWinMinSpan]; spec §9.5 #3 leaves the trip rule to PPCB).
// Notebook 02: on gc-pause-hot-partition (a 15 ms pause every 5 s, one
// partition ~40% of reads) N = 3 count-only trips 216 times per
// instance-hour and p99 is 18.6 ms, any span from 100 ms gives 0 trips and
// 13.7 ms; a 1 s span still rejects a 500 ms pause, and costs a chronically
// slow primary at most 1 s of time to trip (1.5 → 2.0 s at N = 3 for one
// client, nothing measurable in fleets of 10 and 100).
const DefaultHedgeWinMinSpan = time.Second

// hotCounters are the lock-free counters of a client's shared stores that
// every operation reads (spec §6.5 #6: no per-hedge state on the happy
// path): a [Client] keeps them together on its one cache line, and each
// store (tracker, location store, session tokens) updates its own under
// its lock and reads them on its fast path. Each is only a hint that
// sends a reader to the store's locked state when non-zero. The counts
// are gauges of a store's map entries ((partition, region) pairs), not
// totals: an int32 overflows only past 2^31 entries of one map (over
// 100 GB), and the Stores clamp (gauge32) so that even then none reads 0
// while its map is non-empty.
type hotCounters struct {
	keyed              atomic.Uint64 // HedgeWinTracker: bit b set while nkeyed[b] > 0
	nstreaks, ntripped atomic.Int32  // HedgeWinTracker
	nmarks, nruns      atomic.Int32  // locationStore
	any                atomic.Bool   // sessionTokens
}

// gauge32 is n, a map's length, as a hotCounters gauge: clamped to the
// int32 range, so non-zero whenever n is.
func gauge32(n int) int32 { return int32(min(n, math.MaxInt32)) }

// keyedPair reports whether the pair (partition, region) may hold a
// streak or a trip: its bucket's bit is set (a hint; false is certain).
func (h *hotCounters) keyedPair(partition string, region Region) bool {
	k := h.keyed.Load()
	return k != 0 && k&(1<<pairBucket(partition, region)) != 0
}

// DefaultProbeInterval is how long a partition stays routed away from a
// tripped primary region before the primary is tried again (failback).
const DefaultProbeInterval = 30 * time.Second

// HedgeWinTracker is the consecutive-hedge-win feedback loop into the
// partition circuit breaker (PPCB) of spec §9.5: one counter per
// (partition, primary region), incremented on every AlternateWon and reset
// by any final result of the primary (4xx finals included). When a counter
// reaches the threshold, and the pair has been losing to the alternate for
// at least the minimum span (since the first win of the streak, or of the
// run of wins at most a span apart that the streak belongs to: a primary
// final in a slow partition, such as an operation the policy did not hedge,
// resets the count but not the run), the partition is marked unhealthy for
// that region:
// reads put the region last until the probe interval has passed. After that
// the region is tried again as primary (failback) in a probing state in
// which one more alternate win trips it again at once, and one primary final
// result makes it healthy.
//
// Safe for concurrent use; all methods take the current time as a
// parameter and never read a clock.
type HedgeWinTracker struct {
	// The first 56 bytes are on one cache line in a client (its tracker
	// starts its clientState, which the allocator places 8 bytes past a
	// line, after its header; client_layout_test.go guards it): what a win
	// and a primary final that resets a streak read of the tracker besides
	// their pair's slot, while at most len(streakers) pairs hold a streak or
	// a trip. Routing (unhealthyMask, on every Begin) reads nothing of the
	// tracker while no pair holds a trip, nor a primary final while no
	// pair of its bucket holds a streak: both check the client's hot
	// counters first (the client passes their pointer).
	mu sync.Mutex // guards the tracker's state
	// slots is the table of pair states (shared_pairs.go): a power of two
	// long (nil until the first win), at most 3/4 used, every pair in the
	// first free slot from pairHash on (linear probing). A slot whose pair
	// holds no streak or trip and whose run has ended is dead: it behaves
	// as a pair never seen, and the next pair that needs a slot on its
	// probe path takes it, so no sweep deletes pairs.
	slots     []pairSlot
	threshold int
	minSpan   time.Duration // least duration of a tripping streak; 0 = none
	// streakers[:nstreakers] are the pairBuckets of the pairs holding a
	// streak or a trip, one entry per pair, while there are at most
	// len(streakers); beyond, nstreakers is countsMode and nkeyed counts
	// them (until none is left). Either way hot.keyed has bit b set while
	// some pair of bucket b holds one, so that recordPrimaryFinal takes no
	// lock for a pair that holds neither — the common case when other
	// pairs do, and when a pair's streak was reset while its run of wins
	// goes on — just as it takes none when no pair holds one. Updated
	// under mu with the table; the bit is only a hint: a set bit takes the
	// lock and looks.
	streakers  [7]uint8
	nstreakers uint8
	// hot is the client's counters (hotCounters): nstreaks, the pairs
	// holding a streak or a trip (pairSlot.streak), and ntripped, those
	// holding a trip, so the common cases (no streak, no trip anywhere)
	// take no lock. The client passes its own to the methods a race calls;
	// the others read this one.
	hot *hotCounters
	// nslots counts the used slots, dead ones included.
	nslots int
	// demoted is a copy of tripped, replaced (never modified) under mu
	// whenever a trip starts, is renewed or ends, so that routing
	// (unhealthyMask, on every Begin while some pair is tripped) reads it
	// without taking the lock.
	demoted atomic.Pointer[map[string][]demotion]
	// The rest is read when a trip starts or ends, under mu.
	probe time.Duration
	trips int
	// tripped indexes the pairs holding a trip by partition, with when
	// each trip ends, so routing checks every region of a partition with
	// one lookup.
	tripped map[string][]demotion
	// nkeyed[b] counts the pairs of bucket b holding a streak or a trip
	// while nstreakers is countsMode (all zero otherwise), and nkeyedAll
	// their sum.
	nkeyed    [64]int32
	nkeyedAll int32
}

// countsMode is HedgeWinTracker.nstreakers while more pairs hold a streak
// or a trip than its streakers list holds.
const countsMode = 0xff

// keyedAdd adds d (±1) to the pairs holding a streak or a trip in bucket
// b, keeping hot.keyed's bit b; t.mu must be held.
func (t *HedgeWinTracker) keyedAdd(hot *hotCounters, b int, d int32) {
	if t.nstreakers != countsMode {
		n := int(t.nstreakers)
		if d > 0 && n < len(t.streakers) {
			t.streakers[n] = uint8(b)
			t.nstreakers++
			if !slices.Contains(t.streakers[:n], uint8(b)) {
				hot.keyed.Or(1 << b)
			}
			return
		}
		if d < 0 {
			l := t.streakers[:n]
			i := slices.Index(l, uint8(b))
			l[i] = l[n-1]
			t.nstreakers--
			if !slices.Contains(l[:n-1], uint8(b)) {
				hot.keyed.And(^uint64(1 << b))
			}
			return
		}
		// One pair more than the list holds: count them all from now on.
		for _, k := range t.streakers {
			t.nkeyed[k]++
		}
		t.nkeyedAll, t.nstreakers = int32(len(t.streakers)), countsMode
	}
	t.nkeyed[b] += d
	t.nkeyedAll += d
	switch {
	case d > 0 && t.nkeyed[b] == 1:
		hot.keyed.Or(1 << b)
	case d < 0 && t.nkeyed[b] == 0:
		hot.keyed.And(^uint64(1 << b))
	}
	if t.nkeyedAll == 0 {
		t.nstreakers = 0 // none left (every count is 0): the list again
	}
}

// demotion is one tripped region of a partition and when its demotion
// ends.
type demotion struct {
	region Region
	until  time.Duration
}

// publish replaces demoted with the current trips; t.mu must be held.
func (t *HedgeWinTracker) publish() {
	m := make(map[string][]demotion, len(t.tripped))
	for p, ds := range t.tripped {
		m[p] = slices.Clone(ds)
	}
	t.demoted.Store(&m)
}

// pairBucket is a cheap fingerprint of a (partition, region) pair, in
// [0, 64): lengths and end bytes, no hashing of whole strings.
func pairBucket(partition string, region Region) int {
	h := uint(len(partition))*31 + uint(len(region))*131
	if n := len(partition); n > 0 {
		h += uint(partition[n-1])*7 + uint(partition[0])*3
	}
	if n := len(region); n > 0 {
		h += uint(region[n-1]) + uint(region[0])*17
	}
	return int(h % 64)
}

// newHedgeWinTracker returns a tracker that trips after threshold
// consecutive alternate wins (DefaultConsecutiveHedgeWinThreshold when
// threshold < 1) and keeps a tripped region demoted for probe
// (DefaultProbeInterval when probe <= 0); a streak trips only once it
// spans minSpan (0 = at once, the spec's rule; see [HedgeWinTracker]).
func newHedgeWinTracker(threshold int, probe, minSpan time.Duration) *HedgeWinTracker {
	t := new(HedgeWinTracker)
	t.init(threshold, probe, minSpan, new(hotCounters))
	return t
}

// init is newHedgeWinTracker in place, for a tracker held by value (as a
// [Client] holds its own), keeping its counters in hot.
func (t *HedgeWinTracker) init(threshold int, probe, minSpan time.Duration, hot *hotCounters) {
	t.hot = hot
	if threshold < 1 {
		threshold = DefaultConsecutiveHedgeWinThreshold
	}
	if probe <= 0 {
		probe = DefaultProbeInterval
	}
	t.threshold, t.probe, t.minSpan = threshold, probe, minSpan
	t.tripped = make(map[string][]demotion)
}

// recordHedgeWin records one alternate win for (partition, primary) at now
// and reports whether it tripped the breaker (record_consecutive_hedge_win,
// spec §9.5); hot is the tracker's counters (t.hot), passed by a client
// from its own line.
func (t *HedgeWinTracker) recordHedgeWin(hot *hotCounters, now time.Duration, partition string, primary Region) (tripped bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.slotFor(now, partition, primary)
	if !s.streak() {
		hot.nstreaks.Add(1)
		t.keyedAdd(hot, pairBucket(partition, primary), 1)
	}
	if s.consecutive == 0 {
		s.streakStart = now
	}
	if s.lastWin == 0 || now-s.lastWin > t.minSpan {
		s.runStart = now
	}
	s.lastWin = max(now, 1) // 0 means no win yet
	s.consecutive = saturatingInc(s.consecutive)
	if int(s.consecutive) < t.threshold || now-min(s.streakStart, s.runStart) < t.minSpan {
		return false
	}
	if s.tripped && now < t.untilOf(partition, primary) {
		return false // still demoted: the trip stands
	}
	if !s.tripped {
		s.tripped = true
		hot.ntripped.Add(1)
	}
	t.setUntil(partition, primary, now+t.probe)
	s.consecutive = int32(t.threshold - 1) // probing: one more win re-trips
	t.trips++
	t.publish()
	return true
}

// recordPrimaryFinal resets the counter of (partition, primary) after any
// final result of the primary leg and clears a trip whose probe interval
// has passed (spec §9.5 #2); hot is t.hot, as for recordHedgeWin.
func (t *HedgeWinTracker) recordPrimaryFinal(hot *hotCounters, now time.Duration, partition string, primary Region) {
	if !hot.keyedPair(partition, primary) {
		return // this pair holds no streak or trip: nothing to reset
	}
	b := pairBucket(partition, primary)
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.lookup(partition, primary)
	if s == nil || !s.streak() {
		return // no slot, or one that holds neither: resetting it changes nothing
	}
	if s.tripped {
		if now < t.untilOf(partition, primary) {
			// Still demoted: a primary final here is the region answering
			// as a non-primary; keep the trip but forget the streak.
			s.consecutive = 0
			return
		}
		hot.ntripped.Add(-1)
		rs := slices.DeleteFunc(t.tripped[partition], func(d demotion) bool { return d.region == primary })
		if len(rs) == 0 {
			delete(t.tripped, partition)
		} else {
			t.tripped[partition] = rs
		}
		// Healthy again: the pair as one never seen (its next win starts
		// a run), dead until then.
		*s = pairSlot{partition: s.partition, region: s.region, used: true}
		hot.nstreaks.Add(-1)
		t.keyedAdd(hot, b, -1)
		t.publish()
		return
	}
	hot.nstreaks.Add(-1)
	t.keyedAdd(hot, b, -1)
	// The streak ends; the pair keeps its run's start while its run goes
	// on, and is dead once it has ended (no win for more than minSpan).
	s.consecutive = 0
}

// Consecutive returns the current counter of (partition, primary), the
// cosmos.hedge.consecutive_alternate_wins gauge (spec §10.4).
func (t *HedgeWinTracker) Consecutive(partition string, primary Region) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.lookup(partition, primary); s != nil {
		return int(s.consecutive)
	}
	return 0
}

// Unhealthy reports whether reads of partition should route away from
// region at now (tripped and the probe interval not yet passed).
func (t *HedgeWinTracker) Unhealthy(now time.Duration, partition string, region Region) bool {
	if t.hot.ntripped.Load() == 0 {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	until := t.untilOf(partition, region)
	return until != 0 && now < until
}

// unhealthyMask returns a bit set of the regions (by index, first 64) that
// Unhealthy would report for partition at now, with one lookup in the
// published demotions and no lock.
func (t *HedgeWinTracker) unhealthyMask(now time.Duration, partition string, regions []Endpoint) uint64 {
	if t.hot.ntripped.Load() == 0 {
		return 0
	}
	m := t.demoted.Load()
	if m == nil {
		return 0
	}
	var mask uint64
	for _, d := range (*m)[partition] {
		if now >= d.until {
			continue
		}
		for i, e := range regions {
			if i < 64 && e.Region == d.region {
				mask |= 1 << i
			}
		}
	}
	return mask
}

type markKey struct {
	partition string
	endpoint  string
}

// DefaultUnavailableFor is how long a 503 keeps a (partition, endpoint)
// pair marked unavailable.
const DefaultUnavailableFor = 5 * time.Second

// DefaultUnavailableAfter is how many consecutive 503s of one (partition,
// endpoint) pair mark it unavailable ([Config.UnavailableAfter]): 1, the
// spec's rule (§6.5 #10: a 503 marks the pair).
const DefaultUnavailableAfter = 1

// locationStore is the location state shared by every operation and by both
// legs of a race (spec §6.5 #10, §9.1): after `after` consecutive 503s (1:
// every 503) the (partition, endpoint) pair is marked unavailable for a
// while, which routing then avoids; any other status of that pair ends its
// run of 503s. A 403/3 (WriteForbidden) requests an account-properties
// refresh. Safe for concurrent use; takes the current time as a parameter.
type locationStore struct {
	// hot holds nmarks, which mirrors len(marks) (no lock when nothing is
	// marked), and nruns, which mirrors len(runs) (a success takes no lock
	// when no pair has a run).
	hot            *hotCounters
	unavailableFor time.Duration
	after          int
	// The state read once a region failed: under mu.
	mu    sync.Mutex
	marks map[markKey]time.Duration
	// runs counts the consecutive 503s of pairs that have some and are
	// not marked yet (after > 1 only).
	runs      map[markKey]int
	refreshes int
}

// newLocationStore returns a store whose marks last unavailableFor
// (DefaultUnavailableFor when <= 0) and are set after `after` consecutive
// 503s (DefaultUnavailableAfter when <= 0).
func newLocationStore(unavailableFor time.Duration, after int) *locationStore {
	s := new(locationStore)
	s.init(unavailableFor, after, new(hotCounters))
	return s
}

// init is newLocationStore in place, for a store held by value, keeping
// its counters in hot.
func (s *locationStore) init(unavailableFor time.Duration, after int, hot *hotCounters) {
	s.hot = hot
	if unavailableFor <= 0 {
		unavailableFor = DefaultUnavailableFor
	}
	if after <= 0 {
		after = DefaultUnavailableAfter
	}
	s.unavailableFor, s.after = unavailableFor, after
	s.marks, s.runs = make(map[markKey]time.Duration), make(map[markKey]int)
}

// Observe applies the LocationEffects of one attempt's status: the
// `after`-th consecutive 503 of (partition, endpoint) marks it unavailable
// until now+unavailableFor, any other status ends its run of 503s; 403/3
// counts an account refresh request. Other statuses have no effect.
func (s *locationStore) observe(now time.Duration, partition string, endpoint Endpoint, st Status) {
	// Small enough to inline: most statuses (2xx, 3xx) end here.
	if st.Code >= 403 || s.hot.nruns.Load() != 0 {
		s.observeMarking(now, partition, endpoint, st)
	}
}

// observeMarking is observe for the statuses that may have an effect.
func (s *locationStore) observeMarking(now time.Duration, partition string, endpoint Endpoint, st Status) {
	forbidden := st.Code == 403 && st.SubStatus == SubStatusWriteForbidden
	if st.Code != 503 && !forbidden && s.hot.nruns.Load() == 0 {
		return // no effect: a 404, 409, 429, ... while no pair has a run of 503s
	}
	k := markKey{partition, endpoint.Key}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.Code == 503 {
		if s.after > 1 {
			if n := s.runs[k] + 1; n < s.after {
				s.runs[k] = n
				s.hot.nruns.Store(gauge32(len(s.runs)))
				return
			}
			delete(s.runs, k)
			s.hot.nruns.Store(gauge32(len(s.runs)))
		}
		s.marks[k] = now + s.unavailableFor
		s.hot.nmarks.Store(gauge32(len(s.marks)))
		return
	}
	if _, ok := s.runs[k]; ok {
		delete(s.runs, k) // any other answer ends the pair's run of 503s
		s.hot.nruns.Store(gauge32(len(s.runs)))
	}
	if forbidden {
		s.refreshes++
	}
}

// Unavailable reports whether (partition, endpoint) is marked unavailable
// at now.
func (s *locationStore) Unavailable(now time.Duration, partition string, endpoint Endpoint) bool {
	if s.hot.nmarks.Load() == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := markKey{partition, endpoint.Key}
	until, ok := s.marks[k]
	if ok && now >= until {
		delete(s.marks, k)
		s.hot.nmarks.Store(gauge32(len(s.marks)))
		return false
	}
	return ok
}

// RefreshRequests returns how many account refreshes were requested.
func (s *locationStore) RefreshRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshes
}

// sessionTokens holds the session token (the highest LSN seen) per
// partition. Updates merge by maximum, so they commute: a losing leg's late
// response can never regress a token (spec §9.2). Safe for concurrent use.
type sessionTokens struct {
	hot  *hotCounters // any: set once a token is stored, so reads of an empty store take no lock
	mu   sync.Mutex
	lsns map[string]int64
}

// newSessionTokens returns an empty store.
func newSessionTokens() *sessionTokens {
	s := new(sessionTokens)
	s.init(new(hotCounters))
	return s
}

// init makes s an empty store in place, for a store held by value,
// keeping its flag in hot.
func (s *sessionTokens) init(hot *hotCounters) { s.hot, s.lsns = hot, make(map[string]int64) }

// Merge records lsn for partition, keeping the maximum; lsn <= 0 is ignored.
func (s *sessionTokens) merge(partition string, lsn int64) {
	if lsn > 0 { // small enough to inline: no token, no call
		s.mergeToken(partition, lsn)
	}
}

// mergeToken is merge for lsn > 0.
func (s *sessionTokens) mergeToken(partition string, lsn int64) {
	s.mu.Lock()
	if lsn > s.lsns[partition] {
		s.lsns[partition] = lsn
		s.hot.any.Store(true)
	}
	s.mu.Unlock()
}

// Get returns the session LSN of partition (0 when none).
func (s *sessionTokens) Get(partition string) int64 {
	if !s.hot.any.Load() { // small enough to inline: an empty store takes no call
		return 0
	}
	return s.get(partition)
}

// get is Get once a token was stored.
func (s *sessionTokens) get(partition string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lsns[partition]
}
