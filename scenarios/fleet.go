package scenarios

import (
	"strconv"

	"hedgelab/simnet"
)

// fleetWarnings returns the [fleet] warnings of cfg (built from s): a fleet
// with more instances than there are units to assign, so some instances
// receive no operations — with assignment = "partition", more instances
// than workload.partitions; with "uniform" and a closed loop, more
// instances than workload.clients.
func fleetWarnings(s *Scenario, cfg *simnet.Config, loc *locator) []*Error {
	n := cfg.Fleet.Instances
	if n <= 1 {
		return nil
	}
	units, what := 0, ""
	switch {
	case cfg.Fleet.Assignment == simnet.AssignPartition:
		units, what = max(cfg.Workload.Partitions, 1), "workload.partitions"
	case cfg.Workload.Clients > 0:
		units, what = cfg.Workload.Clients, "workload.clients"
	}
	if units == 0 || units >= n {
		return nil
	}
	return []*Error{{File: s.Source, Line: max(loc.line("fleet", "instances"), 1), Field: "fleet.instances",
		Msg: "warning: " + strconv.Itoa(n) + " instances but " + what + " = " + strconv.Itoa(units) + ": instances " +
			strconv.Itoa(units) + ".." + strconv.Itoa(n-1) + " receive no operations (see [fleet] assignment)"}}
}
