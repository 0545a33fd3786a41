package scenarios_test

// Issue 17's scorecard on the scenarios the recommended policy lost before
// its third revision: each file is run with the recommended policy and the
// policies that dominated it, and scored with internal/study's one
// definition (study.Losses), so "not dominated" means what the notebook
// and cmd/scorecard mean by it.

import (
	"os"
	"strings"
	"testing"

	"hedgelab/internal/report"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
)

// Rivals of the recommended policy, under names the files do not use.
const (
	rivalStatic50 = "\n[[policies]]\nname = \"rival-static-50ms\"\ntype = \"static\"\nthreshold_ms = 50\n"
	rivalDisabled = "\n[[policies]]\nname = \"rival-disabled\"\ntype = \"disabled\"\n"
	rivalDriver   = "\n[[policies]]\nname = \"rival-driver-default\"\ntype = \"driver_default\"\n"
	rivalP99      = "\n[[policies]]\nname = \"rival-p99-dynamic\"\ntype = \"p99_dynamic\"\n"
)

func TestRecommendedNotDominatedOnFormerLosses(t *testing.T) {
	for _, c := range []struct {
		file, rivals string
		// keep lists the file's own policies simulated (nil: none).
		keep []string
		// patch rewrites the file (old, new pairs) to keep the test short.
		patch  []string
		before string // the loss before, for the failure message
	}{
		// A 1% slow mode (1-3 s) among a query's 100 leaves: the leaf's p99
		// sits at the slow mode's edge.
		{file: "feed-fan-out", rivals: rivalStatic50 + rivalP99,
			before: "p99 198.5 ms vs static-50ms 140.0 ms"},
		// A fresh instance's first page hits a stale cache; each of 1000
		// instances runs ~1 query.
		{file: "feed-metadata-latest", rivals: rivalStatic50,
			before: "p99 4059.1 ms vs static-50ms 3110.9 ms"},
		// 20 instances at ~6 pages/s each: the prior took the alternate
		// (8 ms farther) to be as fast as the primary's faster half.
		{file: "feed-cold-metadata", rivals: rivalDriver + rivalDisabled, keep: []string{"static-50ms"},
			before: "RU 1.046 vs static-50ms 1.000 at the same p99"},
		// A client throughput-control gate below the offered load, and a
		// partial slow-down: 300 s (gate only for 100 s, then the episode)
		// instead of 900 s, one replication instead of three.
		{file: "throughput-control", keep: []string{"disabled", "static-100ms", "p99-tps"},
			patch:  []string{"duration_s = 900", "duration_s = 300", "replications = 3", "replications = 1", "start_s = 200\nend_s = 700", "start_s = 100\nend_s = 300"},
			before: "errors 15.33% vs disabled 9.94%"},
	} {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(c.file + ".toml")
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			for i := 0; i+1 < len(c.patch); i += 2 {
				if !strings.Contains(text, c.patch[i]) {
					t.Fatalf("patch %q: not in the file", c.patch[i])
				}
				text = strings.Replace(text, c.patch[i], c.patch[i+1], 1)
			}
			if i := strings.Index(text, "\n[[policies]]"); i >= 0 {
				text = text[:i] // the file's own policies are added back by keep
			}
			own := ""
			for _, k := range c.keep {
				own += policyTOML(t, string(data), k)
			}
			s, err := scenarios.Parse(c.file+".toml", []byte(text+own+c.rivals+recommendedEntry))
			if err != nil {
				t.Fatal(err)
			}
			cfg, pols, err := s.Config()
			if err != nil {
				t.Fatal(err)
			}
			res, err := study.Simulate(cfg, pols, s.Replications, study.Options{})
			if err != nil {
				skipOpenDefect(t, err)
				t.Fatal(err)
			}
			var figs []report.Figures
			for _, p := range res.Policies {
				figs = append(figs, study.Figures(p))
			}
			losses, err := study.Losses(figs, "recommended")
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range figs {
				t.Logf("%-22s p99 %7.1f ms RU %.3f errors %.2f%%", f.Policy, f.P99, f.RUMultiplier, 100*f.ErrorRate)
			}
			for _, l := range losses {
				t.Errorf("recommended loses (before: %s): %s %s", c.before, l.By, l.Why)
			}
		})
	}
}

// policyTOML returns the [[policies]] table named name in a scenario
// file's text.
func policyTOML(t *testing.T, text, name string) string {
	t.Helper()
	for _, part := range strings.Split(text, "\n[[policies]]")[1:] {
		if strings.Contains(part, "name = \""+name+"\"") {
			return "\n[[policies]]" + part
		}
	}
	t.Fatalf("no policy %q in the file", name)
	return ""
}
