package simnet

import (
	"math/rand/v2"
	"time"
)

// arrivalStream is the PCG stream of an open loop's arrivals (seeded with
// the replication's seed).
const arrivalStream = 0xa77

// interarrivalGap is the open loop's gap to the next arrival: exponential
// with mean 1/rate s, drawn from the arrival stream r.
func interarrivalGap(r *rand.Rand, ratePerSec float64) time.Duration {
	return msDur(r.ExpFloat64() / ratePerSec * 1000)
}

// arrivalGap is the open loop's time from now to its next arrival, drawn
// from the arrival stream r: exponential at RatePerSec, or following
// RateChanges ([varyingGap]) when there are any. Run and FirstArrival both
// draw arrivals through it, so they agree.
func arrivalGap(w *Workload, r *rand.Rand, now, duration time.Duration) time.Duration {
	if len(w.RateChanges) > 0 {
		return varyingGap(w, r, now, duration)
	}
	return interarrivalGap(r, w.RatePerSec)
}

// firstThink is closed-loop client c's first think time in replication
// seed seed, drawn with pcg (reseeded).
func firstThink(w *Workload, pcg *rand.PCG, seed uint64, c int) time.Duration {
	pcg.Seed(seed, key(purposeThink, uint64(c), 0, 0))
	return msDur(w.Think.Sample(rand.New(pcg)))
}

// FirstArrival reports whether any operation arrives in replication
// replication (0-based, as for [Run]) of c, and when the first does: the
// open loop's first arrival, or the earliest first think time of the
// closed loop's clients, arrives if it is before c.Duration (always when
// Duration is 0, and MaxOps ≥ 1 then). It draws exactly what [Run]
// draws, so a run whose FirstArrival is false has no operation; its cost
// is one draw per closed-loop client at most, stopping at the first that
// arrives. c must be valid ([Config.Validate]).
func (c *Config) FirstArrival(replication int) (time.Duration, bool) {
	seed := ReplicationSeed(c.Seed, replication)
	w := &c.Workload
	first := time.Duration(-1)
	var pcg rand.PCG
	arrives := func(at time.Duration) bool { return c.Duration <= 0 || at < c.Duration }
	if w.RatePerSec > 0 {
		pcg.Seed(seed, arrivalStream)
		first = arrivalGap(w, rand.New(&pcg), 0, c.Duration)
		return first, arrives(first)
	}
	for i := 0; i < w.Clients; i++ {
		at := firstThink(w, &pcg, seed, i)
		if arrives(at) {
			return at, true
		}
		if first < 0 || at < first {
			first = at
		}
	}
	return first, false
}
