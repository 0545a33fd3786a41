package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"hedgelab/internal/scorecard"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
)

// scorecardUsage is the help of scorecard.
const scorecardUsage = `Usage: hedgesim scorecard [flags] [FILE|DIR|NAME...]

Scores every threshold policy on each scenario (a file, every *.toml of a
directory, an embedded scenario by name; --library adds every embedded
scenario): the scenario's own policies and a roster of one per type,
including the recommended policy. A policy loses a scenario when another
dominates it on the p99 and p99.9 of each operation kind the client may
hedge (pooled figures are shown, not scored), compared replication by
replication on the same seeds:

  - faster: a scored quantile at least 10% lower with its paired 95%
    interval above 0, plus 10% for every 2 RU points more it spends, and
    no scored quantile 5% worse; or
  - cheaper: at least 2 RU points cheaper with no scored quantile 5% worse;
  - or its error rate is more than 1 point above the best.

Replications start at max(3, the scenario's) and grow by half (3, 5, 8,
12), for the policies whose verdict is undecided and those they are
compared with, up to --cap; at the cap an undecided gain counts as none
and an undecided "worse" is judged by its mean. The frontier and the
bound use the first replications, which every policy has.

For each scenario it also runs fixed thresholds of 1 ms to 1 s (the
hindsight frontier): a policy's regret is its headline quantile (p99 of the
hedgeable kind with the most operations) over the best fixed threshold at
no more RU; and, where one operation's latencies do not depend on the
others' (no queueing, gate, RU budget or feed), the clairvoyant bound of
a hedger that knows every operation's latencies.

It prints a line per scenario (-v: a row per policy), each roster
policy's loss rate with its exact 95% interval, the recommended policy's
median regret, and last "recommended: K losses of N".

Examples:
  hedgesim scorecard ../shared/cases/policy/third-set
  hedgesim scorecard --library --parallel 2
  hedgesim scorecard -v alternate-503-far-third.toml

Flags:
`

type scorecardFlags struct {
	parallel, start, cap int
	verbose, library     bool
	n                    int
	seed                 int64
	space                string
}

func cmdScorecard(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("scorecard", flag.ContinueOnError)
	var f scorecardFlags
	fs.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "simulations run at once; the output does not depend on it")
	positive := func(dst *int, what string) func(string) error {
		return func(s string) error {
			v, err := strconv.Atoi(s)
			if err != nil || v < 1 {
				return fmt.Errorf("%s must be an integer >= 1, got %q", what, s)
			}
			*dst = v
			return nil
		}
	}
	fs.Func("reps", "replications to start each scenario with (default max(3, the scenario's))", positive(&f.start, "reps"))
	fs.Func("cap", fmt.Sprintf("most replications per scenario (default %d)", study.ScoreCap), positive(&f.cap, "cap"))
	fs.BoolVar(&f.verbose, "v", false, "print every policy's figures")
	fs.BoolVar(&f.library, "library", false, "score every embedded scenario too")
	fs.Func("n", "score N scenarios of the generated population (needs --seed)", positive(&f.n, "n"))
	fs.Int64Var(&f.seed, "seed", -1, "seed of the generated population (with --n)")
	fs.StringVar(&f.space, "space", "", "scenario space of the generated population (with --n; default the built-in space)")
	if wantsHelp(args) {
		fs.SetOutput(stdout)
		fmt.Fprint(stdout, scorecardUsage)
		fs.PrintDefaults()
		return exitOK
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stderr, "scorecard", err.Error())
	}
	if f.parallel < 1 {
		return usageError(stderr, "scorecard", fmt.Sprintf("--parallel must be >= 1, got %d", f.parallel))
	}
	if f.cap > 0 && f.start > f.cap {
		return usageError(stderr, "scorecard", fmt.Sprintf("--reps (%d) must be at most --cap (%d)", f.start, f.cap))
	}
	src, err := scorecardSource(pos, f)
	if err != nil {
		return usageError(stderr, "scorecard", err.Error())
	}
	opts := scorecard.Options{Parallel: f.parallel, Start: f.start, Cap: f.cap, Context: ctx}
	began := time.Now()
	cards, err := scorecard.Run(src, opts, func(c *scorecard.Card) { printCard(stdout, c, f.verbose) })
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "hedgesim: %v\n", errInterrupted)
			return exitInterrupted
		}
		fmt.Fprintf(stderr, "hedgesim: %v\n", err)
		return exitError
	}
	printSummary(stdout, scorecard.Summarize(cards), time.Since(began))
	return exitOK
}

// scorecardSource is where the scorecard's scenarios come from: the
// paths and names given, and the library with --library.
func scorecardSource(pos []string, f scorecardFlags) (scorecard.Source, error) {
	if f.n > 0 || f.seed >= 0 || f.space != "" {
		// The population: scorecard.Generated(name, f.n, func(i int) (*scenarios.Scenario, error) { ... })
		// over the scenario generator (scenario i of seed S in space FILE).
		return scorecard.Source{}, errors.New("--n, --seed and --space score a generated population, which needs the scenario generator: not in this build")
	}
	var srcs []scorecard.Source
	var paths []string
	for _, a := range pos {
		if _, err := os.Stat(a); err == nil || strings.ContainsAny(a, `/\`) || strings.HasSuffix(a, ".toml") {
			paths = append(paths, a)
			continue
		}
		name := a
		srcs = append(srcs, scorecard.Source{Name: name, Scenarios: func(yield func(*scenarios.Scenario, error) bool) {
			yield(scenarios.Get(name))
		}})
	}
	if len(paths) > 0 {
		srcs = append([]scorecard.Source{scorecard.Files(paths...)}, srcs...)
	}
	if f.library {
		srcs = append(srcs, scorecard.Library())
	}
	if len(srcs) == 0 {
		return scorecard.Source{}, errors.New("no scenarios: give files, directories or names, or --library")
	}
	return scorecard.Concat("scenarios", srcs...), nil
}

// printCard prints one scenario's line (and with verbose a row per
// policy).
func printCard(w io.Writer, c *scorecard.Card, verbose bool) {
	state := "decided"
	if !c.Decided {
		state = "capped"
	}
	head := "no hedgeable kind"
	if c.Headline >= 0 {
		head = c.Quantities[c.Headline].String()
	}
	reps := strconv.Itoa(c.Start)
	if c.Replications > c.Start {
		reps += "-" + strconv.Itoa(c.Replications)
	}
	fmt.Fprintf(w, "%s  (%s replications, %s; headline %s; %s)\n", c.Scenario, reps, state, head, c.Wall.Round(time.Second))
	if verbose {
		var qs []string
		for _, q := range c.Quantities {
			qs = append(qs, q.String())
		}
		for _, q := range c.Pooled {
			qs = append(qs, q.String())
		}
		fmt.Fprintf(w, "    %-22s %s | RU × | err | hedged | regret [95%%] (best fixed) | clairvoyant\n", "policy", strings.Join(qs, " | "))
		for _, p := range c.Policies {
			var vs []string
			for _, v := range p.Latency {
				vs = append(vs, msText(v))
			}
			for _, v := range p.Pooled {
				vs = append(vs, msText(v))
			}
			regret := "-"
			if p.Regret.N > 0 {
				regret = fmt.Sprintf("%+.1f%% [%+.1f, %+.1f] (%s)", 100*p.Regret.Mean, 100*p.Regret.Lo, 100*p.Regret.Hi, p.Best.Policy)
			}
			clair := "-"
			if !math.IsNaN(p.Clairvoyant) {
				clair = msText(p.Clairvoyant)
			}
			verdict := ""
			if p.Loses {
				verdict = "  LOSES"
			}
			fmt.Fprintf(w, "    %-22s %s | %.3f | %.2f%% | %.2f%% | %s | %s%s\n", p.Name, strings.Join(vs, " | "), p.RU, 100*p.Errors, 100*p.Hedged, regret, clair, verdict)
		}
		if c.ClairvoyantWhy != "" {
			fmt.Fprintf(w, "    no clairvoyant bound: %s\n", c.ClairvoyantWhy)
		}
	}
	if p := c.Policy(scorecard.Recommended); p != nil {
		line := "no loss"
		if p.Loses {
			var why []string
			for _, l := range p.Losses {
				if l.Truth != study.True {
					continue
				}
				if l.By == "" {
					why = append(why, l.Why)
				} else {
					why = append(why, l.By+": "+l.Why)
				}
			}
			line = "LOSES to " + strings.Join(why, "; ")
		}
		fmt.Fprintf(w, "    %s: %s\n", scorecard.Recommended, line)
	}
}

func msText(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// printSummary prints the loss rates, the recommended policy's regret and
// the last line.
func printSummary(w io.Writer, s scorecard.Summary, wall time.Duration) {
	fmt.Fprintf(w, "\n%d scenarios (%d settled at the replication cap), %s\n", s.Scenarios, s.Capped, wall.Round(time.Second))
	fmt.Fprintln(w, "loss rate per roster policy (exact 95% interval):")
	for _, r := range s.Rates {
		fmt.Fprintf(w, "    %-20s %3d of %3d  %5.1f%% [%.1f, %.1f]\n", r.Policy, r.Lost, r.Ran, 100*float64(r.Lost)/math.Max(float64(r.Ran), 1), 100*r.CI[0], 100*r.CI[1])
	}
	if s.RegretN > 0 {
		fmt.Fprintf(w, "%s: median regret to the hindsight frontier %+.1f%% [%+.1f, %+.1f] over %d scenarios; beats every fixed threshold on %d, behind the best on %d\n",
			scorecard.Recommended, 100*s.Regret, 100*s.RegretCI[0], 100*s.RegretCI[1], s.RegretN, s.Beats, s.Behind)
	}
	r := s.Rate(scorecard.Recommended)
	fmt.Fprintf(w, "%s: %d losses of %d\n", scorecard.Recommended, r.Lost, r.Ran)
}
