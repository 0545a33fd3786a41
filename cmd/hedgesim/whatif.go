package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"time"

	"hedgelab/internal/calibrate"
	"hedgelab/internal/report"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
)

// whatifUsage is the help of whatif.
const whatifUsage = `Usage: hedgesim whatif [flags] TELEMETRY...

Calibrates a scenario from the telemetry files (as "hedgesim calibrate"
does) and runs it with the standard policy roster (the client's current
policy as estimated from its hedge rate, disabled, driver-default,
p99-dynamic, recommended; --policies replaces all but current), printing the
same table and writing the same files and charts as "hedgesim run" into
results/<name>/ (or --out), then a verdict: the recommended policy's
figures against the current one's (with --policies, only if the file has a
policy named "recommended"; "current" is the estimated one's name).

Examples:
  hedgesim whatif telemetry.json
  hedgesim whatif requests.csv --client-region "West Europe" --out /tmp/whatif

Flags:
`

func cmdWhatif(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("whatif", flag.ContinueOnError)
	var cf calibrateFlags
	cf.register(fs)
	var rf runFlags
	rf.register(fs, "output directory (default results/<name>); replaced as a whole by the results")
	if wantsHelp(args) {
		return writeHelp(stdout, whatifUsage, fs)
	}
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stderr, "whatif", err.Error())
	}
	if len(files) == 0 {
		return usageError(stderr, "whatif", "whatif needs at least one telemetry file")
	}
	if err := rf.check(fs); err != nil {
		return usageError(stderr, "whatif", err.Error())
	}
	text, err := cf.fit(files, stderr)
	if err == nil {
		err = whatif(ctx, text, cf.name, &rf, stdout, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "hedgesim: %v\n", err)
		if errors.Is(err, errInterrupted) {
			return exitInterrupted
		}
		return exitError
	}
	return exitOK
}

// whatif runs the calibrated scenario text and prints the table and the
// verdict.
func whatif(ctx context.Context, text []byte, name string, f *runFlags, stdout, stderr io.Writer) error {
	s, err := scenarios.Parse(name+".toml", text)
	if err != nil {
		return err
	}
	dir := outDir(f, s.Name)
	if err := report.CheckOutputDir(dir); err != nil {
		return err
	}
	cfg, pols, reps, err := prepare(s, f, 1)
	if err != nil {
		return err
	}
	printWarnings(stderr, s)
	res, err := simulate(ctx, []study.Input{{Config: cfg, Policies: pols, Replications: reps}}, f, stderr, s.Name)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Name, err)
	}
	rep := study.Report(s.Name, s.Description, cfg, res[0])
	paths, err := report.WriteRun(dir, rep, report.Options{PNG: f.png})
	if err != nil {
		return err
	}
	if f.quiet {
		return nil
	}
	fmt.Fprintf(stdout, "%s (calibrated): seed %d, %s, %s of virtual time\n", s.Name, cfg.Seed,
		report.Replications(reps), study.RunLength(cfg, res[0]).Round(time.Millisecond))
	if err := printTable(stdout, rep.Policies, reps); err != nil {
		return err
	}
	fmt.Fprintln(stdout, wrap(verdict(rep.Policies), legendWidth))
	fmt.Fprintln(stdout)
	printPaths(stdout, dir, paths)
	return nil
}

// verdict compares the recommended policy's figures with the current
// one's.
func verdict(ps []report.PolicyResult) string {
	find := func(name string) (report.Figures, bool) {
		i := slices.IndexFunc(ps, func(p report.PolicyResult) bool { return p.Figures.Policy == name })
		if i < 0 {
			return report.Figures{}, false
		}
		return ps[i].Figures, true
	}
	cur, ok1 := find(calibrate.CurrentPolicy)
	rec, ok2 := find(calibrate.RecommendedPolicy)
	if !ok1 || !ok2 {
		return fmt.Sprintf("No verdict: the policies need %q and %q.", calibrate.CurrentPolicy, calibrate.RecommendedPolicy)
	}
	pct := func(a, b float64) string {
		if a == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%+.1f%%", 100*(b/a-1))
	}
	return fmt.Sprintf("Verdict: %s against %s (your policy as estimated from its hedge rate): p99 %.4g ms against %.4g ms (%s), p99.9 %.4g against %.4g ms (%s), RU multiplier %.4f against %.4f (%+.2f points), hedge rate %.2f%% against %.2f%%, error rate %.3f%% against %.3f%%. The calibrated scenario's comments say what the prediction rests on: a policy that waits longer than the current one is predicted from extrapolated tails.",
		calibrate.RecommendedPolicy, calibrate.CurrentPolicy, rec.P99, cur.P99, pct(cur.P99, rec.P99), rec.P999, cur.P999, pct(cur.P999, rec.P999),
		rec.RUMultiplier, cur.RUMultiplier, 100*(rec.RUMultiplier-cur.RUMultiplier), 100*rec.HedgeRate, 100*cur.HedgeRate, 100*rec.ErrorRate, 100*cur.ErrorRate)
}
