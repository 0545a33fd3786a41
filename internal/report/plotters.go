package report

import (
	"image/color"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// dotGroups draws vals[series][group] as dots in data units: group g is
// centred at x = g and its 80% wide slot is split evenly between the
// series, one dot at the centre of each sub-slot. Dots (not bars) so the
// chart reads the same on a log and a linear axis. Non-finite values and
// values outside the Y axis are not drawn. Value labels go above the dots
// on an opaque background so gridlines never strike through them.
type dotGroups struct {
	vals   [][]float64
	colors []color.Color
	labels bool // value labels next to dots, where they fit
	style  text.Style
	radius vg.Length
	// labelBg fills the box behind each value label (nil: no box).
	labelBg color.Color
}

// x returns the centre of series s in group g, in data units.
func (d *dotGroups) x(s, g int) float64 {
	w := 0.8 / float64(len(d.vals))
	return float64(g) - 0.4 + (float64(s)+0.5)*w
}

func (d *dotGroups) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	type dot struct {
		p   vg.Point
		v   float64
		col color.Color
	}
	var dots []dot
	var placed []vg.Rectangle // dots and labels already on the canvas
	for g := range d.groupsN() {
		for s, vs := range d.vals {
			if g >= len(vs) {
				continue
			}
			v := vs[g]
			if !finite(v) || v < plt.Y.Min || v > plt.Y.Max {
				continue
			}
			p := vg.Point{X: trX(d.x(s, g)), Y: trY(v)}
			dots = append(dots, dot{p, v, d.colors[s]})
			r := d.radius
			placed = append(placed, vg.Rectangle{Min: vg.Point{X: p.X - r, Y: p.Y - r}, Max: vg.Point{X: p.X + r, Y: p.Y + r}})
		}
	}
	for _, dt := range dots {
		c.DrawGlyph(draw.GlyphStyle{Color: dt.col, Radius: d.radius, Shape: draw.CircleGlyph{}}, dt.p)
	}
	if !d.labels {
		return
	}
	// Each value label goes above its dot, else below, where it covers no
	// dot and no other label and stays inside the plot; else it is left out.
	for _, dt := range dots {
		txt := fmtMsShort(dt.v)
		w, h := d.style.Width(txt), d.style.Height(txt)
		pad := vg.Points(1)
		gap := d.radius + vg.Points(2)
		for _, y0 := range []vg.Length{dt.p.Y + gap, dt.p.Y - gap - h} {
			r := vg.Rectangle{Min: vg.Point{X: dt.p.X - w/2 - pad, Y: y0 - pad}, Max: vg.Point{X: dt.p.X + w/2 + pad, Y: y0 + h}}
			if r.Min.Y < c.Min.Y || r.Max.Y > c.Max.Y || r.Min.X < c.Min.X || r.Max.X > c.Max.X || overlapsAny(r, placed) {
				continue
			}
			placed = append(placed, r)
			if d.labelBg != nil {
				c.FillPolygon(d.labelBg, []vg.Point{r.Min, {X: r.Min.X, Y: r.Max.Y}, r.Max, {X: r.Max.X, Y: r.Min.Y}})
			}
			sty := d.style
			sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
			c.FillText(sty, vg.Point{X: dt.p.X, Y: y0}, txt)
			break
		}
	}
}

// groupsN returns the number of groups (the longest series).
func (d *dotGroups) groupsN() int {
	n := 0
	for _, vs := range d.vals {
		n = max(n, len(vs))
	}
	return n
}

// episodeShading shades labelled spans of the X axis over the full plot
// height, marks every episode start and end inside the axis with a thin
// vertical line (so adjacent episodes stay apart) and writes each label at
// the top, staggering labels into rows so they do not overlap.
//
// It is added twice: once for the shading and boundaries (labelsOnly
// false, under the grid) and once for the labels (labelsOnly true, above
// the grid).
type episodeShading struct {
	eps        []Episode
	style      text.Style
	labelsOnly bool
}

// addTimeLayers adds a time-axis chart's background layers: the
// episodes' shading and boundaries under the grid, the grid, and the
// episodes' labels above it (eps may be empty: then only the grid).
func (ch *chart) addTimeLayers(eps []Episode) {
	if len(eps) > 0 {
		ch.p.Add(&episodeShading{eps: eps, style: textStyle(9, labelGrey)})
	}
	ch.p.Add(newGrid(true))
	if len(eps) > 0 {
		ch.p.Add(&episodeShading{eps: eps, style: textStyle(9, labelGrey), labelsOnly: true})
	}
}

// labelBox is the translucent white behind episode labels.
var labelBox = color.NRGBA{0xFF, 0xFF, 0xFF, 0xC8}

func (e *episodeShading) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, _ := plt.Transforms(&c)
	type span struct {
		x0, x1 vg.Length
		label  string
	}
	var spans []span
	for _, ep := range e.eps {
		s, t := ep.StartS, ep.EndS
		if !finite(s) || !finite(t) {
			continue
		}
		if t < s {
			s, t = t, s
		}
		s, t = math.Max(s, plt.X.Min), math.Min(t, plt.X.Max)
		if t < s {
			continue
		}
		x0, x1 := trX(s), trX(t)
		if x1-x0 < vg.Points(1) { // keep instantaneous episodes visible
			x1 = x0 + vg.Points(1)
		}
		spans = append(spans, span{x0, x1, ep.Label})
		if !e.labelsOnly {
			c.FillPolygon(shadeGrey, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x0, Y: c.Max.Y}, {X: x1, Y: c.Max.Y}, {X: x1, Y: c.Min.Y}})
		}
	}
	if !e.labelsOnly {
		// Boundaries after all shading so no shade covers one.
		for _, x := range e.boundaries(plt.X.Min, plt.X.Max) {
			cx := trX(x)
			c.StrokeLine2(boundaryStyle, cx, c.Min.Y, cx, c.Max.Y)
		}
		return
	}
	// Labels on a translucent white box so neither gridlines nor
	// boundaries strike through them.
	var rowEnd []vg.Length // right edge of the last label in each row
	lineH := e.style.Height("Mg") + vg.Points(2)
	for _, sp := range spans {
		if sp.label == "" {
			continue
		}
		lx := sp.x0 + vg.Points(3)
		w := e.style.Width(sp.label)
		if lx+w > c.Max.X { // keep the label inside the plot
			lx = vg.Length(math.Max(float64(c.Min.X), float64(c.Max.X-w-vg.Points(2))))
		}
		row := 0
		for row < len(rowEnd) && rowEnd[row] > lx-vg.Points(4) {
			row++
		}
		if row == len(rowEnd) {
			rowEnd = append(rowEnd, 0)
		}
		rowEnd[row] = lx + w
		sty := e.style
		sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
		at := vg.Point{X: lx, Y: c.Max.Y - vg.Points(3) - vg.Length(row)*lineH}
		h, pad := sty.Height(sp.label), vg.Points(1)
		c.FillPolygon(labelBox, []vg.Point{{X: lx - pad, Y: at.Y - h - pad}, {X: lx - pad, Y: at.Y + pad},
			{X: lx + w + pad, Y: at.Y + pad}, {X: lx + w + pad, Y: at.Y - h - pad}})
		c.FillText(sty, at, sp.label)
	}
}

var boundaryStyle = draw.LineStyle{Color: color.RGBA{0x99, 0x99, 0x99, 0xFF}, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}

// boundaries returns the distinct episode starts and ends strictly inside
// (lo, hi), in seconds, ascending.
func (e *episodeShading) boundaries(lo, hi float64) []float64 {
	var out []float64
	for _, ep := range e.eps {
		for _, v := range []float64{ep.StartS, ep.EndS} {
			if finite(v) && v > lo && v < hi {
				out = append(out, v)
			}
		}
	}
	sort.Float64s(out)
	return slices.Compact(out)
}

// labelPoint is a text label attached to a data point: text in color,
// then each of more on a line of its own below it (a group of points drawn
// on one spot gets one label block).
type labelPoint struct {
	x, y  float64
	text  string
	color color.Color
	more  []labelLine
}

// labelLine is one further line of a label.
type labelLine struct {
	text  string
	color color.Color
}

// lines returns every line of the label, first on top.
func (lp labelPoint) lines() []labelLine {
	return append([]labelLine{{lp.text, lp.color}}, lp.more...)
}

// pointLabels places a text label next to each point, greedily choosing the
// first candidate position (right, upper right, lower right, left, above,
// below, then shifted further up/down with a leader line) that stays inside
// the data area and overlaps neither an earlier label, nor an obstacle
// (marker), nor a segment, and whose leader line (drawn from the edge of
// the point's own marker) crosses no other marker, label or leader. If no
// candidate is free, the one inside the data area with the least bad
// overlaps is used (text over text worst, see place). Labels are drawn last, on labelBg when set, so no
// marker hides them. No space is reserved for labels: callers pad the X
// range instead.
type pointLabels struct {
	pts       []labelPoint
	obstacles []obstacle      // markers
	segments  [][2][2]float64 // line segments (data units) labels should not cover
	markerR   vg.Length       // radius of an obstacle whose r is 0
	style     text.Style
	labelBg   color.Color
}

// obstacle is a marker at (x, y) in data units with radius r points (0:
// pointLabels.markerR); owner is the index in pointLabels.pts of the
// label that names it (its leader line may cross it), or -1.
type obstacle struct {
	x, y  float64
	r     vg.Length
	owner int
}

const labelGap = vg.Length(6) // pt between a point and its label

// placedLabel is a label as pointLabels places it: its rectangle on the
// canvas, its leader line (when leader), and score, the weighted count of
// the markers, labels, leaders and segments it (or its leader) overlaps
// or crosses (0 when it found a free place).
type placedLabel struct {
	r        vg.Rectangle
	lines    []labelLine
	leader   bool
	from, to vg.Point
	score    int
}

func (l *pointLabels) Plot(c draw.Canvas, plt *plot.Plot) {
	out := l.place(c, plt)
	for _, d := range out {
		if d.leader {
			c.StrokeLine2(draw.LineStyle{Color: labelGrey, Width: vg.Points(0.5)}, d.from.X, d.from.Y, d.to.X, d.to.Y)
		}
	}
	for _, d := range out {
		if l.labelBg != nil {
			pad := vg.Points(1)
			r := d.r
			c.FillPolygon(l.labelBg, []vg.Point{{X: r.Min.X - pad, Y: r.Min.Y - pad}, {X: r.Min.X - pad, Y: r.Max.Y + pad},
				{X: r.Max.X + pad, Y: r.Max.Y + pad}, {X: r.Max.X + pad, Y: r.Min.Y - pad}})
		}
		lineH := l.style.Height("Mg")
		for k, ln := range d.lines {
			sty := l.style
			sty.Color = ln.color
			sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
			c.FillText(sty, vg.Point{X: d.r.Min.X, Y: d.r.Max.Y - vg.Length(k+1)*lineH}, ln.text)
		}
	}
}

// place chooses every label's place on data canvas c (see pointLabels).
func (l *pointLabels) place(c draw.Canvas, plt *plot.Plot) []placedLabel {
	trX, trY := plt.Transforms(&c)
	var markers []vg.Rectangle
	for _, o := range l.obstacles {
		p := vg.Point{X: trX(o.x), Y: trY(o.y)}
		r := o.r
		if r == 0 {
			r = l.markerR
		}
		markers = append(markers, vg.Rectangle{Min: vg.Point{X: p.X - r, Y: p.Y - r}, Max: vg.Point{X: p.X + r, Y: p.Y + r}})
	}
	var segs [][2]vg.Point
	for _, s := range l.segments {
		segs = append(segs, [2]vg.Point{{X: trX(s[0][0]), Y: trY(s[0][1])}, {X: trX(s[1][0]), Y: trY(s[1][1])}})
	}
	var labels []vg.Rectangle
	var leaders [][2]vg.Point
	var out []placedLabel
	for li, lp := range l.pts {
		// Markers the leader must not cross: all but the label's own.
		var others []vg.Rectangle
		for i, o := range l.obstacles {
			if o.owner != li {
				others = append(others, markers[i])
			}
		}
		p := vg.Point{X: trX(lp.x), Y: trY(lp.y)}
		// The point's own marker: the largest obstacle covering it (a
		// group drawn concentrically counts as one marker).
		own := l.markerR
		for _, m := range markers {
			if m.Min.X <= p.X && p.X <= m.Max.X && m.Min.Y <= p.Y && p.Y <= m.Max.Y {
				own = max(own, (m.Max.X-m.Min.X)/2)
			}
		}
		var w vg.Length
		for _, ln := range lp.lines() {
			w = max(w, l.style.Width(ln.text))
		}
		h := l.style.Height("Mg") * vg.Length(len(lp.lines()))
		g := max(labelGap, own+vg.Points(3)) // clear of the point's own marker
		offs := []vg.Point{
			{X: g, Y: -h / 2},
			{X: g, Y: g / 3},
			{X: g, Y: -h - g/3},
			{X: -g - w, Y: -h / 2},
			{X: -w / 2, Y: g},
			{X: -w / 2, Y: -g - h},
			{X: -g - w, Y: g / 3},
			{X: -g - w, Y: -h - g/3},
		}
		const direct = 8 // candidates before this index need no leader line
		// Then rows further up and down, in columns further out, with a
		// leader line.
		for k := 1; k <= 14; k++ {
			d := vg.Length(k) * (h + vg.Points(2))
			offs = append(offs, vg.Point{X: -w / 2, Y: g + d}, vg.Point{X: -w / 2, Y: -g - h - d})
			for _, col := range []vg.Length{0, 2 * g, 4 * g} {
				offs = append(offs,
					vg.Point{X: g + col, Y: -h/2 + d}, vg.Point{X: g + col, Y: -h/2 - d},
					vg.Point{X: -g - w - col, Y: -h/2 + d}, vg.Point{X: -g - w - col, Y: -h/2 - d})
			}
		}
		best, bestScore := -1, math.MaxInt
		var rects []vg.Rectangle
		var froms, tos []vg.Point
		for i, o := range offs {
			r := vg.Rectangle{Min: vg.Point{X: p.X + o.X, Y: p.Y + o.Y}}
			r.Max = vg.Point{X: r.Min.X + w, Y: r.Min.Y + h}
			from, to := leaderEnds(p, own, r)
			rects, froms, tos = append(rects, r), append(froms, from), append(tos, to)
			if r.Min.X < c.Min.X || r.Max.X > c.Max.X || r.Min.Y < c.Min.Y || r.Max.Y > c.Max.Y {
				continue
			}
			// Weighted: text over text is worst, then text over a
			// marker, then a leader through a label; a leader through a
			// marker or another leader, or text over a line, is least bad.
			score := 100*countOverlaps(r, labels) + 10*countOverlaps(r, markers)
			if crossesAny(r, segs) {
				score++
			}
			if i >= direct {
				score += countCrossed(from, to, others, p) + 5*countCrossed(from, to, labels, p)
				for _, ld := range leaders {
					if segmentsCross(from, to, ld[0], ld[1]) {
						score++
					}
				}
			}
			if score < bestScore {
				best, bestScore = i, score
			}
			if score == 0 {
				break
			}
		}
		if best < 0 {
			best = 0
		}
		labels = append(labels, rects[best])
		if best >= direct {
			leaders = append(leaders, [2]vg.Point{froms[best], tos[best]})
		}
		out = append(out, placedLabel{r: rects[best], lines: lp.lines(), leader: best >= direct, from: froms[best], to: tos[best], score: bestScore})
	}
	return out
}

// leaderEnds returns a leader line from the edge of a marker of radius r
// at p to the point of label rectangle lr nearest to p.
func leaderEnds(p vg.Point, r vg.Length, lr vg.Rectangle) (from, to vg.Point) {
	to = vg.Point{X: max(lr.Min.X, min(lr.Max.X, p.X)), Y: max(lr.Min.Y, min(lr.Max.Y, p.Y))}
	dx, dy := float64(to.X-p.X), float64(to.Y-p.Y)
	d := math.Hypot(dx, dy)
	if d <= float64(r) {
		return to, to
	}
	return vg.Point{X: p.X + vg.Length(dx/d)*r, Y: p.Y + vg.Length(dy/d)*r}, to
}

// segmentsCross reports whether segments ab and cd properly intersect.
func segmentsCross(a, b, c, d vg.Point) bool {
	orient := func(p, q, r vg.Point) float64 {
		return float64((q.X-p.X)*(r.Y-p.Y) - (q.Y-p.Y)*(r.X-p.X))
	}
	d1, d2 := orient(c, d, a), orient(c, d, b)
	d3, d4 := orient(a, b, c), orient(a, b, d)
	return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))
}

// countOverlaps counts the rectangles of rs that r overlaps.
func countOverlaps(r vg.Rectangle, rs []vg.Rectangle) int {
	n := 0
	for _, o := range rs {
		if r.Min.X < o.Max.X && o.Min.X < r.Max.X && r.Min.Y < o.Max.Y && o.Min.Y < r.Max.Y {
			n++
		}
	}
	return n
}

// countCrossed counts the rectangles of rs, other than those holding own,
// that the segment from a to b passes through (sampled).
func countCrossed(a, b vg.Point, rs []vg.Rectangle, own vg.Point) int {
	const n = 32
	count := 0
	for _, r := range rs {
		if own.X >= r.Min.X && own.X <= r.Max.X && own.Y >= r.Min.Y && own.Y <= r.Max.Y {
			continue
		}
		for i := 0; i <= n; i++ {
			t := vg.Length(i) / n
			x, y := a.X+t*(b.X-a.X), a.Y+t*(b.Y-a.Y)
			if x > r.Min.X && x < r.Max.X && y > r.Min.Y && y < r.Max.Y {
				count++
				break
			}
		}
	}
	return count
}

func overlapsAny(r vg.Rectangle, rs []vg.Rectangle) bool {
	for _, o := range rs {
		if r.Min.X < o.Max.X && o.Min.X < r.Max.X && r.Min.Y < o.Max.Y && o.Min.Y < r.Max.Y {
			return true
		}
	}
	return false
}

// crossesAny reports whether any segment passes through r (sampled).
func crossesAny(r vg.Rectangle, segs [][2]vg.Point) bool {
	const n = 32
	for _, s := range segs {
		for i := 0; i <= n; i++ {
			t := vg.Length(i) / n
			x := s[0].X + t*(s[1].X-s[0].X)
			y := s[0].Y + t*(s[1].Y-s[0].Y)
			if x > r.Min.X && x < r.Max.X && y > r.Min.Y && y < r.Max.Y {
				return true
			}
		}
	}
	return false
}

// whisker is one confidence-interval whisker from (x0, y0) to (x1, y1) in
// data units (vertical or horizontal), drawn with end caps.
type whisker struct {
	x0, y0, x1, y1 float64
	color          color.Color
	// openLow: the interval reaches below the axis (a latency CI reaching
	// 0 on a log axis); the whisker runs to the axis without a cap there.
	openLow bool
}

// whiskers draws CI whiskers: a thin line with a perpendicular cap of
// length 2×cap at each end.
type whiskers struct {
	segs []whisker
	cap  vg.Length
}

func (w *whiskers) add(x0, y0, x1, y1 float64, c color.Color) {
	w.segs = append(w.segs, whisker{x0: x0, y0: y0, x1: x1, y1: y1, color: c})
}

// addOpenLow adds a vertical whisker at x from the bottom of the axis
// (the interval reaches below it) up to y1, capped at the top only.
func (w *whiskers) addOpenLow(x, axisMin, y1 float64, c color.Color) {
	w.segs = append(w.segs, whisker{x0: x, y0: axisMin, x1: x, y1: y1, color: c, openLow: true})
}

func (w *whiskers) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for _, s := range w.segs {
		sty := draw.LineStyle{Color: s.color, Width: vg.Points(1)}
		a := vg.Point{X: trX(s.x0), Y: trY(s.y0)}
		b := vg.Point{X: trX(s.x1), Y: trY(s.y1)}
		c.StrokeLine2(sty, a.X, a.Y, b.X, b.Y)
		for k, e := range []vg.Point{a, b} {
			if k == 0 && s.openLow {
				continue
			}
			if s.x0 == s.x1 { // vertical whisker: horizontal caps
				c.StrokeLine2(sty, e.X-w.cap, e.Y, e.X+w.cap, e.Y)
			} else {
				c.StrokeLine2(sty, e.X, e.Y-w.cap, e.X, e.Y+w.cap)
			}
		}
	}
}

// hasVertical reports whether any whisker is vertical (a latency CI).
func (w *whiskers) hasVertical() bool {
	for _, s := range w.segs {
		if s.x0 == s.x1 {
			return true
		}
	}
	return false
}

// hasHorizontal reports whether any whisker is horizontal (an RU CI).
func (w *whiskers) hasHorizontal() bool {
	for _, s := range w.segs {
		if s.x0 != s.x1 {
			return true
		}
	}
	return false
}

// whiskerThumb is a legend thumbnail: a whisker with end caps in each
// orientation the chart draws (vertical, horizontal, or both as a cross),
// so the legend icon matches the whiskers.
type whiskerThumb struct {
	c                    color.Color
	vertical, horizontal bool
}

func (t whiskerThumb) Thumbnail(c *draw.Canvas) {
	sty := draw.LineStyle{Color: t.c, Width: vg.Points(1)}
	m := c.Center()
	h := (c.Max.Y - c.Min.Y) / 2
	cp := vg.Points(3)
	if t.vertical || !t.horizontal {
		c.StrokeLine2(sty, m.X, m.Y-h, m.X, m.Y+h)
		c.StrokeLine2(sty, m.X-cp, m.Y-h, m.X+cp, m.Y-h)
		c.StrokeLine2(sty, m.X-cp, m.Y+h, m.X+cp, m.Y+h)
	}
	if t.horizontal {
		c.StrokeLine2(sty, m.X-h, m.Y, m.X+h, m.Y)
		c.StrokeLine2(sty, m.X-h, m.Y-cp, m.X-h, m.Y+cp)
		c.StrokeLine2(sty, m.X+h, m.Y-cp, m.X+h, m.Y+cp)
	}
}
