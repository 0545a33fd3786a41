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

// event is one pending event. Events are values ordered by (at, responses
// first, seq): seq is the insertion sequence, so ties resolve in a fixed order.
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
	// primary arm is polled before the threshold timer), then insertion order.
	if ar, br := a.kind == evResponse, b.kind == evResponse; ar != br {
		return ar
	}
	return a.seq < b.seq
}

// eventQueue is a 4-ary min-heap of events.
type eventQueue struct {
	ev  []event
	seq uint64
}

func (q *eventQueue) Len() int { return len(q.ev) }

func (q *eventQueue) push(e event) {
	q.seq++
	e.seq = q.seq
	q.ev = append(q.ev, e)
	i := len(q.ev) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !q.ev[i].less(&q.ev[p]) {
			break
		}
		q.ev[i], q.ev[p] = q.ev[p], q.ev[i]
		i = p
	}
}

func (q *eventQueue) pop() event {
	top := q.ev[0]
	n := len(q.ev) - 1
	q.ev[0] = q.ev[n]
	q.ev = q.ev[:n]
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < c+4 && j < n; j++ {
			if q.ev[j].less(&q.ev[m]) {
				m = j
			}
		}
		if !q.ev[m].less(&q.ev[i]) {
			break
		}
		q.ev[i], q.ev[m] = q.ev[m], q.ev[i]
		i = m
	}
	return top
}
