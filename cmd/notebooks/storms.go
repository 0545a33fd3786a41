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
		b, err := hedging.NewBudget(hedging.StaticPolicy{T: th}, hedging.BudgetConfig{Ratio: ratio, Burst: burst})
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
	// hedgeSlow is the hedge rate of the operations started during the
	// slow-down, hedgeLate of those started in its second half.
	hedgeSlow, hedgeLate float64
	// utilRun is the alternate's utilisation over the run; utilSlow and
	// utilMax the mean and the largest of its windows during the
	// slow-down; satS the seconds of the slow-down in windows at >= 99%.
	utilRun, utilSlow, utilMax, satS float64
	queueP99, bgP99, bgP999          float64
	// refusedC and refusedB are the alternate's refusals per run (client
	// attempts, background tries); trips the breaker trips per run;
	// retries and gaveUp the tenants' retries and requests refused on
	// every try per run (0 unless they retry).
	refusedC, refusedB, trips, retries, gaveUp float64
	// bgOps is the tenants' requests served per run.
	bgOps float64
	// backClient, backAlt and backTen are the seconds from the end of the
	// slow-down to the end of the first window from which every later
	// window is back in the baseline band (see recovered) for the client's
	// windowed p99, the alternate's window utilisation and its tenants'
	// p99 by window of arrival; NaN when never.
	backClient, backAlt, backTen float64
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
	out.slowP99 = float64(slow.ValueAtQuantile(99)) / 1000
	out.hedgeSlow = float64(hedged) / float64(max(ops, 1))
	out.hedgeLate = float64(lateHedged) / float64(max(lateOps, 1))
	alt := slices.IndexFunc(f.Replicas, func(x report.ReplicaFigures) bool { return x.Replica == stormAlternate })
	rf := f.Replicas[alt]
	out.utilRun, out.queueP99, out.bgP99, out.bgP999 = rf.Utilisation, rf.QueueP99, rf.BackgroundP99, rf.BackgroundP999
	out.refusedC, out.refusedB = float64(rf.RefusedClient)/reps, float64(rf.RefusedBackground)/reps
	out.retries, out.gaveUp, out.bgOps = float64(rf.BackgroundRetries)/reps, float64(rf.BackgroundGaveUp)/reps, float64(rf.BackgroundOps)/reps
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
	out.backTen = recovered(rf.WindowBackgroundP99, w, ep.Start, ep.End, func(base float64) float64 { return 1.1 * base })
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
	f := s.f
	return []string{f.Policy, withCI(f, "p99_ms", f.P99, ms), withCI(f, "p999_ms", f.P999, ms), ms(s.slowP99), pct(s.over100),
		pct(f.HedgeRate) + " (" + pct(s.hedgeSlow) + ")", withCI(f, "ru_multiplier", f.RUMultiplier, ru), secs(s.backClient)}
}

var stormAltHeader = []string{"policy", "utilisation (run)", "in the slow-down: mean / max window", "s at ≥ 99%", "queue p99", "tenants' p99 ms", "tenants' p99.9 ms", "refused per run: client / tenants", "breaker trips per run", "back (s): alternate / tenants"}

func stormAltRow(s stormFig) []string {
	return []string{s.f.Policy, util(s.utilRun), util(s.utilSlow) + " / " + util(s.utilMax), fmt.Sprintf("%g", s.satS), count(s.queueP99),
		ms(s.bgP99), ms(s.bgP999), count(s.refusedC) + " / " + count(s.refusedB), count(s.trips), backs(s.backAlt, s.backTen)}
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
	d.p("**Modelling shortcuts, and the figures they bear on.** Except in the section *Tenants that retry*, the tenants' requests are dropped when refused, not retried; they never have a deadline. Real tenants retrying their 503s add load (that section measures it), so elsewhere the *refused* counts, the tenants' latencies and the recovery times are lower bounds on the harm. Cancellation mode `queued`: a losing hedge already in service runs to completion and is charged, in the RU multiplier and the utilisation. One alternate region: every hedge lands on it. The slow primary has unlimited capacity: slow reads cost it nothing, hedges are triggered by its latency alone, and no queue of its own can delay the recovery. The tenants' p99 and p99.9 in the tables are over the whole run (%.0f%% of it is the slow-down), pooled over the replications, with no interval; their recovery is judged on their p99 per %g s window of arrival (2 significant digits, pooled over the replications).", 100*(st.end-st.start).Seconds()/st.durationS, st.windowS)
	d.p("**Method.** Every policy runs on the same seeded arrivals, background load and service times (common random numbers), %s of %g s each. Client figures: p99 and p99.9 over the run with 95%% confidence intervals over the replications; the p99 of the operations started during the slow-down (timeline windows pooled, 2 significant digits); the share of reads slower than 100 ms; hedge rate; RU multiplier. Alternate figures: utilisation over the run, and the mean and the largest of its %g s windows during the slow-down; the seconds of the slow-down spent in windows at ≥ 99%%; the queue length p99; the tenants' (background) p99 and p99.9; refusals per run; partition-breaker trips per run. **Recovery**: the baseline of a figure is its largest window before the slow-down; a figure is back when every window from some window on is within the band (client windowed p99 ≤ 1.1 × baseline; alternate window utilisation ≤ baseline + 2 points; tenants' p99 by window of arrival ≤ 1.1 × baseline), and *back (s)* is the time from the end of the slow-down to the end of the first such window: %g s, one window, is the shortest the windows can show; \"not by the end\" would mean still degraded %g s after the slow-down, a metastable state.",
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
	d.p("The alternate's, and its tenants' (the collateral damage; the tenants' percentiles are over the whole run, pooled over the replications; a refused tenant's request is dropped, not retried, so the refusals are a lower bound on the harm; *Tenants that retry*, below, retries them):")
	d.table(stormAltHeader, atab)
	d.img(stormScenario+" replicas", sub+"/replicas.svg")
	d.img(stormScenario+" timeline", sub+"/timeline.svg")
	d.img(stormScenario+" hedge rate", sub+"/hedge_rate.svg")
	d.img(stormScenario+" cost", sub+"/cost.svg")
	d.p("Reading the time charts: every line is drawn at its values. Where lines coincide (here every policy's, before and after the slow-down) they lie on top of each other; markers staggered along the bundle, one shape and colour per policy, show which policies are there, and the legend names the first policy each coincides with (`= disabled`, or `≈ disabled` when they coincide in only some windows). Read the exact values from the tables.")
	d.p("Policy names: `budget-5pct` is `static-50ms` under a hedge budget of 5%% of operations (`hedge_budget = 0.05`) with the default bucket of 100 tokens per instance; `-burst1` sets `hedge_budget_burst = 1`; `p99-budget-5pct-burst1` is the same budget on `p99-dynamic`. While a budget is spent the threshold is the driver default, min(1 s, %s / 2) = 1 s, which the +%g ms reads never reach: a denied read waits for its slow primary. `p99-dynamic` sits on its 50 ms floor here (its ceiling, 2.5 × the primary's median, is ~10 ms), so it hedges the same reads as `static-50ms`; its rows differ only where the breaker has moved a partition's primary to the alternate, whose queueing it then learns (with the breaker off, below, the two are identical).", st.requestTimeout, st.slowAddMs)
	// Background levels.
	d.p("## How much headroom does the alternate need?")
	d.p("The same fleet and slow-down with the alternate's own tenants at %s of its capacity (`background.0.rate_per_s` set to that share of %.0f reads/s); the %.0f%% rows are the table above.", joinPct(stormLevels), st.capacity, 100*rhoMain)
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
		r, err := d.simulate(stormScenario, pols, param{"background.0.rate_per_s", math.Round(rho * st.capacity)})
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
			s := l.figs[n]
			ltab = append(ltab, []string{fmt.Sprintf("%.0f%% (+%.1f%%)", 100*l.rho, 100*st.stormLoad), n, withCI(s.f, "p99_ms", s.f.P99, ms), pct(s.over100), pct(s.f.HedgeRate),
				util(s.utilSlow) + " / " + util(s.utilMax), fmt.Sprintf("%g", s.satS), ms(s.bgP99), ms(s.bgP999), count(s.refusedC) + " / " + count(s.refusedB), backs(s.backClient, s.backAlt, s.backTen)})
		}
	}
	d.table([]string{"tenants' load (+ every slow read hedged)", "policy", "client p99 ms [95% CI]", "reads > 100 ms", "hedge rate", "alternate in the slow-down: mean / max", "s at ≥ 99%", "tenants' p99 ms", "tenants' p99.9 ms", "refused per run: client / tenants", "back (s): client / alternate / tenants"}, ltab)

	// The queue limit.
	d.p("## The alternate's queue limit")
	d.p("The same storm (tenants at %.0f%%) with the alternate's `queue_limit` raised from %d to %d, which is never reached: in effect an unbounded queue, no 503s. A queued hedge is removed when the slow primary's answer cancels it (`cancel = \"queued\"`).", 100*rhoMain, st.queueLimit, stormNoLimit)
	pols, err := own(stormScenario, stormQueuePolicies...)
	if err != nil {
		return err
	}
	unb, err := d.simulate(stormScenario, pols, param{"replicas." + stormAlternate + ".queue_limit", stormNoLimit})
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
		}{{fmt.Sprintf("%d", st.queueLimit), figs[n]}, {"none reached", unbounded[n]}} {
			s := c.s
			qtab = append(qtab, []string{n, c.label, withCI(s.f, "p99_ms", s.f.P99, ms), pct(s.over100), pct(s.f.HedgeRate), withCI(s.f, "ru_multiplier", s.f.RUMultiplier, ru), util(s.utilSlow) + " / " + util(s.utilMax), count(s.queueP99), ms(s.bgP99), ms(s.bgP999), count(s.refusedC) + " / " + count(s.refusedB), backs(s.backClient, s.backAlt, s.backTen)})
		}
	}
	d.table([]string{"policy", "queue limit", "client p99 ms [95% CI]", "reads > 100 ms", "hedge rate", "RU × [95% CI]", "alternate in the slow-down: mean / max", "queue p99", "tenants' p99 ms", "tenants' p99.9 ms", "refused per run: client / tenants", "back (s): client / alternate / tenants"}, qtab)

	// The breaker.
	d.p("## The partition breaker on and off")
	d.p("The breaker (spec §9.5) routes a partition's reads to the alternate for %s after %d consecutive alternate wins, which adds load to the alternate; off here means `client.consecutive_hedge_win_threshold` = %d, never reached. Each instance's breaker sees only its own reads of a partition: %g reads/s over %d partitions and %d instances is %.2f reads/s per (instance, partition), of which %.0f%% are slow during the slow-down.",
		hedging.DefaultProbeInterval, hedging.DefaultConsecutiveHedgeWinThreshold, breakerOff, st.rate, main.cfg.Workload.Partitions, st.instances, st.rate/float64(main.cfg.Workload.Partitions*st.instances), 100*st.fraction)
	pols, err = own(stormScenario, stormBreakerPolicies...)
	if err != nil {
		return err
	}
	off, err := d.simulate(stormScenario, pols, param{"client.consecutive_hedge_win_threshold", breakerOff})
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
			btab = append(btab, []string{n, c.label, count(s.trips), withCI(s.f, "p99_ms", s.f.P99, ms), pct(s.over100), pct(s.f.HedgeRate), util(s.utilSlow) + " / " + util(s.utilMax), ms(s.bgP99), count(s.refusedC) + " / " + count(s.refusedB)})
		}
	}
	d.table([]string{"policy", "breaker", "trips per run", "client p99 ms [95% CI]", "reads > 100 ms", "hedge rate", "alternate in the slow-down: mean / max", "tenants' p99 ms", "refused per run: client / tenants"}, btab)

	// Fleet size and the per-instance bucket.
	d.p("## 1000 instances: the budget's bucket is per instance")
	d.p("A hedge budget's bucket holds `hedge_budget_burst` tokens (default 100) per instance and starts full, so a fleet of N instances starts a slow-down with N × burst tokens. While a share f of the reads is slow and the budget is r, each instance spends f − r tokens per read beyond what it earns, so the pool lasts N × burst / ((f − r) × R) seconds at the fleet's full storm rate (R the fleet's reads/s): %s. The same fleet read rate over 1000 instances (2 reads/s each; `fleet.instances` = 1000):", stormPoolLines(st, []int{100, 1000}, []float64{1, 10, 100}, 0.05))
	var fleetRows [][]string
	fleet := map[string]stormFig{}
	for _, n := range []int{st.instances, 1000} {
		var pols []simnet.Policy
		if n == st.instances {
			pols = []simnet.Policy{polStaticBudget(0.05, 10, st.requestTimeout)}
		} else {
			base, err := own(stormScenario, "static-50ms")
			if err != nil {
				return err
			}
			pols = append(base, polStaticBudget(0.05, 100, st.requestTimeout), polStaticBudget(0.05, 10, st.requestTimeout), polStaticBudget(0.05, 1, st.requestTimeout))
		}
		r, err := d.simulate(stormScenario, pols, param{"fleet.instances", float64(n)})
		if err != nil {
			return err
		}
		if n != st.instances {
			if _, err := d.charts(r, stormScenario+"-1000"); err != nil {
				return err
			}
		}
		got := map[string]stormFig{}
		for _, p := range r.res.Policies {
			got[p.Name] = stormFigures(r, p.Name)
		}
		if n == st.instances {
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
			fleetRows = append(fleetRows, []string{fmt.Sprintf("%d", n), c.name, pool, withCI(s.f, "p99_ms", s.f.P99, ms), pct(s.over100), pct(s.f.HedgeRate),
				util(s.utilSlow) + " / " + util(s.utilMax), fmt.Sprintf("%g", s.satS), ms(s.bgP99), count(s.refusedC) + " / " + count(s.refusedB), backs(s.backClient, s.backAlt, s.backTen)})
		}
	}
	d.table([]string{"instances", "policy", "fleet's tokens N × burst", "client p99 ms [95% CI]", "reads > 100 ms", "hedge rate", "alternate in the slow-down: mean / max", "s at ≥ 99%", "tenants' p99 ms", "refused per run: client / tenants", "back (s): client / alternate / tenants"}, fleetRows)
	d.img(stormScenario+" with 1000 instances: replicas", stormScenario+"-1000/replicas.svg")

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
	rho := st.background / st.capacity
	d.p("## Tenants that retry")
	d.p("The storm above with the alternate's tenants at %.0f%% retrying a request refused by its full queue up to %d times (`background.0.retries` = %d; the i-th retry %g ms × 2^(i−1) after the refusal, jittered ×0.5–1.5, then it gives up), as a client retrying its 503s would: refused load comes back, into the same full queue. A retried request's latency runs from its first try, backoffs included, and counts in the window of its first arrival; *refused* counts every refused try. The first rows of each policy are the tables above (refused tenants' requests dropped).",
		100*rho, stormRetries, stormRetries, simnet.DefaultBackgroundRetryBackoff.Seconds()*1000)
	pols, err := own(stormScenario, stormRetryPolicies...)
	if err != nil {
		return nil, err
	}
	r, err := d.simulate(stormScenario, pols, param{"background.0.retries", stormRetries})
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
			rows = append(rows, []string{n, c.label, withCI(s.f, "p99_ms", s.f.P99, ms), pct(s.over100), util(s.utilSlow) + " / " + util(s.utilMax), fmt.Sprintf("%g", s.satS),
				ms(s.bgP99), ms(s.bgP999), count(s.refusedC) + " / " + count(s.refusedB), count(s.retries) + " / " + count(s.gaveUp), backs(s.backClient, s.backAlt, s.backTen)})
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
		for _, v := range []float64{x.backClient, x.backAlt, x.backTen} {
			if math.IsNaN(v) {
				stuck = true
			} else {
				worst = max(worst, v)
			}
		}
		back = append(back, fmt.Sprintf("`%s` %s s", n, backs(x.backClient, x.backAlt, x.backTen)))
	}
	verdict := fmt.Sprintf("No metastable state: with retrying tenants every policy was back within %g s of the end of the slow-down (client / alternate / tenants: %s), well within a minute.", worst, joinAnd(back, ""))
	if stuck || worst > 60 {
		verdict = fmt.Sprintf("The retries sustained the overload: back (s) client / alternate / tenants: %s; a figure not back within a minute of the slow-down's end is a metastable state in this model.", joinAnd(back, ""))
	}
	s0 := figs["static-50ms"]
	d.p("%s During the slow-down the retries deepen the harm instead: unbudgeted `static-50ms` kept the alternate at ≥ 99%% for %g s either way, but its tenants retried %s times per run and %s requests per run still gave up after %d retries (against %s dropped without retries); the refused tries rose from %s to %s per run and the client's refused hedges from %s to %s (the retries take the queue's freed slots, client p99 %s → %s ms); the tenants' p99 went from %s to %s ms and their p99.9 from %s to %s ms, backoffs included. The sized budget (`budget-5pct-burst1`) left nothing to retry: %s retries per run, the tenants' p99 %s ms. The retries come back within about %s of a refusal (the sum of the longest backoffs), so once the queue has drained they find room: they do not outlive the storm here.",
		verdict, s.satS, count(s.retries), count(s.gaveUp), stormRetries, count(s0.refusedB), count(s0.refusedB), count(s.refusedB), count(s0.refusedC), count(s.refusedC), ms(s0.f.P99), ms(s.f.P99),
		ms(s0.bgP99), ms(s.bgP99), ms(s0.bgP999), ms(s.bgP999), count(b.retries), ms(b.bgP99), retrySpan(stormRetries))
	return out, nil
}

// stormLevel is one background level's figures by policy.
type stormLevel struct {
	rho  float64
	figs map[string]stormFig
}

// stormPoolLines describes how long the fleet's token pool lasts for each
// fleet size and burst at budget ratio r.
func stormPoolLines(st stormSetup, sizes []int, bursts []float64, r float64) string {
	var out []string
	for _, n := range sizes {
		for _, b := range bursts {
			out = append(out, fmt.Sprintf("%d × %g tokens last %.1f s", n, b, float64(n)*b/((st.fraction-r)*st.rate)))
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
	// The recommendation in one paragraph, each number from the sections
	// below.
	top := levels[len(levels)-1]
	okLoad, okCost, okP99 := 0.0, 0.0, 0.0
	var okLevels []string
	for _, l := range levels {
		if sf := l.figs["static-50ms"]; sf.satS == 0 && sf.refusedB == 0 {
			okLoad = max(okLoad, l.rho+st.stormLoad)
			okCost = max(okCost, sf.bgP99-l.figs["disabled"].bgP99)
			okP99 = max(okP99, sf.f.P99)
			okLevels = append(okLevels, fmt.Sprintf("%.0f%%", 100*l.rho))
		}
	}
	d.p("**In short.** Size hedging for the alternate's peak load from its own tenants, ρ. Where ρ plus the storm load (slow share × fleet read rate / the alternate's capacity) stayed at or below %.1f%% — tenants at %s here — hedging without a budget cost the tenants at most %s ms of p99 and no refusals, and cut the client's p99 from %s to at most %s ms. Above that, set `hedge_budget` ≤ (%.0f%% − ρ) × capacity / fleet read rate (%.1f%% at %.0f%%) **and** `hedge_budget_burst` so that instances × burst is at most about 2 s of the alternate's spare capacity (%s), and keep the alternate's admission control (its queue limit). The price: during such a slow-down the client's p99 stays where it is without hedging.",
		100*okLoad, joinAnd(okLevels, "no level"), ms(okCost), ms(figs["disabled"].f.P99), ms(okP99), 100*stormTarget, 100*st.maxRatio(top.rho), 100*top.rho, burstVerdict(top.rho, figs, levels, unbounded, fleet, retry))

	// When: the levels at which static-50ms saturates the alternate.
	var needed, notNeeded []string
	for _, l := range levels {
		dis, s := l.figs["disabled"], l.figs["static-50ms"]
		desc := fmt.Sprintf("%.0f%% (%.0f%% + %.1f%%: tenants' p99 %s → %s ms, p99.9 %s → %s ms, %s s at ≥ 99%%, %s tenants' requests refused per run)",
			100*l.rho, 100*l.rho, 100*st.stormLoad, ms(dis.bgP99), ms(s.bgP99), ms(dis.bgP999), ms(s.bgP999), fmt.Sprintf("%g", s.satS), count(s.refusedB))
		if s.satS > 0 || s.refusedB > 0 || s.bgP99 > 2*dis.bgP99 {
			needed = append(needed, desc)
		} else {
			notNeeded = append(notNeeded, desc)
		}
	}
	d.p("**When a hedge budget is needed.** When the alternate's own load plus the storm — the slow share × the fleet's read rate × the alternate's mean service time / its servers, here %.1f%% — reaches its capacity. Unbudgeted `static-50ms` saturated the alternate at %s. It did not at %s. Without that headroom the storm defeats itself: at %.0f%% `static-50ms` still hedges %s of the reads started in the slow-down (%s over the run), but its hedges wait in a full queue or are refused, so %s of the run's reads stay slower than 100 ms against %s without hedging, and its p99 is %s ms (%s ms during the slow-down) where the same policy reaches %s ms with headroom.",
		100*st.stormLoad, joinAnd(needed, "no level"), joinAnd(notNeeded, "no level"), 100*levels[len(levels)-1].rho,
		pct(figs["static-50ms"].hedgeSlow), pct(figs["static-50ms"].f.HedgeRate), pct(figs["static-50ms"].over100), pct(figs["disabled"].over100), ms(figs["static-50ms"].f.P99), ms(figs["static-50ms"].slowP99), ms(levels[0].figs["static-50ms"].f.P99))

	// What size.
	b5, b5b1, b20b1 := figs["budget-5pct"], figs["budget-5pct-burst1"], figs["budget-20pct-burst1"]
	d.p("**What size.** Two numbers, not one. *The ratio* bounds the storm's rate: r × R alternates per second, so r ≤ (%.0f%% − ρ) × capacity / R keeps the alternate under %.0f%% with its tenants at ρ: %s (%.0f%% leaves a margin: at %.0f%% unbudgeted hedging ran the alternate at %s in the slow-down with the tenants' p99 %s → %s ms and no refusals). %s *The burst* bounds the storm's start: the bucket is per instance, so the fleet starts with N × burst tokens, and with the default of 100 `budget-5pct` ran the alternate at ≥ 99%% for %g s of the slow-down (tenants' p99 %s ms, %s refusals per run) — as bad as no budget for that time. With 1000 instances the same budget's 100000 tokens outlast the %g s slow-down (they last %.1f s at the storm rate), so it never limited a hedge: its rows equal `static-50ms`'s (tenants' p99 %s ms). Equal pools gave similar storms: 100 × 100 and 1000 × 10 tokens saturated it for %g s and %g s, 100 × 10 and 1000 × 1 tokens peaked at %s and %s%s without refusals. So size the burst to the fleet: keep N × burst to about 2 s of the alternate's spare capacity (here %.0f%% × %.0f × 2 s ≈ %.0f tokens, a burst of 10 at 100 instances and 1 at 1000), or simply 1. A one-token bucket gives up part of the ratio: `budget-20pct-burst1` hedged %s of reads against `budget-20pct`'s %s, because tokens earned while the bucket is full are lost.",
		100*stormTarget, 100*stormTarget, maxRatioLines(st, levels), 100*stormTarget, 100*levels[1].rho, util(levels[1].figs["static-50ms"].utilSlow),
		ms(levels[1].figs["disabled"].bgP99), ms(levels[1].figs["static-50ms"].bgP99), oneTokenLines(st, top.rho, figs),
		b5.satS, ms(b5.bgP99), count(b5.refusedB), (st.end - st.start).Seconds(), 1000*100/((st.fraction-0.05)*st.rate), ms(fleet["1000 budget-5pct"].bgP99),
		fleet["100 budget-5pct"].satS, fleet["1000 budget-5pct-burst10"].satS, util(fleet["100 budget-5pct-burst10"].utilMax), util(fleet["1000 budget-5pct-burst1"].utilMax), overTarget(fleet["100 budget-5pct-burst10"].utilMax, fleet["1000 budget-5pct-burst1"].utilMax),
		100*(1-top.rho), st.capacity, (1-top.rho)*st.capacity*2, pct(b20b1.f.HedgeRate), pct(figs["budget-20pct"].f.HedgeRate))

	// Where the recommendation loses.
	lo := levels[0]
	headroomRho, tenantsDelta := 0.0, 0.0
	budgetP99 := math.Inf(1)
	for _, l := range levels[:len(levels)-1] {
		tenantsDelta = max(tenantsDelta, l.figs["static-50ms"].bgP99-l.figs["disabled"].bgP99)
		for k, s := range l.figs {
			if strings.Contains(k, "budget") {
				budgetP99 = min(budgetP99, s.f.P99)
			}
		}
	}
	for _, l := range levels {
		if s := l.figs["static-50ms"]; s.satS == 0 && s.refusedB == 0 {
			headroomRho = max(headroomRho, l.rho)
		}
	}
	// How far the budgets' p99 is from no hedging's, at every level; a
	// budget whose pool outlasted the slow-down is named as the exception.
	budgetGap := 0.0
	for _, l := range levels {
		for k, s := range l.figs {
			if strings.Contains(k, "budget") {
				budgetGap = max(budgetGap, l.figs["disabled"].f.P99-s.f.P99)
			}
		}
	}
	budgetExc := ""
	if fb := fleet["1000 budget-5pct"]; figs["disabled"].f.P99-fb.f.P99 > budgetGap {
		budgetExc = fmt.Sprintf(" with 100 instances (with 1000, `budget-5pct`'s pool outlasted the slow-down and its p99 was %s ms, `static-50ms`'s)", ms(fb.f.P99))
	}
	d.p("**Where the sized budget loses: the client's p99.** A budget below the slow share (%.0f%% here) cannot hedge enough reads to move the p99: every budget's p99 is within %s ms of no hedging's %s ms, at every level%s. At %.0f%% that is the price of protecting the tenants: `static-50ms` gives the client %s ms and its tenants %s ms; `budget-5pct-burst1` gives %s and %s ms. At %.0f%% and %.0f%% it is a pure loss: `static-50ms` reached %s and %s ms with no refusals and the tenants' p99 within %s ms of no hedging, and the budgets kept %s ms or more. What a budget still buys the client is fewer slow reads in proportion to its ratio (reads > 100 ms: %s with `budget-20pct-burst1` against %s with `static-50ms` at %.0f%%). Since a budget cannot see the alternate's load, size it for the alternate's peak tenant load, and accept this loss whenever the alternate has headroom; where the alternate is known to keep headroom for the whole fleet's storm (here up to %.0f%%), hedge without a budget.",
		100*st.fraction, ms(budgetGap), ms(figs["disabled"].f.P99), budgetExc, 100*top.rho, ms(figs["static-50ms"].f.P99), ms(figs["static-50ms"].bgP99), ms(b5b1.f.P99), ms(b5b1.bgP99),
		100*lo.rho, 100*levels[1].rho, ms(lo.figs["static-50ms"].f.P99), ms(levels[1].figs["static-50ms"].f.P99),
		ms(tenantsDelta), ms(budgetP99), pct(b20b1.over100), pct(figs["static-50ms"].over100), 100*top.rho, 100*headroomRho)

	// The queue limit.
	us, bs := unbounded["static-50ms"], figs["static-50ms"]
	if us.f.P99 > 0.95*figs["disabled"].f.P99 && us.bgP99 > bs.bgP99 {
		d.p("**The alternate's queue limit is part of the answer.** Its 503s are what leave the storm's hedges any use: with the limit out of reach the queue grew to %s (p99), the hedges waited behind it and nearly all lost to the slow primary (client p99 %s ms, disabled's %s; reads > 100 ms %s), and the tenants' p99 rose to %s ms against %s with the limit of %d. Hedging into an alternate without admission control bought the client nothing here and cost its tenants more.",
			count(us.queueP99), ms(us.f.P99), ms(figs["disabled"].f.P99), pct(us.over100), ms(us.bgP99), ms(bs.bgP99), st.queueLimit)
	} else {
		d.p("**The alternate's queue limit.** Without a reachable limit `static-50ms` gave the client %s ms at p99 (%s with the limit) and its tenants %s ms (%s with the limit).", ms(us.f.P99), ms(bs.f.P99), ms(us.bgP99), ms(bs.bgP99))
	}

	// Breaker and recovery.
	worst := 0.0
	refusals := ""
	worstRel := 0.0
	for _, n := range stormBreakerPolicies {
		o := stormFigures(off, n)
		worst = max(worst, math.Abs(o.bgP99-figs[n].bgP99))
		if o.refusedB > 0 {
			if rel := figs[n].refusedB/o.refusedB - 1; math.Abs(rel) > 0.1 && math.Abs(rel) > worstRel {
				worstRel = math.Abs(rel)
				refusals = fmt.Sprintf(" It did change the refusals: with it on, `%s`'s tenants were refused %s times per run against %s with it off (%+.0f%%).", n, count(figs[n].refusedB), count(o.refusedB), 100*rel)
			}
		}
	}
	slowest, metastable := 0.0, false
	check := func(s stormFig) {
		for _, v := range []float64{s.backClient, s.backAlt, s.backTen} {
			if math.IsNaN(v) {
				metastable = true
			} else {
				slowest = max(slowest, v)
			}
		}
	}
	for _, l := range levels {
		for _, s := range l.figs {
			check(s)
		}
	}
	for _, m := range []map[string]stormFig{fleet, unbounded, retry} {
		for _, s := range m {
			check(s)
		}
	}
	d.p("**The breaker** made little difference to the tenants' latency here: turning it off changed their p99 by at most %s ms.%s Each instance's breaker sees a partition's reads at %.2f/s, so 5 slow reads in a row are rare (%s trips per run under `static-50ms`, each moving that instance's reads of the partition, about %.1f over %s, to the alternate), and it adds almost no load there. A primary slow for whole partitions, rather than for a share of every partition's reads, would trip it far more often; that case is not simulated here.",
		ms(worst), refusals, st.rate/float64(off.cfg.Workload.Partitions*st.instances), count(figs["static-50ms"].trips), st.rate/float64(off.cfg.Workload.Partitions*st.instances)*hedging.DefaultProbeInterval.Seconds(), hedging.DefaultProbeInterval)
	if metastable {
		d.p("**Recovery.** Some run did not return to its baseline band by the end of the run: see the *back (s)* columns.")
	} else {
		rs, r0 := retry["static-50ms"], figs["static-50ms"]
		d.p("**Recovery.** Every policy at every level, fleet size and queue limit, and with tenants retrying their 503s, was back within %g s of the end of the slow-down — the client's p99, the alternate's utilisation and its tenants' p99 alike (the *back (s)* columns): no metastable state. In this model nothing keeps the load up once the primary is fast again: hedges are triggered by the primary's latency alone, the slow primary has unlimited capacity, and a full queue of %d drains in about %s at the alternate's spare capacity at %.0f%%. Tenants retrying up to %d times multiplied the refused tries %.0f-fold during the storm (`static-50ms`), but their retries return within about %s of a refusal and then find room. Tenants that retry for longer, load that with its retries exceeds the alternate's capacity without any hedge, or a primary that itself queues could still sustain an overload; those are not simulated.",
			slowest, st.queueLimit, time.Duration(float64(st.queueLimit)/((1-levels[len(levels)-1].rho)*st.capacity)*float64(time.Second)).Round(10*time.Millisecond), 100*levels[len(levels)-1].rho,
			stormRetries, rs.refusedB/max(r0.refusedB, 1), retrySpan(stormRetries))
	}
	d.p("**What an operator should watch.** During a primary's brownout: the alternate region's utilisation and queue, and its 503s from a full queue (the *s at ≥ 99%%* and *refused* columns: they show the storm, where the client's own p99 does not: it was never worse than without hedging here); its other tenants' p99; the fleet's hedge rate × its read rate against the alternate's spare capacity (the storm load, %.1f%% of capacity here); and, for a budget, N × burst against that spare capacity, and a windowed hedge rate that falls to the budget's ratio during the incident (the hedge-rate chart: in the second half of the slow-down `budget-5pct` hedged %s of the reads and `budget-5pct-burst1` %s, against %s for `static-50ms`), which means the budget, not the threshold, decides which reads are hedged — and that the tail is what it would be without hedging.",
		100*st.stormLoad, pct(b5.hedgeLate), pct(b5b1.hedgeLate), pct(figs["static-50ms"].hedgeLate))
	return nil
}

// maxRatioLines lists the largest budget ratio for each background level.
func maxRatioLines(st stormSetup, levels []stormLevel) string {
	var out []string
	for _, l := range levels {
		out = append(out, fmt.Sprintf("%.1f%% at ρ = %.0f%%", 100*st.maxRatio(l.rho), 100*l.rho))
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
		peaks = append(peaks, util(s.utilMax))
		p99s = append(p99s, ms(s.bgP99))
		refused += s.refusedB
		if r <= bound {
			under++
		} else {
			over++
		}
		if (r <= bound) != (s.utilMax < stormTarget) {
			separates = false
		}
	}
	out := fmt.Sprintf("At %.0f%% (bound %.1f%%) the one-token budgets of %s peaked at a largest window of %s, the tenants' p99 at %s ms (%s without hedging)",
		100*rho, 100*bound, joinAnd(names, ""), joinAnd(peaks, ""), joinAnd(p99s, ""), ms(figs["disabled"].bgP99))
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
		maps = append(maps, l.figs)
	}
	for _, m := range maps {
		for k, s := range m {
			if strings.HasSuffix(k, "-burst1") && (s.satS > 0 || s.refusedB > 0) {
				oneSafe = false
			}
		}
	}
	defSat := true
	for _, s := range []stormFig{figs["budget-5pct"], figs["budget-10pct"], figs["budget-20pct"], fleet["1000 budget-5pct"]} {
		if s.satS == 0 {
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
