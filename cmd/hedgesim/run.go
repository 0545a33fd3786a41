package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"

	"hedgelab/internal/report"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

type runFlags struct {
	out          string
	parallel     int
	quiet        bool
	png          bool
	replications int // 0 = keep the scenario's
	seed         uint64
	seedSet      bool
	shard        *study.Shard // nil: the whole study
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
	fs.Func("shard", "run only shard I of N (0-based: 0 <= I < N) and write its partial result into --out; hedgesim merge combines the N partials (see hedgesim merge -h)", func(s string) error {
		sh, err := parseShard(s)
		if err != nil {
			return err
		}
		f.shard = &sh
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

With --shard I/N it runs only shard I of N of the work (of every scenario
given) and writes that shard's partial result into --out (default
results/<scenario-name>-shard-I-of-N; --out is needed with several
scenarios); "hedgesim merge DIR..." then writes, from all N partials, the
files this command writes without --shard, byte for byte.

Examples:
  hedgesim run default
  hedgesim run scenarios/healthy.toml --out /tmp/healthy -q
  hedgesim run --replications 10 --seed 7 incident-north-europe-2022
  hedgesim run --replications 40 default --shard 3/8 --out parts/3

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
	f.register(fs, "output directory, only with one scenario (default results/<scenario-name>); replaced as a whole by the results; with --shard, the directory of the shard's partial result")
	printUsage := func(w io.Writer) {
		if top {
			fmt.Fprint(w, usage)
			return
		}
		writeHelp(w, runUsage, fs)
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
	switch {
	case f.shard == nil && f.out != "" && len(names) > 1:
		return usageError(stderr, cmd, "--out needs exactly one scenario")
	case f.shard != nil && f.out == "" && len(names) > 1:
		return usageError(stderr, cmd, "--shard with several scenarios needs --out DIR, the directory of the shard's partial result")
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
		if f.shard != nil {
			dir = filepath.Join("results", s.Name) // where the merge writes it (--out names the partial)
		}
		if prev, dup := dirs[dir]; dup {
			fmt.Fprintf(stderr, "hedgesim: %s and %s are both named %q: the second's results would overwrite the first's in %s; rename one\n", prev, s.Source, s.Name, dir)
			return exitError
		}
		dirs[dir] = s.Source
		if f.shard == nil {
			if err := report.CheckOutputDir(dir); err != nil {
				fmt.Fprintf(stderr, "hedgesim: %v\n", err)
				return exitError
			}
		}
		printWarnings(stderr, s)
		list = append(list, s)
	}
	if f.shard != nil {
		return exitCode(stderr, runShard(ctx, list, &f, stdout, stderr))
	}
	for _, s := range list {
		p, err := runPart(s, &f, stdout)
		if err == nil {
			err = p.simulate(ctx, &f, stderr)
		}
		if code := exitCode(stderr, err); code != exitOK {
			return code
		}
	}
	return exitOK
}

// exitCode prints err (if any) and returns the exit status it calls for.
func exitCode(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "hedgesim: %v\n", err)
	if errors.Is(err, errInterrupted) {
		return exitInterrupted
	}
	return exitError
}

// runShard runs the shard f.shard of the run of list and writes its
// partial result.
func runShard(ctx context.Context, list []*scenarios.Scenario, f *runFlags, stdout, stderr io.Writer) error {
	w := &work{Command: "run", Flags: workFlagsOf(f)}
	whole := *f
	whole.out = "" // --out names the partial, not the results
	var parts []*part
	for _, s := range list {
		w.Scenarios = append(w.Scenarios, workScenarioOf(s))
		p, err := runPart(s, &whole, stdout)
		if err != nil {
			return err
		}
		parts = append(parts, p)
	}
	dir := f.out
	if dir == "" {
		dir = parts[0].dir + shardSuffix(*f.shard)
	}
	return writeShard(ctx, w, parts, dir, f, stdout, stderr)
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
// refuses it when points × its expected operations or requests exceed the
// limits.
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
	if n := cfg.ExpectedWork().Total() * float64(len(pols)*reps*points); n > scenarios.MaxSimulatedWork {
		return nil, nil, 0, fmt.Errorf("%s: would send %.3g requests (operations, pages, setup reads, change-feed pages, background requests); the limit is %.3g: lower --replications or the number of sweep points",
			s.Source, n, float64(scenarios.MaxSimulatedWork))
	}
	return cfg, pols, reps, nil
}

// expectedOps estimates how many operations a simulation will finish
// (see [study.ExpectedOps]).
func expectedOps(cfg *simnet.Config, policies, reps int) int64 {
	return study.ExpectedOps(cfg) * int64(policies) * int64(reps)
}

// simulate runs inputs (one scenario, or every point of a sweep) on one
// pool of f.parallel workers, with a progress bar on a terminal, and
// returns their results in input order.
func simulate(ctx context.Context, inputs []study.Input, f *runFlags, stderr io.Writer, label string) ([]*study.Result, error) {
	var total int64
	for _, in := range inputs {
		total += expectedOps(in.Config, len(in.Policies), in.Replications)
	}
	var res []*study.Result
	err := withProgress(ctx, total, f, stderr, label, func(opts study.Options) (err error) {
		res, err = study.SimulateAll(inputs, opts)
		return err
	})
	return res, err
}

// withProgress calls run with the options of f and ctx, showing a
// progress bar on a terminal for total expected operations. A cancelled
// ctx gives errInterrupted.
func withProgress(ctx context.Context, total int64, f *runFlags, stderr io.Writer, label string, run func(study.Options) error) error {
	var progress atomic.Int64
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
	err := run(study.Options{Parallel: f.parallel, Progress: &progress, Context: ctx})
	close(done)
	if err != nil && ctx.Err() != nil {
		return errInterrupted
	}
	return err
}

// part is one output of a command (a scenario's run, a sweep): the
// simulations it needs and how their results become its files and its
// table. A sharded command simulates its parts' inputs as one study.
type part struct {
	label  string // names the part in errors and on the progress bar
	inputs []study.Input
	dir    string // where finish writes
	finish func(res []*study.Result) error
}

// simulate runs p alone and finishes it.
func (p *part) simulate(ctx context.Context, f *runFlags, stderr io.Writer) error {
	res, err := simulate(ctx, p.inputs, f, stderr, p.label)
	if err != nil {
		return fmt.Errorf("%s: %w", p.label, err)
	}
	return p.finish(res)
}

// runPart is scenario s's part of a run: it writes the results into
// outDir(f, s.Name) and prints the table (unless f.quiet) to stdout.
func runPart(s *scenarios.Scenario, f *runFlags, stdout io.Writer) (*part, error) {
	cfg, pols, reps, err := prepare(s, f, 1)
	if err != nil {
		return nil, err
	}
	// A scenario with feed operations also runs its hedging policies under
	// the other hedge unit, for the hedge-unit chart (spec §17 Q9).
	inputs := append([]study.Input{{Config: cfg, Policies: pols, Replications: reps}}, study.HedgeUnitInputs(cfg, pols, reps)...)
	var work float64
	for _, in := range inputs {
		work += in.Config.ExpectedWork().Total() * float64(len(in.Policies)*in.Replications)
	}
	if work > scenarios.MaxSimulatedWork {
		return nil, fmt.Errorf("%s: would send %.3g requests with the hedge-unit study's runs; the limit is %.3g: lower --replications", s.Source, work, float64(scenarios.MaxSimulatedWork))
	}
	dir := outDir(f, s.Name)
	finish := func(res []*study.Result) error {
		rep := study.Report(s.Name, s.Description, cfg, res[0])
		rep.HedgeUnits = study.HedgeUnits(cfg, pols, res[0], res[1:])
		if rep.HedgeUnits != nil {
			rep.HedgeUnitConfigured = cfg.Feed.HedgeUnit.String()
		}
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
	return &part{label: s.Name, inputs: inputs, dir: dir, finish: finish}, nil
}

// printTable prints the figures table and the legend of its columns, and
// for a run with feeds the Phase 2 table and its legend.
func printTable(w io.Writer, policies []report.PolicyResult, reps int) error {
	figs := make([]report.Figures, len(policies))
	feed := false
	for i, p := range policies {
		figs[i] = p.Figures
		feed = feed || p.Feed != nil
	}
	if err := report.FormatTable(w, figs); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s\n\n", wrap(report.TableLegend(figs, reps, "summary.json"), legendWidth))
	if !feed {
		return nil
	}
	if err := report.FormatFeedTable(w, figs); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s\n\n", wrap(report.FeedLegend, legendWidth))
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
