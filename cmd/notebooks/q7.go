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
	// epOps counts the episode's operations (all replications); postOps,
	// postRouted and postMeanMs are the operations started in the
	// q7PostS seconds after the episode ends, the share of them routed
	// away and their mean latency; failbackS the mean over replications
	// of the seconds from the episode's end to the start of the last read
	// routed away (failback).
	epOps, postOps         int64
	postRouted, postMeanMs float64
	failbackS              float64
	// postExtraMs is how much longer (ms) a read routed away took than one
	// that was not, in the q7PostS s after the episode (0 when either is
	// missing): the price of a read on the alternate once the primary has
	// recovered.
	postExtraMs float64
}

// q7PostS is the window after an episode (s) in which failback is
// measured: the longest probe interval of the sweep.
const q7PostS = 60

// breakerOpts is one breaker configuration: threshold n and probe
// interval probe (s); instances > 1 runs a fleet (assignment partition
// when byPartition); durationS and reps, when > 0, replace the scenario's
// duration and replications.
type breakerOpts struct {
	n, probe    float64
	span        float64 // client.hedge_win_min_span_ms when != 0
	instances   int
	byPartition bool
	edit        func(*simnet.Config) // applied to the configuration when set
	durationS   float64
	reps        int
}

// runBreaker runs scenario name with the breaker configuration o under
// policy pol and measures trips and the time to route away from the
// primary after the first episode starts (if any).
func runBreaker(name string, pol simnet.Policy, o breakerOpts, parallel int) (breakerRun, error) {
	s, err := loadScenario(name)
	if err != nil {
		return breakerRun{}, err
	}
	params := [][2]any{{"client.consecutive_hedge_win_threshold", o.n}, {"client.probe_interval_s", o.probe}}
	if o.span != 0 {
		params = append(params, [2]any{"client.hedge_win_min_span_ms", o.span})
	}
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
	if o.edit != nil {
		o.edit(cfg)
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
		postOps, postRt int64
		postLat, lastRt time.Duration
		postRtLat       time.Duration
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
				if s := r.Start(); s >= epEnd && s < epEnd+q7PostS*time.Second {
					out.postOps++
					out.postLat += r.DoneAt() - s
					if r.Endpoint(hedging.Primary).Key != target {
						out.postRt++
						out.postRtLat += r.DoneAt() - s
						out.lastRt = max(out.lastRt, s-epEnd)
					}
				}
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
	var epOps, epRouted, postOps, postRt int64
	var epLat, postLat, postRtLat time.Duration
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
		postOps += o.postOps
		postRt += o.postRt
		postLat += o.postLat
		postRtLat += o.postRtLat
		out.failbackS += o.lastRt.Seconds() / float64(len(outs))
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
	out.epOps, out.postOps = epOps, postOps
	if postOps > 0 {
		out.postRouted = float64(postRt) / float64(postOps)
		out.postMeanMs = postLat.Seconds() * 1000 / float64(postOps)
	}
	if postRt > 0 && postOps > postRt {
		out.postExtraMs = postRtLat.Seconds()*1000/float64(postRt) - (postLat-postRtLat).Seconds()*1000/float64(postOps-postRt)
	}
	out.p99 = merged.QuantileMs(0.99)
	out.ru = merged.RUMultiplier()
	return out, nil
}

// loadScenario returns the embedded scenario name, or the scenario file
// at path name when it ends in ".toml".
func loadScenario(name string) (*scenarios.Scenario, error) {
	if strings.HasSuffix(name, ".toml") {
		return scenarios.Load(name)
	}
	return scenarios.Get(name)
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

// q7 settings: the chronic scenario's static threshold, the false-trip
// scenarios' aggressive one (ms), and N of the probe sweep (the spec's
// default).
const (
	q7ChronicMs = 200
	q7FalseMs   = 20
	q7ProbeN    = hedging.DefaultConsecutiveHedgeWinThreshold
)

// q7Point is one N of the sweep for one fleet size: the chronic run's
// time to route away (TTR, s), share of pairs tripped, reads routed away,
// episode mean latency and RU, and the false trips (count, instance-hours)
// of the two healthy scenarios.
type q7Point struct {
	N, Fleet             float64
	TTR, FalseH, FalseT  float64
	TripsH, TripsT       int64
	InstH, InstT         float64
	PairsTripped         float64
	Routed, EpMeanMs, RU float64
}

// q7Probe is one probe interval (s) of the probe sweep at N = q7ProbeN.
type q7Probe struct {
	Probe, RU, P99, TripsH float64
	// EpMeanMs and PostMeanMs are the mean latency (ms) of the reads
	// started during the episode and in the q7PostS s after it, PostRouted
	// the share of the latter routed away, FailbackS the seconds from the
	// episode's end to the last read routed away, and WaitS the reads'
	// total latency over both windows (read-seconds per replication).
	EpMeanMs, PostMeanMs, PostRouted, FailbackS, WaitS float64
	// EpWaitS is the episode's reads' total latency (read-seconds per
	// replication) and ExtraMs how much longer a read routed away took
	// than one that was not after the episode (ms).
	EpWaitS, ExtraMs float64
}

func q7(d *doc) error {
	const chronic, jitter, heavy = "breaker-trip", "healthy", "heavy-tail"
	d.say("q7/question", nil)
	seeds := []string{}
	cfgs := map[string]*simnet.Config{}
	for _, name := range []string{chronic, jitter, heavy} {
		sc, err := scenarios.Get(name)
		if err != nil {
			return err
		}
		cfg, _, err := sc.Config()
		if err != nil {
			return err
		}
		cfgs[name] = cfg
		seeds = append(seeds, fmt.Sprintf("`%s` seed %d × %d replications × %s", name, cfg.Seed, sc.Replications, cfg.Duration))
	}
	chronicCfg := cfgs[chronic]
	ep := chronicCfg.Episodes[0]
	falseParts := max(cfgs[jitter].Workload.Partitions, 1)
	d.check(claim{"the false-trip scenarios have no episode and the same partitions (\"uniform keys over N partitions\")", func() error {
		for _, n := range []string{jitter, heavy} {
			if c := cfgs[n]; len(c.Episodes) > 0 || max(c.Workload.Partitions, 1) != falseParts || c.Workload.ZipfS != 0 {
				return failf("%s: %d episodes, %d partitions, zipf %g", n, len(c.Episodes), c.Workload.Partitions, c.Workload.ZipfS)
			}
		}
		return nil
	}})
	epS := (ep.End - ep.Start).Seconds()
	d.check(claim{chronic + ": the episode slows every read of the primary by a fixed delay", func() error {
		if len(chronicCfg.Episodes) != 1 || (ep.Fraction != 0 && ep.Fraction != 1) || (ep.Factor != 0 && ep.Factor != 1) || ep.AddMs <= 0 {
			return failf("episodes %+v", chronicCfg.Episodes)
		}
		return nil
	}})
	rate, parts := chronicCfg.Workload.RatePerSec, max(chronicCfg.Workload.Partitions, 1)
	var hoursNote, fleets, perPair []string
	for i, f := range q7Fleets {
		hoursNote = append(hoursNote, fmt.Sprintf("%g h for %s (%g instance-hours: zero trips bound the rate below %.2g per instance-hour)",
			q7FleetHours[f], fleetName(f), q7FleetHours[f]*float64(f), 3/(q7FleetHours[f]*float64(f))))
		fleets = append(fleets, fmt.Sprint(f))
		switch per := rate / float64(parts) / float64(f); {
		case f == 1:
			perPair = append(perPair, fmt.Sprintf("%.2g reads/s per pair for one client", per))
		case i == len(q7Fleets)-1:
			perPair = append(perPair, fmt.Sprintf("%.2g for %d", per, f))
		default:
			perPair = append(perPair, fmt.Sprintf("%.2g for %d instances", per, f))
		}
	}
	d.say("q7/method", struct {
		Chronic, Jitter, Heavy        string
		SlowMs, EpisodeS, ChronicMs   float64
		FalseMs, DefaultProbe, ProbeN float64
		SpanMs                        float64
		N, Probes                     []float64
		Fleets, Runs, Hours           string
		FalseReps                     int
	}{chronic, jitter, heavy, ep.AddMs, epS, q7ChronicMs, q7FalseMs, hedging.DefaultProbeInterval.Seconds(), q7ProbeN,
		float64(hedging.DefaultHedgeWinMinSpan.Milliseconds()), q7N, q7Probes, joinAnd(fleets, ""), strings.Join(seeds, "; "), strings.Join(hoursNote, "; "), q7FalseReps})

	chronicPol := polStatic(fmt.Sprintf("static-%gms", float64(q7ChronicMs)), q7ChronicMs)
	falsePol := polStatic(fmt.Sprintf("static-%gms", float64(q7FalseMs)), q7FalseMs)
	defProbe := hedging.DefaultProbeInterval.Seconds()
	byFleet := map[int][]q7Point{}
	d.p("## Sweep of N (probe interval %g s) by fleet size", defProbe)
	d.say("q7/pairs", struct {
		Rate       float64
		Partitions int
		PerPair    string
		EpisodeS   float64
	}{rate, parts, joinAnd(perPair, ""), epS})
	for _, f := range q7Fleets {
		hours := q7FleetHours[f]
		falseOpts := func(n float64) breakerOpts {
			return breakerOpts{n: n, probe: defProbe, instances: f, durationS: hours * 3600 / q7FalseReps, reps: q7FalseReps}
		}
		var rows [][]string
		zeroH, zeroT := false, false
		var lastH, lastT breakerRun
		for _, n := range q7N {
			c, err := runBreaker(chronic, chronicPol, breakerOpts{n: n, probe: defProbe, instances: f}, d.parallel)
			if err != nil {
				return err
			}
			if !zeroH {
				if lastH, err = runBreaker(jitter, falsePol, falseOpts(n), d.parallel); err != nil {
					return err
				}
				zeroH = lastH.trips == 0
			}
			if !zeroT {
				if lastT, err = runBreaker(heavy, falsePol, falseOpts(n), d.parallel); err != nil {
					return err
				}
				zeroT = lastT.trips == 0
			}
			p := q7Point{N: n, Fleet: float64(f), TTR: c.medianTTR, TripsH: lastH.trips, TripsT: lastT.trips,
				InstH: hours * float64(f), InstT: hours * float64(f),
				PairsTripped: float64(c.pairsTripped) / float64(max(c.pairs, 1)), Routed: c.routed, EpMeanMs: c.epMeanMs, RU: c.ru}
			p.FalseH, p.FalseT = float64(p.TripsH)/p.InstH, float64(p.TripsT)/p.InstT
			byFleet[f] = append(byFleet[f], p)
			rows = append(rows, []string{fmt.Sprintf("%g", n), ttr(c.medianTTR, epS), pct(p.PairsTripped), pct(c.routed), ms(c.epMeanMs), ru(c.ru),
				falseTrips(p.TripsH, p.InstH), falseTrips(p.TripsT, p.InstT)})
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
	var probes []q7Probe
	for _, probe := range q7Probes {
		c, err := runBreaker(chronic, chronicPol, breakerOpts{n: q7ProbeN, probe: probe}, d.parallel)
		if err != nil {
			return err
		}
		reps := float64(c.partitions / parts) // replications run
		pr := q7Probe{Probe: probe, RU: c.ru, P99: c.p99, TripsH: float64(c.trips) / c.hours, EpMeanMs: c.epMeanMs, PostMeanMs: c.postMeanMs,
			PostRouted: c.postRouted, FailbackS: c.failbackS,
			WaitS:   (c.epMeanMs*float64(c.epOps) + c.postMeanMs*float64(c.postOps)) / 1000 / reps,
			EpWaitS: c.epMeanMs * float64(c.epOps) / 1000 / reps, ExtraMs: c.postExtraMs}
		probes = append(probes, pr)
		rows = append(rows, []string{fmt.Sprintf("%g", probe), ttr(c.medianTTR, epS), ms(c.p99), ru(c.ru), fmt.Sprintf("%.0f", pr.TripsH),
			ms(pr.EpMeanMs), fmt.Sprintf("%.0f", pr.EpWaitS), fmt.Sprintf("%.1f", pr.FailbackS), pct(pr.PostRouted), ms(pr.ExtraMs)})
	}
	d.p("## Sweep of the probe interval (N = %d, one client)", q7ProbeN)
	d.say("q7/probe-method", struct{ PostS, EpisodeS float64 }{q7PostS, epS})
	d.table([]string{"probe interval (s)", "time to route away (s)", "p99 (ms)", "RU ×", "trips/h (re-trips after each probe)", "episode mean latency (ms)",
		"episode wait (read-s per run)", "failback: last read routed away after the episode (s)", fmt.Sprintf("reads routed away in the %d s after", q7PostS),
		"a routed-away read's extra latency after (ms)"}, rows)
	r, err := d.simulate(chronic, []simnet.Policy{chronicPol})
	if err != nil {
		return err
	}
	sub, err := d.charts(r, chronic)
	if err != nil {
		return err
	}
	d.say("q7/chronic-chart", struct{ ProbeN float64 }{q7ProbeN})
	d.img("windowed p99 over time", sub+"/timeline.svg")
	d.img("hedge rate over time", sub+"/hedge_rate.svg")

	span, err := q7SpanSection(d, chronic, chronicPol, rate/float64(parts))
	if err != nil {
		return err
	}

	// A fleet that shards its keys: each partition's reads on one instance.
	big := q7Fleets[len(q7Fleets)-1]
	sharded, err := runBreaker(chronic, chronicPol, breakerOpts{n: q7ProbeN, probe: defProbe, instances: big, byPartition: true}, d.parallel)
	if err != nil {
		return err
	}
	d.p("## A fleet that shards its keys")
	d.say("q7/sharded", big)
	rows = nil
	for _, f := range q7Fleets {
		for _, p := range byFleet[f] {
			if p.N == q7ProbeN {
				rows = append(rows, []string{fmt.Sprintf("%d", f), "uniform", ttr(p.TTR, epS), pct(p.PairsTripped), pct(p.Routed), ms(p.EpMeanMs), ru(p.RU)})
			}
		}
	}
	rows = append(rows, []string{fmt.Sprintf("%d", big), "partition", ttr(sharded.medianTTR, epS), pct(float64(sharded.pairsTripped) / float64(max(sharded.pairs, 1))), pct(sharded.routed), ms(sharded.epMeanMs), ru(sharded.ru)})
	d.table([]string{"instances", "assignment", "time to route away (s)", "pairs tripped in the episode", "episode reads routed away", "episode mean latency (ms)", "RU ×"}, rows)

	// Per fleet size: the smallest N with no false trips in either healthy
	// scenario, and N = q7ProbeN.
	type fleetRec struct {
		Rec      float64
		At, Five q7Point
	}
	recs := map[int]fleetRec{}
	for _, f := range q7Fleets {
		fr := fleetRec{Rec: -1}
		for _, p := range byFleet[f] {
			if fr.Rec < 0 && p.TripsH == 0 && p.TripsT == 0 {
				fr.Rec, fr.At = p.N, p
			}
			if p.N == q7ProbeN {
				fr.Five = p
			}
		}
		recs[f] = fr
	}
	d.p("## Answer")
	rec := -1.0
	for _, f := range q7Fleets {
		if recs[f].Rec < 0 {
			d.say("q7/none", struct {
				N     []float64
				Fleet int
			}{q7N, f})
			return nil
		}
		rec = max(rec, recs[f].Rec)
	}
	one, big1 := recs[q7Fleets[0]], recs[big]
	var zeroN, ttrs, bounds []string
	same := true
	for _, f := range q7Fleets {
		same = same && recs[f].Rec == one.Rec
		zeroN = append(zeroN, fmt.Sprintf("N = %g for %s", recs[f].Rec, fleetName(f)))
		ttrs = append(ttrs, fmt.Sprintf("%s s for %s", ttr(recs[f].Five.TTR, epS), fleetName(f)))
		bounds = append(bounds, fmt.Sprintf("%.2g for %s (%g instance-hours)", 3/(q7FleetHours[f]*float64(f)), fleetName(f), q7FleetHours[f]*float64(f)))
	}
	d.say("q7/false-trips", struct {
		Same          bool
		One           fleetRec
		FalseMs       float64
		ZeroN, Bounds []string
	}{same, one, q7FalseMs, zeroN, bounds})
	v := struct {
		ProbeN, ChronicMs, Rec   float64
		Big                      int
		TTRs                     []string
		OneAt5, BigAt5, BigAtRec q7Point
		Sharded                  string
		OneCost, BigCost         float64
		OneAt5TTR, OneAtRecTTR   string
		BigAt5TTR, BigAtRecTTR   string
		Partitions               int
	}{q7ProbeN, q7ChronicMs, rec, big, ttrs, one.Five, big1.Five, big1.At, ttr(sharded.medianTTR, epS),
		round1(one.Five.TTR) - round1(one.At.TTR), round1(big1.Five.TTR) - round1(big1.At.TTR),
		ttr(one.Five.TTR, epS), ttr(one.At.TTR, epS), ttr(big1.Five.TTR, epS), ttr(big1.At.TTR, epS), falseParts}
	d.say("q7/route-away", v)
	d.say("q7/span-answer", span)
	switch {
	case rec < q7ProbeN:
		d.say("q7/recommend-lower", v)
	case rec == q7ProbeN:
		d.say("q7/recommend-keep", v)
	default:
		d.say("q7/recommend-raise", v)
		return nil
	}
	pv := probeView(probes, rate, epS)
	d.check(claim{"the longer probe interval saves wait during the incident and costs it after (a break-even length)", func() error {
		if !(pv.SaveRate > 0 && pv.FailCost > 0) {
			return failf("saves %.3f read-s per s, costs %.1f read-s", pv.SaveRate, pv.FailCost)
		}
		return nil
	}})
	d.say("q7/probe", pv)
	d.say("q7/large-fleet", v)
	d.say("q7/unsettled", v)
	return nil
}

// probeView is the probe-interval paragraph's view: the sweep at
// N = q7ProbeN by interval, the spec's default interval, the cheapest
// interval by RU (ties to the shorter), the longest run, the shorter
// intervals' figures rendered, and whether every interval gave the same
// p99 (as printed); then the trade between the default and the longest
// interval for a read rate (reads/s) and an episode of episodeS seconds:
// the wait the longest saves per second of incident (SaveRate,
// read-seconds per second), the wait its longer failback costs after one
// (FailCost, read-seconds: half the difference of the intervals, the mean
// time a tripped partition still has to wait when the primary recovers at
// a random point of its probe cycle, × rate × a routed-away read's extra
// latency), and the incident length at which they break even (BreakEvenS).
func probeView(probes []q7Probe, rate, episodeS float64) (v struct {
	ProbeN, Rate                float64
	Default, Cheapest, Longest  q7Probe
	Shorter                     []string
	SameP99                     bool
	ExtraMs, SaveRate, FailCost float64
	BreakEvenS, EpisodeS        float64
}) {
	v.ProbeN, v.Rate, v.EpisodeS = q7ProbeN, rate, episodeS
	def := hedging.DefaultProbeInterval.Seconds()
	v.SameP99 = true
	for i, p := range probes {
		if p.Probe == def {
			v.Default = p
		}
		if i == 0 || p.RU < v.Cheapest.RU {
			v.Cheapest = p
		}
		if p.Probe > v.Longest.Probe {
			v.Longest = p
		}
		if p.Probe < def {
			v.Shorter = append(v.Shorter, fmt.Sprintf("%g s: %s× RU, %.0f trips/h", p.Probe, ru(p.RU), p.TripsH))
		}
		v.SameP99 = v.SameP99 && ms(p.P99) == ms(probes[0].P99)
	}
	v.ExtraMs = (v.Default.ExtraMs + v.Longest.ExtraMs) / 2
	v.SaveRate = (v.Default.EpWaitS - v.Longest.EpWaitS) / episodeS
	v.FailCost = (v.Longest.Probe - v.Default.Probe) / 2 * rate * v.ExtraMs / 1000
	v.BreakEvenS = math.Inf(1)
	if v.SaveRate > 0 {
		v.BreakEvenS = v.FailCost / v.SaveRate
	}
	return v
}

// q7GCCase is the bursty-jitter case of issue 17 (relative to the
// repository root, where `make notebooks` runs): a 15 ms pause of the
// primary every 5 s with Zipf keys, partition 0 taking ~40% of reads.
const q7GCCase = "scenarios/testdata/policy-cases/gc-pause-hot-partition.toml"

// q7Spans are the minimum spans (ms) of the span sweep; -1 is the spec's
// count-only rule.
var q7Spans = []float64{-1, 100, 1000}

// q7SpanRow is one (N, span) of the span sweep: the false trips per
// instance-hour and p99 (ms) of the GC-pause case with its 15 ms pauses and
// with 500 ms ones, and the chronic scenario's time to route away (s) for
// one client and 10 instances.
type q7SpanRow struct {
	N, Span                    float64
	Trips, P99, Trips500, P500 float64
	TTR1, TTR10, TTRRec        float64
}

// q7SpanView is the span paragraphs' view: the sweep, the rows at the
// default span and count only, the case's baseline p99 and its settings.
type q7SpanView struct {
	Rows                           []q7SpanRow
	Def, Count                     map[float64]q7SpanRow // by N
	DefaultMs, PauseMs             float64
	LongPauseMs, BaseP99           float64
	HotShare, PerPair              float64 // partition 0's share of reads; chronic reads/s per pair (one client)
	PeriodS, AddMs, RTTMs          float64 // the pauses' period (s) and added latency (ms); the alternate's RTT (ms)
	Runs                           string  // replications × duration of the case
	Recommended, GCCase            string
	CostOne, CostTen, CostRec, Max float64 // largest TTR cost of the default span (s)
}

// q7SpanSection runs the span sweep: the recommended policy on the GC-pause
// case (as written, and with 500 ms pauses), and the chronic scenario's
// time to route away, at N = 3 and 5 and each span of q7Spans.
func q7SpanSection(d *doc, chronic string, chronicPol simnet.Policy, perPair float64) (q7SpanView, error) {
	v := q7SpanView{Def: map[float64]q7SpanRow{}, Count: map[float64]q7SpanRow{}, DefaultMs: float64(hedging.DefaultHedgeWinMinSpan.Milliseconds()),
		LongPauseMs: 500, Recommended: "recommended", GCCase: "gc-pause-hot-partition"}
	pols, err := scenarios.BuildPolicies("q7 span", []byte("[[policies]]\nname = \"recommended\"\ntype = \"recommended\"\n"), 5*time.Second)
	if err != nil {
		return v, err
	}
	rec := pols[0]
	sc, err := scenarios.Load(q7GCCase)
	if err != nil {
		return v, err
	}
	gcCfg, _, err := sc.Config()
	if err != nil {
		return v, err
	}
	if len(gcCfg.Episodes) < 2 || gcCfg.Workload.ZipfS == 0 {
		return v, fmt.Errorf("%s: want periodic pauses and Zipf keys", q7GCCase)
	}
	v.PauseMs = (gcCfg.Episodes[0].End - gcCfg.Episodes[0].Start).Seconds() * 1000
	v.PeriodS = (gcCfg.Episodes[1].Start - gcCfg.Episodes[0].Start).Seconds()
	v.AddMs, v.PerPair = gcCfg.Episodes[0].AddMs, perPair
	for _, rtt := range gcCfg.RTTMs[gcCfg.ClientRegion] {
		v.RTTMs = max(v.RTTMs, rtt)
	}
	h := 0.0
	for k := 1; k <= gcCfg.Workload.Partitions; k++ {
		h += math.Pow(float64(k), -gcCfg.Workload.ZipfS)
	}
	v.HotShare = 1 / h
	v.Runs = fmt.Sprintf("%d × %g s", sc.Replications, gcCfg.Duration.Seconds())
	long := func(c *simnet.Config) {
		for i := range c.Episodes {
			c.Episodes[i].End = c.Episodes[i].Start + time.Duration(v.LongPauseMs)*time.Millisecond
		}
	}
	base, err := runBreaker(q7GCCase, polDisabled(), breakerOpts{n: 3, probe: 30}, d.parallel)
	if err != nil {
		return v, err
	}
	v.BaseP99 = base.p99
	var rows [][]string
	for _, n := range []float64{3, 5} {
		for _, span := range q7Spans {
			o := breakerOpts{n: n, probe: 30, span: span}
			g, err := runBreaker(q7GCCase, rec, o, d.parallel)
			if err != nil {
				return v, err
			}
			o.edit = long
			g5, err := runBreaker(q7GCCase, rec, o, d.parallel)
			if err != nil {
				return v, err
			}
			o.edit = nil
			c1, err := runBreaker(chronic, chronicPol, o, d.parallel)
			if err != nil {
				return v, err
			}
			cr, err := runBreaker(chronic, rec, o, d.parallel)
			if err != nil {
				return v, err
			}
			o.instances = 10
			c10, err := runBreaker(chronic, chronicPol, o, d.parallel)
			if err != nil {
				return v, err
			}
			r := q7SpanRow{N: n, Span: span, Trips: float64(g.trips) / g.hours, P99: g.p99, Trips500: float64(g5.trips) / g5.hours, P500: g5.p99,
				TTR1: c1.medianTTR, TTR10: c10.medianTTR, TTRRec: cr.medianTTR}
			v.Rows = append(v.Rows, r)
			switch span {
			case v.DefaultMs:
				v.Def[n] = r
			case -1:
				v.Count[n] = r
			}
			name := fmt.Sprintf("%g ms", span)
			if span < 0 {
				name = "count only"
			}
			rows = append(rows, []string{fmt.Sprintf("%g", n), name, fmt.Sprintf("%.0f", r.Trips), ms(r.P99), fmt.Sprintf("%.0f", r.Trips500), ms(r.P500),
				ttr(r.TTR1, 1e9), ttr(r.TTR10, 1e9), ttr(r.TTRRec, 1e9)})
		}
	}
	for _, n := range []float64{3, 5} {
		v.CostOne = max(v.CostOne, round1(v.Def[n].TTR1)-round1(v.Count[n].TTR1))
		v.CostTen = max(v.CostTen, round1(v.Def[n].TTR10)-round1(v.Count[n].TTR10))
		v.CostRec = max(v.CostRec, round1(v.Def[n].TTRRec)-round1(v.Count[n].TTRRec))
	}
	v.Max = max(v.CostOne, v.CostTen, v.CostRec)
	d.p("## Bursty jitter and hot partitions: the minimum span")
	d.say("q7/span-method", v)
	d.table([]string{"N", "minimum span", "trips per instance-hour (15 ms pauses)", "p99 (ms)", "trips per instance-hour (500 ms pauses)", "p99 (ms)",
		"time to route away, one client (s)", "time to route away, 10 instances (s)", "time to route away, one client, recommended (s)"}, rows)
	d.check(claim{"count only trips on the 15 ms pauses at N = 3 and 5, and the default span does not", func() error {
		for _, n := range []float64{3, 5} {
			if v.Count[n].Trips < 1 || v.Def[n].Trips >= 1 {
				return failf("N = %g: count only %.1f, default %.1f trips/h", n, v.Count[n].Trips, v.Def[n].Trips)
			}
		}
		return nil
	}}, claim{"the default span keeps p99 within 5% of disabled's on the case", func() error {
		for _, n := range []float64{3, 5} {
			if v.Def[n].P99 > 1.05*v.BaseP99 {
				return failf("N = %g: %.2f ms against %.2f", n, v.Def[n].P99, v.BaseP99)
			}
		}
		return nil
	}}, claim{"the default span costs at most its own length in time to route away", func() error {
		if v.Max > v.DefaultMs/1000 {
			return failf("%.1f s", v.Max)
		}
		return nil
	}})
	d.say("q7/span-result", v)
	return v, nil
}
