package main

import (
	"fmt"
	"strings"
	"time"

	"hedgelab/internal/report"
	"hedgelab/simnet"
)

// q11Scenarios is the library the Q11 study runs over, in reading order.
var q11Scenarios = []string{
	"healthy", "default", "incident-north-europe-2022", "incident-gcs-2018", "incident-us-east1-2019",
	"primary-slow", "heavy-tail", "bimodal", "cold-start", "saturation", "throughput-control", "ru-budget-3200",
}

const budgetRatio = 0.2

func q11Policies(r *simnet.Config) []simnet.Policy {
	return []simnet.Policy{
		polDisabled(), polDriverDefault(r.RequestTimeout), polStatic("static-50ms", 50), polP99(),
		polP99Initial("p99-init-50ms", 50*time.Millisecond), polP99Budget(budgetRatio, r.RequestTimeout),
	}
}

func q11(d *doc) error {
	budName := polP99Budget(budgetRatio, 0).Name
	d.p("**Question.** The spec (§5.2) ships a static driver default threshold `min(1s, request_timeout/2)`; the transport pipeline spec (TPS §4.2) asks for a dynamic threshold equal to the observed p99 of the primary region, clamped to 50–4000 ms. Which should v1 ship (§17 Q11)?")
	d.p("**Method.** Every scenario below runs six policies on the same seeded workload (common random numbers): `disabled` (no hedging); `driver-default` (the static formula with the scenario's request timeout); `static-50ms`, a control equal to the dynamic policy's floor; `p99-dynamic` (observed p99 of the primary region's completed attempts over a 60 s sliding window of six DDSketch buckets, clamped to [50 ms, 4000 ms], 1 s until 100 samples); `p99-init-50ms`, the same with a 50 ms initial threshold; and `%s`, the same p99 threshold with a hedge budget (a token bucket that lets at most %g%% of operations hedge over time and falls back to the driver default while it is spent; `hedging.BudgetedPolicy`, proposed here because neither the spec nor its peer SDKs cap the hedge rate). With several replications each latency figure and RU multiplier is the mean over replications, with its 95%% confidence interval (Student t); hedge and error rates are over all operations. A difference counts as significant when the intervals are apart and the means differ by more than 5%%.", budName, budgetRatio*100)

	type row struct {
		name                 string
		dd, s50, p99, bud    report.Figures
		init50               report.Figures
		p99Wins, p99Loses    bool
		vs50Better, vs50Cost bool
	}
	var rows []row
	for _, name := range q11Scenarios {
		r, sub, err := d.section(name, q11Policies, "ccdf.png", "latency CCDF")
		if err != nil {
			return err
		}
		dd, s50, p99, bud := r.fig("driver-default"), r.fig("static-50ms"), r.fig("p99-dynamic"), r.fig(budName)
		rows = append(rows, row{
			name: name, dd: dd, s50: s50, p99: p99, bud: bud, init50: r.fig("p99-init-50ms"),
			p99Wins:    better(p99, dd, "p99_ms", p99.P99, dd.P99),
			p99Loses:   better(dd, p99, "p99_ms", dd.P99, p99.P99),
			vs50Better: better(p99, s50, "p99_ms", p99.P99, s50.P99),
			vs50Cost:   p99.RUMultiplier < s50.RUMultiplier-0.005,
		})
		if name == "incident-north-europe-2022" {
			d.p("Thresholds and hedge rates over time during this long episode of the primary region:")
			d.img("threshold over time", sub+"/threshold.png")
			d.img("hedge rate over time", sub+"/hedge_rate.png")
			d.img("windowed p99 over time", sub+"/timeline.png")
		}
	}

	d.p("## Summary")
	var tab [][]string
	p99Wins, p99Loses := 0, 0
	var cheaper, worseThan50 []string
	for _, r := range rows {
		verdict := "no significant difference"
		switch {
		case r.p99Wins:
			verdict = "p99-dynamic lower"
			p99Wins++
		case r.p99Loses:
			verdict = "driver default lower"
			p99Loses++
		}
		if r.vs50Cost {
			cheaper = append(cheaper, fmt.Sprintf("`%s` (RU %s× vs %s×)", r.name, ru(r.p99.RUMultiplier), ru(r.s50.RUMultiplier)))
		}
		if better(r.s50, r.p99, "p99_ms", r.s50.P99, r.p99.P99) {
			worseThan50 = append(worseThan50, fmt.Sprintf("`%s` (p99 %s vs %s ms)", r.name, ms(r.p99.P99), ms(r.s50.P99)))
		}
		tab = append(tab, []string{r.name,
			ms(r.dd.P99), ms(r.s50.P99), ms(r.p99.P99), ms(r.bud.P99),
			ru(r.dd.RUMultiplier), ru(r.s50.RUMultiplier), ru(r.p99.RUMultiplier), ru(r.bud.RUMultiplier), verdict})
	}
	d.table([]string{"scenario", "p99 driver-default", "p99 static-50ms", "p99 p99-dynamic", "p99 budget", "RU× driver-default", "RU× static-50ms", "RU× p99-dynamic", "RU× budget", "p99-dynamic vs driver default"}, tab)

	d.p("## Answer")
	d.p("Across %d scenarios the dynamic P99 threshold gives a significantly lower p99 than the static driver default in %d, a higher one in %d, and no significant difference in the rest (healthy regions, throttles that no region can relieve, slow-downs too small for either threshold).", len(rows), p99Wins, p99Loses)
	d.p("Where it wins, it wins through its floor. A slow primary attempt is cancelled when the alternate wins, so its latency is never observed (the observations are censored) and the observed p99 stays at the healthy one: during a partial slow-down the threshold sits at the 50 ms clamp and the policy behaves exactly like the `static-50ms` control (same p99 and RU in the incident scenarios). The quantile earns its keep where the primary's *normal* latency is above the floor: it is cheaper than `static-50ms` in %s, because it does not hedge requests that are merely normal.", joinOr(cheaper, "no scenario"))
	if len(worseThan50) > 0 {
		d.p("Its blind spot is the cold start: until 100 primary attempts have completed it hedges at its 1 s initial threshold, and when the primary is slow for every request no attempt ever completes, so it stays there. It is significantly worse than `static-50ms` in %s.", strings.Join(worseThan50, ", "))
	}
	var initFixes, initHurts []string
	for _, r := range rows {
		if better(r.init50, r.p99, "p99_ms", r.init50.P99, r.p99.P99) {
			initFixes = append(initFixes, fmt.Sprintf("`%s` (p99 %s → %s ms)", r.name, ms(r.p99.P99), ms(r.init50.P99)))
		}
		if better(r.p99, r.init50, "p99_ms", r.p99.P99, r.init50.P99) || r.init50.RUMultiplier > r.p99.RUMultiplier+0.01 {
			initHurts = append(initHurts, "`"+r.name+"`")
		}
	}
	d.p("Starting at the floor instead (`p99-init-50ms`) removes the blind spot: it is significantly better than `p99-dynamic` in %s, and worse (p99, or more than one point of RU) in %s.", joinOr(initFixes, "no scenario"), joinOr(initHurts, "no scenario"))
	budLoses := []string{}
	for _, r := range rows {
		if better(r.p99, r.bud, "p99_ms", r.p99.P99, r.bud.P99) {
			budLoses = append(budLoses, "`"+r.name+"`")
		}
	}
	if len(budLoses) > 0 {
		d.p("The hedge budget (%g%% of operations) bounds the extra RU but gives back tail latency whenever more than %g%% of requests need hedging: its p99 is significantly worse than the unbudgeted policy's in %s, and it is significantly better nowhere. The data does not show the budget paying for itself here; it is a safety valve for fleets that must cap RU, not a better default.", budgetRatio*100, budgetRatio*100, strings.Join(budLoses, ", "))
	} else {
		d.p("The hedge budget (%g%% of operations) matched the unbudgeted policy's tail in every scenario while bounding the extra RU.", budgetRatio*100)
	}
	if p99Wins > p99Loses {
		d.p("**Recommendation:** ship the dynamic P99 threshold clamped to 50–4000 ms rather than the static `min(1s, request_timeout/2)` — the static default leaves p99 near 1 s during exactly the partial slow-downs hedging exists for — with the floor (50 ms), not 1 s, as its initial threshold (see `p99-init-50ms` above). Size RU for the 2× worst case (§9.3). Where the data does not settle it: these scenarios model one client; fleet-wide effects of many clients hedging into one alternate region at once are not simulated.")
	} else {
		d.p("**Recommendation:** the data does not favour the dynamic threshold over the static driver default in these scenarios; keep the static default.")
	}
	return nil
}

func joinOr(xs []string, none string) string {
	if len(xs) == 0 {
		return none
	}
	return strings.Join(xs, ", ")
}

func firstSentence(s string) string {
	for i, c := range s {
		if c == '.' && (i+1 == len(s) || s[i+1] == ' ') {
			return s[:i+1]
		}
	}
	return s
}
