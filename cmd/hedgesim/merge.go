package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"hedgelab/internal/report"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
)

// mergeUsage is the help of merge.
const mergeUsage = `Usage: hedgesim merge [flags] DIR...

Merges the partial results of a sharded run or sweep (hedgesim run|sweep
--shard I/N, one DIR per shard, every I from 0 to N-1 once; a DIR that
holds the shards' directories stands for them) and writes the files the
command writes without --shard, byte for byte, into the same directories
(results/<scenario-name>/ for each scenario of a run,
results/<scenario-name>-sweep-<param>/ for a sweep) or --out, replaced as
a whole, and prints the same tables. The partials must be of one command
(the same scenarios, by their text, and flags) and one build: merge
refuses partials that do not belong together, a missing or duplicate
shard, and a partial written by another build than its own, naming the
file. For a population scorecard (hedgesim scorecard --n N --seed S
--shard I/N) it prints what the unsharded scorecard prints, byte for byte,
and writes no file. A shard's DIR holds shard.json (what was run, readable) and
shard.bin (its measurements: counters and histograms, a few numbers per
replication, never the samples).

Examples:
  hedgesim merge parts/*
  hedgesim merge parts                          # the same: parts/ holds the shards
  hedgesim merge results/default-shard-0-of-2 results/default-shard-1-of-2 --out /tmp/default

Flags:
`

// shardPlanners rebuild the parts of a sharded command from its recorded
// work, with f's flags (the recorded ones and merge's --out and -q).
var shardPlanners = map[string]func(w *work, f *runFlags, stdout io.Writer) ([]*part, error){
	"run":   planRunWork,
	"sweep": planSweepWork,
}

func cmdMerge(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	var out string
	var quiet bool
	fs.StringVar(&out, "out", "", "output directory, only for one scenario (default: the command's, results/<scenario-name>[-sweep-<param>]); replaced as a whole")
	fs.BoolVar(&quiet, "q", false, "quiet: no table")
	if wantsHelp(args) {
		return writeHelp(stdout, mergeUsage, fs)
	}
	dirs, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stderr, "merge", err.Error())
	}
	if len(dirs) == 0 {
		return usageError(stderr, "merge", "merge needs the directories of the shards' partial results (hedgesim run|sweep --shard I/N --out DIR)")
	}
	outSet := false
	fs.Visit(func(fl *flag.Flag) { outSet = outSet || fl.Name == "out" })
	if outSet && out == "" {
		return usageError(stderr, "merge", `--out must name a directory, got ""`)
	}
	return exitCode(stderr, merge(ctx, dirs, out, quiet, stdout))
}

// shardDir is one partial result given to merge.
type shardDir struct {
	dir    string
	header partialHeader
	shard  study.Shard
}

func (s *shardDir) headerPath() string { return filepath.Join(s.dir, report.PartialHeader) }
func (s *shardDir) statePath() string  { return filepath.Join(s.dir, report.PartialState) }

// merge merges the partial results in dirs and writes the command's
// results (into out when set).
func merge(ctx context.Context, dirs []string, out string, quiet bool, stdout io.Writer) error {
	shards, err := readShardHeaders(dirs)
	if err != nil {
		return err
	}
	w := shards[0].header.work
	if w.Command == "scorecard" {
		return mergeScorecard(shards, out, stdout)
	}
	plan := shardPlanners[w.Command]
	if plan == nil {
		return fmt.Errorf("%s: a partial result of hedgesim %s, which this build cannot merge", shards[0].headerPath(), w.Command)
	}
	f := &runFlags{out: out, quiet: quiet, png: w.Flags.PNG, replications: w.Flags.Replications}
	if w.Flags.Seed != nil {
		f.seed, f.seedSet = *w.Flags.Seed, true
	}
	parts, err := plan(&w, f, stdout)
	if err != nil {
		return fmt.Errorf("%s: %w", shards[0].headerPath(), err)
	}
	// Check every output directory before merging.
	for _, p := range parts {
		for _, s := range shards {
			if sameDir(p.dir, s.dir) {
				return fmt.Errorf("output directory %s is the partial result %s; choose another (--out)", p.dir, s.dir)
			}
		}
		if err := report.CheckOutputDir(p.dir); err != nil {
			return err
		}
	}
	var inputs []study.Input
	for _, p := range parts {
		for _, in := range p.inputs {
			if in.Label == "" {
				in.Label = p.label
			}
			inputs = append(inputs, in)
		}
	}
	m, err := study.NewShardMerge(inputs)
	if err != nil {
		return err
	}
	// One partial at a time: each is dropped once folded in.
	for _, s := range shards {
		if err := ctx.Err(); err != nil {
			return errInterrupted
		}
		p, err := readShardState(s)
		if err != nil {
			return err
		}
		if err := m.Add(p, s.statePath()); err != nil {
			return err
		}
	}
	res, err := m.Results()
	if err != nil {
		return err
	}
	for _, p := range parts {
		if err := p.finish(res[:len(p.inputs)]); err != nil {
			return err
		}
		res = res[len(p.inputs):]
	}
	return nil
}

// readShardHeaders reads the shard.json of each of dirs and checks that
// they are the shards 0..N-1 of one command of this build, each once;
// it returns them in shard order.
func readShardHeaders(dirs []string) ([]*shardDir, error) {
	dirs, err := expandShardDirs(dirs)
	if err != nil {
		return nil, err
	}
	var shards []*shardDir
	for _, dir := range dirs {
		s := &shardDir{dir: dir}
		data, err := os.ReadFile(s.headerPath())
		if err != nil {
			return nil, err
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s.header); err != nil {
			return nil, fmt.Errorf("%s: not a partial result: %v", s.headerPath(), err)
		}
		if s.header.Format != partialFormat {
			return nil, fmt.Errorf("%s: a partial result of format %q; this build reads %q", s.headerPath(), s.header.Format, partialFormat)
		}
		if s.shard, err = parseShard(s.header.Shard); err != nil {
			return nil, fmt.Errorf("%s: shard: %v", s.headerPath(), err)
		}
		for _, sc := range s.header.Scenarios {
			if sum := sha256.Sum256([]byte(sc.Text)); hex.EncodeToString(sum[:]) != sc.SHA256 {
				return nil, fmt.Errorf("%s: the text of scenario %s does not match its sha256: the file was edited", s.headerPath(), sc.Name)
			}
		}
		shards = append(shards, s)
	}
	first := shards[0]
	if b := buildID(); first.header.Build != b {
		return nil, fmt.Errorf("%s was written by %s; this is %s: merge with the build (the image) that ran the shards", first.headerPath(), first.header.Build, b)
	}
	for _, s := range shards[1:] {
		if err := sameWork(first, s); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(shards, func(a, b *shardDir) int { return a.shard.Index - b.shard.Index })
	count := first.shard.Count
	var missing []string
	for k, i := 0, 0; k < count; k++ {
		switch {
		case i < len(shards) && shards[i].shard.Index == k:
			if i+1 < len(shards) && shards[i+1].shard.Index == k {
				return nil, fmt.Errorf("%s and %s are both shard %s", shards[i].headerPath(), shards[i+1].headerPath(), shards[i].shard)
			}
			i++
		default:
			missing = append(missing, study.Shard{Index: k, Count: count}.String())
		}
	}
	if len(missing) > 0 {
		if len(missing) > 10 {
			missing = append(missing[:10], fmt.Sprintf("and %d more", len(missing)-10))
		}
		return nil, fmt.Errorf("shard %s missing: %d of the %d shards given (%s, …)", strings.Join(missing, ", "), len(shards), count, shards[0].dir)
	}
	return shards, nil
}

// expandShardDirs replaces each of dirs that holds no shard.json but
// whose subdirectories do (a directory of shards: parts/ holding parts/0,
// parts/1, ...) by those subdirectories, in name order.
func expandShardDirs(dirs []string) ([]string, error) {
	var out []string
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, report.PartialHeader)); err == nil {
			out = append(out, dir)
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, unwrapPathError(err))
		}
		n := len(out)
		for _, e := range entries {
			sub := filepath.Join(dir, e.Name())
			if _, err := os.Stat(filepath.Join(sub, report.PartialHeader)); e.IsDir() && err == nil {
				out = append(out, sub)
			}
		}
		if len(out) == n {
			return nil, fmt.Errorf("%s: no %s: not the partial result of a shard (hedgesim run|sweep --shard I/N --out DIR writes one), nor a directory of them", dir, report.PartialHeader)
		}
	}
	return out, nil
}

// unwrapPathError drops the operation and path of a *fs.PathError.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// sameWork reports, naming both files, how s's partial result does not
// belong with first's.
func sameWork(first, s *shardDir) error {
	a, b := &first.header, &s.header
	name := func(x *shardDir) string { return x.headerPath() }
	switch {
	case a.Build != b.Build:
		return fmt.Errorf("%s was written by %s, %s by %s: run every shard and the merge with one build (one image)", name(s), b.Build, name(first), a.Build)
	case a.Command != b.Command:
		return fmt.Errorf("%s is a shard of hedgesim %s, %s of hedgesim %s", name(s), b.Command, name(first), a.Command)
	case a.Flags.String() != b.Flags.String():
		return fmt.Errorf("%s was run with %s, %s with %s: the shards of one command have the same flags", name(s), b.Flags, name(first), a.Flags)
	case len(a.Scenarios) != len(b.Scenarios):
		return fmt.Errorf("%s has %d scenarios (%s), %s has %d (%s)", name(s), len(b.Scenarios), scenarioNames(&b.work), name(first), len(a.Scenarios), scenarioNames(&a.work))
	case first.shard.Count != s.shard.Count:
		return fmt.Errorf("%s is shard %s, %s shard %s: the shards of one command have the same N", name(s), s.shard, name(first), first.shard)
	}
	for i, x := range a.Scenarios {
		y := b.Scenarios[i]
		if x.Name != y.Name || x.Source != y.Source || x.SHA256 != y.SHA256 {
			return fmt.Errorf("%s: scenario %d is %s (%s, sha256 %.12s), %s's is %s (%s, sha256 %.12s): the shards ran different scenarios",
				name(s), i+1, y.Name, y.Source, y.SHA256, name(first), x.Name, x.Source, x.SHA256)
		}
	}
	return nil
}

// readShardState reads s's shard.bin and checks it against the digest in
// its shard.json.
func readShardState(s *shardDir) (*study.Partial, error) {
	data, err := os.ReadFile(s.statePath())
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != s.header.StateSHA256 {
		return nil, fmt.Errorf("%s does not match the sha256 in %s: the directory was modified or copied incompletely; run the shard again", s.statePath(), report.PartialHeader)
	}
	p, err := study.ReadPartial(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.statePath(), err)
	}
	if p.Shard != s.shard {
		return nil, fmt.Errorf("%s is shard %s, %s says %s", s.statePath(), p.Shard, report.PartialHeader, s.shard)
	}
	return p, nil
}

// sameDir reports whether a and b name one directory.
func sameDir(a, b string) bool {
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}

// parseWorkScenarios parses the recorded scenarios.
func parseWorkScenarios(w *work) ([]*scenarios.Scenario, error) {
	var list []*scenarios.Scenario
	for _, sc := range w.Scenarios {
		s, err := scenarios.Parse(sc.Source, []byte(sc.Text))
		if err != nil {
			return nil, err
		}
		list = append(list, s)
	}
	return list, nil
}

// planRunWork rebuilds the parts of a sharded run.
func planRunWork(w *work, f *runFlags, stdout io.Writer) ([]*part, error) {
	list, err := parseWorkScenarios(w)
	if err != nil {
		return nil, err
	}
	if f.out != "" && len(list) > 1 {
		return nil, fmt.Errorf("--out needs exactly one scenario; this run has %d (%s)", len(list), scenarioNames(w))
	}
	var parts []*part
	for _, s := range list {
		p, err := runPart(s, f, stdout)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// planSweepWork rebuilds the part of a sharded sweep.
func planSweepWork(w *work, f *runFlags, stdout io.Writer) ([]*part, error) {
	list, err := parseWorkScenarios(w)
	if err != nil {
		return nil, err
	}
	if len(list) != 1 {
		return nil, fmt.Errorf("a sweep has one scenario, this one %d", len(list))
	}
	path, values, err := parseSweep(w.Flags.Param)
	if err != nil {
		return nil, fmt.Errorf("--param: %w", err)
	}
	p, err := sweepPart(list[0], w.Flags.Param, path, values, f, stdout)
	if err != nil {
		return nil, err
	}
	return []*part{p}, nil
}
