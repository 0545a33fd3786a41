package calibrate

// This file fits the same-region round trip from slow episodes: telemetry
// sees a client-region replica's attempt latency, round trip plus service
// time, and a slow episode multiplies the service time alone, so the
// round trip is the constant that lets one factor carry the baseline onto
// every episode's latencies, its body and its tail alike.

import (
	"fmt"
	"math"
)

// sameRTTSteps is how many candidate round trips are tried, evenly from 0
// to just below the baseline's 0.5% latency quantile.
const sameRTTSteps = 40

// fitSameRegionRTT sets the RTTMs of the replicas in the client's region
// (and m.SameRegionRTTMs) to the round trip, from 0 to below the
// baseline's 0.5% quantile, that minimises the attempts-weighted
// Kolmogorov–Smirnov distance between each slow episode's service times
// and the baseline's times one fitted factor. It keeps 0 without a slow
// episode of 50 attempts or more, or when the best round trip improves
// the distance at 0 by less than a fifth (an episode that is not a
// factor, such as a slow fraction, says nothing of the round trip).
func (m *Model) fitSameRegionRTT(t *Telemetry) {
	for _, r := range m.Regions {
		if r.Physical != m.ClientRegion || r.RTTMs != 0 {
			continue
		}
		scratch := *r
		rws := regionWindows(t, &scratch)
		if scratch.Answered+scratch.Abandoned < detectMinAttempts {
			continue
		}
		slow := m.slowWindows(rws)
		segs := segments(slow, rws, nil)
		var ev, ce []Bin
		for i, rw := range rws {
			if !slow[i] {
				ev = append(ev, rw.ok...)
				ce = append(ce, rw.abandoned...)
			}
		}
		base := kaplanMeier(ev, ce)
		if base.events == 0 || len(segs) == 0 {
			continue
		}
		hi := base.quantile(0.005)
		distance := func(rtt float64) (float64, bool) {
			b := kaplanMeier(shift(ev, rtt), shift(ce, rtt))
			var total, weight float64
			for _, sg := range segs {
				var sev, sce []Bin
				for w := sg.from; w < sg.to; w++ {
					sev = append(sev, rws[w].ok...)
					sce = append(sce, rws[w].abandoned...)
				}
				e := kaplanMeier(shift(sev, rtt), shift(sce, rtt))
				n := e.events + e.censored
				if n < 50 {
					continue
				}
				total += n * factorKS(&b, &e)
				weight += n
			}
			return total / weight, weight > 0
		}
		at0, ok := distance(0)
		if !ok {
			continue
		}
		best, bestRTT := at0, 0.0
		for i := 1; i < sameRTTSteps; i++ {
			rtt := hi * float64(i) / sameRTTSteps
			if v, _ := distance(rtt); v < best {
				best, bestRTT = v, rtt
			}
		}
		if best > 0.8*at0 {
			continue
		}
		bestRTT = sig3(bestRTT)
		m.SameRegionRTTMs = bestRTT
		m.SameRegionRTTNote = fmt.Sprintf("fitted from %s's %d slow episode(s): the round trip that lets one factor on the service time carry the baseline onto each episode's latencies (KS distance %.3f, %.3f with none)", r.Name, len(segs), best, at0)
		for _, o := range m.Regions {
			if o.Physical == m.ClientRegion {
				o.RTTMs = bestRTT
				o.RTTNote = "the client's own region: same_region_rtt_ms, " + m.SameRegionRTTNote
			}
		}
		return
	}
}

// factorKS is the smallest Kolmogorov–Smirnov distance between e and b
// scaled by a factor k, over k from 1 to 20 (a log grid, refined).
func factorKS(b, e *cdf) float64 {
	ks := func(k float64) float64 {
		worst := 0.0
		for i, x := range e.x {
			worst = math.Max(worst, math.Abs(b.at(x/k)-e.f[i]))
		}
		return worst
	}
	best, bk := math.Inf(1), 1.0
	for i := 0; i <= 120; i++ {
		k := math.Pow(20, float64(i)/120)
		if v := ks(k); v < best {
			best, bk = v, k
		}
	}
	k0 := bk
	for i := -12; i <= 12; i++ {
		if v := ks(k0 * math.Pow(1.002, float64(i))); v < best {
			best = v
		}
	}
	return best
}
