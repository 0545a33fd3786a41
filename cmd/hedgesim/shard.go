package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"

	"hedgelab/internal/report"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
)

// A sharded command (run or sweep with --shard I/N) simulates shard I of
// its runs and writes a partial result: shard.json, which records the
// command (its scenarios' text, the flags that shape its output, the
// build) so that hedgesim merge can rebuild its plan, and shard.bin, the
// shard's measurements (study.Partial). hedgesim merge checks that the
// partials belong together, merges them and writes what the command
// writes without --shard.
//
// To shard another command (hedgesim scorecard, say): record its work in
// a work value (Command names it), build its parts — its study inputs
// and the function that writes its files from their results — and call
// writeShard when --shard is set; register a planner in shardPlanners
// that rebuilds the same parts from the recorded work.

// partialFormat names the format of shard.json.
const partialFormat = "hedgesim partial result 1"

// partialHeader is shard.json.
type partialHeader struct {
	Format string `json:"format"`
	// Build is the hedgesim version and platform that wrote the partial;
	// every shard and the merge must be one build.
	Build string `json:"build"`
	work
	// Shard is "I/N"; Runs the runs it simulated of TotalRuns.
	Shard     string `json:"shard"`
	Runs      int    `json:"runs"`
	TotalRuns int    `json:"total_runs"`
	// StateSHA256 is the digest of shard.bin.
	StateSHA256 string `json:"shard_bin_sha256"`
}

// work is what a sharded command does: enough to rebuild its plan.
type work struct {
	// Command is the hedgesim command: run, sweep or scorecard.
	Command   string         `json:"command"`
	Flags     workFlags      `json:"flags"`
	Scenarios []workScenario `json:"scenarios"`
}

// workFlags are the flags that shape a command's output.
type workFlags struct {
	Replications int     `json:"replications,omitempty"` // 0: the scenario's
	Seed         *uint64 `json:"seed,omitempty"`         // nil: the scenario's
	PNG          bool    `json:"png,omitempty"`
	Param        string  `json:"param,omitempty"` // sweep --param, as given
	// Scorecard is a population scorecard's recipe (scorecard_shard.go).
	Scorecard *scorecardWork `json:"scorecard,omitempty"`
}

// workScenario is one scenario of a command, by its text.
type workScenario struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	SHA256 string `json:"sha256"`
	Text   string `json:"text"`
}

func workFlagsOf(f *runFlags) workFlags {
	w := workFlags{Replications: f.replications, PNG: f.png}
	if f.seedSet {
		seed := f.seed
		w.Seed = &seed
	}
	return w
}

func workScenarioOf(s *scenarios.Scenario) workScenario {
	text := s.Text()
	sum := sha256.Sum256(text)
	return workScenario{Name: s.Name, Source: s.Source, SHA256: hex.EncodeToString(sum[:]), Text: string(text)}
}

// String renders the flags as on a command line ("--replications 3 --seed 7").
func (w workFlags) String() string {
	var parts []string
	if w.Replications > 0 {
		parts = append(parts, "--replications "+strconv.Itoa(w.Replications))
	}
	if w.Seed != nil {
		parts = append(parts, "--seed "+strconv.FormatUint(*w.Seed, 10))
	}
	if w.PNG {
		parts = append(parts, "--png")
	}
	if w.Param != "" {
		parts = append(parts, "--param "+w.Param)
	}
	if w.Scorecard != nil {
		parts = append(parts, w.Scorecard.String())
	}
	if len(parts) == 0 {
		return "no flags that change the results"
	}
	return strings.Join(parts, " ")
}

// buildID names the build that writes or merges partials: the version
// (see version) and the platform (floating-point results may differ
// between architectures).
func buildID() string {
	return "hedgesim " + version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}

// parseShard parses --shard I/N.
func parseShard(s string) (study.Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil {
		return study.Shard{}, fmt.Errorf("want I/N, shard I (0-based) of N, such as 0/4, got %q", s)
	}
	switch {
	case count < 1 || count > study.MaxShards:
		return study.Shard{}, fmt.Errorf("the number of shards N must be from 1 to %d, got %q", study.MaxShards, s)
	case index < 0 || index >= count:
		return study.Shard{}, fmt.Errorf("the shard I is 0-based: from 0 to %d for N = %d, got %q", count-1, count, s)
	}
	return study.Shard{Index: index, Count: count}, nil
}

// shardSuffix is appended to a command's output directory to name the
// default directory of shard sh's partial result.
func shardSuffix(sh study.Shard) string {
	return fmt.Sprintf("-shard-%d-of-%d", sh.Index, sh.Count)
}

// writeShard simulates shard f.shard of parts (their inputs as one
// study) and writes its partial result into dir.
func writeShard(ctx context.Context, w *work, parts []*part, dir string, f *runFlags, stdout, stderr io.Writer) error {
	if err := report.CheckOutputDir(dir); err != nil {
		return err
	}
	var inputs []study.Input
	total := 0
	var ops int64
	for _, p := range parts {
		for _, in := range p.inputs {
			if in.Label == "" {
				in.Label = p.label
			}
			inputs = append(inputs, in)
			total += len(in.Policies) * in.Replications
			ops += expectedOps(in.Config, len(in.Policies), in.Replications)
		}
	}
	sh := *f.shard
	start := time.Now()
	var partial *study.Partial
	label := fmt.Sprintf("%s shard %s", parts[0].label, sh)
	err := withProgress(ctx, ops/int64(sh.Count), f, stderr, label, func(opts study.Options) (err error) {
		partial, err = study.SimulateShard(inputs, sh, opts)
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	var state bytes.Buffer
	if _, err := partial.WriteTo(&state); err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	sum := sha256.Sum256(state.Bytes())
	h := partialHeader{Format: partialFormat, Build: buildID(), work: *w, Shard: sh.String(),
		Runs: partial.Runs(), TotalRuns: total, StateSHA256: hex.EncodeToString(sum[:])}
	header, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	paths, err := report.WritePartial(dir, append(header, '\n'), state.Bytes())
	if err != nil {
		return err
	}
	if !f.quiet {
		fmt.Fprintf(stdout, "shard %s of hedgesim %s %s: %d of %d runs in %s\n", sh, w.Command, scenarioNames(w), partial.Runs(), total, time.Since(start).Round(time.Millisecond))
		printPaths(stdout, dir, paths)
		fmt.Fprintf(stdout, "merge the %d shards' directories with: hedgesim merge DIR...\n", sh.Count)
	}
	return nil
}

func scenarioNames(w *work) string {
	names := make([]string, len(w.Scenarios))
	for i, s := range w.Scenarios {
		names[i] = s.Name
	}
	return strings.Join(names, " ")
}
