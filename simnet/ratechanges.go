package simnet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// RateChange is one change of the open-loop arrival rate over time: from
// At the rate moves linearly, over Ramp, from the rate in force to
// RatePerSec, and stays there until the next change. Ramp 0 is a step.
// Changes are in time order and do not overlap (each starts at or after
// the previous one's At + Ramp).
type RateChange struct {
	At, Ramp   time.Duration
	RatePerSec float64 // >= 0
}

// validateRateChanges reports the first change out of order, overlapping
// or with a bad rate, naming its index.
func (w *Workload) validateRateChanges() error {
	end := time.Duration(0)
	for i, c := range w.RateChanges {
		switch {
		case w.RatePerSec <= 0:
			return fmt.Errorf("simnet: Workload.RateChanges[%d]: rate changes need an open-loop RatePerSec", i)
		case !(c.RatePerSec >= 0) || math.IsInf(c.RatePerSec, 0):
			return fmt.Errorf("simnet: Workload.RateChanges[%d]: RatePerSec must be >= 0, got %v", i, c.RatePerSec)
		case c.At < 0 || c.Ramp < 0:
			return fmt.Errorf("simnet: Workload.RateChanges[%d]: At and Ramp must be >= 0", i)
		case c.At < end:
			return fmt.Errorf("simnet: Workload.RateChanges[%d]: starts at %v, before the previous change ends (%v)", i, c.At, end)
		}
		end = c.At + c.Ramp
	}
	return nil
}

// MeanArrivals returns the expected number of open-loop arrivals in
// [0, d): the integral of RateAt over it (the rate is piecewise linear).
func (w *Workload) MeanArrivals(d time.Duration) float64 {
	if w.RatePerSec <= 0 || d <= 0 {
		return 0
	}
	// The rate is linear between these breakpoints.
	points := []time.Duration{0}
	for _, c := range w.RateChanges {
		points = append(points, c.At, c.At+c.Ramp)
	}
	points = append(points, d)
	n := 0.0
	for i := 1; i < len(points); i++ {
		a, b := min(points[i-1], d), min(points[i], d)
		if b > a {
			n += (w.RateAt(a) + w.RateAt(b-1)) / 2 * (b - a).Seconds()
		}
	}
	return n
}

// endless reports whether c's arrivals can never end: no Duration, and a
// rate that falls to 0 for good, so MaxOps is never reached.
func (c *Config) endless() bool {
	rc := c.Workload.RateChanges
	return c.Duration <= 0 && len(rc) > 0 && rc[len(rc)-1].RatePerSec == 0
}

// maxRate returns the largest arrival rate the workload reaches.
func (w *Workload) maxRate() float64 {
	m := w.RatePerSec
	for _, c := range w.RateChanges {
		m = max(m, c.RatePerSec)
	}
	return m
}

// RateAt returns the open-loop arrival rate in force at t (per second).
func (w *Workload) RateAt(t time.Duration) float64 {
	r := w.RatePerSec
	for _, c := range w.RateChanges {
		switch {
		case t < c.At:
			return r
		case t < c.At+c.Ramp:
			f := float64(t-c.At) / float64(c.Ramp)
			return r + f*(c.RatePerSec-r)
		}
		r = c.RatePerSec
	}
	return r
}

// varyingGap returns the time from now to the next arrival of a Poisson
// process whose rate follows w.RateAt (thinning: candidates at the largest
// rate, each kept with probability RateAt/largest), drawn from the arrival
// stream r. Past the end of a run of length duration (0 = none) it returns
// a time after it.
func varyingGap(w *Workload, r *rand.Rand, now, duration time.Duration) time.Duration {
	peak := w.maxRate()
	t := now
	for {
		if peak <= 0 {
			return max(duration, now) + time.Second - now
		}
		t += interarrivalGap(r, peak)
		if r.Float64()*peak < w.RateAt(t) || (duration > 0 && t >= duration) {
			return t - now
		}
	}
}
