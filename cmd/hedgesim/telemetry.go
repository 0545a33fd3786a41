package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"slices"
	"time"

	"hedgelab/internal/calibrate"
	"hedgelab/internal/report"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// telemetryUsage is the help of telemetry.
const telemetryUsage = `Usage: hedgesim telemetry [flags] FILE|NAME --out FILE.json

Simulates one scenario under one of its policies (replication 0) and writes
the telemetry a client running that workload would have exported: hedgingotel's
OpenTelemetry metrics as OTLP JSON (the stdoutmetric exporter's lines), one
cumulative export every --interval-s of virtual time from 2026-07-01T00:00:00Z.
"hedgesim calibrate" and "hedgesim whatif" read it, so both can be tried
without a service. The file is replaced whole, or not written on an error.

Examples:
  hedgesim telemetry incident-gcs-2018 --policy static-100ms --out tel.json
  hedgesim calibrate tel.json --out my-service.toml && hedgesim run my-service.toml

Flags:
`

func cmdTelemetry(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("telemetry", flag.ContinueOnError)
	out := fs.String("out", "", "the OTLP JSON file to write (required; replaced whole)")
	policy := fs.String("policy", "", "the policy the simulated client runs (default the scenario's first)")
	interval := fs.Float64("interval-s", 10, fmt.Sprintf("the export interval, virtual seconds (1e-9 to 1e9; at most %d exports a run)", calibrate.MaxExports))
	if wantsHelp(args) {
		return writeHelp(stdout, telemetryUsage, fs)
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stderr, "telemetry", err.Error())
	}
	if len(pos) != 1 {
		return usageError(stderr, "telemetry", "telemetry needs exactly one scenario FILE|NAME")
	}
	if *out == "" {
		return usageError(stderr, "telemetry", "telemetry needs --out FILE")
	}
	if !(*interval >= 1e-9 && *interval <= scenarios.MaxSeconds) {
		return usageError(stderr, "telemetry", fmt.Sprintf("--interval-s must be from 1e-09 to %g s, got %v", float64(scenarios.MaxSeconds), *interval))
	}
	s, err := load(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "hedgesim: %v\n", err)
		return exitError
	}
	cfg, pols, err := s.Config()
	if err != nil {
		fmt.Fprintf(stderr, "hedgesim: %v\n", err)
		return exitError
	}
	i := 0
	if *policy != "" {
		i = slices.IndexFunc(pols, func(p simnet.Policy) bool { return p.Name == *policy })
		if i < 0 {
			names := make([]string, len(pols))
			for k, p := range pols {
				names[k] = p.Name
			}
			fmt.Fprintf(stderr, "hedgesim: %s: no policy %q (it has %v)\n", pos[0], *policy, names)
			return exitError
		}
	}
	var buf bytes.Buffer
	if _, err := calibrate.ExportTelemetry(&buf, cfg, pols[i], time.Duration(*interval*float64(time.Second)), nil); err != nil {
		fmt.Fprintf(stderr, "hedgesim: %s: %v\n", pos[0], err)
		return exitError
	}
	if err := report.WriteFileAtomic(*out, buf.Bytes()); err != nil {
		fmt.Fprintf(stderr, "hedgesim: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "wrote %s (%s under %s; calibrate it: hedgesim calibrate %s --out calibrated.toml)\n", *out, pos[0], pols[i].Name, *out)
	return exitOK
}
