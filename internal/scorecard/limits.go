package scorecard

import (
	"fmt"

	"hedgelab/internal/study"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// checkWork refuses a scenario whose scorecard could simulate more than
// the scenario limits allow a whole study (scenarios.MaxSimulatedOps
// operations, scenarios.MaxSimulatedWork requests): limit replications of
// each of the pols scored policies (the most the sequential rule may run),
// and start replications of the frontier's fixed thresholds that need runs
// of their own (frontier) and of the clairvoyant bound's two runs. It is
// checked before the first simulation, so a --reps or --cap beyond what a
// run can finish is a clear error, not an unbounded run.
func checkWork(s *scenarios.Scenario, cfg *simnet.Config, pols, frontier, start, limit int) error {
	runs := float64(limit)*float64(pols) + float64(start)*float64(frontier+2)
	what := fmt.Sprintf("up to %d replications × %d policies, %d replications × %d frontier and bound runs", limit, pols, start, frontier+2)
	if n := float64(study.ExpectedOps(cfg)) * runs; n > scenarios.MaxSimulatedOps {
		return fmt.Errorf("%s: the scorecard would simulate %.3g operations (%s); the limit is %.3g: lower --reps, --cap, or the scenario's duration_s or rate_per_s",
			s.Source, n, what, float64(scenarios.MaxSimulatedOps))
	}
	if n := cfg.ExpectedWork().Total() * runs; n > scenarios.MaxSimulatedWork {
		return fmt.Errorf("%s: the scorecard would send %.3g requests (%s); the limit is %.3g: lower --reps, --cap, or the scenario's duration_s or rate_per_s",
			s.Source, n, what, float64(scenarios.MaxSimulatedWork))
	}
	return nil
}
