package report

import (
	"image/color"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// HedgeUnit is one point of the hedge-unit chart (spec §17 Q9: what a feed
// operation hedges): a policy's feed operations (queries, else ReadMany
// calls) with one hedge unit — "page" (each page its own race),
// "operation" (the whole operation, a second copy after the threshold) or
// "none" (no hedging; one point, Policy names the policy or run it came
// from). P99 is the feed operations' p99 latency (ms) and RU their run's
// operations' RU multiplier; each CI is a 95% interval across replications
// (NaN ends with one replication). Run.HedgeUnits holds them; nil gives no
// chart.
type HedgeUnit struct {
	Policy, Unit string
	P99, RU      float64
	P99CI, RUCI  [2]float64
	// Ops is the feed operations measured, over every replication.
	Ops int64
}

// hedgeUnitGlyph is each unit's marker: a ring per page, a square per
// operation, a cross for none (outlines, so markers on one spot stay
// visible drawn concentrically).
var hedgeUnitGlyph = map[string]draw.GlyphDrawer{"page": draw.RingGlyph{}, "operation": draw.SquareGlyph{}, "none": draw.CrossGlyph{}}

// hedgeUnitOrder is the units in legend order; unitShort their point
// labels.
var (
	hedgeUnitOrder = []string{"none", "page", "operation"}
	unitShort      = map[string]string{"page": "page", "operation": "whole op."}
)

// hedgeUnitsChart: the p99 of the feed operations against the RU
// multiplier, one marker per policy and hedge unit (ring: page, square:
// whole operation, cross: none), one colour per policy (black for none),
// a policy's two units joined by a thin line, with 95% CI whiskers when
// there are replications. Markers of one spot are drawn concentrically,
// the first policy largest; every marker is at its true values.
func hedgeUnitsChart(r *Run) *chart {
	ch := newChart(chartTitle(r.Scenario, "Q9: tail and cost per hedge unit"), "RU multiplier (×)", "p99 of feed operations (ms)")
	ch.p.Add(newGrid(true))
	policyIdx := map[string]int{}
	for i, p := range r.Policies {
		policyIdx[p.Policy] = i
	}
	var lats, rus []float64
	for _, u := range r.HedgeUnits {
		lats = append(lats, u.P99, u.P99CI[0], u.P99CI[1])
		rus = append(rus, u.RU, u.RUCI[0], u.RUCI[1])
	}
	isLog := setScatterAxes(ch, lats, rus, 1, 2, 0.05, 0.15, 0.3)
	valid := func(v float64) bool { return finite(v) && (!isLog || v > 0) }
	colorOf := func(u HedgeUnit) color.Color {
		if i, ok := policyIdx[u.Policy]; ok && u.Unit != "none" {
			return policyColor(i)
		}
		return color.Black
	}
	n := len(r.Policies)
	radius := func(u HedgeUnit) vg.Length {
		i, ok := policyIdx[u.Policy]
		if !ok || u.Unit == "none" {
			i = n
		}
		return vg.Points(4 + 1.5*float64(n-i))
	}
	wh := &whiskers{cap: vg.Points(3)}
	labels := &pointLabels{markerR: vg.Points(6), style: textStyle(10, color.Black), labelBg: labelBox}
	byPolicy := map[string][]HedgeUnit{}
	for _, u := range r.HedgeUnits {
		if !valid(u.P99) || !finite(u.RU) {
			continue
		}
		c := colorOf(u)
		if valid(u.P99CI[0]) && valid(u.P99CI[1]) && u.P99CI[1] > u.P99CI[0] {
			wh.add(u.RU, u.P99CI[0], u.RU, u.P99CI[1], c)
			labels.segments = append(labels.segments, [2][2]float64{{u.RU, u.P99CI[0]}, {u.RU, u.P99CI[1]}})
		}
		if finite(u.RUCI[0]) && finite(u.RUCI[1]) && u.RUCI[1] > u.RUCI[0] {
			wh.add(u.RUCI[0], u.P99, u.RUCI[1], u.P99, c)
			labels.segments = append(labels.segments, [2][2]float64{{u.RUCI[0], u.P99}, {u.RUCI[1], u.P99}})
		}
		labels.obstacles = append(labels.obstacles, obstacle{u.RU, u.P99, radius(u), len(labels.pts)})
		name := truncate(u.Policy, pointLabelMaxRune) + " · " + unitShort[u.Unit]
		if u.Unit == "none" {
			name = "none (" + truncate(u.Policy, pointLabelMaxRune) + ")"
		}
		labels.pts = append(labels.pts, labelPoint{x: u.RU, y: u.P99, text: name, color: c})
		if u.Unit != "none" {
			byPolicy[u.Policy] = append(byPolicy[u.Policy], u)
		}
	}
	for _, p := range r.Policies {
		if us := byPolicy[p.Policy]; len(us) == 2 {
			sty := draw.LineStyle{Color: colorOf(us[0]), Width: vg.Points(0.75), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}
			addLine(ch.p, plotter.XYs{{X: us[0].RU, Y: us[0].P99}, {X: us[1].RU, Y: us[1].P99}}, sty)
			labels.segments = append(labels.segments, [2][2]float64{{us[0].RU, us[0].P99}, {us[1].RU, us[1].P99}})
		}
	}
	ch.p.Add(wh)
	ch.p.Add(&unitMarkers{units: r.HedgeUnits, color: colorOf, radius: radius, valid: valid})
	ch.p.Add(labels)
	for _, unit := range hedgeUnitOrder {
		text := map[string]string{"none": "no hedging", "page": "unit: page", "operation": "unit: whole operation"}[unit]
		if unit == r.HedgeUnitConfigured {
			text += " (the scenario's)"
		}
		ch.addLegend(text, glyphThumb{draw.GlyphStyle{Color: color.Black, Radius: vg.Points(4), Shape: hedgeUnitGlyph[unit]}})
	}
	if len(wh.segs) > 0 {
		ch.addLegend("95% CI", whiskerThumb{c: color.Black, vertical: wh.hasVertical(), horizontal: wh.hasHorizontal()})
	}
	for i, p := range r.Policies {
		if len(byPolicy[p.Policy]) > 0 {
			ch.addLegend(p.Policy, colorBox{policyColor(i)})
		}
	}
	return ch
}

// unitMarkers draws each hedge unit's marker at its true values.
type unitMarkers struct {
	units  []HedgeUnit
	color  func(HedgeUnit) color.Color
	radius func(HedgeUnit) vg.Length
	valid  func(float64) bool
}

func (m *unitMarkers) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for _, u := range m.units {
		if !m.valid(u.P99) || !finite(u.RU) {
			continue
		}
		c.DrawGlyph(draw.GlyphStyle{Color: m.color(u), Radius: m.radius(u), Shape: hedgeUnitGlyph[u.Unit]}, vg.Point{X: trX(u.RU), Y: trY(u.P99)})
	}
}

// hedgeUnitsCSV renders hedge_units.csv, the hedge-unit chart's values:
// policy, unit, ops, p99_ms and ru_multiplier with their 95% intervals
// (empty with one replication).
func hedgeUnitsCSV(r *Run) ([]byte, error) {
	rows := [][]string{{"policy", "unit", "ops", "p99_ms", "p99_ms_ci95_low", "p99_ms_ci95_high", "ru_multiplier", "ru_multiplier_ci95_low", "ru_multiplier_ci95_high"}}
	for _, u := range r.HedgeUnits {
		rows = append(rows, []string{u.Policy, u.Unit, strconv.FormatInt(u.Ops, 10), fmtMs(u.P99), fmtMs(u.P99CI[0]), fmtMs(u.P99CI[1]),
			fmtNum(u.RU, precRate), fmtNum(u.RUCI[0], precRate), fmtNum(u.RUCI[1], precRate)})
	}
	return writeCSV(rows)
}
