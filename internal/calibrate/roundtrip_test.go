package calibrate_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"hedgelab/hedging"
	"hedgelab/internal/calibrate"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// regionLatency records each region's answered attempts' latencies (µs).
type regionLatency map[hedging.Region]*hdr.Histogram

func (r regionLatency) add(ev hedging.AttemptEvent) {
	if ev.Abandoned || ev.Result.Err != nil || ev.Result.Status.Code >= 400 {
		return
	}
	h := r[ev.Attempt.Endpoint.Region]
	if h == nil {
		h = simnet.NewLatencyHistogram()
		r[ev.Attempt.Endpoint.Region] = h
	}
	_ = h.RecordValue(max(int64(ev.Latency/time.Microsecond), 1))
}

// policiesTOML renders a scenario's [[policies]] back as TOML.
func policiesTOML(t testing.TB, s *scenarios.Scenario) string {
	var b strings.Builder
	for _, p := range s.File.Policies {
		fmt.Fprintf(&b, "[[policies]]\nname = %q\ntype = %q\n", p.Name, p.Type)
		opt := func(k string, v *float64) {
			if v != nil {
				fmt.Fprintf(&b, "%s = %v\n", k, *v)
			}
		}
		opt("threshold_ms", p.ThresholdMs)
		opt("min_ms", p.MinMs)
		opt("max_ms", p.MaxMs)
		opt("window_s", p.WindowS)
		opt("quantile", p.Quantile)
		opt("cap_ms", p.CapMs)
		if p.Preset != nil {
			fmt.Fprintf(&b, "preset = %q\n", *p.Preset)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestRoundTripExplore(t *testing.T) {
	name := os.Getenv("RT_SCENARIO")
	if name == "" {
		t.Skip("RT_SCENARIO")
	}
	s, err := scenarios.Get(name)
	if f := os.Getenv("RT_FILE"); f != "" { // a scenario file instead of the embedded one
		data, rerr := os.ReadFile(f)
		if rerr != nil {
			t.Fatal(rerr)
		}
		s, err = scenarios.Parse(f, data)
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg, pols, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	p0 := os.Getenv("RT_POLICY")
	i := slices.IndexFunc(pols, func(p simnet.Policy) bool { return p.Name == p0 })
	if i < 0 {
		t.Fatalf("no policy %q", p0)
	}
	orig := regionLatency{}
	data, _ := simulateTelemetry(t, cfg, pols[i], 10*time.Second, orig.add)
	t.Logf("%d bytes of OTLP JSON", len(data))
	if p := os.Getenv("RT_OTLP"); p != "" {
		_ = os.WriteFile(p, data, 0o644)
	}
	tel, err := calibrate.ReadOTLP("sim.json", data)
	if err != nil {
		t.Fatal(err)
	}
	m, err := calibrate.Fit(tel, calibrate.Options{Name: "rt", Policies: policiesTOML(t, s), Seed: int64(cfg.Seed)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("same_region_rtt_ms %.4f, jitter %.4f ms", m.SameRegionRTTMs, m.JitterMs)
	out, err := m.TOML("rt.toml")
	if err != nil {
		t.Fatal(err)
	}
	if p := os.Getenv("RT_TOML"); p != "" {
		_ = os.WriteFile(p, out, 0o644)
	}
	cs, err := scenarios.Parse("rt.toml", out)
	if err != nil {
		t.Fatal(err)
	}
	ccfg, cpols, err := cs.Config()
	if err != nil {
		t.Fatal(err)
	}
	j := slices.IndexFunc(cpols, func(p simnet.Policy) bool { return p.Name == p0 })
	cal := regionLatency{}
	_, _ = simulateTelemetry(t, ccfg, cpols[j], 10*time.Second, cal.add)
	for reg, h := range orig {
		c := cal[reg]
		if c == nil {
			t.Errorf("%s: no answers in the calibrated run", reg)
			continue
		}
		for _, q := range []float64{50, 99, 99.9} {
			a, b := float64(h.ValueAtQuantile(q)), float64(c.ValueAtQuantile(q))
			t.Logf("%s p%v: %d answers %.0f µs, calibrated %d answers %.0f µs (%+.2f%%)", reg, q, h.TotalCount(), a, c.TotalCount(), b, 100*(b/a-1))
		}
	}
	for k := range pols {
		a, err := simnet.Run(cfg, pols[k], 0, simnet.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := slices.IndexFunc(cpols, func(p simnet.Policy) bool { return p.Name == pols[k].Name })
		b, err := simnet.Run(ccfg, cpols[c], 0, simnet.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-16s p99 %.3f -> %.3f (%+.2f%%)  RU %.4f -> %.4f (%+.2f%%)", pols[k].Name, a.QuantileMs(0.99), b.QuantileMs(0.99), 100*(b.QuantileMs(0.99)/a.QuantileMs(0.99)-1),
			a.RUMultiplier(), b.RUMultiplier(), 100*(b.RUMultiplier()/a.RUMultiplier()-1))
	}
}

// roundTripCase is one embedded scenario of the round trip: its telemetry
// is what a client running policy telemetry exported.
type roundTripCase struct {
	scenario, telemetry string
	// regions: check each region's answered-attempt p50/p99/p99.9 (those
	// with at least 20000 answers) within 2%.
	regions bool
	// wider holds region quantiles (by level, 99 for p99) to a wider
	// tolerance than 2%, with the reason.
	wider map[float64]tolerance
	// unscaled, when not zero, bounds the same_region_rtt_ms calibrate
	// estimates (the scenario's same_region_rtt_ms).
	unscaled [2]float64
	// jitter, when not zero, bounds the exponential jitter's mean (ms)
	// calibrate estimates beside it (the scenario's [network] jitter).
	jitter [2]float64
	// skip names policies not held to 3%, with the reason.
	skip map[string]string
	// unseen, when not zero, bounds the share of the client region's
	// service time calibrate must name as not identifiable (beyond its
	// largest answer, the attempts abandoned there).
	unseen [2]float64
}

// unseenShare returns the share (0–1) of region's service time m names
// among what the telemetry could not tell (unseenTail), -1 if none.
func unseenShare(m *calibrate.Model, region string) float64 {
	for _, u := range m.Unknown {
		if rest, ok := strings.CutPrefix(u, region+"'s service time beyond "); ok {
			var ms, pct float64
			if _, err := fmt.Sscanf(rest, "%g ms: %g%%", &ms, &pct); err == nil {
				return pct / 100
			}
		}
	}
	return -1
}

// bucketResolution bounds how far a region quantile of the answered
// attempts moves when read back through the telemetry's own histogram
// buckets (2^(1/32), 2.2% wide, interpolated linearly), no calibration:
// half a bucket (1.1%) and the reference histogram's own rounding (0.1%).
// What the round trip's 2% rests on; measured within 0.2% at p50 and p99,
// up to -1.06% at p99.9 (healthy's East US).
const bucketResolution = 0.0125

// tolerance is a wider bound on a relative error, and why.
type tolerance struct {
	within float64
	why    string
}

// The round trip (issue 29): simulate an embedded scenario with a virtual
// OTLP exporter on hedgingotel's Observer, calibrate from that OTLP JSON,
// simulate the calibrated scenario: each policy's p99 and RU multiplier
// within 3% of the original's, and (where named) each region's p50, p99
// and p99.9 of the attempt latencies the client observes within 2%.
// Region quantiles compare what the telemetry measures under the
// telemetry's policy (answers only; an abandoned attempt's latency is
// never seen), in both runs.
func TestRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("long: several simulated runs per scenario")
	}
	cases := []roundTripCase{
		{scenario: "healthy", telemetry: "static-20ms", regions: true},
		{scenario: "bimodal", telemetry: "static-20ms", regions: true, skip: map[string]string{
			"static-5ms": "hedges earlier than the telemetry's 20 ms: its p99 is the alternate's tail, seen through 9.9k hedged attempts (+15%)"}},
		// An incident: 338 s of 6x service time (125 s ramp up, 63 s down)
		// and 1% 503s, then a 1.4x tail phase ramping out over 257 s. The
		// other two embedded incidents hide their slow attempts behind the
		// telemetry's threshold (abandoned: +5 s, +10 s), so their episodes
		// are lower bounds; this one's are all answered.
		{scenario: "incident-gcs-2018", telemetry: "static-100ms", regions: true, unscaled: [2]float64{0.45, 0.55}, jitter: [2]float64{0.04, 0.06},
			wider: map[float64]tolerance{99: {0.025, "the run's p99 sits where the ×6 peak's service time leaves its body for its second mode (the baseline's q 0.976 / 0.977 / 0.978: 0.685 / 0.733 / 0.853 ms), where 0.1% of the level moves p99 ~10% (p98.9 4.51, p99 4.88, p99.1 5.46 ms); the buckets carry it (read back without calibration: -0.15%), the jitter's estimate does not quite: its mean 0.0541 ms against the scenario's 0.05 leaves -2.05%; with the scenario's own same_region_rtt_ms 0.5 and jitter 0.05 forced, -0.74%"}}},
		// 8% of the primary's reads +150 ms, the telemetry's threshold 50
		// ms: the slow mode is never answered (the alternate wins at ~80
		// ms), only abandoned, so how slow it is cannot be told from the
		// telemetry (unseenTail). Policies that hedge by ~100 ms hold;
		// those that wait for the slow mode are predicted from the
		// extrapolated tail.
		{scenario: "partial-slowdown", telemetry: "static-50ms", unseen: [2]float64{0.07, 0.09}, skip: map[string]string{
			"disabled":     "waits for the unseen slow mode: 179 ms, predicted from the extrapolated tail 293 ms (+64%)",
			"p99-tps":      "settles on the slow mode and stops hedging it, as disabled (+54%)",
			"finagle-2pct": "its 2% budget leaves part of the slow mode unhedged (+12%, RU +3.6%)",
		}},
	}
	for _, c := range cases {
		t.Run(c.scenario, func(t *testing.T) {
			s, err := scenarios.Get(c.scenario)
			if err != nil {
				t.Fatal(err)
			}
			cfg, pols, err := s.Config()
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(pols, func(p simnet.Policy) bool { return p.Name == c.telemetry })
			orig := regionLatency{}
			data, _ := simulateTelemetry(t, cfg, pols[i], 10*time.Second, orig.add)
			tel, err := calibrate.ReadOTLP(c.scenario+".otlp.json", data)
			if err != nil {
				t.Fatal(err)
			}
			m, err := calibrate.Fit(tel, calibrate.Options{Name: "rt", Policies: policiesTOML(t, s), Seed: int64(cfg.Seed)})
			if err != nil {
				t.Fatal(err)
			}
			out, err := m.TOML("rt.toml")
			if err != nil {
				t.Fatal(err)
			}
			cs, err := scenarios.Parse("rt.toml", out)
			if err != nil {
				t.Fatal(err)
			}
			ccfg, cpols, err := cs.Config()
			if err != nil {
				t.Fatal(err)
			}
			if u := c.unscaled; u[1] > 0 && (m.SameRegionRTTMs < u[0] || m.SameRegionRTTMs > u[1]) {
				t.Errorf("same_region_rtt_ms estimated %.3f, want %.3f–%.3f", m.SameRegionRTTMs, u[0], u[1])
			}
			if u := c.jitter; u[1] > 0 && (m.JitterMs < u[0] || m.JitterMs > u[1]) {
				t.Errorf("jitter mean estimated %.4f ms, want %.3f–%.3f", m.JitterMs, u[0], u[1])
			}
			if u := c.unseen; u[1] > 0 {
				if got := unseenShare(m, cfg.ClientRegion); got < u[0] || got > u[1] {
					t.Errorf("%s's unseen service-time share %.4f (-1: not named), want %.2f–%.2f; unknown: %q", cfg.ClientRegion, got, u[0], u[1], m.Unknown)
				}
			}
			if ccfg.Workload.Partitions != cfg.Workload.Partitions {
				t.Errorf("calibrated %d partitions (%s), the scenario has %d", ccfg.Workload.Partitions, m.PartitionsNote, cfg.Workload.Partitions)
			}
			if c.regions {
				j := slices.IndexFunc(cpols, func(p simnet.Policy) bool { return p.Name == c.telemetry })
				cal := regionLatency{}
				_, _ = simulateTelemetry(t, ccfg, cpols[j], 10*time.Second, cal.add)
				for reg, h := range orig {
					if h.TotalCount() < 20000 {
						t.Logf("%s: %d answers, not held to 2%%", reg, h.TotalCount())
						continue
					}
					bins := pooledAnswers(tel, string(reg))
					for _, q := range []float64{50, 99, 99.9} {
						a, b := float64(h.ValueAtQuantile(q)), float64(cal[reg].ValueAtQuantile(q))
						// The resolution limit: the same attempts read back
						// through the telemetry's buckets, no calibration.
						if r := binQuantile(bins, q/100) * 1000 / a; r > 1+bucketResolution || r < 1-bucketResolution {
							t.Errorf("%s p%v: %.0f µs, through the telemetry's buckets %.0f µs (%+.2f%%)", reg, q, a, r*a, 100*(r-1))
						}
						tol := 0.02
						if w, ok := c.wider[q]; ok {
							tol = w.within
							t.Logf("%s p%v held to %.1f%%: %s", reg, q, 100*tol, w.why)
						}
						if d := b/a - 1; d > tol || d < -tol {
							t.Errorf("%s p%v: %.0f µs, calibrated %.0f µs (%+.2f%%)", reg, q, a, b, 100*d)
						}
					}
				}
			}
			for _, p := range pols {
				if why, ok := c.skip[p.Name]; ok {
					t.Logf("%s not held to 3%%: %s", p.Name, why)
					continue
				}
				a, err := simnet.Run(cfg, p, 0, simnet.RunOptions{})
				if err != nil {
					t.Fatal(err)
				}
				k := slices.IndexFunc(cpols, func(q simnet.Policy) bool { return q.Name == p.Name })
				b, err := simnet.Run(ccfg, cpols[k], 0, simnet.RunOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if d := b.QuantileMs(0.99)/a.QuantileMs(0.99) - 1; d > 0.03 || d < -0.03 {
					t.Errorf("%s: p99 %.3f ms, calibrated %.3f ms (%+.2f%%)", p.Name, a.QuantileMs(0.99), b.QuantileMs(0.99), 100*d)
				}
				if d := b.RUMultiplier()/a.RUMultiplier() - 1; d > 0.03 || d < -0.03 {
					t.Errorf("%s: RU multiplier %.4f, calibrated %.4f (%+.2f%%)", p.Name, a.RUMultiplier(), b.RUMultiplier(), 100*d)
				}
			}
		})
	}
}
