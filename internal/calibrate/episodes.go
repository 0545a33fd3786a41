package calibrate

// This file fits one region: it finds the windows where the region was
// slow or failing (episodes, from the time series), fits the service time
// from the other windows, each slow episode against it, and the faults
// per status.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
)

// detectMinAttempts is how many attempts a region needs before its time
// series is searched for episodes (fewer: every window is baseline).
const detectMinAttempts = 2000

// regionWindow is what one window holds of one region.
type regionWindow struct {
	ok, abandoned []Bin
	faults        map[string][]Bin // by status
	n             float64          // every attempt
}

// fitRegion fits region r's service time, episodes and faults.
func (m *Model) fitRegion(t *Telemetry, r *RegionFit) {
	rws := make([]regionWindow, len(t.Windows))
	for i, w := range t.Windows {
		rw := &rws[i]
		rw.faults = map[string][]Bin{}
		for s, b := range w.Attempts {
			if s.Region != r.Name {
				continue
			}
			n := count(b)
			rw.n += n
			switch {
			case s.Status == "abandoned":
				rw.abandoned = append(rw.abandoned, b...)
				r.Abandoned += n
			case !isAnswer(s.Status):
				r.Other += n
			case statusCode(s.Status) >= 400:
				rw.faults[s.Status] = append(rw.faults[s.Status], b...)
				r.Other += n
			default:
				rw.ok = append(rw.ok, b...)
				r.Answered += n
			}
		}
	}
	if r.Other > 0 {
		var other float64
		for _, w := range t.Windows {
			for s, b := range w.Attempts {
				if s.Region == r.Name && !isAnswer(s.Status) && s.Status != "abandoned" {
					other += count(b)
				}
			}
		}
		if other > 0 {
			m.Unknown = append(m.Unknown, fmt.Sprintf("%s: %.0f attempts ended in a transport error or a local throttle: not modelled", r.Name, other))
		}
	}
	slow := make([]bool, len(rws))
	if r.Answered+r.Abandoned >= detectMinAttempts {
		slow = m.slowWindows(t, rws)
	}
	fit := func() []segment {
		var ev, ce []Bin
		for i, rw := range rws {
			if !slow[i] {
				ev = append(ev, rw.ok...)
				ce = append(ce, rw.abandoned...)
			}
		}
		r.Service = fitService(shift(ev, r.RTTMs), shift(ce, r.RTTMs), m.JitterMs)
		if r.Service.Family == "" { // no answer outside episodes
			all := []Bin{}
			for _, rw := range rws {
				all = append(all, rw.ok...)
			}
			r.Service = fitService(shift(all, r.RTTMs), nil, m.JitterMs)
		}
		var fitted []segment
		for _, sg := range segments(slow, rws, nil) {
			if m.fitEpisode(t, r, rws, sg) {
				fitted = append(fitted, sg)
			}
		}
		return fitted
	}
	first := len(m.Episodes)
	fitted := fit()
	if r.Physical == m.ClientRegion && r.RTTMs == 0 {
		if c, mu, why := m.unscaledMs(r, rws, m.Episodes[first:], fitted); c > 0 || mu > 0 {
			m.Episodes = m.Episodes[:first]
			r.RTTMs, m.SameRegionRTTMs, m.JitterMs = c, c, mu
			r.RTTNote = "the client's own region: same_region_rtt_ms = " + fmtG(c) + ", " + why
			fit()
		}
	}
	m.fitFaults(t, r, rws)
}

// shift returns bins moved left by rtt ms (clamped at 0): attempt latency
// to service time.
func shift(bins []Bin, rtt float64) []Bin {
	out := make([]Bin, len(bins))
	for i, b := range bins {
		out[i] = Bin{math.Max(b.Lo-rtt, 0), math.Max(b.Hi-rtt, 0), b.N}
	}
	return out
}

// fitService fits a service-time distribution (ms) to answered (ev) and
// abandoned (ce) attempts, less exponential jitter of mean jitterMs
// (deconvolveExp; 0: none): an empirical quantile table when there are at
// least richSamples answers, else a lognormal from the median and p90.
func fitService(ev, ce []Bin, jitterMs float64) ServiceFit {
	d := kaplanMeier(ev, ce)
	if jitterMs > 0 && medianBinWidth(ev, d.quantile(0.5)) > jitterMs {
		// Buckets wider than the jitter (an alternate's, 2.2% of its
		// RTT): too coarse to deconvolve; its mean is taken off instead.
		d = shiftCDF(d, jitterMs)
	} else {
		d = deconvolveExp(d, jitterMs)
	}
	var sf ServiceFit
	sf.dist = d
	switch {
	case d.events == 0:
		return sf
	case d.events < richSamples:
		med := math.Max(d.quantile(0.5), 0.001)
		p90 := math.Max(d.quantile(0.9), med*1.001)
		sigma := math.Log(p90/med) / 1.2815515655446004
		sf.Family, sf.MedianMs, sf.P99Ms = "lognormal", sig3(med), sig3(med*math.Exp(2.3263478740408408*sigma))
		if sf.P99Ms <= sf.MedianMs {
			sf.P99Ms = sf.MedianMs * 1.01
		}
		sf.Why = fmt.Sprintf("thin: %.0f answered attempts (an empirical table needs %d): a lognormal through their median (%s ms) and p90 (%s ms)",
			d.events, richSamples, fmtG(sig3(med)), fmtG(sig3(p90)))
		return sf
	}
	sf.Family = "empirical"
	sf.Quantiles, sf.Why = table(&d)
	return sf
}

// table returns the empirical quantile table of d: q every 0.01 to 0.9,
// then 45 levels per decade of 1 - q, up to the level with 10 answers
// beyond it, and q = 1 at the largest answer; a tail no answer shows (the
// attempts abandoned there) is extrapolated as a Pareto tail.
func table(d *cdf) ([][2]float64, string) {
	var qs []float64
	qs = append(qs, 0, 0.001, 0.005)
	for i := 1; i <= 90; i++ {
		qs = append(qs, float64(i)/100)
	}
	top := 1 - d.tail
	qmax := math.Min(top, 1-10/d.events)
	for dec := 1; dec <= 7; dec++ { // (1 - 10^-dec, 1 - 10^-(dec+1)]
		lo, step := math.Pow(10, -float64(dec)), math.Pow(10, -float64(dec))/50
		for k := 1; k <= 45; k++ {
			if q := 1 - lo + float64(k)*step; q <= qmax+1e-15 {
				qs = append(qs, q)
			}
		}
	}
	var pts [][2]float64
	add := func(q, ms float64) {
		if n := len(pts); n > 0 {
			if q <= pts[n-1][0] {
				return
			}
			ms = math.Max(ms, pts[n-1][1])
		}
		pts = append(pts, [2]float64{q, ms})
	}
	for _, q := range qs {
		if q <= qmax {
			add(q, d.quantile(q))
		}
	}
	why := fmt.Sprintf("rich: %.0f answered attempts: the empirical quantiles, every 0.01 to q = 0.9 and 45 levels per decade of 1 - q beyond, up to the last with 10 answers above it; q = 1 is the largest answer", d.events)
	if d.tail > 1e-6 && d.censored > 0 {
		// Unobserved mass: the attempts still running when they were
		// abandoned. A Pareto tail through the observed survival at the
		// last two decades.
		xe := d.max()
		xa := d.quantile(math.Max(0, 1-10*d.tail))
		alpha := 2.0
		if xa > 0 && xe > xa {
			alpha = math.Min(math.Max(math.Log(10)/math.Log(xe/xa), 0.5), 10)
		}
		add(top, xe)
		for _, k := range []float64{10, 100} {
			add(1-d.tail/k, xe*math.Pow(k, 1/alpha))
		}
		end := math.Min(xe*math.Pow(1000, 1/alpha), 600000)
		add(1, end)
		why += fmt.Sprintf("; beyond %s ms no answer is seen (%.3g%% of the attempts were still running there when abandoned): extrapolated as a Pareto tail (alpha %.2f) fitted to the observed tail, ending at %s ms; a policy that waits longer than %s ms is predicted from that extrapolation",
			fmtG(sig3(xe)), 100*d.tail, alpha, fmtG(sig3(end)), fmtG(sig3(xe)))
		return pts, why
	}
	add(1, d.max())
	return pts, why
}

// slowWindows flags windows whose share of attempts above the region's
// p90 or p99 (of the windows a first pass did not flag) exceeds the typical window's by more than 4 binomial
// standard deviations and by half. A first or last window shorter than
// half the usual width (m.WindowS) is never flagged: the export a client
// makes as it stops (or the first, as it starts) holds mostly the
// operations in flight at that instant, the slow ones over-represented
// (a 36 ms last window of the loopback harness, 25 attempts, was fitted
// as 5% of attempts +123 ms).
func (m *Model) slowWindows(t *Telemetry, rws []regionWindow) []bool {
	flag := make([]bool, len(rws))
	for pass := 0; pass < 2; pass++ {
		flag = m.slowPass(rws, flag)
	}
	for _, i := range []int{0, len(rws) - 1} {
		if w := t.Windows[i]; (w.End - w.Start).Seconds() < m.WindowS/2 {
			flag[i] = false
		}
	}
	return flag
}

// slowPass is one pass of slowWindows: the cuts are the p90 and p99 of
// the windows not flagged by the previous pass (prev), so that a mild
// phase beside a severe one (incident-gcs-2018's ×1.4 tail after its ×6
// peak) is measured against the healthy windows, not the peak's.
func (m *Model) slowPass(rws []regionWindow, prev []bool) []bool {
	var pool []Bin
	for i, rw := range rws {
		if !prev[i] {
			pool = append(pool, rw.ok...)
			pool = append(pool, rw.abandoned...)
		}
	}
	d := kaplanMeier(pool, nil)
	flag := make([]bool, len(rws))
	for _, q := range []float64{0.9, 0.99} {
		cut := d.quantile(q)
		k := make([]float64, len(rws))
		n := make([]float64, len(rws))
		for i, rw := range rws {
			for _, b := range append(append([]Bin(nil), rw.ok...), rw.abandoned...) {
				n[i] += b.N
				k[i] += b.N * above(b, cut)
			}
		}
		for i, f := range binomialFlags(k, n) {
			flag[i] = flag[i] || f
		}
	}
	return flag
}

// above is the share of bin b above x.
func above(b Bin, x float64) float64 {
	switch {
	case b.Lo >= x && b.Hi > x || b.Lo > x:
		return 1
	case b.Hi <= x:
		return 0
	}
	return (b.Hi - x) / (b.Hi - b.Lo)
}

// binomialFlags flags the windows whose k out of n is above the typical
// rate (the median over windows of 20 or more, then the pooled rate of
// the unflagged) by more than 4 standard deviations + 3 and by half.
func binomialFlags(k, n []float64) []bool {
	var rates []float64
	for i := range k {
		if n[i] >= 20 {
			rates = append(rates, k[i]/n[i])
		}
	}
	flag := make([]bool, len(k))
	if len(rates) == 0 {
		return flag
	}
	sort.Float64s(rates)
	p0 := rates[len(rates)/2]
	for iter := 0; iter < 2; iter++ {
		for i := range k {
			mean := n[i] * p0
			flag[i] = n[i] > 0 && k[i] > mean+4*math.Sqrt(mean*(1-p0))+3 && k[i] > 1.5*mean
		}
		var kk, nn float64
		for i := range k {
			if !flag[i] {
				kk += k[i]
				nn += n[i]
			}
		}
		if nn > 0 {
			p0 = kk / nn
		}
	}
	return flag
}

// segment is a run of consecutive flagged windows [from, to).
type segment struct{ from, to int }

// segments returns the runs of flagged windows, split where the level
// changes: a window whose share of slow attempts (rate, when given; else
// the window's p90 exceedance is not recomputed and runs stay whole)
// differs from the run's by more than 6 standard errors and 30%.
func segments(flag []bool, rws []regionWindow, rate []float64) []segment {
	var out []segment
	for i := 0; i < len(flag); i++ {
		if !flag[i] {
			continue
		}
		j := i
		for j < len(flag) && flag[j] {
			j++
		}
		out = append(out, splitLevels(rws, i, j)...)
		i = j
	}
	return out
}

// splitLevels splits the run [i, j) of slow windows where the windows'
// p90 (of the two windows before and the two from there) changes by more
// than 15%: a ramp becomes a staircase of steps a window or two long.
func splitLevels(rws []regionWindow, i, j int) []segment {
	med := func(a, b int) float64 {
		var pool []Bin
		for w := a; w < b; w++ {
			pool = append(pool, rws[w].ok...)
			pool = append(pool, rws[w].abandoned...)
		}
		d := kaplanMeier(pool, nil)
		if d.events < 50 {
			return math.NaN()
		}
		return d.quantile(0.9)
	}
	var out []segment
	start := i
	for w := i + 1; w < j; w++ {
		a, b := med(max(start, w-2), w), med(w, min(w+2, j))
		if !math.IsNaN(a) && !math.IsNaN(b) && (b > 1.15*a || a > 1.15*b) {
			out = append(out, segment{start, w})
			start = w
		}
	}
	return append(out, segment{start, j})
}

// fitEpisode fits one slow episode of r (false: too few attempts to fit): the service time of a share f of
// the attempts becomes base × factor + add ms; (f, add) with factor 1, or
// the factor alone on every attempt, whichever is closer to the episode's
// distribution (Kolmogorov–Smirnov distance).
func (m *Model) fitEpisode(t *Telemetry, r *RegionFit, rws []regionWindow, sg segment) bool {
	var ev, ce []Bin
	for w := sg.from; w < sg.to; w++ {
		ev = append(ev, rws[w].ok...)
		ce = append(ce, rws[w].abandoned...)
	}
	// The episode's latency less the RTT: its service time plus the
	// jitter, which the factor does not multiply (m.JitterMs: the model
	// is convolved with it at jitterNodes; deconvolving the episode
	// instead is coarser than its buckets, 2.2% of a ×6 latency).
	e := kaplanMeier(shift(ev, r.RTTMs), shift(ce, r.RTTMs))
	if e.events+e.censored < 50 {
		return false
	}
	b := &r.Service.dist
	xs := e.x
	js := []float64{0}
	if m.JitterMs > 0 {
		js = jitterNodes(m.JitterMs)
	}
	ks := func(f, k, a float64) float64 {
		worst := 0.0
		for i, x := range xs {
			mv := 0.0
			for _, j := range js {
				mv += (1-f)*b.at(x-j) + f*b.at((x-j-a)/k)
			}
			mv /= float64(len(js))
			worst = math.Max(worst, math.Abs(mv-e.f[i]))
		}
		return worst
	}
	best := math.Inf(1)
	var bf, bk, ba float64
	try := func(f, k, a float64) {
		if v := ks(f, k, a); v < best {
			best, bf, bk, ba = v, f, k, a
		}
	}
	for i := 0; i <= 120; i++ {
		try(1, math.Pow(20, float64(i)/120), 0)
	}
	hi := math.Max(e.max(), 1)
	fs := []float64{}
	for i := 1; i <= 60; i++ {
		fs = append(fs, math.Pow(10, -2.5+2.5*float64(i)/60))
	}
	for _, f := range fs {
		for i := 0; i <= 80; i++ {
			try(f, 1, 0.05*math.Pow(hi/0.05, float64(i)/80))
		}
	}
	// Refine around the best.
	for round := 0; round < 2; round++ {
		f0, k0, a0 := bf, bk, ba
		for i := -10; i <= 10; i++ {
			for j := -10; j <= 10; j++ {
				sf := math.Pow(1.02/float64(round+1), float64(i))
				sa := math.Pow(1.02/float64(round+1), float64(j))
				if k0 != 1 {
					try(1, k0*sf, 0)
				} else {
					try(math.Min(f0*sf, 1), 1, a0*sa)
				}
			}
		}
	}
	ep := EpisodeFit{Replica: r.Replica, StartS: (t.Windows[sg.from].Start - t.Windows[0].Start).Seconds(),
		EndS: (t.Windows[sg.to-1].End - t.Windows[0].Start).Seconds(), Factor: bk, Fraction: bf, AddMs: ba,
		Abandoned: e.censored, Total: e.events + e.censored}
	if bk != 1 {
		ep.Fraction = 1
		ep.Why = fmt.Sprintf("%d windows whose share of slow attempts is above the region's usual: every attempt's service time × %.3g (KS distance %.3f to the episode's latencies)", sg.to-sg.from, bk, best)
	} else {
		ep.Why = fmt.Sprintf("%d windows whose share of slow attempts is above the region's usual: %.3g%% of the attempts %s ms slower (KS distance %.3f to the episode's latencies)", sg.to-sg.from, 100*bf, fmtG(sig3(ba)), best)
	}
	if e.censored > 0.01*(e.events+e.censored) {
		ep.Why += fmt.Sprintf("; %.1f%% of its attempts were abandoned before they answered, so the slowest are seen only as lower bounds: a policy waiting longer than the current one is predicted from the answered ones", 100*e.censored/(e.events+e.censored))
	}
	m.Episodes = append(m.Episodes, ep)
	return true
}

// fitFaults fits r's fault rules: per status, a rule over the whole run
// at the rate of the windows without a burst, and one per burst (windows
// whose rate of that status is above it, binomialFlags).
func (m *Model) fitFaults(t *Telemetry, r *RegionFit, rws []regionWindow) {
	statuses := map[string]bool{}
	for _, rw := range rws {
		for s := range rw.faults {
			statuses[s] = true
		}
	}
	var list []string
	for s := range statuses {
		list = append(list, s)
	}
	sort.Strings(list)
	for _, st := range list {
		k := make([]float64, len(rws))
		n := make([]float64, len(rws))
		var all []Bin
		for i, rw := range rws {
			k[i] = count(rw.faults[st])
			n[i] = rw.n
			all = append(all, rw.faults[st]...)
		}
		lat := kaplanMeier(shift(all, r.RTTMs), nil)
		latency := sig3(lat.quantile(0.5))
		flag := binomialFlags(k, n)
		var k0, n0 float64
		for i := range k {
			if !flag[i] {
				k0 += k[i]
				n0 += n[i]
			}
		}
		p0 := 0.0
		if n0 > 0 {
			p0 = k0 / n0
		}
		if k0 > 0 {
			m.Faults = append(m.Faults, FaultFit{Replica: r.Replica, Status: st, Probability: p0, LatencyMs: latency,
				Why: fmt.Sprintf("%.0f of %.0f attempts outside bursts answered %s (answer time: their median, less the RTT)", k0, n0, st)})
		}
		for _, sg := range segments(flag, rws, nil) {
			var ks, ns float64
			for w := sg.from; w < sg.to; w++ {
				ks += k[w]
				ns += n[w]
			}
			if ns == 0 {
				continue
			}
			p := (ks/ns - p0) / (1 - p0)
			if p <= 0 {
				continue
			}
			m.Faults = append(m.Faults, FaultFit{Replica: r.Replica, Status: st, Probability: p, LatencyMs: latency,
				StartS: (t.Windows[sg.from].Start - t.Windows[0].Start).Seconds(), EndS: (t.Windows[sg.to-1].End - t.Windows[0].Start).Seconds(),
				Why: fmt.Sprintf("a burst: %.0f of %.0f attempts answered %s in these %d windows (the whole-run rule answers its share first)", ks, ns, st, sg.to-sg.from)})
		}
	}
}

// fmtG formats a number with up to 6 significant digits, as TOML accepts
// it (always with a decimal point or exponent).
func fmtG(x float64) string {
	s := strconv.FormatFloat(x, 'g', 6, 64)
	for _, c := range s {
		if c == '.' || c == 'e' || c == 'E' || c == 'n' || c == 'I' {
			return s
		}
	}
	return s + ".0"
}
