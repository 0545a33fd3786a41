package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Chart tests inspect what a chart would draw (axis ranges, tick labels,
// legend entries, marker positions, layout) without rendering pixels.
// Each case below was reported as wrong in issue 12.

func legendTexts(ch *chart) []string {
	var out []string
	for _, e := range ch.legend {
		out = append(out, e.text)
	}
	return out
}

func tickLabels(a *plot.Axis) []string {
	var out []string
	for _, t := range a.Tick.Marker.Ticks(a.Min, a.Max) {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return out
}

func labelledTicks(a *plot.Axis) []float64 {
	var out []float64
	for _, t := range a.Tick.Marker.Ticks(a.Min, a.Max) {
		if t.Label != "" {
			out = append(out, t.Value)
		}
	}
	return out
}

// defaultLikeRun mirrors results/default: p99 ≈ p99.9 per policy (a step
// distribution), disabled at ~2000 ms, the dynamic policy at ~68 ms.
func defaultLikeRun(withCI bool) *Run {
	r := &Run{Scenario: "default", Replications: 1, DurationS: 600}
	for _, p := range []struct {
		name            string
		ru, p99, p999   float64
		ruHalf, latHalf float64
	}{
		{"disabled", 1, 2002, 2004, 0, 1},
		{"driver-default", 1.0877, 1018, 1019, 0.004, 2},
		{"static-500ms", 1.0925, 517.6, 519.4, 0.002, 1},
		{"static-100ms", 1.0991, 117.7, 119.4, 0.0007, 0.3},
		{"p99-dynamic", 1.0996, 67.6, 69.4, 0.0007, 0.3},
	} {
		f := Figures{Policy: p.name, Ops: 100000, P50: 1.05, P90: 1.6, P99: p.p99, P999: p.p999, RUMultiplier: p.ru}
		if withCI {
			f.CI95 = map[string][2]float64{
				"ru_multiplier": {p.ru - p.ruHalf, p.ru + p.ruHalf},
				"p99_ms":        {p.p99 - p.latHalf, p.p99 + 40*p.latHalf},
				"p999_ms":       {p.p999 - p.latHalf, p.p999 + 40*p.latHalf},
			}
		}
		r.Policies = append(r.Policies, PolicyResult{Figures: f})
	}
	if withCI {
		r.Replications = 3
	}
	return r
}

// TestCostChartAxisFitsData: a 2004 ms maximum gave a 5000 ms axis.
func TestCostChartAxisFitsData(t *testing.T) {
	ch := costChart(defaultLikeRun(false))
	if ch.p.Y.Max > 1.3*2004 || ch.p.Y.Max < 2004 {
		t.Errorf("latency axis ends at %v for a 2004 ms maximum, want within [2004, 2605]", ch.p.Y.Max)
	}
	if ch.p.Y.Min > 67.6 || ch.p.Y.Min < 67.6/1.5 {
		t.Errorf("latency axis starts at %v for a 67.6 ms minimum, want within [45, 67.6]", ch.p.Y.Min)
	}
}

// farPrimaryLikeRun mirrors results/far-primary: disabled at RU exactly
// 1, three hedging policies within a hair of it, p99 ≈ p99.9 (203.4 vs
// 204.8 ms), two policies at RU 2; with replications the CIs of
// driver-default's RU are [1.0846, 1.0912] around 1.0879.
func farPrimaryLikeRun(withCI bool) *Run {
	r := &Run{Scenario: "far-primary", Replications: 1, DurationS: 120}
	for _, p := range []struct {
		name          string
		ru, p99, p999 float64
		ruCI          [2]float64
	}{
		{"disabled", 1, 203.4, 204.8, [2]float64{1, 1}},
		{"finagle-2pct", 1.0003, 203.3, 204.4, [2]float64{1.0001, 1.0005}},
		{"p99-tps", 1.0001, 203.4, 204.8, [2]float64{1, 1.0002}},
		{"p99-dynamic", 1.0001, 203.4, 204.8, [2]float64{1, 1.0002}},
		{"driver-default", 1.0879, 202.9, 204.3, [2]float64{1.0846, 1.0912}},
		{"static-50ms", 2, 201.1, 201.6, [2]float64{1.999, 2.001}},
		{"cassandra-100ms", 2, 203.4, 204.8, [2]float64{1.999, 2.001}},
	} {
		f := Figures{Policy: p.name, Ops: 24000, P50: 201, P90: 202, P99: p.p99, P999: p.p999, RUMultiplier: p.ru}
		if withCI {
			f.CI95 = map[string][2]float64{
				"ru_multiplier": p.ruCI,
				"p99_ms":        {p.p99 - 0.2, p.p99 + 0.2},
				"p999_ms":       {p.p999 - 0.3, p.p999 + 0.3},
			}
		}
		r.Policies = append(r.Policies, PolicyResult{Figures: f})
	}
	if withCI {
		r.Replications = 3
	}
	return r
}

// TestCostChartMarkersAtTrueValues (fixA item 1, issue 19): markers were
// moved along the RU axis to avoid overlap (far-primary's disabled, RU
// exactly 1, drawn at ~0.96; later fanned out by up to 3 pt). Every
// marker and whisker is drawn at its true (RU, latency); policies on the
// same spot are drawn concentrically, each later one smaller, so every
// colour shows as a ring at least 1 pt wide, and the legend names the
// policy they coincide with.
func TestCostChartMarkersAtTrueValues(t *testing.T) {
	for _, withCI := range []bool{false, true} {
		r := farPrimaryLikeRun(withCI)
		// Two more policies exactly on top of "disabled" (hedging never fires).
		for _, name := range []string{"static-5000ms", "never"} {
			p := r.Policies[0]
			p.Policy = name
			r.Policies = append(r.Policies, p)
		}
		ch := costChart(r)
		if len(ch.cost) != len(r.Policies) {
			t.Fatalf("%d cost marks for %d policies", len(ch.cost), len(r.Policies))
		}
		for _, m := range ch.cost {
			f := r.Policies[m.policy].Figures
			if m.ru != f.RUMultiplier || m.p99 != f.P99 || m.p999 != f.P999 {
				t.Errorf("%s: mark at RU %v p99 %v p99.9 %v, figures %v %v %v", f.Policy, m.ru, m.p99, m.p999, f.RUMultiplier, f.P99, f.P999)
			}
		}
		// disabled, its two copies and the three hedging policies within a
		// hair of it: one group, concentric in policy order.
		legend := legendTexts(ch)[2:]
		if withCI {
			legend = legend[1:]
		}
		var group []costMark
		for _, m := range ch.cost {
			switch r.Policies[m.policy].Policy {
			case "disabled", "finagle-2pct", "p99-tps", "p99-dynamic", "static-5000ms", "never":
				group = append(group, m)
			}
		}
		for k := 1; k < len(group); k++ {
			if d := group[k-1].r99 - group[k].r99; d < 1 {
				t.Errorf("p99 disc of %s %v pt, of %s %v pt: ring %v pt < 1", r.Policies[group[k-1].policy].Policy, group[k-1].r99,
					r.Policies[group[k].policy].Policy, group[k].r99, d)
			}
			if d := group[k-1].r999 - group[k].r999; d < 1 {
				t.Errorf("p99.9 triangles %v and %v pt: %v pt apart < 1", group[k-1].r999, group[k].r999, d)
			}
		}
		want := map[string]string{
			"disabled": "disabled", "finagle-2pct": "finagle-2pct ≈ disabled", "p99-tps": "p99-tps ≈ disabled",
			"p99-dynamic": "p99-dynamic ≈ disabled", "driver-default": "driver-default",
			"static-5000ms": "static-5000ms = disabled", "never": "never = disabled",
		}
		for i, p := range r.Policies {
			if w, ok := want[p.Policy]; ok && legend[i] != w {
				t.Errorf("legend %q, want %q", legend[i], w)
			}
		}
		if !withCI {
			continue
		}
		// Whiskers at the true values: a vertical one at the policy's RU,
		// a horizontal one spanning exactly the RU CI at its latency.
		for _, m := range ch.cost {
			f := r.Policies[m.policy].Figures
			var vert, horiz int
			for _, s := range ch.costWhiskers.segs {
				if s.color != policyColor(m.policy) {
					continue
				}
				switch {
				case s.x0 == s.x1 && s.x0 == f.RUMultiplier:
					vert++
				case s.y0 == s.y1 && (s.y0 == f.P99 || s.y0 == f.P999) && s.x0 == f.CI95["ru_multiplier"][0] && s.x1 == f.CI95["ru_multiplier"][1]:
					horiz++
				}
			}
			wantH := 2
			if ci := f.CI95["ru_multiplier"]; ci[0] == ci[1] {
				wantH = 0 // zero width: nothing to draw
			}
			if vert != 2 || horiz != wantH {
				t.Errorf("%s: %d vertical whiskers at RU %v, %d horizontal over RU CI %v; want 2 and %d", f.Policy, vert, f.RUMultiplier, horiz, f.CI95["ru_multiplier"], wantH)
			}
		}
		// The legend's CI icon shows both orientations.
		for _, e := range ch.legend {
			if e.text != "95% CI" {
				continue
			}
			found := false
			for _, th := range e.thumbs {
				if w, ok := th.(whiskerThumb); ok {
					found = true
					if !w.vertical || !w.horizontal {
						t.Errorf("CI legend icon vertical %v horizontal %v, the chart draws both", w.vertical, w.horizontal)
					}
				}
			}
			if !found {
				t.Error("CI legend entry has no whisker icon")
			}
		}
	}
}

// TestCostChartConfidenceIntervals: with replications the chart had no CI.
func TestCostChartConfidenceIntervals(t *testing.T) {
	ch := costChart(defaultLikeRun(true))
	if !slices.Contains(legendTexts(ch), "95% CI") {
		t.Errorf("legend %q has no 95%% CI entry", legendTexts(ch))
	}
	// disabled's p99.9 CI reaches 2004 + 40 ms: the axis must show it.
	if ch.p.Y.Max < 2044 {
		t.Errorf("latency axis ends at %v below the CI high 2044", ch.p.Y.Max)
	}
	want := map[string][2]float64{"driver-default": {1.0837, 1.0917}}
	for _, m := range ch.cost {
		name := ch.legend[3+m.policy].text
		if w, ok := want[name]; ok && (!near(m.ruCI[0], w[0], 1e-9) || !near(m.ruCI[1], w[1], 1e-9)) {
			t.Errorf("%s RU CI %v, want %v", name, m.ruCI, w)
		}
		if !(m.p99CI[1] > m.p99) {
			t.Errorf("%s p99 CI %v not drawn", name, m.p99CI)
		}
	}
	if ch := costChart(defaultLikeRun(false)); slices.Contains(legendTexts(ch), "95% CI") {
		t.Error("CI legend entry without CIs")
	}
}

// TestPercentilesChartDots: bars on a log axis have lengths that mean
// nothing; the chart draws dots, with labels on an opaque background so
// that gridlines do not strike through them.
func TestPercentilesChartDots(t *testing.T) {
	r := defaultLikeRun(false)
	ch := percentilesChart(r)
	if ch.dots == nil {
		t.Fatal("percentiles chart draws no dots")
	}
	if ch.dots.labelBg == nil {
		t.Error("value labels have no background; gridlines strike through them")
	}
	want := [][]float64{}
	for _, p := range r.Policies {
		want = append(want, []float64{p.P50, p.P99, p.P999})
	}
	if !reflect.DeepEqual(ch.dots.vals, want) {
		t.Errorf("dots %v, want %v", ch.dots.vals, want)
	}
	// Every dot inside the axis, with room above the highest for its label.
	if ch.p.Y.Min > 1.05 || ch.p.Y.Max < 2004*1.3 {
		t.Errorf("Y axis [%v, %v] does not hold the dots 1.05..2004 and a label", ch.p.Y.Min, ch.p.Y.Max)
	}
}

// timelineRun: a 1200 s run in 15 s windows with a 2.6 ms baseline, two
// adjacent episodes (120-840 s, 840-1080 s) and a policy at the 50 ms
// clamp most of the time, like incident-north-europe-2022.
func timelineRun() *Run {
	r := &Run{Scenario: "ne", Replications: 1, DurationS: 1200, Episodes: []Episode{
		{Label: "NE partial errors", StartS: 120, EndS: 840},
		{Label: "tail phase", StartS: 840, EndS: 1080},
	}}
	for i, name := range []string{"disabled", "driver-default", "static-100ms", "p99-dynamic"} {
		p := PolicyResult{Figures: Figures{Policy: name}}
		for s := 0.0; s < 1200; s += 15 {
			w := Window{StartS: s, EndS: s + 15, Ops: 1000, P99Ms: 2.6 + 0.1*float64(i)}
			if s >= 120 && s < 1080 {
				w.P99Ms = 5000 / float64(i+1)
			}
			switch name {
			case "driver-default":
				w.MeanThresholdMs = 1000
			case "static-100ms":
				w.MeanThresholdMs = 100
			case "p99-dynamic":
				w.MeanThresholdMs = 50
				if s == 0 {
					w.MeanThresholdMs = 110
				}
			}
			if w.MeanThresholdMs > 0 {
				w.HedgeRate = 0.01
			}
			p.Timeline = append(p.Timeline, w)
		}
		r.Policies = append(r.Policies, p)
	}
	return r
}

// TestTimelineChartLabelsBaselineDecade: the ~3 ms baseline had no tick
// label in its decade (labels at 10, 100, ... only).
func TestTimelineChartLabelsBaselineDecade(t *testing.T) {
	ch := timelineChart(timelineRun())
	ok := false
	for _, v := range labelledTicks(&ch.p.Y) {
		if v <= 2.6 && v > 0.26 {
			ok = true
		}
	}
	if !ok {
		t.Errorf("no Y label in the decade of the 2.6 ms baseline; labels %v on [%v, %v]", tickLabels(&ch.p.Y), ch.p.Y.Min, ch.p.Y.Max)
	}
}

// TestTimelineChartStatesWindowWidth: the reader could not tell the window.
func TestTimelineChartStatesWindowWidth(t *testing.T) {
	r := timelineRun()
	for name, ch := range map[string]*chart{"timeline": timelineChart(r), "threshold": thresholdChart(r), "hedge_rate": hedgeRateChart(r)} {
		if !strings.Contains(ch.p.Title.Text, "15 s windows") {
			t.Errorf("%s title %q does not state the 15 s window", name, ch.p.Title.Text)
		}
	}
}

// TestEpisodeBoundaries: adjacent episodes merged into one grey block.
func TestEpisodeBoundaries(t *testing.T) {
	e := &episodeShading{eps: timelineRun().Episodes}
	if got, want := e.boundaries(0, 1200), []float64{120, 840, 1080}; !reflect.DeepEqual(got, want) {
		t.Errorf("boundaries %v, want %v (840 s separates the adjacent episodes)", got, want)
	}
	// An episode edge on the axis end is the axis itself.
	if got := e.boundaries(120, 1080); !reflect.DeepEqual(got, []float64{840}) {
		t.Errorf("boundaries inside (120, 1080) = %v, want [840]", got)
	}
}

// TestThresholdChart: a line at the axis minimum was drawn on the axis
// (invisible), a "disabled (no data)" entry filled the legend, and the
// plot was narrower than timeline.png's.
func TestThresholdChart(t *testing.T) {
	r := timelineRun()
	ch := thresholdChart(r)
	if !(ch.p.Y.Min < 50/1.2) {
		t.Errorf("threshold axis starts at %v: the 50 ms line lies on the axis", ch.p.Y.Min)
	}
	if got, want := legendTexts(ch), []string{"driver-default", "static-100ms", "p99-dynamic"}; !reflect.DeepEqual(got, want) {
		t.Errorf("legend %q, want %q", got, want)
	}
	c := draw.New(vgimg.New(ChartWidth, ChartHeight))
	c = draw.Crop(c, outerMargin, -outerMargin, outerMargin, -outerMargin)
	tl := layoutChart(c, timelineChart(r)).data
	for name, other := range map[string]*chart{"threshold": ch, "hedge_rate": hedgeRateChart(r)} {
		d := layoutChart(c, other).data
		if math.Abs(float64(d.Min.X-tl.Min.X)) > 0.01 || math.Abs(float64(d.Max.X-tl.Max.X)) > 0.01 {
			t.Errorf("%s data area x [%v, %v], timeline's [%v, %v]", name, d.Min.X, d.Max.X, tl.Min.X, tl.Max.X)
		}
	}
}

// TestTimelineAxisIsRunLength: the X axis shows the run (Run.DurationS, or
// the last window with operations), not episodes past its end.
func TestTimelineAxisIsRunLength(t *testing.T) {
	r := timelineRun()
	r.Episodes = append(r.Episodes, Episode{Label: "after the run", StartS: 5000, EndS: 6000})
	if ch := timelineChart(r); ch.p.X.Max != 1200 {
		t.Errorf("time axis ends at %v, want the run's 1200 s", ch.p.X.Max)
	}
}

// TestCCDFOneSample: with one sample the probability axis ran from 1 to 2.
func TestCCDFOneSample(t *testing.T) {
	r := &Run{Scenario: "one", Policies: []PolicyResult{{Figures: Figures{Policy: "disabled", Ops: 1}, CCDF: []Point{{X: 3.2, Y: 1}}}}}
	ch := ccdfChart(r)
	if ch.p.Y.Max != 1 || !(ch.p.Y.Min <= 0.1) || !(ch.p.Y.Min > 0) {
		t.Errorf("probability axis [%v, %v], want [≤0.1, 1]", ch.p.Y.Min, ch.p.Y.Max)
	}
	if !(ch.p.X.Min <= 3.2 && ch.p.X.Max >= 3.2 && ch.p.X.Max > ch.p.X.Min) {
		t.Errorf("latency axis [%v, %v] misses the sample 3.2", ch.p.X.Min, ch.p.X.Max)
	}
}

// TestLogTickFormatConsistent: labels mixed "0.001" with "1e-4", "100000"
// with "1e6" on one axis.
func TestLogTickFormatConsistent(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{1e-5, 1, []string{"1e-5", "1e-4", "1e-3", "1e-2", "1e-1", "1e0"}},
		{10, 1e7, []string{"1e1", "1e2", "1e3", "1e4", "1e5", "1e6", "1e7"}},
		{0.001, 1, []string{"0.001", "0.01", "0.1", "1"}},
		{1, 10000, []string{"1", "10", "100", "1000", "10000"}},
		{1.5, 20000, []string{"2", "10", "100", "1000", "10000"}}, // lowest tick labelled
		{30, 2500, []string{"30", "50", "100", "200", "500", "1000", "2000"}},
	} {
		var got []string
		for _, tk := range (logTicks{}).Ticks(c.lo, c.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("log labels on [%v, %v] = %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}

// TestSweepAxisLabel: the X axis title was the raw key path.
func TestSweepAxisLabel(t *testing.T) {
	s := fakeSweep(1)
	s.Param = "policies.static-100ms.threshold_ms"
	if ch := sweepP99Chart(s); ch.xLabel != "threshold (ms)" {
		t.Errorf("sweep X label %q, want %q", ch.xLabel, "threshold (ms)")
	}
	for _, c := range []struct{ in, want string }{
		{"policies.1.threshold_ms", "threshold (ms)"},
		{"workload.rate_per_s", "rate (ops/s)"},
		{"client.consecutive_hedge_win_threshold", "consecutive hedge win threshold"},
		{"client.probe_interval_s", "probe interval (s)"},
		{"replicas.eastus.ru_per_s", "throughput (RU/s)"},
		{"workload.zipf_s", "Zipf exponent s"},
		{"rtt_ms", "rtt (ms)"},
		{"", "parameter"},
	} {
		if got := paramLabel(c.in); got != c.want {
			t.Errorf("paramLabel(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// checkDrawnAtValues fails unless every point chart ch draws for policy
// i's line (segments and markers) lies at value(window) of that policy's
// window with that midpoint: no line is moved.
func checkDrawnAtValues(t *testing.T, name string, ch *chart, r *Run, value func(Window) float64) {
	t.Helper()
	if len(ch.series) != len(r.Policies) {
		t.Fatalf("%s: %d series for %d policies", name, len(ch.series), len(r.Policies))
	}
	for i, ser := range ch.series {
		want := map[float64]float64{}
		for _, w := range r.Policies[i].Timeline {
			want[(w.StartS+w.EndS)/2] = value(w)
		}
		pts := slices.Clone(ser.marks)
		for _, sg := range ser.segs {
			pts = append(pts, sg...)
		}
		for _, p := range pts {
			if v, ok := want[p.X]; !ok || p.Y != v {
				t.Errorf("%s: %s drawn at %v s = %v, its value is %v", name, r.Policies[i].Policy, p.X, p.Y, v)
				break
			}
		}
	}
}

// flatRun is a 120 s run in 5 s windows whose policies all have p99 v ms
// and hedge rate 0 in every window (like hub-header-1002's three
// policies at p99 303.103 ms, or 16 policies at 3.75 ms).
func flatRun(v float64, names ...string) *Run {
	r := &Run{Scenario: "flat", Replications: 1, DurationS: 120}
	for _, name := range names {
		p := PolicyResult{Figures: Figures{Policy: name}}
		for s := 0.0; s < 120; s += 5 {
			p.Timeline = append(p.Timeline, Window{StartS: s, EndS: s + 5, Ops: 100, P99Ms: v, MeanThresholdMs: 50})
		}
		r.Policies = append(r.Policies, p)
	}
	return r
}

// TestTimeChartsDrawCoincidingLinesAtTheirValues (issue 19): lines with
// identical values were drawn apart (p99 303.103 ms of three policies at
// ~290, 300 and 315; a 0% hedge rate below 0%; 16 identical policies
// fanned from 3.55 to 3.95 ms). Every point is drawn at its value; the
// coinciding lines are told apart by markers (a distinct colour and
// glyph per line, staggered along the bundle) and a legend note naming
// the first line they coincide with.
func TestTimeChartsDrawCoincidingLinesAtTheirValues(t *testing.T) {
	var many []string
	for i := range 16 {
		many = append(many, fmt.Sprintf("policy-%02d", i))
	}
	for _, c := range []struct {
		r     *Run
		value float64
	}{
		{flatRun(303.103, "disabled", "static-100ms", "p99-dynamic"), 303.103},
		{flatRun(3.75, many...), 3.75},
	} {
		names := legendTexts(timelineChart(c.r))
		for _, ch := range []struct {
			name  string
			ch    *chart
			value func(Window) float64
		}{
			{"timeline", timelineChart(c.r), func(w Window) float64 { return w.P99Ms }},
			{"threshold", thresholdChart(c.r), func(w Window) float64 { return w.MeanThresholdMs }},
			{"hedge_rate", hedgeRateChart(c.r), func(w Window) float64 { return 100 * w.HedgeRate }},
		} {
			checkDrawnAtValues(t, ch.name, ch.ch, c.r, ch.value)
			first := c.r.Policies[0].Policy
			type mark struct {
				col   color.Color
				glyph string
			}
			seen := map[mark]string{}
			atX := map[float64]int{}
			for i, ser := range ch.ch.series {
				name := c.r.Policies[i].Policy
				if i == 0 && (ser.ref != -1 || ch.ch.legend[0].text != first) {
					t.Errorf("%s: the first line %s noted %q (ref %d)", ch.name, first, ch.ch.legend[0].text, ser.ref)
				}
				if i > 0 {
					if want := name + " = " + first; ser.ref != 0 || !ser.everywhere || ch.ch.legend[i].text != want {
						t.Errorf("%s: legend %q (ref %d), want %q", ch.name, ch.ch.legend[i].text, ser.ref, want)
					}
				}
				if len(ser.marks) == 0 {
					t.Errorf("%s: %s on the bundle has no marker", ch.name, name)
				}
				m := mark{policyColor(i), fmt.Sprintf("%T", ser.glyph)}
				if other, ok := seen[m]; ok {
					t.Errorf("%s: %s and %s have the same marker %v", ch.name, other, name, m)
				}
				seen[m] = name
				for _, p := range ser.marks {
					atX[p.X]++
				}
			}
			for x, n := range atX {
				if n > 1 {
					t.Errorf("%s: %d markers at %v s cover each other", ch.name, n, x)
				}
			}
		}
		if len(names) != len(c.r.Policies) {
			t.Errorf("legend %q", names)
		}
	}
	// The 0% hedge rate is drawn at 0, inside the axis.
	ch := hedgeRateChart(flatRun(1, "disabled", "never-hedges"))
	for _, ser := range ch.series {
		for _, sg := range ser.segs {
			for _, p := range sg {
				if p.Y != 0 || p.Y < ch.p.Y.Min {
					t.Fatalf("0%% hedge rate drawn at %v on an axis from %v", p.Y, ch.p.Y.Min)
				}
			}
		}
	}
}

// TestTimeChartsKeepNearLinesAsTheyAre: lines that differ a little are
// real differences: no marker, no note.
func TestTimeChartsKeepNearLinesAsTheyAre(t *testing.T) {
	r := timelineRun()
	p := r.Policies[3]
	p.Policy = "static-50.5ms"
	p.Timeline = slices.Clone(p.Timeline)
	for i := range p.Timeline {
		p.Timeline[i].MeanThresholdMs = 50.5
	}
	r.Policies = append(r.Policies, p)
	ch := thresholdChart(r)
	checkDrawnAtValues(t, "threshold", ch, r, func(w Window) float64 { return w.MeanThresholdMs })
	for i, ser := range ch.series {
		if ser.ref >= 0 || len(ser.marks) > 0 {
			t.Errorf("policy %d marked as coinciding with %d although no two lines coincide", i, ser.ref)
		}
	}
	if got := legendTexts(ch); slices.ContainsFunc(got, func(s string) bool { return strings.ContainsAny(s, "=≈") }) {
		t.Errorf("legend %q notes a coincidence", got)
	}
}

// TestThresholdChartMostlyCoincidingLines (fixA item 4): in
// low-rate-client p99-tps-init50 sits on static-50ms's 50 ms line in
// about 70% of the windows and leaves it in the others; drawn later, it
// hid static-50ms. Both are drawn at their values everywhere, with
// markers, and the legend says "≈ p99-dynamic".
func TestThresholdChartMostlyCoincidingLines(t *testing.T) {
	r := timelineRun()
	p := r.Policies[3] // p99-dynamic: 110 ms in the first window, then 50 ms
	p.Policy = "p99-tps-init50"
	p.Timeline = slices.Clone(p.Timeline)
	for i := range p.Timeline {
		if i%3 == 0 {
			p.Timeline[i].MeanThresholdMs = 120 // off the 50 ms line in a third of the windows
		}
	}
	r.Policies = append(r.Policies, p)
	ch := thresholdChart(r)
	checkDrawnAtValues(t, "threshold", ch, r, func(w Window) float64 { return w.MeanThresholdMs })
	last := ch.series[len(ch.series)-1]
	if last.ref != 3 || last.everywhere || len(last.marks) == 0 || len(ch.series[3].marks) == 0 {
		t.Errorf("p99-tps-init50: ref %d everywhere %v, %d markers (p99-dynamic %d)", last.ref, last.everywhere, len(last.marks), len(ch.series[3].marks))
	}
	if got := legendTexts(ch); !slices.Contains(got, "p99-tps-init50 ≈ p99-dynamic") {
		t.Errorf("legend %q lacks %q", got, "p99-tps-init50 ≈ p99-dynamic")
	}
}

// TestHedgeRateChartZeroLineVisible: disabled's 0% line lay on the axis.
func TestHedgeRateChartZeroLineVisible(t *testing.T) {
	ch := hedgeRateChart(timelineRun())
	if !(ch.p.Y.Min < 0) {
		t.Errorf("hedge-rate axis starts at %v: a 0%% line lies on the axis", ch.p.Y.Min)
	}
	for _, l := range tickLabels(&ch.p.Y) {
		if strings.HasPrefix(l, "-") {
			t.Errorf("negative hedge-rate label %q", l)
		}
	}
}

// labOf converts an sRGB colour to CIELAB (D65).
func labOf(c color.Color) [3]float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		x := float64(v) / 0xffff
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	R, G, B := lin(r), lin(g), lin(b)
	X := (0.4124*R + 0.3576*G + 0.1805*B) / 0.95047
	Y := 0.2126*R + 0.7152*G + 0.0722*B
	Z := (0.0193*R + 0.1192*G + 0.9505*B) / 1.08883
	f := func(t float64) float64 {
		if t > 216.0/24389 {
			return math.Cbrt(t)
		}
		return (24389.0/27*t + 16) / 116
	}
	return [3]float64{116*f(Y) - 16, 500 * (f(X) - f(Y)), 200 * (f(Y) - f(Z))}
}

// TestPaletteDistinct (fixA item 4): with 9 policies disabled and
// p99-dynamic-init50 were both blue (an 8-colour palette). Up to 12
// policies every colour differs visibly (CIE76 ΔE ≥ 20) and every
// policy's line style (colour, dash) is unique.
func TestPaletteDistinct(t *testing.T) {
	const n = 12
	for i := range n {
		for j := range i {
			a, b := labOf(policyColor(i)), labOf(policyColor(j))
			if d := math.Sqrt((a[0]-b[0])*(a[0]-b[0]) + (a[1]-b[1])*(a[1]-b[1]) + (a[2]-b[2])*(a[2]-b[2])); d < 20 {
				t.Errorf("policies %d and %d: colours %v and %v only ΔE %.1f apart", j, i, policyColor(j), policyColor(i), d)
			}
		}
	}
	seen := map[string]int{}
	for i := range 84 {
		sty := policyLine(i)
		key := fmt.Sprint(sty.Color, sty.Dashes)
		if j, ok := seen[key]; ok {
			t.Errorf("policies %d and %d share colour and dash pattern", j, i)
		}
		seen[key] = i
	}
}

// thresholdSweep mirrors `hedgesim sweep default --param
// policies.static-100ms.threshold_ms=50:150:50 --replications 3`: one
// policy, still named static-100ms, RU 1.0989–1.0996 with CIs ±0.001.
func thresholdSweep() *Sweep {
	s := &Sweep{Scenario: "default", Param: "policies.static-100ms.threshold_ms", Seed: 1, Replications: 3}
	for i, v := range []float64{50, 100, 150} {
		ru := 1.0996 - 0.00035*float64(i)
		p99 := 60 + v
		f := Figures{Policy: "static-100ms", Ops: 30000, P50: 1, P99: p99, P999: p99 + 2, RUMultiplier: ru,
			CI95: map[string][2]float64{"ru_multiplier": {ru - 0.001, ru + 0.001}, "p99_ms": {p99 - 0.5, p99 + 0.5}}}
		s.Points = append(s.Points, SweepPoint{Value: v, Policies: []PolicyResult{{Figures: f}}})
	}
	return s
}

// TestSweepCostAxisAndWhiskers (fixA item 3): sweep_cost spanned RU
// 1.0989–1.0996 without whiskers while each point's RU CI is ±0.001, so
// noise looked like a trend. The chart draws the CIs and its RU axis
// holds every whisker and spans at least sweepCostMinSpan.
func TestSweepCostAxisAndWhiskers(t *testing.T) {
	s := thresholdSweep()
	ch := sweepCostChart(s)
	if span := ch.p.X.Max - ch.p.X.Min; span < sweepCostMinSpan {
		t.Errorf("RU axis [%v, %v] spans %v, want at least %v", ch.p.X.Min, ch.p.X.Max, span, sweepCostMinSpan)
	}
	for _, pt := range s.Points {
		ci := pt.Policies[0].CI95["ru_multiplier"]
		if ch.p.X.Min > ci[0] || ch.p.X.Max < ci[1] {
			t.Errorf("RU axis [%v, %v] cuts the CI %v", ch.p.X.Min, ch.p.X.Max, ci)
		}
	}
	var vert, horiz int
	if ch.costWhiskers != nil {
		for _, w := range ch.costWhiskers.segs {
			if w.x0 == w.x1 {
				vert++
			} else {
				horiz++
			}
		}
	}
	if vert != 3 || horiz != 3 {
		t.Errorf("%d p99 and %d RU whiskers, want 3 and 3", vert, horiz)
	}
	if !slices.Contains(legendTexts(ch), "95% CI") {
		t.Errorf("legend %q has no 95%% CI entry", legendTexts(ch))
	}
	// One replication, points 0.0007 RU apart: still at least the minimum span.
	s1 := thresholdSweep()
	for _, pt := range s1.Points {
		pt.Policies[0].CI95 = nil
	}
	s1.Replications = 1
	if ch := sweepCostChart(s1); ch.p.X.Max-ch.p.X.Min < sweepCostMinSpan {
		t.Errorf("without CIs the RU axis spans %v, want at least %v", ch.p.X.Max-ch.p.X.Min, sweepCostMinSpan)
	}
}

// TestSweepLabelsBySweptValue (fixA item 3): the legends, sweep.csv and
// sweep.json called every point "static-100ms" even at thresholds 50
// and 150, while hedgesim's table says threshold_ms=50. The swept policy
// is labelled by its swept value everywhere; the policy column stays.
func TestSweepLabelsBySweptValue(t *testing.T) {
	s := thresholdSweep()
	for _, ch := range []*chart{sweepCostChart(s), sweepP99Chart(s)} {
		legend := legendTexts(ch)
		if !slices.Contains(legend, "threshold_ms=50…150") || slices.Contains(legend, "static-100ms") {
			t.Errorf("%s: legend %q, want threshold_ms=50…150 and no static-100ms", ch.p.Title.Text, legend)
		}
	}
	data, err := sweepCSV(s)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if rows[0][len(rows[0])-1] != "label" || rows[0][1] != "policy" {
		t.Fatalf("sweep.csv header %v: want policy second and label last", rows[0])
	}
	for i, want := range []string{"threshold_ms=50", "threshold_ms=100", "threshold_ms=150"} {
		row := rows[1+i]
		if row[len(row)-1] != want || row[1] != "static-100ms" {
			t.Errorf("sweep.csv row %d: policy %q label %q, want static-100ms and %q", i, row[1], row[len(row)-1], want)
		}
	}
	data, err = sweepJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	var js struct {
		Points []struct {
			Policies []struct{ Policy, Label string }
		}
	}
	if err := json.Unmarshal(data, &js); err != nil {
		t.Fatal(err)
	}
	if got := js.Points[1].Policies[0]; got.Policy != "static-100ms" || got.Label != "threshold_ms=100" {
		t.Errorf("sweep.json point 1: %+v", got)
	}
	// By index (policies.0.threshold_ms, one policy per point), and a
	// non-policy parameter: other policies keep their names.
	s.Param = "policies.0.threshold_ms"
	if got := sweepLabel(s, &s.Points[0], &s.Points[0].Policies[0]); got != "threshold_ms=50" {
		t.Errorf("by index: label %q", got)
	}
	s.Param = "workload.rate_per_s"
	if got := sweepLabel(s, &s.Points[0], &s.Points[0].Policies[0]); got != "static-100ms" {
		t.Errorf("non-policy parameter: label %q", got)
	}
}

// A latency CI clamped at 0 (few replications; see LatencyCIUnbounded)
// on a log axis was not drawn at all: it now runs off the axis bottom,
// uncapped there.
func TestCostChartWhiskerReachingZero(t *testing.T) {
	r := defaultLikeRun(true)
	f := &r.Policies[4].Figures // p99-dynamic, p99.9 69.4 ms
	f.CI95["p999_ms"] = [2]float64{0, 150}
	ch := costChart(r)
	found := false
	for _, w := range ch.costWhiskers.segs {
		if w.openLow && w.x0 == f.RUMultiplier && w.y1 == 150 && w.y0 == ch.p.Y.Min {
			found = true
		}
	}
	if !found {
		t.Errorf("no open whisker from the axis bottom %v to 150 at RU %v", ch.p.Y.Min, f.RUMultiplier)
	}
}

// rateSweep mirrors `hedgesim sweep far-primary --param
// workload.rate_per_s=50:200:50`: disabled and never-hedging policies
// with identical figures, a hedging policy with p99 102–106 ms (a 3.9%
// change) at RU 1.05.
func rateSweep() *Sweep {
	s := &Sweep{Scenario: "far", Param: "workload.rate_per_s", Seed: 1, Replications: 1}
	for i, v := range []float64{50, 100, 150, 200} {
		var ps []PolicyResult
		for _, name := range []string{"disabled", "static-5000ms", "p99-dynamic"} {
			f := Figures{Policy: name, Ops: 1000, P50: 100, P99: 203.4, P999: 204.8, RUMultiplier: 1}
			if name == "p99-dynamic" {
				f.P99, f.P999, f.RUMultiplier = 102+float64(i)*4/3, 110, 1.05
			}
			ps = append(ps, PolicyResult{Figures: f})
		}
		s.Points = append(s.Points, SweepPoint{Value: v, Policies: ps})
	}
	return s
}

// TestSweepChartsCoincidingSeries (issue 19): a policy identical to
// disabled was drawn over it, hiding it. Both sweep charts draw it at its
// values, concentric with disabled (disabled larger), note "= disabled"
// in the legend, and sweep_cost labels the parameter values once.
func TestSweepChartsCoincidingSeries(t *testing.T) {
	s := rateSweep()
	for _, ch := range []*chart{sweepP99Chart(s), sweepCostChart(s)} {
		g := ch.sweepGroups
		if g == nil || g.ref[1] != 0 || !g.exact[1] || g.ref[0] != -1 || g.ref[2] != -1 {
			t.Fatalf("%s: groups %+v, want static-5000ms = disabled only", ch.p.Title.Text, g)
		}
		if r0, r1 := ringRadius(sweepMarkR, sweepRing, sweepRingMax, g.rank[0], g.size[0]),
			ringRadius(sweepMarkR, sweepRing, sweepRingMax, g.rank[1], g.size[1]); r0-r1 < 1 {
			t.Errorf("%s: disabled's marker %v pt, static-5000ms's %v pt: the ring is under 1 pt", ch.p.Title.Text, r0, r1)
		}
		legend := legendTexts(ch)
		if !slices.Contains(legend, "static-5000ms = disabled") || !slices.Contains(legend, "disabled") {
			t.Errorf("%s: legend %q", ch.p.Title.Text, legend)
		}
	}
}

// TestLinearLatencyAxesStartAtZero (issue 19): a sweep's latency axis ran
// from 102 to 106 ms, so a 3.9% change looked like a steep climb (and the
// cost chart's 201–205 ms axis made 2 ms look large). Every linear
// latency axis starts at 0, so heights compare as the latencies do.
func TestLinearLatencyAxesStartAtZero(t *testing.T) {
	s := rateSweep()
	for _, p := range s.Points {
		p.Policies = p.Policies[2:] // p99-dynamic alone: 102–110 ms
	}
	for _, ch := range []*chart{sweepP99Chart(s), sweepCostChart(s), costChart(farPrimaryLikeRun(false)), percentilesChart(farPrimaryLikeRun(false))} {
		if _, ok := ch.p.Y.Scale.(plot.LogScale); ok {
			t.Errorf("%s: log axis for values within a decade", ch.p.Title.Text)
			continue
		}
		if ch.p.Y.Min != 0 {
			t.Errorf("%s: latency axis [%v, %v] does not start at 0", ch.p.Title.Text, ch.p.Y.Min, ch.p.Y.Max)
		}
	}
	// More than a decade apart: a log axis, as before.
	if ch := costChart(defaultLikeRun(false)); ch.p.Y.Scale == nil || ch.p.Y.Min <= 0 {
		t.Errorf("default-like cost chart: axis from %v", ch.p.Y.Min)
	} else if _, ok := ch.p.Y.Scale.(plot.LogScale); !ok {
		t.Error("default-like cost chart (67–2004 ms): not a log axis")
	}
}

// TestCostLabelsClearOfMarkers (issue 19): percentile labels sat on
// markers and leader lines crossed other policies' markers. In the
// default and far-primary layouts every label is placed clear of every
// marker and label and no leader line crosses another marker or label;
// policies drawn on one spot share one label block; every policy is named
// once.
func TestCostLabelsClearOfMarkers(t *testing.T) {
	for _, r := range []*Run{defaultLikeRun(false), farPrimaryLikeRun(false)} {
		ch := costChart(r)
		c := draw.New(vgimg.New(ChartWidth, ChartHeight))
		c = draw.Crop(c, outerMargin, -outerMargin, outerMargin, -outerMargin)
		data := layoutChart(c, ch).data
		labels := ch.costLabels
		if labels == nil {
			t.Fatal("cost chart keeps no labels")
		}
		placed := labels.place(data, ch.p)
		var named []string
		for _, pl := range placed {
			var block []string
			for _, ln := range pl.lines {
				block = append(block, ln.text)
			}
			named = append(named, block...)
			if pl.score != 0 {
				t.Errorf("%s: label %q placed with %d overlaps or crossings", r.Scenario, block, pl.score)
			}
		}
		var want []string
		for _, p := range r.Policies {
			want = append(want, p.Policy)
		}
		if slices.Sort(named); !slices.Equal(named, slices.Sorted(slices.Values(want))) {
			t.Errorf("%s: labels name %q, want every policy once", r.Scenario, named)
		}
	}
}
