package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"hedgelab/internal/report"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

const sweepUsage = `Usage: hedgesim sweep [flags] FILE|NAME --param PATH=FROM:TO:STEP

Runs the scenario once per parameter value (FROM, FROM+STEP, ... <= TO),
prints one table (a row per value and policy) and writes sweep.csv,
sweep.json and charts (sweep_p99, sweep_cost; SVG, PNG too with --png) into
results/<scenario-name>-sweep-<param>/ (or --out), replaced as a whole.
With --shard I/N it runs only shard I of N of the sweep's runs (points ×
policies × replications) and writes that shard's partial result into --out
(default results/<scenario-name>-sweep-<param>-shard-I-of-N); "hedgesim
merge DIR..." then writes, from all N partials, the sweep's files, byte
for byte.

PATH is a dotted path into the scenario file; elements of [[policies]],
[[replicas]] and the like are addressed by name or by 0-based index. When
PATH is a policy's parameter (policies.NAME.KEY), only that policy is
simulated, and the table labels it by its swept value. One --param per
sweep.

Examples:
  hedgesim sweep default --param policies.static-100ms.threshold_ms=20:200:20
  hedgesim sweep tiny --param policies.1.threshold_ms=10:30:10
  hedgesim sweep breaker-trip --param client.consecutive_hedge_win_threshold=1:10:1
  hedgesim sweep saturation --param workload.rate_per_s=500:900:100 -q
  hedgesim sweep default --param policies.static-100ms.threshold_ms=20:200:20 --shard 0/4 --out parts/0

Flags:
`

func cmdSweep(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f runFlags
	f.register(fs, "output directory (default results/<scenario-name>-sweep-<param>); replaced as a whole by the results; with --shard, the directory of the shard's partial result")
	var param string
	fs.Func("param", "PATH=FROM:TO:STEP, e.g. policies.static-100ms.threshold_ms=50:1000:50 (once)", func(v string) error {
		if param != "" {
			return fmt.Errorf("given twice (%q and %q): a sweep varies one parameter", param, v)
		}
		param = v
		return nil
	})
	printUsage := func(w io.Writer) {
		writeHelp(w, sweepUsage, fs)
		fs.SetOutput(stderr)
	}
	if wantsHelp(args) {
		printUsage(stdout)
		return exitOK
	}
	names, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stderr, "sweep", err.Error())
	}
	switch {
	case len(names) == 0:
		return usageError(stderr, "sweep", "sweep needs one scenario (a FILE or an embedded NAME), got none")
	case len(names) > 1:
		return usageError(stderr, "sweep", fmt.Sprintf("sweep needs one scenario (a FILE or an embedded NAME), got %d: %q", len(names), names))
	case param == "":
		return usageError(stderr, "sweep", "sweep needs --param PATH=FROM:TO:STEP")
	}
	path, values, err := parseSweep(param)
	if err != nil {
		return usageError(stderr, "sweep", "--param: "+err.Error())
	}
	if err := f.check(fs); err != nil {
		return usageError(stderr, "sweep", err.Error())
	}
	if err := sweepOne(ctx, names[0], param, path, values, &f, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "hedgesim: %v\n", err)
		if errors.Is(err, errInterrupted) {
			return exitInterrupted
		}
		return exitError
	}
	return exitOK
}

// maxSweepPoints bounds a sweep.
const maxSweepPoints = 1000

// parseSweep parses PATH=FROM:TO:STEP into the path and the values.
func parseSweep(s string) (string, []float64, error) {
	path, rng, ok := strings.Cut(s, "=")
	if !ok || path == "" {
		return "", nil, fmt.Errorf("want PATH=FROM:TO:STEP, got %q", s)
	}
	parts := strings.Split(rng, ":")
	if len(parts) != 3 {
		return "", nil, fmt.Errorf("want FROM:TO:STEP, got %q", rng)
	}
	var v [3]float64
	for i, p := range parts {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return "", nil, fmt.Errorf("%q is not a number", p)
		}
		v[i] = x
	}
	from, to, step := v[0], v[1], v[2]
	if step <= 0 {
		return "", nil, fmt.Errorf("STEP must be > 0, got %g", step)
	}
	if to < from {
		return "", nil, fmt.Errorf("TO (%g) must be >= FROM (%g)", to, from)
	}
	n := math.Floor((to-from)/step+1e-9) + 1
	if n > maxSweepPoints {
		return "", nil, fmt.Errorf("%g points; the limit is %d", n, maxSweepPoints)
	}
	values := make([]float64, int(n))
	for i := range values {
		// 12 significant digits drop the float noise of from + i×step
		// (0.1 + 2×0.1 = 0.30000000000000004) and keep tiny values
		// (1e-300 stays 1e-300).
		values[i], _ = strconv.ParseFloat(strconv.FormatFloat(from+float64(i)*step, 'g', 12, 64), 64)
	}
	return path, values, nil
}

// sweptPolicy returns the name of the policy a sweep path changes
// (policies.NAME.KEY or policies.INDEX.KEY) and KEY, or "" when the path
// is not a policy's parameter. Errors: an index out of range.
func sweptPolicy(s *scenarios.Scenario, path string) (name, key string, err error) {
	rest, ok := strings.CutPrefix(path, "policies.")
	if !ok {
		return "", "", nil
	}
	elem, key, _ := strings.Cut(rest, ".")
	if i, err := strconv.Atoi(elem); err == nil {
		if i < 0 || i >= len(s.File.Policies) {
			return "", "", fmt.Errorf("%s: --param %s: policy index %d out of range (the scenario has %d policies, 0-based)", s.Source, path, i, len(s.File.Policies))
		}
		return s.File.Policies[i].Name, key, nil
	}
	return elem, key, nil
}

// sweepOne runs the sweep param (PATH=FROM:TO:STEP, as given) of path over
// values, or its shard f.shard.
func sweepOne(ctx context.Context, name, param, path string, values []float64, f *runFlags, stdout, stderr io.Writer) error {
	base, err := load(name)
	if err != nil {
		return err
	}
	whole := *f
	if f.shard != nil {
		whole.out = "" // --out names the partial, not the results
	}
	p, err := sweepPart(base, param, path, values, &whole, stdout)
	if err != nil {
		return err
	}
	if f.shard != nil {
		dir := f.out
		if dir == "" {
			dir = p.dir + shardSuffix(*f.shard)
		}
		printWarnings(stderr, base)
		w := &work{Command: "sweep", Flags: workFlagsOf(f), Scenarios: []workScenario{workScenarioOf(base)}}
		w.Flags.Param = param
		return writeShard(ctx, w, []*part{p}, dir, f, stdout, stderr)
	}
	if err := report.CheckOutputDir(p.dir); err != nil {
		return err
	}
	printWarnings(stderr, base)
	res, err := simulate(ctx, p.inputs, f, stderr, p.label)
	if err != nil {
		return err
	}
	return p.finish(res)
}

// sweepPart derives and checks every point of the sweep param
// (PATH=FROM:TO:STEP, as given) of path over values of base: the part
// writes the sweep's files into f.out (default
// results/<scenario-name>-sweep-<param>) and prints its table (unless
// f.quiet) to stdout.
func sweepPart(base *scenarios.Scenario, param, path string, values []float64, f *runFlags, stdout io.Writer) (*part, error) {
	// A policy parameter changes that policy only: simulate just it.
	only, key, err := sweptPolicy(base, path)
	if err != nil {
		return nil, err
	}
	// Derive and check every point before running any.
	points := make([]*scenarios.Scenario, len(values))
	for i, v := range values {
		if points[i], err = base.WithParam(path, v); err == nil {
			_, _, _, err = prepare(points[i], f, len(values))
		}
		if err != nil {
			return nil, fmt.Errorf("--param %s, value %d of %d: %w", param, i+1, len(values), err)
		}
	}
	dir := f.out
	if dir == "" {
		dir = filepath.Join("results", base.Name+"-sweep-"+report.Slug(path))
	}
	// All points run at once on one pool of workers: a sweep of single
	// runs keeps every worker busy. Results come back in point order.
	var seed uint64
	var reps int
	inputs := make([]study.Input, len(values))
	for i, v := range values {
		cfg, pols, r, err := prepare(points[i], f, len(values))
		if err != nil {
			return nil, err
		}
		if only != "" {
			pols = slices.DeleteFunc(pols, func(p simnet.Policy) bool { return p.Name != only })
		}
		seed, reps = cfg.Seed, r
		inputs[i] = study.Input{Config: cfg, Policies: pols, Replications: r, Label: fmt.Sprintf("%s (%s=%g)", base.Name, path, v)}
	}
	finish := func(results []*study.Result) error {
		sw := &report.Sweep{Scenario: base.Name, Param: path, Seed: seed, Replications: reps}
		var rows []sweepRow
		for i, v := range values {
			res := results[i]
			pt := report.SweepPoint{Value: v}
			for _, p := range res.Policies {
				pr := study.Policy(p)
				pt.Policies = append(pt.Policies, pr)
				fig := pr.Figures
				if p.Name == only {
					fig.Policy = fmt.Sprintf("%s=%g", key, v) // the swept policy, by its swept value
				}
				rows = append(rows, sweepRow{value: v, fig: fig})
			}
			sw.Points = append(sw.Points, pt)
		}
		paths, err := report.WriteSweep(dir, sw, report.Options{PNG: f.png})
		if err != nil {
			return err
		}
		if !f.quiet {
			fmt.Fprintf(stdout, "%s: sweep of %s, seed %d, %s per point\n", base.Name, path, sw.Seed, report.Replications(sw.Replications))
			if err := printSweepTable(stdout, path, rows, sw.Replications); err != nil {
				return err
			}
			printPaths(stdout, dir, paths)
		}
		return nil
	}
	return &part{label: fmt.Sprintf("%s sweep", base.Name), inputs: inputs, dir: dir, finish: finish}, nil
}

// sweepRow is one line of the sweep table: a point's value and one
// policy's figures there.
type sweepRow struct {
	value float64
	fig   report.Figures
}

// printSweepTable prints one table for a whole sweep: a row per point ×
// policy, the point's value first.
func printSweepTable(w io.Writer, path string, rows []sweepRow, reps int) error {
	col := path[strings.LastIndexByte(path, '.')+1:]
	width := len(col)
	vals := make([]string, len(rows))
	for i, r := range rows {
		vals[i] = strconv.FormatFloat(r.value, 'g', -1, 64)
		width = max(width, len(vals[i]))
	}
	figs := make([]report.Figures, len(rows))
	for i, r := range rows {
		figs[i] = r.fig
	}
	var buf bytes.Buffer
	if err := report.FormatTable(&buf, figs); err != nil {
		return err
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	for i, line := range lines {
		if line == "" {
			continue
		}
		cell := col
		if i > 0 && i-1 < len(vals) {
			cell = vals[i-1]
		}
		fmt.Fprintf(w, "%*s  %s", width, cell, line)
	}
	fmt.Fprintf(w, "%s\n\n", wrap(fmt.Sprintf("one row per value of %s and policy; %s", path, report.TableLegend(figs, reps, "sweep.json")), legendWidth))
	return nil
}

// validateUsage is the help of validate.
