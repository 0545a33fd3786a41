package calibrate_test

import (
	"bytes"
	"flag"
	"os"
	"slices"
	"testing"
	"time"

	"hedgelab/internal/calibrate"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

var update = flag.Bool("update", false, "rewrite testdata/sample.otlp.json")

// samplePath is the OTLP JSON file the README's two commands start from.
const samplePath = "testdata/sample.otlp.json"

// The README's sample telemetry: what hedgingotel exported (the real
// stdoutmetric exporter, stamped with virtual time every 30 s) from two
// minutes of the embedded scenario "healthy" under a static 20 ms
// threshold. go test -run TestSampleTelemetry -update rewrites it; the
// test checks the committed file is still what the simulation exports and
// that it calibrates into a scenario hedgesim accepts.
func TestSampleTelemetry(t *testing.T) {
	s, err := scenarios.Get("healthy")
	if err != nil {
		t.Fatal(err)
	}
	cfg, pols, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Duration = 2 * time.Minute
	i := slices.IndexFunc(pols, func(p simnet.Policy) bool { return p.Name == "static-20ms" })
	data, _ := simulateTelemetry(t, cfg, pols[i], 30*time.Second, nil)
	if *update {
		if err := os.WriteFile(samplePath, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	committed, err := os.ReadFile(samplePath)
	if err != nil {
		t.Fatal(err)
	}
	// The SDK orders data points as it likes: compare what they calibrate to.
	fit := func(data []byte) (*calibrate.Model, []byte) {
		tel, err := calibrate.ReadOTLP(samplePath, data)
		if err != nil {
			t.Fatal(err)
		}
		m, err := calibrate.Fit(tel, calibrate.Options{Name: "sample"})
		if err != nil {
			t.Fatal(err)
		}
		text, err := m.TOML("sample.toml")
		if err != nil {
			t.Fatal(err)
		}
		return m, text
	}
	m, got := fit(committed)
	if _, want := fit(data); !bytes.Equal(got, want) {
		t.Fatalf("%s no longer calibrates as the simulation's export does: rerun with -update", samplePath)
	}
	if len(m.Regions) != 2 || m.Regions[0].Name != "East US" || m.ClientRegion != "East US" {
		t.Errorf("regions %v, client %q", m.Regions, m.ClientRegion)
	}
	if d := m.RatePerS/500 - 1; d > 0.02 || d < -0.02 {
		t.Errorf("rate %.1f/s, want 500/s within 2%%", m.RatePerS)
	}
}
