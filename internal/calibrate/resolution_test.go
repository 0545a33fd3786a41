package calibrate_test

import (
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"hedgelab/internal/calibrate"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// pooledAnswers is every window's answered-attempt bins of one region
// (statuses below 400), the telemetry's view of what regionLatency
// records exactly.
func pooledAnswers(tel *calibrate.Telemetry, region string) []calibrate.Bin {
	var out []calibrate.Bin
	for _, w := range tel.Windows {
		for s, bins := range w.Attempts {
			if s.Region != region || s.Status == "abandoned" || s.Status == "transport_error" || s.Status == "local_throttle" {
				continue
			}
			code, _, _ := strings.Cut(s.Status, "/")
			if c, _ := strconv.Atoi(code); c >= 400 {
				continue
			}
			out = append(out, bins...)
		}
	}
	return out
}

// binQuantile reads the q quantile (0–1) of bins the way a histogram is
// read: uniform density within a bin, linear interpolation. Bins may
// repeat (windows); they are merged by edges.
func binQuantile(bins []calibrate.Bin, q float64) float64 {
	type key struct{ lo, hi float64 }
	m := map[key]float64{}
	var n float64
	for _, b := range bins {
		m[key{b.Lo, b.Hi}] += b.N
		n += b.N
	}
	ks := make([]key, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].hi < ks[j].hi })
	target, cum := q*n, 0.0
	for _, k := range ks {
		c := m[k]
		if cum+c >= target {
			return k.lo + (k.hi-k.lo)*(target-cum)/c
		}
		cum += c
	}
	return math.NaN()
}

// TestResolutionExplore prints, for RT_SCENARIO under RT_POLICY, each
// region's raw answered-attempt quantiles against the same attempts read
// back through the telemetry's histogram buckets (no calibration), and
// the raw quantiles at neighbouring levels: how far the buckets alone
// move a quantile.
func TestResolutionExplore(t *testing.T) {
	name := os.Getenv("RT_SCENARIO")
	if name == "" {
		t.Skip("RT_SCENARIO")
	}
	s, err := scenarios.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, pols, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	var p simnet.Policy
	for _, q := range pols {
		if q.Name == os.Getenv("RT_POLICY") {
			p = q
		}
	}
	orig := regionLatency{}
	data, _ := simulateTelemetry(t, cfg, p, 10*time.Second, orig.add)
	tel, err := calibrate.ReadOTLP("sim.json", data)
	if err != nil {
		t.Fatal(err)
	}
	for reg, h := range orig {
		bins := pooledAnswers(tel, string(reg))
		for _, q := range []float64{50, 97.6, 97.8, 98.5, 98.9, 99, 99.1, 99.5, 99.9} {
			raw := float64(h.ValueAtQuantile(q)) / 1000
			b := binQuantile(bins, q/100)
			t.Logf("%s p%v: raw %.4f ms, through the buckets %.4f ms (%+.2f%%)", reg, q, raw, b, 100*(b/raw-1))
		}
	}
}
