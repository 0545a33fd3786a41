package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
       hedgesim scorecard --n N --seed S [--space FILE] [--shard I/N --out DIR] [flags]

Scores every threshold policy on each scenario (a file, every *.toml of a
directory, an embedded scenario by name; --library adds every embedded
scenario): the scenario's own policies and a roster of one per type,
including the recommended policy. A policy loses a scenario when another
dominates it on the p99 and p99.9 of each operation kind the client may
hedge, each where at least ten operations a replication lie beyond it
(pooled figures are shown, not scored), compared replication by
replication on the same seeds:

  - faster: a scored quantile at least 10% lower with its paired 95%
    interval above 0, plus 10% for every 2 RU points more it spends, and
    no scored quantile decidedly 5% worse; or
  - cheaper: an RU multiplier at least 2 points lower with its paired 95%
    interval below 0, and no scored quantile decidedly 5% worse (a policy
    whose error rate is decidedly more than 1 point above another's
    dominates it in neither way: its quantiles hold its failures);
  - or its error rate is more than 1 point above another policy's, paired
    by replication: the mean excess above 1 point with its 95% interval
    above 0.

Replications start at max(3, the scenario's) and grow by half (3, 5, 8,
12), for the policies whose verdict is undecided and those they are
compared with, up to --cap; at the cap an undecided gain counts as none,
and an undecided "worse", RU saving or error excess is judged by its mean. The frontier and the
bound use the first replications, which every policy has.

For each scenario it also runs fixed thresholds of 1 ms to 1 s (the
hindsight frontier): a policy's regret is its headline quantile (p99 of the
hedgeable kind with the most operations) over the best fixed threshold at
no more RU; and, where one operation's latencies do not depend on the
others' (no queueing, gate, RU budget or feed), the clairvoyant bound of
a hedger that knows every operation's latencies.

It prints a line per scenario (-v: a row per policy), each roster
policy's loss rate with its exact 95% interval, the recommended policy's
median regret (over all scenarios, and over those whose conditions change
during the run: episodes, rate_changes, a fault or background window),
the scenarios it loses and why, and last "recommended: K losses of N".
A change holding less than 1% of the run (or leaving less than 1% as it
was) does not count as one.
The output does not depend on --parallel; wall times go to stderr.

With --n N --seed S it scores a generated population: scenarios 0..N-1 of
the seed in the population space (the embedded space/population.toml,
layered over hedgesim fuzz's default space: two regions or more, at least
1000 operations a replication, conditions that change inside the run) or
in --space FILE (layered over fuzz's default space, as fuzz reads it). A
generated scenario is scored with the roster only (its own policy is a
random draw). Scenario i is fuzz-S-i, the file "hedgesim fuzz --space FILE
--seed S --first i --n 1" checks.

With --shard I/N (a population only) it scores the scenarios whose index
is I modulo N and writes the shard's partial result into --out (default
scorecard-shard-I-of-N); "hedgesim merge DIR..." of the N shards prints
what the unsharded scorecard prints, byte for byte.

Examples:
  hedgesim scorecard ../shared/cases/policy/third-set
  hedgesim scorecard --library --parallel 2
  hedgesim scorecard -v alternate-503-far-third.toml
  hedgesim scorecard --n 200 --seed $(date +%s) --parallel 2
  hedgesim scorecard --n 200 --seed 7 --shard 0/4 --out parts/0   # then: hedgesim merge parts

Flags:
`

type scorecardFlags struct {
	parallel, start, cap int
	verbose, library     bool
	n                    int
	seed                 int64
	space                string
	shard                *study.Shard
	out                  string
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
	f.seed = -1 // unset
	fs.Func("seed", "seed of the generated population, 0 to 2^63-1 (with --n)", func(v string) error {
		seed, err := strconv.ParseInt(v, 10, 64)
		if err != nil || seed < 0 {
			return fmt.Errorf("seed must be an integer from 0 to 2^63-1, got %q", v)
		}
		f.seed = seed
		return nil
	})
	fs.StringVar(&f.space, "space", "", "scenario space of the generated population, layered over fuzz's default (with --n; default the embedded population space)")
	fs.Func("shard", "score only the population's scenarios I modulo N and write the partial result into --out; hedgesim merge combines the N partials", func(s string) error {
		sh, err := parseShard(s)
		f.shard = &sh
		return err
	})
	fs.StringVar(&f.out, "out", "", "with --shard: the partial result's directory (default scorecard-shard-I-of-N)")
	if wantsHelp(args) {
		return writeHelp(stdout, scorecardUsage, fs)
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stderr, "scorecard", err.Error())
	}
	if f.parallel < 1 {
		return usageError(stderr, "scorecard", fmt.Sprintf("--parallel must be >= 1, got %d", f.parallel))
	}
	if f.out != "" && f.shard == nil {
		return usageError(stderr, "scorecard", "--out names a shard's partial result: give --shard I/N (a scorecard prints its result)")
	}
	if f.cap > 0 && f.start > f.cap {
		return usageError(stderr, "scorecard", fmt.Sprintf("--reps (%d) must be at most --cap (%d)", f.start, f.cap))
	}
	src, pop, err := scorecardSource(pos, f)
	if le := (*loadError)(nil); errors.As(err, &le) {
		fmt.Fprintf(stderr, "hedgesim: %v\n", le.err)
		return exitError
	}
	if err != nil {
		return usageError(stderr, "scorecard", err.Error())
	}
	opts := scorecard.Options{Parallel: f.parallel, Start: f.start, Cap: f.cap, Context: ctx, RosterOnly: pop != nil}
	began := time.Now()
	var shard []scorecardRecord
	scored := 0
	cards, err := scorecard.Run(src, opts, func(c *scorecard.Card) {
		scored++
		fmt.Fprintf(stderr, "scored %s in %s (%d)\n", c.Scenario, c.Wall.Round(time.Millisecond), scored)
		if f.shard != nil {
			shard = append(shard, recordOf(pop.indices[scored-1], c, f.verbose))
			return
		}
		fmt.Fprint(stdout, cardText(c, f.verbose))
	})
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "hedgesim: %v\n", errInterrupted)
			return exitInterrupted
		}
		fmt.Fprintf(stderr, "hedgesim: %v\n", err)
		return exitError
	}
	if f.shard != nil {
		return exitCode(stderr, writeScorecardShard(pop, f, shard, time.Since(began), stdout))
	}
	fmt.Fprint(stdout, summaryText(scorecard.Summarize(cards)))
	fmt.Fprintf(stderr, "scorecard: %d scenarios in %s\n", len(cards), time.Since(began).Round(time.Second))
	return exitOK
}

// scorecardPopulation is a generated population's recipe: the flags that
// make it and the indices this run scores (a shard's share, or all).
type scorecardPopulation struct {
	n       int
	seed    uint64
	space   string // the space's source (a path, or embedded:...)
	sha256  string // of the --space file ("" for the embedded space)
	indices []int
}

// populationOf returns the population of f and its source.
func populationOf(f scorecardFlags) (*scorecardPopulation, scorecard.Source, error) {
	switch {
	case f.n == 0:
		return nil, scorecard.Source{}, errors.New("--seed and --space score a generated population: give its size with --n N")
	case f.seed < 0:
		return nil, scorecard.Source{}, errors.New("--n scores a generated population: give its seed with --seed S (S >= 0)")
	}
	var sp *scenarios.Space
	var err error
	pop := &scorecardPopulation{n: f.n, seed: uint64(f.seed)}
	if f.space == "" {
		sp, err = scenarios.PopulationSpace()
	} else {
		var data []byte
		if data, err = os.ReadFile(f.space); err == nil {
			sum := sha256.Sum256(data)
			pop.sha256 = hex.EncodeToString(sum[:])
			sp, err = scenarios.LoadSpace(f.space)
		}
	}
	if err != nil {
		return nil, scorecard.Source{}, &loadError{err}
	}
	pop.space = sp.Source
	for i := range f.n {
		if f.shard == nil || i%f.shard.Count == f.shard.Index {
			pop.indices = append(pop.indices, i)
		}
	}
	return pop, scorecard.Population(sp, pop.seed, pop.indices), nil
}

// loadError is a --space file that cannot be read or is not a valid
// space: a problem of the input (exit 1, as hedgesim fuzz reports it), not
// of the command line.
type loadError struct{ err error }

func (e *loadError) Error() string { return e.err.Error() }

// scorecardSource is where the scorecard's scenarios come from: the
// paths and names given, and the library with --library.
func scorecardSource(pos []string, f scorecardFlags) (scorecard.Source, *scorecardPopulation, error) {
	if f.n > 0 || f.seed >= 0 || f.space != "" {
		if len(pos) > 0 || f.library {
			return scorecard.Source{}, nil, errors.New("--n scores a generated population alone: score files, names or --library in a run of their own")
		}
		pop, src, err := populationOf(f)
		return src, pop, err
	}
	if f.shard != nil || f.out != "" {
		return scorecard.Source{}, nil, errors.New("--shard and --out shard a generated population (--n N --seed S)")
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
		return scorecard.Source{}, nil, errors.New("no scenarios: give files, directories or names, or --library, or a population: --n N --seed S")
	}
	return scorecard.Concat("scenarios", srcs...), nil, nil
}

// cardText is one scenario's line (and with verbose a row per policy).
func cardText(c *scorecard.Card, verbose bool) string {
	var w strings.Builder
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
	changes := ""
	if c.Changes != "" {
		changes = "; changes: " + c.Changes
	}
	fmt.Fprintf(&w, "%s  (%s replications, %s; headline %s%s)\n", c.Scenario, reps, state, head, changes)
	if verbose {
		var qs []string
		for _, q := range c.Quantities {
			qs = append(qs, q.String())
		}
		for _, q := range c.Pooled {
			qs = append(qs, q.String())
		}
		fmt.Fprintf(&w, "    %-22s %s | RU × | err | hedged | regret [95%%] (best fixed) | clairvoyant\n", "policy", strings.Join(qs, " | "))
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
			fmt.Fprintf(&w, "    %-22s %s | %.3f | %.2f%% | %.2f%% | %s | %s%s\n", p.Name, strings.Join(vs, " | "), p.RU, 100*p.Errors, 100*p.Hedged, regret, clair, verdict)
		}
		if c.ClairvoyantWhy != "" {
			fmt.Fprintf(&w, "    no clairvoyant bound: %s\n", c.ClairvoyantWhy)
		}
	}
	if p := c.Policy(scorecard.Recommended); p != nil {
		line := "no loss"
		if p.Loses {
			line = "LOSES to " + c.Why(scorecard.Recommended)
		}
		fmt.Fprintf(&w, "    %s: %s\n", scorecard.Recommended, line)
	}
	return w.String()
}

func msText(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// summaryText is the loss rates, the recommended policy's regret (over
// all scenarios and over those whose conditions change), its losses and
// the last line.
func summaryText(s scorecard.Summary) string {
	var w strings.Builder
	fmt.Fprintf(&w, "\n%d scenarios (%d settled at the replication cap; %d with no hedgeable operation kind)\n", s.Scenarios, s.Capped, s.Unhedgeable)
	fmt.Fprintln(&w, "loss rate per roster policy (exact 95% interval):")
	for _, r := range s.Rates {
		fmt.Fprintf(&w, "    %-20s %3d of %3d  %5.1f%% [%.1f, %.1f]\n", r.Policy, r.Lost, r.Ran, 100*float64(r.Lost)/math.Max(float64(r.Ran), 1), 100*r.CI[0], 100*r.CI[1])
	}
	if s.RegretN > 0 {
		fmt.Fprintf(&w, "%s: median regret to the hindsight frontier %s over %d scenarios; beats every fixed threshold on %d, behind the best on %d\n",
			scorecard.Recommended, pctCI(s.Regret, s.RegretCI), s.RegretN, s.Beats, s.Behind)
	}
	if c := s.Changing; c.Scenarios > 0 {
		fmt.Fprintf(&w, "%s where conditions change during the run (%d scenarios: episodes, rate_changes, a fault or background window): median regret %s over %d; beats every fixed threshold on %d, behind the best on %d\n",
			scorecard.Recommended, c.Scenarios, pctCI(c.Median, c.CI), c.N, c.Beats, c.Behind)
		fmt.Fprintf(&w, "%s where conditions change, paired over members: %s\n", scorecard.Recommended, changingVerdict(c))
	} else {
		fmt.Fprintf(&w, "%s where conditions change during the run: no such scenario\n", scorecard.Recommended)
	}
	if len(s.Lost) > 0 {
		fmt.Fprintf(&w, "%s loses %d:\n", scorecard.Recommended, len(s.Lost))
		for _, l := range s.Lost {
			changes := ""
			if l.Changes != "" {
				changes = " (changes: " + l.Changes + ")"
			}
			fmt.Fprintf(&w, "    %s%s: %s\n", l.Scenario, changes, l.Why)
		}
		fmt.Fprintln(&w, "    (member fuzz-S-I of a population is written out by: hedgesim fuzz --space SPACE --seed S --first I --n 1 --keep --out DIR;")
		fmt.Fprintln(&w, "     SPACE is the --space scored, scenarios/space/population.toml by default)")
	}
	r := s.Rate(scorecard.Recommended)
	fmt.Fprintf(&w, "%s: %d losses of %d\n", scorecard.Recommended, r.Lost, r.Ran)
	return w.String()
}

// changingVerdict answers whether the recommended policy beats the best
// fixed threshold in hindsight at equal RU over the members r summarizes:
// the verdict, the mean regret with its interval over members, their
// count, and the members the answer would need (RegretSummary.Need,
// Need5).
func changingVerdict(r scorecard.RegretSummary) string {
	if r.N < 2 {
		return fmt.Sprintf("no verdict: a regret on %d members (needs at least 2)", r.N)
	}
	verdict := "not distinguishable from"
	switch r.Verdict() {
	case -1:
		verdict = "beats"
	case 1:
		verdict = "behind"
	}
	return fmt.Sprintf("%s the best fixed threshold at equal RU: mean regret %s over %d members (Student t; sd %.1f%%); 80%% power needs %s members at the observed mean, %s at a %.0f%% regret",
		verdict, pctCI(r.Mean, r.MeanCI), r.N, 100*r.SD, countText(r.Need), countText(r.Need5), 100*scorecard.PowerEffect)
}

// countText renders a number of members ("-" for none, "unbounded" for +Inf).
func countText(n float64) string {
	switch {
	case math.IsInf(n, 1):
		return "unbounded"
	case !(n > 0):
		return "-"
	}
	return strconv.FormatFloat(n, 'f', 0, 64)
}

// pctCI renders a relative figure and its interval in percent.
func pctCI(v float64, ci [2]float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%% [%+.1f, %+.1f]", 100*v, 100*ci[0], 100*ci[1])
}
