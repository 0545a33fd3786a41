package main

// Notebook 05: hedging storms. A fleet hedges a partial slow-down of its
// primary into an alternate region that serves other tenants too; what
// that costs them, which hedge budget bounds it, and whether the system
// recovers when the slow-down ends.

import (
	"fmt"
	"math"
	"slices"
	"time"

	"hedgelab/hedging"
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
var stormSweepPolicies = []string{"disabled", "static-50ms", "static-50ms-budget-5pct", "static-50ms-budget-5pct-burst1", "static-50ms-budget-20pct-burst1"}

// stormBreakerPolicies are the scenario's policies run with the breaker off.
var stormBreakerPolicies = []string{"static-50ms", "p99-dynamic", "static-50ms-budget-5pct", "static-50ms-budget-5pct-burst1"}

// breakerOff is a consecutive_hedge_win_threshold no partition reaches.
const breakerOff = math.MaxInt32

// polStaticBudget is static-50ms under a hedge budget of ratio alternates
// per operation with a bucket of burst tokens per instance, falling back to
// the driver default while it is spent, as the scenario file's
// `hedge_budget` / `hedge_budget_burst` build it. The name follows the
// scenario's: static-50ms-budget-<ratio>pct[-burst<burst>] (no suffix for
// the default burst of 100).
func polStaticBudget(ratio, burst float64, requestTimeout time.Duration) simnet.Policy {
	name := fmt.Sprintf("static-50ms-budget-%gpct", ratio*100)
	if burst != 100 {
		name += fmt.Sprintf("-burst%g", burst)
	}
	th := hedging.MustThreshold(50 * time.Millisecond)
	return simnet.Policy{Name: name, New: func() (hedging.AvailabilityStrategy, error) {
		b, err := hedging.NewBudget(hedging.StaticPolicy{T: th}, hedging.BudgetConfig{Ratio: ratio, Burst: burst, Fallback: hedging.DriverDefaultThreshold(requestTimeout)})
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
	f report.Figures
	// slowP99 is the client's p99 over the operations started during the
	// slow-down (timeline windows pooled, 2 significant digits); over100
	// the share of all operations slower than 100 ms.
	slowP99, over100 float64
	// utilRun is the alternate's utilisation over the run; utilSlow and
	// utilMax the mean and the largest of its windows during the
	// slow-down; satS the seconds of the slow-down in windows at >= 99%.
	utilRun, utilSlow, utilMax, satS float64
	queueP99, bgP99, bgP999      float64
	// refusedC and refusedB are the alternate's refusals per run (client
	// attempts, background requests); trips the breaker trips per run.
	refusedC, refusedB, trips float64
	// backClient and backAlt are the seconds from the end of the slow-down
	// to the end of the first window from which every later window is back
	// in the baseline band (see recovered); NaN when never.
	backClient, backAlt float64
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
	out := stormFig{f: f, over100: shareAbove(p, 100), trips: float64(p.BreakerTrips) / reps}
	slow := simnet.NewLatencyHistogram()
	var p99s []float64
	for i, win := range p.Timeline {
		from := time.Duration(i) * w
		if from >= ep.Start && from < ep.End {
			slow.Merge(win.Latency)
		}
		p99s = append(p99s, float64(win.Latency.ValueAtQuantile(99))/1000)
	}
	out.slowP99 = float64(slow.ValueAtQuantile(99)) / 1000
	alt := slices.IndexFunc(f.Replicas, func(x report.ReplicaFigures) bool { return x.Replica == stormAlternate })
	rf := f.Replicas[alt]
	out.utilRun, out.queueP99, out.bgP99, out.bgP999 = rf.Utilisation, rf.QueueP99, rf.BackgroundP99, rf.BackgroundP999
	out.refusedC, out.refusedB = float64(rf.RefusedClient)/reps, float64(rf.RefusedBackground)/reps
	n := 0
	for i, u := range rf.WindowUtilisation {
		from := time.Duration(i) * w
		if from >= ep.Start && from < ep.End {
			out.utilSlow += u
			out.utilMax = max(out.utilMax, u)
			if u >= 0.99 {
				out.satS += w.Seconds()
			}
			n++
		}
	}
	out.utilSlow /= float64(n)
	out.backClient = recovered(p99s, w, ep.Start, ep.End, func(base float64) float64 { return 1.1 * base })
	out.backAlt = recovered(rf.WindowUtilisation, w, ep.Start, ep.End, func(base float64) float64 { return base + 0.02 })
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

func count(v float64) string { return fmt.Sprintf("%.0f", v) }

func util(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

var stormClientHeader = []string{"policy", "p99 ms [95% CI]", "p99.9 ms [95% CI]", "p99 in the slow-down", "reads > 100 ms", "hedge rate", "RU × [95% CI]", "client back (s)"}

func stormClientRow(s stormFig) []string {
	f := s.f
	return []string{f.Policy, withCI(f, "p99_ms", f.P99, ms), withCI(f, "p999_ms", f.P999, ms), ms(s.slowP99), pct(s.over100),
		pct(f.HedgeRate), withCI(f, "ru_multiplier", f.RUMultiplier, ru), secs(s.backClient)}
}

var stormAltHeader = []string{"policy", "utilisation (run)", "in the slow-down: mean / max window", "s at ≥ 99%", "queue p99", "tenants' p99 ms", "tenants' p99.9 ms", "refused per run: client / tenants", "breaker trips per run", "alternate back (s)"}

func stormAltRow(s stormFig) []string {
	return []string{s.f.Policy, util(s.utilRun), util(s.utilSlow) + " / " + util(s.utilMax), fmt.Sprintf("%g", s.satS), count(s.queueP99),
		ms(s.bgP99), ms(s.bgP999), count(s.refusedC) + " / " + count(s.refusedB), count(s.trips), secs(s.backAlt)}
}

// stormSetup is what the notebook derives from the scenario's
// configuration: the alternate's capacity and the storm's load.
type stormSetup struct {
	servers         int
	meanMs          float64 // the alternate's mean service time
	capacity        float64 // reads/s: servers / mean service
	background      float64 // reads/s of its own tenants
	rate, fraction  float64 // the fleet's reads/s; the slow share of the primary's reads
	instances       int
	start, end      time.Duration
	stormLoad       float64 // fraction × rate / capacity: every slow read hedged
	queueLimit      int
	requestTimeout  time.Duration
	alternateRTT    float64
	slowAddMs       float64
	windowS         float64
	durationS       float64
	replicationsRun int
}

func newStormSetup(r *run) (stormSetup, error) {
	cfg := r.cfg
	var st stormSetup
	i := slices.IndexFunc(cfg.Replicas, func(x simnet.Replica) bool { return x.Name == stormAlternate })
	if i < 0 || len(cfg.Background) != 1 || len(cfg.Episodes) != 1 {
		return st, fmt.Errorf("%s: want replica %s, one background source and one episode", stormScenario, stormAlternate)
	}
	rep := cfg.Replicas[i]
	st.servers, st.queueLimit = rep.Servers, rep.QueueLimit
	st.meanMs = rep.Default.Mean()
	st.capacity = float64(rep.Servers) / st.meanMs * 1000
	st.background = cfg.Background[0].RatePerSec
	st.rate, st.fraction = cfg.Workload.RatePerSec, cfg.Episodes[0].Fraction
	st.instances = max(cfg.Fleet.Instances, 1)
	st.start, st.end = cfg.Episodes[0].Start, cfg.Episodes[0].End
	st.stormLoad = st.fraction * st.rate / st.capacity
	st.requestTimeout = cfg.Client.RequestTimeout
	st.alternateRTT = cfg.RTTMs[cfg.ClientRegion][rep.Region]
	st.slowAddMs = cfg.Episodes[0].AddMs
	st.windowS = cfg.TimelineWindow.Seconds()
	st.durationS = cfg.Duration.Seconds()
	st.replicationsRun = r.reps
	return st, nil
}

// maxRatio is the largest hedge budget (alternates per operation) whose
// load keeps the alternate under stormTarget at background utilisation rho.
func (st stormSetup) maxRatio(rho float64) float64 {
	return max(stormTarget-rho, 0) * st.capacity / st.rate
}

func storms(d *doc) error {
	d.p("**Question.** When every instance of an application hedges into the same alternate region during a partial slow-down of its primary, and that region also serves its own tenants, what does the storm cost them, when is a hedge budget needed, what size, and what should an operator watch? Does the system return to normal when the slow-down ends, or stay degraded (metastable)?")
	main, err := d.simulate(stormScenario, nil)
	if err != nil {
		return err
	}
	st, err := newStormSetup(main)
	if err != nil {
		return err
	}
	rhoMain := st.background / st.capacity
	d.p("**Setup.** %s — %s", main.setup(), firstSentence(main.scenario.Description))
	d.p("A fleet of %d instances (each its own `hedging.Client`: its own threshold state, breaker and budget) reads %g times a second in total from a primary with unlimited capacity; from %gs to %gs %.0f%% of the primary's reads take %g ms longer. The alternate, %g ms away, has %d servers with a lognormal service time of mean %.3f ms, so a capacity of %.0f reads/s, a queue of at most %d (refused beyond it with a 503), and %.0f reads/s of its own tenants (utilisation %.0f%% before any hedge). Hedging every slow read would add %.0f%% × %g = %.0f reads/s, **%.1f%% of its capacity**: %.0f%% + %.1f%% is over 100%%.",
		st.instances, st.rate, st.start.Seconds(), st.end.Seconds(), 100*st.fraction, st.slowAddMs, st.alternateRTT, st.servers, st.meanMs, st.capacity,
		st.queueLimit, st.background, 100*rhoMain, 100*st.fraction, st.rate, st.fraction*st.rate, 100*st.stormLoad, 100*rhoMain, 100*st.stormLoad)
	d.p("**Modelling shortcuts** (each bears on the numbers it is named next to): the tenants' requests are not retried when refused and have no deadline (a real tenant retrying a 503 would add load, so the refusal counts are a lower bound on the harm); cancellation mode `queued` (a losing hedge already in service runs to completion and is charged); one alternate region; the slow primary has unlimited capacity, so slow reads cost it nothing and hedges are triggered by its latency alone; the tenants' p99 and p99.9 are over the whole run (%.0f%% of it is the slow-down), pooled over the replications, with no interval.", 100*(st.end-st.start).Seconds()/st.durationS)
	d.p("**Method.** Every policy runs on the same seeded arrivals, background load and service times (common random numbers), %s of %g s each. Client figures: p99 and p99.9 over the run with 95%% confidence intervals over the replications; the p99 of the operations started during the slow-down (timeline windows pooled, 2 significant digits); the share of reads slower than 100 ms; hedge rate; RU multiplier. Alternate figures: utilisation over the run, and the mean and the largest of its %g s windows during the slow-down; the seconds of the slow-down spent in windows at ≥ 99%%; the queue length p99; the tenants' (background) p99 and p99.9; refusals per run; partition-breaker trips per run. **Recovery**: the baseline of a figure is its largest window before the slow-down; a figure is back when every window from some window on is within the band (client windowed p99 ≤ 1.1 × baseline; alternate window utilisation ≤ baseline + 2 points), and *back (s)* is the time from the end of the slow-down to the end of the first such window: %g s, one window, is the shortest the windows can show; \"not by the end\" would mean still degraded %g s after the slow-down, a metastable state.",
		report.Replications(main.reps), st.durationS, st.windowS, st.windowS, st.durationS-st.end.Seconds())

	// The storm at the scenario's own level.
	d.p("## The storm: %d instances, alternate at %.0f%% for its own tenants", st.instances, 100*rhoMain)
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
	d.p("The client's figures:")
	d.table(stormClientHeader, ctab)
	d.p("The alternate's, and its tenants' (the collateral damage):")
	d.table(stormAltHeader, atab)
	d.img(stormScenario+" replicas", sub+"/replicas.png")
	d.img(stormScenario+" timeline", sub+"/timeline.png")
	d.img(stormScenario+" cost", sub+"/cost.png")
	d.p("Policy names: `static-50ms-budget-5pct` is a 50 ms threshold under a hedge budget of 5%% of operations (`hedge_budget = 0.05`) with the default bucket of 100 tokens per instance; `-burst1` sets `hedge_budget_burst = 1`. While a budget is spent the threshold is the driver default, min(1 s, %s / 2) = 1 s, which the +%g ms reads never reach: a denied read waits for its slow primary.", st.requestTimeout, st.slowAddMs)
	return nil
}
