package scorecard

import (
	"strings"

	"hedgelab/scenarios"
)

// minChangeShare is the least share of a run a change must hold for it to
// change the run's conditions: 1 − the lowest scored quantile (scoredQ[0],
// the p99: 1%). A window holding less of the run holds, at a steady rate,
// fewer operations than lie beyond the p99, so however slow or failing
// they are they move the p99 no further than to the p(99 − 100 × share)
// of the conditions around them; and a change that leaves less than that
// share of the run as it was is the run's condition, not a change. (The
// p99.9 can be made by a window of 0.1% alone: a member with such a
// window is scored on it, but does not count as "changing".)
var minChangeShare = 1 - scoredQ[0]

// changes names what in a scenario changes the conditions during a run
// (Card.Changes), "" for a scenario whose conditions hold from start to
// end, given the run's length in seconds (scenarios.RunLength; <= 0 when
// unknown: every window counts): [[episodes]] windows, the windows of
// [[faults]] and [[background]] entries that have one (start_s > 0 or an
// end_s: a fault or background load for the whole run is a condition),
// and [[workload.rate_changes]] — each kind when its windows together
// hold at least minChangeShare of the run and leave at least that share
// outside (the rate changes hold from the first at_s to the run's end). Feed-only
// events (metadata splits, lag episodes) are not counted: they change
// what a feed sees, not the point reads the headline is on.
func changes(f *scenarios.File, length float64) string {
	var what []string
	share := func(windows [][2]float64) bool {
		if len(windows) == 0 {
			return false
		}
		if !(length > 0) {
			return true
		}
		held := 0.0
		for _, w := range windows {
			held += max(min(w[1], length)-max(w[0], 0), 0)
		}
		held = min(held/length, 1)
		return min(held, 1-held) >= minChangeShare
	}
	end := func(e float64) float64 {
		if e > 0 {
			return e
		}
		return length
	}
	var ep, rc, fw, bw [][2]float64
	for _, x := range f.Episodes {
		ep = append(ep, [2]float64{x.StartS, x.EndS})
	}
	if r := f.Workload.RateChanges; len(r) > 0 { // in time order
		rc = append(rc, [2]float64{r[0].AtS, length})
	}
	for _, x := range f.Faults {
		if x.StartS > 0 || x.EndS > 0 {
			fw = append(fw, [2]float64{x.StartS, end(x.EndS)})
		}
	}
	for _, x := range f.Background {
		if x.StartS > 0 || x.EndS != nil {
			e := length
			if x.EndS != nil {
				e = *x.EndS
			}
			bw = append(bw, [2]float64{x.StartS, e})
		}
	}
	for _, k := range []struct {
		name    string
		windows [][2]float64
	}{{"episodes", ep}, {"rate_changes", rc}, {"a fault window", fw}, {"a background window", bw}} {
		if share(k.windows) {
			what = append(what, k.name)
		}
	}
	return strings.Join(what, ", ")
}
