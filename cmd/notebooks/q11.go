package main

import (
	"strings"

	"hedgelab/internal/report"
	"hedgelab/simnet"
)

// q11Scenarios is the library the Q11 study runs over, in reading order.
var q11Scenarios = []string{
	"healthy", "default", "incident-north-europe-2022", "incident-gcs-2018", "incident-us-east1-2019",
	"heavy-tail", "bimodal", "cold-start", "saturation", "throughput-control", "ru-budget-3200",
}

const budgetRatio = 0.2

func q11Policies(r *simnet.Config) []simnet.Policy {
	return []simnet.Policy{polDisabled(), polDriverDefault(r.RequestTimeout), polP99(), polP99Budget(budgetRatio, r.RequestTimeout)}
}

func q11(d *doc) error {
	d.p("**Question.** The spec (§5.2) ships a static driver default threshold `min(1s, request_timeout/2)`; the transport pipeline spec (TPS §4.2) asks for a dynamic threshold equal to the observed p99 of the primary region, clamped to 50–4000 ms. Which should v1 ship (§17 Q11)?")
	d.p("**Method.** Every scenario below runs four policies on the same seeded workload (common random numbers): `disabled` (no hedging), `driver-default` (the static formula with the scenario's request timeout), `p99-dynamic` (observed p99 of the primary region's attempt latency over a 60 s sliding window of six DDSketch buckets, clamped to [50 ms, 4000 ms], 1 s until 100 samples) and hedgelab's proposal `p99+budget-%g%%` (the same p99 threshold with a hedge budget: a token bucket that lets at most %g%% of operations hedge over time, `hedging.BudgetedPolicy`). Latency figures are over all operations of all replications; the brackets are 95%% confidence intervals of the mean over replications (Student t).", budgetRatio*100, budgetRatio*100)

	type row struct {
		name                  string
		dd, p99, bud          report.Figures
		p99Wins, p99Loses     bool
		budWins, budCostsLess bool
	}
	var rows []row
	for _, name := range q11Scenarios {
		r, sub, err := d.section(name, q11Policies, "ccdf.png", "latency CCDF")
		if err != nil {
			return err
		}
		dd, p99, bud := r.fig("driver-default"), r.fig("p99-dynamic"), r.fig(polP99Budget(budgetRatio, r.cfg.RequestTimeout).Name)
		rows = append(rows, row{
			name: name, dd: dd, p99: p99, bud: bud,
			p99Wins:      better(p99, dd, "p99_ms", p99.P99, dd.P99),
			p99Loses:     better(dd, p99, "p99_ms", dd.P99, p99.P99),
			budWins:      better(bud, dd, "p99_ms", bud.P99, dd.P99),
			budCostsLess: bud.RUMultiplier < p99.RUMultiplier-0.005,
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
	p99Wins, p99Loses, budWins := 0, 0, 0
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
		if r.budWins {
			budWins++
		}
		tab = append(tab, []string{r.name,
			ms(r.dd.P99), ms(r.p99.P99), ms(r.bud.P99),
			ru(r.dd.RUMultiplier), ru(r.p99.RUMultiplier), ru(r.bud.RUMultiplier), verdict})
	}
	d.table([]string{"scenario", "p99 driver-default", "p99 p99-dynamic", "p99 budget", "RU× driver-default", "RU× p99-dynamic", "RU× budget", "p99 (95% CIs)"}, tab)

	d.p("## Answer")
	d.p("Across %d scenarios the dynamic P99 threshold gives a significantly lower p99 than the static driver default in %d, a higher one in %d, and no significant difference in the rest (healthy regions, throttles that no region can relieve, tails too short for either threshold).", len(rows), p99Wins, p99Loses)
	worst, worstName := 0.0, ""
	for _, r := range rows {
		if extra := r.p99.RUMultiplier - r.dd.RUMultiplier; extra > worst {
			worst, worstName = extra, r.name
		}
	}
	if worstName != "" {
		d.p("Its price is RU: at most %.1f percentage points more RU multiplier than the driver default (in `%s`).", 100*worst, worstName)
	}
	d.p("Why it wins: during a partial slow-down a slow primary attempt is cancelled when the alternate wins, so its latency is never observed (the observations are censored) and the observed p99 stays near the healthy one. The threshold therefore sits at the 50 ms floor and every slow request is hedged early, bounding p99 near 50 ms + the alternate's round trip, where the static default bounds it near 1 s. The same censoring is its blind spot: a primary that is slow for *every* request from the start never completes an attempt, so the policy never collects the 100 samples it needs and stays at its 1 s initial threshold (see `cold-start` here and the `primary-slow` scenario in results/).")
	budLoses, budWinsP99 := []string{}, 0
	for _, r := range rows {
		if better(r.p99, r.bud, "p99_ms", r.p99.P99, r.bud.P99) {
			budLoses = append(budLoses, "`"+r.name+"`")
		}
		if better(r.bud, r.p99, "p99_ms", r.bud.P99, r.p99.P99) {
			budWinsP99++
		}
	}
	if len(budLoses) > 0 {
		d.p("The hedge budget (%g%% of operations, falling back to the driver default when spent) bounds the extra RU but gives back tail latency whenever more than %g%% of requests need hedging: its p99 is significantly worse than the unbudgeted p99 policy in %s, and better in %d scenario(s). The data does not show the budget paying for itself in these scenarios; it is a safety valve for fleets that must cap RU, not a better default.", budgetRatio*100, budgetRatio*100, strings.Join(budLoses, ", "), budWinsP99)
	} else {
		d.p("The hedge budget (%g%% of operations, falling back to the driver default when spent) matched the unbudgeted p99 policy's tail in every scenario here while bounding the extra RU at %g%%.", budgetRatio*100, budgetRatio*100)
	}
	if p99Wins > p99Loses {
		d.p("**Recommendation:** ship the dynamic P99 threshold clamped to 50–4000 ms, not the static `min(1s, request_timeout/2)`; keep the driver default as its initial threshold, and size RU for the 2× worst case (§9.3). Where the data does not settle it: these scenarios model one client; fleet-wide effects of many clients hedging into one alternate region at once are not simulated, and the always-slow-from-start case needs a better initial threshold than 1 s (for example the 50 ms floor) — a one-line configuration change worth a follow-up study.")
	} else {
		d.p("**Recommendation:** the data does not favour the dynamic threshold over the static driver default in these scenarios; keep the static default.")
	}
	return nil
}

func firstSentence(s string) string {
	for i, c := range s {
		if c == '.' && (i+1 == len(s) || s[i+1] == ' ') {
			return s[:i+1]
		}
	}
	return s
}
