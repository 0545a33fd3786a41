package scenarios

import (
	"fmt"
	"math"
	"time"

	"hedgelab/simnet"
)

// sureArrivals is the expected number of operations per replication from
// which checkArrivals takes an arrival for granted: the chance that a
// Poisson stream of that mean has none is e^-40 ≈ 4e-18.
const sureArrivals = 40

// maxArrivalDraws bounds the first think times checkArrivals draws for a
// closed loop (one per client and replication until one arrives).
const maxArrivalDraws = 10_000_000

// emptyReplications returns the replications (0-based) of cfg in which no
// operation arrives ([simnet.Config.FirstArrival]: the first arrival is at
// or after duration_s) and the first of those would-be arrivals. expected
// is the expected number of operations per replication; at
// [sureArrivals] or more nothing is drawn and none is empty, and a closed
// loop is checked for at most [maxArrivalDraws] think times.
func emptyReplications(cfg *simnet.Config, reps int) (empty []int, first time.Duration) {
	if expectedPerRep(cfg) >= sureArrivals {
		return nil, 0
	}
	draws := 0
	for r := range reps {
		if cfg.Workload.Clients > 0 {
			if draws += cfg.Workload.Clients; draws > maxArrivalDraws {
				return empty, first
			}
		}
		at, ok := cfg.FirstArrival(r)
		if ok {
			continue
		}
		if len(empty) == 0 {
			first = at
		}
		empty = append(empty, r)
	}
	return empty, first
}

// checkArrivals refuses a scenario in none of whose replications an
// operation arrives, which `hedgesim run` could only report after
// simulating. Replications that are empty while others are not are left
// out of the means by the report (summary.json empty_replications), and
// [Scenario.Warnings] says so. It reports whether the check passed.
func (b *builder) checkArrivals(cfg *simnet.Config, reps int) bool {
	empty, first := emptyReplications(cfg, reps)
	if len(empty) == 0 || len(empty) < reps {
		return true
	}
	var root fpath
	rep := "the run"
	if reps > 1 {
		rep = fmt.Sprintf("any of the %d replications", reps)
	}
	b.fail(root.key("duration_s"), "no operation arrives in %s: the first would arrive at %v, at or after duration_s = %g s (%.3g expected per replication); raise duration_s or the rate",
		rep, first.Round(time.Microsecond), b.f.DurationS, expectedPerRep(cfg))
	return false
}

// expectedPerRep is the expected number of operations of one replication
// of cfg: the arrivals rate_per_s and its rate changes lead to over
// duration_s (closed loop: clients × duration / mean think
// time), at most max_ops.
func expectedPerRep(cfg *simnet.Config) float64 {
	w := cfg.Workload
	n := math.Inf(1)
	if d := cfg.Duration.Seconds(); d > 0 {
		switch {
		case w.RatePerSec > 0:
			n = w.MeanArrivals(cfg.Duration) // rate changes included (found by hedgesim fuzz)
		case w.Clients > 0 && w.Think != nil && w.Think.Mean() > 0:
			n = float64(w.Clients) * d * 1000 / w.Think.Mean()
		}
	}
	if cfg.MaxOps > 0 {
		n = min(n, float64(cfg.MaxOps))
	}
	return n
}

// CheckArrivals makes the check [Parse] makes that an operation arrives
// in at least one replication, for cfg (from [Scenario.Config], with a seed of
// its own, say) and reps replications. Errors: an [*Error] naming
// duration_s.
func (s *Scenario) CheckArrivals(cfg *simnet.Config, reps int) error {
	loc := s.loc
	if loc == nil {
		loc = locate(s.locText)
	}
	b := &builder{src: s.Source, loc: loc, f: &s.File}
	if !b.checkArrivals(cfg, reps) {
		return b.e
	}
	return nil
}
