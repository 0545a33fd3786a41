package report

import (
	"image/color"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

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
	isLog, ok := setLatencyAxis(&ch.p.Y, all, 1.15)
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
// bounds otherwise). Both markers are drawn at their true RU and latency.
// Policies whose markers would cover each other (see groupCostMarks) are
// drawn concentrically: the group's first policy largest, each later one
// smaller on top of it (r99, r999 in points), so every colour shows as a
// ring; ref names the group's first policy (-1 for it and for a policy
// alone), same says it has exactly ref's figures.
type costMark struct {
	policy              int // index into Run.Policies (colour)
	ru, p99, p999       float64
	ruCI, p99CI, p999CI [2]float64
	r99, r999           vg.Length
	ref                 int // index into Run.Policies, or -1
	same                bool
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

// Cost marker sizes in points: the p99 disc and the p99.9 triangle of a
// policy alone, and how much larger each earlier member of a group of
// coinciding policies is drawn (at most costRingMax larger in all).
const (
	costR99      = vg.Length(4)
	costR999     = vg.Length(8.5) // inscribed radius 4.25: a p99 disc at the same spot fits inside
	costRing99   = vg.Length(1.5)
	costRing999  = vg.Length(2.2)
	costRingMax  = vg.Length(6)
	costRingMax9 = vg.Length(8)
)

// groupCostMarks sets every mark's marker sizes and ref: marks whose p99
// markers and p99.9 markers each lie within costR99 of the group's first
// mark on an approxDataW × approxDataH data area (e.g. policies that never
// hedge and so equal disabled) form a group, drawn concentrically in
// policy order. The data (RU, latency) are never moved.
func groupCostMarks(ms []costMark, x, y *plot.Axis) {
	for i := range ms {
		ms[i].r99, ms[i].r999, ms[i].ref = costR99, costR999, -1
	}
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
	r := float64(costR99)
	near := func(a, b float64) bool {
		return (math.IsNaN(a) && math.IsNaN(b)) || math.Abs(a-b) < r
	}
	coincide := func(i, j int) bool {
		return math.Abs(ps[i].x-ps[j].x) < r && near(ps[i].y99, ps[j].y99) && near(ps[i].y999, ps[j].y999)
	}
	grouped := make([]bool, len(ms))
	for i := range ms {
		if grouped[i] {
			continue
		}
		members := []int{i}
		for j := i + 1; j < len(ms); j++ {
			if !grouped[j] && coincide(i, j) {
				grouped[j] = true
				members = append(members, j)
			}
		}
		n := len(members)
		if n < 2 {
			continue
		}
		for k, m := range members {
			ms[m].r99 = ringRadius(costR99, costRing99, costRingMax, k, n)
			ms[m].r999 = ringRadius(costR999, costRing999, costRingMax9, k, n)
			if k > 0 {
				f := ms[i]
				ms[m].ref = f.policy
				ms[m].same = ms[m].ru == f.ru && sameValue(ms[m].p99, f.p99) && sameValue(ms[m].p999, f.p999)
			}
		}
	}
}

// ringRadius is the marker radius of the rank-th of n coinciding markers
// drawn concentrically (first largest): base for the last, step larger
// for each one before it, at most maxExtra larger in all.
func ringRadius(base, step, maxExtra vg.Length, rank, n int) vg.Length {
	if n < 2 {
		return base
	}
	return base + vg.Length(n-1-rank)*min(step, maxExtra/vg.Length(n-1))
}

// sameValue reports whether a and b are equal or both NaN.
func sameValue(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

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
// its p99 disc to its p99.9 triangle, both at their true (RU, latency),
// in the sizes groupCostMarks chose.
type costMarkers struct {
	marks      []costMark
	colorOf    func(policy int) color.Color
	validValue func(float64) bool
}

func (cm *costMarkers) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for _, m := range cm.marks {
		col := cm.colorOf(m.policy)
		px := trX(m.ru)
		ok99, ok999 := cm.validValue(m.p99), cm.validValue(m.p999)
		if ok99 && ok999 {
			c.StrokeLine2(draw.LineStyle{Color: col, Width: vg.Points(1)}, px, trY(m.p99), px, trY(m.p999))
		}
		if ok99 {
			c.DrawGlyph(draw.GlyphStyle{Color: col, Radius: m.r99, Shape: p99Glyph}, vg.Point{X: px, Y: trY(m.p99)})
		}
		if ok999 {
			c.DrawGlyph(draw.GlyphStyle{Color: col, Radius: m.r999, Shape: p999Glyph}, vg.Point{X: px, Y: trY(m.p999)})
		}
	}
}

// costChart: p99 (filled disc) and p99.9 (larger hollow triangle) latency
// against RU multiplier, one colour per policy, each policy (or group of
// policies drawn on one spot, as one block) labelled by name next to its
// p99.9 point (with a leader line when the label had to
// move away) and joined to its p99 point by a thin line. With
// replications the 95% confidence intervals are drawn as whiskers
// (vertical: latency, horizontal: RU multiplier). Every marker and
// whisker is drawn at its true RU and latency; policies whose markers
// would cover each other are drawn concentrically and noted in the legend
// ("= disabled", or "≈ disabled" when only close; see groupCostMarks).
// The axes fit the data and the whiskers; a linear latency axis starts
// at 0 (see setLatencyAxis).
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
	groupCostMarks(marks, &ch.p.X, &ch.p.Y)
	ch.cost = marks
	wh := &whiskers{cap: vg.Points(3)}
	groupLabel := make([]int, len(r.Policies)) // index into labels.pts of a group's label
	for i := range groupLabel {
		groupLabel[i] = -1
	}
	labels := &pointLabels{markerR: costR999, style: textStyle(10, color.Black), labelBg: labelBox}
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
		// Label next to the upper point (p99.9, else p99).
		ly := m.p999
		if !finite(ly) {
			ly = m.p99
		}
		owner := -1 // the label naming this policy
		switch {
		case !finite(ly):
		case m.ref >= 0 && groupLabel[m.ref] >= 0:
			owner = groupLabel[m.ref]
		default:
			owner = len(labels.pts)
		}
		if finite(m.p99) {
			labels.obstacles = append(labels.obstacles, obstacle{m.ru, m.p99, m.r99, owner})
		}
		if finite(m.p999) {
			labels.obstacles = append(labels.obstacles, obstacle{m.ru, m.p999, m.r999, owner})
		}
		name := truncate(r.Policies[m.policy].Policy, pointLabelMaxRune)
		switch {
		case !finite(ly):
		case m.ref >= 0 && groupLabel[m.ref] >= 0:
			// Drawn on its group's first policy: one label block.
			lp := &labels.pts[groupLabel[m.ref]]
			lp.more = append(lp.more, labelLine{name, c})
		default:
			groupLabel[m.policy] = len(labels.pts)
			labels.pts = append(labels.pts, labelPoint{x: m.ru, y: ly, text: name, color: c})
		}
	}
	ch.p.Add(wh)
	ch.costWhiskers = wh
	ch.p.Add(&costMarkers{marks: marks, colorOf: policyColor, validValue: finite})
	ch.p.Add(labels)
	ch.costLabels = labels
	ch.addLegend("p99", glyphThumb{draw.GlyphStyle{Color: color.Black, Radius: costR99, Shape: p99Glyph}})
	ch.addLegend("p99.9", glyphThumb{draw.GlyphStyle{Color: color.Black, Radius: costR999, Shape: p999Glyph}})
	if len(wh.segs) > 0 {
		ch.addLegend("95% CI", whiskerThumb{c: color.Black, vertical: wh.hasVertical(), horizontal: wh.hasHorizontal()})
	}
	notes := make([]string, len(r.Policies))
	for _, m := range marks {
		if m.ref >= 0 {
			notes[m.policy] = "≈ " + r.Policies[m.ref].Policy
			if m.same {
				notes[m.policy] = "= " + r.Policies[m.ref].Policy
			}
		}
	}
	for i, p := range r.Policies {
		ch.addLegend(legendWithNote(p.Policy, notes[i]), colorBox{policyColor(i)})
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

// timeLegendSizer are the texts the legend strip of every time chart of r
// is made wide enough for: each policy "(no data)", and each policy with
// the widest note (see legendWithNote) an earlier policy could give it, so
// the charts' data areas line up whatever lines coincide in each. A note
// of c runes leaves the name the same room whichever policy it names, so
// only the widest note of each length is tried: O(policies) texts.
func timeLegendSizer(r *Run) []string {
	sty := textStyle(10, color.Black) // the legend's (see layoutChart)
	var out []string
	widest := map[int]string{} // by rune count
	for _, p := range r.Policies {
		out = append(out, truncate(p.Policy+" (no data)", legendMaxRune))
		for _, c := range slices.Sorted(maps.Keys(widest)) {
			out = append(out, legendWithNote(p.Policy, widest[c]))
		}
		for _, sign := range []string{"= ", "≈ "} {
			note := truncate(sign+p.Policy, legendNoteMaxRune+2)
			c := utf8.RuneCountInString(note)
			if w, ok := widest[c]; !ok || sty.Width(note) > sty.Width(w) {
				widest[c] = note
			}
		}
	}
	return out
}

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
	ch.legendSizer = timeLegendSizer(r)
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
	co := findCoincidence(segs, &ch.p.Y)
	names := make([]string, len(r.Policies))
	styles := make([]draw.LineStyle, len(r.Policies))
	for i, p := range r.Policies {
		names[i] = p.Policy
		styles[i] = policyLine(i)
		styles[i].Width = vg.Points(1.5)
	}
	glyphs := ch.addBundle(segs, styles, co)
	for i, name := range names {
		if len(segs[i]) == 0 {
			if dropNoData {
				continue
			}
			name += " (no data)"
		}
		ch.addLegend(legendWithNote(name, co.note(i, names)), lineThumbs(styles[i], glyphs[i])...)
	}
	return ch
}

// addBundle adds the lines segs[i] in styles[i], every point at its
// value, then the markers of the lines that coincide with others (see
// coincidence.bundleMarks) on top of all lines. It records what it drew
// in ch.series and returns each line's marker glyph (nil without markers).
func (ch *chart) addBundle(segs [][]plotter.XYs, styles []draw.LineStyle, co coincidence) []*draw.GlyphStyle {
	for i := range segs {
		for _, s := range segs[i] {
			addLine(ch.p, s, styles[i])
		}
	}
	glyphs := make([]*draw.GlyphStyle, len(segs))
	ch.series = make([]drawnSeries, len(segs))
	for i := range segs {
		ch.series[i] = drawnSeries{segs: segs[i], ref: co.ref[i], everywhere: co.everywhere[i]}
		marks, shape := co.bundleMarks(i, segs[i])
		if len(marks) == 0 {
			continue
		}
		g := draw.GlyphStyle{Color: styles[i].Color, Radius: bundleMarkRadius, Shape: shape}
		ch.p.Add(&plotter.Scatter{XYs: marks, GlyphStyle: g})
		glyphs[i] = &g
		ch.series[i].marks, ch.series[i].glyph = marks, shape
	}
	return glyphs
}

// lineThumbs is a legend thumbnail of a line in sty, with its marker
// when g is not nil.
func lineThumbs(sty draw.LineStyle, g *draw.GlyphStyle) []plot.Thumbnailer {
	th := []plot.Thumbnailer{&plotter.Line{LineStyle: sty}}
	if g != nil {
		th = append(th, glyphThumb{*g})
	}
	return th
}

// legendNoteMaxRune is the most runes of the name in a legend note.
const legendNoteMaxRune = 14

// legendWithNote is a legend text: name, then note (e.g. "= disabled")
// with the name in it shortened so the whole fits legendMaxRune.
func legendWithNote(name, note string) string {
	if note == "" {
		return name
	}
	note = truncate(note, legendNoteMaxRune+2)
	return truncate(name, legendMaxRune-utf8.RuneCountInString(note)-1) + " " + note
}

// coincidentPt is how close (in points on an approxDataH high axis) two
// values must be to be drawn as one line: closer than a line's width, so
// the later line hides the earlier one.
const coincidentPt = 0.05

// coincidence says which lines of a chart are drawn on top of others.
// Lines are never moved: every point is drawn at its value, and
// coinciding lines are told apart by their dash pattern, by markers (see
// bundleMarks) and by a legend note naming the line they coincide with.
type coincidence struct {
	// ref[i] is the first line that line i coincides with (within
	// coincidentPt in at least half the windows both have, e.g. several
	// policies at one threshold clamp, or a policy that never hedges and
	// so equals disabled), or -1.
	ref []int
	// everywhere[i]: line i coincides with ref[i] in every window both
	// have (the legend then says "= ref", else "≈ ref").
	everywhere []bool
	// rank[i] is line i's position in its group (0 for the first line and
	// for lines that coincide with none); size[i] the group's size.
	rank, size []int
	// meetX[i] are the window midpoints (ascending) at which two lines of
	// i's group coincide.
	meetX [][]float64
}

// findCoincidence groups the lines segs[i] (points at window midpoints)
// that are drawn on top of each other on axis y (see coincidence).
func findCoincidence(segs [][]plotter.XYs, y *plot.Axis) coincidence {
	n := len(segs)
	co := coincidence{ref: make([]int, n), everywhere: make([]bool, n), rank: make([]int, n), size: make([]int, n), meetX: make([][]float64, n)}
	for i := range n {
		co.ref[i], co.size[i] = -1, 1
	}
	if !(y.Max > y.Min) {
		return co
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
	// compare returns the windows i and j share and those where they meet.
	compare := func(i, j int) (shared, meet int) {
		for x, pi := range byX[i] {
			if pj, ok := byX[j][x]; ok {
				shared++
				if math.Abs(pi-pj) < coincidentPt {
					meet++
				}
			}
		}
		return shared, meet
	}
	for i := range n {
		if co.ref[i] >= 0 || len(byX[i]) == 0 {
			continue
		}
		members := []int{i}
		for j := i + 1; j < n; j++ {
			if co.ref[j] >= 0 || len(byX[j]) == 0 {
				continue
			}
			if shared, meet := compare(i, j); shared > 0 && meet*2 >= shared {
				co.ref[j], co.everywhere[j] = i, meet == shared
				members = append(members, j)
			}
		}
		if len(members) < 2 {
			continue
		}
		xs := map[float64]bool{}
		for a, m := range members {
			for _, o := range members[a+1:] {
				for x, pm := range byX[m] {
					if po, ok := byX[o][x]; ok && math.Abs(pm-po) < coincidentPt {
						xs[x] = true
					}
				}
			}
		}
		meet := slices.Sorted(maps.Keys(xs))
		for k, m := range members {
			co.rank[m], co.size[m], co.meetX[m] = k, len(members), meet
		}
	}
	return co
}

// note is line i's legend note: "= NAME" or "≈ NAME" of the line it
// coincides with (names[ref]), or "".
func (co coincidence) note(i int, names []string) string {
	j := co.ref[i]
	if j < 0 {
		return ""
	}
	if co.everywhere[i] {
		return "= " + names[j]
	}
	return "≈ " + names[j]
}

// bundleGlyphs are the markers of the lines of a coinciding group, by
// rank in the group.
var bundleGlyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
	draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.PlusGlyph{},
}

// bundleMarkRadius is the radius of those markers in points.
const bundleMarkRadius = vg.Length(3.2)

// maxBundleMarks is the most markers one line of a group gets.
const maxBundleMarks = 6

// bundleMarks returns where line i (of a coinciding group) gets a marker
// and its glyph: at most maxBundleMarks of the windows where the group
// coincides, evenly spread, staggered by rank so that the group's markers
// alternate along the bundle (every colour shows where the lines lie on
// top of each other). Each marker sits on the line's own point, at its
// value. A line that coincides with no other gets none.
func (co coincidence) bundleMarks(i int, segs []plotter.XYs) (plotter.XYs, draw.GlyphDrawer) {
	glyph := bundleGlyphs[co.rank[i]%len(bundleGlyphs)]
	meet, n := co.meetX[i], co.size[i]
	if n < 2 || len(meet) == 0 {
		return nil, glyph
	}
	at := map[float64]float64{}
	for _, s := range segs {
		for _, p := range s {
			at[p.X] = p.Y
		}
	}
	slots := max(1, min(maxBundleMarks, len(meet)/n))
	var out plotter.XYs
	for j := range slots {
		k := int((float64(j) + (float64(co.rank[i])+0.5)/float64(n)) * float64(len(meet)) / float64(slots))
		if k >= len(meet) {
			continue
		}
		if y, ok := at[meet[k]]; ok && (len(out) == 0 || out[len(out)-1].X != meet[k]) {
			out = append(out, plotter.XY{X: meet[k], Y: y})
		}
	}
	return out, glyph
}
