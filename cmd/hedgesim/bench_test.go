package main

import (
	"context"
	"io"
	"syscall"
	"testing"
)

// BenchmarkDefaultScenario runs the main job (the embedded default
// scenario, all policies and replications, all files written) and reports
// its wall time per run and the process's peak resident memory.
func BenchmarkDefaultScenario(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		if code := run(context.Background(), []string{"run", "default", "--out", dir, "-q"}, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
	}
}
