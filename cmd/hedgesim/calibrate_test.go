package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hedgelab/scenarios"
)

const sampleTelemetry = "../../internal/calibrate/testdata/sample.otlp.json"

// The README's two commands: calibrate the sample into a file that run
// accepts; whatif prints the table and a verdict naming both policies.
func TestCLICalibrateAndWhatif(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "my.toml")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"calibrate", sampleTelemetry, "--out", out}, &stdout, &stderr); code != exitOK {
		t.Fatalf("calibrate: exit %d: %s", code, stderr.String())
	}
	if _, err := scenarios.Load(out); err != nil {
		t.Fatal(err)
	}
	// --partitions sets the count; a negative one is refused by name.
	p7 := filepath.Join(dir, "p7.toml")
	if code := run(context.Background(), []string{"calibrate", sampleTelemetry, "--partitions", "7", "--out", p7}, &stdout, &stderr); code != exitOK {
		t.Fatalf("calibrate --partitions 7: exit %d: %s", code, stderr.String())
	}
	if s, err := scenarios.Load(p7); err != nil || s.File.Workload.Partitions != 7 {
		t.Errorf("calibrate --partitions 7: %v, partitions %v", err, s)
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"calibrate", sampleTelemetry, "--partitions", "-1", "--out", filepath.Join(dir, "neg.toml")}, &stdout, &stderr); code != exitError || !strings.Contains(stderr.String(), "--partitions -1") {
		t.Errorf("--partitions -1: exit %d, stderr %q", code, stderr.String())
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"whatif", sampleTelemetry, "--out", filepath.Join(dir, "res"), "--parallel", "1"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("whatif: exit %d: %s", code, stderr.String())
	}
	if s := stdout.String(); !strings.Contains(s, "Verdict: recommended against current") || !strings.Contains(s, "p99") {
		t.Errorf("whatif output: %s", s)
	}
	if _, err := os.Stat(filepath.Join(dir, "res", "ccdf.svg")); err != nil {
		t.Error(err)
	}
	// Bad telemetry: exit 1, the file and line named, nothing written.
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\"resourceMetrics\": 3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"calibrate", bad, "--out", filepath.Join(dir, "x.toml")}, &stdout, &stderr); code != exitError || !strings.Contains(stderr.String(), bad+":1: resourceMetrics") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "x.toml")); err == nil {
		t.Error("a scenario was written for bad telemetry")
	}
}

// A mistake in the --policies file is reported in that file, at its line
// (it was reported as "calibrate wrote a scenario hedgesim does not accept
// (a defect): calibrated.toml:297: ...", a line of a file the user never saw).
func TestCLIWhatifPoliciesFileError(t *testing.T) {
	dir := t.TempDir()
	pols := filepath.Join(dir, "pols.toml")
	if err := os.WriteFile(pols, []byte("[[policies]]\nname = \"s50\"\ntype = \"statik\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{
		{"whatif", sampleTelemetry, "--policies", pols, "--out", filepath.Join(dir, "res"), "-q"},
		{"calibrate", sampleTelemetry, "--policies", pols, "--out", filepath.Join(dir, "c.toml")},
	} {
		_, stderr, code := runCLI(t, cmd...)
		if want := pols + ":3: policies.s50.type: unknown policy type \"statik\""; code != exitError || !strings.Contains(stderr, want) || strings.Contains(stderr, "a defect") {
			t.Errorf("%s: exit %d, stderr %q, want exit 1 and %q", cmd[0], code, stderr, want)
		}
	}
	// A policy named "current" would clash with the estimated one.
	cur := filepath.Join(dir, "cur.toml")
	if err := os.WriteFile(cur, []byte("[[policies]]\nname = \"current\"\ntype = \"disabled\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, "calibrate", sampleTelemetry, "--policies", cur, "--out", filepath.Join(dir, "c.toml"))
	if want := cur + ": policies.current: the name \"current\" is the policy calibrate estimates"; code != exitError || !strings.Contains(stderr, want) {
		t.Errorf("policy named current: exit %d, stderr %q, want %q", code, stderr, want)
	}
	for _, p := range []string{"res", "c.toml"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s written for a bad --policies file", p)
		}
	}
}

// The README's path without a service: telemetry exports a simulation's
// OTLP JSON, calibrate fits it, run charts the calibrated scenario; an
// unknown policy is refused by name and writes nothing.
func TestCLITelemetryCalibrateRun(t *testing.T) {
	if testing.Short() {
		t.Skip("long: three simulated runs")
	}
	dir := t.TempDir()
	tel, toml := filepath.Join(dir, "tel.json"), filepath.Join(dir, "my.toml")
	var stdout, stderr bytes.Buffer
	ctx := context.Background()
	if code := run(ctx, []string{"telemetry", "healthy", "--policy", "static-20ms", "--out", tel}, &stdout, &stderr); code != exitOK {
		t.Fatalf("telemetry: exit %d: %s", code, stderr.String())
	}
	if code := run(ctx, []string{"calibrate", tel, "--out", toml}, &stdout, &stderr); code != exitOK {
		t.Fatalf("calibrate: exit %d: %s", code, stderr.String())
	}
	if code := run(ctx, []string{"run", toml, "--out", filepath.Join(dir, "res"), "-q", "--parallel", "1"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "res", "ccdf.svg")); err != nil {
		t.Error(err)
	}
	stderr.Reset()
	x := filepath.Join(dir, "x.json")
	if code := run(ctx, []string{"telemetry", "healthy", "--policy", "nope", "--out", x}, &stdout, &stderr); code != exitError || !strings.Contains(stderr.String(), `no policy "nope"`) {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	if _, err := os.Stat(x); err == nil {
		t.Error("telemetry was written for an unknown policy")
	}
}

// --interval-s is refused by name when it does not make a time from 1 ns to
// scenarios.MaxSeconds (hostile pass: inf and 1e308 overflowed to a negative
// interval, 1e-300 truncated to 0 s), and when it makes more exports than
// calibrate.MaxExports (1e-9 on a 10 s run ran out of memory); no file is
// written.
func TestCLITelemetryInterval(t *testing.T) {
	dir := t.TempDir()
	x := filepath.Join(dir, "x.json")
	for _, c := range []struct {
		interval string
		code     int
		want     string
	}{
		{"inf", exitUsage, "--interval-s must be from 1e-09 to 1e+09 s, got +Inf"},
		{"1e308", exitUsage, "--interval-s must be from 1e-09 to 1e+09 s, got 1e+308"},
		{"1e-300", exitUsage, "--interval-s must be from 1e-09 to 1e+09 s, got 1e-300"},
		{"-1", exitUsage, "--interval-s must be from 1e-09 to 1e+09 s, got -1"},
		{"1e-6", exitError, "tiny: calibrate: exporting telemetry: more than 10000 exports (one every 1µs of virtual time); raise the interval"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"telemetry", "tiny", "--interval-s", c.interval, "--out", x}, &stdout, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("--interval-s %s: exit %d, stderr %q; want exit %d, %q", c.interval, code, stderr.String(), c.code, c.want)
		}
		if _, err := os.Stat(x); err == nil {
			t.Fatalf("--interval-s %s: telemetry written", c.interval)
		}
	}
}
