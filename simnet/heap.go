package simnet

import "time"

type evKind uint8

const (
	evArrival       evKind = iota + 1 // next open-loop arrival, or a closed-loop client's next operation
	evReplicaArrive                   // an attempt reaches its replica
	evResponse                        // an attempt's response reaches the client
	evTimer                           // a race timer
	evServerFree                      // a replica server frees up while requests are queued
)

// event is one pending event (32 bytes). Events are values ordered by (at,
// responses first, insertion sequence), so ties resolve in a fixed order;
// the last two are folded into one key, ord.
type event struct {
	at time.Duration
	// ord is the tie-break: bit 63 is set for every kind but evResponse (at
	// one instant a response is seen before a timer, spec §6.4: the primary
	// arm is polled before the threshold timer), the rest is the insertion
	// sequence. eventQueue.push sets it.
	ord uint64
	// id is the op slot (evReplicaArrive, evResponse, evTimer), the replica
	// (evServerFree) or the closed-loop client (evArrival; -1 = open loop).
	id   int32
	gen  uint32 // op slot generation: stale events are ignored
	aseq uint32 // attempt sequence (evReplicaArrive, evResponse)
	kind evKind
	sub  uint8 // leg (attempt events) or timer kind (evTimer)
}

// notResponse is event.ord's kind bit.
const notResponse = 1 << 63

func (a *event) less(b *event) bool {
	return a.at < b.at || a.at == b.at && a.ord < b.ord
}

// eventQueue orders events by (at, responses first, seq). It is a 4-ary
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

// stamp assigns e the next insertion sequence, fixing its place among
// events of the same instant. push stamps; a caller that holds an event
// back and pushes it later (see sim.park) stamps it when it would have been
// pushed, so the order is the same as if it had been pushed then.
func (q *eventQueue) stamp(e *event) {
	q.seq++
	e.ord = q.seq
	if e.kind != evResponse {
		e.ord |= notResponse
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
	h := q.ev
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
}

func (q *eventQueue) popHeap() event {
	h := q.ev
	top := h[0]
	n := len(h) - 1
	x := h[n]
	h = h[:n]
	q.ev = h
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
	return top
}
