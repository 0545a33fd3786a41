package scenarios_test

// Issue 17: the second set of threshold-policy cases (README "Second set").
// Each file is run as written plus the policies appended by caseExtras —
// the recommended policy, and the budget and breaker settings that fix the
// kind — and checked against what its README row asks, with the value.

import (
	"slices"
	"strings"

	"hedgelab/simnet"
)

// secondSet names the issue-17 cases: their margins are on the new policy
// and settings, so the TPS-literal rerun of the first set does not apply.
var secondSet = map[string]bool{
	"correlated-both-slow": true, "heavy-everywhere": true, "deadline-below-floor": true, "flap-60s": true,
	"warmup-bias": true, "warmup-bias-1k": true, "cold-fleet": true, "budget-onset": true, "budget-fallback": true,
	"fleet-10000-burst": true, "gc-pause-hot-partition": true,
}

const recommendedEntry = "\n[[policies]]\nname = \"recommended\"\ntype = \"recommended\"\n"

// caseExtras are appended to a case file before it is parsed.
var caseExtras = map[string]string{
	"correlated-both-slow": recommendedEntry,
	"heavy-everywhere":     recommendedEntry,
	"deadline-below-floor": recommendedEntry,
	"flap-60s":             recommendedEntry,
	"warmup-bias":          recommendedEntry,
	"warmup-bias-1k":       recommendedEntry,
	"cold-fleet":           recommendedEntry,
	"budget-fallback": recommendedEntry + `
[[policies]]
name = "recommended-b10"
type = "recommended"
hedge_budget = 0.10
[[policies]]
name = "driver-default-b10"
type = "driver_default"
hedge_budget = 0.10
`,
	// A budget sized in seconds of each instance's own budget, so the
	// fleet's burst is bounded by its rate, not its instance count.
	"fleet-10000-burst": `
[[policies]]
name = "static-50-b5-2s"
type = "static"
threshold_ms = 50
hedge_budget = 0.05
hedge_budget_burst_s = 2
[[policies]]
name = "recommended-b5-2s"
type = "recommended"
hedge_budget = 0.05
hedge_budget_burst_s = 2
`,
	"gc-pause-hot-partition": recommendedEntry,
}

// casePatches rewrite a case file's text (old, new) before the extras.
// gc-pause-hot-partition runs as written: the breaker's default minimum
// span (hedging.DefaultHedgeWinMinSpan, 1 s) is what fixes it.
var casePatches = map[string][2]string{}

// caseUses lists the policies a case's check reads (nil = all), so the
// long cases simulate only those.
var caseUses = map[string][]string{
	"fleet-10000-burst":      {"disabled", "budget-5pct-burst1", "static-50-b5-2s", "recommended-b5-2s"},
	"gc-pause-hot-partition": {"disabled", "p99-dynamic", "recommended"},
	"heavy-everywhere":       {"disabled", "p99", "recommended"},
	"correlated-both-slow":   {"disabled", "p99-dynamic", "recommended"},
	"flap-60s":               {"disabled", "static-50ms", "p99-dynamic", "recommended"},
}

// withExtras returns a case file with its patch and extras applied.
func withExtras(name string, data []byte) []byte {
	s := string(data)
	if p, ok := casePatches[name]; ok {
		s = strings.Replace(s, p[0], p[1], 1)
	}
	return []byte(s + caseExtras[name])
}

func errRate(s *simnet.Stats) float64 { return libBRate(s.Errors, s.Ops) }

// hedgeRateIn is s's hedge rate over the timeline windows in [from, to) s.
func hedgeRateIn(s *simnet.Stats, from, to float64) float64 {
	ops, _, hedged, _, _ := libBWindows(s, from, to)
	return libBRate(hedged, ops)
}

func init() {
	for name, c := range map[string]policyCase{
		// No hedge can win: RU within 2 points of disabled's at the same
		// p99 (p99_dynamic today: RU 1.085).
		"correlated-both-slow": func(m map[string]*simnet.Stats) (bad []string) {
			r, d := m["recommended"], m["disabled"]
			if r.RUMultiplier() > d.RUMultiplier()+0.02 {
				bad = append(bad, sprintf("recommended RU %.3f, disabled %.3f: want within 0.02", r.RUMultiplier(), d.RUMultiplier()))
			}
			if p, q := r.QuantileMs(0.99), d.QuantileMs(0.99); p > 1.1*q {
				bad = append(bad, sprintf("recommended p99 %.1f ms, disabled %.1f ms: want within 10%%", p, q))
			}
			return bad
		},
		// Heavy queries everywhere: RU within 2 points of disabled's
		// unless hedging buys >= 10% of p99 (p99_dynamic: RU 1.343).
		"heavy-everywhere": func(m map[string]*simnet.Stats) (bad []string) {
			r, d := m["recommended"], m["disabled"]
			if r.RUMultiplier() > d.RUMultiplier()+0.02 && r.QuantileMs(0.99) > 0.9*d.QuantileMs(0.99) {
				bad = append(bad, sprintf("recommended RU %.3f (disabled %.3f) for p99 %.1f ms (disabled %.1f)",
					r.RUMultiplier(), d.RUMultiplier(), r.QuantileMs(0.99), d.QuantileMs(0.99)))
			}
			return bad
		},
		// Deadline 40 ms below the 50 ms floor: errors within 1 point of
		// the best policy (p99_dynamic today: 6.00%).
		"deadline-below-floor": func(m map[string]*simnet.Stats) (bad []string) {
			best := 1.0
			for _, s := range m {
				best = min(best, errRate(s))
			}
			if e := errRate(m["recommended"]); e > best+0.01 {
				bad = append(bad, sprintf("recommended errors %.2f%%, best %.2f%%", 100*e, 100*best))
			}
			return bad
		},
		// Flapping slow-down: not dominated — p99 within 10% of
		// static-50ms's, or RU within 2 points of disabled's at a p99 no
		// worse than disabled's (p99_dynamic: 92.2 ms against 80.75 and
		// 2.7 RU points for 1 ms over disabled).
		"flap-60s": func(m map[string]*simnet.Stats) (bad []string) {
			r, s, d := m["recommended"], m["static-50ms"], m["disabled"]
			p := r.QuantileMs(0.99)
			if p > 1.1*s.QuantileMs(0.99) && (r.RUMultiplier() > d.RUMultiplier()+0.02 || p > d.QuantileMs(0.99)) {
				bad = append(bad, sprintf("recommended p99 %.1f ms RU %.3f: static-50ms %.1f ms, disabled %.1f ms RU %.3f",
					p, r.RUMultiplier(), s.QuantileMs(0.99), d.QuantileMs(0.99), d.RUMultiplier()))
			}
			return bad
		},
		// Warm-up by time: the first second's hedge rate within 1 point
		// of the steady rate (p99_dynamic at 100k ops/s: 53% then ~5%).
		"warmup-bias":    warmupCheck(2, 4),
		"warmup-bias-1k": warmupCheck(100, 400),
		// A fresh fleet 200 ms from its primary: at most 2% hedged in the
		// first 2 s (p99_dynamic: 20%).
		"cold-fleet": func(m map[string]*simnet.Stats) (bad []string) {
			if h := hedgeRateIn(m["recommended"], 0, 2); h > 0.02 {
				bad = append(bad, sprintf("recommended hedges %.2f%% in the first 2 s, want <= 2%%", 100*h))
			}
			return bad
		},
		// Admission and charge at one point: no 0.5 s window exceeds
		// ratio × operations + burst (before: 601 against ~227), and the
		// budget delivers >= 4.5% of its 5% while the slow reads last.
		"budget-onset": func(m map[string]*simnet.Stats) (bad []string) {
			for name, b := range map[string][2]float64{"static-100-b5": {0.05, 100}, "grpc-throttle": {0.05, 200}} {
				s := m[name]
				for i, w := range s.Timeline {
					if lim := b[0]*float64(w.Ops) + b[1]; float64(w.Hedged) > lim {
						bad = append(bad, sprintf("%s window %d: %d alternates of %d operations, bound %.0f", name, i, w.Hedged, w.Ops, lim))
					}
				}
			}
			if h := hedgeRateIn(m["static-100-b5"], 10, 20); h < 0.045 {
				bad = append(bad, sprintf("static-100-b5 hedges %.2f%% of reads in the slow-down, want >= 4.5%%", 100*h))
			}
			return bad
		},
		// A budget caps extra load whatever the threshold: RU <= 1 + ratio
		// + 0.01 for every budgeted policy (before: 1.750 for 25% and 10%).
		"budget-fallback": func(m map[string]*simnet.Stats) (bad []string) {
			for name, ratio := range map[string]float64{"static-50-b10": 0.10, "static-1500-b25": 0.25, "static-1500-b10": 0.10,
				"recommended-b10": 0.10, "driver-default-b10": 0.10} {
				if ru := m[name].RUMultiplier(); ru > 1+ratio+0.01 {
					bad = append(bad, sprintf("%s RU %.3f > 1 + %g + 0.01", name, ru, ratio))
				}
			}
			slices.Sort(bad)
			return bad
		},
		// A budget sized in seconds of each instance's budget bounds the
		// fleet's burst at 10000 instances: alternate < 90% in every window
		// and tenants' p99 within 10% of disabled's (burst 1 per instance:
		// 99.2%, 64 ms against 14.2).
		"fleet-10000-burst": func(m map[string]*simnet.Stats) (bad []string) {
			_, base := altFigures(m["disabled"])
			for _, name := range []string{"static-50-b5-2s", "recommended-b5-2s"} {
				util, p99 := altFigures(m[name])
				if u := slices.Max(util); u >= 0.90 {
					bad = append(bad, sprintf("%s: alternate at %.1f%% in a window, want < 90%%", name, 100*u))
				}
				if p99 > 1.1*base {
					bad = append(bad, sprintf("%s: tenants' p99 %.1f ms, disabled %.1f ms: want within 10%%", name, p99, base))
				}
			}
			// ... and still delivers its budget at 0.2 operations/s per
			// instance: >= 4% of the slow-down's reads hedged (before: 1.28%,
			// a bucket of 0.05 tokens dropped what it earned while full).
			if h := hedgeRateIn(m["static-50-b5-2s"], 90, 210); h < 0.04 {
				bad = append(bad, sprintf("static-50-b5-2s hedges %.2f%% of the slow-down's reads, want >= 4%% of its 5%%", 100*h))
			}
			return bad
		},
		// Q7 with the default 1 s minimum span: < 1 false trip per
		// instance-hour and p99 within 5% of disabled's (no trip, no
		// hedge) at N = 3 (count only: 216 trips per hour, +36%).
		"gc-pause-hot-partition": func(m map[string]*simnet.Stats) (bad []string) {
			base := m["disabled"].QuantileMs(0.99)
			for _, name := range []string{"p99-dynamic", "recommended"} {
				s := m[name]
				hours := 3 * float64(len(s.Timeline)) * s.WindowWidth.Hours() // 3 replications
				if tr := float64(s.BreakerTrips) / hours; tr >= 1 {
					bad = append(bad, sprintf("%s: %.1f breaker trips per instance-hour, want < 1", name, tr))
				}
				if p := s.QuantileMs(0.99); p > 1.05*base {
					bad = append(bad, sprintf("%s: p99 %.2f ms, disabled %.2f ms: want within 5%%", name, p, base))
				}
			}
			return bad
		},
	} {
		policyCases[name] = c
	}
}

// warmupCheck: the kind is a first estimate biased by arrival rate, which
// hedged 53% of the first second at 100k ops/s against ~5% later. The
// recommended policy has no target share (it hedges what pays, ~22% here),
// so its first second must not hedge more than 1 point above its steady
// rate over [from, to) s, nor fall below 3/4 of it (its estimate still
// settling; measured 18.1% against 21.5% at 100k ops/s).
func warmupCheck(from, to float64) policyCase {
	return func(m map[string]*simnet.Stats) (bad []string) {
		r := m["recommended"]
		first, steady := hedgeRateIn(r, 0, 1), hedgeRateIn(r, from, to)
		if first > steady+0.01 || first < 0.75*steady {
			bad = append(bad, sprintf("recommended hedges %.2f%% in the first second, %.2f%% from %g s: want in [3/4 of it, it + 1 point]", 100*first, 100*steady, from))
		}
		return bad
	}
}

// altFigures returns the alternate's (eastus2) utilisation per window and
// its tenants' p99 (ms).
func altFigures(s *simnet.Stats) ([]float64, float64) {
	c := s.Capacity
	i := slices.IndexFunc(c.Replicas, func(r simnet.ReplicaStats) bool { return r.Name == "eastus2" })
	return c.WindowUtilisation(i, s.WindowWidth), c.BackgroundQuantileMs(i, 0.99)
}
