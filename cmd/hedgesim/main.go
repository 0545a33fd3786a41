// Command hedgesim simulates cross-region request hedging scenarios and
// writes tables and design-review charts that compare threshold policies on
// tail latency and RU multiplier.
//
// Usage:
//
//	hedgesim                          run the embedded default scenario
//	hedgesim run FILE|NAME...         run scenario files or embedded scenarios
//	hedgesim sweep FILE|NAME --param PATH=FROM:TO:STEP
//	hedgesim validate FILE|NAME...    check scenarios without running them
//	hedgesim list                     list the embedded scenarios
//	hedgesim version                  print the version (also --version)
//
// Run "hedgesim help" or "hedgesim COMMAND -h" for flags and examples.
package main

import (
	"bytes"
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
	"runtime/debug"
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
  hedgesim validate FILE|NAME...                check scenarios without running them
  hedgesim list                                 list the embedded scenarios
  hedgesim version                              print the version (also: --version)

Examples:
  hedgesim                                      # default scenario -> results/default/
  hedgesim run scenarios/healthy.toml --out /tmp/healthy
  hedgesim run heavy-tail -q                    # an embedded scenario by name
  hedgesim sweep default --param policies.static-100ms.threshold_ms=20:200:20
  hedgesim validate scenarios/*.toml

The flags of "hedgesim [flags]" are those of run. Run "hedgesim COMMAND -h"
for the flags of a command.
`

// exit codes
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitInterrupted = 130 // 128 + SIGINT, as shells report a Ctrl-C
)

// errInterrupted is returned when the context is cancelled (Ctrl-C).
var errInterrupted = errors.New("interrupted: no result files were written for it")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && isHelp(args[0]) {
			fmt.Fprint(stdout, usage)
			return exitOK
		}
		if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
			return cmdVersion(args[1:], stdout, stderr)
		}
		return cmdRunTop(ctx, args, stdout, stderr)
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr, false)
	case "sweep":
		return cmdSweep(ctx, args[1:], stdout, stderr)
	case "validate":
		return cmdValidate(args[1:], stdout, stderr)
	case "list":
		return cmdList(args[1:], stdout, stderr)
	case "version":
		return cmdVersion(args[1:], stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	return usageError(stderr, "", fmt.Sprintf("unknown command %q", args[0]))
}

// cmdRunTop is "hedgesim [flags]": run the default scenario, with the
// top-level usage for a bad flag.
func cmdRunTop(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cmdRun(ctx, append([]string{scenarios.DefaultName}, args...), stdout, stderr, true)
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

// wantsHelp reports whether args ask for help (-h, -help, --help) before
// any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelp(a) {
			return true
		}
	}
	return false
}

// version returns the module version and VCS revision the binary was
// built from, as far as the Go toolchain recorded them.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(no build information)"
	}
	return formatVersion(info)
}

// formatVersion renders build information as "<module version> <revision
// (12 hex digits)>[+dirty] <go version>", for example
// "v0.0.0-20261201135557-87a28f53daf2 87a28f53daf2 go1.26.8", and says so
// when no revision was recorded: `go run`, -buildvcs=false (GOFLAGS), or
// a build outside a git clone (a git worktree included) record none;
// `make build` records it.
func formatVersion(info *debug.BuildInfo) string {
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		}
	}
	if rev == "" {
		return v + " " + info.GoVersion + " (no VCS revision recorded: built by go run, with -buildvcs=false, or outside a git clone; make build records it)"
	}
	return v + " " + rev[:min(12, len(rev))] + modified + " " + info.GoVersion
}

// versionUsage is the help of version.
const versionUsage = `Usage: hedgesim version (or: hedgesim --version)

Prints the module version, the VCS revision the binary was built from
(with +dirty for uncommitted changes) and the Go version, as far as the Go
toolchain recorded them. A binary built by go run, with -buildvcs=false or
outside a git clone records no revision, and says so; make build records it.
`

func cmdVersion(args []string, stdout, stderr io.Writer) int {
	if wantsHelp(args) {
		fmt.Fprint(stdout, versionUsage)
		return exitOK
	}
	if len(args) > 0 {
		return usageError(stderr, "version", fmt.Sprintf("version takes no arguments, got %q", args))
	}
	fmt.Fprintf(stdout, "hedgesim %s\n", version())
	return exitOK
}

// runFlags are shared by run and sweep.
type runFlags struct {
	out          string
	parallel     int
	quiet        bool
	png          bool
	replications int // 0 = keep the scenario's
	seed         uint64
	seedSet      bool
}

// register defines the flags on fs; outHelp describes --out.
func (f *runFlags) register(fs *flag.FlagSet, outHelp string) {
	fs.StringVar(&f.out, "out", "", outHelp)
	fs.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "worker goroutines; the output does not depend on it")
	fs.BoolVar(&f.quiet, "q", false, "quiet: no progress bar, no table")
	fs.BoolVar(&f.png, "png", false, "also write each chart as PNG (1200x750 px) beside its SVG")
	fs.Func("replications", "override the scenario's replications (>= 1)", func(s string) error {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			return fmt.Errorf("must be an integer >= 1, got %q", s)
		}
		f.replications = v
		return nil
	})
	fs.Func("seed", "override the scenario's seed (0 to 9223372036854775807)", func(s string) error {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return fmt.Errorf("must be an integer from 0 to %d, got %q", int64(math.MaxInt64), s)
		}
		f.seed, f.seedSet = uint64(v), true
		return nil
	})
}

// parseInterleaved parses flags that may appear before or after positional
// arguments.
// The flag package's own messages are silenced: the caller reports the
// error as a usage error.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
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

// runUsage is the help of run.
const runUsage = `Usage: hedgesim run [flags] FILE|NAME...

Runs each scenario and writes summary.csv, summary.json, per-policy quantile
CSVs, timeline.csv and the charts ccdf, percentiles, cost, timeline,
threshold and hedge_rate (SVG; PNG too with --png), plus replicas.csv and the replicas
chart when the scenario models replica capacity (servers, queue limits,
cancel modes, background load), into results/<scenario-name>/ (or --out,
only with one scenario). The directory is replaced as a whole, so it
never mixes files of two runs; it must hold only hedgesim results. Ctrl-C
stops the simulation and writes nothing (exit status 130).

Examples:
  hedgesim run default
  hedgesim run scenarios/healthy.toml --out /tmp/healthy -q
  hedgesim run --replications 10 --seed 7 incident-north-europe-2022

Flags:
`

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer, top bool) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cmd := "run"
	if top {
		cmd = ""
	}
	var f runFlags
	f.register(fs, "output directory, only with one scenario (default results/<scenario-name>); replaced as a whole by the results")
	printUsage := func(w io.Writer) {
		if top {
			fmt.Fprint(w, usage)
			return
		}
		fmt.Fprint(w, runUsage)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	if wantsHelp(args) {
		printUsage(stdout)
		return exitOK
	}
	names, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stderr, cmd, err.Error())
	}
	if len(names) == 0 {
		return usageError(stderr, cmd, fmt.Sprintf("run needs at least one scenario (%s)", scenarioArg))
	}
	if err := f.check(fs); err != nil {
		return usageError(stderr, cmd, err.Error())
	}
	if f.out != "" && len(names) > 1 {
		return usageError(stderr, cmd, "--out needs exactly one scenario")
	}
	// Load and check every scenario and output directory before running any.
	var list []*scenarios.Scenario
	dirs := map[string]string{} // output directory -> scenario source
	for _, name := range names {
		s, err := load(name)
		if err == nil {
			_, _, _, err = prepare(s, &f, 1)
		}
		if err != nil {
			fmt.Fprintf(stderr, "hedgesim: %v\n", err)
			return exitError
		}
		dir := outDir(&f, s.Name)
		if prev, dup := dirs[dir]; dup {
			fmt.Fprintf(stderr, "hedgesim: %s and %s are both named %q: the second's results would overwrite the first's in %s; rename one\n", prev, s.Source, s.Name, dir)
			return exitError
		}
		dirs[dir] = s.Source
		if err := report.CheckOutputDir(dir); err != nil {
			fmt.Fprintf(stderr, "hedgesim: %v\n", err)
			return exitError
		}
		printWarnings(stderr, s)
		list = append(list, s)
	}
	for _, s := range list {
		if err := runOne(ctx, s, &f, stdout, stderr); err != nil {
			fmt.Fprintf(stderr, "hedgesim: %v\n", err)
			if errors.Is(err, errInterrupted) {
				return exitInterrupted
			}
			return exitError
		}
	}
	return exitOK
}

// scenarioArg says what a FILE|NAME argument is, for usage errors.
const scenarioArg = "a FILE or an embedded NAME; hedgesim list shows them"

// outDir is where a run of the scenario called name writes.
func outDir(f *runFlags, name string) string {
	if f.out != "" {
		return f.out
	}
	return filepath.Join("results", name)
}

// printWarnings prints the scenario's warnings ([scenarios.Scenario.Warnings]).
func printWarnings(w io.Writer, s *scenarios.Scenario) {
	for _, warn := range s.Warnings() {
		fmt.Fprintln(w, warn)
	}
}

// check rejects impossible flag values of fs, parsed into f.
func (f *runFlags) check(fs *flag.FlagSet) error {
	if f.parallel < 1 {
		return fmt.Errorf("--parallel must be >= 1, got %d", f.parallel)
	}
	var err error
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "out" && f.out == "" {
			err = errors.New(`--out must name a directory, got ""`)
		}
	})
	return err
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
	if f.seedSet || f.replications > 0 {
		if err := s.CheckArrivals(cfg, reps); err != nil {
			return nil, nil, 0, err
		}
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
	res, err := study.SimulateAll(inputs, study.Options{Parallel: f.parallel, Progress: &progress, Context: ctx})
	close(done)
	if err != nil && ctx.Err() != nil {
		return nil, errInterrupted
	}
	return res, err
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
	dir := outDir(f, s.Name)
	paths, err := report.WriteRun(dir, rep, report.Options{PNG: f.png})
	if err != nil {
		return err
	}
	if f.quiet {
		return nil
	}
	fmt.Fprintf(stdout, "%s: seed %d, %s, %s of virtual time\n", s.Name, cfg.Seed, report.Replications(reps), study.RunLength(cfg, res[0]).Round(time.Millisecond))
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
	fmt.Fprintf(w, "%s\n\n", wrap(report.TableLegend(figs, reps, "summary.json"), legendWidth))
	return nil
}

// legendWidth is the column at which the legend under a results table is
// wrapped.
const legendWidth = 100

// wrap breaks text into lines of at most width columns at spaces (a word
// longer than width stands on a line of its own).
func wrap(text string, width int) string {
	var b strings.Builder
	col := 0
	for i, word := range strings.Fields(text) {
		n := len([]rune(word))
		switch {
		case i == 0:
		case col+1+n > width:
			b.WriteByte('\n')
			col = 0
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += n
	}
	return b.String()
}

func printPaths(w io.Writer, dir string, paths []string) {
	fmt.Fprintf(w, "wrote %d files to %s:\n", len(paths), dir)
	for _, p := range paths {
		fmt.Fprintf(w, "  %s\n", p)
	}
}

// sweepUsage is the help of sweep.
const sweepUsage = `Usage: hedgesim sweep [flags] FILE|NAME --param PATH=FROM:TO:STEP

Runs the scenario once per parameter value (FROM, FROM+STEP, ... <= TO),
prints one table (a row per value and policy) and writes sweep.csv,
sweep.json and charts (sweep_p99, sweep_cost; SVG, PNG too with --png) into
results/<scenario-name>-sweep-<param>/ (or --out), replaced as a whole.

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

Flags:
`

func cmdSweep(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f runFlags
	f.register(fs, "output directory (default results/<scenario-name>-sweep-<param>); replaced as a whole by the results")
	var param string
	fs.Func("param", "PATH=FROM:TO:STEP, e.g. policies.static-100ms.threshold_ms=50:1000:50 (once)", func(v string) error {
		if param != "" {
			return fmt.Errorf("given twice (%q and %q): a sweep varies one parameter", param, v)
		}
		param = v
		return nil
	})
	printUsage := func(w io.Writer) {
		fmt.Fprint(w, sweepUsage)
		fs.SetOutput(w)
		fs.PrintDefaults()
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
// values.
func sweepOne(ctx context.Context, name, param, path string, values []float64, f *runFlags, stdout, stderr io.Writer) error {
	base, err := load(name)
	if err != nil {
		return err
	}
	// A policy parameter changes that policy only: simulate just it.
	only, key, err := sweptPolicy(base, path)
	if err != nil {
		return err
	}
	// Derive and check every point and the output directory before running any.
	points := make([]*scenarios.Scenario, len(values))
	for i, v := range values {
		if points[i], err = base.WithParam(path, v); err == nil {
			_, _, _, err = prepare(points[i], f, len(values))
		}
		if err != nil {
			return fmt.Errorf("--param %s, value %d of %d: %w", param, i+1, len(values), err)
		}
	}
	dir := f.out
	if dir == "" {
		dir = filepath.Join("results", base.Name+"-sweep-"+report.Slug(path))
	}
	if err := report.CheckOutputDir(dir); err != nil {
		return err
	}
	printWarnings(stderr, base)
	// All points run at once on one pool of workers: a sweep of single
	// runs keeps every worker busy. Results come back in point order.
	sw := &report.Sweep{Scenario: base.Name, Param: path}
	var rows []sweepRow
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
const validateUsage = `Usage: hedgesim validate FILE|NAME...

Parses and checks each scenario file or embedded scenario (schema, values,
references, resource limits) without running it. Prints "ok" per valid
scenario; exits 1 if any is invalid, with every error found (up to 20 per
file) in the form FILE:LINE: FIELD: MESSAGE. Warnings (valid but probably
unintended, e.g. an episode after the run ends) go to stderr and do not
change the exit status.

Example:
  hedgesim validate scenarios/*.toml
  hedgesim validate default
`

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if wantsHelp(args) {
		fmt.Fprint(stdout, validateUsage)
		return exitOK
	}
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stderr, "validate", err.Error())
	}
	if len(files) == 0 {
		return usageError(stderr, "validate", fmt.Sprintf("validate needs at least one scenario (%s)", scenarioArg))
	}
	code := exitOK
	for _, file := range files {
		s, err := load(file) // a scenario that parses also builds
		if err != nil {
			fmt.Fprintln(stderr, err)
			code = exitError
			continue
		}
		printWarnings(stderr, s)
		fmt.Fprintf(stdout, "%s: ok (%s)\n", file, s.Name)
	}
	return code
}

const listUsage = "Usage: hedgesim list\n\nLists the embedded scenarios (run one with: hedgesim run NAME).\n"

func cmdList(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if wantsHelp(args) {
		fmt.Fprint(stdout, listUsage)
		return exitOK
	}
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		return usageError(stderr, "list", err.Error())
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "list", fmt.Sprintf("list takes no arguments, got %q", fs.Args()))
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

// usageLines are the commands' usage lines, the first line of each help
// ("" is hedgesim itself).
var usageLines = map[string]string{
	"":         "Usage: hedgesim [COMMAND] [flags] [FILE|NAME...]  (commands: run, sweep, validate, list, version, help)",
	"run":      firstLine(runUsage),
	"sweep":    firstLine(sweepUsage),
	"validate": firstLine(validateUsage),
	"list":     firstLine(listUsage),
	"version":  firstLine(versionUsage),
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// usageError prints a usage error of command cmd ("" for hedgesim
// itself) to w: one line saying what is wrong, the command's usage line
// and where its help is; it returns exitUsage.
func usageError(w io.Writer, cmd, msg string) int {
	help := "hedgesim help"
	if cmd != "" {
		help = "hedgesim " + cmd + " -h"
	}
	fmt.Fprintf(w, "hedgesim: %s\n%s\nRun %q for help.\n", msg, usageLines[cmd], help)
	return exitUsage
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
