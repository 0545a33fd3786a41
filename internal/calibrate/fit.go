package calibrate

// This file fits a scenario's model from telemetry: regions and round
// trips, each region's service time, faults per status, the request
// rate, the RU per read and the client's current threshold.

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"hedgelab/scenarios"
)

// DefaultName is the name of a calibrated scenario when Options.Name is
// empty (hedgesim calibrate's --name default).
const DefaultName = "calibrated"

// Options tune [Fit].
type Options struct {
	// Name is the scenario's name (default DefaultName).
	Name string
	// ClientRegion is where the client runs; default the telemetry's
	// resource attribute cloud.region, else the primary region.
	ClientRegion string
	// Regions is the preferred read-region list in order; default the
	// regions the telemetry shows, the primary first.
	Regions []string
	// Seed is the scenario's seed (default 1).
	Seed int64
	// Policies is the [[policies]] TOML the scenario compares; default
	// [Roster] with the client's current policy as estimated.
	Policies string
	// Partitions is the workload's partition count (the breaker of spec
	// §9.5 keeps one streak per partition); 0: counted from the telemetry
	// (Telemetry.Partitions), else 1, the one partition a RoundTripper
	// without a partition-key header uses. Negative is an error.
	Partitions int
}

// richSamples is how many answered attempts a region needs for an
// empirical service-time table; below it a lognormal is fitted.
const richSamples = 1000

// Model is a fitted scenario, written by [Model.Write].
type Model struct {
	Name, Description string
	Sources           []string
	Seed              int64
	DurationS         float64
	WindowS           float64
	ClientRegion      string
	ClientNote        string
	Regions           []*RegionFit
	RatePerS          float64
	Partitions        int
	PartitionsNote    string
	RateChanges       [][2]float64 // [at_s, rate_per_s]
	RateNote          string
	Episodes          []EpisodeFit
	Faults            []FaultFit
	RUPerRead         float64
	RUNote            string
	Current           string // the current policy's TOML body
	CurrentNote       string
	Policies          string
	// SameRegionRTTMs is the part of the client region's attempt latency
	// a slowdown does not multiply (unscaledMs), 0 when not estimated.
	SameRegionRTTMs float64
	// JitterMs is the mean (ms) of the exponential network jitter taken
	// out of every region's service time (deconvolveExp) and written as
	// [network] jitter, estimated beside SameRegionRTTMs; 0 when not
	// estimated (the jitter then stays in the service time).
	JitterMs float64
	// Unknown lists what the telemetry could not tell.
	Unknown []string
	// Warnings are the readers' and the fit's warnings.
	Warnings []string
}

// RegionFit is one region's fit.
type RegionFit struct {
	Name     string // as in the telemetry (an endpoint region)
	Replica  string // the replica's name in the file
	Physical string // the physical region (the matrix's name when known)
	RTTMs    float64
	RTTNote  string
	Service  ServiceFit
	// Answered, Abandoned and Other count the region's attempts.
	Answered, Abandoned, Other float64
}

// ServiceFit is a fitted service-time distribution (ms).
type ServiceFit struct {
	Family    string       // "empirical" or "lognormal"
	Quantiles [][2]float64 // empirical
	MedianMs  float64      // lognormal
	P99Ms     float64      // lognormal
	Why       string
	dist      cdf // in service time (latency - RTT), for episodes
}

// EpisodeFit is one slow episode.
type EpisodeFit struct {
	Replica          string
	StartS, EndS     float64
	Factor           float64
	AddMs, Fraction  float64
	Why              string
	Abandoned, Total float64
}

// FaultFit is one fault rule.
type FaultFit struct {
	Replica      string
	Status       string
	Probability  float64
	LatencyMs    float64
	StartS, EndS float64 // EndS 0 = the whole run
	Why          string
}

// Fit fits a scenario model from t. Errors: no attempts at all, or a
// region of opt.Regions that the telemetry contradicts.
func Fit(t *Telemetry, opt Options) (*Model, error) {
	if len(t.Windows) == 0 {
		return nil, errors.New("calibrate: the telemetry has no windows")
	}
	m := &Model{Name: opt.Name, Sources: t.Sources, Seed: opt.Seed, Warnings: append([]string(nil), t.Warnings...)}
	if m.Name == "" {
		m.Name = DefaultName
	}
	if err := scenarios.CheckName(m.Name); err != nil {
		return nil, fmt.Errorf("calibrate: --name %q: %v", m.Name, err)
	}
	if m.Seed == 0 {
		m.Seed = 1
	}
	if err := m.fitPartitions(t, opt.Partitions); err != nil {
		return nil, err
	}
	m.DurationS = t.Duration().Seconds()
	m.WindowS = medianWidth(t.Windows)
	if err := m.fitRegions(t, opt); err != nil {
		return nil, err
	}
	m.fitRate(t)
	m.fitRU(t)
	// The client's region first: its slow episode may estimate the
	// jitter (unscaledMs), which every region's service time then leaves
	// out.
	for _, r := range m.Regions {
		if r.Physical == m.ClientRegion {
			m.fitRegion(t, r)
		}
	}
	for _, r := range m.Regions {
		if r.Physical != m.ClientRegion {
			m.fitRegion(t, r)
		}
	}
	if m.JitterMs == 0 {
		m.Unknown = append(m.Unknown, "network jitter: folded into each region's service time (no [network] jitter; it is estimated only from a slow episode of the client's region)")
	}
	for _, r := range m.Regions {
		if u := unseenTail(r); u != "" {
			m.Unknown = append(m.Unknown, u)
		}
	}
	m.fitCurrent(t)
	m.Policies = opt.Policies
	m.Unknown = append(m.Unknown,
		"replica capacity (servers, queue limits) and other tenants' load: not in the telemetry; every replica serves without queueing (servers = 0)",
		"operation kinds: the telemetry does not label attempts by kind; every operation is a point read (kind \"read\")",
		"the client's request timeout, deadline, retries, how long a 503 marks a region unavailable (unavailable_for_s) and the breaker (consecutive_hedge_win_threshold): hedging's defaults; set them in [client] to yours",
		"episode ramps: an episode starts and ends at a window's edge")
	return m, nil
}

// medianWidth is the median window length in seconds.
func medianWidth(ws []Window) float64 {
	d := make([]float64, len(ws))
	for i, w := range ws {
		d[i] = (w.End - w.Start).Seconds()
	}
	sort.Float64s(d)
	return d[len(d)/2]
}

// fitRegions finds the regions, the client region and the round trips.
func (m *Model) fitRegions(t *Telemetry, opt Options) error {
	primaryN := map[string]float64{}
	altN := map[string]float64{}
	for _, w := range t.Windows {
		for s, b := range w.Attempts {
			if s.Leg == "alternate" {
				altN[s.Region] += count(b)
			} else {
				primaryN[s.Region] += count(b)
			}
		}
	}
	var names []string
	for r := range primaryN {
		names = append(names, r)
	}
	for r := range altN {
		if _, ok := primaryN[r]; !ok {
			names = append(names, r)
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("%s: no attempts in the telemetry (%s holds no data points)", strings.Join(t.Sources, ", "), metricAttemptLatency)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := names[i], names[j]
		if primaryN[a] != primaryN[b] {
			return primaryN[a] > primaryN[b]
		}
		if altN[a] != altN[b] {
			return altN[a] > altN[b]
		}
		return a < b
	})
	if len(opt.Regions) > 0 {
		seen := map[string]bool{}
		for _, r := range opt.Regions {
			seen[r] = true
		}
		for _, r := range names {
			if !seen[r] {
				return fmt.Errorf("calibrate: the telemetry has attempts to %s, which --regions does not list", r)
			}
		}
		names = opt.Regions
	}
	client := opt.ClientRegion
	switch {
	case client != "":
		m.ClientNote = "given (--client-region)"
	case t.ClientRegion != "":
		client = t.ClientRegion
		m.ClientNote = "the telemetry's resource attribute cloud.region"
	default:
		client = names[0]
		m.ClientNote = "assumed: the primary region (the telemetry has no cloud.region resource attribute; set --client-region)"
	}
	phys, inMatrix := publishedRegion(client)
	if !inMatrix {
		phys = client
	}
	m.ClientRegion = phys
	used := map[string]bool{}
	for _, name := range names {
		r := &RegionFit{Name: name, Replica: replicaName(name, used), Physical: name}
		if p, ok := publishedRegion(name); ok {
			r.Physical = p
		}
		switch {
		case r.Physical == m.ClientRegion:
			r.RTTNote = "the client's own region: same_region_rtt_ms = 0, the same-region round trip is part of the service time (telemetry cannot tell them apart)"
		case !inMatrix:
			r.RTTNote = fmt.Sprintf("client region %q is not in the published matrix: RTT 0, the whole attempt latency is service time", client)
		default:
			if v, ok := publishedRTT(m.ClientRegion, r.Physical); ok {
				r.RTTMs = v
				r.RTTNote = fmt.Sprintf("published P50 from %s (%s)", m.ClientRegion, rttSource)
			} else {
				r.RTTNote = fmt.Sprintf("%q is not in the published matrix: RTT 0, the whole attempt latency is service time", name)
			}
		}
		m.Regions = append(m.Regions, r)
	}
	return nil
}

// replicaName makes a replica name ([A-Za-z0-9_-]+) from a region name.
func replicaName(region string, used map[string]bool) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(region) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	name := b.String()
	// Room for a "-N" suffix within scenarios.MaxNameLen.
	name = strings.TrimRight(name[:min(len(name), scenarios.MaxNameLen-8)], "-")
	if name == "" {
		name = "region"
	}
	base := name
	for i := 2; used[name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	used[name] = true
	return name
}

// fitRate fits the request rate: steps between windows whose rates differ
// by more than Poisson noise (5 standard errors) and 5%.
func (m *Model) fitRate(t *Telemetry) {
	var ops []float64
	has := false
	for _, w := range t.Windows {
		n := w.Ops
		if !w.HasOps {
			n = 0
			for s, b := range w.Attempts {
				if s.Leg == "primary" {
					n += count(b)
				}
			}
		} else {
			has = true
		}
		ops = append(ops, n)
	}
	if has {
		m.RateNote = "operations per window (" + metricOperations + ")"
	} else {
		m.RateNote = "primary attempts per window (no " + metricOperations + " in the telemetry: retries count as operations)"
		m.Warnings = append(m.Warnings, "no "+metricOperations+": the request rate is the primary's attempts per second")
	}
	type seg struct {
		start  time.Duration
		n, dur float64
	}
	var segs []seg
	for i, w := range t.Windows {
		dur := (w.End - w.Start).Seconds()
		if dur <= 0 {
			continue
		}
		rate := ops[i] / dur
		if k := len(segs); k > 0 {
			cur := &segs[k-1]
			mean := cur.n / cur.dur
			se := math.Sqrt(math.Max(mean*dur, 1)) / dur
			if math.Abs(rate-mean) <= 5*se || math.Abs(rate-mean) <= 0.05*mean {
				cur.n += ops[i]
				cur.dur += dur
				continue
			}
		}
		segs = append(segs, seg{start: w.Start, n: ops[i], dur: dur})
	}
	if len(segs) == 0 {
		return
	}
	m.RatePerS = segs[0].n / segs[0].dur
	for _, s := range segs[1:] {
		m.RateChanges = append(m.RateChanges, [2]float64{(s.start - t.Windows[0].Start).Seconds(), s.n / s.dur})
	}
}

// fitRU fits the RU per read from the winners' RU.
func (m *Model) fitRU(t *Telemetry) {
	var sum, n float64
	for _, w := range t.Windows {
		sum += w.RUSum
		n += w.RUCount
	}
	if n == 0 {
		m.RUPerRead = 1
		m.RUNote = "unknown (no " + metricRUWinner + "): 1 RU, the simulator's default for a read"
		m.Unknown = append(m.Unknown, "the RU of a read: "+m.RUNote)
		return
	}
	m.RUPerRead = sum / n
	m.RUNote = fmt.Sprintf("the mean winner RU of %.0f operations (%s); the simulator charges every read the same", n, metricRUWinner)
}

// fitCurrent estimates the client's current policy from its hedge rate.
func (m *Model) fitCurrent(t *Telemetry) {
	var ops, disabled, hedges float64
	for _, w := range t.Windows {
		ops += w.Ops
		disabled += w.Disabled
		hedges += w.LatencyHedges
	}
	if ops == 0 {
		m.Current = `type = "disabled"`
		m.CurrentNote = "unknown (no operations counted): taken as disabled"
		return
	}
	if disabled > ops/2 {
		m.Current = `type = "disabled"`
		m.CurrentNote = fmt.Sprintf("%.0f%% of the operations ran without hedging (result=disabled)", 100*disabled/ops)
		return
	}
	h := hedges / ops
	if h == 0 {
		m.Current = `type = "driver_default"`
		m.CurrentNote = "no latency hedge in the telemetry: taken as the driver default, min(1 s, request_timeout/2)"
		return
	}
	var ev, ce []Bin
	for _, w := range t.Windows {
		for s, b := range w.Attempts {
			if s.Region != m.Regions[0].Name || s.Leg != "primary" {
				continue
			}
			switch {
			case s.Status == "abandoned":
				ce = append(ce, b...)
			case isAnswer(s.Status):
				ev = append(ev, b...)
			}
		}
	}
	d := kaplanMeier(ev, ce)
	th := sig3(d.quantile(1 - h))
	m.Current = fmt.Sprintf("type = \"static\"\nthreshold_ms = %s", fmtG(math.Max(th, 1)))
	m.CurrentNote = fmt.Sprintf("a static threshold estimated from the hedge rate: %.3g%% of the operations sent the alternate on the threshold, and %s ms is the primary's latency quantile at 1 - %.3g%%; the telemetry does not say which policy the client runs: replace it with yours", 100*h, fmtG(math.Max(th, 1)), 100*h)
}

// sig3 rounds x to 3 significant digits.
func sig3(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	p := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

// fitPartitions sets m.Partitions: given (n > 0), counted from t, or one,
// said to be assumed.
func (m *Model) fitPartitions(t *Telemetry, n int) error {
	switch {
	case n < 0:
		return fmt.Errorf("calibrate: --partitions %d: want a positive count (or 0 to count them from the telemetry)", n)
	case n > 0:
		if err := scenarios.CheckValue("workload.partitions", float64(n)); err != nil {
			return fmt.Errorf("calibrate: --partitions %d: %v", n, err)
		}
		m.Partitions, m.PartitionsNote = n, "given (--partitions)"
	case t.Partitions > 0:
		m.Partitions = t.Partitions
		m.PartitionsNote = fmt.Sprintf("counted: the distinct partition values of %s", metricConsecutive)
		if t.PartitionsOverflow {
			m.PartitionsNote += " (at least: the SDK's cardinality limit folded some into otel.metric.overflow; pass --partitions N)"
		}
	default:
		m.Partitions = 1
		m.PartitionsNote = fmt.Sprintf("unknown, assumed: the telemetry has no %s to count them from; one partition is what a RoundTripper without a partition-key header uses (the breaker of spec §9.5 acts per partition); pass --partitions N", metricConsecutive)
		m.Unknown = append(m.Unknown, "partitions: assumed 1 (no "+metricConsecutive+" in the telemetry; --partitions N)")
	}
	return nil
}

// unseenTailMin is the share of a region's service-time distribution no
// answer shows (attempts still running when abandoned) from which [Fit]
// names it among what the telemetry could not tell: enough to move a
// p99.9 of a policy that waits for them.
const unseenTailMin = 0.001

// unseenTail says, when at least unseenTailMin of region r's service time
// lies beyond its largest answer (its attempts abandoned before they
// answered), that this mass is not identifiable from the telemetry, what
// the file assumes for it and how to measure it; "" otherwise.
func unseenTail(r *RegionFit) string {
	d := r.Service.dist
	if d.tail < unseenTailMin || d.censored == 0 || r.Service.Family != "empirical" {
		return ""
	}
	return fmt.Sprintf("%s's service time beyond %s ms: %.3g%% of its attempts were still running there when the client abandoned them, so how much later they would have answered is not in the telemetry (a slow mode above your threshold looks the same at +60 ms or +1 s); "+
		"the file extrapolates a Pareto tail, and a policy waiting longer than yours (disabled above all) is predicted from that guess. To measure it: export telemetry for a while under a threshold above the slow mode, or calibrate from a CSV of the requests' own latencies",
		r.Name, fmtG(sig3(d.max())), 100*d.tail)
}
