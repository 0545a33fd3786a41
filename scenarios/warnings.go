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
//   - a [[background]] source that starts at or after, or ends after, the
//     run's expected end when max_ops ends it before duration_s (see
//     runLength): it meets no client operation, or is cut;
//   - a replica with finite servers and no queue_limit that is offered
//     more than it can serve (Σ rate_k × mean service time_k > servers),
//     counting an open-loop workload's primary attempts (each operation
//     kind where it is routed, after the workload's ExcludeRegions share
//     and the single-master write region) and its [[background]] load,
//     when nothing bounds the wait: no operation_timeout_ms, or one whose
//     cancellations do not reach the replica (cancel = "none"). Its FIFO
//     queue, and the run's memory, then grow without limit (background
//     load that alone fills the servers is an error: background requests
//     have no deadline). Hedges and retries are not counted;
//   - a [[background]] source with retries > 0 none of whose targeted
//     replicas has a queue_limit: nothing is refused, so nothing is
//     retried;
//   - a [fleet] with more instances than partitions (assignment =
//     "partition") or than closed-loop clients (assignment = "uniform"):
//     the extra instances receive no operations;
//   - replications in which no operation arrives (when some do: none is
//     an error), which the report leaves out of the means.
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

	// Background sources past the end of a run that max_ops ends early.
	think := 0.0
	if cfg.Workload.Think != nil {
		think = cfg.Workload.Think.Mean()
	}
	if end := runLength(f, think).Seconds(); f.MaxOps > 0 && end > 0 && (f.DurationS == 0 || end < f.DurationS) {
		why := fmt.Sprintf("the run is expected to end at ~%.3g s (max_ops = %d at rate_per_s = %g)", end, f.MaxOps, f.Workload.RatePerS)
		if f.Workload.Clients > 0 {
			why = fmt.Sprintf("the run is expected to end at ~%.3g s (max_ops = %d over %d clients' mean think time; later if latency adds up)", end, f.MaxOps, f.Workload.Clients)
		}
		for i, g := range f.Background {
			field := "background." + strconv.Itoa(i)
			switch {
			case g.StartS >= end:
				warn(loc.line("background", strconv.Itoa(i), "start_s"), field+".start_s",
					"starts at %g s, but %s: it meets no client operation", g.StartS, why)
			case g.EndS != nil && *g.EndS > end:
				warn(loc.line("background", strconv.Itoa(i), "end_s"), field+".end_s",
					"ends at %g s, but %s: the source stops with the run", *g.EndS, why)
			}
		}
	}

	// Overload with an unbounded queue and nothing bounding the wait.
	for _, o := range primaryOverloads(cfg) {
		i := o.index
		r := cfg.Replicas[i]
		var why string
		switch {
		case cfg.OperationTimeout == 0:
			why = "with no operation_timeout_ms and no queue_limit its queue grows without limit"
		case r.Cancel == simnet.CancelNone:
			why = `cancel = "none" keeps timed-out requests queued, and with no queue_limit its queue grows without limit`
		default:
			continue // operation_timeout_ms cancels the client's excess
		}
		what := ""
		if o.offered > 0 {
			what = fmt.Sprintf("%.4g primary operations/s", o.offered)
			if o.offered < cfg.Workload.RatePerSec {
				what += fmt.Sprintf(" (of rate_per_s = %g, after ExcludeRegions and write routing)", cfg.Workload.RatePerSec)
			}
		}
		if o.bgOffered > 0 {
			if what != "" {
				what += " and "
			}
			what += fmt.Sprintf("%.4g background requests/s", o.bgOffered)
		}
		warn(loc.line("replicas", strconv.Itoa(i), "servers"), "replicas."+r.Name+".servers",
			"replica %s is offered %s but its %s at most %.4g/s (mean service time %.4g ms); %s",
			r.Name, what, plural(r.Servers, "server serves", "servers serve"), float64(r.Servers)/(o.meanMs/1000), o.meanMs, why)
	}
	out = append(out, fleetWarnings(s, cfg, loc)...)

	// Retries that can never happen: no targeted replica refuses.
	for i, b := range cfg.Background {
		if b.Retries == 0 {
			continue
		}
		refuses := false
		for _, r := range cfg.Replicas {
			if r.Targeted(b.Target) && r.QueueLimit > 0 {
				refuses = true
			}
		}
		if !refuses {
			warn(loc.line("background", strconv.Itoa(i), "retries"), "background."+strconv.Itoa(i)+".retries",
				"no replica targeted by %q has a queue_limit, so no request is ever refused and retried", b.Target)
		}
	}
	// Replications in which no operation arrives (not all: Parse refuses that).
	reps := max(s.Replications, 1)
	if empty, _ := emptyReplications(cfg, reps); len(empty) > 0 {
		warn(loc.line("duration_s"), "duration_s", "no operation arrives in %d of %d replications (the first: replication %d); they are left out of the means (summary.json empty_replications): raise duration_s or the rate",
			len(empty), reps, empty[0]+1)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// overload is a replica with finite servers and no queue limit whose
// primary attempts and background load need more than its servers: index
// into Config.Replicas, the offered client and background rates
// (requests/s) and the mean service time (ms) over all it gets.
type overload struct {
	index              int
	offered, bgOffered float64
	meanMs             float64
}

// primaryOverloads returns the replicas (in Config.Replicas order) with
// no queue limit whose servers cannot keep up with the primary attempts an
// open-loop workload sends them, before any hedge or retry, plus their
// background load: each operation kind of the mix,
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
	offered := make(map[string]float64) // replica name -> operations/s
	busy := make(map[string]float64)    // replica name -> busy servers (rate × mean service time)
	bgOffered := make(map[string]float64)
	bgBusy := make(map[string]float64)
	for _, b := range cfg.Background {
		for _, r := range cfg.Replicas {
			if !r.Targeted(b.Target) {
				continue
			}
			mean := r.Default.Mean()
			if b.Service != nil {
				mean = b.Service.Mean()
			}
			if math.IsNaN(mean) || math.IsInf(mean, 0) {
				continue
			}
			bgOffered[r.Name] += b.RatePerSec
			bgBusy[r.Name] += b.RatePerSec * mean / 1000
		}
	}
	if w.RatePerSec > 0 {
		if !clientLoads(cfg, offered, busy) {
			return nil
		}
	}
	var out []overload
	for i, r := range cfg.Replicas {
		total := busy[r.Name] + bgBusy[r.Name]
		if r.Servers == 0 || r.QueueLimit > 0 || total <= float64(r.Servers) {
			continue
		}
		out = append(out, overload{index: i, offered: offered[r.Name], bgOffered: bgOffered[r.Name],
			meanMs: total / (offered[r.Name] + bgOffered[r.Name]) * 1000})
	}
	return out
}

// clientLoads adds an open-loop workload's primary attempts to offered
// (operations/s per replica name) and busy (busy servers per replica
// name); false when the routing cannot be built.
func clientLoads(cfg *simnet.Config, offered, busy map[string]float64) bool {
	w := cfg.Workload
	regions, writeRegion := cfg.ClientEndpoints()
	client, err := hedging.NewClient(hedging.Config{Regions: regions, WriteRegion: writeRegion, MultiMaster: cfg.MultiMaster})
	if err != nil {
		return false
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
		return false
	}
	var excluded []hedging.Region
	for _, r := range w.Exclude {
		excluded = append(excluded, hedging.Region(r))
	}
	classes := []struct {
		fraction float64
		excluded []hedging.Region
	}{{1 - w.ExcludeFraction, nil}, {w.ExcludeFraction, excluded}}
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
	return true
}

// serviceMeanMs is a replica's mean service time in ms for one operation
// kind: NaN when unknown, +Inf for a heavy tail without a mean.
func serviceMeanMs(r simnet.Replica, k hedging.OperationKind) float64 {
	if d, ok := r.Service[k]; ok {
		return d.Mean()
	}
	return r.Default.Mean()
}
