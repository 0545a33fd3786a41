package study_test

import (
	"strconv"
	"testing"
	"time"

	"hedgelab/internal/study"
	"hedgelab/scenarios"
)

// runLengthScenario is a two-region scenario (tiny.toml's shape) with the
// given run-length keys and arrival rate.
func runLengthScenario(t *testing.T, lengthKeys string, ratePerS float64) *scenarios.Scenario {
	t.Helper()
	src := `name = "run-length"
seed = 3
` + lengthKeys + `
[client]
region = "East US"
[account]
write_region = "East US"
[[endpoints]]
region = "East US"
replica = "eastus"
[[endpoints]]
region = "East US 2"
replica = "eastus2"
[[replicas]]
name = "eastus"
region = "East US"
service = { family = "lognormal", median_ms = 2.0, p99_ms = 6.0 }
[[replicas]]
name = "eastus2"
region = "East US 2"
service = { family = "lognormal", median_ms = 2.0, p99_ms = 6.0 }
[network]
same_region_rtt_ms = 1.0
[network.rtt_ms]
"East US" = { "East US 2" = 8.0 }
[workload]
rate_per_s = ` + strconv.FormatFloat(ratePerS, 'f', -1, 64) + `
[[policies]]
name = "disabled"
type = "disabled"
[[policies]]
name = "static-20ms"
type = "static"
threshold_ms = 20
`
	s, err := scenarios.Parse("run-length.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReportUsesActualRunLength: a run ended by max_ops had one timeline
// window (max_ops only) or a timeline and duration_s of the nominal
// duration_s with all data in the first window (duration_s = 1e9). The
// timeline windows and Run.DurationS (summary.json duration_s, the chart
// axes) now follow the run's actual length.
func TestReportUsesActualRunLength(t *testing.T) {
	for _, c := range []struct {
		name           string
		keys           string
		rate           float64
		reps           int
		window         time.Duration
		lengthS        [2]float64 // accepted range of Run.DurationS
		minDataWindows int
	}{
		// 1000 ops at 200/s: ~5 s of arrivals in 1 s windows.
		{"duration 1e9 with max_ops", "duration_s = 1e9\nmax_ops = 1000\n", 200, 1, time.Second, [2]float64{4, 6}, 4},
		// 6000 ops at 5/s: ~1200 s, 10 s windows, two replications merged.
		{"max_ops only", "max_ops = 6000\nreplications = 2\n", 5, 2, 10 * time.Second, [2]float64{1100, 1300}, 100},
		// Duration-bound runs are unchanged: exactly duration_s.
		{"duration only", "duration_s = 30\n", 50, 1, time.Second, [2]float64{30, 30}, 30},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := runLengthScenario(t, c.keys, c.rate)
			cfg, pols, err := s.Config()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.TimelineWindow != c.window {
				t.Errorf("timeline window %v, want %v", cfg.TimelineWindow, c.window)
			}
			res, err := study.Simulate(cfg, pols, c.reps, study.Options{Parallel: 2})
			if err != nil {
				t.Fatal(err)
			}
			r := study.Report(s.Name, "", cfg, res)
			if r.DurationS < c.lengthS[0] || r.DurationS > c.lengthS[1] {
				t.Errorf("duration_s %v, want within %v", r.DurationS, c.lengthS)
			}
			for _, p := range r.Policies {
				data := 0
				for _, w := range p.Timeline {
					if w.Ops > 0 {
						data++
						if w.StartS > r.DurationS {
							t.Errorf("%s: window %v-%v s with %d ops starts after the run's %v s", p.Policy, w.StartS, w.EndS, w.Ops, r.DurationS)
						}
					}
				}
				if data < c.minDataWindows {
					t.Errorf("%s: %d windows with operations, want >= %d", p.Policy, data, c.minDataWindows)
				}
			}
		})
	}
}
