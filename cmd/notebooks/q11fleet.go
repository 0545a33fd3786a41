package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
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
	d.p("Every scenario above is one client. An application runs as a fleet, and every instance keeps its own threshold-policy state (latency window, warm-up, hedge budget), so a learned threshold warms up per instance, at the instance's rate. %s — the `cold-start` situation for %d instances at %g reads/s each (`[fleet] instances = %d`, reads assigned uniformly at random), against the same %g reads/s from one client (`fleet.instances = 1`). Cells are one client / the fleet.",
		fleet.setup(), n, rate/float64(n), n, rate)
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
	d.p("Mean threshold (ms) over the hedged reads of each %g s window, all replications:", width.Seconds())
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
	d.p("TPS §4.2 as written (`p99-tps`) hedges at its 1 s initial threshold until an instance holds 100 completed attempts in its window. One client at %g reads/s has them within a second and leaves 1 s at %.1f s (replication 0). In the fleet each instance reads %g times a second, and only its fast reads complete (a slow primary loses to its hedge and is cancelled), so each instance leaves 1 s on its own, between %.1f s and %.1f s (median %.1f s, replication 0). Until then its slow reads wait ~1 s: `p99-tps`'s p99 is %s ms in the fleet against %s ms for one client. The default `p99-dynamic` starts at its 50 ms floor and warms up on the largest observation, so its p99 is %s ms in the fleet and %s ms for one client.",
		rate, leaveOne[0].Seconds(), rate/float64(n), leave[0].Seconds(), leave[len(leave)-1].Seconds(), leave[len(leave)/2].Seconds(),
		ms(tpsFleet.P99), ms(tpsOne.P99), ms(dynFleet.P99), ms(dynOne.P99))

	allMore, who := true, "Every hedging policy hedges"
	for _, p := range fleet.res.Policies[1:] {
		allMore = allMore && fleet.fig(p.Name).HedgeRate > one.fig(p.Name).HedgeRate
	}
	if !allMore {
		who = "`p99-dynamic` hedges"
	}
	if dynFleet.HedgeRate > dynOne.HedgeRate && dynOne.Counters["breaker_trips"] > dynFleet.Counters["breaker_trips"] {
		d.p("%s a little more in the fleet (`p99-dynamic` %s against %s): the partition breaker is per instance too. One client's breakers saw every read of a partition and tripped %d times over the replications, routing those partitions straight to the alternate for a while; the fleet's, each seeing 1/%d of a partition's reads, tripped %d times (notebook 02).",
			who, pct(dynFleet.HedgeRate), pct(dynOne.HedgeRate), dynOne.Counters["breaker_trips"], n, dynFleet.Counters["breaker_trips"])
	}

	// Per-instance budgets: policies whose hedge rate moves with the fleet.
	var moved []string
	for _, p := range fleet.res.Policies {
		a, b := one.fig(p.Name), fleet.fig(p.Name)
		if math.Abs(b.HedgeRate-a.HedgeRate) > q11ErrMargin || worse(b, a, "p99_ms", b.P99, a.P99) || worse(a, b, "p99_ms", a.P99, b.P99) {
			moved = append(moved, fmt.Sprintf("`%s` (p99 %s → %s ms, hedge rate %s → %s)", p.Name, ms(a.P99), ms(b.P99), pct(a.HedgeRate), pct(b.HedgeRate)))
		}
	}
	d.p("Policies whose p99 differs significantly (by the scorecard's margin) or whose hedge rate moves by more than a point between one client and the fleet: %s.", joinOr(moved, "none"))
	if fo, ff := one.fig("finagle-2pct"), fleet.fig("finagle-2pct"); worse(fo, ff, "p99_ms", fo.P99, ff.P99) {
		slow := rate * fleet.cfg.Episodes[0].Fraction
		d.p("A hedge budget is per instance too, and so is Finagle's floor of %g backup a second: `finagle-2pct` earns %g%% of reads plus %g a second, %.0f backups a second for one client but %g × (%g%% × %g + %g) = %.0f for the fleet, against ~%.0f slow reads a second. One client runs out of budget and, while it is out, hedges no earlier than the %s ms driver default (p99 %s ms); the fleet's %d floors pay for its hedges (p99 %s ms).",
			q11FinagleMin, 100*q11FinagleLoad, q11FinagleMin, q11FinagleLoad*rate+q11FinagleMin, float64(n), 100*q11FinagleLoad, rate/float64(n), q11FinagleMin,
			float64(n)*(q11FinagleLoad*rate/float64(n)+q11FinagleMin), slow, ms(float64(hedging.DriverDefaultThreshold(fleet.cfg.Client.RequestTimeout).Get().Milliseconds())),
			ms(fo.P99), n, ms(ff.P99))
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
		if with[nm].lost > before[nm].lost {
			gained = append(gained, "`"+nm+"`")
		}
	}
	cands := slices.Clone(names[1:])
	slices.SortStableFunc(cands, func(a, b string) int {
		if c := with[a].lost - with[b].lost; c != 0 {
			return c
		}
		return len(with[a].ru) - len(with[b].ru)
	})
	verdict := fmt.Sprintf("the policy with the fewest losses would still be `%s`", rec)
	if cands[0] != rec {
		verdict = fmt.Sprintf("the policy with the fewest losses would become `%s` instead of `%s`", cands[0], rec)
	}
	best := names[1]
	for _, nm := range names[1:] {
		if figs[nm].P99 < figs[best].P99 {
			best = nm
		}
	}
	d.p("The scorecard above counts single-client scenarios only. Counted in it, `%s` would be a lost scenario for %s (the best p99 there is `%s`'s %s ms); %s, and `p99-dynamic` would lose %d scenarios instead of %d.",
		q11FleetScenario, joinOr(gained, "no policy"), best, ms(figs[best].P99), verdict, with["p99-dynamic"].lost, before["p99-dynamic"].lost)
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

// q11FleetNote is the recommendation's sentence on fleets.
func q11FleetNote() string {
	return strings.Join([]string{
		"and fleets of many clients hedging into one alternate at once, which these scenarios do not model",
		"(`" + q11FleetScenario + "` above models a fleet's per-instance warm-up, not its load on the alternate's replicas)",
	}, " ")
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
