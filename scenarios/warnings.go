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
//   - an open-loop workload that sends a replica with finite servers more
//     primary attempts than it can serve (Σ rate_k × mean service time_k
//     > servers, each operation kind counted where it is routed, after
//     the workload's ExcludeRegions share and the single-master write
//     region) while no operation_timeout_ms bounds the wait: its FIFO
//     queue, and the run's memory, grow without limit. Hedges and retries
//     are not counted;
//   - a [fleet] with more instances than partitions (assignment =
//     "partition") or than closed-loop clients (assignment = "uniform"):
//     the extra instances receive no operations.
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
	if cfg.Workload.RatePerSec > 0 && cfg.OperationTimeout == 0 {
		for _, o := range primaryOverloads(cfg) {
			i := o.index
			r := cfg.Replicas[i]
			share := ""
			if o.offered < cfg.Workload.RatePerSec {
				share = fmt.Sprintf(" (of rate_per_s = %g, after ExcludeRegions and write routing)", cfg.Workload.RatePerSec)
			}
			warn(loc.line("replicas", strconv.Itoa(i), "servers"), "replicas."+r.Name+".servers",
				"replica %s is offered %.4g primary operations/s%s but its %d servers serve at most %.4g/s (mean service time %.4g ms); with no operation_timeout_ms its queue grows without limit",
				r.Name, o.offered, share, r.Servers, float64(r.Servers)/(o.meanMs/1000), o.meanMs)
		}
	}
	out = append(out, fleetWarnings(s, cfg, loc)...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// overload is a replica with finite servers whose primary attempts alone
// need more than its servers: index into Config.Replicas, the offered rate
// (operations/s) and the mean service time (ms) over the kinds it gets.
type overload struct {
	index   int
	offered float64
	meanMs  float64
}

// primaryOverloads returns the replicas (in Config.Replicas order) whose
// servers cannot keep up with the primary attempts an open-loop workload
// sends them, before any hedge or retry: each operation kind of the mix,
// with and without the workload's ExcludeRegions (ExcludeFraction), goes
// where [hedging.Client.PrimaryEndpoint] routes it (the first preferred
// region not excluded; the write region for a single-master write), so
// load that exclusions or writes move off the first preferred region counts
// where it lands. A replica is overloaded when Σ rate_k × mean service
// time_k > servers. Kinds whose service time has no known finite mean are
// left out of the sum. nil when the routing cannot be built.
func primaryOverloads(cfg *simnet.Config) []overload {
	w := cfg.Workload
	if len(cfg.Endpoints) == 0 {
		return nil
	}
	regions, writeRegion := cfg.ClientEndpoints()
	client, err := hedging.NewClient(hedging.Config{Regions: regions, WriteRegion: writeRegion, MultiMaster: cfg.MultiMaster})
	if err != nil {
		return nil
	}
	mix := w.Mix
	if len(mix) == 0 {
		mix = []simnet.MixEntry{{Kind: hedging.PointRead, Weight: 1}}
	}
	total := 0.0
	for _, m := range mix {
		total += m.Weight
	}
	if total <= 0 {
		return nil
	}
	var excluded []hedging.Region
	for _, r := range w.Exclude {
		excluded = append(excluded, hedging.Region(r))
	}
	classes := []struct {
		fraction float64
		excluded []hedging.Region
	}{{1 - w.ExcludeFraction, nil}, {w.ExcludeFraction, excluded}}
	offered := make(map[string]float64) // replica name -> operations/s
	busy := make(map[string]float64)    // replica name -> busy servers (rate × mean service time)
	for _, c := range classes {
		if c.fraction <= 0 {
			continue
		}
		for _, m := range mix {
			e, ok := client.PrimaryEndpoint(m.Kind, c.excluded)
			if !ok {
				continue
			}
			for _, r := range cfg.Replicas {
				if r.Name != e.Key {
					continue
				}
				rate := w.RatePerSec * c.fraction * m.Weight / total
				mean := serviceMeanMs(r, m.Kind)
				if rate <= 0 || math.IsNaN(mean) || math.IsInf(mean, 0) {
					continue
				}
				offered[r.Name] += rate
				busy[r.Name] += rate * mean / 1000
			}
		}
	}
	var out []overload
	for i, r := range cfg.Replicas {
		if r.Servers == 0 || offered[r.Name] == 0 || busy[r.Name] <= float64(r.Servers) {
			continue
		}
		out = append(out, overload{index: i, offered: offered[r.Name], meanMs: busy[r.Name] / offered[r.Name] * 1000})
	}
	return out
}

// serviceMeanMs is a replica's mean service time in ms for one operation
// kind: NaN when unknown, +Inf for a heavy tail without a mean.
func serviceMeanMs(r simnet.Replica, k hedging.OperationKind) float64 {
	if d, ok := r.Service[k]; ok {
		return d.Mean()
	}
	return r.Default.Mean()
}
