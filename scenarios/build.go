package scenarios

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"hedgelab/hedging"
	"hedgelab/hedging/threshold"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"
)

// Resource limits of one scenario.
const (
	// MaxSimulatedOps bounds the expected number of simulated operations of
	// a whole scenario: per-run operations × replications × policies.
	MaxSimulatedOps = simnet.MaxOpsLimit
	// MaxTimelineWindows bounds the number of timeline windows of one run.
	// Each window keeps a latency histogram of ~36 KB, so the bound is
	// ~370 MB a run (100000 ran out of memory at 4 GB with --parallel 2).
	MaxTimelineWindows = 10_000
	// MaxSeconds is the largest time in seconds a scenario accepts
	// (duration_s, start_s, end_s, ...); a reader of telemetry refuses a
	// longer span with it.
	MaxSeconds = 1e9
	// maxSeconds bounds every time value in seconds, far below the
	// ~292-year range of time.Duration; maxMillis bounds every time value
	// in milliseconds (delays, timeouts, thresholds) at simnet.MaxDelay,
	// the longest delay the simulator represents (1000 h), so no value is
	// silently capped.
	maxSeconds = MaxSeconds
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
// error it reaches (up to MaxErrors); e is the first. Every section is
// checked whatever errors other sections have; a check is skipped only
// when it depends on a value that is itself in error (or missing), since
// it would only repeat that problem: see [builder.run] for which.
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
	m := b.n
	d := b.dur(p, v, unit)
	if d <= 0 && b.n == m {
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

// MaxNameLen is the longest scenario, replica or policy name, in bytes:
// names become file and directory names (results/<name>/,
// quantiles_<policy>.csv, <name>-sweep-<path>/), which the file system
// limits to 255 bytes.
const MaxNameLen = 64

// CheckName reports why name cannot be a scenario's name (the top-level
// name key, which names the results directory): it is required, must
// match [a-z0-9-]+ without a leading dash and be at most MaxNameLen
// bytes. It returns nil for a valid name; the error's text is what the
// validator reports after "file:line: name: ". Tools that write a
// scenario (calibrate's --name) check their input with it.
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("required")
	case !reScenarioName.MatchString(name):
		return fmt.Errorf("must match [a-z0-9-]+ and not start with a dash, got %q", name)
	case len(name) > MaxNameLen:
		return fmt.Errorf("must be at most %d characters (it names the output directory), got %d", MaxNameLen, len(name))
	}
	return nil
}

// checkID checks an element name: required, [A-Za-z0-9_-]+, at most
// MaxNameLen bytes, unique.
func (b *builder) checkID(p fpath, what, name string, seen map[string]fpath) {
	switch {
	case name == "":
		b.fail(p, "required")
	case !reID.MatchString(name):
		b.fail(p, "must match [A-Za-z0-9_-]+, got %q", name)
	case len(name) > MaxNameLen:
		b.fail(p, "must be at most %d characters (it names files), got %d", MaxNameLen, len(name))
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
	cfg := &simnet.Config{}
	reps := b.topLevel(cfg)
	b.client(cfg)

	// The sections below name each other (endpoints name replicas, the
	// network, episodes and faults name replica names and regions, the
	// workload names endpoint regions), but only by those names: a replica
	// with a bad service time still has its name and region. So every
	// section is checked whatever errors the others have, and a check
	// that looks a name up is skipped only when the list it looks in is
	// incomplete (an entry without its name or region, or no entries,
	// already reported), where it could only report a false "unknown".
	// The final checks (resource limit, simnet's Validate) need a complete
	// configuration and run only on a file without errors.

	var nm names
	b.replicas(cfg, &nm)
	b.endpoints(cfg, &nm)
	b.account(cfg, &nm)
	b.network(cfg, &nm)
	b.episodes(cfg, &nm)
	b.faults(cfg, &nm)
	b.background(cfg, &nm)
	b.workload(cfg, &nm)
	b.fleet(cfg)
	b.ru(cfg)
	b.consistency(cfg, &nm)
	b.feed(cfg, &nm)
	pols := b.policies(cfg)
	if b.e != nil {
		return nil, nil
	}
	if !b.limits(cfg, reps, pols) {
		return nil, nil
	}
	return cfg, pols
}

// names is what the sections of a scenario learn about the names the
// others refer to (see run).
type names struct {
	// replicaNames and replicaRegions are the replicas' names and physical
	// regions; targets is their union (what episodes and faults name).
	replicaNames, replicaRegions, targets map[string]bool
	// replicasKnown: every replica has a name and a region, so the lists
	// of replica names and regions are complete.
	replicasKnown bool
	// endpointRegions are the endpoints' regions and replicaOf the replica
	// each names (the first entry for a region listed twice).
	endpointRegions map[string]bool
	replicaOf       map[string]string
	// endpointsKnown: every endpoint has a region, so endpointRegions is
	// complete.
	endpointsKnown bool
}

// topLevel checks the top-level keys into cfg and returns the number of
// replications.
func (b *builder) topLevel(cfg *simnet.Config) (reps int) {
	f := b.f
	var root fpath
	if err := CheckName(f.Name); err != nil {
		b.fail(root.key("name"), "%s", err)
	}
	b.integer(root.key("seed"), "seed", f.Seed)
	cfg.Seed = uint64(f.Seed)
	durationOK := b.n
	if f.DurationS > 0 {
		cfg.Duration = b.posDur(root.key("duration_s"), f.DurationS, time.Second) // 1e-300 s would be 0 ns: no duration
	} else {
		cfg.Duration = b.time(root.key("duration_s"), "duration_s", f.DurationS)
	}
	durationBad := b.n > durationOK
	b.integer(root.key("max_ops"), "max_ops", f.MaxOps)
	cfg.MaxOps = f.MaxOps
	if f.DurationS == 0 && f.MaxOps == 0 {
		b.fail(root.key("duration_s"), "need duration_s > 0 or max_ops > 0")
	}
	reps = 1
	if f.Replications != nil {
		reps = *f.Replications
		b.integer(root.key("replications"), "replications", int64(reps))
	}
	if f.TimelineWindowS != nil {
		p := root.key("timeline_window_s")
		m := b.n
		cfg.TimelineWindow = b.time(p, "timeline_window_s", *f.TimelineWindowS)
		if n := math.Ceil(f.DurationS / *f.TimelineWindowS); !durationBad && b.n == m && n > MaxTimelineWindows {
			b.fail(p, "%g s windows over duration_s = %g would make %.0f timeline windows; the limit is %d: raise timeline_window_s",
				*f.TimelineWindowS, f.DurationS, n, MaxTimelineWindows)
		}
	}
	return reps
}

// client checks [client] into cfg.
func (b *builder) client(cfg *simnet.Config) {
	var root fpath
	cp := root.key("client")
	c := b.f.Client
	if c.Region == "" {
		b.fail(cp.key("region"), "required (the physical region of the client)")
	}
	cfg.ClientRegion = c.Region
	cfg.Client.RequestTimeout = b.time(cp.key("request_timeout_ms"), "client.request_timeout_ms", c.RequestTimeoutMs)
	cfg.OperationTimeout = b.time(cp.key("operation_timeout_ms"), "client.operation_timeout_ms", c.OperationTimeoutMs)
	b.integer(cp.key("consecutive_hedge_win_threshold"), "client.consecutive_hedge_win_threshold", int64(c.ConsecutiveHedgeWinThreshold))
	cfg.Client.ConsecutiveHedgeWinThreshold = c.ConsecutiveHedgeWinThreshold
	cfg.Client.ProbeInterval = b.time(cp.key("probe_interval_s"), "client.probe_interval_s", c.ProbeIntervalS)
	if c.HedgeWinMinSpanMs < 0 {
		cfg.Client.HedgeWinMinSpan = -1 // count only (spec §9.5)
	} else {
		cfg.Client.HedgeWinMinSpan = b.time(cp.key("hedge_win_min_span_ms"), "client.hedge_win_min_span_ms", c.HedgeWinMinSpanMs)
	}
	cfg.Client.UnavailableFor = b.time(cp.key("unavailable_for_s"), "client.unavailable_for_s", c.UnavailableForS)
	b.integer(cp.key("unavailable_after"), "client.unavailable_after", int64(c.UnavailableAfter))
	cfg.Client.UnavailableAfter = c.UnavailableAfter
	if fieldOf("client.phase").in(float64(c.Phase)) {
		cfg.Client.Phase = [...]hedging.PhaseSet{hedging.Phase1, hedging.Phase1, hedging.Phase2, hedging.PhaseFuture}[c.Phase]
	} else {
		b.fail(cp.key("phase"), "must be 1, 2 or 3 (future), got %d", c.Phase)
	}
	b.integer(cp.key("retry_max_attempts"), "client.retry_max_attempts", int64(c.RetryMaxAttempts))
	cfg.Client.Retry = hedging.RetryOptions{
		MaxAttempts:     c.RetryMaxAttempts,
		ThrottleBackoff: b.time(cp.key("retry_throttle_backoff_ms"), "client.retry_throttle_backoff_ms", c.RetryThrottleBackoffMs),
	}
}

// replicas checks [[replicas]] into cfg and records their names and
// regions in nm.
func (b *builder) replicas(cfg *simnet.Config, nm *names) {
	f := b.f
	var root fpath
	nm.replicaNames, nm.replicaRegions = map[string]bool{}, map[string]bool{}
	if len(f.Replicas) == 0 {
		b.fail(root.key("replicas"), "at least one [[replicas]] entry is required")
	}
	// replicasKnown: every replica has a name and a region, so the lists
	// of replica names and regions are complete.
	nm.replicasKnown = len(f.Replicas) > 0
	seen := map[string]fpath{}
	for i, r := range f.Replicas {
		// A duplicate name hides the replica the file meant (a copy not
		// renamed): endpoints naming it would get a false "unknown".
		_, dup := seen[r.Name]
		nm.replicasKnown = nm.replicasKnown && r.Name != "" && r.Region != "" && !dup
		rp := root.key("replicas").elem(i, r.Name)
		b.checkID(rp.key("name"), "replica name", r.Name, seen)
		if r.Region == "" {
			b.fail(rp.key("region"), "required (the physical region of the replica)")
		}
		b.integer(rp.key("servers"), "replicas.servers", int64(r.Servers))
		rep := simnet.Replica{Name: r.Name, Region: r.Region, Servers: r.Servers}
		b.replicaCapacity(rp, &r, &rep)
		if r.Service == nil {
			b.fail(rp.key("service"), `required: the service time in ms, e.g. { family = "lognormal", median_ms = 1.0, p99_ms = 3.0 }`)
		} else {
			rep.Default = b.dist(rp.key("service"), *r.Service)
		}
		bp := rp.key("service_by_op")
		for _, k := range keysByLine(b, bp, r.ServiceByOp) {
			m := b.n
			kind := b.kind(bp.key(k), k)
			d := b.dist(bp.key(k), r.ServiceByOp[k])
			if b.n > m {
				continue
			}
			if rep.Service == nil {
				rep.Service = map[hedging.OperationKind]dist.Sampler{}
			}
			rep.Service[kind] = d
		}
		if r.Name != "" {
			nm.replicaNames[r.Name] = true
		}
		if r.Region != "" {
			nm.replicaRegions[r.Region] = true
		}
		cfg.Replicas = append(cfg.Replicas, rep)
	}
	nm.targets = map[string]bool{}
	for r := range nm.replicaNames {
		nm.targets[r] = true
	}
	for r := range nm.replicaRegions {
		nm.targets[r] = true
	}
}

// endpoints checks [[endpoints]] into cfg and records their regions in nm.
func (b *builder) endpoints(cfg *simnet.Config, nm *names) {
	f := b.f
	var root fpath
	if len(f.Endpoints) == 0 {
		b.fail(root.key("endpoints"), "at least one [[endpoints]] entry is required")
	}
	// endpointsKnown: every endpoint has a region, so endpointRegions is
	// complete.
	nm.endpointsKnown = len(f.Endpoints) > 0
	nm.endpointRegions = map[string]bool{}
	nm.replicaOf = map[string]string{}
	seen := map[string]fpath{}
	for i, e := range f.Endpoints {
		nm.endpointsKnown = nm.endpointsKnown && e.Region != ""
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
		case nm.replicasKnown && !nm.replicaNames[e.Replica]:
			b.fail(ep.key("replica"), "unknown replica %q (replicas: %s)", e.Replica, list(nm.replicaNames))
		}
		if e.Region != "" {
			nm.endpointRegions[e.Region] = true
		}
		if _, dup := nm.replicaOf[e.Region]; !dup {
			nm.replicaOf[e.Region] = e.Replica
		}
		cfg.Endpoints = append(cfg.Endpoints, simnet.Endpoint{Region: e.Region, Replica: e.Replica})
	}
}

// account checks [account] into cfg.
func (b *builder) account(cfg *simnet.Config, nm *names) {
	f := b.f
	var root fpath
	if w := f.Account.WriteRegion; w != "" && nm.endpointsKnown && !nm.endpointRegions[w] {
		b.fail(root.key("account", "write_region"), "%q is not an endpoint region (endpoints: %s)", w, list(nm.endpointRegions))
	}
	cfg.WriteRegion = f.Account.WriteRegion
	cfg.MultiMaster = f.Account.MultiMaster
}

// network checks [network] into cfg: RTTs, jitter and replication lag.
func (b *builder) network(cfg *simnet.Config, nm *names) {
	f := b.f
	var root fpath
	cp := root.key("client")
	c := f.Client
	np := root.key("network")
	n := f.Network
	cfg.SameRegionRTTMs = 1
	if n.SameRegionRTTMs != nil {
		cfg.SameRegionRTTMs = *n.SameRegionRTTMs
		b.time(np.key("same_region_rtt_ms"), "network.same_region_rtt_ms", cfg.SameRegionRTTMs)
	}
	if n.Jitter != nil {
		cfg.Jitter = b.dist(np.key("jitter"), *n.Jitter)
	}
	declared := map[string]bool{c.Region: true}
	for r := range nm.replicaRegions {
		declared[r] = true
	}
	inRTT := false
	rp := np.key("rtt_ms")
	// An incomplete list of replica regions (reported above) would make
	// "undeclared" and "missing RTT" errors that only repeat it.
	for _, from := range keysByLine(b, rp, n.RTTMs) {
		if nm.replicasKnown && !declared[from] {
			b.fail(rp.key(from), "undeclared region %q (not a replica region or the client region)", from)
		}
		for _, to := range keysByLine(b, rp.key(from), n.RTTMs[from]) {
			if nm.replicasKnown && !declared[to] {
				b.fail(rp.key(from, to), "undeclared region %q (not a replica region or the client region)", to)
			}
			b.time(rp.key(from, to), "network.rtt_ms", n.RTTMs[from][to])
			inRTT = inRTT || from == c.Region || to == c.Region
		}
	}
	cfg.RTTMs = n.RTTMs
	if c.Region != "" && nm.replicasKnown && !nm.replicaRegions[c.Region] && !inRTT {
		b.fail(cp.key("region"), "unknown region %q: not the region of any replica and not in network.rtt_ms", c.Region)
	}
	lp := np.key("replication_lag_ms")
	for _, r := range keysByLine(b, lp, n.ReplicationLagMs) {
		if nm.replicasKnown && !nm.replicaRegions[r] {
			b.fail(lp.key(r), "unknown region %q (replica regions: %s)", r, list(nm.replicaRegions))
		}
		b.time(lp.key(r), "network.replication_lag_ms", n.ReplicationLagMs[r])
	}
	cfg.ReplicationLagMs = n.ReplicationLagMs
	hasRTT := func(a, z string) bool {
		_, ok1 := n.RTTMs[a][z]
		_, ok2 := n.RTTMs[z][a]
		return a == z || ok1 || ok2
	}
	writeRegion := f.Account.WriteRegion
	if writeRegion == "" && len(f.Endpoints) > 0 {
		writeRegion = f.Endpoints[0].Region
	}
	hubRegion := ""
	for _, r := range f.Replicas {
		if r.Name == nm.replicaOf[writeRegion] {
			hubRegion = r.Region
		}
	}
	// An unknown client or write region, or a replica without a region,
	// was reported above: its missing RTTs would only repeat that.
	clientKnown := c.Region != "" && (nm.replicaRegions[c.Region] || inRTT)
	for _, r := range f.Replicas {
		if r.Region != "" && clientKnown && !hasRTT(c.Region, r.Region) {
			b.fail(rp, "missing the RTT between the client region %q and %q (region of replica %s)", c.Region, r.Region, r.Name)
		}
	}
	for _, r := range f.Replicas {
		if r.Region != "" && hubRegion != "" && !hasRTT(r.Region, hubRegion) {
			b.fail(rp, "missing the RTT between %q (region of replica %s) and the write region's replica region %q (hub forwarding)", r.Region, r.Name, hubRegion)
		}
	}
}

// target checks the target key at p of an episode or background source:
// required, a replica name or a physical region.
func (b *builder) target(p fpath, target string, nm *names) {
	switch {
	case target == "":
		b.fail(p, "required (a replica name or physical region)")
	case nm.replicasKnown && !nm.targets[target]:
		b.fail(p, "unknown target %q (want a replica name or region: %s)", target, list(nm.targets))
	}
}

// episodes checks [[episodes]] into cfg.
func (b *builder) episodes(cfg *simnet.Config, nm *names) {
	f := b.f
	var root fpath
	for i, e := range f.Episodes {
		ep := root.key("episodes").elem(i, "")
		b.target(ep.key("target"), e.Target, nm)
		ev := simnet.Episode{Label: e.Label, Target: e.Target, AddMs: e.AddMs, Fraction: e.Fraction, FailRate: e.FailRate,
			Factor: 1, FailStatus: hedging.Status{Code: 503, SubStatus: e.FailSubstatus}}
		if ev.Label == "" {
			ev.Label = fmt.Sprintf("episode %d", i)
		}
		m := b.n
		ev.Start = b.time(ep.key("start_s"), "episodes.start_s", e.StartS)
		ev.End = b.time(ep.key("end_s"), "episodes.end_s", e.EndS)
		windowOK := b.n == m // start_s and end_s are valid numbers
		if windowOK && e.EndS <= e.StartS {
			b.fail(ep.key("end_s"), "must be > start_s (%g), got %g", e.StartS, e.EndS)
		}
		windowOK = b.n == m
		ev.RampUp = b.time(ep.key("ramp_up_s"), "episodes.ramp_up_s", e.RampUpS)
		ev.RampDown = b.time(ep.key("ramp_down_s"), "episodes.ramp_down_s", e.RampDownS)
		if windowOK && b.n == m && e.RampUpS+e.RampDownS > e.EndS-e.StartS {
			b.fail(ep.key("ramp_up_s"), "ramp_up_s + ramp_down_s (%g) must be <= end_s - start_s (%g)", e.RampUpS+e.RampDownS, e.EndS-e.StartS)
		}
		if e.Factor != nil {
			ev.Factor = *e.Factor
			b.num(ep.key("factor"), "episodes.factor", ev.Factor)
		}
		b.time(ep.key("add_ms"), "episodes.add_ms", e.AddMs)
		b.num(ep.key("fraction"), "episodes.fraction", e.Fraction)
		b.num(ep.key("fail_rate"), "episodes.fail_rate", e.FailRate)
		if e.FailStatus != 0 {
			b.integer(ep.key("fail_status"), "episodes.fail_status", int64(e.FailStatus))
			ev.FailStatus.Code = e.FailStatus
		}
		b.integer(ep.key("fail_substatus"), "episodes.fail_substatus", int64(e.FailSubstatus))
		cfg.Episodes = append(cfg.Episodes, ev)
	}
}

// faults checks [[faults]] into cfg.
func (b *builder) faults(cfg *simnet.Config, nm *names) {
	f := b.f
	var root fpath
	for i, fl := range f.Faults {
		fp := root.key("faults").elem(i, "")
		fr := simnet.Fault{Status: hedging.Status{Code: 503, SubStatus: fl.Substatus}, Probability: fl.Probability,
			LatencyMs: fl.LatencyMs, FirstAttemptOnly: fl.FirstAttemptOnly}
		if fl.Status != 0 {
			b.integer(fp.key("status"), "faults.status", int64(fl.Status))
			fr.Status.Code = fl.Status
		}
		b.integer(fp.key("substatus"), "faults.substatus", int64(fl.Substatus))
		b.num(fp.key("probability"), "faults.probability", fl.Probability)
		pp := fp.key("partitions")
		for _, pi := range fl.Partitions {
			b.intRange(pp, pi, 0, max(f.Workload.Partitions, 1)-1)
		}
		fr.Partitions = fl.Partitions
		for j, t := range fl.Targets {
			if nm.replicasKnown && !nm.targets[t] {
				b.fail(fp.key("targets", strconv.Itoa(j)), "unknown target %q (want a replica name or region: %s)", t, list(nm.targets))
			}
		}
		fr.Targets = slices.Clone(fl.Targets)
		for j, op := range fl.Operations {
			fr.Kinds = append(fr.Kinds, b.kind(fp.key("operations", strconv.Itoa(j)), op))
		}
		m := b.n
		fr.Start = b.time(fp.key("start_s"), "faults.start_s", fl.StartS)
		fr.End = b.time(fp.key("end_s"), "faults.end_s", fl.EndS)
		if b.n == m && fl.EndS != 0 && fl.EndS <= fl.StartS {
			b.fail(fp.key("end_s"), "must be 0 (forever) or > start_s (%g), got %g", fl.StartS, fl.EndS)
		}
		b.time(fp.key("latency_ms"), "faults.latency_ms", fl.LatencyMs)
		cfg.Faults = append(cfg.Faults, fr)
	}
}

// rateChanges checks [[workload.rate_changes]]: open loop only, each
// entry's at_s at or after the previous entry's at_s + ramp_s.
func (b *builder) rateChanges(wp fpath, w Workload) []simnet.RateChange {
	var out []simnet.RateChange
	end := time.Duration(0)
	for i, c := range w.RateChanges {
		cp := wp.key("rate_changes").elem(i, "")
		if w.Clients > 0 {
			b.fail(cp, "applies only to an open loop (rate_per_s > 0), not to clients")
			return nil
		}
		at := b.time(cp.key("at_s"), "workload.rate_changes.at_s", c.AtS)
		ramp := b.time(cp.key("ramp_s"), "workload.rate_changes.ramp_s", c.RampS)
		b.num(cp.key("rate_per_s"), "workload.rate_changes.rate_per_s", c.RatePerS)
		if at < end {
			b.fail(cp.key("at_s"), "must be >= %g s, where the previous rate change ends (at_s + ramp_s)", end.Seconds())
		}
		end = at + ramp
		out = append(out, simnet.RateChange{At: at, Ramp: ramp, RatePerSec: c.RatePerS})
	}
	if n := len(w.RateChanges); n > 0 && w.RateChanges[n-1].RatePerS == 0 && b.f.DurationS == 0 {
		// Found by hedgesim fuzz: the arrivals stop for good before
		// max_ops is reached, and the run never ends.
		b.fail(wp.key("rate_changes").elem(n-1, "").key("rate_per_s"),
			"the rate stays 0 from this change on and there is no duration_s: max_ops is never reached, so the run would not end; set duration_s")
	}
	return out
}

// workload checks [workload] into cfg.
func (b *builder) workload(cfg *simnet.Config, nm *names) {
	f := b.f
	var root fpath
	wp := root.key("workload")
	w := f.Workload
	b.num(wp.key("rate_per_s"), "workload.rate_per_s", w.RatePerS)
	b.integer(wp.key("clients"), "workload.clients", int64(w.Clients))
	switch {
	case w.RatePerS > 0 && w.Clients > 0:
		b.fail(wp.key("clients"), "set rate_per_s (open loop) or clients (closed loop), not both")
	case w.RatePerS == 0 && w.Clients == 0:
		b.fail(wp.key("rate_per_s"), "required: rate_per_s > 0 (open loop) or clients > 0 (closed loop)")
	}
	wl := simnet.Workload{RatePerSec: w.RatePerS, Clients: w.Clients, Partitions: max(w.Partitions, 1), ZipfS: w.ZipfS,
		ExcludeFraction: w.ExcludeFraction, Exclude: slices.Clone(w.ExcludeRegions), DisabledFraction: w.DisabledFraction}
	wl.RateChanges = b.rateChanges(wp, w)
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
		b.num(mp.key(k), "workload.mix", w.Mix[k])
		wl.Mix = append(wl.Mix, simnet.MixEntry{Kind: kind, Weight: w.Mix[k]})
	}
	slices.SortFunc(wl.Mix, func(a, z simnet.MixEntry) int { return int(a.Kind) - int(z.Kind) })
	b.integer(wp.key("partitions"), "workload.partitions", int64(w.Partitions))
	if !fieldOf("workload.zipf_s").in(w.ZipfS) {
		b.fail(wp.key("zipf_s"), "must be 0 (uniform) or > 1, got %g", w.ZipfS)
	}
	b.num(wp.key("exclude_fraction"), "workload.exclude_fraction", w.ExcludeFraction)
	for j, r := range w.ExcludeRegions {
		if nm.endpointsKnown && !nm.endpointRegions[r] {
			b.fail(wp.key("exclude_regions", strconv.Itoa(j)), "%q is not an endpoint region (endpoints: %s)", r, list(nm.endpointRegions))
		}
	}
	if w.ExcludeFraction > 0 && len(w.ExcludeRegions) == 0 {
		b.fail(wp.key("exclude_fraction"), "needs exclude_regions")
	}
	b.num(wp.key("disabled_fraction"), "workload.disabled_fraction", w.DisabledFraction)
	cfg.Workload = wl
}

// fleet checks [fleet] into cfg.
func (b *builder) fleet(cfg *simnet.Config) {
	var root fpath
	fp := root.key("fleet")
	fl := b.f.Fleet
	if fl.Instances != nil {
		b.integer(fp.key("instances"), "fleet.instances", int64(*fl.Instances))
		cfg.Fleet.Instances = *fl.Instances
	}
	cfg.Fleet.Assignment = simnet.AssignUniform
	if (fl.Assignment != "" || b.set(fp.key("assignment"))) && b.enum(fp.key("assignment"), "fleet.assignment", fl.Assignment, "", true) &&
		fl.Assignment == simnet.AssignPartition.String() {
		cfg.Fleet.Assignment = simnet.AssignPartition
	}
}

// ru checks [ru], [ru_budget] and [throughput_control] into cfg.
func (b *builder) ru(cfg *simnet.Config) {
	f := b.f
	var root fpath
	up := root.key("ru")
	for _, k := range keysByLine(b, up, f.RU) {
		kind := b.kind(up.key(k), k)
		b.num(up.key(k), "ru", f.RU[k])
		if cfg.RU == nil {
			cfg.RU = map[hedging.OperationKind]float64{}
		}
		cfg.RU[kind] = f.RU[k]
	}
	bucket := func(p fpath, t *TokenBucket) (rate, burst float64) {
		b.num(p.key("ru_per_s"), p.String()+".ru_per_s", t.RUPerS)
		b.num(p.key("burst"), p.String()+".burst", t.Burst)
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
}

// policies checks [[policies]] and returns them.
func (b *builder) policies(cfg *simnet.Config) []simnet.Policy {
	f := b.f
	var root fpath
	if len(f.Policies) == 0 {
		b.fail(root.key("policies"), "at least one [[policies]] entry is required")
	}
	var pols []simnet.Policy
	seen := map[string]fpath{}
	for i := range f.Policies {
		pols = append(pols, b.policy(root.key("policies").elem(i, f.Policies[i].Name), &f.Policies[i], cfg.Client.RequestTimeout, seen))
	}
	return pols
}

// limits checks the resource limit (operations to simulate) and, as a
// backstop, simnet's own validation of the complete cfg; it sets cfg's
// default timeline window. It runs only on a file without errors and
// reports whether cfg passed.
func (b *builder) limits(cfg *simnet.Config, reps int, pols []simnet.Policy) bool {
	f := b.f
	var root fpath
	wp := root.key("workload")
	wl := cfg.Workload
	ops, what, lower := countedOps(f, cfg)
	if math.IsNaN(ops) {
		b.fail(wp.key("think"), "a closed loop without max_ops needs a think time with a mean > 0 ms, got %g", wl.Think.Mean())
		return false
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
		b.fail(p, "would simulate %s operations (%s × %d replications × %d policies); the limit is %g: lower %s",
			count(total), what, reps, len(pols), float64(MaxSimulatedOps), lower)
		return false
	}
	if !b.backgroundLimit(cfg, reps, len(pols)) || !b.backgroundOverload(cfg) {
		return false
	}
	if !b.fleetBucketLimit() || !b.workLimit(cfg, reps, len(pols)) {
		return false
	}
	if err := cfg.Validate(); err != nil { // a backstop: every rule above is stricter
		b.fail(root, "%v", err)
		return false
	}
	return b.checkArrivals(cfg, reps)
}

// countedOps returns the operations per run the resource limit counts
// (min(rate_per_s × duration_s, max_ops), or a closed loop's clients ×
// duration_s / mean think time), what the count is, and what to lower; NaN
// for a closed loop without max_ops whose think time has no positive mean.
func countedOps(f *File, cfg *simnet.Config) (ops float64, what, lower string) {
	w := f.Workload
	if f.MaxOps > 0 {
		ops, what, lower = float64(f.MaxOps), "max_ops", "max_ops or replications"
	}
	switch {
	case w.RatePerS > 0 && f.DurationS > 0:
		if byRate := w.RatePerS * f.DurationS; ops == 0 || byRate < ops {
			ops, what, lower = byRate, "rate_per_s × duration_s", "duration_s, rate_per_s or replications"
		}
	case w.Clients > 0 && f.DurationS > 0 && f.MaxOps == 0:
		mean := cfg.Workload.Think.Mean()
		if !(mean > 0) {
			return math.NaN(), "", ""
		}
		ops, what, lower = float64(w.Clients)*f.DurationS*1000/mean, "clients × duration_s / mean think time",
			"duration_s, clients or replications, or raise the think time"
	}
	return ops, what, lower
}

// LimitedWork returns the units of work of one run (one policy, one
// replication) that the scenario's resource limit ([MaxSimulatedWork],
// scenarios/work.go) counts: simnet.Config.ExpectedWork's total, every
// request (operations, pages, setup reads, polls, background requests).
// The fuzzer compares it with what a run does: a limit that leaves units
// of work out lets a small file hang a run.
func (s *Scenario) LimitedWork() float64 {
	cfg, _, err := s.Config()
	if err != nil {
		return 0
	}
	return cfg.ExpectedWork().Total()
}

// backgroundSource returns one background source's requests per run:
// its rate_per_s × its arrival window (start_s to end_s, or to the end
// of the client's arrivals, length s) × the replicas it targets.
func backgroundSource(g Background, cfg *simnet.Config, length float64) float64 {
	end := length
	if g.EndS != nil && *g.EndS < end {
		end = *g.EndS
	}
	n := 0
	for _, r := range cfg.Replicas {
		if r.Targeted(g.Target) {
			n++
		}
	}
	return g.RatePerS * max(end-g.StartS, 0) * float64(n)
}

// policyType is one row of [policyTypes]: a scenario policy `type`, the
// optional keys it accepts, and how to build it.
type policyType struct {
	name string
	// doc is the one-line description shown in errors and the README.
	doc string
	// keys lists the optional keys (beyond name and type) the type accepts.
	keys []string
	// build validates the entry's keys and returns the constructor of a
	// fresh strategy per client, or nil after b.fail.
	build func(b *builder, pp fpath, p *Policy, requestTimeout time.Duration) func() (hedging.AvailabilityStrategy, error)
}

// minExtraLoad is the smallest max_extra_load of backup_requests whose
// quantile, 1 - max_extra_load, is below 1 (2^-53): a builder check beside
// the field's (0, 1), as it is a float64 resolution, not a range.
const minExtraLoad = 0x1p-53

// Key groups shared by several policy types.
var (
	quantileKeys = []string{"quantile", "window_s", "buckets", "min_ms", "max_ms", "initial_ms", "min_samples",
		"refresh_s", "relative_accuracy", "preset", "rounding", "thin_window", "warmup", "censored", "ceiling", "ceiling_factor"}
	budgetKeys = []string{"hedge_budget", "hedge_budget_burst", "hedge_budget_burst_s", "hedge_budget_charge_failover", "hedge_budget_debt"}
)

func keys(groups ...[]string) []string { return slices.Concat(groups...) }

// policyTypes is the one table of scenario policy types: parsing, key
// applicability, errors and `hedgesim` all read it. Units and defaults of
// every key are in scenarios/README.md.
var policyTypes = []policyType{
	{name: "disabled", doc: "no hedging",
		build: func(*builder, fpath, *Policy, time.Duration) func() (hedging.AvailabilityStrategy, error) {
			return func() (hedging.AvailabilityStrategy, error) { return hedging.Disabled, nil }
		}},
	{name: "static", doc: "a fixed threshold (spec §4.1)", keys: keys([]string{"threshold_ms"}, budgetKeys),
		build: func(b *builder, pp fpath, p *Policy, rt time.Duration) func() (hedging.AvailabilityStrategy, error) {
			th, ok := b.threshold(pp, p)
			if !ok {
				return nil
			}
			return b.budgeted(pp, p, rt, func() (hedging.ThresholdPolicy, error) { return threshold.Static{T: th}, nil })
		}},
	{name: "driver_default", doc: "min(1 s, request_timeout/2) (spec §3.4)", keys: budgetKeys,
		build: func(b *builder, pp fpath, p *Policy, rt time.Duration) func() (hedging.AvailabilityStrategy, error) {
			dd := threshold.DriverDefault(rt)
			return b.budgeted(pp, p, rt, func() (hedging.ThresholdPolicy, error) { return dd, nil })
		}},
	{name: "p99_dynamic", doc: "a learned quantile of the primary's latency (TPS §4.2, with hedgelab's fixes)",
		keys: keys(quantileKeys, budgetKeys),
		build: func(b *builder, pp fpath, p *Policy, rt time.Duration) func() (hedging.AvailabilityStrategy, error) {
			pc, ok := b.p99(pp, p, threshold.P99DynamicConfig{})
			if !ok {
				return nil
			}
			return b.budgeted(pp, p, rt, func() (hedging.ThresholdPolicy, error) { return threshold.NewP99Dynamic(pc) })
		}},
	{name: "capped_quantile", doc: "min(quantile, cap_ms): Cassandra's speculative_retry MIN(99p, X ms)",
		keys: keys([]string{"cap_ms"}, slices.DeleteFunc(slices.Clone(quantileKeys), func(k string) bool { return k == "max_ms" }), budgetKeys),
		build: func(b *builder, pp fpath, p *Policy, rt time.Duration) func() (hedging.AvailabilityStrategy, error) {
			if p.CapMs == nil {
				b.fail(pp.key("type"), `type "capped_quantile" needs cap_ms (ms, > 0): the X of min(quantile, X ms)`)
				return nil
			}
			cp := b.time(pp.key("cap_ms"), "policies.cap_ms", *p.CapMs)
			pc, ok := b.p99(pp, p, threshold.CappedQuantile(cp))
			if !ok {
				return nil
			}
			return b.budgeted(pp, p, rt, func() (hedging.ThresholdPolicy, error) { return threshold.NewP99Dynamic(pc) })
		}},
	{name: "backup_requests", doc: "the (1 - max_extra_load) quantile with a hedge budget of max_extra_load and a minimum rate: Finagle's BackupRequestFilter",
		keys: keys([]string{"max_extra_load", "min_backups_per_s", "hedge_budget_burst"},
			slices.DeleteFunc(slices.Clone(quantileKeys), func(k string) bool { return k == "quantile" })),
		build: func(b *builder, pp fpath, p *Policy, rt time.Duration) func() (hedging.AvailabilityStrategy, error) {
			n0 := b.n
			load, minRate, burst := 0.05, 1.0, 100.0
			if p.MaxExtraLoad != nil {
				load = *p.MaxExtraLoad
				if b.num(pp.key("max_extra_load"), "policies.max_extra_load", load) && load < minExtraLoad {
					b.fail(pp.key("max_extra_load"), "must be at least %.3g (1 - max_extra_load is the quantile, and rounds to 1 below that), got %g", minExtraLoad, load)
				}
			}
			if p.MinBackupsPerS != nil {
				minRate = *p.MinBackupsPerS
				b.num(pp.key("min_backups_per_s"), "policies.min_backups_per_s", minRate)
			}
			if p.HedgeBudgetBurst != nil {
				burst = *p.HedgeBudgetBurst
				b.num(pp.key("hedge_budget_burst"), "policies.backup_requests.hedge_budget_burst", burst)
			}
			if b.n > n0 {
				return nil // the quantile's backstop would report these again
			}
			base, bc := threshold.BackupRequests(load, minRate, burst)
			pc, ok := b.p99(pp, p, base)
			if !ok || b.n > n0 {
				return nil
			}
			return budgetedNew(func() (hedging.ThresholdPolicy, error) { return threshold.NewP99Dynamic(pc) }, &bc)
		}},
	{name: "retry_throttle", doc: "threshold_ms while a token bucket in [0, max_tokens] holds more than half: gRPC's retry throttling (A6)",
		keys: []string{"threshold_ms", "max_tokens", "token_ratio"},
		build: func(b *builder, pp fpath, p *Policy, rt time.Duration) func() (hedging.AvailabilityStrategy, error) {
			n0 := b.n
			th, ok := b.threshold(pp, p)
			if !ok {
				return nil
			}
			maxTokens, ratio := 10.0, 0.1
			if p.MaxTokens != nil {
				maxTokens = *p.MaxTokens
				b.num(pp.key("max_tokens"), "policies.max_tokens", maxTokens)
			}
			if p.TokenRatio != nil {
				ratio = *p.TokenRatio
				b.num(pp.key("token_ratio"), "policies.token_ratio", ratio)
			}
			if b.n > n0 {
				return nil
			}
			bc := threshold.RetryThrottle(maxTokens, ratio)
			return budgetedNew(func() (hedging.ThresholdPolicy, error) { return threshold.Static{T: th}, nil }, &bc)
		}},
	{name: "recommended", doc: "the policy notebook 01 recommends (today threshold.Recommended: hedge where a threshold is expected to answer sooner, per operation kind, inside the deadline)",
		keys: keys([]string{"quantile"}, budgetKeys),
		build: func(b *builder, pp fpath, p *Policy, rt time.Duration) func() (hedging.AvailabilityStrategy, error) {
			var rc threshold.RecommendedConfig
			if p.Quantile != nil {
				rc.Quantile = *p.Quantile
			}
			if p.HedgeBudget != nil && *p.HedgeBudget > 0 && *p.HedgeBudget <= 1 {
				rc.MaxHedgeRate = *p.HedgeBudget // the threshold fits the budget
			}
			if err := rc.Validate(); err != nil {
				b.fail(pp.key("quantile"), "%v", err)
				return nil
			}
			return b.budgeted(pp, p, rt, func() (hedging.ThresholdPolicy, error) { return threshold.NewRecommended(rc) })
		}},
}

// PolicyTypes returns the scenario policy type names, in table order.
func PolicyTypes() []string {
	out := make([]string, len(policyTypes))
	for i, t := range policyTypes {
		out[i] = t.name
	}
	return out
}

func policyTypeNames() string {
	n := PolicyTypes()
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// setKeys returns the optional keys set in p, in schema order.
func (p *Policy) setKeys() []string {
	var out []string
	for _, o := range []struct {
		key string
		set bool
	}{
		{"threshold_ms", p.ThresholdMs != nil},
		{"quantile", p.Quantile != nil}, {"window_s", p.WindowS != nil}, {"buckets", p.Buckets != nil},
		{"min_ms", p.MinMs != nil}, {"max_ms", p.MaxMs != nil}, {"initial_ms", p.InitialMs != nil},
		{"min_samples", p.MinSamples != nil}, {"refresh_s", p.RefreshS != nil}, {"relative_accuracy", p.RelativeAccuracy != nil},
		{"preset", p.Preset != nil}, {"rounding", p.Rounding != nil}, {"thin_window", p.ThinWindow != nil},
		{"warmup", p.Warmup != nil}, {"censored", p.Censored != nil}, {"ceiling", p.Ceiling != nil},
		{"ceiling_factor", p.CeilingFactor != nil}, {"cap_ms", p.CapMs != nil},
		{"max_extra_load", p.MaxExtraLoad != nil}, {"min_backups_per_s", p.MinBackupsPerS != nil},
		{"max_tokens", p.MaxTokens != nil}, {"token_ratio", p.TokenRatio != nil},
		{"hedge_budget", p.HedgeBudget != nil}, {"hedge_budget_burst", p.HedgeBudgetBurst != nil}, {"hedge_budget_burst_s", p.HedgeBudgetBurstS != nil},
		{"hedge_budget_charge_failover", p.HedgeBudgetChargeFailover != nil}, {"hedge_budget_debt", p.HedgeBudgetDebt != nil},
	} {
		if o.set {
			out = append(out, o.key)
		}
	}
	return out
}

// policy validates one [[policies]] entry and returns its simnet.Policy.
func (b *builder) policy(pp fpath, p *Policy, requestTimeout time.Duration, seen map[string]fpath) (out simnet.Policy) {
	b.checkID(pp.key("name"), "policy name", p.Name, seen)
	out = simnet.Policy{Name: p.Name}
	n0 := b.n
	if p.Type == "" {
		b.fail(pp.key("type"), "required (%s)", policyTypeNames())
		return out
	}
	i := slices.IndexFunc(policyTypes, func(t policyType) bool { return t.name == p.Type })
	if i < 0 {
		b.fail(pp.key("type"), "unknown policy type %q (want %s)", p.Type, policyTypeNames())
		return out
	}
	t := policyTypes[i]
	for _, k := range p.setKeys() {
		if slices.Contains(t.keys, k) {
			continue
		}
		var owners []string
		for _, o := range policyTypes {
			if slices.Contains(o.keys, k) {
				owners = append(owners, strconv.Quote(o.name))
			}
		}
		what := "type " + owners[0]
		if len(owners) > 1 {
			what = "types " + strings.Join(owners, ", ")
		}
		b.fail(pp.key(k), "applies only to %s, not %q", what, p.Type)
		return out
	}
	if b.n > n0 {
		return out
	}
	out.New = t.build(b, pp, p, requestTimeout)
	if b.n > n0 {
		out.New = nil
	}
	return out
}

// threshold checks threshold_ms, required for the types that take it.
func (b *builder) threshold(pp fpath, p *Policy) (hedging.Threshold, bool) {
	if p.ThresholdMs == nil {
		b.fail(pp.key("threshold_ms"), "required for type %q (ms, > 0)", p.Type)
		return hedging.Threshold{}, false
	}
	m := b.n
	th, _ := hedging.NewThreshold(b.time(pp.key("threshold_ms"), "policies.threshold_ms", *p.ThresholdMs))
	return th, b.n == m
}

// budgeted returns a constructor of the policy newPol makes, gated by the
// hedge budget the entry's hedge_budget keys ask for (none without
// hedge_budget).
func (b *builder) budgeted(pp fpath, p *Policy, requestTimeout time.Duration, newPol func() (hedging.ThresholdPolicy, error)) func() (hedging.AvailabilityStrategy, error) {
	n0 := b.n
	if p.HedgeBudget == nil {
		for _, k := range []struct {
			key string
			set bool
		}{{"hedge_budget_burst", p.HedgeBudgetBurst != nil}, {"hedge_budget_burst_s", p.HedgeBudgetBurstS != nil}, {"hedge_budget_charge_failover", p.HedgeBudgetChargeFailover != nil},
			{"hedge_budget_debt", p.HedgeBudgetDebt != nil}} {
			if k.set {
				b.fail(pp.key(k.key), "needs hedge_budget")
				return nil
			}
		}
		return budgetedNew(newPol, nil)
	}
	bc := threshold.BudgetConfig{Ratio: *p.HedgeBudget, Burst: 100}
	b.num(pp.key("hedge_budget"), "policies.hedge_budget", bc.Ratio)
	if p.HedgeBudgetBurst != nil {
		bc.Burst = *p.HedgeBudgetBurst
		b.num(pp.key("hedge_budget_burst"), "policies.hedge_budget_burst", bc.Burst)
	}
	if p.HedgeBudgetBurstS != nil {
		if p.HedgeBudgetBurst != nil {
			b.fail(pp.key("hedge_budget_burst_s"), "excludes hedge_budget_burst (a bucket in seconds of the instance's budget, or in tokens)")
		}
		bc.Burst, bc.BurstSeconds = 0, *p.HedgeBudgetBurstS
		b.num(pp.key("hedge_budget_burst_s"), "policies.hedge_budget_burst_s", bc.BurstSeconds)
	}
	if p.HedgeBudgetChargeFailover != nil {
		bc.ChargeFailover = *p.HedgeBudgetChargeFailover
	}
	if p.HedgeBudgetDebt != nil {
		bc.Debt = *p.HedgeBudgetDebt
	}
	if b.n > n0 {
		return nil
	}
	if _, err := threshold.NewBudget(bc); err != nil { // a backstop: the run builds one per instance
		b.fail(pp.key("hedge_budget"), "%v", err)
		return nil
	}
	return budgetedNew(newPol, &bc)
}

// budgetedNew returns a constructor of a fresh policy strategy, gated by a
// fresh budget (hedging.HedgingStrategy.Gate) when bc is not nil.
func budgetedNew(newPol func() (hedging.ThresholdPolicy, error), bc *threshold.BudgetConfig) func() (hedging.AvailabilityStrategy, error) {
	return func() (hedging.AvailabilityStrategy, error) {
		pol, err := newPol()
		if err != nil {
			return hedging.AvailabilityStrategy{}, err
		}
		if sp, ok := pol.(threshold.Static); ok && bc == nil {
			return hedging.Hedging(hedging.NewHedgingStrategy(sp.T)), nil
		}
		s := hedging.NewPolicyStrategy(pol)
		if bc != nil {
			if s.Gate, err = threshold.NewBudget(*bc); err != nil {
				return hedging.AvailabilityStrategy{}, err
			}
		}
		return hedging.Hedging(s), nil
	}
}

// options maps the p99-family option keys to their values; the first value
// is the fix (the default), the second the TPS §4.2 literal behaviour.
var (
	roundingOpts   = map[string]threshold.Rounding{"upper_edge": threshold.RoundUpperEdge, "value": threshold.RoundValue}
	thinOpts       = map[string]threshold.ThinWindow{"keep_last": threshold.ThinKeepLast, "initial": threshold.ThinInitial}
	warmupOpts     = map[string]threshold.Warmup{"max_observed": threshold.WarmupMaxObserved, "initial": threshold.WarmupInitial}
	censorOpts     = map[string]threshold.Censoring{"lower_bound": threshold.CensorLowerBound, "ignore": threshold.CensorIgnore}
	ceilingOpts    = map[string]threshold.Ceiling{"median": threshold.CeilingMedian, "none": threshold.CeilingNone}
	presetTPSValue = "tps_literal"
)

func option[T any](b *builder, pp fpath, key string, v *string, opts map[string]T, dst *T) {
	if v == nil {
		return
	}
	o, ok := opts[*v]
	if !ok {
		b.fail(pp.key(key), "unknown value %q (want %s)", *v, strings.Join(sortedKeys(opts), " or "))
		return
	}
	*dst = o
}

// p99 checks the explicit quantile-family settings and returns the config
// (zero fields take the hedging defaults) on top of base, the type's own
// defaults.
func (b *builder) p99(pp fpath, p *Policy, base threshold.P99DynamicConfig) (threshold.P99DynamicConfig, bool) {
	n0 := b.n // this entry's own errors are those past n0
	pc := base
	if p.Preset != nil {
		if *p.Preset != presetTPSValue {
			b.fail(pp.key("preset"), "unknown preset %q (want %q: TPS §4.2 as written)", *p.Preset, presetTPSValue)
			return pc, false
		}
		lit := threshold.TPSLiteral()
		pc.Initial, pc.Rounding, pc.ThinWindow, pc.Warmup, pc.Censoring, pc.Ceiling = lit.Initial, lit.Rounding, lit.ThinWindow, lit.Warmup, lit.Censoring, lit.Ceiling
	}
	option(b, pp, "rounding", p.Rounding, roundingOpts, &pc.Rounding)
	option(b, pp, "thin_window", p.ThinWindow, thinOpts, &pc.ThinWindow)
	option(b, pp, "warmup", p.Warmup, warmupOpts, &pc.Warmup)
	option(b, pp, "censored", p.Censored, censorOpts, &pc.Censoring)
	option(b, pp, "ceiling", p.Ceiling, ceilingOpts, &pc.Ceiling)
	if p.CeilingFactor != nil {
		pc.CeilingFactor = *p.CeilingFactor
		b.num(pp.key("ceiling_factor"), "policies.ceiling_factor", pc.CeilingFactor)
	}
	open01 := func(key string, v *float64, def float64) float64 {
		if v == nil {
			return def
		}
		b.num(pp.key(key), "policies."+key, *v)
		return *v
	}
	pos := func(key string, v *float64, def time.Duration) time.Duration {
		if v == nil {
			return def
		}
		return b.time(pp.key(key), "policies."+key, *v)
	}
	pc.Quantile = open01("quantile", p.Quantile, pc.Quantile)
	pc.RelativeAccuracy = open01("relative_accuracy", p.RelativeAccuracy, pc.RelativeAccuracy)
	pc.Window = pos("window_s", p.WindowS, pc.Window)
	if p.Buckets != nil {
		b.integer(pp.key("buckets"), "policies.buckets", int64(*p.Buckets))
		pc.Buckets = *p.Buckets
	}
	if p.Buckets != nil || p.WindowS != nil {
		d := pc.WithDefaults() // hedging/threshold's defaults, stated once there
		window, buckets := d.Window, d.Buckets
		if b.n == n0 && window/time.Duration(buckets) < time.Millisecond {
			b.fail(pp.key("window_s"), "window_s / buckets must be at least 1 ms, got %g s / %d", window.Seconds(), buckets)
		}
	}
	pc.Min = pos("min_ms", p.MinMs, pc.Min)
	pc.Max = pos("max_ms", p.MaxMs, pc.Max)
	if d := pc.WithDefaults(); b.n == n0 && d.Max < d.Min {
		lo := d.Min
		switch {
		case p.MaxMs != nil:
			b.fail(pp.key("max_ms"), "must be >= min_ms (%g), got %g", float64(lo)/1e6, *p.MaxMs)
		case p.CapMs != nil:
			b.fail(pp.key("cap_ms"), "must be >= min_ms (%g), got %g", float64(lo)/1e6, *p.CapMs)
		default:
			b.fail(pp.key("min_ms"), "must be <= max_ms (%g by default), got %g", float64(d.Max)/1e6, *p.MinMs)
		}
	}
	pc.Initial = pos("initial_ms", p.InitialMs, pc.Initial)
	if p.MinSamples != nil {
		b.integer(pp.key("min_samples"), "policies.min_samples", int64(*p.MinSamples))
		pc.MinSamples = *p.MinSamples
	}
	pc.Refresh = pos("refresh_s", p.RefreshS, pc.Refresh)
	if b.n > n0 {
		return pc, false
	}
	if err := pc.Validate(); err != nil { // backstop
		b.fail(pp, "%v", err)
		return pc, false
	}
	return pc, true
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

// RunLength estimates how long operations of scenario f arrive, built as
// cfg (its closed-loop think time): duration_s, or less when max_ops is
// reached first at rate_per_s or at clients per mean think time (the
// estimate the default timeline window and the background checks use;
// rate changes are not integrated).
func RunLength(f *File, cfg *simnet.Config) time.Duration {
	think := 0.0
	if cfg != nil && cfg.Workload.Think != nil {
		think = cfg.Workload.Think.Mean()
	}
	return runLength(f, think)
}

// BuildPolicies parses and builds [[policies]] entries given on their own,
// in the scenario file syntax (text names them source in errors), for a
// client whose request timeout is requestTimeout. It lets a study run one
// set of policies over many scenarios. Errors are *[Error] values naming
// source, line and field, as for a scenario file.
func BuildPolicies(source string, text []byte, requestTimeout time.Duration) ([]simnet.Policy, error) {
	if e := checkNesting(source, text); e != nil {
		return nil, e
	}
	var f File
	md, err := toml.Decode(string(text), &f)
	if err != nil {
		line, key, msg := decodeError(err)
		return nil, &Error{File: source, Line: line, Field: strings.Join(key, "."), Msg: msg}
	}
	loc := locate(text)
	if und := md.Undecoded(); len(und) > 0 {
		key := []string(und[0])
		return nil, &Error{File: source, Line: max(loc.line(key...), 1), Field: strings.Join(key, "."), Msg: "unknown field"}
	}
	b := &builder{src: source, loc: loc, f: &f}
	var root fpath
	if len(f.Policies) == 0 {
		b.fail(root.key("policies"), "at least one [[policies]] entry is required")
	}
	var pols []simnet.Policy
	seen := map[string]fpath{}
	for i := range f.Policies {
		pols = append(pols, b.policy(root.key("policies").elem(i, f.Policies[i].Name), &f.Policies[i], requestTimeout, seen))
	}
	if b.e != nil {
		return nil, joinErrors(b.errs)
	}
	return pols, nil
}

// backgroundLimit checks that the expected number of background arrivals
// (each source's rate_per_s × its arrival window × the replicas it
// targets, × replications × policies) is at most MaxSimulatedOps, the
// bound client operations have: each arrival is an event, so a huge
// rate_per_s would otherwise run for hours. The window of a source
// without end_s ends with the client's arrivals (runLength). It reports
// whether the check passed.
func (b *builder) backgroundLimit(cfg *simnet.Config, reps, pols int) bool {
	f := b.f
	var root fpath
	think := 0.0
	if cfg.Workload.Think != nil {
		think = cfg.Workload.Think.Mean()
	}
	length := runLength(f, think).Seconds()
	total, worst, worstOps := 0.0, -1, 0.0
	for i, g := range f.Background {
		ops := backgroundSource(g, cfg, length) * float64(reps) * float64(pols)
		total += ops
		if ops > worstOps {
			worst, worstOps = i, ops
		}
	}
	if total > MaxSimulatedOps {
		b.fail(root.key("background").elem(worst, "").key("rate_per_s"),
			"background sources would simulate %s requests (rate_per_s × arrival window × targeted replicas × %d replications × %d policies); the limit is %g: lower rate_per_s, the window, duration_s or replications",
			count(total), reps, pols, float64(MaxSimulatedOps))
		return false
	}
	return true
}

// MaxInstanceBuckets bounds fleet.instances × a policy's buckets: every
// instance keeps its own latency window of buckets sub-window sketches,
// about 0.6 KB per instance and bucket once used (measured: two
// 1000-bucket p99_dynamic policies run in parallel over ~2000 busy
// instances peaked at 2.4 GB), so 100000 instances × 1000 buckets could
// hold ~60 GB per policy; at the bound, ~0.6 GB.
const MaxInstanceBuckets = 1_000_000

// fleetBucketLimit checks fleet.instances × buckets against
// MaxInstanceBuckets for every policy that sets buckets, and reports
// whether the check passed.
func (b *builder) fleetBucketLimit() bool {
	f := b.f
	if f.Fleet.Instances == nil {
		return true
	}
	n := *f.Fleet.Instances
	var root fpath
	ok := true
	for i, p := range f.Policies {
		if p.Buckets != nil && n*(*p.Buckets) > MaxInstanceBuckets {
			b.fail(root.key("policies").elem(i, p.Name).key("buckets"),
				"fleet.instances (%d) × buckets (%d) = %d per-instance window sketches; the limit is %d (each instance keeps its own window): lower buckets or fleet.instances",
				n, *p.Buckets, n*(*p.Buckets), MaxInstanceBuckets)
			ok = false
		}
	}
	return ok
}

// count formats a number of operations or requests for a limit error: two
// significant digits, or "more than 1.8e+308" when the product overflowed
// (a rate of 1e308 read as "+Inf operations").
func count(n float64) string {
	if math.IsInf(n, 1) {
		return fmt.Sprintf("more than %.2g", math.MaxFloat64)
	}
	return fmt.Sprintf("%.2g", n)
}
