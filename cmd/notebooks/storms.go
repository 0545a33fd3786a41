package main

// Notebook 05: hedging storms. A fleet hedges a partial slow-down of its
// primary into an alternate region that serves other tenants too; what
// that costs them, which hedge budget bounds it, and whether the system
// recovers when the slow-down ends.

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/threshold"
	"hedgelab/internal/report"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// stormScenario is the embedded scenario the notebook runs and varies.
const stormScenario = "hedging-storm"

// stormAlternate is the alternate replica's name in stormScenario.
const stormAlternate = "eastus2"

// stormLevels are the alternate's utilisation from its own tenants
// (background load / capacity) the notebook compares.
var stormLevels = []float64{0.60, 0.75, 0.85}

// stormTarget is the alternate's utilisation the budget sizing aims to stay
// under during a storm.
const stormTarget = 0.90

// stormSweepPolicies are the scenario's policies run at every background
// level.
var stormSweepPolicies = []string{"disabled", "static-50ms", "budget-5pct", "budget-5pct-burst1", "budget-20pct-burst1"}

// stormRetryPolicies are the scenario's policies run with retrying
// tenants: no hedging, unbudgeted, and the sized budget.
var stormRetryPolicies = []string{"disabled", "static-50ms", "budget-5pct-burst1"}

// stormRetries is how many times the retrying tenants retry a refused
// request.
const stormRetries = 3

// retrySpan is the longest time from a first refusal to the last of n
// retries: the sum of their longest backoffs (1.5 × the mean).
func retrySpan(n int) time.Duration {
	return time.Duration(1.5 * float64(simnet.DefaultBackgroundRetryBackoff) * float64(uint64(1)<<n-1))
}

// stormBreakerPolicies are the scenario's policies run with the breaker off.
var stormBreakerPolicies = []string{"static-50ms", "p99-dynamic", "budget-5pct", "budget-5pct-burst1"}

// stormQueuePolicies are the scenario's policies run without a reachable
// queue limit.
var stormQueuePolicies = []string{"static-50ms", "budget-5pct", "budget-5pct-burst1"}

// The scenario parameters the notebook varies (Scenario.WithParam paths);
// TestStormParamsApply checks that each changes the configuration.
const (
	stormParamBackground = "background.0.rate_per_s"
	stormParamQueueLimit = "replicas." + stormAlternate + ".queue_limit"
	stormParamBreaker    = "client.consecutive_hedge_win_threshold"
	stormParamInstances  = "fleet.instances"
	stormParamRetries    = "background.0.retries"
)

// stormBigFleet is the large fleet the per-instance bucket section runs
// (the scenario's fleet read rate over this many instances).
const stormBigFleet = 1000

// stormNoLimit is a queue limit the alternate never reaches (the largest a
// scenario accepts).
const stormNoLimit = 1_000_000

// breakerOff is a consecutive_hedge_win_threshold no partition reaches.
const breakerOff = math.MaxInt32

// polStaticBudget is static-50ms under a hedge budget of ratio alternates
// per operation with a bucket of burst tokens per instance, falling back to
// the driver default while it is spent, as the scenario file's
// `hedge_budget` / `hedge_budget_burst` build it. The name follows the
// scenario's: budget-<ratio>pct[-burst<burst>] (no suffix for
// the default burst of 100).
func polStaticBudget(ratio, burst float64, requestTimeout time.Duration) simnet.Policy {
	name := fmt.Sprintf("budget-%gpct", ratio*100)
	if burst != 100 {
		name += fmt.Sprintf("-burst%g", burst)
	}
	th := hedging.MustThreshold(50 * time.Millisecond)
	return simnet.Policy{Name: name, New: func() (hedging.AvailabilityStrategy, error) {
		b, err := threshold.NewBudget(threshold.Static{T: th}, threshold.BudgetConfig{Ratio: ratio, Burst: burst})
		if err != nil {
			return hedging.AvailabilityStrategy{}, err
		}
		return hedging.Hedging(hedging.NewPolicyStrategy(b)), nil
	}}
}

// own returns the scenario's own policies named names, in that order.
func own(name string, names ...string) ([]simnet.Policy, error) {
	sc, err := scenarios.Get(name)
	if err != nil {
		return nil, err
	}
	_, pols, err := sc.Config()
	if err != nil {
		return nil, err
	}
	var out []simnet.Policy
	for _, n := range names {
		i := slices.IndexFunc(pols, func(p simnet.Policy) bool { return p.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("%s: no policy %q", name, n)
		}
		out = append(out, pols[i])
	}
	return out, nil
}

// stormFig is one policy's storm figures: the client's, the alternate's
// and the recovery.
type stormFig struct {
	F report.Figures
	// slowP99 is the client's p99 over the operations started during the
	// slow-down (timeline windows pooled, 2 significant digits); over100
	// the share of all operations slower than 100 ms.
	SlowP99, Over100 float64
	// hedgeSlow is the hedge rate of the operations started during the
	// slow-down, hedgeLate of those started in its second half.
	HedgeSlow, HedgeLate float64
	// utilRun is the alternate's utilisation over the run; utilSlow and
	// utilMax the mean and the largest of its windows during the
	// slow-down; satS the seconds of the slow-down in windows at >= 99%.
	UtilRun, UtilSlow, UtilMax, SatS float64
	QueueP99, BgP99, BgP999          float64
	// refusedC and refusedB are the alternate's refusals per run (client
	// attempts, background tries); trips the breaker trips per run;
	// retries and gaveUp the tenants' retries and requests refused on
	// every try per run (0 unless they retry).
	RefusedC, RefusedB, Trips, Retries, GaveUp float64
	// bgOps is the tenants' requests served per run.
	BgOps float64
	// backClient, backAlt and backTen are the seconds from the end of the
	// slow-down to the end of the first window from which every later
	// window is back in the baseline band (see recovered) for the client's
	// windowed p99, the alternate's window utilisation and its tenants'
	// p99 by window of arrival; NaN when never.
	BackClient, BackAlt, BackTen float64
}

// stormFigures computes policy's storm figures of run r.
func stormFigures(r *run, policy string) stormFig {
	var p *simnet.Stats
	for _, pr := range r.res.Policies {
		if pr.Name == policy {
			p = pr.Merged
		}
	}
	if p == nil {
		panic("no policy " + policy)
	}
	f := r.fig(policy)
	ep := r.cfg.Episodes[0]
	w := p.WindowWidth
	reps := float64(r.reps)
	out := stormFig{F: f, Over100: shareAbove(p, 100), Trips: float64(p.BreakerTrips) / reps}
	slow := simnet.NewLatencyHistogram()
	var p99s []float64
	var ops, hedged, lateOps, lateHedged int64
	for i, win := range p.Timeline {
		from := time.Duration(i) * w
		if from >= ep.Start && from < ep.End {
			slow.Merge(win.Latency)
			ops += win.Ops
			hedged += win.Hedged
			if from >= (ep.Start+ep.End)/2 {
				lateOps += win.Ops
				lateHedged += win.Hedged
			}
		}
		p99s = append(p99s, float64(win.Latency.ValueAtQuantile(99))/1000)
	}
	out.SlowP99 = float64(slow.ValueAtQuantile(99)) / 1000
	out.HedgeSlow = float64(hedged) / float64(max(ops, 1))
	out.HedgeLate = float64(lateHedged) / float64(max(lateOps, 1))
	alt := slices.IndexFunc(f.Replicas, func(x report.ReplicaFigures) bool { return x.Replica == stormAlternate })
	rf := f.Replicas[alt]
	out.UtilRun, out.QueueP99, out.BgP99, out.BgP999 = rf.Utilisation, rf.QueueP99, rf.BackgroundP99, rf.BackgroundP999
	out.RefusedC, out.RefusedB = float64(rf.RefusedClient)/reps, float64(rf.RefusedBackground)/reps
	out.Retries, out.GaveUp, out.BgOps = float64(rf.BackgroundRetries)/reps, float64(rf.BackgroundGaveUp)/reps, float64(rf.BackgroundOps)/reps
	n := 0
	for i, u := range rf.WindowUtilisation {
		from := time.Duration(i) * w
		if from >= ep.Start && from < ep.End {
			out.UtilSlow += u
			out.UtilMax = max(out.UtilMax, u)
			if u >= 0.99 {
				out.SatS += w.Seconds()
			}
			n++
		}
	}
	out.UtilSlow /= float64(n)
	out.BackClient = recovered(p99s, w, ep.Start, ep.End, func(base float64) float64 { return 1.1 * base })
	out.BackAlt = recovered(rf.WindowUtilisation, w, ep.Start, ep.End, func(base float64) float64 { return base + 0.02 })
	out.BackTen = recovered(rf.WindowBackgroundP99, w, ep.Start, ep.End, func(base float64) float64 { return 1.1 * base })
	return out
}

// recovered returns the seconds from end to the end of the first window
// (starting at or after end) from which every later window's value is at
// most band(baseline), baseline the largest value of the windows that end
// by start; NaN when no such window exists.
func recovered(vals []float64, w, start, end time.Duration, band func(float64) float64) float64 {
	base := math.Inf(-1)
	first := int(end / w)
	for i, v := range vals {
		if time.Duration(i+1)*w <= start {
			base = max(base, v)
		}
	}
	limit := band(base)
	k := len(vals)
	for i := len(vals) - 1; i >= first; i-- {
		if !(vals[i] <= limit) {
			break
		}
		k = i
	}
	if k == len(vals) {
		return math.NaN()
	}
	return (time.Duration(k+1)*w - end).Seconds()
}

// shareAbove is the share of p's operations slower than ms.
func shareAbove(p *simnet.Stats, ms float64) float64 {
	var above int64
	for _, b := range p.Latency.Distribution() {
		if float64(b.From)/1000 > ms {
			above += b.Count
		}
	}
	return float64(above) / float64(max(p.Latency.TotalCount(), 1))
}

func secs(v float64) string {
	if math.IsNaN(v) {
		return "not by the end"
	}
	return fmt.Sprintf("%g", v)
}

// backs joins recovery times with " / ".
func backs(vs ...float64) string {
	var out []string
	for _, v := range vs {
		out = append(out, secs(v))
	}
	return strings.Join(out, " / ")
}

func count(v float64) string { return fmt.Sprintf("%.0f", v) }

func util(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

var stormClientHeader = []string{"policy", "p99 ms [95% CI]", "p99.9 ms [95% CI]", "p99 in the slow-down", "reads > 100 ms", "hedge rate (in the slow-down)", "RU × [95% CI]", "client back (s)"}

func stormClientRow(s stormFig) []string {
	f := s.F
	return []string{f.Policy, withCI(f, "p99_ms", f.P99, ms), withCI(f, "p999_ms", f.P999, ms), ms(s.SlowP99), pct(s.Over100),
		pct(f.HedgeRate) + " (" + pct(s.HedgeSlow) + ")", withCI(f, "ru_multiplier", f.RUMultiplier, ru), secs(s.BackClient)}
}

var stormAltHeader = []string{"policy", "utilisation (run)", "in the slow-down: mean / max window", "s at ≥ 99%", "queue p99", "tenants' p99 ms", "tenants' p99.9 ms", "refused per run: client / tenants", "breaker trips per run", "back (s): alternate / tenants"}

func stormAltRow(s stormFig) []string {
	return []string{s.F.Policy, util(s.UtilRun), util(s.UtilSlow) + " / " + util(s.UtilMax), fmt.Sprintf("%g", s.SatS), count(s.QueueP99),
		ms(s.BgP99), ms(s.BgP999), count(s.RefusedC) + " / " + count(s.RefusedB), count(s.Trips), backs(s.BackAlt, s.BackTen)}
}

// stormSetup is what the notebook derives from the scenario's
// configuration: the alternate's capacity and the storm's load.
type stormSetup struct {
	Servers         int
	MeanMs          float64 // the alternate's mean service time
	Capacity        float64 // reads/s: servers / mean service
	Background      float64 // reads/s of its own tenants
	Rate, Fraction  float64 // the fleet's reads/s; the slow share of the primary's reads
	Instances       int
	Start, End      time.Duration
	StormLoad       float64 // fraction × rate / capacity: every slow read hedged
	QueueLimit      int
	RequestTimeout  time.Duration
	AlternateRTT    float64
	SlowAddMs       float64
	WindowS         float64
	DurationS       float64
	ReplicationsRun int
}

func newStormSetup(r *run) (stormSetup, error) {
	cfg := r.cfg
	var st stormSetup
	i := slices.IndexFunc(cfg.Replicas, func(x simnet.Replica) bool { return x.Name == stormAlternate })
	if i < 0 || len(cfg.Background) != 1 || len(cfg.Episodes) != 1 {
		return st, fmt.Errorf("%s: want replica %s, one background source and one episode", stormScenario, stormAlternate)
	}
	rep := cfg.Replicas[i]
	st.Servers, st.QueueLimit = rep.Servers, rep.QueueLimit
	st.MeanMs = rep.Default.Mean()
	st.Capacity = float64(rep.Servers) / st.MeanMs * 1000
	st.Background = cfg.Background[0].RatePerSec
	st.Rate, st.Fraction = cfg.Workload.RatePerSec, cfg.Episodes[0].Fraction
	st.Instances = max(cfg.Fleet.Instances, 1)
	st.Start, st.End = cfg.Episodes[0].Start, cfg.Episodes[0].End
	st.StormLoad = st.Fraction * st.Rate / st.Capacity
	st.RequestTimeout = cfg.Client.RequestTimeout
	st.AlternateRTT = cfg.RTTMs[cfg.ClientRegion][rep.Region]
	st.SlowAddMs = cfg.Episodes[0].AddMs
	st.WindowS = cfg.TimelineWindow.Seconds()
	st.DurationS = cfg.Duration.Seconds()
	st.ReplicationsRun = r.reps
	return st, nil
}

// maxRatio is the largest hedge budget (alternates per operation) whose
// load keeps the alternate under stormTarget at background utilisation rho.
func (st stormSetup) maxRatio(rho float64) float64 {
	return max(stormTarget-rho, 0) * st.Capacity / st.Rate
}

func storms(d *doc) error {
	d.say("storms/question", nil)
	main, err := d.simulate(stormScenario, nil)
	if err != nil {
		return err
	}
	st, err := newStormSetup(main)
	if err != nil {
		return err
	}
	rhoMain := st.Background / st.Capacity
	sv := stormView{St: st, Rho: rhoMain, Setup: main.setupLine(), Reps: report.Replications(main.reps),
		SlowShare:     100 * (st.End - st.Start).Seconds() / st.DurationS,
		DriverDefault: fmt.Sprintf("%g s", hedging.DriverDefaultThreshold(st.RequestTimeout).Get().Seconds()),
	}
	d.check(claim{"the driver default is above every slow read (\"which the slow reads never reach\")", func() error {
		if dd := hedging.DriverDefaultThreshold(st.RequestTimeout).Get(); float64(dd.Milliseconds()) <= st.SlowAddMs {
			return failf("driver default %s, slow reads +%g ms", dd, st.SlowAddMs)
		}
		return nil
	}})
	d.say("storms/setup", sv)
	d.say("storms/fleet", sv)
	d.say("storms/shortcuts", sv)
	d.say("storms/method", sv)

	// The storm at the scenario's own level.
	d.p("## The storm: %d instances, alternate at %.0f%% for its own tenants", st.Instances, 100*rhoMain)
	sub, err := d.charts(main, stormScenario)
	if err != nil {
		return err
	}
	figs := map[string]stormFig{}
	var ctab, atab [][]string
	for _, p := range main.res.Policies {
		s := stormFigures(main, p.Name)
		figs[p.Name] = s
		ctab = append(ctab, stormClientRow(s))
		atab = append(atab, stormAltRow(s))
	}
	d.say("storms/client-figures", nil)
	d.table(stormClientHeader, ctab)
	d.say("storms/alternate-figures", nil)
	d.table(stormAltHeader, atab)
	d.img(stormScenario+" replicas", sub+"/replicas.svg")
	d.img(stormScenario+" timeline", sub+"/timeline.svg")
	d.img(stormScenario+" hedge rate", sub+"/hedge_rate.svg")
	d.img(stormScenario+" cost", sub+"/cost.svg")
	d.say("storms/reading-charts", nil)
	d.say("storms/policy-names", sv)
	// Background levels.
	d.p("## How much headroom does the alternate need?")
	d.say("storms/levels", struct {
		stormView
		Levels string
	}{sv, joinPct(stormLevels)})
	var levels []stormLevel
	for _, rho := range stormLevels {
		if math.Abs(rho-rhoMain) < 0.005 {
			levels = append(levels, stormLevel{rhoMain, figs})
			continue
		}
		pols, err := own(stormScenario, stormSweepPolicies...)
		if err != nil {
			return err
		}
		r, err := d.simulate(stormScenario, pols, param{stormParamBackground, math.Round(rho * st.Capacity)})
		if err != nil {
			return err
		}
		m := map[string]stormFig{}
		for _, p := range r.res.Policies {
			m[p.Name] = stormFigures(r, p.Name)
		}
		levels = append(levels, stormLevel{rho, m})
	}
	var ltab [][]string
	for _, l := range levels {
		for _, n := range stormSweepPolicies {
			s := l.Figs[n]
			ltab = append(ltab, []string{fmt.Sprintf("%.0f%% (+%.1f%%)", 100*l.Rho, 100*st.StormLoad), n, withCI(s.F, "p99_ms", s.F.P99, ms), pct(s.Over100), pct(s.F.HedgeRate),
				util(s.UtilSlow) + " / " + util(s.UtilMax), fmt.Sprintf("%g", s.SatS), ms(s.BgP99), ms(s.BgP999), count(s.RefusedC) + " / " + count(s.RefusedB), backs(s.BackClient, s.BackAlt, s.BackTen)})
		}
	}
	d.table([]string{"tenants' load (+ every slow read hedged)", "policy", "client p99 ms [95% CI]", "reads > 100 ms", "hedge rate", "alternate in the slow-down: mean / max", "s at ≥ 99%", "tenants' p99 ms", "tenants' p99.9 ms", "refused per run: client / tenants", "back (s): client / alternate / tenants"}, ltab)

	// The queue limit.
	d.p("## The alternate's queue limit")
	d.say("storms/queue-limit", struct {
		stormView
		NoLimit int
	}{sv, stormNoLimit})
	pols, err := own(stormScenario, stormQueuePolicies...)
	if err != nil {
		return err
	}
	unb, err := d.simulate(stormScenario, pols, param{stormParamQueueLimit, stormNoLimit})
	if err != nil {
		return err
	}
	var qtab [][]string
	unbounded := map[string]stormFig{}
	for _, n := range stormQueuePolicies {
		unbounded[n] = stormFigures(unb, n)
		for _, c := range []struct {
			label string
			s     stormFig
		}{{fmt.Sprintf("%d", st.QueueLimit), figs[n]}, {"none reached", unbounded[n]}} {
			s := c.s
			qtab = append(qtab, []string{n, c.label, withCI(s.F, "p99_ms", s.F.P99, ms), pct(s.Over100), pct(s.F.HedgeRate), withCI(s.F, "ru_multiplier", s.F.RUMultiplier, ru), util(s.UtilSlow) + " / " + util(s.UtilMax), count(s.QueueP99), ms(s.BgP99), ms(s.BgP999), count(s.RefusedC) + " / " + count(s.RefusedB), backs(s.BackClient, s.BackAlt, s.BackTen)})
		}
	}
	d.table([]string{"policy", "queue limit", "client p99 ms [95% CI]", "reads > 100 ms", "hedge rate", "RU × [95% CI]", "alternate in the slow-down: mean / max", "queue p99", "tenants' p99 ms", "tenants' p99.9 ms", "refused per run: client / tenants", "back (s): client / alternate / tenants"}, qtab)

	// The breaker.
	d.p("## The partition breaker on and off")
	d.say("storms/breaker", struct {
		stormView
		Probe      time.Duration
		N, Off     int
		Partitions int
		PerPair    float64
	}{sv, hedging.DefaultProbeInterval, hedging.DefaultConsecutiveHedgeWinThreshold, breakerOff, main.cfg.Workload.Partitions,
		st.Rate / float64(main.cfg.Workload.Partitions*st.Instances)})
	pols, err = own(stormScenario, stormBreakerPolicies...)
	if err != nil {
		return err
	}
	off, err := d.simulate(stormScenario, pols, param{stormParamBreaker, breakerOff})
	if err != nil {
		return err
	}
	var btab [][]string
	for _, n := range stormBreakerPolicies {
		for _, c := range []struct {
			label string
			s     stormFig
		}{{"on (5)", figs[n]}, {"off", stormFigures(off, n)}} {
			s := c.s
			btab = append(btab, []string{n, c.label, count(s.Trips), withCI(s.F, "p99_ms", s.F.P99, ms), pct(s.Over100), pct(s.F.HedgeRate), util(s.UtilSlow) + " / " + util(s.UtilMax), ms(s.BgP99), count(s.RefusedC) + " / " + count(s.RefusedB)})
		}
	}
	d.table([]string{"policy", "breaker", "trips per run", "client p99 ms [95% CI]", "reads > 100 ms", "hedge rate", "alternate in the slow-down: mean / max", "tenants' p99 ms", "refused per run: client / tenants"}, btab)

	// Fleet size and the per-instance bucket.
	d.p("## %d instances: the budget's bucket is per instance", stormBigFleet)
	d.say("storms/fleet-size", struct {
		Pools       string
		Big         int
		PerInstance float64
	}{stormPoolLines(st, []int{st.Instances, stormBigFleet}, []float64{1, 10, 100}, 0.05), stormBigFleet, st.Rate / stormBigFleet})
	var fleetRows [][]string
	fleet := map[string]stormFig{}
	for _, n := range []int{st.Instances, stormBigFleet} {
		var pols []simnet.Policy
		if n == st.Instances {
			pols = []simnet.Policy{polStaticBudget(0.05, 10, st.RequestTimeout)}
		} else {
			base, err := own(stormScenario, "static-50ms")
			if err != nil {
				return err
			}
			pols = append(base, polStaticBudget(0.05, 100, st.RequestTimeout), polStaticBudget(0.05, 10, st.RequestTimeout), polStaticBudget(0.05, 1, st.RequestTimeout))
		}
		r, err := d.simulate(stormScenario, pols, param{stormParamInstances, float64(n)})
		if err != nil {
			return err
		}
		if n != st.Instances {
			if _, err := d.charts(r, fmt.Sprintf("%s-%d", stormScenario, stormBigFleet)); err != nil {
				return err
			}
		}
		got := map[string]stormFig{}
		for _, p := range r.res.Policies {
			got[p.Name] = stormFigures(r, p.Name)
		}
		if n == st.Instances {
			for _, k := range []string{"static-50ms", "budget-5pct"} {
				got[k] = figs[k]
			}
			got["budget-5pct-burst1"] = figs["budget-5pct-burst1"]
		}
		for _, c := range []struct {
			name  string
			burst float64
		}{{"static-50ms", 0}, {"budget-5pct", 100}, {"budget-5pct-burst10", 10}, {"budget-5pct-burst1", 1}} {
			s := got[c.name]
			fleet[fmt.Sprintf("%d %s", n, c.name)] = s
			pool := "-"
			if c.burst > 0 {
				pool = fmt.Sprintf("%.0f", float64(n)*c.burst)
			}
			fleetRows = append(fleetRows, []string{fmt.Sprintf("%d", n), c.name, pool, withCI(s.F, "p99_ms", s.F.P99, ms), pct(s.Over100), pct(s.F.HedgeRate),
				util(s.UtilSlow) + " / " + util(s.UtilMax), fmt.Sprintf("%g", s.SatS), ms(s.BgP99), count(s.RefusedC) + " / " + count(s.RefusedB), backs(s.BackClient, s.BackAlt, s.BackTen)})
		}
	}
	d.table([]string{"instances", "policy", "fleet's tokens N × burst", "client p99 ms [95% CI]", "reads > 100 ms", "hedge rate", "alternate in the slow-down: mean / max", "s at ≥ 99%", "tenants' p99 ms", "refused per run: client / tenants", "back (s): client / alternate / tenants"}, fleetRows)
	d.img(fmt.Sprintf("%s with %d instances: replicas", stormScenario, stormBigFleet), fmt.Sprintf("%s-%d/replicas.svg", stormScenario, stormBigFleet))

	// Tenants that retry.
	retry, err := stormRetrySection(d, st, figs)
	if err != nil {
		return err
	}
	return stormAnswer(d, st, figs, levels, unbounded, off, fleet, retry)
}

// stormRetrySection runs the storm at the scenario's level with tenants
// that retry their refused requests and writes its section; it returns
// the figures by policy.
func stormRetrySection(d *doc, st stormSetup, figs map[string]stormFig) (map[string]stormFig, error) {
	rho := st.Background / st.Capacity
	d.p("## Tenants that retry")
	d.say("storms/retry-intro", struct {
		Rho, BackoffMs float64
		Retries        int
	}{rho, simnet.DefaultBackgroundRetryBackoff.Seconds() * 1000, stormRetries})
	pols, err := own(stormScenario, stormRetryPolicies...)
	if err != nil {
		return nil, err
	}
	r, err := d.simulate(stormScenario, pols, param{stormParamRetries, stormRetries})
	if err != nil {
		return nil, err
	}
	out := map[string]stormFig{}
	var rows [][]string
	for _, n := range stormRetryPolicies {
		out[n] = stormFigures(r, n)
		for _, c := range []struct {
			label string
			s     stormFig
		}{{"dropped", figs[n]}, {fmt.Sprintf("%d retries", stormRetries), out[n]}} {
			s := c.s
			rows = append(rows, []string{n, c.label, withCI(s.F, "p99_ms", s.F.P99, ms), pct(s.Over100), util(s.UtilSlow) + " / " + util(s.UtilMax), fmt.Sprintf("%g", s.SatS),
				ms(s.BgP99), ms(s.BgP999), count(s.RefusedC) + " / " + count(s.RefusedB), count(s.Retries) + " / " + count(s.GaveUp), backs(s.BackClient, s.BackAlt, s.BackTen)})
		}
	}
	d.table([]string{"policy", "tenants' refused requests", "client p99 ms [95% CI]", "reads > 100 ms", "alternate in the slow-down: mean / max", "s at ≥ 99%", "tenants' p99 ms", "tenants' p99.9 ms", "refused tries per run: client / tenants", "tenants' retries / gave up per run", "back (s): client / alternate / tenants"}, rows)
	// What the table shows, from its figures.
	s, b := out["static-50ms"], out["budget-5pct-burst1"]
	var back []string
	worst := 0.0
	stuck := false
	for _, n := range stormRetryPolicies {
		x := out[n]
		for _, v := range []float64{x.BackClient, x.BackAlt, x.BackTen} {
			if math.IsNaN(v) {
				stuck = true
			} else {
				worst = max(worst, v)
			}
		}
		back = append(back, fmt.Sprintf("`%s` %s s", n, backs(x.BackClient, x.BackAlt, x.BackTen)))
	}
	s0 := figs["static-50ms"]
	d.check(claim{"retrying tenants: static-50ms saturated the alternate as long either way", func() error {
		if s.SatS != s0.SatS {
			return failf("%g s at >= 99%% with retries, %g s without", s.SatS, s0.SatS)
		}
		return nil
	}})
	d.say("storms/retry", struct {
		Stuck    bool
		Worst    float64
		Back     []string
		S, S0, B stormFig
		Retries  int
		Span     time.Duration
	}{stuck || worst > 60, worst, back, s, s0, b, stormRetries, retrySpan(stormRetries)})
	return out, nil
}

// stormLevel is one background level's figures by policy.
type stormLevel struct {
	Rho  float64
	Figs map[string]stormFig
}

// stormPoolLines describes how long the fleet's token pool lasts for each
// fleet size and burst at budget ratio r.
func stormPoolLines(st stormSetup, sizes []int, bursts []float64, r float64) string {
	var out []string
	for _, n := range sizes {
		for _, b := range bursts {
			out = append(out, fmt.Sprintf("%d × %g tokens last %.1f s", n, b, float64(n)*b/((st.Fraction-r)*st.Rate)))
		}
	}
	return strings.Join(out, ", ")
}

// joinAnd joins xs with commas and a final "and"; none when empty.
func joinAnd(xs []string, none string) string {
	switch len(xs) {
	case 0:
		return none
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// joinPct renders fractions as "60%, 75% and 85%".
func joinPct(xs []float64) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprintf("%.0f%%", 100*x))
	}
	return joinAnd(s, "")
}

// stormAnswer writes the notebook's answer from its tables: figs is the
// storm at the scenario's level, levels the background sweep, unbounded
// the storm without a reachable queue limit, off the run with the breaker
// off, fleet the fleet-size runs keyed "N policy", retry the storm with
// retrying tenants.
func stormAnswer(d *doc, st stormSetup, figs map[string]stormFig, levels []stormLevel, unbounded map[string]stormFig, off *run, fleet, retry map[string]stormFig) error {
	d.p("## Answer")
	top, lo, mid := levels[len(levels)-1], levels[0], levels[1]
	small, big := st.Instances, stormBigFleet
	key := func(n int, policy string) string { return fmt.Sprintf("%d %s", n, policy) }
	v := stormAnswerView{
		St: st, Target: stormTarget, Top: top, Low: lo, Mid: mid,
		Off: figs["disabled"], Static: figs["static-50ms"], LowStatic: lo.Figs["static-50ms"], MidStatic: mid.Figs["static-50ms"], MidOff: mid.Figs["disabled"],
		B5: figs["budget-5pct"], B5B1: figs["budget-5pct-burst1"], B20: figs["budget-20pct"], B20B1: figs["budget-20pct-burst1"],
		TopRatio: st.maxRatio(top.Rho), BurstVerdict: burstVerdict(top.Rho, figs, levels, unbounded, fleet, retry),
		Spare: 1 - top.Rho, MaxFleet: (1 - top.Rho) * st.Capacity * 2,
		RatioLines: maxRatioLines(st, levels), OneToken: oneTokenLines(st, top.Rho, figs),
		SlowS: (st.End - st.Start).Seconds(), Small: small, Big: big,
		PoolS:      float64(big) * 100 / ((st.Fraction - 0.05) * st.Rate),
		Fleet1000:  fleet[key(big, "budget-5pct")],
		Sat100x100: fleet[key(small, "budget-5pct")].SatS, Sat1000x10: fleet[key(big, "budget-5pct-burst10")].SatS,
		Peak100x10: fleet[key(small, "budget-5pct-burst10")].UtilMax, Peak1000x1: fleet[key(big, "budget-5pct-burst1")].UtilMax,
		Unbounded: unbounded["static-50ms"],
	}
	v.OverTarget = overTarget(v.Peak100x10, v.Peak1000x1)
	v.BigPool = float64(big) * 100
	v.BurstSmall, v.BurstBig = math.Floor(v.MaxFleet/float64(small)), math.Floor(v.MaxFleet/float64(big))

	// In short: the levels at which unbudgeted hedging neither saturated
	// the alternate nor had a tenant refused.
	for _, l := range levels {
		if sf := l.Figs["static-50ms"]; sf.SatS == 0 && sf.RefusedB == 0 {
			v.OkLoad = max(v.OkLoad, l.Rho+st.StormLoad)
			v.OkCost = max(v.OkCost, sf.BgP99-l.Figs["disabled"].BgP99)
			v.OkP99 = max(v.OkP99, sf.F.P99)
			v.OkLevels = append(v.OkLevels, fmt.Sprintf("%.0f%%", 100*l.Rho))
			v.HeadroomRho = max(v.HeadroomRho, l.Rho)
		}
	}
	d.say("storms/in-short", v)

	// When: the levels at which static-50ms saturates the alternate.
	for _, l := range levels {
		dis, s := l.Figs["disabled"], l.Figs["static-50ms"]
		desc := fmt.Sprintf("%.0f%% (%.0f%% + %.1f%%: tenants' p99 %s → %s ms, p99.9 %s → %s ms, %s s at ≥ 99%%, %s tenants' requests refused per run)",
			100*l.Rho, 100*l.Rho, 100*st.StormLoad, ms(dis.BgP99), ms(s.BgP99), ms(dis.BgP999), ms(s.BgP999), fmt.Sprintf("%g", s.SatS), count(s.RefusedB))
		if s.SatS > 0 || s.RefusedB > 0 || s.BgP99 > 2*dis.BgP99 {
			v.Needed = append(v.Needed, desc)
		} else {
			v.NotNeeded = append(v.NotNeeded, desc)
		}
	}
	d.say("storms/when", v)
	d.check(claim{"what size: the large fleet's default pool outlasts the slow-down and equals static-50ms", func() error {
		if v.PoolS <= v.SlowS {
			return failf("%d × 100 tokens last %.1f s, the slow-down %g s", big, v.PoolS, v.SlowS)
		}
		if a, b := v.Fleet1000, fleet[key(big, "static-50ms")]; a.BgP99 != b.BgP99 || a.F.HedgeRate != b.F.HedgeRate {
			return failf("budget-5pct with %d instances: tenants' p99 %s ms, hedge rate %s; static-50ms %s ms, %s", big, ms(a.BgP99), pct(a.F.HedgeRate), ms(b.BgP99), pct(b.F.HedgeRate))
		}
		return nil
	}}, claim{"what size: the equal pools peaked without refusals", func() error {
		for _, k := range []string{key(small, "budget-5pct-burst10"), key(big, "budget-5pct-burst1")} {
			if fleet[k].RefusedB > 0 || fleet[k].RefusedC > 0 {
				return failf("%s: %s / %s refused per run", k, count(fleet[k].RefusedC), count(fleet[k].RefusedB))
			}
		}
		return nil
	}})
	d.say("storms/what-size", v)

	// Where the recommendation loses.
	v.BudgetP99 = math.Inf(1)
	for _, l := range levels[:len(levels)-1] {
		v.TenantsDelta = max(v.TenantsDelta, l.Figs["static-50ms"].BgP99-l.Figs["disabled"].BgP99)
		for k, s := range l.Figs {
			if strings.Contains(k, "budget") {
				v.BudgetP99 = min(v.BudgetP99, s.F.P99)
			}
		}
	}
	// How far the budgets' p99 is from no hedging's, at every level; a
	// budget whose pool outlasted the slow-down is named as the exception.
	for _, l := range levels {
		for k, s := range l.Figs {
			if strings.Contains(k, "budget") {
				v.BudgetGap = max(v.BudgetGap, l.Figs["disabled"].F.P99-s.F.P99)
			}
		}
	}
	if fb := v.Fleet1000; figs["disabled"].F.P99-fb.F.P99 > v.BudgetGap {
		v.BudgetExc = fmt.Sprintf(" with %d instances (with %d, `budget-5pct`'s pool outlasted the slow-down and its p99 was %s ms, `static-50ms`'s)", small, big, ms(fb.F.P99))
	}
	d.say("storms/loses", v)

	// The queue limit.
	v.Useless = v.Unbounded.F.P99 > 0.95*v.Off.F.P99 && v.Unbounded.BgP99 > v.Static.BgP99
	d.say("storms/queue-answer", v)

	// Breaker and recovery.
	bv := struct {
		stormAnswerView
		Worst, RefusedOn, RefusedOff, Rel, PerPair, Moved float64
		Refusals                                          string
		N                                                 int
		Probe                                             time.Duration
	}{stormAnswerView: v, N: hedging.DefaultConsecutiveHedgeWinThreshold, Probe: hedging.DefaultProbeInterval}
	for _, n := range stormBreakerPolicies {
		o := stormFigures(off, n)
		bv.Worst = max(bv.Worst, math.Abs(o.BgP99-figs[n].BgP99))
		if o.RefusedB > 0 {
			if rel := figs[n].RefusedB/o.RefusedB - 1; math.Abs(rel) > 0.1 && math.Abs(rel) > math.Abs(bv.Rel) {
				bv.Rel, bv.Refusals, bv.RefusedOn, bv.RefusedOff = rel, n, figs[n].RefusedB, o.RefusedB
			}
		}
	}
	bv.PerPair = st.Rate / float64(off.cfg.Workload.Partitions*st.Instances)
	bv.Moved = bv.PerPair * hedging.DefaultProbeInterval.Seconds()
	d.say("storms/breaker-answer", bv)

	check := func(s stormFig) {
		for _, x := range []float64{s.BackClient, s.BackAlt, s.BackTen} {
			if math.IsNaN(x) {
				v.Metastable = true
			} else {
				v.Slowest = max(v.Slowest, x)
			}
		}
	}
	for _, l := range levels {
		for _, s := range l.Figs {
			check(s)
		}
	}
	for _, m := range []map[string]stormFig{fleet, unbounded, retry} {
		for _, s := range m {
			check(s)
		}
	}
	v.Retries, v.Span = stormRetries, retrySpan(stormRetries)
	v.RetryFold = retry["static-50ms"].RefusedB / max(figs["static-50ms"].RefusedB, 1)
	v.Drain = time.Duration(float64(st.QueueLimit) / ((1 - top.Rho) * st.Capacity) * float64(time.Second)).Round(10 * time.Millisecond)
	d.say("storms/recovery", v)
	d.check(claim{"the client's p99 was never worse than without hedging (storm levels)", func() error {
		for _, l := range levels {
			off := l.Figs["disabled"]
			for k, s := range l.Figs {
				if better(off.F, s.F, "p99_ms", off.F.P99, s.F.P99) {
					return failf("at %.0f%% %s's p99 %s ms against %s ms without hedging", 100*l.Rho, k, ms(s.F.P99), ms(off.F.P99))
				}
			}
		}
		return nil
	}})
	d.say("storms/watch", v)
	return nil
}

// stormView is the setup paragraphs' view: the scenario's setup, the
// alternate's utilisation from its own tenants (Rho), the run's setup line
// and replications, the share of the run that is the slow-down (%) and the
// driver default threshold.
type stormView struct {
	St            stormSetup
	Rho           float64
	Setup         setupView
	Reps          string
	SlowShare     float64
	DriverDefault string
}

// stormAnswerView is the answer's view: the setup, the background levels
// (Low, Mid, Top), the storm's figures by policy at the scenario's level
// (Off, Static, B5, B5B1, B20, B20B1), the fleet-size runs (Small and Big
// instances) and every figure the answer derives from them.
type stormAnswerView struct {
	St                                      stormSetup
	Target                                  float64
	Top, Low, Mid                           stormLevel
	Off, Static, LowStatic, MidStatic       stormFig
	MidOff, B5, B5B1, B20, B20B1, Unbounded stormFig
	Fleet1000                               stormFig
	OkLoad, OkCost, OkP99, HeadroomRho      float64
	OkLevels, Needed, NotNeeded             []string
	TopRatio                                float64
	BurstVerdict, RatioLines, OneToken      string
	Spare, MaxFleet, SlowS, PoolS           float64
	Small, Big                              int
	BigPool, BurstSmall, BurstBig           float64
	Sat100x100, Sat1000x10                  float64
	Peak100x10, Peak1000x1                  float64
	OverTarget, BudgetExc                   string
	BudgetP99, BudgetGap, TenantsDelta      float64
	Useless, Metastable                     bool
	Slowest, RetryFold                      float64
	Retries                                 int
	Span, Drain                             time.Duration
}

// maxRatioLines lists the largest budget ratio for each background level.
func maxRatioLines(st stormSetup, levels []stormLevel) string {
	var out []string
	for _, l := range levels {
		out = append(out, fmt.Sprintf("%.1f%% at ρ = %.0f%%", 100*st.maxRatio(l.Rho), 100*l.Rho))
	}
	return strings.Join(out, ", ")
}

// stormOneTokenRatios are the budget ratios the storm runs with a
// one-token bucket (policies "budget-<pct>pct-burst1").
var stormOneTokenRatios = []float64{0.02, 0.05, 0.10, 0.20}

// oneTokenLines compares the one-token budgets at background level rho
// (figs) with the ratio bound st.maxRatio(rho): their largest window, the
// tenants' p99 and refusals, and whether the bound separated the budgets
// that stayed under stormTarget from those that did not.
func oneTokenLines(st stormSetup, rho float64, figs map[string]stormFig) string {
	bound := st.maxRatio(rho)
	var names, peaks, p99s []string
	refused := 0.0
	separates, under, over := true, 0, 0
	for _, r := range stormOneTokenRatios {
		s := figs[fmt.Sprintf("budget-%.0fpct-burst1", 100*r)]
		names = append(names, fmt.Sprintf("%.0f%%", 100*r))
		peaks = append(peaks, util(s.UtilMax))
		p99s = append(p99s, ms(s.BgP99))
		refused += s.RefusedB
		if r <= bound {
			under++
		} else {
			over++
		}
		if (r <= bound) != (s.UtilMax < stormTarget) {
			separates = false
		}
	}
	out := fmt.Sprintf("At %.0f%% (bound %.1f%%) the one-token budgets of %s peaked at a largest window of %s, the tenants' p99 at %s ms (%s without hedging)",
		100*rho, 100*bound, joinAnd(names, ""), joinAnd(peaks, ""), joinAnd(p99s, ""), ms(figs["disabled"].BgP99))
	if refused == 0 {
		out += ", with no refusals"
	} else {
		out += fmt.Sprintf(", %s tenants' requests refused per run in all", count(refused))
	}
	switch {
	case separates && under > 0 && over > 0:
		out += fmt.Sprintf(": those at or under the bound stayed under %.0f%%, those over it did not.", 100*stormTarget)
	case !separates:
		out += fmt.Sprintf(": the bound did not separate the budgets that stayed under %.0f%% from those that did not (a one-token bucket hedges less than its ratio, below).", 100*stormTarget)
	default:
		out += "."
	}
	return out
}

// burstVerdict says, from every run of the notebook, whether a one-token
// bucket ever saturated the alternate (a window at >= 99%) or had a tenant
// refused, and whether the default bucket of 100 per instance saturated
// it in every run at background level rho (figs, fleet "N policy").
func burstVerdict(rho float64, figs map[string]stormFig, levels []stormLevel, unbounded, fleet, retry map[string]stormFig) string {
	oneSafe := true
	maps := []map[string]stormFig{figs, unbounded, fleet, retry}
	for _, l := range levels {
		maps = append(maps, l.Figs)
	}
	for _, m := range maps {
		for k, s := range m {
			if strings.HasSuffix(k, "-burst1") && (s.SatS > 0 || s.RefusedB > 0) {
				oneSafe = false
			}
		}
	}
	defSat := true
	for _, s := range []stormFig{figs["budget-5pct"], figs["budget-10pct"], figs["budget-20pct"], fleet["1000 budget-5pct"]} {
		if s.SatS == 0 {
			defSat = false
		}
	}
	var parts []string
	if oneSafe {
		parts = append(parts, "a burst of 1 never had a window at ≥ 99% nor a tenant refused in any run here")
	}
	if defSat {
		parts = append(parts, fmt.Sprintf("at %.0f%% the default bucket of 100 per instance saturated it in every run of it: `budget-5pct`, `-10pct` and `-20pct`, and `budget-5pct` with 1000 instances", 100*rho))
	}
	if len(parts) == 0 {
		return "see *What size*"
	}
	return strings.Join(parts, "; ")
}

// overTarget is ", over the 90% the ratio aims for but" when every
// utilisation in us is above stormTarget, "," otherwise.
func overTarget(us ...float64) string {
	for _, u := range us {
		if u <= stormTarget {
			return ","
		}
	}
	return fmt.Sprintf(", over the %.0f%% the ratio aims for but", 100*stormTarget)
}
