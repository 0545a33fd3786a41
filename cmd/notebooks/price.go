package main

import (
	"fmt"
	"strings"

	"hedgelab/internal/report"

	"hedgelab/simnet"
)

var priceScenarios = []string{"healthy", "default", "heavy-tail", "bimodal", "saturation", "throughput-control", "ru-budget-3200", "hot-partition-3214"}

func pricePolicies(cfg *simnet.Config) []simnet.Policy {
	return []simnet.Policy{
		polDisabled(), polDriverDefault(cfg.Client.RequestTimeout), polStatic("static-500ms", 500), polStatic("static-100ms", 100),
		polStatic("static-20ms", 20), polP99(), polP99Budget(budgetRatio, cfg.Client.RequestTimeout),
	}
}

func price(d *doc) error {
	d.p("**Question.** What does hedging cost in RU for the tail latency it buys, and when does hedging under saturation or throttling make things worse (§9.3 asks for operator guidance)?")
	d.p("**Method.** Every policy below runs on each scenario's seeded workload; the chart per scenario plots p99 (●) and p99.9 (▲) against the RU multiplier (RU charged for every attempt that reached a replica, cancelled losers included, divided by the RU of the responses returned): the lower left is better, and a point to the right of another with a higher latency is dominated.")
	var worse []string
	healthyExtra, healthyPolicy := 0.0, ""
	var satOff, satAggressive *report.Figures
	for _, name := range priceScenarios {
		r, _, err := d.section(name, pricePolicies, "cost.png", "cost")
		if err != nil {
			return err
		}
		off := r.fig("disabled")
		for _, p := range r.res.Policies {
			f := r.fig(p.Name)
			if name == "saturation" && (p.Name == "disabled" || p.Name == "static-20ms") {
				if p.Name == "disabled" {
					satOff = &f
				} else {
					satAggressive = &f
				}
			}
			if name == "healthy" && f.RUMultiplier-1 > healthyExtra {
				healthyExtra, healthyPolicy = f.RUMultiplier-1, p.Name
			}
			if p.Name != "disabled" && (better(off, f, "p99_ms", off.P99, f.P99) || f.ErrorRate > 1.1*off.ErrorRate+0.001) {
				worse = append(worse, fmt.Sprintf("`%s` under `%s` (p99 %s ms vs %s ms without hedging, errors %s vs %s)",
					p.Name, name, ms(f.P99), ms(off.P99), pct(f.ErrorRate), pct(off.ErrorRate)))
			}
		}
	}
	d.p("## Answer")
	d.p("Hedging's RU multiplier is bounded by 1 + hedge rate (at most 2×, §9.3). When nothing is wrong (`healthy`) the most expensive policy here, `%s`, costs %.2f%% extra RU; during incidents the extra RU is roughly the fraction of requests the slow region delays (see the hedge rates above).", healthyPolicy, 100*healthyExtra)
	if len(worse) == 0 {
		d.p("No hedging policy made p99 or the error rate significantly worse than no hedging in these scenarios.")
	} else {
		d.p("Hedging made things worse than no hedging in: %s.", strings.Join(worse, "; "))
	}
	sat := ""
	if satOff != nil && satAggressive != nil {
		if better(*satOff, *satAggressive, "p99_ms", satOff.P99, satAggressive.P99) {
			sat = fmt.Sprintf(" In `saturation` a 20 ms threshold raised p99 from %s to %s ms.", ms(satOff.P99), ms(satAggressive.P99))
		} else {
			sat = fmt.Sprintf(" In `saturation` the point estimates rise with aggressiveness (p99 %s ms without hedging, %s ms at a 20 ms threshold), but three replications do not separate them at 95%% confidence, so the data here does not settle whether a low threshold hurts under saturation.", ms(satOff.P99), ms(satAggressive.P99))
		}
	}
	d.p("**Operator guidance (§9.3).** Size throughput-control budgets for up to 2× RU. On an account whose throughput-control group is saturated (local 429s), hedging cannot help: the alternate draws from the same gate, so every alternate that fires turns into more local 429s for other operations (the error rates above) — opt out with `AvailabilityStrategy::Disabled`; the driver's short-circuit on a local 429 (no fan-out after a local 429 on the primary) protects only the operation that saw it. RU-budget (429/3200) and hot-partition (429/3214) throttles are final and never spawn a hedge, so hedging neither helps nor hurts them. On a replica near saturation, a low threshold adds load exactly when queues are long: keep the threshold above the saturated p99 (TPS §4.2's p99 does this by itself; the default `p99_dynamic` only up to its ceiling of 2.5 × the median, `ceiling_factor`) or add a hedge budget.%s", sat)
	return nil
}
