package main

import (
	"fmt"
	"slices"
	"strings"

	"hedgelab/internal/report"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// q11Scenarios is the library the Q11 study runs over, in reading order:
// the first edition's twelve, then the threshold-policy failure modes of
// issue 9.
var q11Scenarios = []string{
	"healthy", "default", "incident-north-europe-2022", "incident-gcs-2018", "incident-us-east1-2019",
	"primary-slow", "heavy-tail", "bimodal", "cold-start", "saturation", "throughput-control", "ru-budget-3200",
	"far-primary", "low-rate-client", "gradual-slowdown", "ramp-after-warmup", "partial-slowdown", "two-document-sizes",
}

// q11PolicyTOML is every policy of the study, in the scenario file syntax
// (built by scenarios.BuildPolicies, the one definition of the policy
// types).
const q11PolicyTOML = `[[policies]]
name = "disabled"
type = "disabled"

[[policies]]
name = "driver-default"
type = "driver_default"

[[policies]]
name = "static-50ms"
type = "static"
threshold_ms = 50

[[policies]]
name = "p99-tps"
type = "p99_dynamic"
preset = "tps_literal"

[[policies]]
name = "p99-dynamic"
type = "p99_dynamic"

[[policies]]
name = "p99-budget-20pct"
type = "p99_dynamic"
hedge_budget = 0.2

[[policies]]
name = "cassandra-100ms"
type = "capped_quantile"
cap_ms = 100

[[policies]]
name = "finagle-2pct"
type = "backup_requests"
max_extra_load = 0.02

[[policies]]
name = "grpc-throttle-50ms"
type = "retry_throttle"
threshold_ms = 50
`

// Scorecard margins: a policy is worse than the best on p99 when its p99
// exceeds the best's by more than q11P99Margin (and the 95% intervals are
// apart), and worse on RU when its RU multiplier exceeds the best's by more
// than q11RUMargin.
const (
	q11P99Margin = 1.10
	q11RUMargin  = 0.02
	// q11ErrMargin: a policy's error rate is worse than the best's when
	// it exceeds it by more than this (a fraction of operations).
	q11ErrMargin = 0.01
)

func q11Policies(r *simnet.Config) []simnet.Policy {
	pols, err := scenarios.BuildPolicies("q11 policies", []byte(q11PolicyTOML), r.RequestTimeout)
	if err != nil {
		panic(err) // a constant: covered by the notebook tests
	}
	return pols
}

// worse reports whether f's figure key (value fv) is significantly above
// best's (bv): by more than q11P99Margin, with the intervals apart when
// both exist.
func worse(f, best report.Figures, key string, fv, bv float64) bool {
	if !(fv > q11P99Margin*bv) {
		return false
	}
	cf, okf := f.CI95[key]
	cb, okb := best.CI95[key]
	return !(okf && okb) || cf[0] > cb[1]
}

func q11(d *doc) error {
	d.p("**Question.** The spec (§5.2) ships a static driver default threshold `min(1s, request_timeout/2)`; the transport pipeline spec (TPS §4.2) asks for a dynamic threshold equal to the observed p99 of the primary region, clamped to 50–4000 ms. Which should v1 ship (§17 Q11)? This second edition adds the ways a learned threshold is known to fail (issue 9) and the designs other systems ship.")
	d.p("**Policies.** Every scenario runs every policy on the same seeded workload (common random numbers), built from this scenario-file text (paste it into a scenario to reproduce a row):")
	d.b.WriteString("```toml\n" + q11PolicyTOML + "```\n\n")
	d.p("`p99-tps` is TPS §4.2 as written: the sketch's p99 of completed primary attempts over a 60 s window, clamped to [50 ms, 4000 ms], 1 s until 100 samples. `p99-dynamic` is the same threshold with hedgelab's five fixes, and is what `type = \"p99_dynamic\"` means with no further keys: the sketch bucket's upper edge (never below the true quantile because of rounding), a thin window after warm-up keeps the last estimate, warm-up on the largest observation, superseded primaries recorded as lower bounds of their latency (censoring), and a ceiling of 2.5 × the median of completed attempts (no ratchet into an incident). `p99-budget-20pct` adds a hedge budget of 20%% of operations. The field's designs: Cassandra's `MIN(99p, 100 ms)`; Finagle's backup requests (the p98, with a 2%% budget and a floor of one backup per second); gRPC's retry throttling (gRFC A6) around a 50 ms hedging delay (10 tokens, 0.1 per operation, hedging only above half). `scenarios/README.md` documents every key.")
	d.p("**Method.** With several replications each latency figure and RU multiplier is the mean over replications with its 95%% confidence interval (Student t); hedge and error rates are over all operations. An interval shown as `[one bucket]` is zero-width because every replication's figure fell in the same latency-histogram bucket (three significant digits): the replications agree to the histogram's resolution, which is not a measured certainty. The scorecard counts a policy as worse than the best policy of a scenario on p99 when its p99 is more than %.0f%% above the best's with the intervals apart, and on RU when its RU multiplier is more than %.0f points above the best's; the best is taken over the hedging policies (`disabled` is the baseline, scored but not a candidate).", 100*(q11P99Margin-1), 100*q11RUMargin)

	type result struct {
		name string
		figs map[string]report.Figures
	}
	var results []result
	var names []string
	for _, name := range q11Scenarios {
		r, sub, err := d.section(name, q11Policies, "ccdf.png", "latency CCDF")
		if err != nil {
			return err
		}
		if names == nil {
			for _, p := range r.res.Policies {
				names = append(names, p.Name)
			}
		}
		figs := map[string]report.Figures{}
		for _, n := range names {
			figs[n] = r.fig(n)
		}
		results = append(results, result{name, figs})
		if name == "incident-north-europe-2022" || name == "gradual-slowdown" {
			d.p("Thresholds and hedge rates over time:")
			d.img("threshold over time", sub+"/threshold.png")
			d.img("hedge rate over time", sub+"/hedge_rate.png")
		}
	}

	// Scorecard.
	type score struct {
		p99, ru, waste, errs, p999 []string
		lost                       int // scenarios with a p99 loss, RU for no p99, or more errors
	}
	scores := map[string]*score{}
	for _, n := range names {
		scores[n] = &score{}
	}
	for _, res := range results {
		var bestP99, bestP999, bestRU, bestErr report.Figures
		first := true
		for _, n := range names[1:] {
			f := res.figs[n]
			if first || f.P99 < bestP99.P99 {
				bestP99 = f
			}
			if first || f.P999 < bestP999.P999 {
				bestP999 = f
			}
			if first || f.RUMultiplier < bestRU.RUMultiplier {
				bestRU = f
			}
			if first || f.ErrorRate < bestErr.ErrorRate {
				bestErr = f
			}
			first = false
		}
		for _, n := range names {
			f, s := res.figs[n], scores[n]
			lost := false
			if f.ErrorRate > bestErr.ErrorRate+q11ErrMargin {
				s.errs = append(s.errs, fmt.Sprintf("`%s` (%s vs %s)", res.name, pct(f.ErrorRate), pct(bestErr.ErrorRate)))
				lost = true
			}
			if worse(f, bestP99, "p99_ms", f.P99, bestP99.P99) {
				lost = true
				s.p99 = append(s.p99, fmt.Sprintf("`%s` (%s vs %s ms, `%s`)", res.name, ms(f.P99), ms(bestP99.P99), bestP99.Policy))
			}
			if f.RUMultiplier > bestRU.RUMultiplier+q11RUMargin {
				s.ru = append(s.ru, fmt.Sprintf("`%s` (+%.0f points)", res.name, 100*(f.RUMultiplier-bestRU.RUMultiplier)))
				if !worse(bestRU, f, "p99_ms", bestRU.P99, f.P99) {
					lost = true
					s.waste = append(s.waste, fmt.Sprintf("`%s` (+%.0f points, p99 %s vs %s ms)", res.name,
						100*(f.RUMultiplier-bestRU.RUMultiplier), ms(f.P99), ms(bestRU.P99)))
				}
			}
			if worse(f, bestP999, "p999_ms", f.P999, bestP999.P999) {
				s.p999 = append(s.p999, fmt.Sprintf("`%s` (%s vs %s ms, `%s`)", res.name, ms(f.P999), ms(bestP999.P999), bestP999.Policy))
			}
			if lost {
				s.lost++
			}
		}
	}
	d.p("## Scorecard")
	d.p("For each policy, the scenarios (of %d) where it is significantly worse than the best policy of that scenario on p99 (more than %.0f%% above, intervals apart) or on RU (more than %.0f points above); the subset of the RU losses that bought no p99 (its p99 not significantly below the cheapest policy's); where its error rate is more than %.0f point above the best's; and, for information, where its p99.9 is significantly worse than the best p99.9 (same margin). A scenario is *lost* when the policy has a p99 loss, RU spent for no p99, or more errors there.", len(results), 100*(q11P99Margin-1), 100*q11RUMargin, 100*q11ErrMargin)
	var tab [][]string
	for _, n := range names {
		s := scores[n]
		tab = append(tab, []string{"`" + n + "`", fmt.Sprint(s.lost), fmt.Sprintf("%d: %s", len(s.p99), joinOr(s.p99, "—")),
			fmt.Sprintf("%d: %s", len(s.ru), joinOr(s.ru, "—")), fmt.Sprintf("%d: %s", len(s.waste), joinOr(s.waste, "—")),
			fmt.Sprintf("%d: %s", len(s.errs), joinOr(s.errs, "—")), joinOr(s.p999, "—")})
	}
	d.table([]string{"policy", "scenarios lost", "p99 worse than the best", "RU worse than the best", "of which RU for no p99", "errors worse than the best", "p99.9 worse than the best"}, tab)

	// Recommendation: the fewest losses (p99 losses plus RU spent for no
	// p99); ties by fewer RU losses.
	losses := func(n string) int { return scores[n].lost }
	cands := slices.Clone(names[1:])
	slices.SortStableFunc(cands, func(a, b string) int {
		if c := losses(a) - losses(b); c != 0 {
			return c
		}
		return len(scores[a].ru) - len(scores[b].ru)
	})
	rec, next := cands[0], cands[1]
	d.p("## Answer")
	d.p("By the scorecard, `%s` loses the fewest scenarios (%d of %d: %d on p99, %d RU for no p99), followed by `%s` (%d). `static-50ms` is never far behind the best p99 but spends RU for nothing where its fixed 50 ms is below the normal latency (%s). `p99-tps`, TPS §4.2 as written, loses on p99 in %d: %s.",
		rec, losses(rec), len(results), len(scores[rec].p99), len(scores[rec].waste), next, losses(next),
		joinOr(scores["static-50ms"].waste, "none"), len(scores["p99-tps"].p99), joinOr(scores["p99-tps"].p99, "none"))
	if s := scores[rec]; s.lost > 0 {
		d.p("Where `%s` loses: %s.", rec, joinOr(slices.Concat(s.p99, s.waste, s.errs), "nowhere"))
	}
	if s := scores[rec].errs; len(s) > 0 {
		d.p("Its errors: %s. Under a saturated client throughput-control gate every alternate draws from the same gate (§9.3), so a policy that keeps hedging turns its alternates into local 429s for other operations; `p99-tps` avoids this only because its threshold ratchets up past the slow reads and hedging stops. Opt out of hedging on such an account (notebook 04).", strings.Join(s, ", "))
	}
	d.p("No policy wins everywhere, and the trade-off is RU. `%s` is worse than the cheapest policy on RU in %d scenarios: %s. Those are the scenarios where it keeps hedging a slow share of reads that a cheaper policy stops hedging — the ceiling's purpose during an incident, and its price when the slow share is normal (`two-document-sizes`: one estimator for two document sizes ten times apart, where the median is a small document and the threshold sits at its 50 ms clamp). Where hedging helped, its extra RU is the slow share itself, not one point: see the RU columns above (for example `incident-us-east1-2019`).", rec, len(scores[rec].ru), joinOr(scores[rec].ru, "none"))
	if s := scores[rec].p999; len(s) > 0 {
		d.p("Its p99.9 is significantly worse than the best policy's in %s.", strings.Join(s, ", "))
	} else {
		d.p("Its p99.9 is nowhere significantly worse than the best policy's; TPS §4.2 as written (`p99-tps`) is worse in %s (the first edition left its `bimodal` p99.9, 75 ms against `static-50ms`'s 67.6 ms, unmentioned).", joinOr(scores["p99-tps"].p999, "no scenario"))
	}
	d.p("The budgets trade in the other direction: `p99-budget-20pct` loses on p99 in %d scenarios and on RU in %d; `finagle-2pct` in %d and %d; `grpc-throttle-50ms` in %d and %d. They cap the extra RU and give back the tail whenever more reads need hedging than the budget allows (a third of the reads in `gradual-slowdown`). Cassandra's fixed cap (`cassandra-100ms`) loses on p99 in %d and on RU in %d: a cap in milliseconds is right for one latency scale only (it hedges every read of `far-primary`, 200 ms away).",
		len(scores["p99-budget-20pct"].p99), len(scores["p99-budget-20pct"].ru), len(scores["finagle-2pct"].p99), len(scores["finagle-2pct"].ru),
		len(scores["grpc-throttle-50ms"].p99), len(scores["grpc-throttle-50ms"].ru), len(scores["cassandra-100ms"].p99), len(scores["cassandra-100ms"].ru))
	if rec == "p99-dynamic" {
		d.p("**Recommendation:** ship the dynamic threshold with the five fixes — `type = \"p99_dynamic\"` with no further keys (`hedging.P99DynamicConfig{}`): the observed p99 (bucket upper edge; superseded primaries as lower bounds), capped at 2.5 × the median of completed attempts, clamped to 50–4000 ms, keeping its last estimate on a thin window. Evidence: the scorecard above and the five failure cases (`scenarios/testdata/policy-cases/`, all within their margins; TPS §4.2 as written fails each). The setting that decides the trade-off is how much RU the fleet may spend: where the extra RU of hedging a persistent slow share (up to its size, e.g. +%s in `gradual-slowdown`) is not affordable, add `hedge_budget` and accept its p99 losses. What would change the answer: workloads whose normal latency is multi-modal (mixed document sizes in one container), where the median ceiling hedges a healthy mode — raise `ceiling_factor` or keep one estimator per size class; and fleets of many clients hedging into one alternate at once, which these single-client scenarios do not model.", pctPoints(results[slices.IndexFunc(results, func(r result) bool { return r.name == "gradual-slowdown" })].figs["p99-dynamic"]))
	} else {
		d.p("**Recommendation:** by the scorecard, ship `%s`; see its row for the scenarios where it loses.", rec)
	}
	return nil
}

// pctPoints is f's extra RU over 1.0 in percentage points.
func pctPoints(f report.Figures) string {
	return fmt.Sprintf("%.0f points", 100*(f.RUMultiplier-1))
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
