package scenarios

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"hedgelab/hedging"
	"hedgelab/internal/tomltree"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"
)

// Generate returns scenario index of seed in the space, as a TOML
// document: the same (space, seed, index) always gives the same document,
// whatever else was generated before. The scenario is named
// "fuzz-<seed>-<index>" and is meant to validate ([Parse]); a document that
// does not is a defect of the generator or of the validator (the fuzzer
// reports it). Its size is kept within the space's size.max_work (see
// space/default.toml). Errors: a space that lacks a key the generator
// needs (a layered space never does: the default has them all).
func (sp *Space) Generate(seed uint64, index int) (*tomltree.Table, error) {
	g := &gen{sp: sp, rng: rand.New(rand.NewPCG(seed, uint64(index)^0x9e3779b97f4a7c15))}
	t := g.scenario(fmt.Sprintf("fuzz-%d-%d", seed, index), seed, index)
	if g.err != nil {
		return nil, g.err
	}
	return t, nil
}

// gen is one scenario's generator state.
type gen struct {
	sp  *Space
	rng *rand.Rand
	err error

	// What later sections refer to.
	duration   float64 // duration_s
	clientReg  string
	regions    []string // physical replica regions, in order of first use
	replicas   []genReplica
	endpoints  []string // endpoint regions
	hubRegion  string
	partitions int
	kinds      []string // the mix's kinds
	feed       bool
	pollers    int
	closed     bool
	rate       float64 // the open loop's largest rate (per s)
	clients    int
	thinkMean  float64
	instances  int
}

// genReplica is one generated replica.
type genReplica struct {
	name, region string
	servers      int64
	queueLimit   int64
	meanMs       float64 // mean service time
}

func (g *gen) fail(format string, args ...any) {
	if g.err == nil {
		g.err = fmt.Errorf("scenarios: space %s: %s", g.sp.Source, fmt.Sprintf(format, args...))
	}
}

// p draws an event of probability [p] name.
func (g *gen) p(name string) bool {
	v, ok := g.sp.p[name]
	if !ok {
		g.fail("no p.%s", name)
	}
	return g.rng.Float64() < v
}

// count draws a list length from [count] name.
func (g *gen) count(name string) int {
	r, ok := g.sp.count[name]
	if !ok {
		g.fail("no count.%s", name)
		return 0
	}
	return int(r[0] + g.rng.Int64N(r[1]-r[0]+1))
}

// numRange returns the range of scenario key k.
func (g *gen) numRange(k string) (lo, hi float64) {
	r, ok := g.sp.nums[k]
	if !ok {
		g.fail("no fields.%q", k)
		return 0, 0
	}
	return r[0], r[1]
}

// draw draws a number in [lo, hi]: an end with probability edge, else
// log-uniform when the range spans more than a factor of 20 (with 0 a
// third of the time when lo is 0), else uniform.
func (g *gen) draw(lo, hi float64) float64 {
	switch u := g.rng.Float64(); {
	case lo == hi:
		return lo
	case u < g.sp.edge/2:
		return lo
	case u < g.sp.edge:
		return hi
	}
	if lo == 0 && hi >= 20 {
		if g.rng.IntN(3) == 0 {
			return 0
		}
		lo = hi / 1000
	}
	if lo > 0 && hi/lo > 20 {
		return math.Exp(math.Log(lo) + g.rng.Float64()*(math.Log(hi)-math.Log(lo)))
	}
	return lo + g.rng.Float64()*(hi-lo)
}

// round3 rounds v to 3 significant digits within [lo, hi].
func round3(v, lo, hi float64) float64 {
	if v == 0 {
		return 0
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	if r < lo || r > hi {
		return v
	}
	return r
}

// f draws a float value of scenario key k.
func (g *gen) f(k string) float64 {
	lo, hi := g.numRange(k)
	return round3(g.draw(lo, hi), lo, hi)
}

// fIn draws a float value of key k, further bounded to [lo, hi] (cross-key
// rules); the result stays inside the key's space range when the two
// meet, else it is the nearest end of [lo, hi].
func (g *gen) fIn(k string, lo, hi float64) float64 {
	a, b := g.numRange(k)
	lo, hi = max(lo, a), min(hi, b)
	if lo > hi {
		return lo
	}
	return round3(g.draw(lo, hi), lo, hi)
}

// i draws an integer value of scenario key k.
func (g *gen) i(k string) int64 {
	lo, hi := g.numRange(k)
	return g.iIn(int64(lo), int64(hi))
}

// iIn draws an integer in [lo, hi] (log-uniform over a wide range).
func (g *gen) iIn(lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	switch u := g.rng.Float64(); {
	case u < g.sp.edge/2:
		return lo
	case u < g.sp.edge:
		return hi
	}
	if lo >= 1 && hi/lo > 20 {
		return min(hi, max(lo, int64(math.Exp(math.Log(float64(lo))+g.rng.Float64()*(math.Log(float64(hi)+1)-math.Log(float64(lo)))))))
	}
	return lo + g.rng.Int64N(hi-lo+1)
}

// e picks a value of enum key k.
func (g *gen) e(k string) string {
	vals, ok := g.sp.enums[k]
	if !ok || len(vals) == 0 {
		g.fail("no fields.%q values", k)
		return ""
	}
	return vals[g.rng.IntN(len(vals))]
}

// pick picks one of list.
func pick[T any](g *gen, list []T) T {
	var zero T
	if len(list) == 0 {
		g.fail("an empty list")
		return zero
	}
	return list[g.rng.IntN(len(list))]
}

// param draws [dist] parameter name.
func (g *gen) param(name string) float64 {
	r, ok := g.sp.params[name]
	if !ok {
		g.fail("no dist.%q", name)
		return 1
	}
	return round3(g.draw(r[0], r[1]), r[0], r[1])
}

// scenario builds the whole document.
func (g *gen) scenario(name string, seed uint64, index int) *tomltree.Table {
	t := tomltree.New()
	t.Set("name", name)
	if g.p("description") {
		t.Set("description", fmt.Sprintf("generated by hedgesim fuzz: seed %d, scenario %d", seed, index))
	}
	t.Set("seed", g.i("seed"))
	g.duration = g.f("duration_s")
	t.Set("duration_s", g.duration)
	reps := int64(1)
	if g.p("replications") {
		reps = g.i("replications")
	}
	t.Set("replications", reps)
	if g.p("timeline_window_s") {
		t.Set("timeline_window_s", g.f("timeline_window_s"))
	}
	g.layout()
	g.partitions = 1
	if g.p("workload.partitions") {
		g.partitions = int(g.i("workload.partitions"))
	}
	g.feed = g.p("feed")
	client := t.Table("client")
	account := t.Table("account")
	g.client(client)
	g.account(account)
	g.endpointsAndReplicas(t)
	g.network(t.Table("network"))
	for range g.count("episodes") {
		g.episode(t.Append("episodes"))
	}
	w := tomltree.New()
	g.workload(w) // the mix is needed by faults and [ru]
	for range g.count("faults") {
		g.fault(t.Append("faults"))
	}
	for range g.count("background") {
		g.background(t.Append("background"))
	}
	t.Set("workload", w)
	g.ru(t)
	if g.p("fleet") {
		fl := t.Table("fleet")
		g.instances = int(g.i("fleet.instances"))
		fl.Set("instances", g.instances)
		if g.p("fleet.assignment") {
			fl.Set("assignment", g.e("fleet.assignment"))
		}
	}
	if g.feed {
		g.feedTable(t.Table("feed"))
		phase := int64(2)
		if g.p("feed_phase_1") {
			phase = 1
		}
		client.Set("phase", phase)
	}
	if g.p("lag") {
		g.lag(t.Table("lag"))
	}
	npol := g.count("policies")
	names := map[string]bool{}
	for k := range npol {
		g.policy(t.Append("policies"), k, names)
	}
	if client.Len() == 0 {
		t.Delete("client")
		t.Set("client", tomltree.New().Set("region", g.clientReg))
	}
	if account.Len() == 0 {
		t.Delete("account")
	}
	g.boundQueues(t)
	g.size(t, npol*int(reps))
	return t
}

// boundQueues gives a queue_limit to every replica with servers and no
// limit that the open loop's largest rate (all of it, at worst) and its
// background load could fill past 70%: its queue, and the run's memory,
// would otherwise grow for as long as the run lasts (the validator only
// warns; 2750 reads/s into one server held 5.8 GB).
func (g *gen) boundQueues(t *tomltree.Table) {
	if g.closed {
		return // at most clients requests wait
	}
	reps, _ := t.Get("replicas")
	bs, _ := t.Get("background")
	bgs, _ := bs.([]*tomltree.Table)
	for i, rt := range reps.([]*tomltree.Table) {
		r := &g.replicas[i]
		if r.servers == 0 || r.queueLimit > 0 {
			continue
		}
		load := g.rate * r.meanMs / 1000
		for _, b := range bgs {
			if tg, _ := b.Get("target"); tg == r.name || tg == r.region {
				rate, _ := b.Get("rate_per_s")
				load += rate.(float64) * r.meanMs / 1000
			}
		}
		if load > 0.7*float64(r.servers) {
			r.queueLimit = g.i("replicas.queue_limit")
			rt.Set("queue_limit", r.queueLimit)
		}
	}
}

// slug turns a region name into a replica name: "East US 2" -> "eastus2".
func slug(region string) string {
	return strings.ToLower(strings.ReplaceAll(region, " ", ""))
}

// layout draws the physical regions of the replicas and the client's.
func (g *gen) layout() {
	n := max(g.count("regions"), 1)
	perm := g.rng.Perm(len(g.sp.regions))
	for _, i := range perm[:min(n, len(perm))] {
		g.regions = append(g.regions, g.sp.regions[i])
	}
	g.clientReg = g.regions[0]
	if g.p("client_elsewhere") && len(perm) > n {
		g.clientReg = g.sp.regions[perm[n]]
	}
}

// client fills [client] (region and the hedging client's options).
func (g *gen) client(c *tomltree.Table) {
	c.Set("region", g.clientReg)
	for _, k := range []string{"client.request_timeout_ms", "client.operation_timeout_ms", "client.probe_interval_s",
		"client.unavailable_for_s", "client.retry_throttle_backoff_ms"} {
		if g.p(k) {
			c.Set(strings.TrimPrefix(k, "client."), g.f(k))
		}
	}
	if g.p("client.unavailable_after") {
		c.Set("unavailable_after", g.i("client.unavailable_after"))
	}
	if g.p("client.consecutive_hedge_win_threshold") {
		c.Set("consecutive_hedge_win_threshold", g.i("client.consecutive_hedge_win_threshold"))
	}
	if g.p("client.hedge_win_min_span_ms") {
		v := g.f("client.hedge_win_min_span_ms")
		if g.p("hedge_win_count_only") {
			v = -1
		}
		c.Set("hedge_win_min_span_ms", v)
	}
	if g.p("client.retry_max_attempts") {
		c.Set("retry_max_attempts", g.i("client.retry_max_attempts"))
	}
	if !g.feed && g.p("client.phase") {
		c.Set("phase", g.i("client.phase"))
	}
}

// account fills [account] after the endpoints are known (write_region is
// set by endpointsAndReplicas).
func (g *gen) account(a *tomltree.Table) {
	if g.p("account.multi_master") {
		a.Set("multi_master", true)
	}
	if g.p("account.consistency") {
		c := g.e("account.consistency")
		a.Set("consistency", c)
		if c == "bounded_staleness" {
			a.Set("staleness_bound_ms", g.f("account.staleness_bound_ms"))
		}
	}
}

// endpointsAndReplicas writes [[endpoints]] and [[replicas]].
func (g *gen) endpointsAndReplicas(t *tomltree.Table) {
	for _, r := range g.regions {
		g.replicas = append(g.replicas, genReplica{name: slug(r), region: r})
	}
	for range g.count("extra_replicas") {
		r := pick(g, g.regions)
		g.replicas = append(g.replicas, genReplica{name: slug(r) + "-b", region: r})
	}
	// Endpoints: every region's first replica, in a random order, the
	// client's region first when it has one (the usual preferred list).
	order := g.rng.Perm(len(g.regions))
	sort.SliceStable(order, func(i, j int) bool { return g.regions[order[i]] == g.clientReg && g.regions[order[j]] != g.clientReg })
	for _, i := range order {
		r := g.regions[i]
		ep := t.Append("endpoints")
		ep.Set("region", r).Set("replica", slug(r))
		g.endpoints = append(g.endpoints, r)
	}
	if g.p("alias_endpoint") {
		for _, r := range g.sp.regions {
			if !slices.Contains(g.regions, r) && r != g.clientReg {
				ep := t.Append("endpoints")
				ep.Set("region", r).Set("replica", pick(g, g.replicas).name)
				g.endpoints = append(g.endpoints, r)
				break
			}
		}
	}
	g.hubRegion = g.endpoints[0]
	if g.p("account.write_region") {
		w := pick(g, g.endpoints)
		if len(g.endpoints) > 1 {
			w = pick(g, g.endpoints[1:]) // a write region away from the primary: the primary lags
		}
		t.Table("account").Set("write_region", w)
		g.hubRegion = w
	}
	// The hub is the physical region of the write region's replica.
	eps, _ := t.Get("endpoints")
	for _, ep := range eps.([]*tomltree.Table) {
		if r, _ := ep.Get("region"); r == g.hubRegion {
			rep, _ := ep.Get("replica")
			for _, x := range g.replicas {
				if x.name == rep {
					g.hubRegion = x.region
				}
			}
		}
	}
	for i := range g.replicas {
		r := &g.replicas[i]
		rt := t.Append("replicas")
		rt.Set("name", r.name).Set("region", r.region)
		if g.p("replicas.servers") {
			r.servers = g.i("replicas.servers")
			rt.Set("servers", r.servers)
			if g.p("replicas.queue_limit") {
				r.queueLimit = g.i("replicas.queue_limit")
				rt.Set("queue_limit", r.queueLimit)
				if g.p("replicas.overflow_status") {
					rt.Set("overflow_status", g.e("replicas.overflow_status"))
				}
			}
		}
		if g.p("replicas.cancel") {
			rt.Set("cancel", g.e("replicas.cancel"))
		}
		spec := g.dist("service")
		r.meanMs = mean(spec)
		rt.Set("service", distTable(spec))
		for range g.count("service_by_op") {
			by := rt.Table("service_by_op")
			k := pick(g, slices.Concat(g.sp.reads, g.sp.writes))
			if _, dup := by.Get(k); !dup {
				by.Set(k, distTable(g.dist("service")))
			}
		}
	}
}

// network writes [network]: the RTTs from the embedded matrix between the
// client's region and every replica region, and between every replica
// region and the hub's.
func (g *gen) network(n *tomltree.Table) {
	if g.p("network.same_region_rtt_ms") {
		n.Set("same_region_rtt_ms", g.f("network.same_region_rtt_ms"))
	}
	if g.p("network.jitter") {
		n.Set("jitter", distTable(g.dist("jitter")))
	}
	rtt := n.Table("rtt_ms")
	pair := func(a, z string) {
		if a == z {
			return
		}
		if row, ok := rtt.Get(z); ok {
			if _, ok := row.(*tomltree.Table).Get(a); ok {
				return
			}
		}
		v, ok := g.sp.rtt[a][z]
		if !ok {
			g.fail("no RTT between %q and %q in the matrix", a, z)
			return
		}
		lo, hi := g.numRange("network.rtt_ms")
		rtt.Table(a).Set(z, math.Min(math.Max(v, lo), hi))
	}
	for _, r := range g.regions {
		pair(g.clientReg, r)
	}
	for _, r := range g.regions {
		pair(r, g.hubRegion)
	}
	if rtt.Len() == 0 {
		n.Delete("rtt_ms")
	}
	for _, r := range g.regions {
		if g.p("network.replication_lag_ms") {
			n.Table("replication_lag_ms").Set(r, g.f("network.replication_lag_ms"))
		}
	}
	if n.Len() == 0 {
		n.Set("same_region_rtt_ms", 1.0)
	}
}

// target picks a replica name or (sometimes) a physical region.
func (g *gen) target(regionP string) string {
	if g.p(regionP) {
		return pick(g, g.regions)
	}
	return pick(g, g.replicas).name
}

// window draws [start, end) inside the run's duration for keys pre.start_s
// and pre.end_s.
func (g *gen) window(pre string) (float64, float64) {
	start := g.fIn(pre+".start_s", 0, g.duration*0.9)
	end := g.fIn(pre+".end_s", start+0.1, g.duration*1.2)
	if !(end > start) {
		end = round3(start+0.5, start, math.Inf(1))
		if !(end > start) {
			end = start + 0.5
		}
	}
	return start, end
}

// episode fills one [[episodes]] entry.
func (g *gen) episode(e *tomltree.Table) {
	if g.p("episodes.label") {
		e.Set("label", "slow "+pick(g, g.regions))
	}
	e.Set("target", g.target("episodes.target_region"))
	start, end := g.window("episodes")
	e.Set("start_s", start).Set("end_s", end)
	if g.p("episodes.ramp") {
		up, down := g.f("episodes.ramp_up_s"), g.f("episodes.ramp_down_s")
		if w := end - start; up+down > w {
			up, down = floor3(up*w/(up+down)/1.01), floor3(down*w/(up+down)/1.01)
		}
		e.Set("ramp_up_s", up).Set("ramp_down_s", down)
	}
	if g.p("episodes.factor") {
		e.Set("factor", g.f("episodes.factor"))
	}
	if g.p("episodes.add_ms") {
		e.Set("add_ms", g.f("episodes.add_ms"))
	}
	if g.p("episodes.fraction") {
		e.Set("fraction", g.f("episodes.fraction"))
	}
	if g.p("episodes.fail_rate") {
		e.Set("fail_rate", g.f("episodes.fail_rate"))
		if g.p("episodes.fail_status") {
			k := pick(g, g.sp.kinds)
			e.Set("fail_status", k.status)
			if k.sub != 0 {
				e.Set("fail_substatus", k.sub)
			}
		}
	}
}

// floor3 rounds v down to 3 significant digits.
func floor3(v float64) float64 {
	if v <= 0 {
		return 0
	}
	e := math.Pow(10, math.Floor(math.Log10(v))-2)
	return math.Floor(v/e) * e
}

// fault fills one [[faults]] entry.
func (g *gen) fault(f *tomltree.Table) {
	k := pick(g, g.sp.kinds)
	f.Set("status", k.status)
	if k.sub != 0 {
		f.Set("substatus", k.sub)
	}
	f.Set("probability", g.f("faults.probability"))
	if n := g.count("fault_targets"); n > 0 {
		var ts []any
		for range n {
			t := g.target("episodes.target_region")
			if !slices.Contains(ts, any(t)) {
				ts = append(ts, t)
			}
		}
		f.Set("targets", ts)
	}
	if n := g.count("fault_operations"); n > 0 {
		var ops []any
		for range n {
			o := pick(g, slices.Concat(g.kinds, g.sp.reads))
			if !slices.Contains(ops, any(o)) {
				ops = append(ops, o)
			}
		}
		f.Set("operations", ops)
	}
	if g.p("faults.window") {
		start, end := g.window("faults")
		f.Set("start_s", start).Set("end_s", end)
	}
	if g.p("faults.latency_ms") {
		f.Set("latency_ms", g.f("faults.latency_ms"))
	}
	if g.p("faults.first_attempt_only") {
		f.Set("first_attempt_only", true)
	}
	if g.p("faults.partitions") {
		f.Set("partitions", g.partitionList())
	}
}

// partitionList draws a few distinct partition indexes.
func (g *gen) partitionList() []any {
	var ps []int64
	for range g.count("partitions_listed") {
		p := g.rng.Int64N(int64(g.partitions))
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	out := make([]any, len(ps))
	for i, p := range ps {
		out[i] = p
	}
	return out
}

// background fills one [[background]] entry, keeping a replica with
// servers and no queue_limit below its capacity (the validator refuses
// background load that alone fills one).
func (g *gen) background(b *tomltree.Table) {
	target := g.target("episodes.target_region")
	b.Set("target", target)
	var spec *dist.Spec
	if g.p("background.service") {
		spec = g.dist("service")
	}
	rate := g.f("background.rate_per_s")
	for _, r := range g.replicas {
		if (r.name == target || r.region == target) && r.servers > 0 && r.queueLimit == 0 {
			m := r.meanMs
			if spec != nil {
				m = mean(spec)
			}
			if limit := 0.3 * float64(r.servers) * 1000 / math.Max(m, 1e-3); rate > limit {
				rate = floor3(limit)
			}
		}
	}
	if rate <= 0 {
		rate = 0.1
	}
	b.Set("rate_per_s", rate)
	if spec != nil {
		b.Set("service", distTable(spec))
	}
	if g.p("background.window") {
		start, end := g.window("background")
		end = math.Min(end, g.duration)
		if !(end > start) {
			start, end = 0, g.duration
		}
		b.Set("start_s", start).Set("end_s", end)
	}
	if g.p("background.retries") {
		b.Set("retries", g.i("background.retries"))
		if g.p("background.retry_backoff_ms") {
			b.Set("retry_backoff_ms", g.f("background.retry_backoff_ms"))
		}
	}
}

// workload fills [workload]: the arrivals, the mix and the keys.
func (g *gen) workload(w *tomltree.Table) {
	g.closed = g.p("closed_loop")
	// At least 40 operations are expected, so the validator's check that
	// an operation arrives is skipped rather than drawn.
	if g.closed {
		g.clients = int(g.i("workload.clients"))
		w.Set("clients", g.clients)
		think := g.dist("think")
		g.thinkMean = mean(think)
		if need := 40 * g.thinkMean / 1000 / g.duration; float64(g.clients) < need {
			think = &dist.Spec{Family: "exponential", MeanMs: ptr(floor3(float64(g.clients) * g.duration * 1000 / 40))}
			g.thinkMean = mean(think)
		}
		w.Set("think", distTable(think))
	} else {
		g.rate = math.Max(g.f("workload.rate_per_s"), math.Ceil(40/g.duration))
		w.Set("rate_per_s", g.rate)
		at := 0.0
		for range g.count("rate_changes") {
			rc := w.Append("rate_changes")
			// A millisecond past the previous change's end: the validator
			// compares the two in nanoseconds.
			a := g.fIn("workload.rate_changes.at_s", at+1e-3, g.duration)
			if a < at+1e-3 {
				a = math.Ceil((at+1e-3)*1000) / 1000
			}
			ramp := 0.0
			if g.rng.IntN(2) == 0 {
				ramp = g.f("workload.rate_changes.ramp_s")
			}
			r := g.f("workload.rate_changes.rate_per_s")
			rc.Set("at_s", a).Set("ramp_s", ramp).Set("rate_per_s", r)
			g.rate = math.Max(g.rate, r)
			at = a + ramp
		}
		// Rate changes that cut the arrivals under 40 expected go, last
		// first (the validator would draw whether any arrives).
		for {
			v, ok := w.Get("rate_changes")
			list, _ := v.([]*tomltree.Table)
			if !ok || g.meanArrivals(w) >= 40 {
				break
			}
			if len(list) == 1 {
				w.Delete("rate_changes")
			} else {
				w.Set("rate_changes", list[:len(list)-1])
			}
		}
	}
	// The mix: reads (queries and ReadMany run as feeds with [feed]),
	// and writes sometimes.
	reads := g.sp.reads
	if g.feed {
		reads = slices.DeleteFunc(slices.Clone(reads), func(k string) bool { return k == hedging.ChangeFeedPage.String() })
	}
	n := max(g.count("mix"), 1)
	mix := tomltree.New()
	if g.feed {
		k := pick(g, []string{"query", "read_many", "query"})
		mix.Set(k, g.f("workload.mix"))
		g.kinds = append(g.kinds, k)
	}
	for range n {
		k := pick(g, reads)
		if g.p("writes") {
			k = pick(g, g.sp.writes)
		}
		if _, dup := mix.Get(k); !dup {
			mix.Set(k, g.f("workload.mix"))
			g.kinds = append(g.kinds, k)
		}
	}
	if !(mix.Len() == 1 && g.kinds[0] == "read") {
		w.Set("mix", mix)
	}
	if g.partitions > 1 {
		w.Set("partitions", g.partitions)
		if g.p("workload.zipf_s") {
			w.Set("zipf_s", g.f("workload.zipf_s"))
		}
	}
	if g.p("workload.exclude_fraction") {
		w.Set("exclude_fraction", g.f("workload.exclude_fraction"))
		var ex []any
		for range max(g.count("exclude_regions"), 1) {
			r := pick(g, g.endpoints)
			if !slices.Contains(ex, any(r)) {
				ex = append(ex, r)
			}
		}
		w.Set("exclude_regions", ex)
	}
	if g.p("workload.disabled_fraction") {
		w.Set("disabled_fraction", g.f("workload.disabled_fraction"))
	}
}

// meanArrivals is the expected arrivals of the open loop in w over the
// run (simnet's integral of the rate).
func (g *gen) meanArrivals(w *tomltree.Table) float64 {
	rate, _ := w.Get("rate_per_s")
	wl := simnet.Workload{RatePerSec: rate.(float64)}
	v, _ := w.Get("rate_changes")
	list, _ := v.([]*tomltree.Table)
	for _, c := range list {
		at, _ := c.Get("at_s")
		ramp, _ := c.Get("ramp_s")
		r, _ := c.Get("rate_per_s")
		wl.RateChanges = append(wl.RateChanges, simnet.RateChange{At: time.Duration(at.(float64) * 1e9),
			Ramp: time.Duration(ramp.(float64) * 1e9), RatePerSec: r.(float64)})
	}
	return wl.MeanArrivals(time.Duration(g.duration * 1e9))
}

// ru writes [ru], [ru_budget] and [throughput_control].
func (g *gen) ru(t *tomltree.Table) {
	for range g.count("ru") {
		k := pick(g, g.kinds)
		t.Table("ru").Set(k, g.f("ru"))
	}
	for _, name := range []string{"ru_budget", "throughput_control"} {
		if g.p(name) {
			b := t.Table(name)
			b.Set("ru_per_s", g.f(name+".ru_per_s"))
			if g.rng.IntN(2) == 0 {
				b.Set("burst", g.f(name+".burst"))
			}
		}
	}
}

// feedTable fills [feed].
func (g *gen) feedTable(f *tomltree.Table) {
	maxPages := int64(1000)
	if g.p("feed.max_pages") {
		maxPages = g.i("feed.max_pages")
		f.Set("max_pages", maxPages)
	}
	if g.p("feed.pages_dist") {
		f.Set("pages_dist", distTable(g.dist("pages")))
	} else {
		lo, hi := g.numRange("feed.pages")
		f.Set("pages", g.iIn(int64(lo), min(int64(hi), maxPages)))
	}
	if g.p("feed.items_per_page") {
		f.Set("items_per_page", g.i("feed.items_per_page"))
	}
	if g.p("feed.ru_cover") {
		f.Set("ru_cover", g.f("feed.ru_cover")).Set("ru_per_item", g.f("feed.ru_per_item"))
	}
	capFan := int64(100)
	if g.p("feed.max_fan_out") {
		capFan = g.i("feed.max_fan_out")
		f.Set("max_fan_out", capFan)
	}
	if g.p("feed.fan_out") {
		lo, hi := g.numRange("feed.fan_out")
		f.Set("fan_out", g.iIn(int64(lo), min(int64(hi), int64(g.partitions), capFan)))
	}
	if g.p("feed.max_concurrency") {
		f.Set("max_concurrency", g.i("feed.max_concurrency"))
	}
	if g.p("feed.read_many_items") {
		lo, hi := g.numRange("feed.read_many_items")
		// min(ids, partitions) leaves (+ ids/1000) must fit max_fan_out.
		if int64(g.partitions) > capFan {
			hi = min(hi, float64(capFan))
		}
		f.Set("read_many_items", g.iIn(int64(lo), int64(hi)))
	} else if int64(min(10, g.partitions)) > capFan {
		f.Set("read_many_items", capFan)
	}
	for _, k := range []string{"feed.query_continuation", "feed.hedge_unit"} {
		if g.p(k) {
			f.Set(strings.TrimPrefix(k, "feed."), g.e(k))
		}
	}
	if g.p("feed.gate_capacity") {
		f.Set("gate_capacity", g.i("feed.gate_capacity"))
	}
	for range g.count("affinity") {
		k := pick(g, []string{"query", "read_many", "change_feed", "metadata_read"})
		f.Table("affinity").Set(k, g.e("feed.affinity"))
	}
	if g.p("change_feed") {
		c := f.Table("change_feed")
		g.pollers = int(g.i("feed.change_feed.pollers"))
		// A poll's leaves (partitions / pollers) must fit max_fan_out.
		g.pollers = max(g.pollers, (g.partitions+int(capFan)-1)/int(capFan))
		c.Set("pollers", g.pollers).Set("poll_interval_ms", g.f("feed.change_feed.poll_interval_ms"))
		if g.p("feed.change_feed.scope") {
			s := g.e("feed.change_feed.scope")
			c.Set("scope", s)
			if s == "region_local" && g.p("feed.change_feed.region_offset") {
				c.Set("region_offset", g.i("feed.change_feed.region_offset"))
			}
		}
		for _, k := range []string{"feed.change_feed.on_304", "feed.change_feed.continuation"} {
			if g.p(k) {
				c.Set(strings.TrimPrefix(k, "feed.change_feed."), g.e(k))
			}
		}
	}
	if g.p("feed.setup") {
		s := f.Table("setup")
		for _, k := range []string{"collection", "pk_ranges", "query_plan"} {
			if g.rng.IntN(3) > 0 {
				s.Set(k, true)
			}
		}
		if g.p("feed.setup.metadata_budget") {
			s.Set("metadata_budget", g.i("feed.setup.metadata_budget"))
		}
		for range g.count("metadata_lag") {
			s.Table("metadata_lag_ms").Set(pick(g, g.regions), g.f("feed.setup.metadata_lag_ms"))
		}
		if g.p("feed.setup.metadata_choice") {
			c := g.e("feed.setup.metadata_choice")
			s.Set("metadata_choice", c)
			if c == "latest" && g.p("feed.setup.metadata_grace_ms") {
				s.Set("metadata_grace_ms", g.f("feed.setup.metadata_grace_ms"))
			}
		}
		for range g.count("metadata_events") {
			ev := s.Append("events")
			ev.Set("at_s", g.fIn("feed.setup.events.at_s", 0, g.duration)).Set("kind", g.e("feed.setup.events.kind"))
		}
	}
}

// primaryReplica is the replica of the first endpoint (what reads see
// first).
func (g *gen) primaryReplica(*tomltree.Table) string {
	for _, r := range g.replicas {
		if r.region == g.endpoints[0] {
			return r.name
		}
	}
	return g.replicas[0].name
}

// lag fills [lag].
func (g *gen) lag(l *tomltree.Table) {
	l.Set("sigma", g.f("lag.sigma"))
	for range g.count("lag_episodes") {
		e := l.Append("episodes")
		if g.p("lag.episodes.target_primary") {
			e.Set("target", g.primaryReplica(l))
		} else {
			e.Set("target", g.target("episodes.target_region"))
		}
		if g.rng.IntN(2) == 0 {
			e.Set("partitions", g.partitionList())
		}
		start, end := g.window("lag.episodes")
		e.Set("start_s", start).Set("end_s", end).Set("lag_ms", g.f("lag.episodes.lag_ms"))
	}
}

// policy fills one [[policies]] entry, with the keys its type takes
// (policyTypes).
func (g *gen) policy(p *tomltree.Table, k int, names map[string]bool) {
	typ := pick(g, g.sp.policies)
	if k == 0 && g.p("policy_disabled") {
		typ = "disabled"
	}
	name := strings.ReplaceAll(typ, "_", "-")
	for i := 2; names[name]; i++ {
		name = fmt.Sprintf("%s-%d", strings.ReplaceAll(typ, "_", "-"), i)
	}
	names[name] = true
	p.Set("name", name).Set("type", typ)
	i := slices.IndexFunc(policyTypes, func(t policyType) bool { return t.name == typ })
	if i < 0 {
		g.fail("unknown policy type %q", typ)
		return
	}
	keys := policyTypes[i].keys
	has := func(k string) bool { return slices.Contains(keys, k) }
	if has("threshold_ms") {
		p.Set("threshold_ms", g.f("policies.threshold_ms"))
	}
	minMs := 50.0
	if typ == "backup_requests" {
		minMs = 1
	}
	if has("cap_ms") {
		c := g.f("policies.cap_ms")
		p.Set("cap_ms", c)
		minMs = math.Min(minMs, c)
		p.Set("min_ms", g.fIn("policies.min_ms", 0, c))
	}
	if has("preset") && g.p("policies.preset") {
		p.Set("preset", g.e("policies.preset"))
	}
	for _, q := range []string{"quantile", "window_s", "buckets", "min_ms", "max_ms", "initial_ms", "min_samples",
		"refresh_s", "relative_accuracy", "rounding", "thin_window", "warmup", "censored", "ceiling", "ceiling_factor",
		"max_extra_load", "min_backups_per_s", "max_tokens", "token_ratio"} {
		if !has(q) || !g.p("policies.quantile_key") {
			continue
		}
		if _, set := p.Get(q); set {
			continue
		}
		fk := "policies." + q
		switch fieldOf(fk).kind {
		case kEnum:
			p.Set(q, g.e(fk))
		case kInt:
			p.Set(q, g.i(fk))
		default:
			p.Set(q, g.f(fk))
		}
	}
	// min_ms <= max_ms (max defaults to 4000), and cap_ms >= min_ms.
	lo, hasLo := p.Get("min_ms")
	if hi, hasHi := p.Get("max_ms"); hasLo && hasHi && lo.(float64) > hi.(float64) {
		p.Set("max_ms", lo)
	}
	if !hasLo && has("max_ms") {
		if hi, ok := p.Get("max_ms"); ok && hi.(float64) < minMs {
			p.Set("max_ms", minMs)
		}
	}
	if has("hedge_budget") && g.p("policies.hedge_budget") {
		p.Set("hedge_budget", g.f("policies.hedge_budget"))
		switch {
		case g.p("policies.hedge_budget_burst_s"):
			p.Set("hedge_budget_burst_s", g.f("policies.hedge_budget_burst_s"))
		case g.p("policies.hedge_budget_burst"):
			p.Set("hedge_budget_burst", g.f("policies.hedge_budget_burst"))
		}
		for _, b := range []string{"hedge_budget_charge_failover", "hedge_budget_debt"} {
			if g.p("policies." + b) {
				p.Set(b, true)
			}
		}
	}
	if typ == "backup_requests" && g.p("policies.hedge_budget_burst") {
		p.Set("hedge_budget_burst", g.f("policies.backup_requests.hedge_budget_burst"))
	}
}

// size keeps the scenario's expected work (see space/default.toml) under
// size.max_work by setting max_ops, and sometimes sets it anyway.
// runs is policies × replications.
func (g *gen) size(t *tomltree.Table, runs int) {
	budget, ok := g.sp.size["max_work"]
	minOps, ok2 := g.sp.size["min_ops"]
	if !ok || !ok2 {
		g.fail("no size.max_work or size.min_ops")
		return
	}
	ops := g.duration * g.rate
	if g.closed {
		ops = float64(g.clients) * g.duration * 1000 / math.Max(g.thinkMean, 1e-3)
	}
	perOp := g.racesPerOp(t)
	// Work that follows the run's length (polls, background load) scales
	// with max_ops as the run's arrivals stop.
	per := ops*perOp + g.pollWork(t) + g.backgroundWork(t)
	limit := budget / float64(runs)
	if g.p("max_ops") {
		limit = math.Min(limit, g.f("max_ops")*per/math.Max(ops, 1))
	}
	if per > limit {
		n := max(int64(minOps), int64(ops*limit/per))
		t.Set("max_ops", n)
		t.Set("replications", int64(1)) // the cheapest way to stay small
	}
	// The top-level keys in the README's order.
	order := []string{"name", "description", "seed", "duration_s", "max_ops", "replications", "timeline_window_s"}
	rest := t.Keys()
	moved := tomltree.New()
	for _, k := range order {
		if v, ok := t.Get(k); ok {
			moved.Set(k, v)
		}
	}
	for _, k := range rest {
		if !slices.Contains(order, k) {
			v, _ := t.Get(k)
			moved.Set(k, v)
		}
	}
	*t = *moved
}

// racesPerOp estimates the races (pages, setup reads) per operation.
func (g *gen) racesPerOp(t *tomltree.Table) float64 {
	if !g.feed {
		return 1
	}
	f := t.Table("feed")
	fan := int64(1)
	if v, ok := f.Get("fan_out"); ok {
		fan = v.(int64)
	}
	pages := 5.0 // a pages_dist's mean is at most about this (dist.pages.mean)
	if v, ok := f.Get("pages"); ok {
		pages = float64(v.(int64))
	}
	items := int64(10)
	if v, ok := f.Get("read_many_items"); ok {
		items = v.(int64)
	}
	return math.Max(float64(fan)*pages, float64(min(items, int64(g.partitions)))) + 3
}

// pollWork estimates the change-feed pages of a run.
func (g *gen) pollWork(t *tomltree.Table) float64 {
	if g.pollers == 0 {
		return 0
	}
	c := t.Table("feed").Table("change_feed")
	iv, _ := c.Get("poll_interval_ms")
	polls := float64(g.pollers) * g.duration * 1000 / iv.(float64)
	leaves := math.Ceil(float64(g.partitions) / float64(g.pollers))
	return polls * leaves * 2
}

// backgroundWork estimates the background requests of a run.
func (g *gen) backgroundWork(t *tomltree.Table) float64 {
	bs, _ := t.Get("background")
	list, _ := bs.([]*tomltree.Table)
	w := 0.0
	for _, b := range list {
		r, _ := b.Get("rate_per_s")
		tg, _ := b.Get("target")
		n := 0
		for _, x := range g.replicas {
			if x.name == tg || x.region == tg {
				n++
			}
		}
		w += r.(float64) * g.duration * float64(n)
	}
	return w
}

// dist draws a distribution of kind (service, think, jitter, pages) from
// the space's families and parameter ranges; every spec it returns builds.
func (g *gen) dist(kind string) *dist.Spec {
	fams, ok := g.sp.dists[kind]
	if !ok {
		g.fail("no dist.%s", kind)
		return &dist.Spec{Family: "constant", ValueMs: ptr(1.0)}
	}
	fam := pick(g, fams)
	switch kind {
	case "think":
		m := g.param("think.mean_ms")
		switch fam {
		case "constant":
			return &dist.Spec{Family: fam, ValueMs: ptr(m)}
		case "uniform":
			return &dist.Spec{Family: fam, MinMs: ptr(floor3(m / 2)), MaxMs: ptr(round3(m*1.5, 0, math.Inf(1)))}
		case "lognormal":
			return &dist.Spec{Family: fam, MedianMs: ptr(m), P99Ms: ptr(round3(m*3, 0, math.Inf(1)))}
		}
		return &dist.Spec{Family: "exponential", MeanMs: ptr(m)}
	case "jitter":
		m := g.param("jitter.mean_ms")
		switch fam {
		case "uniform":
			return &dist.Spec{Family: fam, MinMs: ptr(0.0), MaxMs: ptr(round3(2*m, 0, math.Inf(1)))}
		case "lognormal":
			return &dist.Spec{Family: fam, MedianMs: ptr(m), P99Ms: ptr(round3(m*4, 0, math.Inf(1)))}
		}
		return &dist.Spec{Family: "exponential", MeanMs: ptr(m)}
	case "pages":
		m := g.param("pages.mean")
		switch fam {
		case "uniform":
			return &dist.Spec{Family: fam, MinMs: ptr(1.0), MaxMs: ptr(round3(2*m, 0, math.Inf(1)))}
		case "constant":
			return &dist.Spec{Family: fam, ValueMs: ptr(m)}
		case "empirical":
			return &dist.Spec{Family: fam, Quantiles: [][2]float64{{0, 1}, {0.5, m}, {1, round3(3*m, 0, math.Inf(1))}}}
		}
		return &dist.Spec{Family: "exponential", MeanMs: ptr(m)}
	}
	return g.service(fam, true)
}

// service draws a service-time distribution of family fam (a mixture's
// components when top is set: a body and a slow tail).
func (g *gen) service(fam string, top bool) *dist.Spec {
	s := &dist.Spec{Family: fam}
	switch fam {
	case "lognormal":
		med := g.param("lognormal.median_ms")
		if g.rng.IntN(4) == 0 {
			s.Mu, s.Sigma = ptr(round3(math.Log(med), -100, 100)), ptr(g.param("lognormal.sigma"))
		} else {
			s.MedianMs, s.P99Ms = ptr(med), ptr(round3(med*g.param("lognormal.p99_ratio"), med, math.Inf(1)))
			if !(*s.P99Ms > med) {
				s.P99Ms = ptr(med * 2)
			}
		}
		if g.rng.IntN(4) == 0 {
			s.OffsetMs = ptr(g.param("lognormal.offset_ms"))
		}
	case "gamma", "weibull":
		s.Shape, s.ScaleMs = ptr(g.param(fam+".shape")), ptr(g.param(fam+".scale_ms"))
	case "exponential":
		s.MeanMs = ptr(g.param("exponential.mean_ms"))
	case "normal":
		s.MeanMs, s.StddevMs = ptr(g.param("normal.mean_ms")), ptr(g.param("normal.stddev_ms"))
	case "uniform":
		lo := g.param("uniform.min_ms")
		s.MinMs, s.MaxMs = ptr(lo), ptr(round3(lo+g.param("uniform.span_ms"), lo, math.Inf(1)))
	case "constant":
		s.ValueMs = ptr(g.param("constant.value_ms"))
	case "pareto":
		s.XmMs, s.Alpha = ptr(g.param("pareto.xm_ms")), ptr(g.param("pareto.alpha"))
	case "empirical":
		n := max(g.count("empirical"), 2)
		top := g.param("empirical.max_ms")
		var qs [][2]float64
		for i := range n {
			q := float64(i) / float64(n-1)
			if i == n-1 {
				q = 1
			} else if i > 0 {
				q = round3(1-math.Pow(10, -float64(i)), 0, 1)
			}
			v := round3(0.5*math.Pow(top/0.5, float64(i)/float64(n-1)), 0, math.Inf(1))
			if len(qs) > 0 && (q <= qs[len(qs)-1][0] || v < qs[len(qs)-1][1]) {
				continue
			}
			qs = append(qs, [2]float64{q, v})
		}
		if qs[0][0] != 0 {
			qs = append([][2]float64{{0, qs[0][1]}}, qs...)
		}
		if qs[len(qs)-1][0] != 1 {
			qs = append(qs, [2]float64{1, qs[len(qs)-1][1] * 2})
		}
		s.Quantiles = qs
	case "mixture":
		if !top {
			return g.service("lognormal", false)
		}
		n := max(g.count("components"), 2)
		tw := g.param("tail.weight")
		body := g.service(pick(g, []string{"lognormal", "gamma", "weibull", "exponential"}), false)
		s.Components = append(s.Components, dist.Component{Weight: round3(1-tw*float64(n-1), 0, 1), Spec: *body})
		for range n - 1 {
			var tail *dist.Spec
			switch pick(g, g.sp.dists["tail"]) {
			case "pareto":
				tail = &dist.Spec{Family: "pareto", XmMs: ptr(g.param("tail.min_ms")), Alpha: ptr(g.param("pareto.alpha"))}
			case "uniform":
				lo := g.param("tail.min_ms")
				tail = &dist.Spec{Family: "uniform", MinMs: ptr(lo), MaxMs: ptr(round3(lo*3, lo, math.Inf(1)))}
			default:
				m := g.param("tail.min_ms")
				tail = &dist.Spec{Family: "lognormal", MedianMs: ptr(m), P99Ms: ptr(round3(m*3, m, math.Inf(1)))}
			}
			s.Components = append(s.Components, dist.Component{Weight: tw, Spec: *tail})
		}
	default:
		g.fail("unknown service family %q", fam)
		return &dist.Spec{Family: "constant", ValueMs: ptr(1.0)}
	}
	if _, err := s.Build(); err != nil {
		g.fail("generated %s spec does not build: %v", fam, err)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// mean returns a spec's mean in ms (the generator's specs build).
func mean(s *dist.Spec) float64 {
	d, err := s.Build()
	if err != nil {
		return 1
	}
	m := d.Mean()
	if math.IsInf(m, 0) || math.IsNaN(m) {
		return 1000
	}
	return m
}

// distTable writes a spec as a table (its keys in dist.Spec's order).
func distTable(s *dist.Spec) *tomltree.Table {
	t := tomltree.New().Set("family", s.Family)
	for _, kv := range []struct {
		k string
		v *float64
	}{{"value_ms", s.ValueMs}, {"min_ms", s.MinMs}, {"max_ms", s.MaxMs}, {"mean_ms", s.MeanMs}, {"stddev_ms", s.StddevMs},
		{"median_ms", s.MedianMs}, {"p99_ms", s.P99Ms}, {"mu", s.Mu}, {"sigma", s.Sigma}, {"shape", s.Shape},
		{"scale_ms", s.ScaleMs}, {"xm_ms", s.XmMs}, {"alpha", s.Alpha}, {"offset_ms", s.OffsetMs}} {
		if kv.v != nil {
			t.Set(kv.k, *kv.v)
		}
	}
	if len(s.Quantiles) > 0 {
		qs := make([]any, len(s.Quantiles))
		for i, q := range s.Quantiles {
			qs[i] = []any{q[0], q[1]}
		}
		t.Set("quantiles", qs)
	}
	for _, c := range s.Components {
		ct := distTable(&c.Spec)
		e := tomltree.New().Set("weight", c.Weight)
		for _, k := range ct.Keys() {
			v, _ := ct.Get(k)
			e.Set(k, v)
		}
		t.Set("components", append(componentsOf(t), e))
	}
	return t
}

func componentsOf(t *tomltree.Table) []*tomltree.Table {
	v, _ := t.Get("components")
	c, _ := v.([]*tomltree.Table)
	return c
}
