package simnet

import (
	"math"
	"math/bits"
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

// eventQueue orders events by (at, responses first, tie order, seq). Three stores
// hold the pending events, and pop takes the smallest of their heads:
//
//   - a FIFO run: most timers (a static threshold, arrivals) are pushed in
//     non-decreasing time order, and an event no earlier than the FIFO's
//     tail goes there in O(1);
//   - a 4-ary min-heap, the near heap, which takes every event due before
//     horizon, and any event while fewer than calendarMin are pending;
//   - a calendar of the other events, all due at or after horizon: a ring
//     of buckets of width 2^bucketShift ns, unsorted, covering
//     calendarSpan, with an overflow heap beyond it. Before an event due at
//     or after horizon is popped, the calendar's buckets up to it are moved
//     into the near heap, and horizon past them.
//
// So under load the heap that pop sifts through holds only the events of
// the next bucket or so, not every response in flight (a slow tail puts
// thousands of them hundreds of milliseconds ahead), and at low rates the
// calendar stays empty. The order is exactly that of one heap.
type eventQueue struct {
	ev   []event // the near heap
	fifo []event
	head int
	seq  uint64

	horizon  time.Duration // a multiple of the bucket width
	buckets  [][]event     // buckets[i] holds events due in bucket i (mod the ring)
	full     []uint64      // bit i: buckets[i] is not empty
	inRing   int           // events in buckets
	overflow []event       // a 4-ary heap of the events due at or after horizon+calendarSpan
}

const (
	calendarMin  = 512 // pending events below which everything goes to the near heap
	bucketShift  = 17  // bucket width 2^17 ns ≈ 131 µs
	ringBuckets  = 1 << 13
	calendarSpan = ringBuckets << bucketShift // ≈ 1.07 s
	// bucketCap is each bucket's first capacity, carved from one block
	// (ringBuckets*bucketCap events, 4 MiB), so that a busy run's buckets
	// do not each grow from nothing (1, 2, 4, ... appends reallocating).
	bucketCap = 16
)

func (q *eventQueue) Len() int {
	return len(q.ev) + len(q.fifo) - q.head + q.inRing + len(q.overflow)
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

func (q *eventQueue) push(e event) {
	q.stamp(&e)
	q.pushStamped(e)
}

// pushStamped queues an event stamped earlier by stamp.
func (q *eventQueue) pushStamped(e event) {
	if e.kind != evResponse {
		if n := len(q.fifo); n == q.head || !e.less(&q.fifo[n-1]) {
			if q.head > 0 && q.head == n {
				q.fifo, q.head = q.fifo[:0], 0
			}
			q.fifo = append(q.fifo, e)
			return
		}
	}
	q.pushLater(e)
}

// pushLater queues e in the near heap, the calendar or the overflow heap.
func (q *eventQueue) pushLater(e event) {
	switch {
	case e.at < q.horizon || q.Len() < calendarMin:
		q.ev = pushHeap4(q.ev, e)
	case e.at-q.horizon < calendarSpan:
		if q.buckets == nil {
			q.buckets = make([][]event, ringBuckets)
			block := make([]event, ringBuckets*bucketCap)
			for i := range q.buckets {
				q.buckets[i] = block[i*bucketCap : i*bucketCap : (i+1)*bucketCap]
			}
			q.full = make([]uint64, ringBuckets/64)
		}
		i := int(e.at>>bucketShift) & (ringBuckets - 1)
		q.buckets[i] = append(q.buckets[i], e)
		q.full[i/64] |= 1 << (i % 64)
		q.inRing++
	default:
		q.overflow = pushHeap4(q.overflow, e)
	}
}

// advance moves the next non-empty bucket into the near heap and horizon
// past it, then brings overflow events now within the ring's span into it.
// It does nothing and reports false when the calendar and the overflow
// heap are empty or the next bucket starts after limit.
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
	b := q.buckets[i]
	for _, e := range b {
		q.ev = pushHeap4(q.ev, e)
	}
	q.inRing -= len(b)
	q.buckets[i] = b[:0]
	q.full[i/64] &^= 1 << (i % 64)
	q.horizon += time.Duration(n+1) << bucketShift
	q.migrate()
	return true
}

// migrate moves overflow events due before horizon+calendarSpan into the
// ring.
func (q *eventQueue) migrate() {
	for len(q.overflow) > 0 && q.overflow[0].at-q.horizon < calendarSpan {
		var e event
		q.overflow, e = popHeap4(q.overflow)
		q.pushLater(e)
	}
}

func (q *eventQueue) pop() event {
	// Everything in the calendar is due at or after horizon, and at or
	// after the start of its bucket: unless the near heap's or the FIFO's
	// head comes before horizon, move the calendar's buckets that start no
	// later than that head into the near heap.
	for q.inRing+len(q.overflow) > 0 && (len(q.ev) == 0 || q.ev[0].at >= q.horizon) {
		next := time.Duration(math.MaxInt64)
		if len(q.ev) > 0 {
			next = q.ev[0].at
		}
		if q.head < len(q.fifo) {
			next = min(next, q.fifo[q.head].at)
		}
		if next < q.horizon || !q.advance(next) {
			break
		}
	}
	if q.head < len(q.fifo) && (len(q.ev) == 0 || q.fifo[q.head].less(&q.ev[0])) {
		e := q.fifo[q.head]
		q.head++
		if q.head > 4096 && q.head*2 > len(q.fifo) {
			n := copy(q.fifo, q.fifo[q.head:])
			q.fifo, q.head = q.fifo[:n], 0
		}
		return e
	}
	var e event
	q.ev, e = popHeap4(q.ev)
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
