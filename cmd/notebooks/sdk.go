package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"hedgelab/internal/report"
	"hedgelab/internal/study"
	"hedgelab/simnet"
)

var (
	sdkScenarios = []string{"healthy", "default", "incident-north-europe-2022", "incident-gcs-2018",
		"incident-us-east1-2019", "heavy-tail", "bimodal", "saturation"}
	sdkGrid = []float64{10, 20, 50, 100, 200, 300, 500, 750, 1000, 2000}
	// sdkRUCap is the RU multiplier the best static threshold may spend.
	sdkRUCap = 1.25
)

func sdkDefaults(d *doc) error {
	d.say("sdk/question", nil)
	d.say("sdk/method", struct {
		Grid  []float64
		RUCap float64
	}{sdkGrid, sdkRUCap})
	var summary [][]string
	lower500, maxExtra500 := 0, 0.0
	var bestSmall, overlap []string
	for _, name := range sdkScenarios {
		var pols []simnet.Policy
		for _, t := range sdkGrid {
			pols = append(pols, polStatic(fmt.Sprintf("static-%gms", t), t))
		}
		r, err := d.simulate(name, pols)
		if err != nil {
			return err
		}
		sw := &report.Sweep{Scenario: name, Param: "threshold_ms", Seed: r.cfg.Seed, Replications: r.reps}
		best, bestIdx := math.Inf(1), -1
		var tab [][]string
		for i, p := range r.res.Policies {
			f := study.Figures(p)
			pr := study.Policy(p)
			pr.Figures.Policy = "static"
			sw.Points = append(sw.Points, report.SweepPoint{Value: sdkGrid[i], Policies: []report.PolicyResult{pr}})
			tab = append(tab, figureRow(f))
			if f.RUMultiplier <= sdkRUCap && f.P99 <= best {
				best, bestIdx = f.P99, i
			}
		}
		if _, err := report.WriteSweep(d.chartDir(name), sw, report.Options{PNG: d.png}); err != nil {
			return err
		}
		d.p("## %s", name)
		d.say("setup", r.setupLine())
		d.table(figureHeader, tab)
		d.img(name+" p99 against threshold", name+"/sweep_p99.svg")
		d.img(name+" p99 against RU multiplier", name+"/sweep_cost.svg")
		f500, f1000 := r.fig("static-500ms"), r.fig("static-1000ms")
		bestName, bestP99 := "-", math.NaN()
		if bestIdx >= 0 {
			bf := r.fig(r.res.Policies[bestIdx].Name)
			bestName, bestP99 = fmt.Sprintf("%g ms", sdkGrid[bestIdx]), bf.P99
			// Thresholds tied with the best (the same p99 and RU: hedging
			// never fires at any of them) are named as a range.
			first := bestIdx
			for first > 0 {
				g := r.fig(r.res.Policies[first-1].Name)
				if g.P99 != bf.P99 || g.RUMultiplier != bf.RUMultiplier {
					break
				}
				first--
			}
			if first < bestIdx {
				bestName = fmt.Sprintf("%g–%g ms (identical)", sdkGrid[first], sdkGrid[bestIdx])
			}
			lo, hi := math.Inf(1), 0.0
			var worst report.Figures
			for _, p := range r.res.Policies {
				f := r.fig(p.Name)
				lo = min(lo, f.P99)
				if f.P99 > hi {
					hi, worst = f.P99, f
				}
			}
			switch {
			case hi <= lo*1.05:
				bestName = "any (all within 5%)"
				bestIdx = -1
			case !better(bf, worst, "p99_ms", bf.P99, worst.P99):
				// The lowest p99 is not significantly below the highest:
				// the intervals overlap, so no threshold beats another.
				bestName += ", intervals overlap"
				overlap = append(overlap, fmt.Sprintf("`%s` (lowest p99 %s at %s, highest %s at `%s`)", name,
					withCI(bf, "p99_ms", bf.P99, ms), strings.TrimSuffix(strings.SplitN(bestName, ",", 2)[0], " (identical)"), withCI(worst, "p99_ms", worst.P99, ms), worst.Policy))
				bestIdx = -1
			}
		}
		if better(f500, f1000, "p99_ms", f500.P99, f1000.P99) {
			lower500++
		}
		maxExtra500 = max(maxExtra500, f500.RUMultiplier-f1000.RUMultiplier)
		if bestIdx >= 0 && sdkGrid[bestIdx] < 500 {
			bestSmall = append(bestSmall, fmt.Sprintf("%s ms in `%s`", fmtG(sdkGrid[bestIdx]), name))
		}
		summary = append(summary, []string{name, withCI(f500, "p99_ms", f500.P99, ms), withCI(f1000, "p99_ms", f1000.P99, ms),
			bestName, ms(bestP99), ru(f500.RUMultiplier), ru(f1000.RUMultiplier)})
	}
	d.p("## Summary")
	d.table([]string{"scenario", "p99 @ 500 ms", "p99 @ 1000 ms", fmt.Sprintf("best static (RU ≤ %g×)", sdkRUCap), "its p99", "RU× @ 500", "RU× @ 1000"}, summary)
	d.p("## Answer")
	v := struct {
		Lower500, Scenarios int
		MaxExtra500, RUCap  float64
		BestSmall, Overlap  []string
		GridMin             float64
	}{lower500, len(sdkScenarios), maxExtra500, sdkRUCap, bestSmall, overlap, slices.Min(sdkGrid)}
	d.say("sdk/answer-500", v)
	d.say("sdk/answer-best", v)
	return nil
}

func fmtG(v float64) string { return fmt.Sprintf("%g", v) }
