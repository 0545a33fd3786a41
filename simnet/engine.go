package simnet

// This file holds the event engine: the run loop that pops events in
// virtual-time order and dispatches them, and the keyed random draws
// (common random numbers) and delay bounds every model uses.

import (
	"math/rand/v2"
	"time"

	"hedgelab/hedging"
)

// Purposes of keyed random draws (common random numbers).
const (
	purposeJitter uint64 = iota + 1
	purposeService
	purposeFault
	purposeEpisode
	purposeThink
	purposeInstance // fleet instance of an open-loop operation (fleet.go)
)

// mix64 is the splitmix64 finaliser.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func key(purpose, a, b, c uint64) uint64 {
	return mix64(mix64(mix64(purpose^mix64(a))^b) ^ c)
}

// ReplicationSeed derives the seed of replication r from the scenario seed.
func ReplicationSeed(seed uint64, r int) uint64 {
	if r == 0 {
		return seed
	}
	return mix64(seed ^ mix64(uint64(r)))
}

// cancelCheckEvents is how many events Run processes between checks of
// RunOptions.Context (a power of two; ~1 ms of simulation).
const cancelCheckEvents = 1 << 14

// MaxDelay caps every sampled delay (service time, network, think time,
// interarrival gap) so that virtual time can never overflow, whatever a
// distribution draws: 1000 hours. Latencies are recorded up to the same
// bound.
const MaxDelay = 1000 * time.Hour

// minOneWay is the shortest time a retry takes between the client and a
// replica, each way: a retry's round trip (Config RTTs plus jitter)
// shorter than 2 × minOneWay is taken as 2 × minOneWay. Without it, an
// attempt refused at a replica with a zero RTT (a full queue, say) was
// answered, retried and refused again at the same virtual instant, before
// anything at the replica could change: every retry was refused,
// inflating attempts. A first attempt keeps its configured RTT, so a
// zero-RTT scenario's races stay exact (the shared race cases).
const minOneWay = time.Microsecond

// msDur converts a sampled delay in ms to a duration in [0, MaxDelay].
func msDur(ms float64) time.Duration {
	d := ms * float64(time.Millisecond)
	if !(d > 0) { // negative, zero or NaN
		return 0
	}
	if d >= float64(MaxDelay) {
		return MaxDelay
	}
	return time.Duration(d)
}

// draw reseeds the shared generator for one keyed draw.
func (s *sim) draw(purpose, a, b, c uint64) *rand.Rand {
	s.pcg.Seed(s.seed, key(purpose, a, b, c))
	return s.rng
}

// run simulates until the event queue is empty and returns true, or
// returns false as soon as it sees done closed or the run over its work
// or memory limit (s.workErr set), all checked every cancelCheckEvents events
// (nil never closes).
func (s *sim) run(done <-chan struct{}) bool {
	s.initCapacity()
	s.initFeed()
	w := &s.cfg.Workload
	if w.RatePerSec > 0 {
		s.q.push(event{at: s.interarrival(), kind: evArrival, id: -1})
	} else {
		for c := 0; c < w.Clients; c++ {
			s.q.push(event{at: firstThink(w, &s.pcg, s.seed, c), kind: evArrival, id: int32(c)})
		}
	}
	for s.q.Len() > 0 {
		ev := s.q.pop()
		s.now = ev.at
		s.stats.Events++
		if s.stats.Events&(cancelCheckEvents-1) == 0 {
			if s.overWork() || s.overMemory() {
				return false
			}
			if s.stats.Events > s.eventCap {
				s.overrun = true // the work invariant (invariants.go)
				return false
			}
			if done != nil {
				select {
				case <-done:
					return false
				default:
				}
			}
		}
		switch ev.kind {
		case evArrival:
			s.arrival(ev)
		case evReplicaArrive:
			s.replicaArrive(ev)
		case evResponse:
			if o := &s.ops[ev.id]; o.gen == ev.gen {
				if st := &o.att[ev.sub]; st.a.Seq == ev.aseq {
					st.respQueued = false
					if !st.cancelled {
						if s.obs != nil {
							s.observeAnswer(st)
						}
						o.race.Responded(&s.eff, s.now, &st.a, &st.res)
						s.perform(ev.id, &s.eff)
					}
				}
				if o.nparked > 0 && o.parkLeg == ev.sub && o.parkSeq == ev.aseq {
					s.unpark(o)
				}
			}
		case evTimer:
			if o := &s.ops[ev.id]; o.gen == ev.gen {
				o.race.TimerFired(&s.eff, s.now, hedging.TimerKind(ev.sub))
				s.perform(ev.id, &s.eff)
			}
		case evServerFree:
			s.serverFree(ev)
		case evBackground:
			s.backgroundArrive(ev)
		case evBackgroundRetry:
			s.backgroundRetry(ev)
		case evFeed:
			s.feedEvent(ev)
		}
	}
	s.stats.End = max(s.now, s.deadEnd)
	s.stats.poolLatency()
	s.finishCapacity()
	if s.fx != nil {
		s.finishFeed()
	}
	s.stats.ArrivalsEnd = s.lastStart
	if s.cfg.Duration > 0 && (s.cfg.MaxOps <= 0 || s.nextIdx < uint64(s.cfg.MaxOps)) {
		s.stats.ArrivalsEnd = s.cfg.Duration // arrivals ran until Duration
	}
	return true
}
