package simnet

// This file holds the run's memory bound: the in-flight state a run may
// hold at once. Work limits (work.go) bound what a run sends in total, not
// what it holds: a huge rate into a tiny capacity (or a queue_limit of
// 10⁶) keeps every operation alive while it waits, and each live operation
// holds its race (about 2 KB). Run checks the bound every cancelCheckEvents
// events and ends a run above it with an error wrapping [ErrMemoryLimit],
// so no input runs out of memory (issue 24).

import (
	"errors"
	"fmt"
)

// MaxLiveOperations is the most operations (and feed pages, which hold an
// operation's state too) one run may hold in flight at once: started and
// not yet settled, legs queued at replicas included. Each holds about
// 2 KB of state in one growing slice, so 2^16 of them are 0.13 GB live and
// several times that while the slice grows; a realistic scenario
// (hundreds to thousands of reads a second at latencies under a second)
// holds a few thousand, an outage without timeouts rate × its length.
const MaxLiveOperations = 1 << 16

// MaxPendingRequests is the most entries one run may hold at once in its
// event queue and its replicas' queues together (every request waiting or
// in transit, background requests included): 2^22 entries are about
// 0.2 GB.
const MaxPendingRequests = 1 << 22

// ErrMemoryLimit is wrapped by the error of a run that held more in-flight
// state at once than MaxLiveOperations or MaxPendingRequests allow.
var ErrMemoryLimit = errors.New("simnet: the run's in-flight limit was reached")

// overMemory reports whether the run holds more in-flight state than the
// memory bound allows (checked by the event loop every cancelCheckEvents
// events), and records the error that ends it.
func (s *sim) overMemory() bool {
	live := len(s.ops) - len(s.free)
	if s.fx != nil {
		live += len(s.fx.ops) - len(s.fx.freeOps)
	}
	pending := s.q.Len()
	for i := range s.reps {
		pending += len(s.reps[i].queue)
	}
	switch {
	case live > MaxLiveOperations:
		s.workErr = fmt.Errorf("%w: %d operations in flight at once by virtual time %v, above the limit of %d (MaxLiveOperations); arrivals outpace what the replicas serve (rate against servers × service time, queue_limit, request and operation timeouts)",
			ErrMemoryLimit, live, s.now, MaxLiveOperations)
	case pending > MaxPendingRequests:
		s.workErr = fmt.Errorf("%w: %d requests pending at once (events and replica queues) by virtual time %v, above the limit of %d (MaxPendingRequests); arrivals outpace what the replicas serve (rate and background rate against servers × service time, queue_limit)",
			ErrMemoryLimit, pending, s.now, MaxPendingRequests)
	default:
		return false
	}
	return true
}
