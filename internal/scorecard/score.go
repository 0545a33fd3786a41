package scorecard

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"hedgelab/hedging"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// Options tune a scorecard. The result does not depend on Parallel.
type Options struct {
	// Parallel is the number of simulations run at once (default
	// GOMAXPROCS).
	Parallel int
	// Start is the number of replications to start each scenario with
	// (default max(study.ScoreStart, the scenario's replications)); Cap the
	// most the sequential rule may add up to (default study.ScoreCap, at
	// least Start).
	Start, Cap int
	// Context, when set, cancels the scorecard (its error is returned).
	Context context.Context
	// OwnOnly scores the scenario's own policies without the roster, and
	// NoFrontier skips the hindsight frontier and the clairvoyant bound
	// (Policy.Best, Regret and Clairvoyant stay zero/NaN): a test of the
	// rule on chosen policies.
	OwnOnly, NoFrontier bool
	// RosterOnly scores the roster without the scenario's own policies
	// (a generated population, whose own policies are random draws).
	RosterOnly bool
}

// scoredQ are the quantiles scored for every hedgeable kind, each where
// enough of the kind's operations lie beyond it (scoresQuantile).
var scoredQ = []float64{0.99, 0.999}

// minTail is the number of operations per replication beyond a quantile
// for it to be scored: with fewer it is one of the few largest values, an
// extreme rather than a quantile.
const minTail = 10

// scoresQuantile says whether quantile q of a kind with ops operations per
// replication is scored: at least minTail operations lie beyond it (p99
// from 1,000 operations, p99.9 from 10,000). The one rule for every
// scored quantile.
func scoresQuantile(q float64, ops int64) bool {
	return float64(ops)*(1-q) >= minTail
}

// Policy is one scored policy's figures on one scenario (means over the
// replications).
type Policy struct {
	// Name is the scenario's name of the policy; Roster the roster entry it
	// stands for ("" for a policy of the scenario's own).
	Name, Roster string
	// Loses is the rule's verdict (study.Paired.Losses, settled at the last
	// replication) and Losses its reasons.
	Loses  bool
	Losses []study.Loss
	// Latency holds the mean of each scored quantity (Card.Quantities),
	// Pooled of each Card.Pooled quantity (ms).
	Latency, Pooled []float64
	// RU, Errors and Hedged are the mean RU multiplier, error rate and
	// fraction of operations hedged.
	RU, Errors, Hedged float64
	// Best is the best fixed threshold at no more RU on the headline
	// quantity (study.BestAt over Card.Frontier) and Regret the policy's
	// relative excess over it, paired by replication (negative: it beats
	// the best fixed threshold chosen after the fact).
	Best   study.FrontierPoint
	Regret study.Gain
	// Clairvoyant is the clairvoyant hedger's headline quantity at the
	// policy's RU (ms; NaN where the model does not allow the bound).
	Clairvoyant float64
}

// Card is one scenario's scorecard.
type Card struct {
	Scenario, Source string
	// Start is the replications every policy ran (and the frontier and the
	// clairvoyant bound); Replications the most any policy ran, added by
	// the sequential rule where a verdict was undecided; Decided whether
	// every verdict was decided before Cap (false: some were settled at
	// the cap).
	Start, Replications int
	Decided             bool
	// Quantities are the scored quantities (each hedgeable kind's p99 and
	// p99.9), Pooled the pooled ones shown beside them; Headline indexes
	// the quantity the frontier and regret are on (the p99 of the
	// hedgeable kind with the most operations; -1 when no kind is
	// hedgeable).
	Quantities, Pooled []study.Quantity
	Headline           int
	Policies           []Policy
	// Frontier holds every fixed threshold's point on the headline
	// quantity (GridMs and no hedging), in threshold order.
	Frontier []study.FrontierPoint
	// ClairvoyantWhy is empty where the clairvoyant bound holds, else why
	// it does not.
	ClairvoyantWhy string
	// Paired is the rule's input (the scored policies' replications).
	Paired *study.Paired
	// Changes names what changes the scenario's conditions during a run
	// (episodes, rate_changes, a fault or background window), "" when
	// nothing does (see changes).
	Changes string
	// Wall is the wall time the scenario took.
	Wall time.Duration
}

// Policy returns the scored policy called name, or nil.
func (c *Card) Policy(name string) *Policy {
	i := slices.IndexFunc(c.Policies, func(p Policy) bool { return p.Name == name })
	if i < 0 {
		return nil
	}
	return &c.Policies[i]
}

// RosterPolicy returns the scored policy that stands for roster entry
// name, or nil.
func (c *Card) RosterPolicy(name string) *Policy {
	i := slices.IndexFunc(c.Policies, func(p Policy) bool { return p.Roster == name })
	if i < 0 {
		return nil
	}
	return &c.Policies[i]
}

// sample is what is kept of one run: every kind's scored quantiles,
// operation and failure counts, the pooled quantiles, RU, error and hedge
// rates.
type sample struct {
	ops                  int64
	kindOps, kindFailed  [simnet.KindSlots]int64
	kindQ                [simnet.KindSlots][2]float64
	pooled               [2]float64
	ru, errs, hedged     float64
	ruReturned, ruCharge float64
}

// summarize keeps what the scorecard reads of st.
func summarize(st *simnet.Stats) sample {
	s := sample{ops: st.Ops, ru: st.RUMultiplier(), ruReturned: st.RUReturned, ruCharge: st.RUCharged, kindFailed: st.KindFailed}
	if st.Ops > 0 {
		s.errs = float64(st.Failed()) / float64(st.Ops)
		s.hedged = float64(st.Hedged) / float64(st.Ops)
	}
	for i, q := range scoredQ {
		s.pooled[i] = st.QuantileMs(q)
	}
	for k := range simnet.KindSlots {
		kind := hedging.OperationKind(k)
		s.kindOps[k] = st.KindOps(kind)
		for i, q := range scoredQ {
			s.kindQ[k][i] = st.KindQuantileMs(kind, q)
		}
	}
	return s
}

// pool runs jobs on n workers and returns the first error in job order
// (or the context's).
func pool(ctx context.Context, n int, jobs []func() error) error {
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = jobs[i]()
			}
		}()
	}
feed:
	for i := range jobs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Score scores one scenario: its policies and the roster's (see lineup),
// replications added by the sequential rule (study.NextReplications)
// until every verdict is decided or opts.Cap is reached, then the
// hindsight frontier of GridMs and the clairvoyant bound on the same
// replications.
func Score(s *scenarios.Scenario, opts Options) (*Card, error) {
	began := time.Now()
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	par := opts.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	start := opts.Start
	if start <= 0 {
		start = max(study.ScoreStart, s.Replications)
	}
	limit := max(cmpOr(opts.Cap, study.ScoreCap), start)
	cfg, own, err := s.Config()
	if err != nil {
		return nil, err
	}
	entries, grid, err := lineup(s, cfg, own, opts.OwnOnly, opts.RosterOnly)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Source, err)
	}
	frontier := 0
	if !opts.NoFrontier {
		for _, j := range grid {
			if j < 0 {
				frontier++
			}
		}
	}
	if err := checkWork(s, cfg, len(entries), frontier, start, limit); err != nil {
		return nil, err
	}
	runs := make([][]sample, len(entries)) // [policy][replication]
	// run runs replications [from, to) of the policies which (all when
	// nil) of pols into out.
	run := func(pols []simnet.Policy, which []int, out [][]sample, from, to int) error {
		if which == nil {
			for p := range pols {
				which = append(which, p)
			}
		}
		var jobs []func() error
		for r := from; r < to; r++ {
			for _, p := range which {
				for len(out[p]) < to {
					out[p] = append(out[p], sample{})
				}
				jobs = append(jobs, func() error {
					st, err := simnet.Run(cfg, pols[p], r, simnet.RunOptions{Context: ctx})
					if err != nil {
						return fmt.Errorf("%s: policy %q: %w", s.Source, pols[p].Name, err)
					}
					out[p][r] = summarize(st)
					return nil
				})
			}
		}
		return pool(ctx, par, jobs)
	}
	pols := make([]simnet.Policy, len(entries))
	for i, e := range entries {
		pols[i] = e.pol
	}
	if err := run(pols, nil, runs, 0, start); err != nil {
		return nil, err
	}
	card := &Card{Scenario: s.Name, Source: s.Source, Start: start, Changes: changes(&s.File, scenarios.RunLength(&s.File, cfg).Seconds())}
	card.choose(cfg, runs)
	n := start
	for {
		card.Paired = card.paired(entries, runs)
		more := card.Paired.Undecided()
		if len(more) == 0 {
			card.Decided = true
			break
		}
		if n >= limit {
			break
		}
		next := min(study.NextReplications(n), limit)
		if err := run(pols, more, runs, n, next); err != nil {
			return nil, err
		}
		n = next
	}
	card.Replications = n
	// The frontier's fixed thresholds and the clairvoyant bound, on the
	// first replications (every policy has them).
	var gpols []simnet.Policy
	var gidx []int
	if !opts.NoFrontier {
		if gpols, gidx, err = gridPolicies(grid); err != nil {
			return nil, err
		}
	}
	gruns := make([][]sample, len(gpols))
	if err := run(gpols, nil, gruns, 0, start); err != nil {
		return nil, err
	}
	n = start
	var seen []foresight
	card.ClairvoyantWhy = clairvoyantWhy(cfg)
	if opts.NoFrontier {
		card.ClairvoyantWhy = "not computed"
	}
	if card.ClairvoyantWhy == "" && card.Headline >= 0 {
		if seen, err = foresee(ctx, par, cfg, kindOf(card.Quantities[card.Headline]), n); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Source, err)
		}
	}
	card.fill(entries, runs, grid, gidx, gruns, seen)
	card.Wall = time.Since(began)
	return card, nil
}

func cmpOr(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// kindOf returns the operation kind a quantity names.
func kindOf(q study.Quantity) hedging.OperationKind {
	k, _ := hedging.ParseOperationKind(q.Kind)
	return k
}

// choose sets the scored quantities from the first replication of the
// first policy (every policy has the same arrivals): the p99 and p99.9 of
// every kind the client may hedge (hedging.PhaseSet.Hedges), each where at
// least minTail of its operations lie beyond it (scoresQuantile); the
// headline is the p99 of the scored kind with the most operations (none
// when no kind has enough: Headline -1).
func (c *Card) choose(cfg *simnet.Config, runs [][]sample) {
	c.Headline = -1
	first := runs[0][0]
	most := int64(0)
	for k := range simnet.KindSlots {
		kind := hedging.OperationKind(k)
		ops := first.kindOps[k]
		if ops == 0 || !cfg.Client.Phase.Hedges(kind) {
			continue
		}
		for _, q := range scoredQ {
			if scoresQuantile(q, ops) {
				if q == 0.99 && ops > most {
					most, c.Headline = ops, len(c.Quantities)
				}
				c.Quantities = append(c.Quantities, study.Quantity{Kind: kind.String(), Q: q})
			}
		}
	}
	for _, q := range scoredQ {
		c.Pooled = append(c.Pooled, study.Quantity{Q: q})
	}
}

// value returns quantity q of sample s.
func value(s sample, q study.Quantity) float64 {
	i := slices.Index(scoredQ, q.Q)
	if q.Kind == "" {
		return s.pooled[i]
	}
	return s.kindQ[kindOf(q)][i]
}

// amongFailures says whether quantile q of ops operations, failed of
// which failed, falls among the failures when a failed operation ranks
// slower than every answered one: its rank, q × ops rounded to the
// nearest within [1, ops] as the latency histograms count it, is above the
// ops − failed answered.
func amongFailures(q float64, ops, failed int64) bool {
	if ops <= 0 || failed <= 0 {
		return false
	}
	rank := min(max(int64(q*float64(ops)+0.5), 1), ops)
	return rank > ops-failed
}

// replication is sample s as the rule reads it: a kind's quantile that
// falls among its failures is study.Failed, not the time they failed at.
func (c *Card) replication(s sample) study.Replication {
	r := study.Replication{RU: s.ru, Errors: s.errs, Empty: s.ops == 0}
	for _, q := range c.Quantities {
		v := value(s, q)
		if k := kindOf(q); q.Kind != "" && amongFailures(q.Q, s.kindOps[k], s.kindFailed[k]) {
			v = study.Failed
		}
		r.Latency = append(r.Latency, v)
	}
	return r
}

// paired builds the rule's input from every replication run.
func (c *Card) paired(entries []entry, runs [][]sample) *study.Paired {
	p := &study.Paired{Quantities: c.Quantities}
	for i, e := range entries {
		p.Policies = append(p.Policies, e.file.Name)
		var reps []study.Replication
		for _, s := range runs[i] {
			reps = append(reps, c.replication(s))
		}
		p.Reps = append(p.Reps, reps)
	}
	return p
}

// meanOf returns the mean of f over the non-empty samples.
func meanOf(ss []sample, f func(sample) float64) float64 {
	sum, k := 0.0, 0
	for _, s := range ss {
		if s.ops > 0 {
			sum += f(s)
			k++
		}
	}
	if k == 0 {
		return math.NaN()
	}
	return sum / float64(k)
}

// fill computes every policy's figures, verdict, regret and clairvoyant
// bound.
func (c *Card) fill(entries []entry, runs [][]sample, grid, gidx []int, gruns [][]sample, seen []foresight) {
	n := c.Start
	// The frontier: every fixed threshold on the headline quantity, and no
	// hedging (a disabled policy among the scored ones).
	type point struct {
		fp   study.FrontierPoint
		runs []sample
	}
	var points []point
	if c.Headline >= 0 && len(gidx) > 0 {
		hq := c.Quantities[c.Headline]
		add := func(name string, ms float64, ss []sample) {
			points = append(points, point{study.FrontierPoint{Policy: name, ThresholdMs: ms,
				RU: meanOf(ss, func(s sample) float64 { return s.ru }), Ms: meanOf(ss, func(s sample) float64 { return value(s, hq) })}, ss})
		}
		for g, ms := range GridMs {
			if j := grid[g]; j >= 0 {
				add(entries[j].file.Name, ms, runs[j][:n])
			} else {
				add(gridName(ms), ms, gruns[slices.Index(gidx, g)])
			}
		}
		if j := slices.IndexFunc(entries, func(e entry) bool { return e.file.Type == "disabled" }); j >= 0 {
			add(entries[j].file.Name, math.Inf(1), runs[j][:n])
		}
		for _, p := range points {
			c.Frontier = append(c.Frontier, p.fp)
		}
	}
	var noHedge []sample
	if j := slices.IndexFunc(entries, func(e entry) bool { return e.file.Type == "disabled" }); j >= 0 {
		noHedge = runs[j][:n]
	}
	for i, e := range entries {
		ss := runs[i]
		p := Policy{Name: e.file.Name, Roster: e.roster, Clairvoyant: math.NaN(),
			RU:     meanOf(ss, func(s sample) float64 { return s.ru }),
			Errors: meanOf(ss, func(s sample) float64 { return s.errs }),
			Hedged: meanOf(ss, func(s sample) float64 { return s.hedged })}
		t, losses := c.Paired.Losses(i, true)
		p.Loses, p.Losses = t == study.True, losses
		for _, q := range c.Quantities {
			p.Latency = append(p.Latency, meanOf(ss, func(s sample) float64 { return value(s, q) }))
		}
		for _, q := range c.Pooled {
			p.Pooled = append(p.Pooled, meanOf(ss, func(s sample) float64 { return value(s, q) }))
		}
		if c.Headline >= 0 && len(points) > 0 && !math.IsNaN(p.RU) {
			// By name: a point whose figures are NaN (no operation of the
			// headline kind completed) is not == to itself.
			best, _ := study.BestAt(c.Frontier, p.RU)
			bi := slices.IndexFunc(points, func(pt point) bool { return pt.fp.Policy == best.Policy })
			hq := c.Quantities[c.Headline]
			var mine, theirs []float64
			for r := range n {
				if bi >= 0 && ss[r].ops > 0 && points[bi].runs[r].ops > 0 {
					mine = append(mine, value(ss[r], hq))
					theirs = append(theirs, value(points[bi].runs[r], hq))
				}
			}
			p.Best, p.Regret = best, study.Excess(mine, theirs)
		}
		if len(seen) == n && noHedge != nil {
			var bounds []float64
			for r := range n {
				extra := max(0, ss[r].ru-noHedge[r].ru) * noHedge[r].ruReturned
				bounds = append(bounds, study.ClairvoyantQuantile(seen[r].ops, 0.99, extra))
			}
			p.Clairvoyant = meanNonNaN(bounds)
		}
		c.Policies = append(c.Policies, p)
	}
}

// meanNonNaN returns the mean of the values of xs that are not NaN (NaN
// for none).
func meanNonNaN(xs []float64) float64 {
	sum, k := 0.0, 0
	for _, x := range xs {
		if !math.IsNaN(x) {
			sum += x
			k++
		}
	}
	if k == 0 {
		return math.NaN()
	}
	return sum / float64(k)
}
