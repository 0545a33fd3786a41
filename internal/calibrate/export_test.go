package calibrate_test

import (
	"bytes"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/internal/calibrate"
	"hedgelab/simnet"
)

// simulateTelemetry runs cfg under policy p with calibrate.ExportTelemetry
// and returns the OTLP JSON it wrote and the run's stats.
func simulateTelemetry(t testing.TB, cfg *simnet.Config, p simnet.Policy, interval time.Duration, attempts func(hedging.AttemptEvent)) ([]byte, *simnet.Stats) {
	var out bytes.Buffer
	st, err := calibrate.ExportTelemetry(&out, cfg, p, interval, attempts)
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), st
}
