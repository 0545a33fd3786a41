package report

import (
	"fmt"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ReplicaFigures are one replica's capacity figures for one policy (see
// Figures.Replicas). Non-finite values mean "not applicable" and are
// written as null / empty cells.
type ReplicaFigures struct {
	// Replica is the replica's name; Servers its servers (0 = unlimited)
	// and QueueLimit its queue limit (0 = unbounded).
	Replica             string
	Servers, QueueLimit int
	// Utilisation is busy server-time over servers × the run's length,
	// 0..1 (NaN without servers).
	Utilisation float64
	// QueueP99 is the 99th percentile of the live queue length sampled at
	// arrivals (requests; NaN without servers).
	QueueP99 float64
	// RefusedClient and RefusedBackground count requests refused by a full
	// queue; AttemptsServed the client attempts that started service;
	// AbortedInService those aborted by a cancellation; BackgroundOps the
	// background requests served.
	RefusedClient, RefusedBackground, AttemptsServed, AbortedInService, BackgroundOps int64
	// BackgroundRetries counts the retries of refused background requests
	// (sources with retries); BackgroundGaveUp those requests refused on
	// every try. Both are written to summary.json only when not 0.
	BackgroundRetries, BackgroundGaveUp int64
	// BackgroundP99 and BackgroundP999 are the background requests'
	// latency percentiles in ms (NaN without background).
	BackgroundP99, BackgroundP999 float64
	// WindowUtilisation is the utilisation per timeline window (the
	// policy's Timeline windows; nil without servers).
	WindowUtilisation []float64
	// WindowBackgroundOps and WindowBackgroundP99 are the background
	// requests served and their p99 (ms; NaN for a window without any)
	// per timeline window of their arrival; nil for a replica that no
	// background source targets.
	WindowBackgroundOps []int64
	WindowBackgroundP99 []float64
}

type replicaJSON struct {
	Replica           string `json:"replica"`
	Servers           int    `json:"servers"`
	QueueLimit        int    `json:"queue_limit"`
	Utilisation       num    `json:"utilisation"`
	QueueP99          num    `json:"queue_p99"`
	RefusedClient     int64  `json:"refused_client"`
	RefusedBackground int64  `json:"refused_background"`
	AttemptsServed    int64  `json:"attempts_served"`
	AbortedInService  int64  `json:"aborted_in_service"`
	BackgroundOps     int64  `json:"background_ops"`
	BackgroundRetries int64  `json:"background_retries,omitempty"`
	BackgroundGaveUp  int64  `json:"background_gave_up,omitempty"`
	BackgroundP99     num    `json:"background_p99_ms"`
	BackgroundP999    num    `json:"background_p999_ms"`
}

func replicasJSON(rs []ReplicaFigures) []replicaJSON {
	if rs == nil {
		return nil
	}
	out := make([]replicaJSON, 0, len(rs))
	for _, r := range rs {
		out = append(out, replicaJSON{
			Replica: r.Replica, Servers: r.Servers, QueueLimit: r.QueueLimit,
			Utilisation: num{r.Utilisation, precRate}, QueueP99: num{r.QueueP99, precS},
			RefusedClient: r.RefusedClient, RefusedBackground: r.RefusedBackground,
			AttemptsServed: r.AttemptsServed, AbortedInService: r.AbortedInService, BackgroundOps: r.BackgroundOps,
			BackgroundRetries: r.BackgroundRetries, BackgroundGaveUp: r.BackgroundGaveUp,
			BackgroundP99: num{r.BackgroundP99, precMs}, BackgroundP999: num{r.BackgroundP999, precMs},
		})
	}
	return out
}

// hasReplicas reports whether a run measured replica capacity (some policy
// has replica figures): only then are replicas.csv and the replicas chart
// written.
func hasReplicas(r *Run) bool {
	for i := range r.Policies {
		if r.Policies[i].Replicas != nil {
			return true
		}
	}
	return false
}

// replicasCSV renders replicas.csv: policy, replica, start_s, end_s,
// utilisation, background_ops, background_p99_ms, one row per timeline
// window of every replica with servers or background load (as many rows
// as it has windows of either). Cells that do not apply are empty:
// utilisation without servers, both background cells for a replica that
// no background source targets, background_p99_ms for a window without
// background requests.
func replicasCSV(r *Run) ([]byte, error) {
	rows := [][]string{{"policy", "replica", "start_s", "end_s", "utilisation", "background_ops", "background_p99_ms"}}
	for _, p := range r.Policies {
		for _, rep := range p.Replicas {
			n := max(len(rep.WindowUtilisation), len(rep.WindowBackgroundOps))
			for k := range n {
				start, end := float64(k), float64(k+1)
				if k < len(p.Timeline) {
					start, end = p.Timeline[k].StartS, p.Timeline[k].EndS
				}
				u, ops, p99 := "", "", ""
				if k < len(rep.WindowUtilisation) {
					u = fmtNum(rep.WindowUtilisation[k], precRate)
				}
				if rep.WindowBackgroundOps != nil {
					ops, p99 = "0", ""
					if k < len(rep.WindowBackgroundOps) {
						ops, p99 = fmt.Sprintf("%d", rep.WindowBackgroundOps[k]), fmtMs(rep.WindowBackgroundP99[k])
					}
				}
				rows = append(rows, []string{p.Policy, rep.Replica, fmtNum(start, precS), fmtNum(end, precS), u, ops, p99})
			}
		}
	}
	return writeCSV(rows)
}

// finiteReplicas returns the names of the replicas with servers, in the
// order of the first policy that lists them.
func finiteReplicas(r *Run) []string {
	var names []string
	seen := map[string]bool{}
	for _, p := range r.Policies {
		for _, rep := range p.Replicas {
			if rep.Servers > 0 && !seen[rep.Replica] {
				seen[rep.Replica] = true
				names = append(names, rep.Replica)
			}
		}
	}
	return names
}

// replicasChart: utilisation (%) per timeline window of every replica with
// servers, one colour per policy (as in the other charts) and one dash
// pattern per replica (solid for the first; the replicas are listed in the
// legend when there are several, named in the title when there is one),
// on a linear axis up to at least 100% from a round number below the
// lowest value (0 when that is 30% or less); episodes shaded. It shares the time charts' layout (same
// X axis, Y reserve and legend width) so it lines up with them.
func replicasChart(r *Run) *chart {
	names := finiteReplicas(r)
	what := "replica utilisation"
	if len(names) == 1 {
		what = names[0] + " utilisation"
	}
	if w := windowWidthS(r); w > 0 {
		what += " (" + fmtSeconds(w) + " windows)"
	}
	ch := newChart(chartTitle(r.Scenario, what), "virtual time (s)", "utilisation (%)")
	ch.yReserve = timelineYReserve
	ch.legendSizer = timeLegendSizer(r)
	xEnd := timelineEnd(r)
	setLinearAxis(&ch.p.X, 0, xEnd)
	hi, lo := 100.0, 100.0
	type line struct {
		pol, rep int
		segs     []plotter.XYs
	}
	var lines []line
	for i, p := range r.Policies {
		for _, rep := range p.Replicas {
			ri := -1
			for k, n := range names {
				if n == rep.Replica {
					ri = k
				}
			}
			if ri < 0 {
				continue
			}
			l := line{pol: i, rep: ri}
			var cur plotter.XYs
			for k, u := range rep.WindowUtilisation {
				start, end := float64(k), float64(k+1)
				if k < len(p.Timeline) {
					start, end = p.Timeline[k].StartS, p.Timeline[k].EndS
				}
				mid := (start + end) / 2
				if !finite(u) || !finite(mid) || mid > xEnd {
					if len(cur) > 0 {
						l.segs = append(l.segs, cur)
						cur = nil
					}
					continue
				}
				cur = append(cur, plotter.XY{X: mid, Y: 100 * u})
				hi, lo = max(hi, 100*u), min(lo, 100*u)
			}
			if len(cur) > 0 {
				l.segs = append(l.segs, cur)
			}
			lines = append(lines, l)
		}
	}
	headroom := 1.08
	if len(r.Episodes) > 0 {
		headroom = 1.25 // room for the episode labels at the top
	}
	// From a round number below the lowest value (0 when it is low), so
	// that the differences between policies near saturation show.
	bottom := -3.0
	if lo > 30 {
		bottom = 10 * math.Floor((lo-2)/10)
	}
	setLinearAxis(&ch.p.Y, bottom, bottom+(hi-bottom)*headroom)
	ch.noData = len(lines) == 0
	ch.addTimeLayers(r.Episodes)
	// Policies whose lines coincide (all but the aggressive ones at a
	// replica they do not reach) are drawn at their values and told apart
	// by markers and a legend note.
	segs := make([][]plotter.XYs, len(lines))
	styles := make([]draw.LineStyle, len(lines))
	for k, l := range lines {
		segs[k], styles[k] = l.segs, replicaLine(l.pol, l.rep)
	}
	co := findCoincidence(segs, &ch.p.Y)
	glyphs := ch.addBundle(segs, styles, co)
	drawn := make([]bool, len(r.Policies))
	glyph := make([]*draw.GlyphStyle, len(r.Policies))
	for k, l := range lines {
		drawn[l.pol] = drawn[l.pol] || len(l.segs) > 0
		if glyph[l.pol] == nil {
			glyph[l.pol] = glyphs[k]
		}
	}
	pols := make([]int, len(lines))
	for k, l := range lines {
		pols[k] = l.pol
	}
	policyNames := make([]string, len(r.Policies))
	for i, p := range r.Policies {
		policyNames[i] = p.Policy
	}
	for i, name := range policyNames {
		if !drawn[i] {
			name += " (no data)"
		}
		note := policyNote(i, pols, co, policyNames)
		ch.addLegend(legendWithNote(name, note), lineThumbs(replicaLine(i, 0), glyph[i])...)
	}
	if len(names) > 1 {
		for k, n := range names {
			sty := replicaLine(0, k)
			sty.Color = labelGrey
			ch.addLegend(n, &plotter.Line{LineStyle: sty})
		}
	}
	return ch
}

// policyNote is the legend note of policy i whose lines are pols[k] == i:
// "= NAME" (or "≈ NAME") when every one of its lines coincides with a
// line of the same other policy NAME (see coincidence), else "".
func policyNote(i int, pols []int, co coincidence, names []string) string {
	ref, all, n := -1, true, 0
	for k, p := range pols {
		if p != i {
			continue
		}
		n++
		j := co.ref[k]
		if j < 0 || (ref >= 0 && pols[j] != ref) {
			return ""
		}
		ref, all = pols[j], all && co.everywhere[k]
	}
	if n == 0 || ref < 0 || ref == i {
		return ""
	}
	if all {
		return "= " + names[ref]
	}
	return "≈ " + names[ref]
}

// replicaLine is the line of policy i at the k-th replica with servers:
// the policy's colour, solid for the first replica and dashed for the
// others.
func replicaLine(i, k int) draw.LineStyle {
	return draw.LineStyle{Color: policyColor(i), Width: vg.Points(1.5), Dashes: dashes[k%len(dashes)]}
}
