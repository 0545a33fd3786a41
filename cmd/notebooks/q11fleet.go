package main

import (
	"fmt"
	"math"
	"slices"
	"time"

	"hedgelab/hedging"
	"hedgelab/internal/report"
	"hedgelab/simnet"
)

// q11FleetScenario is the Q11 study's fleet scenario: cold-start's
// situation for 100 client instances at 5 reads/s each.
const q11FleetScenario = "fleet-cold-start"

// q11FinagleLoad and q11FinagleMin are finagle-2pct's max_extra_load and
// min_backups_per_s (the type's default) in q11PolicyTOML.
const (
	q11FinagleLoad = 0.02
	q11FinagleMin  = 1.0
)

// q11FleetWindows is how many of the fleet scenario's first timeline
// windows the warm-up table shows.
const q11FleetWindows = 8

// q11Fleet adds the fleet cold-start section: the study's policies on
// fleet-cold-start (a fleet) and on the same scenario with one client
// (fleet.instances = 1), each instance's warm-up under TPS §4.2, and what
// the scenario would change in the scorecard (results and names as scored
// there; rec is the scorecard's policy with the fewest losses).
func q11Fleet(d *doc, results []q11Result, names []string, rec string) error {
	cfg, err := d.loadOnly(q11FleetScenario)
	if err != nil {
		return err
	}
	pols := q11Policies(cfg)
	fleet, err := d.simulate(q11FleetScenario, pols)
	if err != nil {
		return err
	}
	one, err := d.simulate(q11FleetScenario, pols, param{"fleet.instances", 1})
	if err != nil {
		return err
	}
	sub, err := d.charts(fleet, q11FleetScenario)
	if err != nil {
		return err
	}
	n := fleet.cfg.Fleet.Instances
	rate := fleet.cfg.Workload.RatePerSec
	d.p("## Fleet cold start")
	d.say("q11/fleet-intro", struct {
		Setup             string
		N                 int
		PerInstance, Rate float64
	}{fleet.setup(), n, rate / float64(n), rate})
	var tab [][]string
	for _, p := range fleet.res.Policies {
		a, b := one.fig(p.Name), fleet.fig(p.Name)
		tab = append(tab, []string{"`" + p.Name + "`", ms(a.P99) + " / " + ms(b.P99), ms(a.P999) + " / " + ms(b.P999),
			pct(a.HedgeRate) + " / " + pct(b.HedgeRate), ru(a.RUMultiplier) + " / " + ru(b.RUMultiplier)})
	}
	d.table([]string{"policy", "p99 ms", "p99.9 ms", "hedge rate", "RU ×"}, tab)

	// The fleet's mean threshold over its first windows, both fleet sizes.
	width := fleet.res.Policies[0].Merged.WindowWidth
	header := []string{"policy"}
	for i := range q11FleetWindows {
		header = append(header, fmt.Sprintf("%g–%g s", (time.Duration(i)*width).Seconds(), (time.Duration(i+1)*width).Seconds()))
	}
	tab = nil
	for _, name := range []string{"p99-tps", "p99-dynamic"} {
		for _, r := range []*run{one, fleet} {
			what := "one client"
			if r == fleet {
				what = fmt.Sprintf("%d instances", n)
			}
			line := []string{fmt.Sprintf("`%s`, %s", name, what)}
			for _, w := range r.merged(name).Timeline[:q11FleetWindows] {
				line = append(line, ms(w.ThresholdSumMs/float64(w.ThresholdOps)))
			}
			tab = append(tab, line)
		}
	}
	d.say("q11/fleet-windows", width.Seconds())
	d.table(header, tab)
	d.img("threshold over time, fleet", sub+"/threshold.svg")

	// Each instance's warm-up under TPS §4.2 (replication 0).
	tps := pols[slices.IndexFunc(pols, func(p simnet.Policy) bool { return p.Name == "p99-tps" })]
	leave, err := firstLeave(fleet.cfg, tps, hedging.TPSLiteral().Initial)
	if err != nil {
		return err
	}
	leaveOne, err := firstLeave(one.cfg, tps, hedging.TPSLiteral().Initial)
	if err != nil {
		return err
	}
	tpsOne, tpsFleet := one.fig("p99-tps"), fleet.fig("p99-tps")
	dynOne, dynFleet := one.fig("p99-dynamic"), fleet.fig("p99-dynamic")
	fv := q11FleetView{
		N: n, Rate: rate, PerInstance: rate / float64(n),
		LeaveOne: leaveOne[0].Seconds(), LeaveFirst: leave[0].Seconds(), LeaveLast: leave[len(leave)-1].Seconds(), LeaveMedian: leave[len(leave)/2].Seconds(),
		TPSOne: tpsOne, TPSFleet: tpsFleet, DynOne: dynOne, DynFleet: dynFleet,
	}
	d.say("q11/fleet-tps", fv)

	fv.AllMore = true
	for _, p := range fleet.res.Policies[1:] {
		fv.AllMore = fv.AllMore && fleet.fig(p.Name).HedgeRate > one.fig(p.Name).HedgeRate
	}
	if dynFleet.HedgeRate > dynOne.HedgeRate && dynOne.Counters["breaker_trips"] > dynFleet.Counters["breaker_trips"] {
		d.say("q11/fleet-breaker", fv)
	}

	// Per-instance budgets: policies whose hedge rate moves with the fleet.
	var moved []string
	for _, p := range fleet.res.Policies {
		a, b := one.fig(p.Name), fleet.fig(p.Name)
		if math.Abs(b.HedgeRate-a.HedgeRate) > q11ErrMargin || worse(b, a, "p99_ms", b.P99, a.P99) || worse(a, b, "p99_ms", a.P99, b.P99) {
			moved = append(moved, fmt.Sprintf("`%s` (p99 %s → %s ms, hedge rate %s → %s)", p.Name, ms(a.P99), ms(b.P99), pct(a.HedgeRate), pct(b.HedgeRate)))
		}
	}
	d.say("q11/fleet-moved", struct{ Moved []string }{moved})
	if fo, ff := one.fig("finagle-2pct"), fleet.fig("finagle-2pct"); worse(fo, ff, "p99_ms", fo.P99, ff.P99) {
		d.say("q11/fleet-finagle", q11FinagleView{
			Min: q11FinagleMin, Load: q11FinagleLoad, N: float64(n), PerInstance: rate / float64(n),
			OneBudget: q11FinagleLoad*rate + q11FinagleMin, FleetBudget: float64(n) * (q11FinagleLoad*rate/float64(n) + q11FinagleMin),
			Slow:          rate * fleet.cfg.Episodes[0].Fraction,
			DriverDefault: ms(float64(hedging.DriverDefaultThreshold(fleet.cfg.Client.RequestTimeout).Get().Milliseconds())),
			One:           fo, Fleet: ff,
		})
	}

	// Would the scorecard change?
	figs := map[string]report.Figures{}
	for _, nm := range names {
		figs[nm] = fleet.fig(nm)
	}
	with := q11Score(append(slices.Clone(results), q11Result{q11FleetScenario, figs}), names, names[1:])
	before := q11Score(results, names, names[1:])
	var gained []string
	for _, nm := range names {
		if with[nm].Lost > before[nm].Lost {
			gained = append(gained, "`"+nm+"`")
		}
	}
	first := q11Rank(with, names[1:])[0]
	best := names[1]
	for _, nm := range names[1:] {
		if figs[nm].P99 < figs[best].P99 {
			best = nm
		}
	}
	d.say("q11/fleet-scorecard", struct {
		Scenario, Best, First, Rec string
		Gained                     []string
		BestP99                    float64
		Changed                    bool
		DynWith, DynBefore         int
	}{q11FleetScenario, best, first, rec, gained, figs[best].P99, first != rec, with["p99-dynamic"].Lost, before["p99-dynamic"].Lost})
	return nil
}

// firstLeave runs cfg (replication 0) under p and returns, sorted, the
// start time of each instance's first operation whose threshold is not
// initial (an instance that never leaves it counts as the run's length).
func firstLeave(cfg *simnet.Config, p simnet.Policy, initial time.Duration) ([]time.Duration, error) {
	n := max(cfg.Fleet.Instances, 1)
	first := make([]time.Duration, n)
	for i := range first {
		first[i] = -1
	}
	if _, err := simnet.Run(cfg, p, 0, simnet.RunOptions{OnCompleteInstance: func(inst int, r *hedging.Race, op *hedging.Operation) {
		if first[inst] < 0 && r.Threshold().Get() != initial {
			first[inst] = r.Start()
		}
	}}); err != nil {
		return nil, err
	}
	for i := range first {
		if first[i] < 0 {
			first[i] = cfg.Duration
		}
	}
	slices.Sort(first)
	return first, nil
}

// q11FleetView is the fleet section's view: fleet size N, the fleet's
// rate and each instance's, when the instances (and one client) left
// TPS §4.2's initial threshold (s, replication 0), and the figures of
// p99-tps and p99-dynamic for one client and the fleet.
type q11FleetView struct {
	N                                            int
	Rate, PerInstance                            float64
	LeaveOne, LeaveFirst, LeaveLast, LeaveMedian float64
	TPSOne, TPSFleet, DynOne, DynFleet           report.Figures
	AllMore                                      bool
}

// q11FinagleView is finagle-2pct's budget per instance against the fleet
// (backups per second) and its p99 for one client and the fleet.
type q11FinagleView struct {
	Min, Load, N, PerInstance    float64
	OneBudget, FleetBudget, Slow float64
	DriverDefault                string
	One, Fleet                   report.Figures
}

// merged is one policy's merged measurements of a run.
func (r *run) merged(policy string) *simnet.Stats {
	for _, p := range r.res.Policies {
		if p.Name == policy {
			return p.Merged
		}
	}
	panic("no policy " + policy)
}
