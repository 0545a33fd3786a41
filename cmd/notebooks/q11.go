package main

import (
	"fmt"
	"math"
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
name = "p99-dynamic-min20"
type = "p99_dynamic"
min_ms = 20

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

// q11AblationTOML is the fixed default with one fix reverted at a time to
// its TPS §4.2 value (hedging.P99DynamicConfig's five options), every
// other setting the default's (initial_ms = min_ms = 50).
const q11AblationTOML = `[[policies]]
name = "p99-dynamic"
type = "p99_dynamic"

[[policies]]
name = "rounding-value"
type = "p99_dynamic"
rounding = "value"

[[policies]]
name = "thin-window-initial"
type = "p99_dynamic"
thin_window = "initial"

[[policies]]
name = "warmup-initial"
type = "p99_dynamic"
warmup = "initial"

[[policies]]
name = "censored-ignore"
type = "p99_dynamic"
censored = "ignore"

[[policies]]
name = "ceiling-none"
type = "p99_dynamic"
ceiling = "none"

[[policies]]
name = "p90-dynamic"
type = "p99_dynamic"
quantile = 0.9
min_ms = 1
ceiling = "none"

[[policies]]
name = "p90-censored-ignore"
type = "p99_dynamic"
quantile = 0.9
min_ms = 1
ceiling = "none"
censored = "ignore"
`

// q11AblationScenarios are the failure-mode scenarios the ablation runs.
var q11AblationScenarios = []string{"far-primary", "low-rate-client", "cold-start", "gradual-slowdown", "ramp-after-warmup", "partial-slowdown", "two-document-sizes"}

func q11Policies(r *simnet.Config) []simnet.Policy {
	pols, err := scenarios.BuildPolicies("q11 policies", []byte(q11PolicyTOML), r.Client.RequestTimeout)
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

// q11Margins are the scorecard's margins as the prose states them: P99
// the fraction above the best p99, RU and Err in fractions (points / 100).
type q11Margins struct{ P99, RU, Err float64 }

var q11MarginView = q11Margins{P99: q11P99Margin - 1, RU: q11RUMargin, Err: q11ErrMargin}

// q11PolicySettings are the settings of q11PolicyTOML the "q11/policies"
// paragraph names: the claim "q11 policy text matches q11PolicyTOML"
// checks that each is there.
var q11PolicySettings = []string{
	`name = "p99-tps"` + "\ntype = \"p99_dynamic\"\npreset = \"tps_literal\"",
	`name = "p99-dynamic-min20"` + "\ntype = \"p99_dynamic\"\nmin_ms = 20\n",
	`name = "p99-budget-20pct"` + "\ntype = \"p99_dynamic\"\nhedge_budget = 0.2\n",
	`name = "cassandra-100ms"` + "\ntype = \"capped_quantile\"\ncap_ms = 100\n",
	`name = "finagle-2pct"` + "\ntype = \"backup_requests\"\nmax_extra_load = 0.02\n",
	`name = "grpc-throttle-50ms"` + "\ntype = \"retry_throttle\"\nthreshold_ms = 50\n",
	`name = "static-50ms"` + "\ntype = \"static\"\nthreshold_ms = 50\n",
}

func q11(d *doc) error {
	d.check(claim{"q11 policy text matches q11PolicyTOML", func() error {
		for _, want := range q11PolicySettings {
			if !strings.Contains(q11PolicyTOML, want) {
				return failf("q11PolicyTOML lacks %q", want)
			}
		}
		return nil
	}})
	d.say("q11/question", nil)
	d.say("q11/policies-intro", nil)
	d.b.WriteString("```toml\n" + q11PolicyTOML + "```\n\n")
	d.say("q11/policies", nil)
	d.say("q11/method", q11MarginView)

	var results []q11Result
	var names []string
	for _, name := range q11Scenarios {
		r, sub, err := d.section(name, q11Policies, "ccdf.svg", "latency CCDF")
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
		results = append(results, q11Result{name, figs})
		if name == "incident-north-europe-2022" || name == "gradual-slowdown" {
			d.say("q11/over-time", nil)
			d.img("threshold over time", sub+"/threshold.svg")
			d.img("hedge rate over time", sub+"/hedge_rate.svg")
		}
	}
	get := func(scn, pol string) report.Figures {
		return results[slices.IndexFunc(results, func(r q11Result) bool { return r.name == scn })].figs[pol]
	}

	scores := q11Score(results, names, names[1:])
	d.p("## Scorecard")
	d.say("q11/scorecard", struct {
		Scenarios int
		Margins   q11Margins
	}{len(results), q11MarginView})
	var tab [][]string
	for _, n := range names {
		s := scores[n]
		tab = append(tab, []string{"`" + n + "`", fmt.Sprint(s.Lost), fmt.Sprintf("%d: %s", len(s.P99), joinOr(s.P99, "—")),
			fmt.Sprintf("%d: %s", len(s.RU), joinOr(s.RU, "—")), fmt.Sprintf("%d: %s", len(s.Waste), joinOr(s.Waste, "—")),
			fmt.Sprintf("%d: %s", len(s.Errs), joinOr(s.Errs, "—")), joinOr(s.P999, "—")})
	}
	d.table([]string{"policy", "scenarios lost", "p99 worse than the best", "RU worse than the best", "of which RU for no p99", "errors worse than the best", "p99.9 worse than the best"}, tab)

	// Without the 20 ms floor among the candidates (the set of the first
	// draft of this edition): what the counts were.
	noMin20 := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == q11Floor20 })
	scores50 := q11Score(results, noMin20, noMin20[1:])
	type pair struct{ Dynamic, Static *q11Scores }
	d.say("q11/without-min20", struct {
		Floor20       string
		Without, With pair
	}{q11Floor20, pair{scores50["p99-dynamic"], scores50["static-50ms"]}, pair{scores["p99-dynamic"], scores["static-50ms"]}})

	// What the floor does.
	d.p("## What the floor does")
	var atFloor, above []string
	for _, res := range results {
		a, b := res.figs["p99-dynamic"], res.figs["static-50ms"]
		if a.P99 == b.P99 && a.P999 == b.P999 && a.HedgeRate == b.HedgeRate && a.RUMultiplier == b.RUMultiplier && a.ErrorRate == b.ErrorRate {
			atFloor = append(atFloor, "`"+res.name+"`")
		} else {
			above = append(above, "`"+res.name+"`")
		}
	}
	d.say("q11/at-floor", struct {
		Scenarios      int
		AtFloor, Above []string
	}{len(results), atFloor, above})
	var floorTab [][]string
	fv := struct {
		Margins                                      q11Margins
		Cuts, Moved, Dearer, Slower, Unclear, Errier []string
		Floor20                                      string
	}{Margins: q11MarginView, Floor20: q11Floor20}
	for _, res := range results {
		a, b := res.figs["p99-dynamic"], res.figs[q11Floor20]
		floorTab = append(floorTab, []string{"`" + res.name + "`", ms(a.P99), ms(b.P99), pct(a.HedgeRate), pct(b.HedgeRate), ru(a.RUMultiplier), ru(b.RUMultiplier), pct(a.ErrorRate), pct(b.ErrorRate)})
		if worse(a, b, "p99_ms", a.P99, b.P99) {
			fv.Cuts = append(fv.Cuts, fmt.Sprintf("`%s` (%s → %s ms, %+.1f RU points)", res.name, ms(a.P99), ms(b.P99), 100*(b.RUMultiplier-a.RUMultiplier)))
			if b.P50 < 0.9*a.P50 && b.Counters["breaker_trips"] > a.Counters["breaker_trips"] {
				fv.Moved = append(fv.Moved, fmt.Sprintf("`%s` (p50 %s → %s ms, %d partition-breaker trips against %d)", res.name, ms(a.P50), ms(b.P50), b.Counters["breaker_trips"], a.Counters["breaker_trips"]))
			}
		}
		switch {
		case worse(b, a, "p99_ms", b.P99, a.P99):
			fv.Slower = append(fv.Slower, fmt.Sprintf("`%s` (%s → %s ms)", res.name, ms(a.P99), ms(b.P99)))
		case b.P99 > 1.05*a.P99:
			fv.Unclear = append(fv.Unclear, fmt.Sprintf("`%s` (%s → %s ms)", res.name, withCI(a, "p99_ms", a.P99, ms), withCI(b, "p99_ms", b.P99, ms)))
		}
		if b.RUMultiplier > a.RUMultiplier+q11RUMargin {
			fv.Dearer = append(fv.Dearer, fmt.Sprintf("`%s` (%s → %s)", res.name, ru(a.RUMultiplier), ru(b.RUMultiplier)))
		}
		if b.ErrorRate > a.ErrorRate+q11ErrMargin {
			fv.Errier = append(fv.Errier, fmt.Sprintf("`%s` (%s → %s)", res.name, pct(a.ErrorRate), pct(b.ErrorRate)))
		}
	}
	d.say("q11/floor-intro", fv)
	d.table([]string{"scenario", "p99 ms, 50 ms floor", "p99 ms, 20 ms floor", "hedge rate, 50", "hedge rate, 20", "RU ×, 50", "RU ×, 20", "errors, 50", "errors, 20"}, floorTab)
	d.say("q11/floor-20", fv)
	if len(fv.Moved) > 0 {
		d.say("q11/floor-moved", fv)
	}

	// Ablation.
	if err := q11Ablation(d); err != nil {
		return err
	}

	// Recommendation: the fewest losses (p99 losses plus RU spent for no
	// p99); ties by fewer RU losses.
	cands := q11Rank(scores, names[1:])
	rec, next := cands[0], cands[1]
	if err := q11Fleet(d, results, names, rec); err != nil {
		return err
	}
	d.p("## Answer")
	av := q11AnswerView{
		Rec: rec, Next: next, RecS: scores[rec], NextS: scores[next], Scenarios: len(results), Margins: q11MarginView,
		Dynamic: scores["p99-dynamic"], Static: scores["static-50ms"], TPS: scores["p99-tps"],
		Budget: scores["p99-budget-20pct"], Finagle: scores["finagle-2pct"], GRPC: scores["grpc-throttle-50ms"], Cassandra: scores["cassandra-100ms"],
		TPSThrottleHedged: get("throughput-control", "p99-tps").HedgeRate,
		BimodalTPS:        get("bimodal", "p99-tps").P999, BimodalStatic: get("bimodal", "static-50ms").P999,
		Floor20: q11Floor20, Floor20S: scores[q11Floor20], Cuts: len(fv.Cuts), Dearer: fv.Dearer,
		AtFloor: len(atFloor), FleetScenario: q11FleetScenario,
		LowRate: get("low-rate-client", q11Floor20).HedgeRate, LowRateMargin: q11LowRateMargin,
	}
	av.RecLosses = slices.Concat(av.RecS.P99, av.RecS.Waste, av.RecS.Errs)
	d.say("q11/answer-scorecard", av)
	if av.RecS.Lost > 0 {
		d.say("q11/answer-rec-loses", av)
	}
	if len(av.Dynamic.Errs) > 0 {
		d.say("q11/answer-errors", av)
	}
	// The price of the fixes against TPS §4.2 as written: scenarios where
	// p99-dynamic spends more RU than p99-tps, and what it bought; and,
	// over the scenarios where p99-dynamic spends more than the margin
	// above the cheapest policy, whether that RU is hedging's (p99-tps
	// spends the same) or the fixes'.
	for _, res := range results {
		a, b := res.figs["p99-dynamic"], res.figs["p99-tps"]
		dr := a.RUMultiplier - b.RUMultiplier
		switch {
		case dr > q11RUMargin:
			av.Price = append(av.Price, fmt.Sprintf("`%s` (%+.0f points; p99 %s vs %s ms)", res.name, 100*dr, ms(a.P99), ms(b.P99)))
		case a.RUMultiplier > 1+q11RUMargin && math.Abs(dr) <= q11RUMargin:
			av.Same = append(av.Same, fmt.Sprintf("`%s` (%s)", res.name, ru(a.RUMultiplier)))
		}
		if !q11RULoss(res, names[1:], "p99-dynamic") {
			continue
		}
		switch {
		case dr > q11RUMargin:
			av.FixesCount++
		case dr < -q11RUMargin:
			av.OtherCount++
		default:
			av.HedgingCount++
		}
	}
	gs := get("gradual-slowdown", "p99-dynamic")
	av.GradualPoints = pctPoints(gs)
	av.GradualTPS, av.GradualStatic = get("gradual-slowdown", "p99-tps").RUMultiplier, get("gradual-slowdown", "static-50ms").RUMultiplier
	d.check(claim{"the RU split covers every RU loss of p99-dynamic", func() error {
		if n := av.HedgingCount + av.FixesCount + av.OtherCount; n != len(av.Dynamic.RU) {
			return failf("%d scenarios split, %d RU losses", n, len(av.Dynamic.RU))
		}
		return nil
	}})
	d.say("q11/answer-ru", av)
	if len(av.Dynamic.P999) > 0 {
		d.say("q11/answer-p999", av)
	}
	far, err := d.loadOnly("far-primary")
	if err != nil {
		return err
	}
	av.FarRTT = far.RTTMs[far.ClientRegion][far.Endpoints[0].Region]
	gradual, err := d.loadOnly("gradual-slowdown")
	if err != nil {
		return err
	}
	d.check(claim{"gradual-slowdown slows a third of the reads (\"the slow third\")", func() error {
		if len(gradual.Episodes) == 0 || math.Abs(gradual.Episodes[0].Fraction-1.0/3) > 0.005 {
			return failf("episodes %+v", gradual.Episodes)
		}
		return nil
	}}, claim{"cassandra-100ms hedges every read of far-primary (its cap is below the RTT)", func() error {
		if f := get("far-primary", "cassandra-100ms"); f.HedgeRate < 0.99 {
			return failf("hedge rate %s", pct(f.HedgeRate))
		}
		return nil
	}})
	d.say("q11/answer-budgets", av)
	if rec == "p99-dynamic" || rec == q11Floor20 {
		av.Floor20Better = av.Floor20S.Lost < av.Dynamic.Lost
		// The default must also pass every failure case (scenarios/testdata/
		// policy-cases): low-rate-client allows the defaults at most 2%
		// hedged, and the embedded low-rate-client scenario is that case.
		av.LowRateMissed = av.LowRate > q11LowRateMargin
		d.say("q11/recommendation", av)
	} else {
		d.say("q11/recommendation-other", av)
	}
	return nil
}

// q11AnswerView is the answer's view: the recommended policy (fewest
// losses) and the next, every named policy's scorecard row, the RU split
// (HedgingCount, FixesCount, OtherCount over p99-dynamic's RU losses; Same
// and Price rendered) and the figures the recommendation cites.
type q11AnswerView struct {
	Rec, Next                            string
	RecS, NextS                          *q11Scores
	RecLosses                            []string
	Scenarios                            int
	Margins                              q11Margins
	Dynamic, Static, TPS                 *q11Scores
	Budget, Finagle, GRPC, Cassandra     *q11Scores
	TPSThrottleHedged                    float64
	BimodalTPS, BimodalStatic            float64
	HedgingCount, FixesCount, OtherCount int
	Same, Price                          []string
	GradualPoints                        string
	GradualTPS, GradualStatic            float64
	Floor20                              string
	Floor20S                             *q11Scores
	Floor20Better                        bool
	Cuts                                 int
	Dearer                               []string
	AtFloor                              int
	FleetScenario                        string
	LowRate, LowRateMargin               float64
	LowRateMissed                        bool
	FarRTT                               float64
}

// q11RULoss reports whether policy's RU multiplier in res is more than
// q11RUMargin above the cheapest of candidates (the scorecard's RU loss).
func q11RULoss(res q11Result, candidates []string, policy string) bool {
	cheapest := math.Inf(1)
	for _, n := range candidates {
		cheapest = min(cheapest, res.figs[n].RUMultiplier)
	}
	return res.figs[policy].RUMultiplier > cheapest+q11RUMargin
}

// q11Rank orders candidates by scenarios lost, ties by fewer RU losses
// (stable: the study's order breaks the rest).
func q11Rank(scores map[string]*q11Scores, candidates []string) []string {
	cands := slices.Clone(candidates)
	slices.SortStableFunc(cands, func(a, b string) int {
		if c := scores[a].Lost - scores[b].Lost; c != 0 {
			return c
		}
		return len(scores[a].RU) - len(scores[b].RU)
	})
	return cands
}

// q11Floor20 is the study's p99-dynamic with a 20 ms floor.
const q11Floor20 = "p99-dynamic-min20"

// q11LowRateMargin is the low-rate-client failure case's margin for the
// default policy: at most 2% of reads hedged (../shared/cases/policy/README.md).
const q11LowRateMargin = 0.02

// q11Result is one scenario's figures per policy.
type q11Result struct {
	name string
	figs map[string]report.Figures
}

// q11Scores is one policy's scorecard row: the scenarios where it is worse
// than the best candidate, as rendered text.
type q11Scores struct {
	P99, RU, Waste, Errs, P999 []string
	Lost                       int // scenarios with a p99 loss, RU for no p99, or more errors
}

// q11Score scores every policy of names against the best of candidates in
// each scenario (the margins above).
func q11Score(results []q11Result, names, candidates []string) map[string]*q11Scores {
	scores := map[string]*q11Scores{}
	for _, n := range names {
		scores[n] = &q11Scores{}
	}
	for _, res := range results {
		var bestP99, bestP999, bestRU, bestErr report.Figures
		for i, n := range candidates {
			f := res.figs[n]
			if i == 0 || f.P99 < bestP99.P99 {
				bestP99 = f
			}
			if i == 0 || f.P999 < bestP999.P999 {
				bestP999 = f
			}
			if i == 0 || f.RUMultiplier < bestRU.RUMultiplier {
				bestRU = f
			}
			if i == 0 || f.ErrorRate < bestErr.ErrorRate {
				bestErr = f
			}
		}
		for _, n := range names {
			f, s := res.figs[n], scores[n]
			lost := false
			if f.ErrorRate > bestErr.ErrorRate+q11ErrMargin {
				s.Errs = append(s.Errs, fmt.Sprintf("`%s` (%s vs %s)", res.name, pct(f.ErrorRate), pct(bestErr.ErrorRate)))
				lost = true
			}
			if worse(f, bestP99, "p99_ms", f.P99, bestP99.P99) {
				lost = true
				s.P99 = append(s.P99, fmt.Sprintf("`%s` (%s vs %s ms, `%s`)", res.name, ms(f.P99), ms(bestP99.P99), bestP99.Policy))
			}
			if f.RUMultiplier > bestRU.RUMultiplier+q11RUMargin {
				s.RU = append(s.RU, fmt.Sprintf("`%s` (+%.0f points)", res.name, 100*(f.RUMultiplier-bestRU.RUMultiplier)))
				if !worse(bestRU, f, "p99_ms", bestRU.P99, f.P99) {
					lost = true
					s.Waste = append(s.Waste, fmt.Sprintf("`%s` (+%.0f points, p99 %s vs %s ms)", res.name,
						100*(f.RUMultiplier-bestRU.RUMultiplier), ms(f.P99), ms(bestRU.P99)))
				}
			}
			if worse(f, bestP999, "p999_ms", f.P999, bestP999.P999) {
				s.P999 = append(s.P999, fmt.Sprintf("`%s` (%s vs %s ms, `%s`)", res.name, ms(f.P999), ms(bestP999.P999), bestP999.Policy))
			}
			if lost {
				s.Lost++
			}
		}
	}
	return scores
}

// q11Ablation runs the fixed default with one fix reverted at a time on
// the failure-mode scenarios and says where each fix earns its place.
func q11Ablation(d *doc) error {
	d.p("## Ablation: each fix reverted")
	d.say("q11/ablation-intro", nil)
	d.b.WriteString("```toml\n" + q11AblationTOML + "```\n\n")
	type row struct {
		name string
		figs []report.Figures
	}
	var rows []row
	var pols []string
	for _, name := range q11AblationScenarios {
		cfg, err := d.loadOnly(name)
		if err != nil {
			return err
		}
		ps, err := scenarios.BuildPolicies("q11 ablation", []byte(q11AblationTOML), cfg.Client.RequestTimeout)
		if err != nil {
			return err
		}
		r, err := d.simulate(name, ps)
		if err != nil {
			return err
		}
		var figs []report.Figures
		pols = pols[:0]
		for _, p := range r.res.Policies {
			figs = append(figs, r.fig(p.Name))
			pols = append(pols, p.Name)
		}
		rows = append(rows, row{name, figs})
	}
	header := []string{"scenario"}
	for _, p := range pols {
		header = append(header, "`"+p+"`")
	}
	var tab [][]string
	earns := make([][]string, len(pols))
	for _, r := range rows {
		line := []string{"`" + r.name + "`"}
		def := r.figs[0]
		for i, f := range r.figs {
			line = append(line, fmt.Sprintf("%s / %s / %s", ms(f.P99), pct(f.HedgeRate), ru(f.RUMultiplier)))
			if i == 0 || strings.HasPrefix(pols[i], "p90-") {
				continue // the p90 pair is read below
			}
			var why []string
			if worse(f, def, "p99_ms", f.P99, def.P99) {
				why = append(why, fmt.Sprintf("p99 %s vs %s ms", ms(f.P99), ms(def.P99)))
			}
			if f.RUMultiplier > def.RUMultiplier+q11RUMargin && !worse(def, f, "p99_ms", def.P99, f.P99) {
				why = append(why, fmt.Sprintf("RU %s vs %s for no p99", ru(f.RUMultiplier), ru(def.RUMultiplier)))
			}
			if len(why) > 0 {
				earns[i] = append(earns[i], fmt.Sprintf("`%s` (%s)", r.name, strings.Join(why, ", ")))
			}
		}
		tab = append(tab, line)
	}
	d.table(header, tab)
	var lines []string
	for i := 1; i < len(pols); i++ {
		if strings.HasPrefix(pols[i], "p90-") {
			continue
		}
		lines = append(lines, fmt.Sprintf("`%s` is worse than the default (p99 more than %.0f%% above, or more than %.0f points of RU for no p99) in %s", pols[i], 100*(q11P99Margin-1), 100*q11RUMargin, joinOr(earns[i], "no scenario here")))
	}
	d.say("q11/ablation-earns", struct{ Lines []string }{lines})
	// Censoring shows at a lower quantile: the last two columns.
	var p90 []string
	i90, iIgn := slices.Index(pols, "p90-dynamic"), slices.Index(pols, "p90-censored-ignore")
	for _, r := range rows {
		a, b := r.figs[i90], r.figs[iIgn]
		if b.HedgeRate > a.HedgeRate+q11ErrMargin {
			p90 = append(p90, fmt.Sprintf("`%s` (%s against %s)", r.name, pct(b.HedgeRate), pct(a.HedgeRate)))
		}
	}
	d.say("q11/ablation-censoring", struct{ P90 []string }{p90})
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
