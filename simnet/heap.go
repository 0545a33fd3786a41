package simnet

import (
	"math"
	"math/bits"
	"slices"
	"time"

	"hedgelab/hedging"
)

type evKind uint8

const (
	evArrival       evKind = iota + 1 // next open-loop arrival, or a closed-loop client's next operation
	evReplicaArrive                   // an attempt reaches its replica
	evResponse                        // an attempt's response reaches the client
	evTimer                           // a race timer
	evServerFree                      // a replica server frees up while requests are queued
)

// event is one pending event (32 bytes). Events are values ordered by (at,
// responses first, responses in the race core's tie order, insertion
// sequence), so ties resolve in a fixed order; the last three are folded
// into one key, ord.
type event struct {
	at time.Duration
	// ord is the tie-break: bit 63 is set for every kind but evResponse (at
	// one instant a response is seen before a timer, spec §6.4: the primary
	// arm is polled before the threshold timer); bit 62 is set for a
	// response of the leg that loses a tie (hedging.Leg.WinsTie: of two
	// final answers at one instant the primary's wins); the rest is the
	// insertion sequence. eventQueue.stamp sets it.
	ord uint64
	// id is the op slot (evReplicaArrive, evResponse, evTimer), the replica
	// (evServerFree) or the closed-loop client (evArrival; -1 = open loop).
	id   int32
	gen  uint32 // op slot generation: stale events are ignored
	aseq uint32 // attempt sequence (evReplicaArrive, evResponse)
	kind evKind
	sub  uint8 // leg (attempt events) or timer kind (evTimer)
}

// notResponse is event.ord's kind bit; tieLoser its leg bit.
const (
	notResponse = 1 << 63
	tieLoser    = 1 << 62
)

// legTieBit is the ord bit of a response of each leg: the race core defines
// which leg wins a tie, once (hedging.Leg.WinsTie), and the queue obeys it.
var legTieBit = func() (b [2]uint64) {
	if !hedging.Primary.WinsTie(hedging.Alternate) {
		b[hedging.Primary] = tieLoser
	}
	if !hedging.Alternate.WinsTie(hedging.Primary) {
		b[hedging.Alternate] = tieLoser
	}
	return b
}()

func (a *event) less(b *event) bool {
	return a.at < b.at || a.at == b.at && a.ord < b.ord
}

// eventQueue orders events by (at, responses first, tie order, seq). Five
// stores hold the pending events, and pop takes the smallest of their
// heads:
//
//   - The next open-loop arrival, in a slot of its own.
//   - FIFO lanes, one per kind of event that is mostly pushed in time
//     order: closed-loop arrivals, threshold timers (a static threshold),
//     deadline timers (a fixed timeout), and one for the other kinds but
//     responses. An event no earlier than its lane's tail joins it in
//     O(1); one that is earlier goes to the stores below. Separate lanes
//     keep one kind's order from pushing another's out (a 20 ms threshold
//     timer behind which every arrival of the next 20 ms is out of order).
//   - A sorted run: the calendar bucket due next, sorted when it is taken
//     out of the calendar (below), read from its head.
//   - A 4-ary min-heap, the near heap, which takes the events due before
//     horizon that come after their bucket was taken, and any event while
//     fewer than calendarMin are pending.
//   - A calendar of the other events, all due at or after horizon: a ring
//     of buckets of width 2^bucketShift ns covering calendarSpan, each an
//     unsorted chain of slots in one shared pool, with an overflow heap
//     beyond the ring's span. When nothing before horizon is left, the
//     first non-empty bucket is sorted into the run and horizon moves past
//     it.
//
// So under load each event is pushed and popped in O(1) but for a sort
// of its bucket (tens of events), not sifted through a heap of every
// response in flight (a slow tail puts thousands of them hundreds of
// milliseconds ahead); the pool holds only the pending events, so memory
// follows what is in flight, not the ring's size. The order is exactly
// that of one heap.
type eventQueue struct {
	seq   uint64
	n     int // pending events
	lanes [numLanes]lane
	// lfirst is 1 + the lane whose head comes first (0: every lane is
	// empty); bit i of lbusy is set while lane i is not empty.
	lfirst int
	lbusy  uint8
	// arrival is the next open-loop arrival (the only one pending: each
	// arrival schedules the next), while hasArrival.
	arrival    event
	hasArrival bool
	run        []event // the sorted run, read from rhead
	rhead      int
	ev         []event // the near heap

	horizon time.Duration // a multiple of the bucket width
	// first[i] is 1 + the pool slot of the first event of bucket i of the
	// ring (0: empty), next[j] the same for the one after slot j's.
	first    []int32
	full     []uint64 // bit i: bucket i is not empty
	pool     []event
	next     []int32
	freeSlot []int32 // pool slots not in use
	inRing   int
	overflow []event // a 4-ary heap of the events due at or after horizon+calendarSpan
}

// lane is one FIFO run of events in queue order, read from head.
type lane struct {
	ev   []event
	head int
}

// The FIFO lanes (see eventQueue).
const (
	laneArrival = iota
	laneThreshold
	laneDeadline
	laneOther
	numLanes
)

const (
	calendarMin  = 512 // pending events below which everything goes to the near heap
	bucketShift  = 17  // bucket width 2^17 ns ≈ 131 µs
	ringBuckets  = 1 << 13
	calendarSpan = ringBuckets << bucketShift // ≈ 1.07 s
)

func (q *eventQueue) Len() int { return q.n }

// laneOf is the FIFO lane an event not a response may join.
func laneOf(e *event) int {
	switch {
	case e.kind == evArrival:
		return laneArrival
	case e.kind == evTimer && e.sub == uint8(hedging.TimerThreshold):
		return laneThreshold
	case e.kind == evTimer && e.sub == uint8(hedging.TimerDeadline):
		return laneDeadline
	}
	return laneOther
}

// stamp assigns e the next insertion sequence, fixing its place among
// events of the same instant. push stamps; a caller that holds an event
// back and pushes it later (see sim.park) stamps it when it would have been
// pushed, so the order is the same as if it had been pushed then.
func (q *eventQueue) stamp(e *event) {
	q.seq++
	e.ord = q.seq
	if e.kind != evResponse {
		e.ord |= notResponse
	} else {
		e.ord |= legTieBit[e.sub&1]
	}
}

func (q *eventQueue) push(e event) { q.add(&e, true) }

// pushStamped queues an event stamped earlier by stamp.
func (q *eventQueue) pushStamped(e event) { q.add(&e, false) }

// add queues e, stamping it first if fresh: in the arrival slot, in its
// lane if it comes no earlier than the lane's tail, elsewhere by
// pushLater.
func (q *eventQueue) add(e *event, fresh bool) {
	if fresh {
		q.stamp(e)
	}
	q.n++
	if e.kind == evArrival && e.id < 0 && !q.hasArrival {
		q.arrival, q.hasArrival = *e, true
		return
	}
	if e.kind != evResponse {
		i := laneOf(e)
		l := &q.lanes[i]
		if len(l.ev) == 0 {
			l.ev = append(l.ev, *e)
			q.lbusy |= 1 << i
			if q.lfirst == 0 || e.less(q.laneHead(q.lfirst-1)) {
				q.lfirst = i + 1
			}
			return
		} else if !e.less(&l.ev[len(l.ev)-1]) {
			l.ev = append(l.ev, *e)
			return
		}
	}
	q.pushLater(e)
}

// laneHead returns lane i's head; the lane must not be empty.
func (q *eventQueue) laneHead(i int) *event {
	l := &q.lanes[i]
	return &l.ev[l.head]
}

// pushLater queues e in the near heap, the calendar or the overflow heap.
func (q *eventQueue) pushLater(e *event) {
	switch {
	case e.at < q.horizon || q.n < calendarMin:
		q.ev = pushHeap4(q.ev, *e)
	case e.at-q.horizon < calendarSpan:
		if q.first == nil {
			q.first = make([]int32, ringBuckets)
			q.full = make([]uint64, ringBuckets/64)
		}
		var j int32
		if n := len(q.freeSlot); n > 0 {
			j = q.freeSlot[n-1]
			q.freeSlot = q.freeSlot[:n-1]
			q.pool[j] = *e
		} else {
			j = int32(len(q.pool))
			q.pool = append(q.pool, *e)
			q.next = append(q.next, 0)
		}
		i := int(e.at>>bucketShift) & (ringBuckets - 1)
		q.next[j] = q.first[i]
		q.first[i] = j + 1
		q.full[i/64] |= 1 << (i % 64)
		q.inRing++
	default:
		q.overflow = pushHeap4(q.overflow, *e)
	}
}

// advance sorts the next non-empty bucket into the run (which must be
// empty) and moves horizon past it, then brings overflow events now
// within the ring's span into it. It does nothing and reports false when
// the calendar and the overflow heap are empty or the next bucket starts
// after limit.
func (q *eventQueue) advance(limit time.Duration) bool {
	if q.inRing == 0 {
		if len(q.overflow) == 0 || q.overflow[0].at > limit {
			return false
		}
		// Nothing in the ring: jump to the first overflow event's bucket.
		q.horizon = q.overflow[0].at >> bucketShift << bucketShift
		q.migrate()
		if q.inRing == 0 {
			return true // all of it went into the near heap
		}
	}
	// The first non-empty bucket at or after horizon, scanning the ring's
	// occupancy bits from horizon's bucket around.
	i := int(q.horizon>>bucketShift) & (ringBuckets - 1)
	n := 0 // buckets skipped
	for {
		w := q.full[i/64] >> (i % 64)
		if w != 0 {
			k := bits.TrailingZeros64(w)
			i += k
			n += k
			break
		}
		k := 64 - i%64
		i = (i + k) & (ringBuckets - 1)
		n += k
	}
	if q.horizon+time.Duration(n)<<bucketShift > limit {
		return false
	}
	run := q.run[:0]
	for j := q.first[i]; j != 0; j = q.next[j-1] {
		run = append(run, q.pool[j-1])
		q.freeSlot = append(q.freeSlot, j-1)
	}
	sortEvents(run)
	q.run, q.rhead = run, 0
	q.inRing -= len(run)
	q.first[i] = 0
	q.full[i/64] &^= 1 << (i % 64)
	q.horizon += time.Duration(n+1) << bucketShift
	q.migrate()
	return true
}

// sortEvents sorts a bucket's events into queue order: by insertion, as a
// bucket holds tens of events, or by slices.SortFunc when it is crowded.
func sortEvents(run []event) {
	if len(run) > 32 {
		slices.SortFunc(run, func(a, b event) int {
			if a.less(&b) {
				return -1
			}
			return 1 // no two events are equal (ord is unique)
		})
		return
	}
	for i := 1; i < len(run); i++ {
		e := run[i]
		j := i
		for j > 0 && e.less(&run[j-1]) {
			run[j] = run[j-1]
			j--
		}
		run[j] = e
	}
}

// migrate moves overflow events due before horizon+calendarSpan into the
// ring.
func (q *eventQueue) migrate() {
	for len(q.overflow) > 0 && q.overflow[0].at-q.horizon < calendarSpan {
		var e event
		q.overflow, e = popHeap4(q.overflow)
		q.pushLater(&e)
	}
}

func (q *eventQueue) pop() event {
	q.n--
	if q.rhead == len(q.run) && q.inRing+len(q.overflow) > 0 {
		q.refill()
	}
	// The smallest head: the open-loop arrival's, a lane's, the run's or
	// the near heap's.
	var best *event
	src := srcNone
	if q.hasArrival {
		best, src = &q.arrival, srcArrival
	}
	if q.lfirst > 0 {
		if h := q.laneHead(q.lfirst - 1); best == nil || h.less(best) {
			best, src = h, srcLane
		}
	}
	if q.rhead < len(q.run) && (best == nil || q.run[q.rhead].less(best)) {
		best, src = &q.run[q.rhead], srcRun
	}
	if len(q.ev) > 0 && (best == nil || q.ev[0].less(best)) {
		var e event
		q.ev, e = popHeap4(q.ev)
		return e
	}
	switch src {
	case srcArrival:
		q.hasArrival = false
		return q.arrival
	case srcRun:
		q.rhead++
		return *best
	}
	return q.popLane()
}

// Where pop finds the smallest head.
const (
	srcNone = iota
	srcArrival
	srcLane
	srcRun
)

// refill sorts the calendar's next bucket into the (read) run when it
// starts no later than the lanes' and the near heap's heads, unless the
// near heap's head comes before horizon: everything in the calendar is due
// at or after horizon, and at or after the start of its bucket.
func (q *eventQueue) refill() {
	for q.rhead == len(q.run) && q.inRing+len(q.overflow) > 0 && (len(q.ev) == 0 || q.ev[0].at >= q.horizon) {
		next := time.Duration(math.MaxInt64)
		if len(q.ev) > 0 {
			next = q.ev[0].at
		}
		if q.lfirst > 0 {
			next = min(next, q.laneHead(q.lfirst-1).at)
		}
		if q.hasArrival {
			next = min(next, q.arrival.at)
		}
		if next < q.horizon || !q.advance(next) {
			return
		}
	}
}

// popLane removes and returns the head of the first lane.
func (q *eventQueue) popLane() event {
	i := q.lfirst - 1
	l := &q.lanes[i]
	e := l.ev[l.head]
	l.head++
	if l.head == len(l.ev) {
		l.ev, l.head = l.ev[:0], 0
		q.lbusy &^= 1 << i
	} else if l.head > 4096 && l.head*2 > len(l.ev) {
		n := copy(l.ev, l.ev[l.head:])
		l.ev, l.head = l.ev[:n], 0
	}
	// That lane's head moved: find the first lane again.
	q.lfirst = 0
	for m := q.lbusy; m != 0; m &= m - 1 {
		i := bits.TrailingZeros8(m)
		if q.lfirst == 0 || q.laneHead(i).less(q.laneHead(q.lfirst-1)) {
			q.lfirst = i + 1
		}
	}
	return e
}

// pushHeap4 adds e to the 4-ary min-heap h.
func pushHeap4(h []event, e event) []event {
	h = append(h, e)
	// Sift the hole up, moving parents down, then place e.
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !e.less(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
	return h
}

// popHeap4 removes and returns the minimum of the non-empty 4-ary min-heap h.
func popHeap4(h []event) ([]event, event) {
	top := h[0]
	n := len(h) - 1
	x := h[n]
	h = h[:n]
	// Sift the hole at the root down, moving the smallest child up, then
	// place the former last element.
	i := 0
	for {
		c := 4*i + 1
		var m int
		if c+4 <= n {
			// A full family: a two-round tournament, no loop.
			f := h[c : c+4 : c+4]
			a, b := 0, 2
			if f[1].less(&f[0]) {
				a = 1
			}
			if f[3].less(&f[2]) {
				b = 3
			}
			if f[b].less(&f[a]) {
				a = b
			}
			m = c + a
		} else if c < n {
			m = c
			for j := c + 1; j < n; j++ {
				if h[j].less(&h[m]) {
					m = j
				}
			}
		} else {
			break
		}
		if !h[m].less(&x) {
			break
		}
		h[i] = h[m]
		i = m
	}
	if n > 0 {
		h[i] = x
	}
	return h, top
}
