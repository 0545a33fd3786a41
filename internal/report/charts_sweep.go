package report

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// sweepSeries is one policy's figures across the sweep, sorted by value.
type sweepSeries struct {
	policy string
	values []float64
	figs   []*Figures
}

// sweepByPolicy groups the sweep by policy name, policies in order of first
// appearance, points sorted by (finite) parameter value.
func sweepByPolicy(s *Sweep) []*sweepSeries {
	var out []*sweepSeries
	idx := map[string]*sweepSeries{}
	pts := make([]SweepPoint, 0, len(s.Points))
	for _, p := range s.Points {
		if finite(p.Value) {
			pts = append(pts, p)
		}
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].Value < pts[j].Value })
	for _, p := range pts {
		for i := range p.Policies {
			f := &p.Policies[i].Figures
			ser := idx[f.Policy]
			if ser == nil {
				ser = &sweepSeries{policy: f.Policy}
				idx[f.Policy] = ser
				out = append(out, ser)
			}
			ser.values = append(ser.values, p.Value)
			ser.figs = append(ser.figs, f)
		}
	}
	// Keep first-appearance order of the unsorted input for colours.
	first := map[string]int{}
	n := 0
	for _, p := range s.Points {
		for _, pr := range p.Policies {
			if _, ok := first[pr.Policy]; !ok {
				first[pr.Policy] = n
				n++
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return first[out[i].policy] < first[out[j].policy] })
	return out
}

// paramNames are axis titles for keys the suffix rule would misread.
var paramNames = map[string]string{
	"rate_per_s": "rate (ops/s)",
	"ru_per_s":   "throughput (RU/s)",
	"zipf_s":     "Zipf exponent s",
}

// paramUnits maps a key's unit suffix to the unit written on an axis.
var paramUnits = []struct{ suffix, unit string }{
	{"_per_s", "/s"}, {"_ms", "ms"}, {"_s", "s"}, {"_pct", "%"}, {"_ru", "RU"},
}

// paramLabel turns a swept key path into an axis title: the last path
// element with its unit suffix written as a unit and underscores as
// spaces, e.g. "policies.static-100ms.threshold_ms" → "threshold (ms)",
// "workload.rate_per_s" → "rate (ops/s)",
// "client.consecutive_hedge_win_threshold" → "consecutive hedge win
// threshold". An empty path gives "parameter".
func paramLabel(path string) string {
	key := path
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		key = key[i+1:]
	}
	if key == "" {
		return "parameter"
	}
	if name, ok := paramNames[key]; ok {
		return name
	}
	unit := ""
	for _, u := range paramUnits {
		if k, ok := strings.CutSuffix(key, u.suffix); ok && k != "" {
			key, unit = k, u.unit
			break
		}
	}
	label := strings.ReplaceAll(key, "_", " ")
	if unit != "" {
		label += " (" + unit + ")"
	}
	return label
}

func fmtParam(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// sweptPolicy returns the name of the policy whose parameter Param sweeps
// ("policies.NAME.KEY", or "policies.INDEX.KEY" when the points hold that
// one policy only, as hedgesim sweeps a policy's parameter) among ps, and
// KEY; "" when Param is not a policy's parameter or names none of ps.
func sweptPolicy(param string, ps []PolicyResult) (name, key string) {
	rest, ok := strings.CutPrefix(param, "policies.")
	if !ok {
		return "", ""
	}
	elem, key, ok := strings.Cut(rest, ".")
	if !ok || key == "" {
		return "", ""
	}
	for _, p := range ps {
		if p.Policy == elem {
			return elem, key
		}
	}
	if _, err := strconv.Atoi(elem); err == nil && len(ps) == 1 {
		return ps[0].Policy, key
	}
	return "", ""
}

// sweepLabel is how a sweep names policy p at point value v in its
// charts' legends, in sweep.csv's and sweep.json's label, and as hedgesim's
// sweep table does: the swept policy (see sweptPolicy) by its swept value,
// "KEY=VALUE" (e.g. "threshold_ms=50": its name, e.g. "static-100ms",
// states the threshold it was defined with, not the one simulated); any
// other policy by its name.
func sweepLabel(s *Sweep, pt *SweepPoint, p *PolicyResult) string {
	if name, key := sweptPolicy(s.Param, pt.Policies); name != "" && p.Policy == name {
		return key + "=" + strconv.FormatFloat(pt.Value, 'g', -1, 64)
	}
	return p.Policy
}

// sweepLegend is the legend entry of a policy's series: its name, or for
// the swept policy "KEY=FIRST…LAST" over the values drawn.
func sweepLegend(s *Sweep, ser *sweepSeries) string {
	if len(ser.values) == 0 {
		return ser.policy
	}
	for _, pt := range s.Points {
		if name, key := sweptPolicy(s.Param, pt.Policies); name == ser.policy {
			lo, hi := ser.values[0], ser.values[len(ser.values)-1]
			out := key + "=" + fmtParam(lo)
			if hi != lo {
				out += "…" + fmtParam(hi)
			}
			return out
		}
	}
	return ser.policy
}

// sweepGroup says which series of a sweep chart are drawn on top of an
// earlier one (see groupSweepSeries).
type sweepGroup struct {
	ref, rank, size []int  // ref: the group's first series, or -1
	exact           []bool // the series has exactly ref's figures
}

// note is series i's legend note ("= NAME" or "≈ NAME", see legendWithNote).
func (g sweepGroup) note(i int, names []string) string {
	switch {
	case g.ref[i] < 0:
		return ""
	case g.exact[i]:
		return "= " + names[g.ref[i]]
	}
	return "≈ " + names[g.ref[i]]
}

// sweepMarkR is the radius of a sweep chart's markers in points;
// sweepRing how much larger each earlier series of a coinciding group is
// drawn (at most sweepRingMax in all).
const (
	sweepMarkR   = vg.Length(3)
	sweepRing    = vg.Length(1.3)
	sweepRingMax = vg.Length(5)
)

// groupSweepSeries groups the series whose markers would cover each
// other: series j joins the group of an earlier series i when they share
// a parameter value and at every value both have, each of j's points
// (points(f), in data units; NaN for a missing one) lies within
// sweepMarkR of i's on an approxDataW × approxDataH data area. Such
// series are drawn concentrically (first largest) and noted in the
// legend; their values are never moved.
func groupSweepSeries(series []*sweepSeries, x, y *plot.Axis, points func(v float64, f *Figures) [][2]float64) sweepGroup {
	n := len(series)
	g := sweepGroup{ref: make([]int, n), rank: make([]int, n), size: make([]int, n), exact: make([]bool, n)}
	for i := range n {
		g.ref[i], g.size[i] = -1, 1
	}
	if !(x.Max > x.Min) || !(y.Max > y.Min) {
		return g
	}
	page := func(p [2]float64) [2]float64 {
		if !finite(p[0]) || !finite(p[1]) {
			return [2]float64{math.NaN(), math.NaN()}
		}
		return [2]float64{axisPos(x, p[0]) * float64(approxDataW), axisPos(y, p[1]) * float64(approxDataH)}
	}
	byValue := func(ser *sweepSeries) map[float64][][2]float64 {
		m := map[float64][][2]float64{}
		for k, f := range ser.figs {
			m[ser.values[k]] = points(ser.values[k], f)
		}
		return m
	}
	pts := make([]map[float64][][2]float64, n)
	for i, ser := range series {
		pts[i] = byValue(ser)
	}
	r := float64(sweepMarkR)
	coincide := func(i, j int) (near, exact bool) {
		shared := 0
		exact = true
		for v, pi := range pts[i] {
			pj, ok := pts[j][v]
			if !ok {
				continue
			}
			shared++
			for k := range pi {
				a, b := page(pi[k]), page(pj[k])
				if math.IsNaN(a[0]) != math.IsNaN(b[0]) || (!math.IsNaN(a[0]) && math.Hypot(a[0]-b[0], a[1]-b[1]) >= r) {
					return false, false
				}
				exact = exact && sameValue(pi[k][0], pj[k][0]) && sameValue(pi[k][1], pj[k][1])
			}
		}
		return shared > 0, exact
	}
	for i := range n {
		if g.ref[i] >= 0 {
			continue
		}
		members := []int{i}
		for j := i + 1; j < n; j++ {
			if g.ref[j] >= 0 {
				continue
			}
			if near, exact := coincide(i, j); near {
				g.ref[j], g.exact[j] = i, exact
				members = append(members, j)
			}
		}
		for k, m := range members {
			g.rank[m], g.size[m] = k, len(members)
		}
	}
	return g
}

// sweepP99Chart: p99 (solid, circles) and p99.9 (dashed, triangles) against
// the swept parameter, one colour per policy; series that would cover
// each other are drawn concentrically and noted in the legend (see
// groupSweepSeries). A linear latency axis starts at 0 (see
// setLatencyAxis).
func sweepP99Chart(s *Sweep) *chart {
	ch := newChart(chartTitle(s.Scenario, "tail latency vs "+s.Param), paramLabel(s.Param), "latency (ms)")
	ch.p.Add(newGrid(true))
	series := sweepByPolicy(s)
	var xs, lats []float64
	for _, ser := range series {
		xs = append(xs, ser.values...)
		for _, f := range ser.figs {
			lats = append(lats, f.P99, f.P999)
		}
	}
	isLog := setScatterAxes(ch, lats, xs, 0, 1, 1, 0.04, 0.04)
	valid := func(v float64) bool { return finite(v) && (!isLog || v > 0) }
	dashed := []vg.Length{vg.Points(6), vg.Points(3)}
	grp := groupSweepSeries(series, &ch.p.X, &ch.p.Y, func(v float64, f *Figures) [][2]float64 {
		return [][2]float64{{v, f.P99}, {v, f.P999}}
	})
	ch.sweepGroups = &grp
	names := sweepNames(s, series)
	for i, ser := range series {
		c := policyColor(i)
		radius := ringRadius(sweepMarkR, sweepRing, sweepRingMax, grp.rank[i], grp.size[i])
		for _, m := range []struct {
			get    func(*Figures) float64
			dashes []vg.Length
			glyph  draw.GlyphDrawer
		}{
			{func(f *Figures) float64 { return f.P99 }, nil, p99Glyph},
			{func(f *Figures) float64 { return f.P999 }, dashed, p999Glyph},
		} {
			var pts plotter.XYs
			for k, f := range ser.figs {
				if v := m.get(f); valid(v) {
					pts = append(pts, plotter.XY{X: ser.values[k], Y: v})
				}
			}
			if len(pts) == 0 {
				continue
			}
			addLine(ch.p, pts, draw.LineStyle{Color: c, Width: vg.Points(1.5), Dashes: m.dashes})
			ch.p.Add(&plotter.Scatter{XYs: pts, GlyphStyle: draw.GlyphStyle{Color: c, Radius: radius, Shape: m.glyph}})
		}
		ch.addLegend(legendWithNote(names[i], grp.note(i, names)), colorBox{c})
	}
	black := draw.LineStyle{Color: labelGrey, Width: vg.Points(1.5)}
	ch.addLegend("p99", &plotter.Line{LineStyle: black}, glyphThumb{draw.GlyphStyle{Color: labelGrey, Radius: vg.Points(3), Shape: p99Glyph}})
	black.Dashes = dashed
	ch.addLegend("p99.9", &plotter.Line{LineStyle: black}, glyphThumb{draw.GlyphStyle{Color: labelGrey, Radius: vg.Points(3), Shape: p999Glyph}})
	return ch
}

// sweepCostMinSpan is the narrowest RU axis of sweep_cost (RU multiplier
// units): differences below a few thousandths of RU are noise for a cost
// decision, so a sweep whose points (and CIs) lie closer is not zoomed in
// until they look far apart.
const sweepCostMinSpan = 0.02

// sweepNames are the legend names of series (see sweepLegend).
func sweepNames(s *Sweep, series []*sweepSeries) []string {
	out := make([]string, len(series))
	for i, ser := range series {
		out[i] = sweepLegend(s, ser)
	}
	return out
}

// sweepCostChart: p99 against RU multiplier, one curve per policy (in order
// of the swept value), each point labelled with the parameter value, with
// 95% CI whiskers (vertical: p99, horizontal: RU) when the points have
// CIs. The RU axis spans the points and their whiskers, and at least
// sweepCostMinSpan; a linear latency axis starts at 0 (see
// setLatencyAxis). Series whose points would cover each other are drawn
// concentrically, noted in the legend, and only the first of them is
// labelled (see groupSweepSeries).
func sweepCostChart(s *Sweep) *chart {
	ch := newChart(chartTitle(s.Scenario, "p99 vs cost across "+s.Param), "RU multiplier (×)", "p99 latency (ms)")
	ch.p.Add(newGrid(true))
	series := sweepByPolicy(s)
	var rus, lats []float64
	for _, ser := range series {
		for _, f := range ser.figs {
			if finite(f.RUMultiplier) && finite(f.P99) {
				ruCI, p99CI := ciOf(f, "ru_multiplier"), ciOf(f, "p99_ms")
				rus = append(rus, f.RUMultiplier, ruCI[0], ruCI[1])
				lats = append(lats, f.P99, p99CI[0], p99CI[1])
			}
		}
	}
	isLog := setScatterAxes(ch, lats, rus, 1, 2, 0.05, 0.08, 0.12)
	if !ch.noData {
		if span := ch.p.X.Max - ch.p.X.Min; span < sweepCostMinSpan {
			mid := (ch.p.X.Max + ch.p.X.Min) / 2
			setLinearAxis(&ch.p.X, mid-sweepCostMinSpan/2, mid+sweepCostMinSpan/2)
		}
	}
	valid := func(v float64) bool { return finite(v) && (!isLog || v > 0) }
	grp := groupSweepSeries(series, &ch.p.X, &ch.p.Y, func(_ float64, f *Figures) [][2]float64 {
		return [][2]float64{{f.RUMultiplier, f.P99}}
	})
	ch.sweepGroups = &grp
	names := sweepNames(s, series)
	wh := &whiskers{cap: vg.Points(2.5)}
	labels := &pointLabels{markerR: vg.Points(4), style: textStyle(8, labelGrey), labelBg: labelBox}
	for i, ser := range series {
		c := policyColor(i)
		radius := ringRadius(sweepMarkR, sweepRing, sweepRingMax, grp.rank[i], grp.size[i])
		var pts plotter.XYs
		for k, f := range ser.figs {
			if !finite(f.RUMultiplier) || !valid(f.P99) {
				continue
			}
			pts = append(pts, plotter.XY{X: f.RUMultiplier, Y: f.P99})
			owner := -1
			if grp.ref[i] < 0 {
				owner = len(labels.pts)
				labels.pts = append(labels.pts, labelPoint{x: f.RUMultiplier, y: f.P99, text: fmtParam(ser.values[k]), color: c})
			}
			labels.obstacles = append(labels.obstacles, obstacle{x: f.RUMultiplier, y: f.P99, r: radius, owner: owner})
			if ci := ciOf(f, "p99_ms"); valid(ci[0]) && valid(ci[1]) && ci[1] > ci[0] {
				wh.add(f.RUMultiplier, ci[0], f.RUMultiplier, ci[1], c)
				labels.segments = append(labels.segments, [2][2]float64{{f.RUMultiplier, ci[0]}, {f.RUMultiplier, ci[1]}})
			}
			if ci := ciOf(f, "ru_multiplier"); finite(ci[0]) && finite(ci[1]) && ci[1] > ci[0] {
				wh.add(ci[0], f.P99, ci[1], f.P99, c)
				labels.segments = append(labels.segments, [2][2]float64{{ci[0], f.P99}, {ci[1], f.P99}})
			}
		}
		for k := 1; k < len(pts); k++ {
			labels.segments = append(labels.segments, [2][2]float64{{pts[k-1].X, pts[k-1].Y}, {pts[k].X, pts[k].Y}})
		}
		sty := policyLine(i)
		sty.Width = vg.Points(1.5)
		glyph := draw.GlyphStyle{Color: c, Radius: radius, Shape: draw.CircleGlyph{}}
		if len(pts) > 0 {
			addLine(ch.p, pts, sty)
			ch.p.Add(&plotter.Scatter{XYs: pts, GlyphStyle: glyph})
		}
		glyph.Radius = sweepMarkR
		ch.addLegend(legendWithNote(names[i], grp.note(i, names)), &plotter.Line{LineStyle: sty}, glyphThumb{glyph})
	}
	ch.p.Add(wh)
	ch.costWhiskers = wh
	if len(wh.segs) > 0 {
		ch.addLegend("95% CI", whiskerThumb{c: labelGrey, vertical: wh.hasVertical(), horizontal: wh.hasHorizontal()})
	}
	ch.p.Add(labels)
	return ch
}
