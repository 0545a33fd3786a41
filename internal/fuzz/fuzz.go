// Package fuzz is the adversary `hedgesim fuzz` runs (issue 24): it
// generates scenarios from a declared space (scenarios.Space), runs each
// one as `hedgesim run` would, checks that nothing breaks — the scenario
// validates, the validator's resource limit counts the work the run does,
// every run passes simnet's invariants and every policy's figures pass
// internal/study's, no run panics or hangs, and on a sample the output is
// byte-identical run twice and under another --parallel — and shrinks
// each failing scenario to a small TOML file that reproduces it.
package fuzz

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"hedgelab/internal/report"
	"hedgelab/internal/tomltree"
	"hedgelab/scenarios"
)

// Options configure [Run]. The zero value of each field but Space takes
// its default.
type Options struct {
	// Space is the scenario space (scenarios.DefaultSpace()); required.
	Space *scenarios.Space
	// N is the number of scenarios (indexes First..First+N-1) and Seed
	// the generator's seed: scenario i of seed S is always the same.
	N, First int
	Seed     uint64
	// Parallel is how many scenarios are checked at once (default
	// GOMAXPROCS); each runs on one worker, and the verdicts do not
	// depend on it.
	Parallel int
	// Out is where failing scenarios are written (default
	// "fuzz-failures"), created only when something fails (or Keep).
	Out string
	// Keep writes every generated scenario to Out as
	// fuzz-<seed>-<i>.toml, failing or not, before it is checked: how a
	// member of a scorecard population is written out to be rerun.
	Keep bool
	// All keeps checking after the first failing scenario and shrinks the
	// first failure of each invariant; without it the check stops at the
	// first failing scenario (the lowest index, whatever Parallel is).
	All bool
	// Sample: every Sample-th scenario (index 0, Sample, 2×Sample, ...)
	// is also checked for determinism (run twice) and --parallel
	// invariance (DeepParallel workers); default 10, -1 = none.
	Sample int
	// DeepParallel is the worker count of the --parallel invariance check
	// (default 4).
	DeepParallel int
	// ShrinkBudget is the most candidate scenarios one shrink checks
	// (default 300); the count, not the time, bounds it, so shrinking is
	// deterministic.
	ShrinkBudget int
	// Timeout bounds one scenario's simulation (default 1 minute): a run
	// still going then is a "hang" (not shrunk: each check would last the
	// whole timeout). A run stuck inside one event cannot be stopped; it
	// is left to the end of the process.
	Timeout time.Duration
	// Only, when set, limits the check to these invariants: a scenario
	// fails only by breaking one of them (to hunt one defect while others
	// are open).
	Only []string
	// Progress, when set, is called with the number of scenarios checked
	// so far, from any goroutine.
	Progress func(checked int)
	// Found, when set, is called as soon as a scenario fails, before it
	// is shrunk (from any goroutine, one call at a time), with the
	// failure as far as it is known (Path is the unshrunk file).
	Found func(Failure)
	// Shrunk, when set, is called when a failure has been shrunk.
	Shrunk func(Failure)
}

// Failure is a scenario that broke an invariant.
type Failure struct {
	// Index is the scenario's index and Name its name.
	Index int
	Name  string
	// Invariant names what broke: "invalid" (a generated scenario the
	// validator refuses: the generator and the validator disagree),
	// "limit-counts-work" (the run does far more work than the resource
	// limit counts), a simnet invariant (simnet.InvariantError), a figure
	// invariant (study.FigureError), "crash" (a panic), "hang" (the run
	// outlasted Timeout), "run-error" (another error), "determinism"
	// (two runs differ) or "parallel" (the output depends on --parallel).
	Invariant string
	// Detail is the check's message (first line).
	Detail string
	// Path is the scenario file written for it: the shrunk one once shrunk
	// (Lines long), else the generated one (Original).
	Path     string
	Lines    int
	Original string
	// Others lists the other scenarios that broke the same invariant
	// (with All).
	Others []int
}

// Result is what [Run] checked and found.
type Result struct {
	// Checked counts the scenarios checked (less than N when the check
	// stopped at a failure or was interrupted) and Deep those also run
	// twice and in parallel.
	Checked, Deep int
	// Failures holds one entry per broken invariant, in order of the
	// lowest index that broke it.
	Failures []Failure
}

func (o *Options) defaults() {
	if o.Parallel <= 0 {
		o.Parallel = runtime.GOMAXPROCS(0)
	}
	if o.Out == "" {
		o.Out = "fuzz-failures"
	}
	if o.Sample == 0 {
		o.Sample = 10
	}
	if o.DeepParallel <= 0 {
		o.DeepParallel = 4
	}
	if o.ShrinkBudget <= 0 {
		o.ShrinkBudget = 300
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
}

// finding is one scenario's broken invariants.
type finding struct {
	index    int
	doc      *tomltree.Table
	failures []failure
}

// Run generates and checks opt.N scenarios and shrinks what fails (see
// the package doc). It returns the result so far and ctx's error when ctx
// is cancelled (no file is left half-written), or an error for a space
// that cannot generate or an output directory it cannot write.
func Run(ctx context.Context, opt Options) (*Result, error) {
	return run(ctx, &engine{opt: opt})
}

func run(ctx context.Context, e *engine) (*Result, error) {
	e.opt.defaults()
	opt := e.opt
	if opt.Space == nil {
		return nil, fmt.Errorf("fuzz: no scenario space")
	}
	var (
		next    atomic.Int64
		checked atomic.Int64
		deep    atomic.Int64
		stopAt  atomic.Int64 // no index above it is started (the first failure's, without All)
		mu      sync.Mutex
		found   []finding
		genErr  error // a scenario that did not generate, or a kept one not written
		wg      sync.WaitGroup
	)
	stopAt.Store(int64(opt.N))
	abort := func(err error) {
		mu.Lock()
		genErr = err
		mu.Unlock()
		stopAt.Store(-1)
	}
	for range min(opt.Parallel, max(opt.N, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= opt.N || int64(i) > stopAt.Load() {
					return
				}
				i += opt.First
				name := fmt.Sprintf("fuzz-%d-%d", opt.Seed, i)
				doc, err := opt.Space.Generate(opt.Seed, i)
				if err != nil {
					abort(err)
					return
				}
				if e.plantDoc != nil {
					e.plantDoc(doc)
				}
				if opt.Keep {
					if _, err := e.write(name, doc, nil); err != nil {
						abort(err)
						return
					}
				}
				isDeep := opt.Sample > 0 && i%opt.Sample == 0
				fs := e.check(ctx, doc.Marshal(), isDeep)
				if ctx.Err() != nil {
					return // an interrupted check proves nothing
				}
				if isDeep {
					deep.Add(1)
				}
				if len(fs) > 0 {
					mu.Lock()
					found = append(found, finding{index: i, doc: doc, failures: fs})
					if !opt.All && int64(i-opt.First) < stopAt.Load() {
						stopAt.Store(int64(i - opt.First))
					}
					mu.Unlock()
					if opt.Found != nil {
						for _, f := range fs {
							path, _ := e.write(name, doc, nil)
							mu.Lock()
							opt.Found(Failure{Index: i, Name: name, Invariant: f.invariant, Detail: f.detail, Path: path, Original: path})
							mu.Unlock()
						}
					}
				}
				if n := checked.Add(1); opt.Progress != nil {
					opt.Progress(int(n))
				}
			}
		}()
	}
	wg.Wait()
	if genErr != nil {
		return nil, genErr
	}
	res := &Result{Checked: int(checked.Load()), Deep: int(deep.Load())}
	slices.SortFunc(found, func(a, b finding) int { return a.index - b.index })
	if !opt.All && len(found) > 0 {
		found = found[:1]
		// Scenarios above the first failure that finished are not part of
		// the verdict (they were started only for speed).
		res.Checked = min(res.Checked, found[0].index-opt.First+1)
	}
	// One failure per invariant: its lowest index, shrunk.
	var order []string
	first := map[string]*Failure{}
	docs := map[string]*tomltree.Table{}
	for _, fd := range found {
		for _, f := range fd.failures {
			if x, ok := first[f.invariant]; ok {
				x.Others = append(x.Others, fd.index)
				continue
			}
			order = append(order, f.invariant)
			first[f.invariant] = &Failure{Index: fd.index, Name: fmt.Sprintf("fuzz-%d-%d", opt.Seed, fd.index), Invariant: f.invariant, Detail: f.detail}
			docs[f.invariant] = fd.doc
		}
	}
	e.shrinking = true
	for _, inv := range order {
		f := first[inv]
		orig, err := e.write(f.Name, docs[inv], nil)
		if err != nil {
			return nil, err
		}
		f.Original, f.Path, f.Lines = orig, orig, lines(docs[inv].Marshal())+1
		if ctx.Err() == nil {
			small, detail := e.shrink(ctx, docs[inv], inv, f.Detail)
			if ctx.Err() == nil && small != nil {
				if detail != "" {
					f.Detail = detail
				}
				path, err := e.write(f.Name+"-"+inv, small, f)
				if err != nil {
					return nil, err
				}
				f.Path, f.Lines = path, lines(small.Marshal())+headerLines
				if opt.Shrunk != nil {
					opt.Shrunk(*f)
				}
			}
		}
		res.Failures = append(res.Failures, *f)
	}
	return res, ctx.Err()
}

// engine is one Run's state.
type engine struct {
	opt Options
	// plantDoc, set only by tests, edits each generated document before it
	// is checked (to plant an invalid scenario).
	plantDoc func(*tomltree.Table)
	mu       sync.Mutex // serialises writes
	// shrinking: the checks are of shrink candidates (shorter timeout).
	shrinking bool
}

// write writes doc as <Out>/<name>.toml (atomically) and returns its path;
// f, when set, is the failure the file reproduces (written as a comment
// header).
func (e *engine) write(name string, doc *tomltree.Table, f *Failure) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := os.MkdirAll(e.opt.Out, 0o755); err != nil {
		return "", fmt.Errorf("fuzz: %w", err)
	}
	path := filepath.Join(e.opt.Out, name+".toml")
	var b strings.Builder
	if f != nil {
		fmt.Fprintf(&b, "# hedgesim fuzz --seed %d: scenario %d, shrunk from %d to %d lines.\n", e.opt.Seed, f.Index, f.Lines, lines(doc.Marshal())+headerLines)
		fmt.Fprintf(&b, "# Breaks invariant %s: %s\n", f.Invariant, firstLine(f.Detail))
		fmt.Fprintf(&b, "# Reproduce: hedgesim run %s\n", path)
		b.WriteString("#\n")
	} else {
		fmt.Fprintf(&b, "# hedgesim fuzz --seed %d: scenario %s as generated.\n", e.opt.Seed, name)
	}
	b.Write(doc.Marshal())
	if err := report.WriteFileAtomic(path, []byte(b.String())); err != nil {
		return "", fmt.Errorf("fuzz: %w", err)
	}
	return path, nil
}

// headerLines is the comment header of a shrunk file.
const headerLines = 4

func lines(b []byte) int { return strings.Count(string(b), "\n") }

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
