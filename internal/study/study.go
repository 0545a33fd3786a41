// Package study runs a scenario's policies over its replications, in
// parallel, merges the measurements deterministically and turns them into
// the figures, confidence intervals, CCDFs and timelines that
// internal/report writes.
package study

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sort"
	"sync/atomic"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"hedgelab/internal/report"
	"hedgelab/simnet"
)

// PolicyResult is one policy's measurements merged over its replications,
// and the headline figures of each replication in which an operation
// arrived (in replication order, the values of [figureNames]) for the
// confidence intervals.
type PolicyResult struct {
	Name   string
	Merged *simnet.Stats
	// PerRep holds the figures (figureNames order) of each replication
	// with at least one operation, in replication order. Only these few
	// numbers are kept per replication: each replication's Stats is merged
	// into Merged as soon as it and its predecessors have finished, so
	// memory does not grow with the number of replications.
	PerRep [][]float64
	// PerRepFeed holds the feed figures whose interval comes from the
	// replications (feedValues) of the same replications, for runs with
	// feeds.
	PerRepFeed [][]float64
	// EmptyReplications counts the replications in which no operation
	// arrived (a low rate in a short run): they have no latency or RU
	// multiplier, so they are left out of PerRep and of the means rather
	// than averaged in as zeros.
	EmptyReplications int
}

// Result is a whole simulated scenario.
type Result struct {
	Policies     []PolicyResult
	Replications int
}

// Options tune Simulate.
type Options struct {
	// Parallel is the number of worker goroutines (default GOMAXPROCS). The
	// result does not depend on it.
	Parallel int
	// Progress is incremented once per finished operation (may be nil).
	Progress *atomic.Int64
	// Context, when set, cancels the simulation: Simulate stops its
	// workers and returns the context's error and no result.
	Context context.Context
}

// Simulate runs every policy for every replication (replication r uses
// seed simnet.ReplicationSeed(cfg.Seed, r), the same for every policy:
// common random numbers) on opts.Parallel workers and merges each
// replication as soon as it and its predecessors have finished, in a fixed
// order, so the output is independent of scheduling and memory does not
// grow with the number of replications. It returns the first error in
// (policy, replication) order, or the context's error when opts.Context is
// cancelled.
func Simulate(cfg *simnet.Config, policies []simnet.Policy, replications int, opts Options) (*Result, error) {
	res, err := SimulateAll([]Input{{Config: cfg, Policies: policies, Replications: replications}}, opts)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// Input is one simulation of SimulateAll: a scenario's configuration, its
// policies and its number of replications.
type Input struct {
	Config       *simnet.Config
	Policies     []simnet.Policy
	Replications int
	// Label, when set, prefixes this input's errors (e.g. a sweep point).
	Label string
}

// SimulateAll is [Simulate] for several inputs at once, such as the points
// of a sweep: every (input, policy, replication) run goes to one pool of
// opts.Parallel workers, so a sweep of single runs keeps every worker busy.
// It returns one Result per input, in input order, each exactly what
// Simulate returns for that input, and the first error in (input, policy,
// replication) order, or the context's error when opts.Context is
// cancelled. Replications are merged as they finish (see Simulate).
// Every run's measurements pass simnet's invariants (simnet.Run) and
// every policy's figures pass this package's (a *FigureError otherwise)
// before a result is returned.
func SimulateAll(inputs []Input, opts Options) ([]*Result, error) {
	if err := checkInputs(inputs); err != nil {
		return nil, err
	}
	folds, errs, err := simulateRuns(inputs, allRuns(inputs), opts, false)
	if err != nil {
		return nil, err
	}
	workers := opts.Parallel
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return results(inputs, folds, errs, workers)
}

// PanicError is a run that panicked (a defect of the simulator or the
// hedging package, never of the input): the run fails with it instead of
// taking the process down, so the other runs' workers stop cleanly and
// hedgesim fuzz can shrink the input that provokes it.
type PanicError struct {
	Policy      string
	Replication int
	Value       any
	Stack       []byte
}

// Error returns "policy "p", replication r: internal error: panic: V" and
// the goroutine's stack.
func (e *PanicError) Error() string {
	return fmt.Sprintf("policy %q, replication %d: internal error (a defect, please report it): panic: %v\n%s", e.Policy, e.Replication, e.Value, e.Stack)
}

// runOne is simnet.Run with a panic turned into a *PanicError.
func runOne(cfg *simnet.Config, p simnet.Policy, r int, opts simnet.RunOptions) (st *simnet.Stats, err error) {
	defer func() {
		if v := recover(); v != nil {
			st, err = nil, &PanicError{Policy: p.Name, Replication: r, Value: v, Stack: debug.Stack()}
		}
	}()
	return simnet.Run(cfg, p, r, opts)
}

func labelled(label string, err error) error {
	if label == "" {
		return err
	}
	return fmt.Errorf("%s: %w", label, err)
}

// figureNames are the CI95 keys, in report order.
var figureNames = []string{"p50_ms", "p90_ms", "p99_ms", "p999_ms", "p9999_ms", "max_ms", "mean_ms", "ru_multiplier"}

func figureValues(s *simnet.Stats) []float64 {
	return []float64{
		s.QuantileMs(0.5), s.QuantileMs(0.9), s.QuantileMs(0.99), s.QuantileMs(0.999), s.QuantileMs(0.9999),
		float64(s.Latency.Max()) / 1000, s.MeanMs(), s.RUMultiplier(),
	}
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// CI95 returns the 95% confidence interval of the mean of xs by Student's t
// (xs are independent replications). With fewer than 2 values it returns
// [x, x].
func CI95(xs []float64) [2]float64 {
	n := float64(len(xs))
	if len(xs) == 0 {
		return [2]float64{}
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if len(xs) < 2 {
		return [2]float64{mean, mean}
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / (n - 1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.975)
	h := t * sd / math.Sqrt(n)
	return [2]float64{mean - h, mean + h}
}

// Figures computes the headline figures of one policy. With one
// replication in which operations arrived, the latency figures come from
// its histogram (3 significant digits) and the mean from its exact sum.
// With several, the latency percentiles, the mean and the RU multiplier
// are the means of the per-replication values with Student-t 95%
// confidence intervals (the method of independent replications), so each
// figure lies inside its interval; max_ms is the largest latency of any
// replication (no interval); counts, rates and terminal states are totals
// over all replications. Replications without an operation are left out
// of the means and intervals (Figures.EmptyReplications counts them).
// ErrorRate counts every failed operation (simnet.Stats.Failed: an error
// or a final response with status >= 400); the latency figures include
// the failed operations.
func Figures(p PolicyResult) report.Figures {
	m := p.Merged
	v := figureValues(m)
	f := report.Figures{
		Policy: p.Name, Ops: m.Ops, EmptyReplications: p.EmptyReplications,
		P50: v[0], P90: v[1], P99: v[2], P999: v[3], P9999: v[4], Max: v[5], Mean: v[6],
		HedgeRate:         ratio(m.Hedged, m.Ops),
		HedgeRateLatency:  ratio(m.Hedged-m.FailoverHedged, m.Ops),
		HedgeRateFailover: ratio(m.FailoverHedged, m.Ops),
		AlternateWinRate:  ratio(m.AlternateWins, m.Ops),
		RUMultiplier:      m.RUMultiplier(),
		ErrorRate:         ratio(m.Failed(), m.Ops),
		TerminalStates:    map[string]int64{},
	}
	for i, n := range m.Terminal {
		if n > 0 {
			f.TerminalStates[simnet.TerminalName(i)] = n
		}
	}
	f.Counters = map[string]int64{
		"attempts":              m.Attempts,
		"breaker_trips":         m.BreakerTrips,
		"errors":                m.Errors,
		"faults_injected":       m.Faults,
		"final_error_responses": m.FinalErrorResponses,
		"hub_header_attempts":   m.HubHeaderAttempts,
		"local_throttles":       m.LocalThrottles,
		"removed_from_queue":    m.Removed,
		"session_not_available": m.SessionNotAvailable,
	}
	for st, n := range m.FinalErrorByStatus {
		f.Counters["final_error_responses@"+st.String()] = n
	}
	for i, name := range m.Replicas {
		f.Counters["attempts@"+name] = m.ReplicaAttempts[i]
		f.Counters["answers@"+name] = m.ReplicaAnswers[i]
	}
	f.Replicas = replicaFigures(m)
	f.Feed = feedFigures(p)
	if len(p.PerRep) > 1 {
		// Method of independent replications: each figure is the mean of
		// the per-replication values, with a Student-t 95% interval;
		// latencies cannot be negative, so their lower bound is clamped at 0.
		// A figure undefined in a replication (NaN: an RU multiplier with no
		// RU returned) is left out of its mean, as empty replications are;
		// undefined in every one, it stays NaN with no interval.
		f.CI95 = map[string][2]float64{}
		per := make([][]float64, len(figureNames))
		for _, v := range p.PerRep {
			for i, x := range v {
				if !math.IsNaN(x) {
					per[i] = append(per[i], x)
				}
			}
		}
		means := make([]float64, len(figureNames))
		for i, name := range figureNames {
			if name == "max_ms" {
				continue // the true maximum over all replications, from Merged
			}
			if len(per[i]) == 0 {
				means[i] = math.NaN()
				continue
			}
			ci := CI95(per[i])
			means[i] = (ci[0] + ci[1]) / 2
			ci[0] = max(ci[0], 0)
			f.CI95[name] = ci
		}
		f.P50, f.P90, f.P99, f.P999, f.P9999 = means[0], means[1], means[2], means[3], means[4]
		f.Mean, f.RUMultiplier = means[6], means[7]
	}
	return f
}

// replicaFigures returns the per-replica capacity figures of merged
// measurements, nil when the runs did not model capacity.
func replicaFigures(m *simnet.Stats) []report.ReplicaFigures {
	c := m.Capacity
	if c == nil {
		return nil
	}
	out := make([]report.ReplicaFigures, len(c.Replicas))
	for i, r := range c.Replicas {
		bgOps, bgP99 := c.WindowBackground(i, 0.99)
		out[i] = report.ReplicaFigures{
			Replica: r.Name, Servers: r.Servers, QueueLimit: r.QueueLimit,
			Utilisation: c.Utilisation(i), QueueP99: c.QueueQuantile(i, 0.99),
			RefusedClient: r.RefusedClient, RefusedBackground: r.RefusedBackground,
			AttemptsServed: r.ClientServed, AbortedInService: r.AbortedInService, BackgroundOps: r.BackgroundOps,
			BackgroundRetries: r.BackgroundRetries, BackgroundGaveUp: r.BackgroundGaveUp,
			BackgroundP99: c.BackgroundQuantileMs(i, 0.99), BackgroundP999: c.BackgroundQuantileMs(i, 0.999),
			WindowUtilisation:   c.WindowUtilisation(i, m.WindowWidth),
			WindowBackgroundOps: bgOps, WindowBackgroundP99: bgP99,
		}
	}
	return out
}

// tailGrid returns tail probabilities 10^(-k/20), k = 0.., down to 1/n.
func tailGrid(n int64) []float64 {
	var out []float64
	for k := 0; ; k++ {
		p := math.Pow(10, -float64(k)/20)
		if p < 1/float64(max(n, 1)) {
			break
		}
		out = append(out, p)
	}
	return out
}

// Policy builds the report's view of one policy: figures, CCDF (latency at
// tail probabilities from 1 down to 1/ops, 20 points per decade), a
// quantile table and the timeline. Both the CCDF and the quantile table
// end at the largest latency, max_ms of the figures (the merged
// histogram's maximum: the highest value equivalent to its bucket, 3
// significant digits): the CCDF's last point is (max_ms, 1/ops), the
// CCDF's value just below the maximum (P(T ≥ max) of the pooled
// operations), and the quantile table's last row is q = 1. The tail grid
// alone stops at the largest grid probability ≥ 1/ops, whose latency is
// below the maximum.
func Policy(p PolicyResult) report.PolicyResult {
	m := p.Merged
	out := report.PolicyResult{Figures: Figures(p)}
	for _, tail := range tailGrid(m.Ops) {
		out.CCDF = append(out.CCDF, report.Point{X: m.QuantileMs(1 - tail), Y: tail})
	}
	maxMs := float64(m.Latency.Max()) / 1000
	if n := len(out.CCDF); m.Ops > 1 && n > 0 {
		last := report.Point{X: maxMs, Y: 1 / float64(m.Ops)}
		if out.CCDF[n-1].Y*float64(m.Ops) <= 1+1e-9 {
			out.CCDF[n-1] = last // the grid reached 1/ops: that point is the maximum
		} else {
			out.CCDF = append(out.CCDF, last)
		}
	}
	qs := []float64{0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999, 0.99999}
	for _, tail := range tailGrid(m.Ops) {
		qs = append(qs, 1-tail)
	}
	sort.Float64s(qs)
	last := -1.0
	for _, q := range qs {
		if q-last < 1e-12 || (1-q)*float64(m.Ops) < 1 && q != qs[0] {
			continue
		}
		last = q
		out.Quantiles = append(out.Quantiles, report.QuantileRow{Q: q, Ms: m.QuantileMs(q)})
	}
	out.Quantiles = append(out.Quantiles, report.QuantileRow{Q: 1, Ms: maxMs})
	w := m.WindowWidth.Seconds()
	for i, win := range m.Timeline {
		row := report.Window{StartS: float64(i) * w, EndS: float64(i+1) * w, Ops: win.Ops}
		if win.Ops > 0 {
			row.P50Ms = float64(win.Latency.ValueAtQuantile(50)) / 1000
			row.P99Ms = float64(win.Latency.ValueAtQuantile(99)) / 1000
			row.HedgeRate = ratio(win.Hedged, win.Ops)
			row.ErrorRate = ratio(win.Failed, win.Ops)
		}
		if win.ThresholdOps > 0 {
			row.MeanThresholdMs = win.ThresholdSumMs / float64(win.ThresholdOps)
		}
		out.Timeline = append(out.Timeline, row)
	}
	return out
}

// RunLength is the actual length of a simulated scenario: the latest
// simnet.Stats.ArrivalsEnd over its policies (less than cfg.Duration when
// max_ops ended the runs first), or cfg.Duration when there is none.
func RunLength(cfg *simnet.Config, res *Result) time.Duration {
	var end time.Duration
	for _, p := range res.Policies {
		if p.Merged != nil {
			end = max(end, p.Merged.ArrivalsEnd)
		}
	}
	if end <= 0 {
		return cfg.Duration
	}
	return end
}

// Report assembles the report of a simulated scenario; its DurationS is
// the run's actual length (see RunLength).
func Report(name, description string, cfg *simnet.Config, res *Result) *report.Run {
	r := &report.Run{
		Scenario: name, Description: description, Seed: cfg.Seed,
		Replications: res.Replications, DurationS: RunLength(cfg, res).Seconds(),
		Instances: cfg.Fleet.Instances,
	}
	for _, p := range res.Policies {
		r.Policies = append(r.Policies, Policy(p))
	}
	for _, ep := range cfg.Episodes {
		label := ep.Label
		if label == "" {
			label = ep.Target
		}
		r.Episodes = append(r.Episodes, report.Episode{Label: label, StartS: ep.Start.Seconds(), EndS: ep.End.Seconds()})
	}
	return r
}
