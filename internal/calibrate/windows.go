package calibrate

// This file turns data points (cumulative or delta) into consecutive
// windows: one per export instant.

import (
	"fmt"
	"math"
	"sort"
	"time"

	"hedgelab/scenarios"
)

// exportTolerance is how far apart two data points' times may be and
// still belong to one export (an SDK stamps each point as it collects it).
const exportTolerance = 500 * time.Millisecond

// delta is the change of one series over [start, end).
type delta struct {
	p          *rawPoint // the point (its attributes; the values below replace its own)
	start, end time.Time
	value      float64
	count, sum float64
	bins       []Bin
}

// addPoints builds t's windows from the data points of every file.
func (t *Telemetry) addPoints(pts []rawPoint) error {
	bykey := map[string][]*rawPoint{}
	var keys []string
	var earliest, latest *rawPoint // the earliest start, the latest end
	for i := range pts {
		p := &pts[i]
		if reg := p.attrs["region"]; p.metric == metricAttemptLatency && badRegion(reg) {
			return fmt.Errorf("%s:%d: metric %s: attribute region: want a region name without control characters, got %q", p.source(t), p.line, p.metric, reg)
		}
		if earliest == nil || p.start.Before(earliest.start) {
			earliest = p
		}
		if latest == nil || p.end.After(latest.end) {
			latest = p
		}
		if _, ok := bykey[p.key]; !ok {
			keys = append(keys, p.key)
		}
		bykey[p.key] = append(bykey[p.key], p)
	}
	if latest != nil {
		// In whole seconds: Time.Sub saturates at ~292 years.
		if span := float64(latest.end.Unix() - earliest.start.Unix()); span > scenarios.MaxSeconds {
			return fmt.Errorf("%s:%d: metric %s: the telemetry spans %.3g s (from %s to %s); at most %g s (a scenario's duration_s)",
				latest.source(t), latest.line, latest.metric, span, earliest.start.Format(time.RFC3339), latest.end.Format(time.RFC3339), float64(scenarios.MaxSeconds))
		}
	}
	sort.Strings(keys)
	var ds []delta
	for _, k := range keys {
		list := bykey[k]
		sort.SliceStable(list, func(i, j int) bool { return list[i].end.Before(list[j].end) })
		var prev *rawPoint
		for _, p := range list {
			d, err := t.deltaOf(prev, p)
			if err != nil {
				return err
			}
			if prev != nil && p.cumulative && !p.end.After(prev.end) {
				t.warnf("%s:%d: metric %s: two points at %s for one series: the later in the file is kept", p.source(t), p.line, p.metric, p.end.Format(time.RFC3339Nano))
				continue
			}
			ds = append(ds, d)
			prev = p
		}
	}
	if len(ds) == 0 {
		return fmt.Errorf("%s: no data points", t.Sources[0])
	}
	// Export instants: the distinct end times, clustered.
	ends := make([]time.Time, 0, len(ds))
	for _, d := range ds {
		ends = append(ends, d.end)
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i].Before(ends[j]) })
	var instants []time.Time // the last time of each cluster
	for i, e := range ends {
		if i == 0 || e.Sub(instants[len(instants)-1]) > exportTolerance {
			instants = append(instants, e)
		} else {
			instants[len(instants)-1] = e
		}
	}
	first := instants[0]
	for _, d := range ds {
		if d.end.Sub(instants[0]) <= exportTolerance && d.start.Before(first) {
			first = d.start
		}
	}
	if first.Equal(instants[0]) { // one instant, zero-length: a point in time
		first = instants[0].Add(-time.Nanosecond)
	}
	t.Epoch = first
	t.Windows = make([]Window, len(instants))
	prevEnd := first
	for i, in := range instants {
		t.Windows[i] = Window{Start: prevEnd.Sub(first), End: in.Sub(first), Attempts: map[Series][]Bin{}}
		prevEnd = in
	}
	for _, d := range ds {
		i := sort.Search(len(instants), func(i int) bool { return !instants[i].Before(d.end.Add(-exportTolerance)) })
		if i == len(instants) {
			i--
		}
		t.apply(&t.Windows[i], d)
	}
	for i := range t.Windows {
		w := &t.Windows[i]
		for s, b := range w.Attempts {
			w.Attempts[s] = sortBins(b)
		}
	}
	return nil
}

// source is the file the point came from (the first of t's sources: the
// readers add points file by file, and messages name the file at read time).
func (p *rawPoint) source(t *Telemetry) string {
	if len(t.Sources) == 1 {
		return t.Sources[0]
	}
	return "telemetry"
}

// deltaOf returns the change of p since prev (the series' previous point,
// nil for the first): p itself for delta temporality, for the first point
// or after a reset (a new start time, or counts that went down).
func (t *Telemetry) deltaOf(prev, p *rawPoint) (delta, error) {
	d := delta{p: p, start: p.start, end: p.end, value: p.value, count: p.count, sum: p.sum}
	var err error
	d.bins, err = binsOf(p)
	if err != nil {
		return d, err
	}
	if !p.cumulative || prev == nil || !prev.start.Equal(p.start) {
		if p.cumulative && prev != nil {
			t.warnf("%s:%d: metric %s %v: start time changed from %s to %s (a restart): counted from the new start",
				p.source(t), p.line, p.metric, p.attrs, prev.start.Format(time.RFC3339Nano), p.start.Format(time.RFC3339Nano))
		}
		return d, nil
	}
	if p.value < prev.value || p.count < prev.count {
		t.warnf("%s:%d: metric %s %v: a cumulative count went down (%g to %g): taken as a restart",
			p.source(t), p.line, p.metric, p.attrs, max(prev.value, prev.count), max(p.value, p.count))
		return d, nil
	}
	d.start = prev.end
	d.value = p.value - prev.value
	d.count = p.count - prev.count
	d.sum = p.sum - prev.sum
	pb, err := binsOf(prev)
	if err != nil {
		return d, err
	}
	if p.exp && prev.exp && prev.scale != p.scale {
		// An exponential histogram downscales as its range grows: bring the
		// earlier point to the later scale.
		lo := min(prev.scale, p.scale)
		q, c := *prev, *p
		q.buckets, q.offset, q.scale = rescale(prev.buckets, prev.offset, prev.scale, lo)
		c.buckets, c.offset, c.scale = rescale(p.buckets, p.offset, p.scale, lo)
		if pb, err = binsOf(&q); err != nil {
			return d, err
		}
		if d.bins, err = binsOf(&c); err != nil {
			return d, err
		}
	} else if !p.exp && !prev.exp && !sameBounds(p.bounds, prev.bounds) && len(prev.counts) > 0 {
		return d, fmt.Errorf("%s:%d: metric %s %v: explicit bounds changed between exports", p.source(t), p.line, p.metric, p.attrs)
	}
	d.bins, err = subtractBins(d.bins, pb)
	if err != nil {
		return d, fmt.Errorf("%s:%d: metric %s %v: %v", p.source(t), p.line, p.metric, p.attrs, err)
	}
	return d, nil
}

func sameBounds(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// rescale merges exponential buckets from scale from to the lower scale to.
func rescale(counts []float64, offset, from, to int) ([]float64, int, int) {
	if from <= to || len(counts) == 0 {
		return counts, offset, from
	}
	shift := uint(from - to)
	lo := offset >> shift
	hi := (offset + len(counts) - 1) >> shift
	out := make([]float64, hi-lo+1)
	for i, c := range counts {
		out[((offset+i)>>shift)-lo] += c
	}
	return out, lo, to
}

// binsOf returns a histogram point's buckets as bins. An explicit
// histogram's first bucket is taken from 0, its last (above the last
// bound) up to the point's max when known, else as the last bound itself.
func binsOf(p *rawPoint) ([]Bin, error) {
	var out []Bin
	if p.exp {
		base := math.Exp2(math.Exp2(-float64(p.scale)))
		if p.zero > 0 {
			out = append(out, Bin{0, 0, p.zero})
		}
		for i, c := range p.buckets {
			if c > 0 {
				idx := float64(p.offset + i)
				out = append(out, Bin{math.Pow(base, idx), math.Pow(base, idx+1), c})
			}
		}
		return out, nil
	}
	for i, c := range p.counts {
		if c == 0 {
			continue
		}
		var b Bin
		switch {
		case len(p.bounds) == 0:
			b = Bin{0, math.Max(p.max, 0), c}
		case i == 0:
			b = Bin{math.Min(0, p.bounds[0]), p.bounds[0], c}
		case i == len(p.bounds):
			hi := p.bounds[i-1]
			if p.hasMax && p.max > hi {
				hi = p.max
			}
			b = Bin{p.bounds[i-1], hi, c}
		default:
			b = Bin{p.bounds[i-1], p.bounds[i], c}
		}
		b.Lo = math.Max(b.Lo, 0)
		b.Hi = math.Max(b.Hi, b.Lo)
		out = append(out, b)
	}
	return out, nil
}

// subtractBins returns a - b for bins of the same layout (b's bins a
// subset of a's); an explicit last bucket whose upper edge is the point's
// max matches by its lower edge.
func subtractBins(a, b []Bin) ([]Bin, error) {
	idx := map[float64]int{}
	out := append([]Bin(nil), a...)
	for i, x := range out {
		idx[x.Lo] = i
	}
	for _, x := range b {
		i, ok := idx[x.Lo]
		if !ok || out[i].N < x.N {
			return nil, fmt.Errorf("a cumulative bucket from %g ms went down", x.Lo)
		}
		out[i].N -= x.N
	}
	res := out[:0]
	for _, x := range out {
		if x.N > 0 {
			res = append(res, x)
		}
	}
	return res, nil
}

// apply adds delta d to window w.
func (t *Telemetry) apply(w *Window, d delta) {
	a := d.p.attrs
	switch d.p.metric {
	case metricAttemptLatency:
		s := Series{Region: a["region"], Leg: a["leg"], Status: a["status"]}
		if s.Region == "" {
			t.warnf("%s:%d: metric %s: a point without a region attribute: left out", d.p.source(t), d.p.line, d.p.metric)
			return
		}
		if s.Leg == "" {
			s.Leg = "primary"
		}
		w.Attempts[s] = append(w.Attempts[s], d.bins...)
	case metricOperations:
		w.Ops += d.value
		w.HasOps = true
		if a["result"] == "disabled" {
			w.Disabled += d.value
		}
	case metricSpawned:
		if c := a["cause"]; c == "" || c == "threshold" {
			w.LatencyHedges += d.value
		} else {
			w.FailoverHedges += d.value
		}
	case metricRUWinner:
		w.RUSum += d.sum
		w.RUCount += d.count
	}
}
