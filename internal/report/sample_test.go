package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteSampleCharts writes a sample run, a sweep and a few edge cases
// for a human to look at:
//
//	HEDGELAB_WRITE_SAMPLE=/tmp/report-sample go test -run TestWriteSampleCharts ./internal/report
func TestWriteSampleCharts(t *testing.T) {
	dir := os.Getenv("HEDGELAB_WRITE_SAMPLE")
	if dir == "" {
		t.Skip("set HEDGELAB_WRITE_SAMPLE=dir to write sample charts")
	}
	runs := map[string]*Run{"run": fakeRun(4, 5), "edge-empty": {Scenario: "empty"}}

	logBars := fakeRun(3, 1)
	logBars.Scenario = "log-bars"
	logBars.Policies[0].P999 = 50000
	logBars.Policies[0].P99 = 4000
	runs["edge-log-bars"] = logBars

	many := fakeRun(4, 1)
	many.Scenario = "many-policies"
	base := many.Policies
	for i := 0; len(many.Policies) < 10; i++ {
		p := base[i%len(base)]
		p.Policy = fmt.Sprintf("%s_variant_with_a_long_name_%d", p.Policy, i)
		p.P99 *= 1 + 0.1*float64(i)
		p.P999 *= 1 + 0.1*float64(i)
		p.RUMultiplier += 0.001 * float64(i)
		many.Policies = append(many.Policies, p)
	}
	runs["edge-many"] = many

	nan := fakeRun(2, 1)
	nan.Scenario = "nan-and-zero"
	nan.Policies[0].P99 = math.NaN()
	nan.Policies[1].CCDF = []Point{{0, 1}, {5, 0}}
	nan.Policies[1].Timeline = nil
	runs["edge-nan"] = nan

	for name, r := range runs {
		paths, err := WriteRun(filepath.Join(dir, name), r, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Log(paths)
	}
	sp, err := WriteSweep(filepath.Join(dir, "sweep"), fakeSweep(1), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(sp)
}
