package simnet

import (
	"math/rand/v2"
	"testing"
	"time"

	"hedgelab/hedging"
)

// TestEventQueueOrder pushes random events (some in time order, as
// arrivals and timers are, in the queue's FIFO lanes, some not; up to 1200
// pending, so the calendar is used) interleaved
// with pops and checks that every pop returns the minimum, by (at,
// responses first, seq), of the events pending at that moment.
func TestEventQueueOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	var q eventQueue
	var pending []event
	var now time.Duration
	var mono [3]time.Duration
	for i := 0; i < 100000; i++ {
		if q.Len() != len(pending) {
			t.Fatalf("Len %d, want %d", q.Len(), len(pending))
		}
		// Phases that let the queue grow (past calendarMin: the calendar
		// is used) alternate with phases that drain it.
		popOdds := 2
		if i/20000%2 == 1 {
			popOdds = 3
		}
		if len(pending) > 0 && (r.IntN(5) < popOdds || len(pending) > 1200) {
			e := q.pop()
			mi := 0
			for j := range pending {
				if pending[j].less(&pending[mi]) {
					mi = j
				}
			}
			if pending[mi] != e {
				t.Fatalf("popped %+v, minimum is %+v", e, pending[mi])
			}
			pending = append(pending[:mi], pending[mi+1:]...)
			now = e.at
			continue
		}
		var e event
		switch r.IntN(8) {
		case 0: // monotone arrivals, threshold and deadline timers: each a lane of its own
			k := r.IntN(len(mono))
			mono[k] = max(mono[k], now) + time.Duration(r.IntN(3))
			e = event{at: mono[k], kind: []evKind{evArrival, evTimer, evTimer}[k], sub: []uint8{0, uint8(hedging.TimerThreshold), uint8(hedging.TimerDeadline)}[k]}
			if k == 0 && r.IntN(2) == 0 {
				e.id = -1 // an open-loop arrival: the queue's arrival slot, if free
			}
			if r.IntN(20) == 0 {
				e.at = max(now, e.at-time.Duration(r.IntN(5))) // now and then out of its lane's order
			}
		case 1:
			e = event{at: now + time.Duration(r.IntN(50)), kind: evResponse}
		case 2:
			// far-future responses, in the calendar's ring
			e = event{at: now + time.Duration(r.IntN(200))*time.Millisecond, kind: evResponse}
		case 3:
			// beyond the ring's span: the overflow heap
			e = event{at: now + time.Duration(r.IntN(5000))*time.Millisecond, kind: evResponse}
		case 4:
			// ties at a bucket boundary, of both orders of kind
			kind := evResponse
			if r.IntN(2) == 0 {
				kind = evTimer
			}
			e = event{at: (now>>bucketShift + time.Duration(r.IntN(3))) << bucketShift, kind: kind}
		default:
			e = event{at: now + time.Duration(r.IntN(50)), kind: evReplicaArrive}
		}
		q.push(e)
		e.ord = q.seq | notResponse
		if e.kind == evResponse {
			e.ord = q.seq
		}
		pending = append(pending, e)
	}
}
