package scenarios

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"hedgelab/hedging"
	"hedgelab/simnet"
)

// Warnings returns what in the scenario is valid but probably not what
// its author meant, as [*Error]s whose Msg starts with "warning: " (file,
// line and field as for errors), in file order:
//
//   - a pair of regions whose network.rtt_ms differs by direction by more
//     than a factor of 2, likely a typo (published RTTs differ by
//     direction by a few percent, and the simulator uses each direction
//     as written);
//   - an episode that starts at or after duration_s, so it never applies;
//   - an open-loop workload that offers the primary replica more load
//     than its servers can serve (rate_per_s × mean service time >
//     servers) while no operation_timeout_ms bounds the wait: its FIFO
//     queue, and the run's memory, grow without limit.
//
// A scenario from [Parse] always builds; Warnings returns nil otherwise.
func (s *Scenario) Warnings() []*Error {
	cfg, _, err := s.Config()
	if err != nil {
		return nil
	}
	loc := s.loc
	if loc == nil {
		loc = locate(s.locText)
	}
	var out []*Error
	warn := func(line int, field, format string, args ...any) {
		out = append(out, &Error{File: s.Source, Line: max(line, 1), Field: field, Msg: "warning: " + fmt.Sprintf(format, args...)})
	}
	f := &s.File

	// Asymmetric RTT pairs, each reported once (on the later direction).
	rtt := f.Network.RTTMs
	for _, a := range sortedKeys(rtt) {
		for _, b := range sortedKeys(rtt[a]) {
			back, ok := rtt[b][a]
			lo, hi := min(back, rtt[a][b]), max(back, rtt[a][b])
			if !ok || a >= b || hi <= 2*lo {
				continue
			}
			la, lb := loc.line("network", "rtt_ms", a, b), loc.line("network", "rtt_ms", b, a)
			field, line := "network.rtt_ms."+b+"."+a, lb
			if la > lb {
				field, line = "network.rtt_ms."+a+"."+b, la
			}
			warn(line, field, "RTT %q -> %q is %g ms but %q -> %q is %g ms, more than twice as much (a typo?); the simulator uses each direction as written",
				a, b, rtt[a][b], b, a, back)
		}
	}

	// Episodes that never apply.
	if f.DurationS > 0 {
		for i, e := range f.Episodes {
			if e.StartS >= f.DurationS {
				warn(loc.line("episodes", strconv.Itoa(i), "start_s"), "episodes."+strconv.Itoa(i)+".start_s",
					"starts at %g s, at or after the run ends (duration_s = %g): it never applies", e.StartS, f.DurationS)
			}
		}
	}

	// Overload with an unbounded queue and no deadline.
	if w := cfg.Workload; w.RatePerSec > 0 && cfg.OperationTimeout == 0 && len(cfg.Endpoints) > 0 {
		primary := cfg.Endpoints[0].Replica
		for i, r := range cfg.Replicas {
			if r.Name != primary || r.Servers == 0 {
				continue
			}
			meanMs := meanServiceMs(r, w)
			capacity := float64(r.Servers) / (meanMs / 1000) // operations per second
			if meanMs > 0 && !math.IsInf(meanMs, 1) && w.RatePerSec > capacity {
				warn(loc.line("replicas", strconv.Itoa(i), "servers"), "replicas."+r.Name+".servers",
					"the primary replica %s is offered %g operations/s but its %d servers serve at most %.4g/s (mean service time %.4g ms); with no operation_timeout_ms its queue grows without limit",
					r.Name, w.RatePerSec, r.Servers, capacity, meanMs)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// meanServiceMs is a replica's mean service time in ms over the workload's
// operation mix (point reads when the mix is empty); 0 when unknown (NaN),
// +Inf for a heavy tail without a mean.
func meanServiceMs(r simnet.Replica, w simnet.Workload) float64 {
	service := func(k hedging.OperationKind) float64 {
		if d, ok := r.Service[k]; ok {
			return d.Mean()
		}
		return r.Default.Mean()
	}
	if len(w.Mix) == 0 {
		return service(hedging.PointRead)
	}
	sum, total := 0.0, 0.0
	for _, m := range w.Mix {
		sum += m.Weight * service(m.Kind)
		total += m.Weight
	}
	if total == 0 || math.IsNaN(sum) {
		return 0
	}
	return sum / total
}
