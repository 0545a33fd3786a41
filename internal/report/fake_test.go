package report

import (
	"math"
)

// lognormal-ish latency model used to build fake results.
type lnModel struct{ mu, sigma, capMs float64 }

func (m lnModel) ccdf(x float64) float64 {
	if x <= 0 {
		return 1
	}
	if m.capMs > 0 && x >= m.capMs {
		return 0
	}
	return 0.5 * math.Erfc((math.Log(x)-m.mu)/(m.sigma*math.Sqrt2))
}

func (m lnModel) quantile(q float64) float64 {
	v := math.Exp(m.mu + m.sigma*math.Sqrt2*math.Erfinv(2*q-1))
	if m.capMs > 0 && v > m.capMs {
		v = m.capMs
	}
	return v
}

func fakePolicy(name string, m lnModel, i int, hedge, ru float64, withCI bool, durationS float64, episodes []Episode) PolicyResult {
	const ops = 200000
	f := Figures{
		Policy: name, Ops: ops,
		P50: m.quantile(0.5), P90: m.quantile(0.9), P99: m.quantile(0.99), P999: m.quantile(0.999),
		P9999: m.quantile(0.9999), Max: m.quantile(0.99999),
		Mean:             math.Exp(m.mu + m.sigma*m.sigma/2),
		HedgeRate:        hedge,
		AlternateWinRate: hedge * 0.4,
		RUMultiplier:     ru,
		ErrorRate:        0.0005 * float64(i),
		TerminalStates:   map[string]int64{},
	}
	if hedge == 0 {
		f.TerminalStates["none"] = ops
	} else {
		won := int64(float64(ops) * hedge * 0.4)
		f.TerminalStates["PrimaryWonNoHedge"] = ops - int64(float64(ops)*hedge)
		f.TerminalStates["AlternateWon"] = won
		f.TerminalStates["PrimaryWonAfterHedge"] = int64(float64(ops)*hedge) - won
	}
	if withCI {
		f.CI95 = map[string][2]float64{}
		for k, v := range map[string]float64{"p50_ms": f.P50, "p90_ms": f.P90, "p99_ms": f.P99, "p999_ms": f.P999,
			"p9999_ms": f.P9999, "max_ms": f.Max, "mean_ms": f.Mean, "ru_multiplier": f.RUMultiplier} {
			f.CI95[k] = [2]float64{v * 0.97, v * 1.03}
		}
	}
	pr := PolicyResult{Figures: f}
	// CCDF on a log grid, including an X=0 point and trailing Y=0 points.
	pr.CCDF = append(pr.CCDF, Point{0, 1})
	for x := 0.5; x < 20000; x *= 1.05 {
		y := m.ccdf(x)
		if y < 1.0/ops { // an empirical CCDF stops at 1/N
			y = 0
		}
		pr.CCDF = append(pr.CCDF, Point{x, y})
	}
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 0.9999} {
		pr.Quantiles = append(pr.Quantiles, QuantileRow{q, m.quantile(q)})
	}
	for q := 0.01; q < 0.995; q += 0.01 {
		pr.Quantiles = append(pr.Quantiles, QuantileRow{q, m.quantile(q)})
	}
	const win = 10.0
	for s := 0.0; s < durationS; s += win {
		w := Window{StartS: s, EndS: s + win, Ops: ops / int64(durationS/win), P50Ms: f.P50, P99Ms: f.P99, HedgeRate: hedge}
		if hedge > 0 {
			w.MeanThresholdMs = f.P90
		}
		for _, e := range episodes {
			if s+win > e.StartS && s < e.EndS {
				w.P99Ms *= 3 + float64(i)
				w.P50Ms *= 1.5
			}
		}
		// small deterministic wiggle
		w.P99Ms *= 1 + 0.1*math.Sin(s/37+float64(i))
		if s == 300 {
			w.Ops, w.P50Ms, w.P99Ms = 0, 0, 0 // an empty window breaks the line
		}
		pr.Timeline = append(pr.Timeline, w)
	}
	return pr
}

// fakeRun builds a run with the first n of four policies.
func fakeRun(n int, replications int) *Run {
	eps := []Episode{
		{Label: "eu-west outage", StartS: 200, EndS: 260},
		{Label: "GC storm", StartS: 410, EndS: 430},
		{Label: "failover", StartS: 262, EndS: 275},
	}
	r := &Run{
		Scenario:     "multi-region-outage",
		Description:  "three regions, one fails for a minute",
		Seed:         42,
		Replications: replications,
		DurationS:    600,
		Episodes:     eps,
	}
	specs := []struct {
		name  string
		m     lnModel
		hedge float64
		ru    float64
	}{
		{"disabled", lnModel{math.Log(12), 0.9, 0}, 0, 1.0},
		{"static-200ms", lnModel{math.Log(11.5), 0.75, 0}, 0.012, 1.011},
		{"driver_default", lnModel{math.Log(11), 0.65, 0}, 0.05, 1.047},
		{"p99_dynamic", lnModel{math.Log(11.2), 0.6, 900}, 0.01, 1.009},
	}
	for i := 0; i < n && i < len(specs); i++ {
		s := specs[i]
		r.Policies = append(r.Policies, fakePolicy(s.name, s.m, i, s.hedge, s.ru, replications > 1, r.DurationS, eps))
	}
	return r
}

// fakeSweep varies a static hedging delay.
func fakeSweep(replications int) *Sweep {
	s := &Sweep{Scenario: "multi-region-outage", Param: "hedge_delay_ms", Seed: 7, Replications: replications}
	for _, v := range []float64{25, 50, 100, 200, 400} {
		var ps []PolicyResult
		// hedging earlier costs more RU and cuts the tail more
		for i, name := range []string{"static", "p99_dynamic", "driver_default"} {
			sigma := 0.55 + 0.08*math.Log(v/25) + 0.05*float64(i)
			ru := 1 + 0.08*math.Exp(-v/90)*(1+0.3*float64(i))
			ps = append(ps, fakePolicy(name, lnModel{math.Log(11), sigma, 0}, i, 0.1*math.Exp(-v/100), ru, replications > 1, 60, nil))
		}
		s.Points = append(s.Points, SweepPoint{Value: v, Policies: ps})
	}
	return s
}
