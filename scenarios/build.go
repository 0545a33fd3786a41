package scenarios

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"
)

// Resource limits of one scenario.
const (
	// MaxSimulatedOps bounds the expected number of simulated operations of
	// a whole scenario: per-run operations × replications × policies.
	MaxSimulatedOps = 2e9
	// MaxTimelineWindows bounds the number of timeline windows of one run.
	MaxTimelineWindows = 100_000
	// maxSeconds bounds every time value in seconds, far below the
	// ~292-year range of time.Duration; maxMillis bounds every time value
	// in milliseconds (delays, timeouts, thresholds) at simnet.MaxDelay,
	// the longest delay the simulator represents (1000 h), so no value is
	// silently capped.
	maxSeconds = 1e9
	maxMillis  = float64(simnet.MaxDelay / time.Millisecond)
	// maxCount bounds servers, clients and partitions (each allocates).
	maxCount = 1_000_000
)

// fpath is a field path twice: as shown in errors (array elements by name)
// and as the locator knows it (array elements by index).
type fpath struct{ disp, loc []string }

func (p fpath) key(k ...string) fpath {
	return fpath{append(clone(p.disp), k...), append(clone(p.loc), k...)}
}

func (p fpath) elem(i int, name string) fpath {
	if name == "" {
		name = strconv.Itoa(i)
	}
	return fpath{append(clone(p.disp), name), append(clone(p.loc), strconv.Itoa(i))}
}

func (p fpath) String() string { return strings.Join(p.disp, ".") }

// builder validates a File and builds the simnet input. It records every
// error it reaches (up to MaxErrors); e is the first, and later checks that
// would only repeat an earlier problem test it. Sections of the file that
// depend on an earlier section with errors are not checked.
type builder struct {
	src  string
	loc  *locator
	f    *File
	e    *Error
	errs []*Error
	n    int // errors found, including those past MaxErrors
}

func (b *builder) fail(p fpath, format string, args ...any) {
	b.failAt(p, b.loc.line(p.loc...), format, args...)
}

// failAt records the first error; a field the file does not contain, in
// no table it contains, is in the root table, which starts on line 1.
func (b *builder) failAt(p fpath, line int, format string, args ...any) {
	if line == 0 {
		line = 1
	}
	e := &Error{File: b.src, Line: line, Field: p.String(), Msg: fmt.Sprintf(format, args...)}
	b.n++
	if b.e == nil {
		b.e = e
	}
	if len(b.errs) < MaxErrors && !slices.ContainsFunc(b.errs, func(x *Error) bool { return *x == *e }) {
		b.errs = append(b.errs, e)
	}
}

func (b *builder) nonNeg(p fpath, v float64) {
	if v < 0 {
		b.fail(p, "must be >= 0, got %g", v)
	}
}

func (b *builder) unit(p fpath, v float64) {
	if v < 0 || v > 1 {
		b.fail(p, "must be between 0 and 1, got %g", v)
	}
}

func (b *builder) intRange(p fpath, v, lo, hi int) {
	if v < lo || v > hi {
		b.fail(p, "must be between %d and %d, got %d", lo, hi, v)
	}
}

// dur converts a non-negative time value in unit (time.Second or
// time.Millisecond) to a Duration.
func (b *builder) dur(p fpath, v float64, unit time.Duration) time.Duration {
	limit, name := maxSeconds, "s"
	if unit == time.Millisecond {
		limit, name = maxMillis, "ms (1000 h, the longest delay the simulator represents)"
	}
	switch {
	case v < 0:
		b.fail(p, "must be >= 0, got %g", v)
		return 0
	case v > limit:
		b.fail(p, "must be at most %g %s, got %g", limit, name, v)
		return 0
	}
	return time.Duration(v * float64(unit))
}

// posDur is dur for values that must be > 0 (and at least 1 ns).
func (b *builder) posDur(p fpath, v float64, unit time.Duration) time.Duration {
	if v <= 0 {
		b.fail(p, "must be > 0, got %g", v)
		return 0
	}
	d := b.dur(p, v, unit)
	if d <= 0 && b.e == nil {
		b.fail(p, "must be at least 1 ns, got %g", v)
	}
	return d
}

var kindNames = func() string {
	var names []string
	for k := range 256 {
		s := hedging.OperationKind(k).String()
		if strings.HasPrefix(s, "OperationKind(") {
			break
		}
		names = append(names, s)
	}
	return strings.Join(names, ", ")
}()

func (b *builder) kind(p fpath, name string) hedging.OperationKind {
	k, err := hedging.ParseOperationKind(name)
	if err != nil {
		b.fail(p, "unknown operation kind %q (want one of %s)", name, kindNames)
	}
	return k
}

var (
	reComponent = regexp.MustCompile(`components\[(\d+)\]`)
	reWord      = regexp.MustCompile(`[a-z0-9_]+`)
)

// dist builds a distribution; on error the line is refined to the
// component and key the dist message names, when the file has them.
func (b *builder) dist(p fpath, s dist.Spec) dist.Sampler {
	d, err := s.Build()
	if err == nil {
		return d
	}
	msg := err.Error()
	lp := clone(p.loc)
	for _, m := range reComponent.FindAllStringSubmatch(msg, -1) {
		lp = append(lp, "components", m[1])
	}
	line := b.loc.line(lp...)
	for _, w := range reWord.FindAllString(msg, -1) {
		if l, ok := b.loc.first[joinPath(append(clone(lp), w))]; ok {
			line = l
			break
		}
	}
	b.failAt(p, line, "%s", msg)
	return nil
}

// keysByLine returns the keys of m in file order (then by name).
func keysByLine[V any](b *builder, p fpath, m map[string]V) []string {
	ks := sortedKeys(m)
	sort.SliceStable(ks, func(i, j int) bool {
		return b.loc.line(append(clone(p.loc), ks[i])...) < b.loc.line(append(clone(p.loc), ks[j])...)
	})
	return ks
}

var (
	reScenarioName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	reID           = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

// checkID checks an element name: required, [A-Za-z0-9_-]+, unique.
func (b *builder) checkID(p fpath, what, name string, seen map[string]fpath) {
	switch {
	case name == "":
		b.fail(p, "required")
	case !reID.MatchString(name):
		b.fail(p, "must match [A-Za-z0-9_-]+, got %q", name)
	default:
		if q, dup := seen[name]; dup {
			b.fail(p, "duplicate %s %q (already used on line %d)", what, name, b.loc.line(q.loc...))
			return
		}
		seen[name] = p
	}
}

func list(m map[string]bool) string {
	return strings.Join(sortedKeys(m), ", ")
}

func (b *builder) build() (*simnet.Config, []simnet.Policy, error) {
	cfg, pols := b.run()
	if b.e != nil {
		return nil, nil, joinErrors(b.errs)
	}
	return cfg, pols, nil
}

func (b *builder) run() (*simnet.Config, []simnet.Policy) {
	f := b.f
	var root fpath
	cfg := &simnet.Config{}

	// Top level.
	switch {
	case f.Name == "":
		b.fail(root.key("name"), "required")
	case !reScenarioName.MatchString(f.Name):
		b.fail(root.key("name"), "must match [a-z0-9-]+ and not start with a dash, got %q", f.Name)
	}
	if f.Seed < 0 {
		b.fail(root.key("seed"), "must be >= 0, got %d", f.Seed)
	}
	cfg.Seed = uint64(f.Seed)
	cfg.Duration = b.dur(root.key("duration_s"), f.DurationS, time.Second)
	if f.MaxOps < 0 {
		b.fail(root.key("max_ops"), "must be >= 0, got %d", f.MaxOps)
	}
	cfg.MaxOps = f.MaxOps
	if f.DurationS == 0 && f.MaxOps == 0 {
		b.fail(root.key("duration_s"), "need duration_s > 0 or max_ops > 0")
	}
	reps := 1
	if f.Replications != nil {
		reps = *f.Replications
		if reps < 1 {
			b.fail(root.key("replications"), "must be >= 1, got %d", reps)
		}
	}
	if f.TimelineWindowS != nil {
		p := root.key("timeline_window_s")
		cfg.TimelineWindow = b.posDur(p, *f.TimelineWindowS, time.Second)
		if n := math.Ceil(f.DurationS / *f.TimelineWindowS); b.e == nil && n > MaxTimelineWindows {
			b.fail(p, "%g s windows over duration_s = %g would make %.0f timeline windows; the limit is %d: raise timeline_window_s",
				*f.TimelineWindowS, f.DurationS, n, MaxTimelineWindows)
		}
	}

	// [client]
	cp := root.key("client")
	c := f.Client
	if c.Region == "" {
		b.fail(cp.key("region"), "required (the physical region of the client)")
	}
	cfg.ClientRegion = c.Region
	cfg.RequestTimeout = b.dur(cp.key("request_timeout_ms"), c.RequestTimeoutMs, time.Millisecond)
	cfg.OperationTimeout = b.dur(cp.key("operation_timeout_ms"), c.OperationTimeoutMs, time.Millisecond)
	b.intRange(cp.key("consecutive_hedge_win_threshold"), c.ConsecutiveHedgeWinThreshold, 0, math.MaxInt32)
	cfg.ConsecutiveHedgeWinThreshold = c.ConsecutiveHedgeWinThreshold
	cfg.ProbeInterval = b.dur(cp.key("probe_interval_s"), c.ProbeIntervalS, time.Second)
	cfg.UnavailableFor = b.dur(cp.key("unavailable_for_s"), c.UnavailableForS, time.Second)
	switch c.Phase {
	case 0, 1:
		cfg.Phase = hedging.Phase1
	case 2:
		cfg.Phase = hedging.Phase2
	case 3:
		cfg.Phase = hedging.PhaseFuture
	default:
		b.fail(cp.key("phase"), "must be 1, 2 or 3 (future), got %d", c.Phase)
	}
	b.intRange(cp.key("retry_max_attempts"), c.RetryMaxAttempts, 0, 100)
	cfg.Retry = hedging.RetryOptions{
		MaxAttempts:     c.RetryMaxAttempts,
		ThrottleBackoff: b.dur(cp.key("retry_throttle_backoff_ms"), c.RetryThrottleBackoffMs, time.Millisecond),
	}

	// The sections below depend on each other (endpoints name replicas,
	// the network and episodes name their regions, the workload names
	// endpoints) but not on the sections above: they are checked even when
	// the top level or [client] has errors, and each stops only on errors
	// of its own or an earlier section below this mark.
	mark := b.n
	broken := func() bool { return b.n > mark }

	// [[replicas]]
	replicaNames, replicaRegions := map[string]bool{}, map[string]bool{}
	if len(f.Replicas) == 0 {
		b.fail(root.key("replicas"), "at least one [[replicas]] entry is required")
	}
	seen := map[string]fpath{}
	for i, r := range f.Replicas {
		rp := root.key("replicas").elem(i, r.Name)
		b.checkID(rp.key("name"), "replica name", r.Name, seen)
		if r.Region == "" {
			b.fail(rp.key("region"), "required (the physical region of the replica)")
		}
		b.intRange(rp.key("servers"), r.Servers, 0, maxCount)
		rep := simnet.Replica{Name: r.Name, Region: r.Region, Servers: r.Servers}
		if r.Service == nil {
			b.fail(rp.key("service"), `required: the service time in ms, e.g. { family = "lognormal", median_ms = 1.0, p99_ms = 3.0 }`)
		} else {
			rep.Default = b.dist(rp.key("service"), *r.Service)
		}
		bp := rp.key("service_by_op")
		for _, k := range keysByLine(b, bp, r.ServiceByOp) {
			kind := b.kind(bp.key(k), k)
			d := b.dist(bp.key(k), r.ServiceByOp[k])
			if broken() {
				break
			}
			if rep.Service == nil {
				rep.Service = map[hedging.OperationKind]dist.Sampler{}
			}
			rep.Service[kind] = d
		}
		if broken() {
			return nil, nil
		}
		replicaNames[r.Name], replicaRegions[r.Region] = true, true
		cfg.Replicas = append(cfg.Replicas, rep)
	}

	// [[endpoints]]
	if len(f.Endpoints) == 0 {
		b.fail(root.key("endpoints"), "at least one [[endpoints]] entry is required")
	}
	endpointRegions := map[string]bool{}
	replicaOf := map[string]string{}
	seen = map[string]fpath{}
	for i, e := range f.Endpoints {
		ep := root.key("endpoints").elem(i, e.Region)
		if e.Region == "" {
			b.fail(ep.key("region"), "required")
		} else if q, dup := seen[e.Region]; dup {
			b.fail(ep.key("region"), "duplicate endpoint region %q (already used on line %d)", e.Region, b.loc.line(q.loc...))
		}
		seen[e.Region] = ep.key("region")
		switch {
		case e.Replica == "":
			b.fail(ep.key("replica"), "required (a [[replicas]] name)")
		case !replicaNames[e.Replica]:
			b.fail(ep.key("replica"), "unknown replica %q (replicas: %s)", e.Replica, list(replicaNames))
		}
		endpointRegions[e.Region] = true
		replicaOf[e.Region] = e.Replica
		cfg.Endpoints = append(cfg.Endpoints, simnet.Endpoint{Region: e.Region, Replica: e.Replica})
	}
	if broken() {
		return nil, nil
	}

	// [account]
	if w := f.Account.WriteRegion; w != "" && !endpointRegions[w] {
		b.fail(root.key("account", "write_region"), "%q is not an endpoint region (endpoints: %s)", w, list(endpointRegions))
	}
	cfg.WriteRegion = f.Account.WriteRegion
	cfg.MultiMaster = f.Account.MultiMaster

	// [network]
	np := root.key("network")
	n := f.Network
	cfg.SameRegionRTTMs = 1
	if n.SameRegionRTTMs != nil {
		cfg.SameRegionRTTMs = *n.SameRegionRTTMs
		b.dur(np.key("same_region_rtt_ms"), cfg.SameRegionRTTMs, time.Millisecond)
	}
	if n.Jitter != nil {
		cfg.Jitter = b.dist(np.key("jitter"), *n.Jitter)
	}
	declared := map[string]bool{c.Region: true}
	for r := range replicaRegions {
		declared[r] = true
	}
	inRTT := false
	rp := np.key("rtt_ms")
	for _, from := range keysByLine(b, rp, n.RTTMs) {
		if !declared[from] {
			b.fail(rp.key(from), "undeclared region %q (not a replica region or the client region)", from)
		}
		for _, to := range keysByLine(b, rp.key(from), n.RTTMs[from]) {
			if !declared[to] {
				b.fail(rp.key(from, to), "undeclared region %q (not a replica region or the client region)", to)
			}
			b.dur(rp.key(from, to), n.RTTMs[from][to], time.Millisecond)
			inRTT = inRTT || from == c.Region || to == c.Region
		}
	}
	cfg.RTTMs = n.RTTMs
	if !replicaRegions[c.Region] && !inRTT {
		b.fail(cp.key("region"), "unknown region %q: not the region of any replica and not in network.rtt_ms", c.Region)
	}
	lp := np.key("replication_lag_ms")
	for _, r := range keysByLine(b, lp, n.ReplicationLagMs) {
		if !replicaRegions[r] {
			b.fail(lp.key(r), "unknown region %q (replica regions: %s)", r, list(replicaRegions))
		}
		b.dur(lp.key(r), n.ReplicationLagMs[r], time.Millisecond)
	}
	cfg.ReplicationLagMs = n.ReplicationLagMs
	hasRTT := func(a, z string) bool {
		_, ok1 := n.RTTMs[a][z]
		_, ok2 := n.RTTMs[z][a]
		return a == z || ok1 || ok2
	}
	writeRegion := f.Account.WriteRegion
	if writeRegion == "" {
		writeRegion = f.Endpoints[0].Region
	}
	hubRegion := ""
	for _, r := range f.Replicas {
		if r.Name == replicaOf[writeRegion] {
			hubRegion = r.Region
		}
	}
	// An unknown client or write region was reported above: its missing
	// RTTs would only repeat that.
	clientKnown := replicaRegions[c.Region] || inRTT
	for _, r := range f.Replicas {
		if clientKnown && !hasRTT(c.Region, r.Region) {
			b.fail(rp, "missing the RTT between the client region %q and %q (region of replica %s)", c.Region, r.Region, r.Name)
		}
	}
	for _, r := range f.Replicas {
		if hubRegion != "" && !hasRTT(r.Region, hubRegion) {
			b.fail(rp, "missing the RTT between %q (region of replica %s) and the write region's replica region %q (hub forwarding)", r.Region, r.Name, hubRegion)
		}
	}
	if broken() {
		return nil, nil
	}

	// [[episodes]]
	targets := map[string]bool{}
	for r := range replicaNames {
		targets[r] = true
	}
	for r := range replicaRegions {
		targets[r] = true
	}
	for i, e := range f.Episodes {
		ep := root.key("episodes").elem(i, "")
		switch {
		case e.Target == "":
			b.fail(ep.key("target"), "required (a replica name or physical region)")
		case !targets[e.Target]:
			b.fail(ep.key("target"), "unknown target %q (want a replica name or region: %s)", e.Target, list(targets))
		}
		ev := simnet.Episode{Label: e.Label, Target: e.Target, AddMs: e.AddMs, Fraction: e.Fraction, FailRate: e.FailRate,
			Factor: 1, FailStatus: hedging.Status{Code: 503, SubStatus: e.FailSubstatus}}
		if ev.Label == "" {
			ev.Label = fmt.Sprintf("episode %d", i)
		}
		ev.Start = b.dur(ep.key("start_s"), e.StartS, time.Second)
		ev.End = b.dur(ep.key("end_s"), e.EndS, time.Second)
		if b.e == nil && e.EndS <= e.StartS {
			b.fail(ep.key("end_s"), "must be > start_s (%g), got %g", e.StartS, e.EndS)
		}
		ev.RampUp = b.dur(ep.key("ramp_up_s"), e.RampUpS, time.Second)
		ev.RampDown = b.dur(ep.key("ramp_down_s"), e.RampDownS, time.Second)
		if b.e == nil && e.RampUpS+e.RampDownS > e.EndS-e.StartS {
			b.fail(ep.key("ramp_up_s"), "ramp_up_s + ramp_down_s (%g) must be <= end_s - start_s (%g)", e.RampUpS+e.RampDownS, e.EndS-e.StartS)
		}
		if e.Factor != nil {
			ev.Factor = *e.Factor
			b.nonNeg(ep.key("factor"), ev.Factor)
		}
		b.dur(ep.key("add_ms"), e.AddMs, time.Millisecond)
		b.unit(ep.key("fraction"), e.Fraction)
		b.unit(ep.key("fail_rate"), e.FailRate)
		if e.FailStatus != 0 {
			b.intRange(ep.key("fail_status"), e.FailStatus, 400, 599)
			ev.FailStatus.Code = e.FailStatus
		}
		b.intRange(ep.key("fail_substatus"), e.FailSubstatus, 0, math.MaxInt32)
		cfg.Episodes = append(cfg.Episodes, ev)
	}

	// [[faults]]
	for i, fl := range f.Faults {
		fp := root.key("faults").elem(i, "")
		fr := simnet.Fault{Status: hedging.Status{Code: 503, SubStatus: fl.Substatus}, Probability: fl.Probability,
			LatencyMs: fl.LatencyMs, FirstAttemptOnly: fl.FirstAttemptOnly}
		if fl.Status != 0 {
			b.intRange(fp.key("status"), fl.Status, 400, 599)
			fr.Status.Code = fl.Status
		}
		b.intRange(fp.key("substatus"), fl.Substatus, 0, math.MaxInt32)
		b.unit(fp.key("probability"), fl.Probability)
		pp := fp.key("partitions")
		for _, pi := range fl.Partitions {
			b.intRange(pp, pi, 0, max(f.Workload.Partitions, 1)-1)
		}
		fr.Partitions = fl.Partitions
		for j, t := range fl.Targets {
			if !targets[t] {
				b.fail(fp.key("targets", strconv.Itoa(j)), "unknown target %q (want a replica name or region: %s)", t, list(targets))
			}
		}
		fr.Targets = slices.Clone(fl.Targets)
		for j, op := range fl.Operations {
			fr.Kinds = append(fr.Kinds, b.kind(fp.key("operations", strconv.Itoa(j)), op))
		}
		fr.Start = b.dur(fp.key("start_s"), fl.StartS, time.Second)
		fr.End = b.dur(fp.key("end_s"), fl.EndS, time.Second)
		if b.e == nil && fl.EndS != 0 && fl.EndS <= fl.StartS {
			b.fail(fp.key("end_s"), "must be 0 (forever) or > start_s (%g), got %g", fl.StartS, fl.EndS)
		}
		b.dur(fp.key("latency_ms"), fl.LatencyMs, time.Millisecond)
		cfg.Faults = append(cfg.Faults, fr)
	}
	if broken() {
		return nil, nil
	}

	// [workload]
	wp := root.key("workload")
	w := f.Workload
	b.nonNeg(wp.key("rate_per_s"), w.RatePerS)
	b.intRange(wp.key("clients"), w.Clients, 0, maxCount)
	switch {
	case w.RatePerS > 0 && w.Clients > 0:
		b.fail(wp.key("clients"), "set rate_per_s (open loop) or clients (closed loop), not both")
	case w.RatePerS == 0 && w.Clients == 0:
		b.fail(wp.key("rate_per_s"), "required: rate_per_s > 0 (open loop) or clients > 0 (closed loop)")
	}
	wl := simnet.Workload{RatePerSec: w.RatePerS, Clients: w.Clients, Partitions: max(w.Partitions, 1), ZipfS: w.ZipfS,
		ExcludeFraction: w.ExcludeFraction, Exclude: slices.Clone(w.ExcludeRegions), DisabledFraction: w.DisabledFraction}
	switch {
	case w.Think != nil && w.Clients == 0:
		b.fail(wp.key("think"), "applies only to a closed loop (clients > 0)")
	case w.Think == nil && w.Clients > 0:
		b.fail(wp.key("think"), "required with clients (closed loop): the think time in ms")
	case w.Think != nil:
		wl.Think = b.dist(wp.key("think"), *w.Think)
	}
	mp := wp.key("mix")
	for _, k := range keysByLine(b, mp, w.Mix) {
		kind := b.kind(mp.key(k), k)
		if wt := w.Mix[k]; !(wt > 0) {
			b.fail(mp.key(k), "weight must be > 0, got %g", wt)
		}
		wl.Mix = append(wl.Mix, simnet.MixEntry{Kind: kind, Weight: w.Mix[k]})
	}
	slices.SortFunc(wl.Mix, func(a, z simnet.MixEntry) int { return int(a.Kind) - int(z.Kind) })
	b.intRange(wp.key("partitions"), w.Partitions, 0, maxCount)
	if w.ZipfS != 0 && !(w.ZipfS > 1) {
		b.fail(wp.key("zipf_s"), "must be 0 (uniform) or > 1, got %g", w.ZipfS)
	}
	b.unit(wp.key("exclude_fraction"), w.ExcludeFraction)
	for j, r := range w.ExcludeRegions {
		if !endpointRegions[r] {
			b.fail(wp.key("exclude_regions", strconv.Itoa(j)), "%q is not an endpoint region (endpoints: %s)", r, list(endpointRegions))
		}
	}
	if w.ExcludeFraction > 0 && len(w.ExcludeRegions) == 0 {
		b.fail(wp.key("exclude_fraction"), "needs exclude_regions")
	}
	b.unit(wp.key("disabled_fraction"), w.DisabledFraction)
	cfg.Workload = wl

	// [ru], [ru_budget], [throughput_control]
	up := root.key("ru")
	for _, k := range keysByLine(b, up, f.RU) {
		kind := b.kind(up.key(k), k)
		b.nonNeg(up.key(k), f.RU[k])
		if cfg.RU == nil {
			cfg.RU = map[hedging.OperationKind]float64{}
		}
		cfg.RU[kind] = f.RU[k]
	}
	bucket := func(p fpath, t *TokenBucket) (rate, burst float64) {
		if !(t.RUPerS > 0) {
			b.fail(p.key("ru_per_s"), "must be > 0, got %g", t.RUPerS)
		}
		b.nonNeg(p.key("burst"), t.Burst)
		if t.Burst == 0 {
			return t.RUPerS, t.RUPerS
		}
		return t.RUPerS, t.Burst
	}
	if f.RUBudget != nil {
		r, bu := bucket(root.key("ru_budget"), f.RUBudget)
		cfg.RUBudget = &simnet.RUBudget{RUPerSec: r, Burst: bu}
	}
	if f.ThroughputControl != nil {
		r, bu := bucket(root.key("throughput_control"), f.ThroughputControl)
		cfg.ThroughputControl = &simnet.ThroughputControl{RUPerSec: r, Burst: bu}
	}

	// [[policies]]
	if len(f.Policies) == 0 {
		b.fail(root.key("policies"), "at least one [[policies]] entry is required")
	}
	var pols []simnet.Policy
	seen = map[string]fpath{}
	for i := range f.Policies {
		pols = append(pols, b.policy(root.key("policies").elem(i, f.Policies[i].Name), &f.Policies[i], cfg.RequestTimeout, seen))
	}
	if b.e != nil {
		return nil, nil
	}

	// Resource limit.
	var ops float64
	var what, lower string
	if f.MaxOps > 0 {
		ops, what, lower = float64(f.MaxOps), "max_ops", "max_ops or replications"
	}
	switch {
	case w.RatePerS > 0 && f.DurationS > 0:
		if byRate := w.RatePerS * f.DurationS; ops == 0 || byRate < ops {
			ops, what, lower = byRate, "rate_per_s × duration_s", "duration_s, rate_per_s or replications"
		}
	case w.Clients > 0 && f.DurationS > 0 && f.MaxOps == 0:
		mean := wl.Think.Mean()
		if !(mean > 0) {
			b.fail(wp.key("think"), "a closed loop without max_ops needs a think time with a mean > 0 ms, got %g", mean)
			return nil, nil
		}
		ops, what, lower = float64(w.Clients)*f.DurationS*1000/mean, "clients × duration_s / mean think time",
			"duration_s, clients or replications, or raise the think time"
	}
	if f.TimelineWindowS == nil {
		think := 0.0
		if wl.Think != nil {
			think = wl.Think.Mean()
		}
		cfg.TimelineWindow = max(runLength(f, think)/120, time.Second)
	}
	if total := ops * float64(reps) * float64(len(pols)); total > MaxSimulatedOps {
		p := root.key("duration_s")
		if what == "max_ops" {
			p = root.key("max_ops")
		}
		b.fail(p, "would simulate %.2g operations (%s × %d replications × %d policies); the limit is %g: lower %s",
			total, what, reps, len(pols), float64(MaxSimulatedOps), lower)
		return nil, nil
	}
	if err := cfg.Validate(); err != nil { // a backstop: every rule above is stricter
		b.fail(root, "%v", err)
		return nil, nil
	}
	return cfg, pols
}

// policy validates one [[policies]] entry and returns its simnet.Policy.
func (b *builder) policy(pp fpath, p *Policy, requestTimeout time.Duration, seen map[string]fpath) (out simnet.Policy) {
	b.checkID(pp.key("name"), "policy name", p.Name, seen)
	out = simnet.Policy{Name: p.Name}
	switch p.Type {
	case "":
		b.fail(pp.key("type"), "required (disabled, static, driver_default or p99_dynamic)")
	case "disabled", "static", "driver_default", "p99_dynamic":
	default:
		b.fail(pp.key("type"), "unknown policy type %q (want disabled, static, driver_default or p99_dynamic)", p.Type)
		return out // which fields apply depends on the type
	}
	if p.Type != "static" && p.ThresholdMs != nil {
		b.fail(pp.key("threshold_ms"), `applies only to type "static", not %q`, p.Type)
	}
	if p.Type != "p99_dynamic" {
		for _, o := range []struct {
			key string
			set bool
		}{
			{"quantile", p.Quantile != nil}, {"window_s", p.WindowS != nil}, {"buckets", p.Buckets != nil},
			{"min_ms", p.MinMs != nil}, {"max_ms", p.MaxMs != nil}, {"initial_ms", p.InitialMs != nil},
			{"min_samples", p.MinSamples != nil}, {"refresh_s", p.RefreshS != nil}, {"relative_accuracy", p.RelativeAccuracy != nil},
		} {
			if o.set {
				b.fail(pp.key(o.key), `applies only to type "p99_dynamic", not %q`, p.Type)
			}
		}
	}
	if p.Type == "disabled" && (p.HedgeBudget != nil || p.HedgeBudgetBurst != nil) {
		key := "hedge_budget"
		if p.HedgeBudget == nil {
			key = "hedge_budget_burst"
		}
		b.fail(pp.key(key), `does not apply to type "disabled"`)
	}
	budget, burst := 0.0, 100.0
	if p.HedgeBudget != nil {
		budget = *p.HedgeBudget
		if !(budget > 0 && budget <= 1) {
			b.fail(pp.key("hedge_budget"), "must be in (0, 1], got %g", budget)
		}
	}
	if p.HedgeBudgetBurst != nil {
		if p.HedgeBudget == nil {
			b.fail(pp.key("hedge_budget_burst"), "needs hedge_budget")
		}
		burst = *p.HedgeBudgetBurst
		if !(burst >= 1 && burst <= 1e9) {
			b.fail(pp.key("hedge_budget_burst"), "must be in [1, 1e9], got %g", burst)
		}
	}
	if b.e != nil {
		return out
	}
	defer func() {
		if budget == 0 || out.New == nil {
			return
		}
		inner := out.New
		out.New = func() (hedging.AvailabilityStrategy, error) {
			a, err := inner()
			if err != nil {
				return a, err
			}
			hs, _ := a.HedgingStrategy()
			var pol hedging.ThresholdPolicy = hedging.StaticPolicy{T: hs.Threshold()}
			if hs.Policy() != nil {
				pol = hs.Policy()
			}
			bp, err := hedging.NewBudgetedPolicy(pol, budget, burst, hedging.DriverDefaultThreshold(requestTimeout))
			if err != nil {
				return hedging.AvailabilityStrategy{}, err
			}
			return hedging.Hedging(hedging.NewPolicyStrategy(bp)), nil
		}
	}()
	switch p.Type {
	case "disabled":
		out.New = func() (hedging.AvailabilityStrategy, error) { return hedging.Disabled, nil }
	case "static":
		if p.ThresholdMs == nil {
			b.fail(pp.key("threshold_ms"), `required for type "static" (ms, > 0)`)
			break
		}
		th, _ := hedging.NewThreshold(b.posDur(pp.key("threshold_ms"), *p.ThresholdMs, time.Millisecond))
		out.New = func() (hedging.AvailabilityStrategy, error) {
			return hedging.Hedging(hedging.NewHedgingStrategy(th)), nil
		}
	case "driver_default":
		th := hedging.DriverDefaultThreshold(requestTimeout)
		out.New = func() (hedging.AvailabilityStrategy, error) {
			return hedging.Hedging(hedging.NewHedgingStrategy(th)), nil
		}
	case "p99_dynamic":
		pc := b.p99(pp, p)
		if b.e != nil {
			break
		}
		if _, err := hedging.NewP99Dynamic(pc); err != nil { // backstop
			b.fail(pp, "%v", err)
			break
		}
		out.New = func() (hedging.AvailabilityStrategy, error) {
			d, err := hedging.NewP99Dynamic(pc)
			if err != nil {
				return hedging.AvailabilityStrategy{}, err
			}
			return hedging.Hedging(hedging.NewPolicyStrategy(d)), nil
		}
	}
	return out
}

// p99 checks the explicit p99_dynamic settings and returns the config
// (zero fields take the hedging defaults).
func (b *builder) p99(pp fpath, p *Policy) hedging.P99DynamicConfig {
	var pc hedging.P99DynamicConfig
	open01 := func(key string, v *float64) float64 {
		if v == nil {
			return 0
		}
		if !(*v > 0 && *v < 1) {
			b.fail(pp.key(key), "must be between 0 and 1 (exclusive), got %g", *v)
		}
		return *v
	}
	pos := func(key string, v *float64, unit time.Duration) time.Duration {
		if v == nil {
			return 0
		}
		return b.posDur(pp.key(key), *v, unit)
	}
	pc.Quantile = open01("quantile", p.Quantile)
	pc.RelativeAccuracy = open01("relative_accuracy", p.RelativeAccuracy)
	pc.Window = pos("window_s", p.WindowS, time.Second)
	if p.Buckets != nil {
		b.intRange(pp.key("buckets"), *p.Buckets, 1, 1000)
		pc.Buckets = *p.Buckets
	}
	if p.Buckets != nil || p.WindowS != nil {
		window, buckets := cmp0(pc.Window, 60*time.Second), cmp0(pc.Buckets, 6)
		if b.e == nil && window/time.Duration(buckets) < time.Millisecond {
			b.fail(pp.key("window_s"), "window_s / buckets must be at least 1 ms, got %g s / %d", window.Seconds(), buckets)
		}
	}
	pc.Min = pos("min_ms", p.MinMs, time.Millisecond)
	pc.Max = pos("max_ms", p.MaxMs, time.Millisecond)
	if lo, hi := cmp0(pc.Min, 50*time.Millisecond), cmp0(pc.Max, 4000*time.Millisecond); b.e == nil && hi < lo {
		if p.MaxMs != nil {
			b.fail(pp.key("max_ms"), "must be >= min_ms (%g), got %g", float64(lo)/1e6, *p.MaxMs)
		} else {
			b.fail(pp.key("min_ms"), "must be <= max_ms (4000 by default), got %g", *p.MinMs)
		}
	}
	pc.Initial = pos("initial_ms", p.InitialMs, time.Millisecond)
	if p.MinSamples != nil {
		b.intRange(pp.key("min_samples"), *p.MinSamples, 1, math.MaxInt32)
		pc.MinSamples = *p.MinSamples
	}
	pc.Refresh = pos("refresh_s", p.RefreshS, time.Second)
	return pc
}

// cmp0 returns v, or def when v is zero.
func cmp0[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// runLength estimates how long operations arrive: duration_s, or less
// when max_ops is reached first, at rate_per_s (open loop) or at clients
// per mean think time in ms (closed loop; latency is not known in
// advance, and the timeline grows if the run lasts longer). The default
// timeline window is a 120th of it, so a run ended by max_ops gets about
// 120 windows over its actual length, not over a nominal duration_s.
func runLength(f *File, thinkMeanMs float64) time.Duration {
	length := time.Duration(f.DurationS * float64(time.Second))
	if f.MaxOps <= 0 {
		return length
	}
	var est float64 // seconds
	switch w := f.Workload; {
	case w.RatePerS > 0:
		est = float64(f.MaxOps) / w.RatePerS
	case w.Clients > 0 && thinkMeanMs > 0:
		est = float64(f.MaxOps) * thinkMeanMs / 1000 / float64(w.Clients)
	}
	if est > 0 && !math.IsInf(est, 0) && (length <= 0 || est < length.Seconds()) {
		length = time.Duration(est * float64(time.Second))
	}
	return length
}
