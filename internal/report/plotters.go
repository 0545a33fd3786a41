package report

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// groupedBars draws vals[series][group] as bars in data units: group g is
// centred at x = g and occupies 80% of the unit width. Bars start at the
// bottom of the Y axis (so log axes work). Non-finite values and values
// ≤ the axis minimum on a log axis are not drawn.
type groupedBars struct {
	vals   [][]float64
	colors []color.Color
	labels bool // value labels above bars, when they fit
	style  text.Style
}

func (b *groupedBars) geometry(s, g int) (x0, x1 float64) {
	n := float64(len(b.vals))
	w := 0.8 / n
	x0 = float64(g) - 0.4 + float64(s)*w + 0.06*w
	return x0, x0 + 0.88*w
}

func (b *groupedBars) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	_, isLog := plt.Y.Scale.(plot.LogScale)
	base := plt.Y.Min
	if !isLog && base < 0 {
		base = 0
	}
	// Value labels only when every label fits within its bar slot.
	showLabels := b.labels
	if showLabels && len(b.vals) > 0 {
		x0, x1 := b.geometry(0, 0)
		slot := (trX(x1) - trX(x0)) / 0.88
		for _, vs := range b.vals {
			for _, v := range vs {
				if finite(v) && b.style.Width(fmtMsShort(v)) > slot {
					showLabels = false
				}
			}
		}
	}
	for s, vs := range b.vals {
		for g, v := range vs {
			if !finite(v) || (isLog && v <= plt.Y.Min) {
				continue
			}
			top := math.Min(v, plt.Y.Max)
			x0, x1 := b.geometry(s, g)
			l, r := trX(x0), trX(x1)
			y0, y1 := trY(base), trY(top)
			c.FillPolygon(b.colors[s], []vg.Point{{X: l, Y: y0}, {X: l, Y: y1}, {X: r, Y: y1}, {X: r, Y: y0}})
			if showLabels {
				sty := b.style
				sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
				c.FillText(sty, vg.Point{X: (l + r) / 2, Y: y1 + vg.Points(2)}, fmtMsShort(v))
			}
		}
	}
}

// episodeShading shades labelled spans of the X axis over the full plot
// height and writes each label at the top, staggering labels into rows so
// they do not overlap.
type episodeShading struct {
	eps   []Episode
	style text.Style
}

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
		c.FillPolygon(shadeGrey, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x0, Y: c.Max.Y}, {X: x1, Y: c.Max.Y}, {X: x1, Y: c.Min.Y}})
	}
	// Labels after all shading so no shade covers a label.
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
		c.FillText(sty, vg.Point{X: lx, Y: c.Max.Y - vg.Points(3) - vg.Length(row)*lineH}, sp.label)
	}
}

// labelPoint is a text label attached to a data point.
type labelPoint struct {
	x, y  float64
	text  string
	color color.Color
}

// pointLabels places a text label next to each point, greedily choosing the
// first candidate position (right, upper right, lower right, left, above,
// below, then shifted further up/down with a leader line) that stays inside
// the data area and overlaps neither an earlier label, nor an obstacle
// point (marker), nor a segment. If no candidate is free the first one
// inside the data area is used (labels may then overlap). No space is
// reserved for labels: callers pad the X range instead.
type pointLabels struct {
	pts       []labelPoint
	obstacles [][2]float64    // marker positions in data units
	segments  [][2][2]float64 // line segments (data units) labels should not cover
	markerR   vg.Length
	style     text.Style
}

const labelGap = vg.Length(6) // pt between a point and its label

func (l *pointLabels) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	var placed []vg.Rectangle
	for _, o := range l.obstacles {
		p := vg.Point{X: trX(o[0]), Y: trY(o[1])}
		r := l.markerR
		placed = append(placed, vg.Rectangle{Min: vg.Point{X: p.X - r, Y: p.Y - r}, Max: vg.Point{X: p.X + r, Y: p.Y + r}})
	}
	var segs [][2]vg.Point
	for _, s := range l.segments {
		segs = append(segs, [2]vg.Point{{X: trX(s[0][0]), Y: trY(s[0][1])}, {X: trX(s[1][0]), Y: trY(s[1][1])}})
	}
	for _, lp := range l.pts {
		p := vg.Point{X: trX(lp.x), Y: trY(lp.y)}
		w, h := l.style.Width(lp.text), l.style.Height(lp.text)
		g := labelGap
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
		for k := 1; k <= 10; k++ {
			d := vg.Length(k) * (h + vg.Points(2))
			offs = append(offs,
				vg.Point{X: g, Y: -h/2 + d}, vg.Point{X: g, Y: -h/2 - d},
				vg.Point{X: -g - w, Y: -h/2 + d}, vg.Point{X: -g - w, Y: -h/2 - d})
		}
		best, fallback := -1, -1
		var rects []vg.Rectangle
		for i, o := range offs {
			r := vg.Rectangle{Min: vg.Point{X: p.X + o.X, Y: p.Y + o.Y}}
			r.Max = vg.Point{X: r.Min.X + w, Y: r.Min.Y + h}
			rects = append(rects, r)
			if r.Min.X < c.Min.X || r.Max.X > c.Max.X || r.Min.Y < c.Min.Y || r.Max.Y > c.Max.Y {
				continue
			}
			if fallback < 0 {
				fallback = i
			}
			if !overlapsAny(r, placed) && !crossesAny(r, segs) {
				best = i
				break
			}
		}
		if best < 0 {
			best = max(fallback, 0)
		}
		r := rects[best]
		placed = append(placed, r)
		if best >= direct {
			ly := vg.Length(math.Max(float64(r.Min.Y), math.Min(float64(r.Max.Y), float64(p.Y))))
			lx := r.Min.X
			if r.Max.X < p.X {
				lx = r.Max.X
			}
			c.StrokeLine2(draw.LineStyle{Color: labelGrey, Width: vg.Points(0.5)}, p.X, p.Y, lx, ly)
		}
		sty := l.style
		sty.Color = lp.color
		sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
		c.FillText(sty, r.Min, lp.text)
	}
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
