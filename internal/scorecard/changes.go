package scorecard

import (
	"strings"

	"hedgelab/scenarios"
)

// changes names what in a scenario changes the conditions during a run
// (Card.Changes), "" for a scenario whose conditions hold from start to
// end: any [[episodes]] entry (a window of slower or failing replicas);
// any [[workload.rate_changes]] entry; a [[faults]] entry with a window
// (start_s > 0 or end_s set: a fault for the whole run is a condition, not
// a change); a [[background]] entry with a window. Feed-only events
// (metadata splits, lag episodes) are not counted: they change what a
// feed sees, not the point reads the headline is on.
func changes(f *scenarios.File) string {
	var what []string
	if len(f.Episodes) > 0 {
		what = append(what, "episodes")
	}
	if len(f.Workload.RateChanges) > 0 {
		what = append(what, "rate_changes")
	}
	for _, x := range f.Faults {
		if x.StartS > 0 || x.EndS > 0 {
			what = append(what, "a fault window")
			break
		}
	}
	for _, x := range f.Background {
		if x.StartS > 0 || x.EndS != nil {
			what = append(what, "a background window")
			break
		}
	}
	return strings.Join(what, ", ")
}
