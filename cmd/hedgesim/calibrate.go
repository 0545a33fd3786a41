package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"hedgelab/internal/calibrate"
	"hedgelab/internal/report"
	"hedgelab/scenarios"
)

// calibrateUsage is the help of calibrate.
const calibrateUsage = `Usage: hedgesim calibrate [flags] FILE...

Reads the telemetry a service already exports and writes a scenario that
"hedgesim run" accepts: OpenTelemetry metrics as OTLP JSON (the collector's
file exporter, or go.opentelemetry.io/otel's stdoutmetric exporter) from
hedgingotel's instruments (cosmos.hedge.attempt_latency_ms, operations_total,
alternate_spawned_total, ru_charge_winner), or a CSV of per-request records
with the columns ` + calibrate.CSVColumns + `.
It fits each region's service time (an empirical quantile table from 1000
answers up, a lognormal below), the request rate over time, slow episodes,
fault rates per status, the RU per read and the client's current threshold,
and says in comments what each number was fitted from and what the telemetry
could not tell (RTTs default to the published Azure matrix; capacity is
unknown). Without --out the scenario goes to stdout; warnings go to stderr.

Examples:
  hedgesim calibrate telemetry.json --out my-service.toml
  hedgesim run my-service.toml
  hedgesim calibrate requests.csv --client-region "West Europe" --out my-service.toml

Flags:
`

// calibrateFlags are the flags of calibrate (and whatif).
type calibrateFlags struct {
	name, client, regions, policies string
	partitions                      int
}

func (f *calibrateFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.name, "name", calibrate.DefaultName, "the scenario's name ([a-z0-9-]+; names the results directory)")
	fs.StringVar(&f.client, "client-region", "", "where the client runs (default the telemetry's cloud.region, else the primary region)")
	fs.StringVar(&f.regions, "regions", "", "the preferred read regions in order, comma-separated (default those the telemetry shows, the primary first)")
	fs.StringVar(&f.policies, "policies", "", "a TOML file of [[policies]] to compare instead of the standard roster")
	fs.IntVar(&f.partitions, "partitions", 0, "the workload's partition count (default: counted from cosmos.hedge.consecutive_alternate_wins, else 1, what a RoundTripper without a partition-key header uses)")
}

// fit reads the telemetry files and returns the scenario text.
func (f *calibrateFlags) fit(files []string, stderr io.Writer) ([]byte, error) {
	if f.name == "" { // Fit would read it as its default: say so instead
		return nil, fmt.Errorf("calibrate: --name %q: the scenario needs a name (default %q)", f.name, calibrate.DefaultName)
	}
	tel, err := calibrate.ReadFiles(files)
	if err != nil {
		return nil, err
	}
	opt := calibrate.Options{Name: f.name, ClientRegion: f.client, Partitions: f.partitions}
	if f.regions != "" {
		for _, r := range strings.Split(f.regions, ",") {
			opt.Regions = append(opt.Regions, strings.TrimSpace(r))
		}
	}
	if f.policies != "" {
		data, err := os.ReadFile(f.policies)
		if err != nil {
			return nil, err
		}
		opt.Policies = string(data)
	}
	m, err := calibrate.Fit(tel, opt)
	if err != nil {
		return nil, err
	}
	for _, w := range m.Warnings {
		fmt.Fprintf(stderr, "hedgesim: warning: %s\n", w)
	}
	text, err := m.TOML(f.name + ".toml")
	if err != nil && f.policies != "" {
		// A mistake in the --policies file is the user's, not calibrate's:
		// name that file and its line, not the generated scenario's. The
		// calibrated scenario sets no request timeout (0 = unset).
		pols, perr := scenarios.BuildPolicies(f.policies, []byte(opt.Policies), 0)
		if perr != nil {
			return nil, perr
		}
		for _, p := range pols {
			if p.Name == calibrate.CurrentPolicy {
				return nil, fmt.Errorf("%s: policies.%s: the name %q is the policy calibrate estimates from the telemetry; name yours otherwise", f.policies, p.Name, p.Name)
			}
		}
	}
	return text, err
}

func cmdCalibrate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	var f calibrateFlags
	f.register(fs)
	out := fs.String("out", "", "write the scenario to this file (replaced whole; default stdout)")
	if wantsHelp(args) {
		return writeHelp(stdout, calibrateUsage, fs)
	}
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stderr, "calibrate", err.Error())
	}
	if len(files) == 0 {
		return usageError(stderr, "calibrate", "calibrate needs at least one telemetry FILE")
	}
	text, err := f.fit(files, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "hedgesim: %v\n", err)
		return exitError
	}
	if *out == "" {
		_, _ = stdout.Write(text)
		return exitOK
	}
	if err := report.WriteFileAtomic(*out, text); err != nil {
		fmt.Fprintf(stderr, "hedgesim: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "wrote %s (run it: hedgesim run %s)\n", *out, *out)
	return exitOK
}
