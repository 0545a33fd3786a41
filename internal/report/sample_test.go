package report

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteSampleCharts writes a sample run and sweep for a human to look
// at: HEDGELAB_WRITE_SAMPLE=/tmp/report-sample go test -run TestWriteSampleCharts ./internal/report
func TestWriteSampleCharts(t *testing.T) {
	dir := os.Getenv("HEDGELAB_WRITE_SAMPLE")
	if dir == "" {
		t.Skip("set HEDGELAB_WRITE_SAMPLE=dir to write sample charts")
	}
	paths, err := WriteRun(filepath.Join(dir, "run"), fakeRun(4, 5))
	if err != nil {
		t.Fatal(err)
	}
	sp, err := WriteSweep(filepath.Join(dir, "sweep"), fakeSweep(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(paths, sp...) {
		t.Log(p)
	}
}
