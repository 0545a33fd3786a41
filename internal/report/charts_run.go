package report

import (
	"image/color"
	"math"
	"strconv"

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
	p999Glyph = hollowTriangle{}
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
		ylo, _, _ := posRange(ys)
		setLogAxis(&ch.p.X, xlo, xhi)
		// A probability: the axis ends at 1 and spans at least a decade
		// (a one-sample CCDF is the single point P = 1).
		setLogAxis(&ch.p.Y, math.Min(ylo, 0.1), 1)
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

// percentilesChart: p50 / p99 / p99.9 as dots, one colour per policy,
// each group of dots side by side (a dot plot reads the same on a log and
// a linear axis; bars on a log axis would have meaningless lengths).
func percentilesChart(r *Run) *chart {
	ch := newChart(chartTitle(r.Scenario, "latency percentiles"), "percentile", "latency (ms)")
	ch.p.Add(newGrid(false))
	groups := []string{"p50", "p99", "p99.9"}
	dots := &dotGroups{labels: len(r.Policies) <= 6, style: textStyle(8, labelGrey), radius: vg.Points(4), labelBg: color.White}
	var all []float64
	for i, pol := range r.Policies {
		vs := []float64{pol.P50, pol.P99, pol.P999}
		dots.vals = append(dots.vals, vs)
		dots.colors = append(dots.colors, policyColor(i))
		all = append(all, vs...)
		ch.addLegend(pol.Policy, glyphThumb{draw.GlyphStyle{Color: policyColor(i), Radius: vg.Points(4), Shape: draw.CircleGlyph{}}})
	}
	// Headroom above the highest dot for its value label.
	isLog, ok := setLatencyAxis(&ch.p.Y, all, false, 1.15)
	if isLog {
		lo, hi, _ := posRange(all)
		setLogAxis(&ch.p.Y, lo/1.3, hi*1.6)
	}
	ch.noData = !ok
	ch.dots = dots
	ch.p.Add(dots)
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

// costMark is one policy on the cost chart: its p99 and p99.9 latency (ms)
// at RU multiplier ru, with 95% CI whiskers where the CI is known (NaN
// bounds otherwise). Both markers are drawn at their true RU and latency,
// shifted only by jx points on the page (|jx| < the marker radius) when
// another policy's markers sit on the same spot (see jitterCostMarks).
type costMark struct {
	policy              int // index into Run.Policies (colour)
	ru, p99, p999       float64
	ruCI, p99CI, p999CI [2]float64
	jx                  vg.Length
}

// Approximate size of a chart's data area in points, used to find
// markers that would cover each other before the chart is drawn (the
// exact size depends on the legend; the estimate only needs to be close).
const (
	approxDataW = vg.Length(400)
	approxDataH = vg.Length(270)
)

// axisPos returns v's position along a (0 at Min, 1 at Max).
func axisPos(a *plot.Axis, v float64) float64 {
	return a.Scale.Normalize(a.Min, a.Max, v)
}

func ciOf(f *Figures, key string) [2]float64 {
	if ci, ok := f.CI95[key]; ok && finite(ci[0]) && finite(ci[1]) {
		return ci
	}
	return [2]float64{math.NaN(), math.NaN()}
}

// maxJitter is the largest page offset of a cost marker from its true
// position, as a fraction of the marker radius: a marker always covers
// its true value.
const maxJitter = 0.75

// jitterCostMarks sets jx for policies whose markers would be drawn on
// the same spot (p99 markers and p99.9 markers each within r points of
// each other on an approxDataW × approxDataH data area, e.g. policies
// that never hedge and so equal disabled): such a group is fanned out
// left to right in policy order, evenly within ±maxJitter·r points, so
// every colour shows while every marker still covers its true value. The
// data (RU, latency) are never moved.
func jitterCostMarks(ms []costMark, x, y *plot.Axis, r vg.Length) {
	if len(ms) < 2 || !(x.Max > x.Min) || !(y.Max > y.Min) {
		return
	}
	type pos struct{ x, y99, y999 float64 }
	ps := make([]pos, len(ms))
	for i, m := range ms {
		ps[i] = pos{axisPos(x, m.ru) * float64(approxDataW), math.NaN(), math.NaN()}
		if finite(m.p99) {
			ps[i].y99 = axisPos(y, m.p99) * float64(approxDataH)
		}
		if finite(m.p999) {
			ps[i].y999 = axisPos(y, m.p999) * float64(approxDataH)
		}
	}
	near := func(a, b float64) bool {
		return (math.IsNaN(a) && math.IsNaN(b)) || math.Abs(a-b) < float64(r)
	}
	coincide := func(i, j int) bool {
		return math.Abs(ps[i].x-ps[j].x) < float64(r) && near(ps[i].y99, ps[j].y99) && near(ps[i].y999, ps[j].y999)
	}
	group := make([]int, len(ms))
	for i := range group {
		group[i] = -1
	}
	for i := range ms {
		if group[i] >= 0 {
			continue
		}
		members := []int{i}
		group[i] = i
		for j := i + 1; j < len(ms); j++ {
			if group[j] < 0 && coincide(i, j) {
				group[j] = i
				members = append(members, j)
			}
		}
		if len(members) < 2 {
			continue
		}
		n := float64(len(members))
		step := 2 * maxJitter * float64(r) / (n - 1)
		for k, m := range members {
			ms[m].jx = vg.Length((float64(k) - (n-1)/2) * step)
		}
	}
}

// hollowTriangle is the p99.9 marker: an outlined triangle, larger than
// the p99 disc, so a p99 disc inside it (p99 ≈ p99.9) leaves both visible.
type hollowTriangle struct{}

func (hollowTriangle) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.5)})
	r := sty.Radius
	p := make(vg.Path, 0, 4)
	p.Move(vg.Point{X: pt.X, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X - r*0.866, Y: pt.Y - r*0.5})
	p.Line(vg.Point{X: pt.X + r*0.866, Y: pt.Y - r*0.5})
	p.Close()
	c.Stroke(p)
}

// costMarkers draws the cost chart's markers: per policy a thin line from
// its p99 disc to its p99.9 triangle, both at their true (RU, latency)
// shifted by jx points on the page.
type costMarkers struct {
	marks      []costMark
	r99, r999  vg.Length
	colorOf    func(policy int) color.Color
	validValue func(float64) bool
}

func (cm *costMarkers) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for _, m := range cm.marks {
		col := cm.colorOf(m.policy)
		px := trX(m.ru) + m.jx
		ok99, ok999 := cm.validValue(m.p99), cm.validValue(m.p999)
		if ok99 && ok999 {
			c.StrokeLine2(draw.LineStyle{Color: col, Width: vg.Points(1)}, px, trY(m.p99), px, trY(m.p999))
		}
		if ok99 {
			c.DrawGlyph(draw.GlyphStyle{Color: col, Radius: cm.r99, Shape: p99Glyph}, vg.Point{X: px, Y: trY(m.p99)})
		}
		if ok999 {
			c.DrawGlyph(draw.GlyphStyle{Color: col, Radius: cm.r999, Shape: p999Glyph}, vg.Point{X: px, Y: trY(m.p999)})
		}
	}
}

// costChart: p99 (filled disc) and p99.9 (larger hollow triangle) latency
// against RU multiplier, one colour per policy, each policy labelled by
// name next to its p99.9 point (with a leader line when the label had to
// move away) and joined to its p99 point by a thin line. With
// replications the 95% confidence intervals are drawn as whiskers
// (vertical: latency, horizontal: RU multiplier). Every marker and
// whisker is drawn at its true RU and latency; policies whose markers
// would cover each other exactly are fanned out by less than a marker
// radius on the page (see jitterCostMarks). The axes fit the data and
// the whiskers.
func costChart(r *Run) *chart {
	ch := newChart(chartTitle(r.Scenario, "tail latency vs cost"), "RU multiplier (×)", "latency (ms)")
	ch.p.Add(newGrid(true))
	var rus, lats []float64
	var marks []costMark
	for i := range r.Policies {
		f := &r.Policies[i].Figures
		if !finite(f.RUMultiplier) {
			continue
		}
		m := costMark{policy: i, ru: f.RUMultiplier, p99: f.P99, p999: f.P999,
			ruCI: ciOf(f, "ru_multiplier"), p99CI: ciOf(f, "p99_ms"), p999CI: ciOf(f, "p999_ms")}
		marks = append(marks, m)
		rus = append(rus, m.ru, m.ruCI[0], m.ruCI[1])
		lats = append(lats, m.p99, m.p999, m.p99CI[0], m.p99CI[1], m.p999CI[0], m.p999CI[1])
	}
	// Wide margins: labels sit right (or left) of the points.
	isLog := setScatterAxes(ch, lats, rus, 1, 2, 0.05, 0.15, 0.25)
	valid := func(v float64) bool { return finite(v) && (!isLog || v > 0) }
	for i := range marks {
		if !valid(marks[i].p99) {
			marks[i].p99 = math.NaN()
		}
		if !valid(marks[i].p999) {
			marks[i].p999 = math.NaN()
		}
	}
	markerR := vg.Points(4)
	triR := vg.Points(8.5) // inscribed radius 4.25: a p99 disc at the same spot fits inside
	jitterCostMarks(marks, &ch.p.X, &ch.p.Y, markerR)
	ch.cost = marks
	wh := &whiskers{cap: vg.Points(3)}
	labels := &pointLabels{markerR: triR, style: textStyle(10, color.Black)}
	for _, m := range marks {
		c := policyColor(m.policy)
		for _, w := range []struct {
			y  float64
			ci [2]float64
		}{{m.p99, m.p99CI}, {m.p999, m.p999CI}} {
			if !finite(w.y) {
				continue
			}
			// A zero-width interval (every replication alike) has no
			// whisker; one reaching 0 on a log axis runs off its bottom.
			switch {
			case valid(w.ci[0]) && valid(w.ci[1]) && w.ci[1] > w.ci[0]:
				wh.add(m.ru, w.ci[0], m.ru, w.ci[1], c)
				labels.segments = append(labels.segments, [2][2]float64{{m.ru, w.ci[0]}, {m.ru, w.ci[1]}})
			case isLog && finite(w.ci[0]) && w.ci[0] <= 0 && valid(w.ci[1]) && w.ci[1] > ch.p.Y.Min:
				wh.addOpenLow(m.ru, ch.p.Y.Min, w.ci[1], c)
				labels.segments = append(labels.segments, [2][2]float64{{m.ru, ch.p.Y.Min}, {m.ru, w.ci[1]}})
			}
			if finite(m.ruCI[0]) && finite(m.ruCI[1]) && m.ruCI[1] > m.ruCI[0] {
				wh.add(m.ruCI[0], w.y, m.ruCI[1], w.y, c)
				labels.segments = append(labels.segments, [2][2]float64{{m.ruCI[0], w.y}, {m.ruCI[1], w.y}})
			}
		}
		if finite(m.p99) && finite(m.p999) {
			labels.segments = append(labels.segments, [2][2]float64{{m.ru, m.p99}, {m.ru, m.p999}})
		}
		for _, y := range []float64{m.p99, m.p999} {
			if finite(y) {
				labels.obstacles = append(labels.obstacles, [2]float64{m.ru, y})
			}
		}
		// Label next to the upper point (p99.9, else p99).
		ly := m.p999
		if !finite(ly) {
			ly = m.p99
		}
		if finite(ly) {
			labels.pts = append(labels.pts, labelPoint{x: m.ru, y: ly, text: truncate(r.Policies[m.policy].Policy, pointLabelMaxRune), color: c})
		}
	}
	ch.p.Add(wh)
	ch.costWhiskers = wh
	ch.p.Add(&costMarkers{marks: marks, r99: markerR, r999: triR, colorOf: policyColor, validValue: finite})
	ch.p.Add(labels)
	ch.addLegend("p99", glyphThumb{draw.GlyphStyle{Color: color.Black, Radius: markerR, Shape: p99Glyph}})
	ch.addLegend("p99.9", glyphThumb{draw.GlyphStyle{Color: color.Black, Radius: triR, Shape: p999Glyph}})
	if len(wh.segs) > 0 {
		ch.addLegend("95% CI", whiskerThumb{c: color.Black, vertical: wh.hasVertical(), horizontal: wh.hasHorizontal()})
	}
	for i, p := range r.Policies {
		ch.addLegend(p.Policy, colorBox{policyColor(i)})
	}
	return ch
}

// timelineChart: windowed p99 over virtual time, log Y, one line per policy;
// windows without ops or with p99 ≤ 0 break the line. Episodes are shaded.
func timelineChart(r *Run) *chart {
	return timelineMetricChart(r, "windowed p99 latency", "p99 latency (ms)", true, false,
		func(w Window) float64 { return w.P99Ms }, 0)
}

// thresholdChart: the mean threshold each policy chose per window, log Y;
// windows where no operation was hedge-eligible break the line. Policies
// that never chose a threshold (disabled) have no line and no legend entry.
func thresholdChart(r *Run) *chart {
	return timelineMetricChart(r, "threshold over time", "mean threshold (ms)", true, true,
		func(w Window) float64 { return w.MeanThresholdMs }, 0)
}

// hedgeRateChart: the share of operations whose alternate fired, per
// window, in percent on a linear axis.
func hedgeRateChart(r *Run) *chart {
	return timelineMetricChart(r, "hedge rate over time", "hedge rate (%)", false, false,
		func(w Window) float64 { return 100 * w.HedgeRate }, 100)
}

// windowWidthS returns the timeline window width in seconds (the width of
// the first window with a positive finite width), or 0 if there is none.
func windowWidthS(r *Run) float64 {
	for _, p := range r.Policies {
		for _, w := range p.Timeline {
			if d := w.EndS - w.StartS; finite(d) && d > 0 {
				return d
			}
		}
	}
	return 0
}

// fmtSeconds formats a duration in seconds for a title: "10 s", "0.5 s",
// "1.5e+06 s".
func fmtSeconds(s float64) string {
	return strconv.FormatFloat(s, 'g', 4, 64) + " s"
}

// timelineEnd returns the end of the timeline's X axis in seconds: the
// run's duration (Run.DurationS, the actual length of the run), extended
// to the end of the last window that holds operations; 1 when neither is
// positive. Episodes do not extend it: the axis shows the run.
func timelineEnd(r *Run) float64 {
	xEnd := 0.0
	if finite(r.DurationS) && r.DurationS > 0 {
		xEnd = r.DurationS
	}
	for _, p := range r.Policies {
		for _, w := range p.Timeline {
			if w.Ops > 0 && finite(w.EndS) && w.EndS > xEnd {
				xEnd = w.EndS
			}
		}
	}
	if xEnd <= 0 {
		xEnd = 1
	}
	return xEnd
}

// timelineYReserve is the space kept left of the data area of the
// timeline, threshold and hedge-rate charts (tick labels up to six
// characters), so that the three plots line up when shown one above the
// other.
var timelineYReserve = textStyle(10, color.Black).Width("000000") + vg.Points(10)

// timelineMetricChart draws value(window) over virtual time, one line per
// policy, with episodes shaded and their boundaries marked. On a log axis
// non-positive values break the line; on a linear axis only windows without
// ops do. maxY > 0 caps a linear axis (100 for a percentage). With
// dropNoData, policies without any value get no legend entry (else they
// are listed as "(no data)"). The title states the window width; the
// legend strip and the space for the Y tick labels are the same for every
// chart of the family, so their data areas line up.
func timelineMetricChart(r *Run, what, yLabel string, logY, dropNoData bool, value func(Window) float64, maxY float64) *chart {
	if w := windowWidthS(r); w > 0 {
		what += " (" + fmtSeconds(w) + " windows)"
	}
	ch := newChart(chartTitle(r.Scenario, what), "virtual time (s)", yLabel)
	ch.yReserve = timelineYReserve
	for _, p := range r.Policies {
		ch.legendSizer = append(ch.legendSizer, truncate(p.Policy+" (no data)", legendMaxRune))
	}
	xEnd := timelineEnd(r)
	var ys []float64
	segs := make([][]plotter.XYs, len(r.Policies))
	for i, p := range r.Policies {
		var cur plotter.XYs
		for _, w := range p.Timeline {
			mid := (w.StartS + w.EndS) / 2
			v := value(w)
			if w.Ops <= 0 || (logY && !(v > 0)) || !finite(v) || !finite(mid) || mid > xEnd {
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
	setLinearAxis(&ch.p.X, 0, xEnd)
	headroom := 1.3
	if len(r.Episodes) > 0 {
		headroom = 2.5 // room for the episode labels at the top
	}
	if logY {
		if lo, hi, ok := posRange(ys); ok {
			// Pad below so a line at the lowest value is not drawn on the axis.
			setLogAxis(&ch.p.Y, lo/1.5, hi*headroom)
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
			// Pad below so a line at 0 (disabled's hedge rate) is not
			// drawn on the axis.
			setLinearAxis(&ch.p.Y, -0.03*top, top)
		} else {
			setLinearAxis(&ch.p.Y, 0, 1)
			ch.noData = len(ys) == 0
		}
	}
	ch.addTimeLayers(r.Episodes) // first, so lines go on top of the shading
	ch.lineOffsets = separateLines(segs, &ch.p.Y)
	for i, p := range r.Policies {
		sty := policyLine(i)
		sty.Width = vg.Points(1.5)
		for _, s := range segs[i] {
			addLine(ch.p, s, sty)
		}
		name := p.Policy
		if len(segs[i]) == 0 {
			if dropNoData {
				continue
			}
			name += " (no data)"
		}
		ch.addLegend(name, &plotter.Line{LineStyle: sty})
	}
	return ch
}

// lineGap is the distance in points between lines that would coincide:
// one line width, so identical lines are drawn as touching stripes (a
// ribbon that reads as one value with every colour visible) rather than
// as separate values. coincidentPt is how close (in points on an
// approxDataH high axis) two values must be to count as the same line.
// Only (near) identical lines are moved, so the offset never hides a
// real but small difference.
const (
	lineGap      = vg.Length(1.5)
	coincidentPt = 0.05
)

// separateLines finds policies whose lines would be drawn exactly on top
// of each other (at least half of the windows they share within
// coincidentPt, e.g. several policies at the same 50 ms threshold clamp,
// or a learned threshold that sits on a static one most of the time)
// and moves each such group apart by lineGap points, centred on the true
// values, so every line stays visible. Only the points where a line meets
// another line of its group are moved; where they part, each is drawn at
// its true value (a moved line never shows a utilisation above 100% or a
// hedge rate below 0% where it stands alone). It moves the points in segs
// and returns each policy's offset in points (0 for most).
func separateLines(segs [][]plotter.XYs, y *plot.Axis) []vg.Length {
	n := len(segs)
	offsets := make([]vg.Length, n)
	if !(y.Max > y.Min) {
		return offsets
	}
	pos := func(v float64) float64 { return axisPos(y, v) * float64(approxDataH) }
	byX := make([]map[float64]float64, n)
	for i := range segs {
		byX[i] = map[float64]float64{}
		for _, s := range segs[i] {
			for _, p := range s {
				byX[i][p.X] = pos(p.Y)
			}
		}
	}
	coincide := func(i, j int) bool {
		shared, close := 0, 0
		for x, pi := range byX[i] {
			if pj, ok := byX[j][x]; ok {
				shared++
				if math.Abs(pi-pj) < coincidentPt {
					close++
				}
			}
		}
		return shared > 0 && close*2 >= shared
	}
	group := make([]int, n)
	for i := range group {
		group[i] = -1
	}
	for i := range n {
		if group[i] >= 0 || len(byX[i]) == 0 {
			continue
		}
		members := []int{i}
		group[i] = i
		for j := i + 1; j < n; j++ {
			if group[j] < 0 && len(byX[j]) > 0 && coincide(i, j) {
				group[j] = i
				members = append(members, j)
			}
		}
		if len(members) < 2 {
			continue
		}
		for k, m := range members {
			offsets[m] = vg.Length(float64(k)-float64(len(members)-1)/2) * lineGap
		}
	}
	// Move only the points where the line meets another of its group: where
	// the lines part, every line is drawn at its true value.
	meets := func(i int, x, pi float64) bool {
		for j := range n {
			if j != i && group[j] == group[i] {
				if pj, ok := byX[j][x]; ok && math.Abs(pi-pj) < coincidentPt {
					return true
				}
			}
		}
		return false
	}
	for i, off := range offsets {
		if off == 0 {
			continue
		}
		for _, s := range segs[i] {
			for k := range s {
				if !meets(i, s[k].X, byX[i][s[k].X]) {
					continue
				}
				p := axisPos(y, s[k].Y) + float64(off/approxDataH)
				s[k].Y = axisValue(y, p)
			}
		}
	}
	return offsets
}

// axisValue is the inverse of axisPos for linear and log axes.
func axisValue(a *plot.Axis, p float64) float64 {
	if _, ok := a.Scale.(plot.LogScale); ok {
		return math.Exp(math.Log(a.Min) + p*(math.Log(a.Max)-math.Log(a.Min)))
	}
	return a.Min + p*(a.Max-a.Min)
}
