package fuzz

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"hedgelab/internal/report"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// failure is one broken invariant of one scenario.
type failure struct {
	invariant, detail string
}

// workSlack is how much more work than the resource limit counts a run
// may do before "limit-counts-work" fails: the limit then misses a kind
// of work (pages, polls, ...), and a larger file of the same shape runs
// for hours instead of being refused.
const workSlack = 4

// limitedWork is what the resource limit counts of s (a variable so that
// a test can plant a limit that leaves work out).
var limitedWork = func(s *scenarios.Scenario) float64 { return s.LimitedWork() }

// shrinkTimeout bounds a shrink candidate's simulation: candidates are
// smaller than the scenario they come from, and one that hangs only
// costs this long.
const shrinkTimeout = 15 * time.Second

// check checks one scenario's text and returns what it breaks (nil when
// nothing) among Options.Only (all when empty): deep adds the determinism
// and --parallel checks.
func (e *engine) check(ctx context.Context, doc []byte, deep bool) []failure {
	fs := e.checkAll(ctx, doc, deep)
	if len(e.opt.Only) == 0 {
		return fs
	}
	return slices.DeleteFunc(fs, func(f failure) bool { return !slices.Contains(e.opt.Only, f.invariant) })
}

func (e *engine) checkAll(ctx context.Context, doc []byte, deep bool) []failure {
	s, err := scenarios.Parse("generated.toml", doc)
	if err != nil {
		return []failure{{"invalid", err.Error()}}
	}
	var out []failure
	cfg, _, _ := s.Config()
	if exp, lim := cfg.ExpectedWork().Total(), limitedWork(s); exp > workSlack*lim+1000 {
		out = append(out, failure{"limit-counts-work", fmt.Sprintf(
			"a run does about %.3g units of work (races: operations, pages, setup reads, polls; background requests) but the resource limit counts %.3g of them", exp, lim)})
	}
	digest, f := e.simulate(ctx, s, 1, deep)
	if f != nil {
		return append(out, *f)
	}
	if deep && ctx.Err() == nil {
		again, f := e.simulate(ctx, s, 1, true)
		switch {
		case f != nil:
			return append(out, failure{"determinism", "the second run of the scenario failed: " + f.invariant + ": " + f.detail})
		case again != digest:
			return append(out, failure{"determinism", "two runs of the same scenario wrote different files"})
		}
		par, f := e.simulate(ctx, s, e.opt.DeepParallel, true)
		switch {
		case f != nil:
			return append(out, failure{"parallel", fmt.Sprintf("with --parallel %d the scenario failed: %s: %s", e.opt.DeepParallel, f.invariant, f.detail)})
		case par != digest:
			return append(out, failure{"parallel", fmt.Sprintf("--parallel 1 and --parallel %d wrote different files", e.opt.DeepParallel)})
		}
	}
	return out
}

// simulate runs s as `hedgesim run` does on workers workers and returns
// the digest of the files it writes (when render is set) or the failure.
func (e *engine) simulate(ctx context.Context, s *scenarios.Scenario, workers int, render bool) ([32]byte, *failure) {
	var digest [32]byte
	cfg, pols, err := s.Config()
	if err != nil {
		return digest, &failure{"invalid", err.Error()}
	}
	timeout := e.opt.Timeout
	if e.shrinking {
		timeout = min(timeout, shrinkTimeout)
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		res []*study.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := study.SimulateAll([]study.Input{{Config: cfg, Policies: pols, Replications: s.Replications}},
			study.Options{Parallel: workers, Context: rctx})
		done <- result{res, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-rctx.Done():
		// The simulator checks its context between events; a run stuck
		// inside one event never returns: it is left behind (it stops
		// with the process) and reported.
		select {
		case r = <-done:
		case <-time.After(time.Second):
			if ctx.Err() != nil {
				return digest, &failure{"interrupted", ctx.Err().Error()}
			}
			return digest, &failure{"hang", fmt.Sprintf("the simulation did not return within %s (stuck inside one event)", timeout)}
		}
	}
	res, err := r.res, r.err
	if err != nil {
		return digest, classify(ctx, rctx, err, timeout)
	}
	if !render {
		return digest, nil
	}
	rep := study.Report(s.Name, s.Description, cfg, res[0])
	d, err := renderDigest(rep)
	if err != nil {
		return digest, &failure{"run-error", "writing the results: " + err.Error()}
	}
	return d, nil
}

// classify names the invariant a simulation error breaks.
func classify(ctx, rctx context.Context, err error, timeout interface{ String() string }) *failure {
	var ie *simnet.InvariantError
	var fe *study.FigureError
	var pe *study.PanicError
	switch {
	case ctx.Err() != nil:
		return &failure{"interrupted", err.Error()}
	case errors.Is(rctx.Err(), context.DeadlineExceeded):
		return &failure{"hang", fmt.Sprintf("the simulation was still running after %s", timeout)}
	case errors.As(err, &ie):
		return &failure{ie.Invariant, err.Error()}
	case errors.As(err, &fe):
		return &failure{fe.Invariant, err.Error()}
	case errors.As(err, &pe):
		return &failure{"crash", fmt.Sprintf("%v at %s", pe.Value, panicSite(pe.Stack))}
	}
	return &failure{"run-error", err.Error()}
}

// panicSite returns the function and file:line where a panic's stack
// leaves the runtime: the same for every goroutine and run, so verdicts
// repeat.
func panicSite(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	for i := 0; i+1 < len(lines); i++ {
		fn := lines[i]
		if strings.HasPrefix(fn, "panic(") {
			for j := i + 2; j+1 < len(lines); j += 2 { // the frames below panic(...), each a function and its file:line
				f := lines[j]
				if strings.HasPrefix(f, "runtime.") {
					continue
				}
				if k := strings.LastIndex(f, "("); k > 0 {
					f = f[:k]
				}
				loc := strings.TrimSpace(lines[j+1])
				if k := strings.LastIndex(loc, " +"); k > 0 {
					loc = loc[:k]
				}
				if k := strings.Index(loc, "hedgelab/"); k >= 0 {
					loc = loc[k:]
				} else if k := strings.LastIndex(loc, "/"); k >= 0 {
					loc = loc[k+1:]
				}
				return f + " (" + loc + ")"
			}
		}
	}
	return "an unknown place"
}

// renderDigest writes rep's files, as `hedgesim run` does, into a
// temporary directory and returns the SHA-256 of their names and bytes.
func renderDigest(rep *report.Run) ([32]byte, error) {
	var d [32]byte
	tmp, err := os.MkdirTemp("", "hedgesim-fuzz-")
	if err != nil {
		return d, err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "out")
	if _, err := report.WriteRun(dir, rep, report.Options{}); err != nil {
		return d, err
	}
	var names []string
	err = filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err == nil && !de.IsDir() {
			names = append(names, p)
		}
		return err
	})
	if err != nil {
		return d, err
	}
	sort.Strings(names)
	var all bytes.Buffer
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return d, err
		}
		rel, _ := filepath.Rel(dir, n)
		fmt.Fprintf(&all, "%s %d\n", rel, len(b))
		all.Write(b)
	}
	return sha256.Sum256(all.Bytes()), nil
}
