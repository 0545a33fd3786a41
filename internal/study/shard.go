package study

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"hedgelab/simnet"
)

// Shard is one share of a study's runs, for running a study on several
// machines (array jobs): shard Index of Count, 0-based (0 <= Index <
// Count), as Kubernetes' JOB_COMPLETION_INDEX and a Slurm array of
// 0..Count-1 number them.
//
// The unit of work is one run: one policy of one input (a scenario, a
// sweep point) for one replication. The runs, in [SimulateAll]'s order
// (by input, then replication, then policy), are cut into Count
// contiguous pieces of about equal expected work ([ExpectedOps] per
// run): shard k takes the runs whose midpoint of cumulative expected
// work falls in [k/Count, (k+1)/Count) of the total. A shard may be
// empty when Count exceeds the number of runs.
type Shard struct {
	Index, Count int
}

// String returns "Index/Count".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// MaxShards bounds Shard.Count.
const MaxShards = 100_000

// check reports a shard that does not exist.
func (s Shard) check() error {
	switch {
	case s.Count < 1 || s.Count > MaxShards:
		return fmt.Errorf("shard %s: the count must be from 1 to %d", s, MaxShards)
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("shard %s: the index is 0-based, from 0 to %d", s, s.Count-1)
	}
	return nil
}

// ExpectedOps estimates the operations one run of cfg finishes (one
// policy, one replication): simnet.Config.ExpectedWork's Operations, the
// one estimate the scenario limits use too (the open-loop rate over the
// run's length, or clients × length / mean think time, at most MaxOps),
// bounded to [0, 2^40] (beyond any scenario the limits accept, so the
// shard arithmetic over the runs cannot overflow). It is an estimate (a
// closed loop's true rate depends on its latencies), used to bound a
// study and to balance shards.
func ExpectedOps(cfg *simnet.Config) int64 {
	n := cfg.ExpectedWork().Operations
	if !(n >= 0) {
		return 0
	}
	return int64(min(n, 1<<40))
}

// shardOf returns the shard (0..count-1) of each run of runs, cut as
// [Shard] describes: non-decreasing along runs.
func shardOf(inputs []Input, runs []run, count int) []int {
	cost := make([]uint64, len(inputs))
	for i, in := range inputs {
		cost[i] = uint64(max(ExpectedOps(in.Config), 1))
	}
	var total uint64
	for _, j := range runs {
		total += cost[j.in]
	}
	out := make([]int, len(runs))
	var before uint64
	for k, j := range runs {
		// floor((2·before + cost)·count / (2·total)), in 128 bits.
		hi, lo := bits.Mul64(2*before+cost[j.in], uint64(count))
		q, _ := bits.Div64(hi, lo, 2*total)
		out[k] = min(int(q), count-1)
		before += cost[j.in]
	}
	return out
}

// shardRuns returns the runs of shard sh.
func shardRuns(inputs []Input, sh Shard) []run {
	runs := allRuns(inputs)
	of := shardOf(inputs, runs, sh.Count)
	lo, _ := slices.BinarySearch(of, sh.Index)
	hi, _ := slices.BinarySearch(of, sh.Index+1)
	return runs[lo:hi]
}

// SimulateShard simulates shard sh's share of inputs (see [Shard]) as
// [SimulateAll] would simulate it, and returns its partial result, for
// [ShardMerge]. Errors: an input SimulateAll refuses, a shard that does
// not exist, the first error of its runs in (input, policy, replication)
// order, or the context's error when opts.Context is cancelled.
func SimulateShard(inputs []Input, sh Shard, opts Options) (*Partial, error) {
	if err := checkInputs(inputs); err != nil {
		return nil, err
	}
	if err := sh.check(); err != nil {
		return nil, err
	}
	if checkLayout != nil {
		return nil, checkLayout
	}
	runs := shardRuns(inputs, sh)
	folds, errs, err := simulateRuns(inputs, runs, opts, true)
	if err != nil {
		return nil, err
	}
	if err := firstError(inputs, errs); err != nil {
		return nil, err
	}
	p := &Partial{Shard: sh, shape: shapeOf(inputs)}
	for i := range folds {
		for q, m := range folds[i] {
			if m == nil {
				continue
			}
			zeroFloats(m.merged)
			p.pairs = append(p.pairs, pairState{in: i, p: q, first: m.next - len(m.reps), state: m.merged, reps: m.reps})
		}
	}
	return p, nil
}

// ShardMerge combines the partial results of every shard of a study into
// the results [SimulateAll] returns for it, bit for bit: see [Partial].
// Add partials one at a time, then call Results. A partial can be dropped
// once added: memory holds the study's folds, as a single run does, plus
// the per-replication records of partials added ahead of a lower shard
// (none when they are added in shard order).
type ShardMerge struct {
	inputs []Input
	runs   []run
	of     []int // shard of each run, once the count is known
	count  int
	from   map[int]string // shard index -> source
	folds  [][]*merger
	floats [][]*floatFold // [input][policy]
}

// floatFold adds one policy's per-replication records in replication
// order, as the single run's merger does: the floating-point fields into
// sum, the figures into the merger's perRep (or its empty count).
type floatFold struct {
	sum     *simnet.Stats
	next    int
	pending map[int]*repRecord
}

func (f *floatFold) add(m *merger, r int, rec *repRecord) {
	f.pending[r] = rec
	for {
		rec, ok := f.pending[f.next]
		if !ok {
			return
		}
		delete(f.pending, f.next)
		addFloats(f.sum, rec.floats)
		if rec.empty {
			m.empty++
		} else {
			m.perRep = append(m.perRep, rec.figures)
			if rec.feed != nil {
				m.perFeed = append(m.perFeed, rec.feed)
			}
		}
		f.next++
	}
}

// NewShardMerge starts merging the partial results of inputs, which must
// be the inputs the shards simulated.
func NewShardMerge(inputs []Input) (*ShardMerge, error) {
	if err := checkInputs(inputs); err != nil {
		return nil, err
	}
	if checkLayout != nil {
		return nil, checkLayout
	}
	m := &ShardMerge{inputs: inputs, runs: allRuns(inputs), from: map[int]string{}}
	m.folds = make([][]*merger, len(inputs))
	m.floats = make([][]*floatFold, len(inputs))
	for i, in := range inputs {
		m.folds[i] = make([]*merger, len(in.Policies))
		m.floats[i] = make([]*floatFold, len(in.Policies))
		for p, pol := range in.Policies {
			m.folds[i][p] = newMerger(pol.Name, 0, in.Replications, false)
			m.floats[i][p] = &floatFold{sum: &simnet.Stats{}, pending: map[int]*repRecord{}}
		}
	}
	return m, nil
}

// Add folds p, read from source (named in errors), into the merge.
// Errors: p is of another study (another number of inputs, policies or
// replications), of another number of shards than the partials added
// before, a shard already added (both sources named), does not hold
// exactly its shard's runs, or holds measurements that do not fit the
// study's (a corrupt partial; the merge is unusable after this one).
func (m *ShardMerge) Add(p *Partial, source string) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", source, fmt.Sprintf(format, args...))
	}
	if err := p.Shard.check(); err != nil {
		return fail("%v", err)
	}
	if want := shapeOf(m.inputs); !slices.Equal(p.shape, want) {
		return fail("a partial result of another study: %s; this merge has %s", describeShape(p.shape), describeShape(want))
	}
	if m.count == 0 {
		m.count = p.Shard.Count
		m.of = shardOf(m.inputs, m.runs, m.count)
	} else if p.Shard.Count != m.count {
		return fail("shard %s of %d shards; the partials before it are of %d shards", p.Shard, p.Shard.Count, m.count)
	}
	if prev, dup := m.from[p.Shard.Index]; dup {
		return fail("shard %s again: %s is shard %s too", p.Shard, prev, p.Shard)
	}
	// The runs p holds must be exactly those assigned to its shard.
	lo, _ := slices.BinarySearch(m.of, p.Shard.Index)
	hi, _ := slices.BinarySearch(m.of, p.Shard.Index+1)
	want := groupRuns(m.runs[lo:hi])
	if len(want) != len(p.pairs) {
		return fail("shard %s holds %d policy runs; its share of the study has %d", p.Shard, len(p.pairs), len(want))
	}
	for k, g := range want {
		q := &p.pairs[k]
		if q.in != g.in || q.p != g.p || q.first != g.first || len(q.reps) != g.n {
			return fail("shard %s holds input %d policy %d replications %d-%d; its share has input %d policy %d replications %d-%d",
				p.Shard, q.in, q.p, q.first, q.first+len(q.reps)-1, g.in, g.p, g.first, g.first+g.n-1)
		}
	}
	if err := m.fold(p); err != nil {
		return fail("shard %s: %v", p.Shard, err)
	}
	m.from[p.Shard.Index] = source
	return nil
}

// fold merges p's folds into m's. simnet.Stats.Merge expects two runs of
// one configuration (the same replicas, histograms where it merges
// them); a partial result that decoded but does not fit makes it panic,
// which fold reports as an error.
func (m *ShardMerge) fold(p *Partial) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("its measurements do not fit the study's (%v): a corrupt partial result", r)
		}
	}()
	for k := range p.pairs {
		q := &p.pairs[k]
		mg := m.folds[q.in][q.p]
		if mg.merged.WindowWidth == 0 {
			mg.merged.WindowWidth = q.state.WindowWidth
		}
		mg.merged.Merge(q.state)
		for r := range q.reps {
			m.floats[q.in][q.p].add(mg, q.first+r, &q.reps[r])
		}
	}
	return nil
}

// Results returns the merged results, one per input, exactly what
// SimulateAll returns for the inputs; call it once, after the last Add.
// Errors: a shard missing (none added, or not every index of the count),
// or an error SimulateAll returns for the merged folds (a policy in which
// no operation arrived).
func (m *ShardMerge) Results() ([]*Result, error) {
	if m.count == 0 {
		return nil, fmt.Errorf("no partial results to merge")
	}
	var missing, have []string
	for k := 0; k < m.count; k++ {
		if _, ok := m.from[k]; ok {
			have = append(have, Shard{k, m.count}.String())
		} else {
			missing = append(missing, Shard{k, m.count}.String())
		}
	}
	if len(missing) > 0 {
		if len(missing) > 10 {
			missing = append(missing[:10], fmt.Sprintf("and %d more", len(missing)-10))
		}
		if len(have) > 10 {
			have = append(have[:10], fmt.Sprintf("and %d more", len(have)-10))
		}
		return nil, fmt.Errorf("shard %s missing: the partial results given are shards %s", strings.Join(missing, ", "), strings.Join(have, ", "))
	}
	for i, in := range m.inputs {
		for p, mg := range m.folds[i] {
			// The floating-point fields, added in replication order as
			// the single run's fold adds them (see floats.go).
			f := m.floats[i][p]
			if f.next != in.Replications {
				return nil, labelled(in.Label, fmt.Errorf("study: policy %q: %d of %d replications merged", in.Policies[p].Name, f.next, in.Replications))
			}
			if err := setFloats(mg.merged, f.sum); err != nil {
				return nil, labelled(in.Label, err)
			}
		}
	}
	return results(m.inputs, m.folds, nil, 1)
}

// runGroup is the consecutive replications of one (input, policy) pair
// in a shard.
type runGroup struct{ in, p, first, n int }

// groupRuns groups runs by (input, policy), in (input, policy) order.
func groupRuns(runs []run) []runGroup {
	var out []runGroup
	idx := map[[2]int]int{}
	for _, j := range runs {
		k, ok := idx[[2]int{j.in, j.p}]
		if !ok {
			idx[[2]int{j.in, j.p}] = len(out)
			out = append(out, runGroup{j.in, j.p, j.r, 1})
			continue
		}
		out[k].n++
	}
	slices.SortFunc(out, func(a, b runGroup) int {
		if a.in != b.in {
			return a.in - b.in
		}
		return a.p - b.p
	})
	return out
}
