package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"regexp"
	"strconv"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart geometry. PNG files are ChartWidth x ChartHeight at PNGDPI dots
// per inch (1200x750 px); SVG files are ChartWidth x ChartHeight in points
// (576x360 pt).
const (
	// ChartWidth is the width of every chart (8 inches).
	ChartWidth = 8 * vg.Inch
	// ChartHeight is the height of every chart (5 inches).
	ChartHeight = 5 * vg.Inch
	// PNGDPI is the resolution of PNG charts in dots per inch.
	PNGDPI = 150
)

const (
	outerMargin       = vg.Length(8)  // pt, around the whole image
	legendGap         = vg.Length(10) // pt, between plot and legend strip
	legendMaxRune     = 28            // legend entries longer than this are truncated
	pointLabelMaxRune = 20            // point labels longer than this are truncated
	lineWidth         = vg.Length(1.8)
)

// palette holds 12 distinct colours, so that up to 12 policies never
// share one: the Okabe–Ito colour-blind-safe palette (yellow replaced by a
// darker olive so it reads on white) followed by four from Paul Tol's
// palettes (wine, indigo, brown, light grey) that stay apart from those
// eight (TestPaletteDistinct). Policy i uses palette[i%len]; with more
// than 12 policies colours repeat, but colour + dash pattern (see dashes)
// stays unique up to 12 policies per chart and far beyond.
var palette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x33, 0x33, 0x33, 0xFF}, // near black
	{0x99, 0x88, 0x22, 0xFF}, // olive
	{0x88, 0x22, 0x55, 0xFF}, // wine
	{0x33, 0x22, 0x88, 0xFF}, // indigo
	{0x8C, 0x51, 0x0A, 0xFF}, // brown
	{0xA8, 0xA8, 0xA8, 0xFF}, // light grey
}

// dashes are the dash patterns (in points); policy i uses dashes[i%len].
// With 12 colours and 7 patterns colour+dash combinations repeat only
// after 84 policies.
var dashes = [][]vg.Length{
	nil,
	{vg.Points(7), vg.Points(3)},
	{vg.Points(2), vg.Points(2)},
	{vg.Points(9), vg.Points(3), vg.Points(2), vg.Points(3)},
	{vg.Points(14), vg.Points(4)},
	{vg.Points(4), vg.Points(2), vg.Points(1), vg.Points(2), vg.Points(1), vg.Points(2)},
	{vg.Points(1), vg.Points(3)},
}

var (
	gridMajor  = color.RGBA{0xD8, 0xD8, 0xD8, 0xFF}
	shadeGrey  = color.RGBA{0xE4, 0xE4, 0xE4, 0xFF}
	labelGrey  = color.RGBA{0x55, 0x55, 0x55, 0xFF}
	noDataGrey = color.RGBA{0x88, 0x88, 0x88, 0xFF}
)

func policyColor(i int) color.Color { return palette[i%len(palette)] }

func policyLine(i int) draw.LineStyle {
	return draw.LineStyle{Color: policyColor(i), Width: lineWidth, Dashes: dashes[i%len(dashes)]}
}

// sansFont is Liberation Sans (embedded in gonum/plot, so no system fonts
// are needed and output does not depend on the machine).
var sansFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

func fontOf(size vg.Length) font.Font { return font.From(sansFont, size) }

func textStyle(size vg.Length, c color.Color) text.Style {
	return text.Style{Color: c, Font: fontOf(size), Handler: plot.DefaultTextHandler}
}

// legendEntry is one line of the legend drawn in the strip right of the plot.
type legendEntry struct {
	text   string
	thumbs []plot.Thumbnailer
}

// drawnSeries is one line of a time chart as drawn: its segments (every
// point at its value), the line it coincides with (ref, -1 for none; see
// coincidence) and its markers.
type drawnSeries struct {
	segs       []plotter.XYs
	ref        int
	everywhere bool
	marks      plotter.XYs
	glyph      draw.GlyphDrawer
}

// chart is a plot plus a legend drawn outside the data area.
//
// Axis titles are drawn by drawChart rather than by gonum/plot: gonum pads
// the plot for an axis title placed at the linear midpoint of the range,
// which on a log axis is near one end and wastes a large margin.
type chart struct {
	p              *plot.Plot
	xLabel, yLabel string
	legend         []legendEntry
	noData         bool
	// dots is the percentiles chart's dot plot (nil for other charts),
	// kept so tests can inspect what is drawn.
	dots *dotGroups
	// cost holds the cost chart's markers as placed (nil otherwise);
	// costWhiskers its CI whiskers.
	cost         []costMark
	costWhiskers *whiskers
	costLabels   *pointLabels
	// series are the lines of the time charts as drawn, by line (nil for
	// other charts), so tests can inspect them.
	series []drawnSeries
	// sweepGroups are a sweep chart's coinciding series (nil otherwise).
	sweepGroups *sweepGroup
	// legendSizer, when set, are texts the legend strip is made wide
	// enough for (with a line thumbnail), so charts of one family keep
	// the same data-area width whatever their own legend holds.
	legendSizer []string
	// yReserve is the minimum distance from the left of the plot area to
	// the data area (room for Y tick labels), so charts of one family
	// line up whatever their tick labels.
	yReserve vg.Length
}

func (c *chart) addLegend(text string, thumbs ...plot.Thumbnailer) {
	c.legend = append(c.legend, legendEntry{truncate(text, legendMaxRune), thumbs})
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// newChart returns a chart with readable fonts and no plotters.
func newChart(title, xLabel, yLabel string) *chart {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = fontOf(14)
	p.Title.Padding = vg.Points(8)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Tick.Label.Font = fontOf(10)
		a.Padding = 0
	}
	return &chart{p: p, xLabel: xLabel, yLabel: yLabel}
}

// newGrid returns a light grid at the major (labelled) ticks. It is added
// explicitly by each chart so that it can go above background shading.
func newGrid(vertical bool) *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = gridMajor
	g.Horizontal.Color = gridMajor
	g.Vertical.Width = vg.Points(0.5)
	g.Horizontal.Width = vg.Points(0.5)
	if !vertical {
		g.Vertical.Color = nil
	}
	return g
}

// renderChart builds a chart and renders it as png or svg. Panics from the
// plotting library are turned into errors.
func renderChart(build func() *chart, format string) (data []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			data, err = nil, fmt.Errorf("plot panicked: %v", r)
		}
	}()
	ch := build()
	var cw vg.CanvasWriterTo
	switch format {
	case "png":
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(ChartWidth, ChartHeight), vgimg.UseDPI(PNGDPI))}
	case "svg":
		cw = vgsvg.New(ChartWidth, ChartHeight)
	default:
		return nil, fmt.Errorf("unsupported chart format %q", format)
	}
	drawChart(draw.New(cw), ch)
	var buf bytes.Buffer
	if _, err := cw.WriteTo(&buf); err != nil {
		return nil, err
	}
	if format == "svg" {
		return compactSVG(buf.Bytes()), nil
	}
	return buf.Bytes(), nil
}

// svgFontFamily is the font list every chart's text uses. Fonts are not
// embedded (vgsvg.EmbedFonts would add ~550 kB per file). Text was laid
// out with Liberation Sans metrics; Arial is metric-compatible, so it (then
// any sans-serif) is the fallback for viewers without Liberation Sans.
const svgFontFamily = "'Liberation Sans',Arial,Helvetica,sans-serif"

var (
	// svgTextFont is the per-text font declaration vgsvg writes; the
	// family is stated once on the root element instead, and the other
	// three are the CSS defaults.
	svgTextFont = []byte("font-family:Liberation Sans;font-variant:normal;font-weight:normal;font-style:normal;")
	svgRoot     = []byte("<svg ")
	// svgCoords matches the attributes that hold coordinates in points.
	svgCoords = regexp.MustCompile(`\b(d|x|y)="[^"]*"`)
	svgNumber = regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?(e-?[0-9]+)?`)
)

// compactSVG makes vgsvg's output smaller without changing what it shows:
// the font family is declared once on the root element rather than on
// every text, and coordinates (path data, text positions) are rounded to
// 0.1 pt (1/5 px at 150 DPI), from vgsvg's five significant digits. The
// output is a function of the input alone (no ids, no timestamps), so the
// same chart always gives the same bytes, and a figure that moves by less
// than 0.05 pt leaves the file unchanged.
func compactSVG(b []byte) []byte {
	b = bytes.ReplaceAll(b, svgTextFont, nil)
	b = bytes.Replace(b, svgRoot, []byte("<svg font-family=\""+svgFontFamily+"\" "), 1)
	return svgCoords.ReplaceAllFunc(b, func(attr []byte) []byte {
		return svgNumber.ReplaceAllFunc(attr, func(num []byte) []byte {
			v, err := strconv.ParseFloat(string(num), 64)
			if err != nil {
				return num
			}
			r := math.Round(v*10) / 10
			if r == 0 {
				r = 0 // no "-0"
			}
			return strconv.AppendFloat(nil, r, 'f', -1, 64)
		})
	})
}

// chartLayout is where drawChart puts a chart's parts on canvas c (c
// already inside the outer margin): the plot area handed to gonum/plot,
// the data area inside it and the legend (zero value when there is none).
type chartLayout struct {
	plotArea, data draw.Canvas
	legend         plot.Legend
	hasLegend      bool
}

// layoutChart computes the layout of ch on c (see chartLayout).
func layoutChart(c draw.Canvas, ch *chart) chartLayout {
	var l chartLayout
	l.plotArea = c
	if len(ch.legend) > 0 || len(ch.legendSizer) > 0 {
		leg := plot.NewLegend()
		leg.Top, leg.Left = true, true
		leg.TextStyle.Font = fontOf(10)
		leg.ThumbnailWidth = vg.Points(30)
		leg.Padding = vg.Points(4)
		leg.YPosition = draw.PosCenter
		for _, e := range ch.legend {
			leg.Add(e.text, e.thumbs...)
		}
		w := leg.Rectangle(c).Size().X + vg.Points(4)
		if len(ch.legendSizer) > 0 {
			sizer := plot.NewLegend()
			sizer.TextStyle, sizer.ThumbnailWidth, sizer.Padding = leg.TextStyle, leg.ThumbnailWidth, leg.Padding
			for _, t := range ch.legendSizer {
				sizer.Add(t, &plotter.Line{})
			}
			w = max(w, sizer.Rectangle(c).Size().X+vg.Points(4))
		}
		l.plotArea = draw.Crop(l.plotArea, 0, -(w + legendGap), 0, 0)
		l.legend, l.hasLegend = leg, len(ch.legend) > 0
	}
	labelH := axisTitleStyle.Height("Mg")
	if ch.xLabel != "" {
		l.plotArea = draw.Crop(l.plotArea, 0, 0, labelH+axisTitlePad, 0)
	}
	if ch.yLabel != "" {
		l.plotArea = draw.Crop(l.plotArea, labelH+axisTitlePad, 0, 0, 0)
	}
	if ch.yReserve > 0 {
		if w := ch.p.DataCanvas(l.plotArea).Min.X - l.plotArea.Min.X; w < ch.yReserve {
			l.plotArea = draw.Crop(l.plotArea, ch.yReserve-w, 0, 0, 0)
		}
	}
	l.data = ch.p.DataCanvas(l.plotArea)
	return l
}

var axisTitleStyle = textStyle(12, color.Black)

const axisTitlePad = vg.Length(4)

func drawChart(c draw.Canvas, ch *chart) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, outerMargin, -outerMargin, outerMargin, -outerMargin)
	l := layoutChart(c, ch)
	ch.p.Draw(l.plotArea)
	dataC := l.data
	if ch.xLabel != "" {
		sty := axisTitleStyle
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
		c.FillText(sty, vg.Point{X: dataC.Center().X, Y: c.Min.Y + axisTitleStyle.FontExtents().Descent}, ch.xLabel)
	}
	if ch.yLabel != "" {
		sty := axisTitleStyle
		sty.Rotation = math.Pi / 2
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		c.FillText(sty, vg.Point{X: c.Min.X, Y: dataC.Center().Y}, ch.yLabel)
	}
	if l.hasLegend {
		legC := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: l.plotArea.Max.X + legendGap, Y: c.Min.Y},
			Max: vg.Point{X: c.Max.X, Y: dataC.Max.Y},
		}}
		l.legend.Draw(legC)
	}
	if ch.noData {
		sty := textStyle(16, noDataGrey)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
		dataC.FillText(sty, dataC.Center(), "no data")
	}
}

// finite reports whether v is neither NaN nor ±Inf.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// decade returns m×10^k exactly rounded.
func decade(m, k int) float64 {
	v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", m, k), 64)
	return v
}

// fineSteps are the mantissas a log axis may end at: finer than 1/2/5 so
// that the axis fits the data (a 2004 ms maximum ends the axis at 2500,
// not 5000).
var fineSteps = []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8}

// fineDown returns the largest fineSteps×10^k ≤ v (v > 0).
func fineDown(v float64) float64 {
	k := int(math.Floor(math.Log10(v)))
	for i := len(fineSteps) - 1; i >= 0; i-- {
		if d := fineSteps[i] * math.Pow10(k); d <= v*(1+1e-12) {
			return roundSig(d)
		}
	}
	return roundSig(8 * math.Pow10(k-1))
}

// fineUp returns the smallest fineSteps×10^k ≥ v (v > 0).
func fineUp(v float64) float64 {
	k := int(math.Floor(math.Log10(v)))
	for _, m := range fineSteps {
		if d := m * math.Pow10(k); d >= v*(1-1e-12) {
			return roundSig(d)
		}
	}
	return roundSig(math.Pow10(k + 1))
}

// roundSig rounds v to 6 significant digits (removes 1.2e-7 style float
// noise from m×10^k products).
func roundSig(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return r
}

// logTicks labels decades (and 2, 5 multiples when the range spans at most
// two decades); unlabelled minor ticks at the other integer multiples. The
// lowest tick is labelled too when the next label is at least 1.5 times
// larger and a tenth of the axis away, so the decade the lowest data sits in always has a label (a
// 2.5 ms baseline on an axis from 1.5 ms gets "2"). All labels of one axis use one number format: plain decimals
// ("0.001", "20000") when every label fits in 10^-3 .. 10^5, else m e k
// ("1e-6", "1e0"). It never panics: an invalid range yields no ticks.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || !finite(lo) || !finite(hi) {
		return nil
	}
	k0 := int(math.Floor(math.Log10(lo)))
	k1 := int(math.Ceil(math.Log10(hi)))
	span := math.Log10(hi / lo)
	step := 1 // label every step-th decade
	if span > 8 {
		step = 2
	}
	type mk struct{ m, k int }
	var ticks []plot.Tick
	var labelled []int // indexes into ticks
	var mks []mk
	for k := k0; k <= k1; k++ {
		for m := 1; m <= 9; m++ {
			v := decade(m, k)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			label := false
			switch {
			case span < 1:
				label = true
			case span <= 2.01:
				label = m == 1 || m == 2 || m == 5
			default:
				label = m == 1 && ((k%step)+step)%step == 0
			}
			if !label && span > 6 && len(ticks) > 0 {
				continue // minor ticks would be a solid smear
			}
			if label {
				labelled = append(labelled, len(ticks))
			}
			ticks = append(ticks, plot.Tick{Value: v})
			mks = append(mks, mk{m, k})
		}
	}
	// Label the lowest tick when it is far enough below the first label.
	if len(ticks) > 0 && (len(labelled) == 0 || labelled[0] != 0) {
		if len(labelled) == 0 || (ticks[labelled[0]].Value >= 1.5*ticks[0].Value &&
			math.Log10(ticks[labelled[0]].Value/ticks[0].Value) >= 0.1*span) {
			labelled = append([]int{0}, labelled...)
		}
	}
	plain := true
	for _, i := range labelled {
		if k := mks[i].k; k < -3 || k > 5 {
			plain = false
		}
	}
	for _, i := range labelled {
		ticks[i].Label = fmtTick(mks[i].m, mks[i].k, plain)
	}
	return ticks
}

// fmtTick formats m×10^k as a plain decimal or as "me k".
func fmtTick(m, k int, plain bool) string {
	if plain {
		return strconv.FormatFloat(decade(m, k), 'f', -1, 64)
	}
	return fmt.Sprintf("%de%d", m, k)
}

// setLogAxis makes a a log axis spanning [fineDown(lo), fineUp(hi)].
func setLogAxis(a *plot.Axis, lo, hi float64) {
	a.Scale = plot.LogScale{}
	a.Tick.Marker = logTicks{}
	a.Min, a.Max = fineDown(lo), fineUp(hi)
	if a.Max <= a.Min {
		a.Max = fineUp(a.Min * 1.01)
	}
}

// setLinearAxis sets a linear axis range; a degenerate range is widened.
func setLinearAxis(a *plot.Axis, lo, hi float64) {
	if !(hi > lo) {
		d := math.Abs(lo) * 0.1
		if d == 0 {
			d = 1
		}
		lo, hi = lo-d, hi+d
	}
	a.Scale = plot.LinearScale{}
	a.Tick.Marker = linTicks{}
	a.Min, a.Max = lo, hi
}

// linTicks labels multiples of a 1/2/2.5/5×10^k step, aiming at five to eight
// labels, with unlabelled minor ticks in between. It never panics.
type linTicks struct{}

func (linTicks) Ticks(lo, hi float64) []plot.Tick {
	if !finite(lo) || !finite(hi) || !(hi > lo) {
		return nil
	}
	raw := (hi - lo) / 8
	k := int(math.Floor(math.Log10(raw)))
	mant, minor := 10.0, 5
	for _, c := range []struct {
		m float64
		n int
	}{{1, 5}, {2, 4}, {2.5, 5}, {5, 5}} {
		if c.m*math.Pow10(k) >= raw*(1-1e-9) {
			mant, minor = c.m, c.n
			break
		}
	}
	if mant == 10 {
		mant, k = 1, k+1
	}
	step := mant * math.Pow10(k)
	dec := max(0, -k)
	if mant == 2.5 {
		dec = max(0, 1-k)
	}
	minorStep := step / float64(minor)
	var ticks []plot.Tick
	i0 := int64(math.Ceil(lo/minorStep - 1e-9))
	i1 := int64(math.Floor(hi/minorStep + 1e-9))
	if i1-i0 > 1000 { // cannot happen for sane ranges; stay cheap regardless
		return nil
	}
	for i := i0; i <= i1; i++ {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(i)*minorStep, 'f', dec+2, 64), 64)
		t := plot.Tick{Value: v}
		if i%int64(minor) == 0 {
			t.Label = strconv.FormatFloat(v, 'f', dec, 64)
			if t.Label == "-0" {
				t.Label = "0"
			}
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// posRange returns min and max of the positive finite values.
func posRange(vs []float64) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if v > 0 && finite(v) {
			lo, hi, ok = math.Min(lo, v), math.Max(hi, v), true
		}
	}
	return lo, hi, ok
}

// finiteRange returns min and max of the finite values.
func finiteRange(vs []float64) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if finite(v) {
			lo, hi, ok = math.Min(lo, v), math.Max(hi, v), true
		}
	}
	return lo, hi, ok
}

// setScatterAxes sets up a chart of latencies (Y, see setLatencyAxis)
// against a linear quantity xs: X spans the finite xs with padLo/padHi of
// their span as margins (a zero span counts as max(10% of the value,
// minSpan)); without data both fall back and the chart is marked empty, X
// showing [emptyLo, emptyHi]. It returns whether Y is logarithmic.
func setScatterAxes(ch *chart, lats, xs []float64, emptyLo, emptyHi, minSpan, padLo, padHi float64) (isLog bool) {
	isLog, ok := setLatencyAxis(&ch.p.Y, lats, 1.1)
	lo, hi, xok := finiteRange(xs)
	if !ok || !xok {
		setLinearAxis(&ch.p.X, emptyLo, emptyHi)
		ch.noData = true
		return isLog
	}
	span := hi - lo
	if span == 0 {
		span = math.Max(0.1*math.Abs(hi), minSpan)
	}
	setLinearAxis(&ch.p.X, lo-padLo*span, hi+padHi*span)
	return isLog
}

// setLatencyAxis chooses the latency (ms) axis for values vs: log when the
// positive values span more than one decade (equal ratios are then equal
// distances), else linear from 0, so that a point's height is proportional
// to its latency and a 1.4% difference looks like 1.4% (an axis zoomed to
// 102–106 ms made it look steep; the tables give the exact figures).
// headroom multiplies the top of the range. It returns whether the axis is
// logarithmic (values ≤ 0 must then not be drawn) and whether vs holds a
// positive value.
func setLatencyAxis(a *plot.Axis, vs []float64, headroom float64) (isLog, ok bool) {
	lo, hi, ok := posRange(vs)
	if !ok {
		setLinearAxis(a, 0, 1)
		return false, false
	}
	if hi/lo > 10 {
		setLogAxis(a, lo/headroom, hi*headroom)
		return true, true
	}
	setLinearAxis(a, 0, hi*headroom)
	return false, true
}

// xys converts points to plotter.XYs, keeping only those valid on the axes
// (finite; positive when the axis is logarithmic).
func xys(pts []Point, logX, logY bool) plotter.XYs {
	out := make(plotter.XYs, 0, len(pts))
	for _, p := range pts {
		if !finite(p.X) || !finite(p.Y) || (logX && p.X <= 0) || (logY && p.Y <= 0) {
			continue
		}
		out = append(out, plotter.XY{X: p.X, Y: p.Y})
	}
	return out
}

// addLine adds a line (and, for a single point, a marker so it is visible).
func addLine(p *plot.Plot, pts plotter.XYs, sty draw.LineStyle) *plotter.Line {
	l := &plotter.Line{XYs: pts, LineStyle: sty}
	if len(pts) > 0 {
		p.Add(l)
	}
	if len(pts) == 1 {
		s := &plotter.Scatter{XYs: pts, GlyphStyle: draw.GlyphStyle{Color: sty.Color, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}}
		p.Add(s)
	}
	return l
}

// colorBox is a legend thumbnail: a filled rectangle.
type colorBox struct{ c color.Color }

func (b colorBox) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	inset := (r.Max.X - r.Min.X - (r.Max.Y - r.Min.Y)) / 4
	r.Min.X += inset
	r.Max.X -= inset
	c.FillPolygon(b.c, []vg.Point{r.Min, {X: r.Min.X, Y: r.Max.Y}, r.Max, {X: r.Max.X, Y: r.Min.Y}})
}

// glyphThumb is a legend thumbnail: a single glyph.
type glyphThumb struct{ sty draw.GlyphStyle }

func (g glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyph(g.sty, c.Center()) }
