package main

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet"
)

// Notebook 07: after how many consecutive 503s should a (partition,
// endpoint) be marked unavailable (hedging.Config.UnavailableAfter)?
// Random 503s from a healthy primary against a hard outage, each rule in
// q503N.

var (
	q503N     = []int{1, 2, 3, 5}
	q503Rates = []float64{0.01, 0.05, 0.1, 0.3}
)

// q503Target is the replica of the primary region in both scenarios.
const q503Target = "eastus"

// q503Run is one rule on one scenario, over all replications: reads by
// start time inside [from, to), those whose primary attempt went to the
// target, their mean latency; for an outage, the median time from its
// start to each (replication, partition) pair's first read started on
// another region (+Inf when fewer than half did), and the 503s answered.
type q503Run struct {
	reads, onTarget int64
	meanMs          float64
	medianRouteS    float64
	faults          int64
	partitions      int
}

// q503Simulate runs scenario name at unavailable_after n (and fault
// probability p when p > 0) under its own policy, measuring reads started
// in [from, to) (to <= 0: the run's end).
func q503Simulate(name string, n int, p float64, from, to time.Duration, parallel int, extra ...param) (q503Run, error) {
	params := append([]param{{"client.unavailable_after", float64(n)}}, extra...)
	if p > 0 {
		params = append(params, param{"faults.0.probability", p})
	}
	s, cfg, err := loadEdited(name, nil, params...)
	if err != nil {
		return q503Run{}, err
	}
	_, pols, err := s.Config()
	if err != nil {
		return q503Run{}, err
	}
	pol := pols[0]
	type repOut struct {
		st              *simnet.Stats
		reads, onTarget int64
		lat             time.Duration
		first           map[int]time.Duration // partition -> first read routed away (+1 ns)
		err             error
	}
	outs := make([]repOut, s.Replications)
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(parallel, 1))
	for rep := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			o := repOut{first: map[int]time.Duration{}}
			o.st, o.err = simnet.Run(cfg, pol, rep, simnet.RunOptions{OnCompleteInstance: func(_ int, r *hedging.Race, op *hedging.Operation) {
				start := r.Start()
				if start < from || (to > 0 && start >= to) {
					return
				}
				o.reads++
				o.lat += r.DoneAt() - start
				if r.Endpoint(hedging.Primary).Key == q503Target {
					o.onTarget++
					return
				}
				part, _ := strconv.Atoi(op.Partition)
				if o.first[part] == 0 {
					o.first[part] = start - from + 1
				}
			}})
			outs[rep] = o
		}()
	}
	wg.Wait()
	var out q503Run
	var lat time.Duration
	var routes []float64
	parts := max(cfg.Workload.Partitions, 1)
	for _, o := range outs {
		if o.err != nil {
			return out, o.err
		}
		out.reads += o.reads
		out.onTarget += o.onTarget
		out.faults += o.st.Faults
		out.partitions += parts
		lat += o.lat
		for _, t := range o.first {
			routes = append(routes, (t - 1).Seconds())
		}
	}
	if out.reads > 0 {
		out.meanMs = lat.Seconds() * 1000 / float64(out.reads)
	}
	sort.Float64s(routes)
	out.medianRouteS = math.Inf(1)
	if half := (out.partitions + 1) / 2; len(routes) >= half {
		out.medianRouteS = routes[half-1]
	}
	return out, nil
}

// q503Random is one row of the random-503s table.
type q503Random struct {
	Rate    float64
	N       int
	Primary float64 // share of reads whose primary attempt went to East US
	MeanMs  float64
}

// q503Outage is one row of the outage table.
type q503Outage struct {
	N, Attempts    int
	RouteS         float64 // median time to route away (s)
	WastedPerPartS float64 // reads started on East US per partition and second of outage
	MeanMs         float64 // mean latency of the outage's reads
}

// q503View is the notebook's prose view.
type q503View struct {
	Random, Outage     string // scenario names
	Rates              []string
	N                  []int
	OutageS, MarkS     float64
	Rows               []q503Random
	Out, Out1          []q503Outage // 3 attempts per leg, and 1
	Spec, Best         q503Random   // at the rate of the answer
	SpecOut, BestOut   q503Outage
	SpecOut1, BestOut1 q503Outage
	AnswerRate         float64
	BestN              int
}

func q503(d *doc) error {
	const random, outage = "random-503s", "outage-503"
	ocfg, err := d.loadOnly(outage)
	if err != nil {
		return err
	}
	f := ocfg.Faults[0]
	v := q503View{Random: random, Outage: outage, N: q503N, OutageS: (f.End - f.Start).Seconds(), MarkS: hedging.DefaultUnavailableFor.Seconds()}
	for _, p := range q503Rates {
		v.Rates = append(v.Rates, pct(p))
	}
	d.say("q503/question", v)
	d.say("q503/method", v)
	var rows [][]string
	for _, p := range q503Rates {
		for _, n := range q503N {
			r, err := q503Simulate(random, n, p, 0, 0, d.parallel)
			if err != nil {
				return err
			}
			row := q503Random{Rate: p, N: n, Primary: float64(r.onTarget) / float64(r.reads), MeanMs: r.meanMs}
			v.Rows = append(v.Rows, row)
			rows = append(rows, []string{pct(p), strconv.Itoa(n), pct(row.Primary), ms(row.MeanMs)})
		}
	}
	d.p("**Random 503s** (`%s`, fault probability swept; every read of the run):", random)
	d.table([]string{"503s at random", "marked after N in a row", "reads started on the primary", "mean latency (ms)"}, rows)
	rows = nil
	for _, attempts := range []int{3, 1} {
		for _, n := range q503N {
			r, err := q503Simulate(outage, n, 0, f.Start, f.End, d.parallel, param{"client.retry_max_attempts", float64(attempts)})
			if err != nil {
				return err
			}
			row := q503Outage{N: n, Attempts: attempts, RouteS: r.medianRouteS, MeanMs: r.meanMs,
				WastedPerPartS: float64(r.onTarget) / float64(r.partitions) / v.OutageS}
			if attempts == 3 {
				v.Out = append(v.Out, row)
			} else {
				v.Out1 = append(v.Out1, row)
			}
			rows = append(rows, []string{strconv.Itoa(attempts), strconv.Itoa(n), fmt.Sprintf("%.3f", row.RouteS), fmt.Sprintf("%.2f", row.WastedPerPartS), ms(row.MeanMs)})
		}
	}
	d.p("**A hard outage** (`%s`: every read reaching the primary gets a 503 for %g s; reads started during it), with the default 3 attempts per leg and with 1 (`client.retry_max_attempts`):", outage, v.OutageS)
	d.table([]string{"attempts per leg", "marked after N in a row", "time to route away (s, median over partitions)", "reads started on the failing primary per partition-second", "mean latency (ms)"}, rows)

	// The answer: the smallest N whose outage cost stays under one more
	// failing read per partition every mark period and that keeps the
	// primary for at least 90% of reads at a 10% rate.
	v.AnswerRate = 0.1
	byRate := func(p float64, n int) q503Random {
		for _, r := range v.Rows {
			if r.Rate == p && r.N == n {
				return r
			}
		}
		return q503Random{}
	}
	v.Spec = byRate(v.AnswerRate, 1)
	v.SpecOut, v.SpecOut1 = v.Out[0], v.Out1[0]
	v.BestN = 1
	for i, n := range q503N[1:] {
		if byRate(v.AnswerRate, n).Primary >= 0.9 {
			v.BestN, v.Best, v.BestOut, v.BestOut1 = n, byRate(v.AnswerRate, n), v.Out[i+1], v.Out1[i+1]
			break
		}
	}
	d.check(claim{"a single 503 benches a healthy primary for most reads at a 10% rate", func() error {
		if v.Spec.Primary >= 0.5 {
			return failf("with N = 1 at 10%% the primary starts %s of reads", pct(v.Spec.Primary))
		}
		return nil
	}}, claim{"some N keeps the primary for 90% of reads at a 10% rate", func() error {
		if v.BestN == 1 {
			return failf("no N of %v keeps 90%% of reads on the primary at 10%%", q503N)
		}
		return nil
	}}, claim{"the time to route away grows with N and stays below a second", func() error {
		for _, out := range [][]q503Outage{v.Out, v.Out1} {
			for i, o := range out {
				if o.RouteS >= 1 || (i > 0 && o.RouteS < out[i-1].RouteS) {
					return failf("N = %d, %d attempts: %.3f s", o.N, o.Attempts, o.RouteS)
				}
			}
		}
		return nil
	}}, claim{"the outage costs at most one more failing read per partition per mark period and N", func() error {
		for _, out := range [][]q503Outage{v.Out, v.Out1} {
			for _, o := range out {
				if bound := float64(o.N+1) / v.MarkS; o.WastedPerPartS > bound {
					return failf("N = %d, %d attempts: %.2f reads per partition-second > %.2f", o.N, o.Attempts, o.WastedPerPartS, bound)
				}
			}
		}
		return nil
	}}, claim{"with 3 attempts per leg, N up to 3 costs the outage nothing more than N = 1", func() error {
		for _, o := range v.Out {
			if o.N <= 3 && (o.WastedPerPartS != v.SpecOut.WastedPerPartS || o.RouteS != v.SpecOut.RouteS) {
				return failf("N = %d: %.2f reads per partition-second, %.3f s against %.2f, %.3f", o.N, o.WastedPerPartS, o.RouteS, v.SpecOut.WastedPerPartS, v.SpecOut.RouteS)
			}
		}
		return nil
	}})
	d.say("q503/answer", v)
	return nil
}
