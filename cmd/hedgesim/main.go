// Command hedgesim simulates cross-region request hedging scenarios and
// writes tables and design-review charts that compare threshold policies on
// tail latency and RU multiplier.
//
// Usage:
//
//	hedgesim                          run the embedded default scenario
//	hedgesim run FILE|NAME...         run scenario files or embedded scenarios
//	hedgesim sweep FILE|NAME --param PATH=FROM:TO:STEP
//	hedgesim validate FILE...         check scenario files without running them
//	hedgesim list                     list the embedded scenarios
//
// Run "hedgesim help" or "hedgesim COMMAND -h" for flags and examples.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"hedgelab/internal/report"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `hedgesim simulates cross-region request hedging and compares threshold policies.

Usage:
  hedgesim [flags]                              run the embedded default scenario
  hedgesim run [flags] FILE|NAME...             run scenario files or embedded scenarios
  hedgesim sweep [flags] FILE|NAME --param PATH=FROM:TO:STEP
                                                vary one numeric parameter and draw curves
  hedgesim validate FILE...                     check scenario files without running them
  hedgesim list                                 list the embedded scenarios

Examples:
  hedgesim                                      # default scenario -> results/default/
  hedgesim run scenarios/healthy.toml --out /tmp/healthy
  hedgesim run heavy-tail -q                    # an embedded scenario by name
  hedgesim sweep default --param policies.static-100ms.threshold_ms=20:200:20
  hedgesim validate scenarios/*.toml

Run "hedgesim COMMAND -h" for the flags of a command.
`

// exit codes
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprint(stdout, usage)
			return exitOK
		}
		return cmdRun(ctx, append([]string{scenarios.DefaultName}, args...), stdout, stderr)
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr)
	case "sweep":
		return cmdSweep(ctx, args[1:], stdout, stderr)
	case "validate":
		return cmdValidate(args[1:], stdout, stderr)
	case "list":
		return cmdList(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "hedgesim: unknown command %q\n\n%s", args[0], usage)
	return exitUsage
}

// runFlags are shared by run and sweep.
type runFlags struct {
	out          string
	parallel     int
	quiet        bool
	replications int
	seed         uint64
	seedSet      bool
}

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.out, "out", "", "output directory (default results/<scenario-name>)")
	fs.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "worker goroutines; the output does not depend on it")
	fs.BoolVar(&f.quiet, "q", false, "quiet: no progress bar, no table")
	fs.IntVar(&f.replications, "replications", 0, "override the scenario's replications (0 = keep)")
	fs.Func("seed", "override the scenario's seed", func(s string) error {
		v, err := strconv.ParseUint(s, 10, 64)
		f.seed, f.seedSet = v, true
		return err
	})
}

// parseInterleaved parses flags that may appear before or after positional
// arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// load reads a scenario file, or an embedded scenario when arg names one
// and no such file exists.
func load(arg string) (*scenarios.Scenario, error) {
	if _, err := os.Stat(arg); err == nil || strings.ContainsAny(arg, `/\`) || strings.HasSuffix(arg, ".toml") {
		return scenarios.Load(arg)
	}
	return scenarios.Get(arg)
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f runFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: hedgesim run [flags] FILE|NAME...

Runs each scenario and writes summary.csv, summary.json, per-policy quantile
CSVs, timeline.csv and charts (ccdf, percentiles, cost, timeline; PNG and
SVG) into results/<scenario-name>/ (or --out, only with one scenario).

Examples:
  hedgesim run default
  hedgesim run scenarios/healthy.toml --out /tmp/healthy -q
  hedgesim run --replications 10 --seed 7 incident-north-europe-2022

Flags:
`)
		fs.PrintDefaults()
	}
	names, err := parseInterleaved(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(names) == 0 {
		fs.Usage()
		return exitUsage
	}
	if err := f.check(); err != nil {
		fmt.Fprintf(stderr, "hedgesim: %v\n", err)
		return exitUsage
	}
	if f.out != "" && len(names) > 1 {
		fmt.Fprintln(stderr, "hedgesim: --out needs exactly one scenario")
		return exitUsage
	}
	// Load and check every scenario before running any.
	var list []*scenarios.Scenario
	for _, name := range names {
		s, err := load(name)
		if err == nil {
			_, _, _, err = prepare(s, &f, 1)
		}
		if err != nil {
			fmt.Fprintf(stderr, "hedgesim: %v\n", err)
			return exitError
		}
		list = append(list, s)
	}
	for _, s := range list {
		if err := runOne(ctx, s, &f, stdout, stderr); err != nil {
			fmt.Fprintf(stderr, "hedgesim: %v\n", err)
			return exitError
		}
	}
	return exitOK
}

// check rejects impossible flag values.
func (f *runFlags) check() error {
	if f.parallel < 1 {
		return fmt.Errorf("--parallel must be >= 1, got %d", f.parallel)
	}
	if f.replications < 0 {
		return fmt.Errorf("--replications must be >= 1, got %d", f.replications)
	}
	return nil
}

// prepare builds a scenario's simulation input with the flags applied and
// refuses it when points × its expected operations exceed the limit.
func prepare(s *scenarios.Scenario, f *runFlags, points int) (*simnet.Config, []simnet.Policy, int, error) {
	cfg, pols, err := s.Config()
	if err != nil {
		return nil, nil, 0, err
	}
	reps := s.Replications
	if f.replications > 0 {
		reps = f.replications
	}
	if f.seedSet {
		cfg.Seed = f.seed
	}
	if n := float64(expectedOps(cfg, len(pols), reps)) * float64(points); n > scenarios.MaxSimulatedOps {
		return nil, nil, 0, fmt.Errorf("%s: would simulate %.3g operations; the limit is %.3g: lower --replications, duration_s, rate_per_s or the number of sweep points",
			s.Source, n, float64(scenarios.MaxSimulatedOps))
	}
	return cfg, pols, reps, nil
}

// expectedOps estimates how many operations a simulation will finish.
func expectedOps(cfg *simnet.Config, policies, reps int) int64 {
	n := float64(cfg.MaxOps)
	if w := cfg.Workload; w.RatePerSec > 0 && cfg.Duration > 0 {
		byRate := w.RatePerSec * cfg.Duration.Seconds()
		if n == 0 || byRate < n {
			n = byRate
		}
	} else if w.Clients > 0 && n == 0 {
		n = float64(w.Clients) * cfg.Duration.Seconds() * 100
	}
	return int64(n) * int64(policies) * int64(reps)
}

// simulate runs inputs (one scenario, or every point of a sweep) on one
// pool of f.parallel workers, with a progress bar on a terminal, and
// returns their results in input order.
func simulate(ctx context.Context, inputs []study.Input, f *runFlags, stderr io.Writer, label string) ([]*study.Result, error) {
	var progress atomic.Int64
	var total int64
	for _, in := range inputs {
		total += expectedOps(in.Config, len(in.Policies), in.Replications)
	}
	done := make(chan struct{})
	if !f.quiet && isTerminal(stderr) && total > 2_000_000 {
		bar := progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription(label),
			progressbar.OptionShowCount(), progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish(), progressbar.OptionSetWidth(30))
		go func() {
			t := time.NewTicker(200 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-done:
					_ = bar.Finish()
					return
				case <-t.C:
					_ = bar.Set64(min(progress.Load(), total))
				}
			}
		}()
	}
	type out struct {
		res []*study.Result
		err error
	}
	ch := make(chan out, 1)
	go func() {
		res, err := study.SimulateAll(inputs, study.Options{Parallel: f.parallel, Progress: &progress})
		ch <- out{res, err}
	}()
	select {
	case o := <-ch:
		close(done)
		return o.res, o.err
	case <-ctx.Done():
		close(done)
		return nil, errors.New("interrupted: no result files were written")
	}
}

func runOne(ctx context.Context, s *scenarios.Scenario, f *runFlags, stdout, stderr io.Writer) error {
	cfg, pols, reps, err := prepare(s, f, 1)
	if err != nil {
		return err
	}
	res, err := simulate(ctx, []study.Input{{Config: cfg, Policies: pols, Replications: reps}}, f, stderr, s.Name)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Name, err)
	}
	rep := study.Report(s.Name, s.Description, cfg, res[0])
	dir := f.out
	if dir == "" {
		dir = filepath.Join("results", s.Name)
	}
	paths, err := report.WriteRun(dir, rep)
	if err != nil {
		return err
	}
	if f.quiet {
		return nil
	}
	fmt.Fprintf(stdout, "%s: seed %d, %d replication(s), %s of virtual time\n", s.Name, cfg.Seed, reps, cfg.Duration)
	if err := printTable(stdout, rep.Policies, reps); err != nil {
		return err
	}
	printPaths(stdout, dir, paths)
	return nil
}

// printTable prints the figures table and the legend of its columns.
func printTable(w io.Writer, policies []report.PolicyResult, reps int) error {
	figs := make([]report.Figures, len(policies))
	for i, p := range policies {
		figs[i] = p.Figures
	}
	if err := report.FormatTable(w, figs); err != nil {
		return err
	}
	ci := ""
	if reps > 1 {
		ci = fmt.Sprintf("; latencies and RU × are means over %d replications (95%% CIs in summary.json)", reps)
	}
	fmt.Fprintf(w, "ops: operations over all replications; hedge: alternate sent; altwin: alternate's answer returned; RU ×: RU charged / RU returned; trips: partition-breaker trips%s\n\n", ci)
	return nil
}

func printPaths(w io.Writer, dir string, paths []string) {
	fmt.Fprintf(w, "wrote %d files to %s:\n", len(paths), dir)
	for _, p := range paths {
		fmt.Fprintf(w, "  %s\n", p)
	}
}

func cmdSweep(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f runFlags
	f.register(fs)
	var param string
	fs.StringVar(&param, "param", "", "PATH=FROM:TO:STEP, e.g. policies.static.threshold_ms=50:1000:50")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: hedgesim sweep [flags] FILE|NAME --param PATH=FROM:TO:STEP

Runs the scenario once per parameter value (FROM, FROM+STEP, ... <= TO) and
writes sweep.csv, sweep.json and charts (sweep_p99, sweep_cost) into
results/<scenario-name>-sweep-<param>/ (or --out).

PATH is a dotted path into the scenario file; elements of [[policies]],
[[replicas]] and the like are addressed by name or index. When PATH is a
policy's parameter (policies.NAME.KEY), only that policy is simulated.

Examples:
  hedgesim sweep default --param policies.static-100ms.threshold_ms=20:200:20
  hedgesim sweep breaker-trip --param client.consecutive_hedge_win_threshold=1:10:1
  hedgesim sweep saturation --param workload.rate_per_s=500:900:100 -q

Flags:
`)
		fs.PrintDefaults()
	}
	names, err := parseInterleaved(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(names) != 1 || param == "" {
		fs.Usage()
		return exitUsage
	}
	path, values, err := parseSweep(param)
	if err != nil {
		fmt.Fprintf(stderr, "hedgesim: --param: %v\n", err)
		return exitUsage
	}
	if err := f.check(); err != nil {
		fmt.Fprintf(stderr, "hedgesim: %v\n", err)
		return exitUsage
	}
	if err := sweepOne(ctx, names[0], path, values, &f, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "hedgesim: %v\n", err)
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
		values[i] = math.Round((from+float64(i)*step)*1e9) / 1e9
	}
	return path, values, nil
}

func sweepOne(ctx context.Context, name, path string, values []float64, f *runFlags, stdout, stderr io.Writer) error {
	base, err := load(name)
	if err != nil {
		return err
	}
	// A policy parameter changes that policy only: simulate just it.
	only := ""
	if rest, ok := strings.CutPrefix(path, "policies."); ok {
		only, _, _ = strings.Cut(rest, ".")
	}
	// Derive and check every point before running any.
	points := make([]*scenarios.Scenario, len(values))
	for i, v := range values {
		if points[i], err = base.WithParam(path, v); err != nil {
			return err
		}
		if _, _, _, err = prepare(points[i], f, len(values)); err != nil {
			return err
		}
	}
	// All points run at once on one pool of workers: a sweep of single
	// runs keeps every worker busy. Results come back in point order.
	sw := &report.Sweep{Scenario: base.Name, Param: path}
	inputs := make([]study.Input, len(values))
	for i, v := range values {
		cfg, pols, reps, err := prepare(points[i], f, len(values))
		if err != nil {
			return err
		}
		if only != "" {
			pols = slices.DeleteFunc(pols, func(p simnet.Policy) bool { return p.Name != only })
		}
		sw.Seed, sw.Replications = cfg.Seed, reps
		inputs[i] = study.Input{Config: cfg, Policies: pols, Replications: reps, Label: fmt.Sprintf("%s (%s=%g)", base.Name, path, v)}
	}
	results, err := simulate(ctx, inputs, f, stderr, fmt.Sprintf("%s sweep", base.Name))
	if err != nil {
		return err
	}
	for i, v := range values {
		res, reps := results[i], inputs[i].Replications
		pt := report.SweepPoint{Value: v}
		for _, p := range res.Policies {
			pt.Policies = append(pt.Policies, study.Policy(p))
		}
		sw.Points = append(sw.Points, pt)
		if !f.quiet {
			fmt.Fprintf(stdout, "%s = %g\n", path, v)
			if err := printTable(stdout, pt.Policies, reps); err != nil {
				return err
			}
		}
	}
	dir := f.out
	if dir == "" {
		dir = filepath.Join("results", base.Name+"-sweep-"+report.Slug(path))
	}
	paths, err := report.WriteSweep(dir, sw)
	if err != nil {
		return err
	}
	if !f.quiet {
		printPaths(stdout, dir, paths)
	}
	return nil
}

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: hedgesim validate FILE...

Parses and checks each scenario file (schema, values, references, resource
limits) without running it. Prints "ok" per valid file; exits 1 if any file
is invalid, with errors of the form FILE:LINE: FIELD: MESSAGE.

Example:
  hedgesim validate scenarios/*.toml
`)
	}
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(files) == 0 {
		fs.Usage()
		return exitUsage
	}
	code := exitOK
	for _, file := range files {
		s, err := scenarios.Load(file)
		if err == nil {
			_, _, err = s.Config()
		}
		if err != nil {
			fmt.Fprintln(stderr, err)
			code = exitError
			continue
		}
		fmt.Fprintf(stdout, "%s: ok (%s)\n", file, s.Name)
	}
	return code
}

func cmdList(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: hedgesim list\n\nLists the embedded scenarios (run one with: hedgesim run NAME).\n")
	}
	if err := fs.Parse(args); err != nil {
		return flagExit(err)
	}
	list, err := scenarios.Embedded()
	if err != nil {
		fmt.Fprintf(stderr, "hedgesim: %v\n", err)
		return exitError
	}
	for _, s := range list {
		desc := s.Description
		if i := strings.Index(desc+" ", ". "); i > 0 {
			desc = desc[:i+1] // the first sentence
		}
		fmt.Fprintf(stdout, "%-28s %s\n", s.Name, desc)
	}
	return exitOK
}

func flagExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
