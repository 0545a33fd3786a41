package simnet

import (
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

// event is one pending event. Events are values ordered by (at, responses
// first, the primary's responses before the alternate's, seq): seq is the
// insertion sequence, so ties resolve in a fixed order.
type event struct {
	at   time.Duration
	seq  uint64
	op   int32  // op slot
	gen  uint32 // op slot generation: stale events are ignored
	aseq uint32 // attempt sequence (evReplicaArrive, evResponse)
	rep  int32  // replica (evReplicaArrive, evServerFree) or client (evArrival)
	kind evKind
	sub  uint8 // leg (attempt events) or timer kind (evTimer)
}

func (a *event) less(b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	// At one instant a response is seen before a timer (spec §6.4: the
	// primary arm is polled before the threshold timer), responses in the
	// race core's tie order (the primary's first, hedging.Leg.WinsTie),
	// then insertion order.
	ar, br := a.kind == evResponse, b.kind == evResponse
	if ar != br {
		return ar
	}
	if ar && a.sub != b.sub {
		return hedging.Leg(a.sub).WinsTie(hedging.Leg(b.sub))
	}
	return a.seq < b.seq
}

// eventQueue orders events by (at, responses first, leg, seq). It is a 4-ary
// min-heap plus a FIFO run: most timers (a static threshold, arrivals) are
// pushed in non-decreasing time order, and an event no earlier than the
// FIFO's tail goes there in O(1) instead of into the heap; pop takes the
// smaller of the two heads. The order is exactly the heap's.
type eventQueue struct {
	ev   []event
	fifo []event
	head int
	seq  uint64
}

func (q *eventQueue) Len() int { return len(q.ev) + len(q.fifo) - q.head }

func (q *eventQueue) push(e event) {
	q.seq++
	e.seq = q.seq
	if e.kind != evResponse {
		if n := len(q.fifo); n == q.head || !e.less(&q.fifo[n-1]) {
			if q.head > 0 && q.head == n {
				q.fifo, q.head = q.fifo[:0], 0
			}
			q.fifo = append(q.fifo, e)
			return
		}
	}
	q.pushHeap(e)
}

func (q *eventQueue) pop() event {
	if q.head < len(q.fifo) && (len(q.ev) == 0 || q.fifo[q.head].less(&q.ev[0])) {
		e := q.fifo[q.head]
		q.head++
		if q.head > 4096 && q.head*2 > len(q.fifo) {
			n := copy(q.fifo, q.fifo[q.head:])
			q.fifo, q.head = q.fifo[:n], 0
		}
		return e
	}
	return q.popHeap()
}

func (q *eventQueue) pushHeap(e event) {
	q.ev = append(q.ev, e)
	// Sift the hole up, moving parents down, then place e.
	i := len(q.ev) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !e.less(&q.ev[p]) {
			break
		}
		q.ev[i] = q.ev[p]
		i = p
	}
	q.ev[i] = e
}

func (q *eventQueue) popHeap() event {
	top := q.ev[0]
	n := len(q.ev) - 1
	x := q.ev[n]
	q.ev = q.ev[:n]
	if n == 0 {
		return top
	}
	// Sift the hole at the root down, moving the smallest child up, then
	// place the former last element.
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		end := min(c+4, n)
		for j := c + 1; j < end; j++ {
			if q.ev[j].less(&q.ev[m]) {
				m = j
			}
		}
		if !q.ev[m].less(&x) {
			break
		}
		q.ev[i] = q.ev[m]
		i = m
	}
	q.ev[i] = x
	return top
}
