package report

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func chartTitle(scenario, what string) string {
	if scenario == "" {
		return what
	}
	return scenario + ": " + what
}

var (
	p99Glyph  = draw.CircleGlyph{}
	p999Glyph = draw.PyramidGlyph{}
)

// ccdfChart: latency CCDF on log-log axes, one line per policy.
func ccdfChart(r *Run) *chart {
	ch := newChart(chartTitle(r.Scenario, "latency CCDF"), "latency (ms)", "P(T > latency)")
	ch.p.Add(newGrid(true))
	lines := make([]plotter.XYs, len(r.Policies))
	var xs, ys []float64
	for i := range r.Policies {
		lines[i] = xys(r.Policies[i].CCDF, true, true)
		for _, p := range lines[i] {
			xs, ys = append(xs, p.X), append(ys, p.Y)
		}
	}
	xlo, xhi, ok := posRange(xs)
	if ok {
		ylo, yhi, _ := posRange(ys)
		setLogAxis(&ch.p.X, xlo, xhi)
		setLogAxis(&ch.p.Y, ylo, math.Max(yhi, 1))
	} else {
		setLogAxis(&ch.p.X, 1, 1000)
		setLogAxis(&ch.p.Y, 1e-4, 1)
		ch.noData = true
	}
	for i, pol := range r.Policies {
		l := addLine(ch.p, lines[i], policyLine(i))
		name := pol.Policy
		if len(lines[i]) == 0 {
			name += " (no data)"
		}
		ch.addLegend(name, l)
	}
	return ch
}

// percentilesChart: grouped bars p50 / p99 / p99.9, one colour per policy.
func percentilesChart(r *Run) *chart {
	ch := newChart(chartTitle(r.Scenario, "latency percentiles"), "percentile", "latency (ms)")
	ch.p.Add(newGrid(false))
	groups := []string{"p50", "p99", "p99.9"}
	bars := &groupedBars{labels: len(r.Policies) <= 6, style: textStyle(8, labelGrey)}
	var all []float64
	for i, pol := range r.Policies {
		vs := []float64{pol.P50, pol.P99, pol.P999}
		bars.vals = append(bars.vals, vs)
		bars.colors = append(bars.colors, policyColor(i))
		all = append(all, vs...)
		ch.addLegend(pol.Policy, colorBox{policyColor(i)})
	}
	// Headroom above the tallest bar for the value labels.
	isLog, ok := setLatencyAxis(&ch.p.Y, all, true, 1.12)
	if isLog {
		lo, hi, _ := posRange(all)
		setLogAxis(&ch.p.Y, lo/2, hi*2.5)
	}
	ch.noData = !ok
	ch.p.Add(bars)
	ch.p.X.Min, ch.p.X.Max = -0.5, float64(len(groups))-0.5
	var ticks plot.ConstantTicks
	for g, name := range groups {
		ticks = append(ticks, plot.Tick{Value: float64(g), Label: name})
	}
	ch.p.X.Tick.Marker = ticks
	ch.p.X.Tick.Label.Font = fontOf(12)
	ch.xLabel = ""
	return ch
}

// costChart: p99 (circle) and p99.9 (triangle) latency against RU
// multiplier, one colour per policy, each policy labelled by name next to
// its p99.9 point and joined to its p99 point by a thin line.
func costChart(r *Run) *chart {
	ch := newChart(chartTitle(r.Scenario, "tail latency vs cost"), "RU multiplier (×)", "latency (ms)")
	ch.p.Add(newGrid(true))
	var rus, lats []float64
	type pol struct {
		i         int
		ru        float64
		p99, p999 float64
	}
	var pols []pol
	for i, p := range r.Policies {
		if !finite(p.RUMultiplier) {
			continue
		}
		pols = append(pols, pol{i, p.RUMultiplier, p.P99, p.P999})
		rus = append(rus, p.RUMultiplier)
		lats = append(lats, p.P99, p.P999)
	}
	// Wide margins: labels sit right (or left) of the points.
	isLog := setScatterAxes(ch, lats, rus, 1, 2, 0.05, 0.15, 0.25)
	valid := func(v float64) bool { return finite(v) && (!isLog || v > 0) }
	markerR := vg.Points(4)
	labels := &pointLabels{markerR: markerR + vg.Points(1), style: textStyle(10, color.Black)}
	for _, p := range pols {
		c := policyColor(p.i)
		if valid(p.p99) && valid(p.p999) {
			addLine(ch.p, plotter.XYs{{X: p.ru, Y: p.p99}, {X: p.ru, Y: p.p999}}, draw.LineStyle{Color: c, Width: vg.Points(1)})
			labels.segments = append(labels.segments, [2][2]float64{{p.ru, p.p99}, {p.ru, p.p999}})
		}
		for _, m := range []struct {
			v     float64
			glyph draw.GlyphDrawer
		}{{p.p99, p99Glyph}, {p.p999, p999Glyph}} {
			if !valid(m.v) {
				continue
			}
			ch.p.Add(&plotter.Scatter{XYs: plotter.XYs{{X: p.ru, Y: m.v}}, GlyphStyle: draw.GlyphStyle{Color: c, Radius: markerR, Shape: m.glyph}})
			labels.obstacles = append(labels.obstacles, [2]float64{p.ru, m.v})
		}
		// Label next to the upper point (p99.9, else p99).
		ly := p.p999
		if !valid(ly) {
			ly = p.p99
		}
		if valid(ly) {
			labels.pts = append(labels.pts, labelPoint{x: p.ru, y: ly, text: truncate(r.Policies[p.i].Policy, pointLabelMaxRune), color: c})
		}
	}
	ch.p.Add(labels)
	ch.addLegend("p99", glyphThumb{draw.GlyphStyle{Color: color.Black, Radius: markerR, Shape: p99Glyph}})
	ch.addLegend("p99.9", glyphThumb{draw.GlyphStyle{Color: color.Black, Radius: markerR, Shape: p999Glyph}})
	for i, p := range r.Policies {
		ch.addLegend(p.Policy, colorBox{policyColor(i)})
	}
	return ch
}

// timelineChart: windowed p99 over virtual time, log Y, one line per policy;
// windows without ops or with p99 ≤ 0 break the line. Episodes are shaded.
func timelineChart(r *Run) *chart {
	return timelineMetricChart(r, "windowed p99 latency", "p99 latency (ms)", true,
		func(w Window) float64 { return w.P99Ms }, 0)
}

// thresholdChart: the mean threshold each policy chose per window, log Y;
// windows where no operation was hedge-eligible break the line.
func thresholdChart(r *Run) *chart {
	return timelineMetricChart(r, "threshold over time", "mean threshold (ms)", true,
		func(w Window) float64 { return w.MeanThresholdMs }, 0)
}

// hedgeRateChart: the share of operations whose alternate fired, per
// window, in percent on a linear axis.
func hedgeRateChart(r *Run) *chart {
	return timelineMetricChart(r, "hedge rate over time", "hedge rate (%)", false,
		func(w Window) float64 { return 100 * w.HedgeRate }, 100)
}

// timelineMetricChart draws value(window) over virtual time, one line per
// policy, with episodes shaded. On a log axis non-positive values break the
// line; on a linear axis only windows without ops do. maxY > 0 caps a
// linear axis (100 for a percentage).
func timelineMetricChart(r *Run, what, yLabel string, logY bool, value func(Window) float64, maxY float64) *chart {
	ch := newChart(chartTitle(r.Scenario, what), "virtual time (s)", yLabel)
	xEnd := 0.0
	if finite(r.DurationS) && r.DurationS > 0 {
		xEnd = r.DurationS
	}
	var ys []float64
	segs := make([][]plotter.XYs, len(r.Policies))
	for i, p := range r.Policies {
		var cur plotter.XYs
		for _, w := range p.Timeline {
			if finite(w.EndS) && w.EndS > xEnd {
				xEnd = w.EndS
			}
			mid := (w.StartS + w.EndS) / 2
			v := value(w)
			if w.Ops <= 0 || (logY && !(v > 0)) || !finite(v) || !finite(mid) {
				if len(cur) > 0 {
					segs[i] = append(segs[i], cur)
					cur = nil
				}
				continue
			}
			cur = append(cur, plotter.XY{X: mid, Y: v})
			ys = append(ys, v)
		}
		if len(cur) > 0 {
			segs[i] = append(segs[i], cur)
		}
	}
	for _, e := range r.Episodes {
		if finite(e.EndS) && e.EndS > xEnd {
			xEnd = e.EndS
		}
	}
	if xEnd <= 0 {
		xEnd = 1
	}
	setLinearAxis(&ch.p.X, 0, xEnd)
	headroom := 1.3
	if len(r.Episodes) > 0 {
		headroom = 2.5 // room for the episode labels at the top
	}
	if logY {
		if lo, hi, ok := posRange(ys); ok {
			setLogAxis(&ch.p.Y, lo, hi*headroom)
		} else {
			setLogAxis(&ch.p.Y, 1, 1000)
			ch.noData = true
		}
	} else {
		if _, hi, ok := finiteRange(ys); ok && hi > 0 {
			top := hi * (1 + (headroom-1)/2)
			if maxY > 0 {
				top = min(top, max(maxY, hi))
			}
			setLinearAxis(&ch.p.Y, 0, top)
		} else {
			setLinearAxis(&ch.p.Y, 0, 1)
			ch.noData = len(ys) == 0
		}
	}
	if len(r.Episodes) > 0 {
		// Drawn first, so lines and grid go on top of the shading.
		ch.p.Add(&episodeShading{eps: r.Episodes, style: textStyle(9, labelGrey)})
	}
	ch.p.Add(newGrid(true))
	for i, p := range r.Policies {
		sty := policyLine(i)
		sty.Width = vg.Points(1.5)
		for _, s := range segs[i] {
			addLine(ch.p, s, sty)
		}
		name := p.Policy
		if len(segs[i]) == 0 {
			name += " (no data)"
		}
		ch.addLegend(name, &plotter.Line{LineStyle: sty})
	}
	return ch
}
