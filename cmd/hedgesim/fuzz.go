package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"

	"hedgelab/internal/fuzz"
	"hedgelab/scenarios"
)

const fuzzUsage = `Usage: hedgesim fuzz [--space FILE] --n N --seed S [--parallel P] [--out DIR] [flags]

Generates N scenarios from a declared scenario space (the embedded default,
or FILE layered over it), runs each one as "hedgesim run" would and checks
that nothing breaks: the scenario validates; the resource limit counts the
work the run does; every run passes the simulator's invariants and every
policy's figures pass the study's (both checked on every run of every
command); nothing panics or hangs; and every 10th scenario (--sample)
gives byte-identical files run twice and under --parallel 4.

Scenario i of seed S is always the same file. On a failure it writes the
generated file, shrinks it (a shorter run, fewer policies, regions, list
entries, sections and keys) to a small file that breaks the same invariant,
prints its path and the invariant, and exits 1; "hedgesim run FILE"
reproduces it. Without --all it stops at the first failing scenario.
A progress bar on a terminal; otherwise one line per failure as it is
found and a summary. Ctrl-C or SIGTERM stops it at once (exit 130).

Examples:
  hedgesim fuzz --n 300 --seed 1
  hedgesim fuzz --n 2000 --seed $(date +%s) --all --out /tmp/fuzz
  hedgesim fuzz --space my-space.toml --n 50 --seed 7
  hedgesim fuzz --space scenarios/space/population.toml --seed 7 --first 12 --n 1 --keep --out DIR

Flags:
`

func cmdFuzz(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fuzz", flag.ContinueOnError)
	var (
		opt   fuzz.Options
		space string
		seed  uint64
		quiet bool
	)
	fs.StringVar(&space, "space", "", "scenario space file, layered over the embedded default (default: the embedded space)")
	fs.IntVar(&opt.N, "n", 100, "number of scenarios to generate and check")
	fs.IntVar(&opt.First, "first", 0, "index of the first scenario (--first I --n 1 checks scenario I alone)")
	fs.Func("seed", "the generator's seed, 0 to 18446744073709551615 (default 1)", func(s string) error {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return fmt.Errorf("must be an integer from 0 to 18446744073709551615, got %q", s)
		}
		seed = v
		return nil
	})
	fs.IntVar(&opt.Parallel, "parallel", runtime.GOMAXPROCS(0), "scenarios checked at once; the verdicts do not depend on it")
	fs.StringVar(&opt.Out, "out", "fuzz-failures", "directory for the failing scenarios (created when something fails)")
	fs.BoolVar(&opt.Keep, "keep", false, "write every generated scenario into --out as fuzz-SEED-I.toml, failing or not (to rerun a scorecard population's member)")
	fs.BoolVar(&opt.All, "all", false, "check all N scenarios and shrink the first failure of each invariant")
	fs.IntVar(&opt.Sample, "sample", 10, "check every Nth scenario for determinism and --parallel invariance (0: none)")
	fs.IntVar(&opt.ShrinkBudget, "shrink-budget", 300, "most candidate scenarios one shrink checks")
	fs.DurationVar(&opt.Timeout, "timeout", time.Minute, "a scenario whose simulation runs longer hangs")
	fs.Func("only", "check only these invariants (comma-separated names, as printed)", func(s string) error {
		opt.Only = append(opt.Only, strings.Split(s, ",")...)
		return nil
	})
	fs.BoolVar(&quiet, "q", false, "quiet: no progress bar and no line per failure, only the summary")
	printUsage := func(w io.Writer) { writeHelp(w, fuzzUsage, fs) }
	if wantsHelp(args) {
		printUsage(stdout)
		return exitOK
	}
	seed = 1
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stderr, "fuzz", err.Error())
	}
	switch {
	case len(rest) > 0:
		return usageError(stderr, "fuzz", fmt.Sprintf("fuzz takes no scenario arguments, got %q", rest[0]))
	case opt.N < 1:
		return usageError(stderr, "fuzz", fmt.Sprintf("--n must be >= 1, got %d", opt.N))
	case opt.Parallel < 1:
		return usageError(stderr, "fuzz", fmt.Sprintf("--parallel must be >= 1, got %d", opt.Parallel))
	case opt.First < 0:
		return usageError(stderr, "fuzz", fmt.Sprintf("--first must be >= 0, got %d", opt.First))
	case opt.Sample < 0:
		return usageError(stderr, "fuzz", fmt.Sprintf("--sample must be >= 0, got %d", opt.Sample))
	case opt.Out == "":
		return usageError(stderr, "fuzz", `--out must name a directory, got ""`)
	}
	if opt.Sample == 0 {
		opt.Sample = -1
	}
	opt.Seed = seed
	if space != "" {
		opt.Space, err = scenarios.LoadSpace(space)
	} else {
		opt.Space, err = scenarios.DefaultSpace()
	}
	if err != nil {
		fmt.Fprintf(stderr, "hedgesim: %v\n", err)
		return exitError
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	var mu sync.Mutex // one writer of stderr at a time
	var bar *progressbar.ProgressBar
	if !quiet && isTerminal(stderr) {
		bar = progressbar.NewOptions(opt.N, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("fuzz"),
			progressbar.OptionShowCount(), progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish(), progressbar.OptionSetWidth(30))
		opt.Progress = func(n int) {
			mu.Lock()
			_ = bar.Set(n)
			mu.Unlock()
		}
	}
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if bar != nil {
			_ = bar.Clear()
		}
		fmt.Fprintf(stderr, format, args...)
	}
	if !quiet {
		opt.Found = func(f fuzz.Failure) {
			detail := firstLineOf(f.Detail)
			if len(detail) > 160 {
				detail = detail[:157] + "..."
			}
			say("fuzz: scenario %d breaks invariant %s: %s (%s)\n", f.Index, f.Invariant, detail, f.Path)
		}
	}
	res, err := fuzz.Run(ctx, opt)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "hedgesim: %v\n", err)
		return exitError
	}
	if res == nil {
		res = &fuzz.Result{}
	}
	printFuzzResult(stdout, &opt, res)
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "hedgesim: fuzz interrupted after %d of %d scenarios\n", res.Checked, opt.N)
		return exitInterrupted
	}
	if len(res.Failures) > 0 {
		return exitError
	}
	return exitOK
}

// printFuzzResult prints the verdict: one paragraph per broken invariant
// (the shrunk file, what breaks, the other scenarios that break it), or
// that nothing broke.
func printFuzzResult(w io.Writer, opt *fuzz.Options, res *fuzz.Result) {
	fmt.Fprintf(w, "fuzz: seed %d: %d scenarios checked (%d also for determinism and --parallel)", opt.Seed, res.Checked, res.Deep)
	if len(res.Failures) == 0 {
		fmt.Fprintln(w, ": no invariant broken")
		return
	}
	fmt.Fprintf(w, ": %d invariant(s) broken\n", len(res.Failures))
	for _, f := range res.Failures {
		fmt.Fprintf(w, "\ninvariant %s: scenario %d\n  %s (%d lines)\n  %s\n", f.Invariant, f.Index, f.Path, f.Lines, indent(firstLineOf(f.Detail)))
		if len(f.Others) > 0 {
			fmt.Fprintf(w, "  also broken by scenarios %s\n", joinInts(f.Others, 20))
		}
		if f.Original != f.Path {
			fmt.Fprintf(w, "  generated file: %s\n", f.Original)
		}
	}
}

func firstLineOf(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }

// joinInts lists up to n of xs.
func joinInts(xs []int, n int) string {
	var b strings.Builder
	for i, x := range xs {
		if i == n {
			fmt.Fprintf(&b, " and %d more", len(xs)-n)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(x))
	}
	return b.String()
}
