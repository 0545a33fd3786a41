package study

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"hedgelab/simnet"
)

// run is one simulation of a study: input in, policy p, replication r.
type run struct{ in, p, r int }

// allRuns lists every run of inputs in the order they are handed to the
// workers: by input, then replication, then policy (so the policies of
// one replication run side by side and the fold of each policy advances
// steadily). Shards cut this list into contiguous pieces ([Shard]).
func allRuns(inputs []Input) []run {
	var out []run
	for i, in := range inputs {
		for r := 0; r < in.Replications; r++ {
			for p := range in.Policies {
				out = append(out, run{i, p, r})
			}
		}
	}
	return out
}

// checkInputs rejects inputs that cannot be simulated, naming the input
// by its label.
func checkInputs(inputs []Input) error {
	for _, in := range inputs {
		var err error
		switch {
		case in.Replications < 1:
			err = fmt.Errorf("replications must be >= 1, got %d", in.Replications)
		case len(in.Policies) == 0:
			err = fmt.Errorf("no policies to simulate")
		}
		if err != nil {
			return labelled(in.Label, err)
		}
	}
	return nil
}

// merger folds one policy's replications into merged in replication
// order, starting at replication next (so floating-point sums, and hence
// the output, do not depend on which replication finishes first),
// holding only the replications that finished ahead of an unfinished
// predecessor. With floats set it also keeps, per replication folded, the
// replication's floating-point fields (see [floatsOf]), which a shard's
// partial result carries so that [Merge] can add them in the single run's
// order.
type merger struct {
	merged  *simnet.Stats
	perRep  [][]float64
	perFeed [][]float64 // feedValues of the same replications, for runs with feeds
	empty   int         // replications without an operation
	next    int
	pending map[int]*simnet.Stats
	floats  bool
	reps    []repRecord // with floats: one per folded replication, in order
}

// repRecord is what a partial result keeps of one replication besides
// its share of the fold: whether an operation arrived, its figures
// ([figureNames] order), its feed figures ([feedValues], nil without
// feeds) and its floating-point fields.
type repRecord struct {
	empty   bool
	figures []float64
	feed    []float64
	floats  *simnet.Stats
}

func newMerger(name string, first, reps int, floats bool) *merger {
	return &merger{
		merged:  &simnet.Stats{Policy: name, Latency: simnet.NewLatencyHistogram()},
		perRep:  make([][]float64, 0, reps),
		next:    first,
		pending: map[int]*simnet.Stats{},
		floats:  floats,
	}
}

func (m *merger) add(r int, s *simnet.Stats) {
	m.pending[r] = s
	for {
		s, ok := m.pending[m.next]
		if !ok {
			return
		}
		delete(m.pending, m.next)
		if m.merged.WindowWidth == 0 {
			m.merged.WindowWidth = s.WindowWidth
		}
		m.merged.Merge(s)
		rec := repRecord{empty: s.Ops == 0}
		if s.Ops > 0 {
			rec.figures = figureValues(s)
			m.perRep = append(m.perRep, rec.figures)
			if rec.feed = feedValues(s); rec.feed != nil {
				m.perFeed = append(m.perFeed, rec.feed)
			}
		} else {
			m.empty++
		}
		if m.floats {
			rec.floats = floatsOf(s)
			m.reps = append(m.reps, rec)
		}
		m.next++
	}
}

// simulateRuns simulates runs of inputs on opts.Parallel workers and
// folds each (input, policy) pair's replications in replication order,
// starting at the pair's first replication in runs (a pair's runs must be
// consecutive replications). folds[i][p] is nil for a pair without runs.
// With floats set the mergers keep each replication's floating-point
// fields (see [merger]). It returns the runs' errors, or the context's
// error when opts.Context is cancelled.
func simulateRuns(inputs []Input, runs []run, opts Options, floats bool) ([][]*merger, map[run]error, error) {
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	workers := opts.Parallel
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	folds := make([][]*merger, len(inputs))
	errs := make(map[run]error)
	for i, in := range inputs {
		folds[i] = make([]*merger, len(in.Policies))
	}
	for _, j := range runs {
		if folds[j.in][j.p] == nil {
			folds[j.in][j.p] = newMerger(inputs[j.in].Policies[j.p].Name, j.r, inputs[j.in].Replications, floats)
		}
	}
	var mu sync.Mutex
	jobs := make(chan run)
	var wg sync.WaitGroup
	for w := 0; w < min(workers, len(runs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				in := &inputs[j.in]
				st, err := runOne(in.Config, in.Policies[j.p], j.r, simnet.RunOptions{Progress: opts.Progress, Context: ctx})
				mu.Lock()
				if err != nil {
					errs[j] = err
				} else {
					folds[j.in][j.p].add(j.r, st)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, j := range runs {
		select {
		case jobs <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return folds, errs, nil
}

// firstError returns the error of errs first in (input, policy,
// replication) order, labelled with its input's label; nil without one.
func firstError(inputs []Input, errs map[run]error) error {
	var first run
	found := false
	for j := range errs {
		if !found || j.in < first.in || j.in == first.in && (j.p < first.p || j.p == first.p && j.r < first.r) {
			first, found = j, true
		}
	}
	if !found {
		return nil
	}
	return labelled(inputs[first.in].Label, errs[first])
}

// results turns complete folds (every pair of every input folded over
// all its replications) into one Result per input. Errors, the first in
// (input, policy) order: a run's error (errs, the first replication's),
// or a policy in which no operation arrived in any replication, or a
// broken figure invariant ([verify]; workers is the simulation's worker
// count, which only the tests' planted violations read).
func results(inputs []Input, folds [][]*merger, errs map[run]error, workers int) ([]*Result, error) {
	out := make([]*Result, len(inputs))
	for i, in := range inputs {
		res := &Result{Replications: in.Replications}
		for p, pol := range in.Policies {
			for r := 0; r < in.Replications && len(errs) > 0; r++ {
				if err := errs[run{i, p, r}]; err != nil {
					return nil, labelled(in.Label, err)
				}
			}
			mg := folds[i][p]
			if mg.merged.Ops == 0 {
				return nil, labelled(in.Label, fmt.Errorf("policy %q: no operation arrived (raise the rate, the duration or max_ops)", pol.Name))
			}
			res.Policies = append(res.Policies, PolicyResult{Name: pol.Name, Merged: mg.merged, PerRep: mg.perRep, PerRepFeed: mg.perFeed, EmptyReplications: mg.empty})
		}
		if err := verify(in.Config, res, workers); err != nil { // before anything is reported
			return nil, labelled(in.Label, err)
		}
		out[i] = res
	}
	return out, nil
}
