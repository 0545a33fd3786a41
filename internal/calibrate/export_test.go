package calibrate_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/internal/calibrate"
	"hedgelab/scenarios"
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

// An export interval far below the run's length is refused, not written:
// `hedgesim telemetry --interval-s 1e-9` on a 10 s scenario ran out of
// memory on 1e10 cumulative exports (hostile pass).
func TestExportTelemetryBoundsExports(t *testing.T) {
	s, err := scenarios.Parse("x.toml", []byte(exportBoundScenario))
	if err != nil {
		t.Fatal(err)
	}
	cfg, pols, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_, err = calibrate.ExportTelemetry(&out, cfg, pols[0], time.Nanosecond, nil)
	want := fmt.Sprintf("calibrate: exporting telemetry: more than %d exports (one every 1ns of virtual time); raise the interval", calibrate.MaxExports)
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	// An interval that keeps within the limit is exported whole.
	out.Reset()
	const interval = 20 * time.Millisecond
	st, err := calibrate.ExportTelemetry(&out, cfg, pols[0], interval, nil)
	if err != nil {
		t.Fatal(err)
	}
	// One export per interval up to the run's end, and one for the rest.
	exports := int(st.End / interval)
	if st.End%interval != 0 {
		exports++
	}
	if n := bytes.Count(out.Bytes(), []byte("\n")); n != exports {
		t.Errorf("%d exports, want %d (run end %v / %v)", n, exports, st.End, interval)
	}
}

const exportBoundScenario = `name = "x"
seed = 1
duration_s = 10
[client]
region = "East US"
[[endpoints]]
region = "East US"
replica = "a"
[[endpoints]]
region = "East US 2"
replica = "b"
[[replicas]]
name = "a"
region = "East US"
service = { family = "lognormal", median_ms = 1.0, p99_ms = 5.0 }
[[replicas]]
name = "b"
region = "East US 2"
service = { family = "lognormal", median_ms = 1.0, p99_ms = 5.0 }
[network.rtt_ms]
"East US" = { "East US 2" = 8.0 }
"East US 2" = { "East US" = 9.0 }
[workload]
rate_per_s = 2
[[policies]]
name = "s"
type = "static"
threshold_ms = 3
`
