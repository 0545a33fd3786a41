package main

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"hedgelab/hedging"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

var (
	q7N      = []float64{1, 2, 3, 5, 8, 10, 15, 20}
	q7Probes = []float64{10, 30, 60}
)

// breakerRun is the outcome of one breaker configuration on one scenario,
// over all replications.
type breakerRun struct {
	trips      int64
	hours      float64 // virtual hours simulated (all replications)
	tripped    int     // partitions that tripped during the episode
	partitions int     // partitions × replications
	meanTTR    float64 // mean seconds from episode start to a partition's first trip
	p99, ru    float64
	// pairs counts the (instance, partition) pairs that ran an operation
	// during the episode, summed over replications; pairsTripped those
	// that tripped during the episode and medianTTR the median seconds
	// from the episode start to a pair's first trip, untripped pairs
	// counting as never (+Inf when fewer than half tripped).
	pairs, pairsTripped int
	medianTTR           float64
	// routed is the share of the episode's operations (by start time)
	// whose primary attempt went to another replica than the episode's
	// target: sent straight to the alternate by a tripped breaker;
	// epMeanMs their mean latency.
	routed, epMeanMs float64
}

// breakerOpts is one breaker configuration: threshold n and probe
// interval probe (s); instances > 1 runs a fleet (assignment partition
// when byPartition); durationS and reps, when > 0, replace the scenario's
// duration and replications.
type breakerOpts struct {
	n, probe    float64
	instances   int
	byPartition bool
	durationS   float64
	reps        int
}

// runBreaker runs scenario name with the breaker configuration o under
// policy pol and measures trips and the time to route away from the
// primary after the first episode starts (if any).
func runBreaker(name string, pol simnet.Policy, o breakerOpts, parallel int) (breakerRun, error) {
	s, err := scenarios.Get(name)
	if err != nil {
		return breakerRun{}, err
	}
	params := [][2]any{{"client.consecutive_hedge_win_threshold", o.n}, {"client.probe_interval_s", o.probe}}
	if o.instances > 1 {
		params = append(params, [2]any{"fleet.instances", float64(o.instances)})
	}
	if o.durationS > 0 {
		params = append(params, [2]any{"duration_s", o.durationS})
	}
	for _, kv := range params {
		if s, err = s.WithParam(kv[0].(string), kv[1].(float64)); err != nil {
			return breakerRun{}, err
		}
	}
	reps := s.Replications
	if o.reps > 0 {
		reps = o.reps
	}
	cfg, _, err := s.Config()
	if err != nil {
		return breakerRun{}, err
	}
	if o.byPartition {
		cfg.Fleet.Assignment = simnet.AssignPartition
	}
	epStart, epEnd, target := time.Duration(-1), time.Duration(0), ""
	if len(cfg.Episodes) > 0 {
		epStart, epEnd, target = cfg.Episodes[0].Start, cfg.Episodes[0].End, cfg.Episodes[0].Target
	}
	parts := max(cfg.Workload.Partitions, 1)
	type repOut struct {
		st              *simnet.Stats
		first           map[string]time.Duration // by partition (first trip of any instance)
		pairFirst       map[[2]int]time.Duration // by (instance, partition)
		pairSeen        map[[2]int]bool          // pairs with an operation in the episode
		epOps, epRouted int64
		epLat           time.Duration
		err             error
	}
	outs := make([]repOut, reps)
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(parallel, 1))
	for rep := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out := repOut{first: map[string]time.Duration{}, pairFirst: map[[2]int]time.Duration{}, pairSeen: map[[2]int]bool{}}
			out.st, out.err = simnet.Run(cfg, pol, rep, simnet.RunOptions{OnCompleteInstance: func(inst int, r *hedging.Race, op *hedging.Operation) {
				if epStart < 0 {
					return
				}
				part, _ := strconv.Atoi(op.Partition)
				k := [2]int{inst, part}
				if r.Start() >= epStart && r.Start() < epEnd {
					out.epOps++
					out.epLat += r.DoneAt() - r.Start()
					out.pairSeen[k] = true
					if r.Endpoint(hedging.Primary).Key != target {
						out.epRouted++
					}
				}
				if r.TrippedBreaker() && r.DoneAt() >= epStart && r.DoneAt() < epEnd {
					if _, ok := out.first[op.Partition]; !ok {
						out.first[op.Partition] = r.DoneAt() - epStart
					}
					if out.pairFirst[k] == 0 {
						out.pairFirst[k] = r.DoneAt() - epStart + 1 // +1 ns: 0 means none
					}
				}
			}})
			outs[rep] = out
		}()
	}
	wg.Wait()
	var out breakerRun
	merged := &simnet.Stats{Latency: simnet.NewLatencyHistogram()}
	sum := 0.0
	var ttrs []float64
	var epOps, epRouted int64
	var epLat time.Duration
	for _, o := range outs {
		if o.err != nil {
			return out, o.err
		}
		merged.Merge(o.st)
		out.trips += o.st.BreakerTrips
		out.hours += o.st.End.Hours()
		out.partitions += parts
		out.pairs += len(o.pairSeen)
		epOps += o.epOps
		epRouted += o.epRouted
		epLat += o.epLat
		keys := make([]string, 0, len(o.first))
		for k := range o.first {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sum += o.first[k].Seconds()
			out.tripped++
		}
		for _, t := range o.pairFirst {
			ttrs = append(ttrs, (t - 1).Seconds())
		}
	}
	out.pairsTripped = len(ttrs)
	sort.Float64s(ttrs)
	out.medianTTR = math.Inf(1)
	if half := (out.pairs + 1) / 2; out.pairs > 0 && len(ttrs) >= half {
		out.medianTTR = ttrs[half-1]
	}
	if out.tripped > 0 {
		out.meanTTR = sum / float64(out.tripped)
	}
	if epOps > 0 {
		out.routed = float64(epRouted) / float64(epOps)
		out.epMeanMs = epLat.Seconds() * 1000 / float64(epOps)
	}
	out.p99 = merged.QuantileMs(0.99)
	out.ru = merged.RUMultiplier()
	return out, nil
}

// q7Fleets are the fleet sizes of the N sweep; q7FleetHours the virtual
// hours of fleet time each false-trip scenario runs per fleet size (in
// q7FalseReps replications), so that zero false trips bounds the rate
// below 1 per instance-hour (rule of three: 3 / instance-hours).
var (
	q7Fleets     = []int{1, 10, 100}
	q7FleetHours = map[int]float64{1: 4, 10: 1, 100: 0.5}
)

const q7FalseReps = 4

// falseTrips formats trips per instance-hour over instHours, with the
// 95% upper bound of the rule of three when there were none.
func falseTrips(trips int64, instHours float64) string {
	if trips == 0 {
		return fmt.Sprintf("0 (< %.2g)", 3/instHours)
	}
	return fmt.Sprintf("%.2f", float64(trips)/instHours)
}

// fleetName is "one client" or "N instances".
func fleetName(f int) string {
	if f == 1 {
		return "one client"
	}
	return fmt.Sprintf("%d instances", f)
}

// round1 rounds to one decimal, as ttr prints, so that differences of
// printed values add up.
func round1(v float64) float64 { return math.Round(v*10) / 10 }

// ttr formats a median time to route away; +Inf (fewer than half of the
// pairs tripped during the episode) as "> episode".
func ttr(v, episodeS float64) string {
	if math.IsInf(v, 1) {
		return fmt.Sprintf("> %g", episodeS)
	}
	return fmt.Sprintf("%.1f", v)
}

func q7(d *doc) error {
	const chronic, jitter, heavy = "breaker-trip", "healthy", "heavy-tail"
	d.p("**Question.** After how many consecutive alternate-region wins N on one (partition, primary region) should the partition circuit breaker mark the primary unhealthy and route reads away (§9.5, §17 Q7)? And how long should the probe interval before failback be? A low N routes away from a chronically slow primary quickly; a high N avoids false trips when healthy jitter lets the alternate win now and then. Every application instance keeps its own breaker, so in a fleet each breaker sees only its instance's share of a partition's reads.")
	seeds := []string{}
	var chronicCfg *simnet.Config
	for _, name := range []string{chronic, jitter, heavy} {
		sc, err := scenarios.Get(name)
		if err != nil {
			return err
		}
		cfg, _, err := sc.Config()
		if err != nil {
			return err
		}
		if name == chronic {
			chronicCfg = cfg
		}
		seeds = append(seeds, fmt.Sprintf("`%s` seed %d × %d replications × %s", name, cfg.Seed, sc.Replications, cfg.Duration))
	}
	ep := chronicCfg.Episodes[0]
	epS := (ep.End - ep.Start).Seconds()
	rate, parts := chronicCfg.Workload.RatePerSec, max(chronicCfg.Workload.Partitions, 1)
	var hoursNote []string
	for _, f := range q7Fleets {
		hoursNote = append(hoursNote, fmt.Sprintf("%g h for %s (%g instance-hours: zero trips bound the rate below %.2g per instance-hour)",
			q7FleetHours[f], fleetName(f), q7FleetHours[f]*float64(f), 3/(q7FleetHours[f]*float64(f))))
	}
	d.p("**Method.** `%s` makes the primary chronically slow (2 s for every read during an episode of %g s) under a static 200 ms threshold (spec §15.2 `hedging_alternate_wins_trip_ppcb`); the time to route away is measured from the episode start to each breaker's first trip. `%s` and `%s` have no episode, so every trip there is a false trip; they run the aggressive `static-20ms` threshold, which lets the alternate win most often under healthy jitter. N is swept over %v with the probe interval at 30 s, for a fleet of 1, 10 and 100 client instances (`[fleet] instances`, operations assigned uniformly at random) at the same total rate, then the probe interval over %v s at N = 5 for one client. Runs: %s. The false-trip scenarios run longer than their files say, in %d replications, each fleet size for as many virtual hours as it needs to bound the false-trip rate below 1 per instance-hour when no trip is seen (rule of three: zero events in T instance-hours bound the rate below 3/T with 95%% confidence): %s. A run with no trip at some N has none at any larger N (until a first trip the breaker changes nothing, and a streak of more wins contains a streak of N), so those runs stop at the first N without trips and the larger N inherit its zero.",
		chronic, epS, jitter, heavy, q7N, q7Probes, strings.Join(seeds, "; "), q7FalseReps, strings.Join(hoursNote, "; "))

	type pt struct {
		n, f                float64
		ttr, falseH, falseT float64
		tripsH, tripsT      int64
		instH, instT        float64
		pairsTripped        float64
		routed, epMeanMs    float64
		ru                  float64
	}
	byFleet := map[int][]pt{}
	d.p("## Sweep of N (probe interval 30 s) by fleet size")
	d.p("Each breaker counts the wins of one (instance, partition) pair, so what sets the time to route away is the rate of reads per pair: %g reads/s over %d partitions is %.2g reads/s per pair for one client, %.2g for 10 instances and %.2g for 100. \"Time to route away\" is, over the (instance, partition) pairs that ran a read during the episode, the median time from the episode start to a pair's first trip (a pair that never trips counts as never; \"> %g\" when fewer than half tripped during the episode); \"episode reads routed away\" is the share of reads started during the episode whose primary attempt went straight to the alternate.",
		rate, parts, rate/float64(parts), rate/float64(parts)/10, rate/float64(parts)/100, epS)
	for _, f := range q7Fleets {
		hours := q7FleetHours[f]
		falseOpts := func(n float64) breakerOpts {
			return breakerOpts{n: n, probe: 30, instances: f, durationS: hours * 3600 / q7FalseReps, reps: q7FalseReps}
		}
		var rows [][]string
		zeroH, zeroT := false, false
		var lastH, lastT breakerRun
		for _, n := range q7N {
			c, err := runBreaker(chronic, polStatic("static-200ms", 200), breakerOpts{n: n, probe: 30, instances: f}, d.parallel)
			if err != nil {
				return err
			}
			if !zeroH {
				if lastH, err = runBreaker(jitter, polStatic("static-20ms", 20), falseOpts(n), d.parallel); err != nil {
					return err
				}
				zeroH = lastH.trips == 0
			}
			if !zeroT {
				if lastT, err = runBreaker(heavy, polStatic("static-20ms", 20), falseOpts(n), d.parallel); err != nil {
					return err
				}
				zeroT = lastT.trips == 0
			}
			p := pt{n: n, f: float64(f), ttr: c.medianTTR, tripsH: lastH.trips, tripsT: lastT.trips,
				instH: hours * float64(f), instT: hours * float64(f),
				pairsTripped: float64(c.pairsTripped) / float64(max(c.pairs, 1)), routed: c.routed, epMeanMs: c.epMeanMs, ru: c.ru}
			p.falseH, p.falseT = float64(p.tripsH)/p.instH, float64(p.tripsT)/p.instT
			byFleet[f] = append(byFleet[f], p)
			rows = append(rows, []string{fmt.Sprintf("%g", n), ttr(c.medianTTR, epS), pct(p.pairsTripped), pct(c.routed), ms(c.epMeanMs), ru(c.ru),
				falseTrips(p.tripsH, p.instH), falseTrips(p.tripsT, p.instT)})
		}
		what := "one client"
		if f > 1 {
			what = fmt.Sprintf("a fleet of %d instances (%.2g reads/s each)", f, rate/float64(f))
		}
		d.p("### %s", strings.ToUpper(what[:1])+what[1:])
		d.table([]string{"N", "time to route away (s)", "pairs tripped in the episode", "episode reads routed away", "episode mean latency (ms)", "RU ×",
			"false trips per instance-hour (healthy)", "false trips per instance-hour (heavy tail)"}, rows)
	}

	var rows [][]string
	probes := map[float64]breakerRun{}
	for _, probe := range q7Probes {
		c, err := runBreaker(chronic, polStatic("static-200ms", 200), breakerOpts{n: 5, probe: probe}, d.parallel)
		if err != nil {
			return err
		}
		probes[probe] = c
		rows = append(rows, []string{fmt.Sprintf("%g", probe), ttr(c.medianTTR, epS), ms(c.p99), ru(c.ru), fmt.Sprintf("%.0f", float64(c.trips)/c.hours)})
	}
	d.p("## Sweep of the probe interval (N = 5, one client)")
	d.table([]string{"probe interval (s)", "time to route away (s)", "p99 (ms)", "RU ×", "trips/h (re-trips after each probe)"}, rows)
	r, err := d.simulate(chronic, []simnet.Policy{polStatic("static-200ms", 200)})
	if err != nil {
		return err
	}
	sub, err := d.charts(r, chronic)
	if err != nil {
		return err
	}
	d.p("The chronic scenario at N = 5 over time (one client): p99 spikes when the episode starts and at every probe (the primary is tried again as a probe; a probing partition trips again on its first alternate win), and the hedge rate falls to the probes once partitions have routed away.")
	d.img("windowed p99 over time", sub+"/timeline.svg")
	d.img("hedge rate over time", sub+"/hedge_rate.svg")

	// A fleet that shards its keys: each partition's reads on one instance.
	big := q7Fleets[len(q7Fleets)-1]
	sharded, err := runBreaker(chronic, polStatic("static-200ms", 200), breakerOpts{n: 5, probe: 30, instances: big, byPartition: true}, d.parallel)
	if err != nil {
		return err
	}
	d.p("## A fleet that shards its keys")
	d.p("With `[fleet] assignment = \"partition\"` each partition's reads all go to one instance (partition p to instance p mod %d), so each breaker sees every read of its partitions, as one client does.", big)
	rows = nil
	for _, f := range q7Fleets {
		for _, p := range byFleet[f] {
			if p.n == 5 {
				rows = append(rows, []string{fmt.Sprintf("%d", f), "uniform", ttr(p.ttr, epS), pct(p.pairsTripped), pct(p.routed), ms(p.epMeanMs), ru(p.ru)})
			}
		}
	}
	rows = append(rows, []string{fmt.Sprintf("%d", big), "partition", ttr(sharded.medianTTR, epS), pct(float64(sharded.pairsTripped) / float64(max(sharded.pairs, 1))), pct(sharded.routed), ms(sharded.epMeanMs), ru(sharded.ru)})
	d.table([]string{"instances", "assignment", "time to route away (s)", "pairs tripped in the episode", "episode reads routed away", "episode mean latency (ms)", "RU ×"}, rows)

	// Per fleet size: the smallest N with no false trips in either healthy
	// scenario, and N = 5.
	type fleetRec struct {
		rec      float64
		at, five pt
	}
	recs := map[int]fleetRec{}
	for _, f := range q7Fleets {
		fr := fleetRec{rec: -1}
		for _, p := range byFleet[f] {
			if fr.rec < 0 && p.tripsH == 0 && p.tripsT == 0 {
				fr.rec, fr.at = p.n, p
			}
			if p.n == 5 {
				fr.five = p
			}
		}
		recs[f] = fr
	}
	d.p("## Answer")
	rec := -1.0
	for _, f := range q7Fleets {
		if recs[f].rec < 0 {
			d.p("No N in %v avoids false trips under healthy jitter for a fleet of %d in these scenarios; the data does not settle a default.", q7N, f)
			return nil
		}
		rec = max(rec, recs[f].rec)
	}
	one, big1 := recs[q7Fleets[0]], recs[big]
	var zeroN, ttrs, bounds []string
	same := true
	for _, f := range q7Fleets {
		same = same && recs[f].rec == one.rec
		zeroN = append(zeroN, fmt.Sprintf("N = %g for %s", recs[f].rec, fleetName(f)))
		ttrs = append(ttrs, fmt.Sprintf("%s s for %s", ttr(recs[f].five.ttr, epS), fleetName(f)))
		bounds = append(bounds, fmt.Sprintf("%.2g for %s (%g instance-hours)", 3/(q7FleetHours[f]*float64(f)), fleetName(f), q7FleetHours[f]*float64(f)))
	}
	if same {
		d.p("False trips: only N below %g tripped on healthy jitter here; from N = %g up, no breaker tripped in either healthy scenario at an aggressive 20 ms threshold, at any fleet size, which bounds the false-trip rate per instance-hour below %s (95%%, each scenario).",
			one.rec, one.rec, strings.Join(bounds, ", "))
	} else {
		d.p("False trips: the smallest N without a false trip in either healthy scenario is %s. At zero trips the false-trip rate per instance-hour is bounded below %s (95%%, each scenario).", strings.Join(zeroN, ", "), strings.Join(bounds, ", "))
	}
	d.p("Time to route away grows linearly with N (each trip needs N alternate wins in a row on one pair) and with the fleet size (with uniform assignment each pair sees 1/instances of a partition's reads, so it is about N × instances × partitions / rate): at N = 5 it is %s. A fleet of %d at N = 5 routes only %s of the episode's reads away (one client: %s); its reads keep waiting for the 200 ms threshold and hedging, at %s ms mean latency during the episode (one client: %s ms) and %s× RU (one client: %s×). A fleet that shards its keys over its instances (`assignment = \"partition\"`) routes away like one client (%s s).",
		strings.Join(ttrs, ", "), big, pct(big1.five.routed), pct(one.five.routed), ms(big1.five.epMeanMs), ms(one.five.epMeanMs), ru(big1.five.ru), ru(one.five.ru), ttr(sharded.medianTTR, epS))
	switch {
	case rec < 5:
		d.p("**Recommendation:** lower the default from 5 to N = %g, the smallest N without false trips at every fleet size here. For one client the margin N = 5 keeps against burstier jitter than modelled costs only %.1f s (%s s against %s s); in a fleet of %d it costs %.1f s (%s s against %s s), and the breaker routes fewer of the episode's reads away (%s at N = 5, %s at N = %g). %s",
			rec, round1(one.five.ttr)-round1(one.at.ttr), ttr(one.five.ttr, epS), ttr(one.at.ttr, epS), big, round1(big1.five.ttr)-round1(big1.at.ttr), ttr(big1.five.ttr, epS), ttr(big1.at.ttr, epS), pct(big1.five.routed), pct(big1.at.routed), rec, probeAdvice(probes))
	case rec == 5:
		d.p("**Recommendation:** keep the spec's default of N = 5, the smallest N without false trips at every fleet size here. %s", probeAdvice(probes))
	default:
		d.p("**Recommendation:** raise the default from 5 to %g: below it the breaker tripped on healthy jitter in these scenarios.", rec)
	}
	d.p("Whatever N, a per-instance breaker is slow in a large fleet with few reads per instance and partition: at N = %g a fleet of %d takes %s s to route a median pair away. There the hedge, not the breaker, carries the incident, and its RU is the price (%s× at N = %g); an application that shards its keys over its instances gets the one-client behaviour back.", rec, big, ttr(big1.at.ttr, epS), ru(big1.at.ru), rec)
	d.p("Where the data does not settle it: the false trips here come from independent per-read jitter with uniform keys over 100 partitions. Jitter that comes in bursts (a GC pause, a noisy neighbour) makes runs of alternate wins likelier than independent draws do, and few hot partitions give each pair more reads: both bring false trips sooner at every N. An operator can check N against production by counting breaker trips per instance-hour on healthy days. The alternate here has unlimited capacity: where it serves other tenants, a trip moves the partition's whole read load onto it, and in notebook 04's `shared-alternate` that moved load, not the hedges, filled the alternate's queue — a lower N trips sooner and moves more, so check the alternate's headroom before lowering N.")
	return nil
}

// probeAdvice is the answer's probe-interval sentence from the probe sweep
// (breaker runs at N = 5 by probe interval in seconds): the 30 s default
// against the shorter and the longer intervals, and what the chronic
// episode cannot show (failback after a recovery).
func probeAdvice(probes map[float64]breakerRun) string {
	def := probes[30]
	var shorter, longer []string
	for _, p := range q7Probes {
		c := probes[p]
		s := fmt.Sprintf("%g s: %s× RU, %.0f trips/h", p, ru(c.ru), float64(c.trips)/c.hours)
		switch {
		case p < 30:
			shorter = append(shorter, s)
		case p > 30:
			longer = append(longer, s)
		}
	}
	out := fmt.Sprintf("Keep the 30 s probe interval (one client at N = 5: %s× RU, %.0f trips/h): shorter intervals fail back sooner but re-trip more often during a long episode, each re-trip costing one slow primary and its hedge (%s).", ru(def.ru), float64(def.trips)/def.hours, joinAnd(shorter, "none run"))
	if len(longer) > 0 {
		samep99 := true
		for _, p := range q7Probes {
			samep99 = samep99 && ms(probes[p].p99) == ms(def.p99)
		}
		out += fmt.Sprintf(" A longer interval costs less here (%s); what it loses is failback: after the primary recovers, a tripped partition keeps reading from the alternate for up to the interval, which the tables here do not measure", joinAnd(longer, ""))
		if samep99 {
			out += fmt.Sprintf(" (the p99 was %s ms at every interval)", ms(def.p99))
		}
		out += "."
	}
	return out
}
