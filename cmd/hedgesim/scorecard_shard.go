package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"hedgelab/internal/report"
	"hedgelab/internal/scorecard"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
)

// A sharded population scorecard (hedgesim scorecard --n N --seed S
// --shard I/N) scores the scenarios whose index is I modulo N and writes
// shard.json (the command, as for run and sweep: its flags in
// scorecardWork, no scenario text: the population is its recipe) and
// shard.bin: one scorecardRecord per scenario scored, as JSON. hedgesim
// merge puts the records in index order, prints each one's text and the
// summary of all of them: what the unsharded scorecard prints.

// scorecardWork is the recipe of a sharded population scorecard: what
// must be equal for shards to belong together.
type scorecardWork struct {
	N           int    `json:"n"`
	Seed        uint64 `json:"seed"`
	Space       string `json:"space"`
	SpaceSHA256 string `json:"space_sha256,omitempty"`
	Reps        int    `json:"reps,omitempty"`
	Cap         int    `json:"cap,omitempty"`
	Verbose     bool   `json:"verbose,omitempty"`
}

func (w *scorecardWork) String() string {
	s := fmt.Sprintf("--n %d --seed %d", w.N, w.Seed)
	if w.Space != scenarios.PopulationSpaceSource { // the default, which --space cannot name
		s += " --space " + w.Space
	}
	if w.SpaceSHA256 != "" {
		s += " (sha256 " + w.SpaceSHA256[:12] + ")"
	}
	if w.Reps > 0 {
		s += " --reps " + strconv.Itoa(w.Reps)
	}
	if w.Cap > 0 {
		s += " --cap " + strconv.Itoa(w.Cap)
	}
	if w.Verbose {
		s += " -v"
	}
	return s
}

// scorecardRecord is one scenario of a shard: its printed text and what
// scorecard.Summarize reads of its card.
type scorecardRecord struct {
	Index int        `json:"index"`
	Text  string     `json:"text"`
	Card  recordCard `json:"card"`
}

// recordCard is what scorecard.Summarize reads of a scorecard.Card.
type recordCard struct {
	Scenario    string         `json:"scenario"`
	Decided     bool           `json:"decided"`
	HasHeadline bool           `json:"has_headline"`
	Changes     string         `json:"changes,omitempty"`
	Policies    []recordPolicy `json:"policies"`
}

// recordPolicy is what scorecard.Summarize reads of a scorecard.Policy.
// Floats are written as Go's shortest round-trip text (NaN and ±Inf
// included), so a merge summarizes the very values a shard had.
type recordPolicy struct {
	Name   string       `json:"name"`
	Roster string       `json:"roster,omitempty"`
	Loses  bool         `json:"loses,omitempty"`
	Losses []study.Loss `json:"losses,omitempty"`
	Regret [3]string    `json:"regret"` // mean, lo, hi
	N      int          `json:"regret_n"`
}

func floatText(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func textFloat(s string) (float64, error) {
	if s == "" {
		return math.NaN(), nil
	}
	return strconv.ParseFloat(s, 64)
}

// recordOf is card c (scenario index i of the population) as a shard
// records it.
func recordOf(i int, c *scorecard.Card, verbose bool) scorecardRecord {
	r := scorecardRecord{Index: i, Text: cardText(c, verbose), Card: recordCard{
		Scenario: c.Scenario, Decided: c.Decided, HasHeadline: c.Headline >= 0, Changes: c.Changes}}
	for _, p := range c.Policies {
		r.Card.Policies = append(r.Card.Policies, recordPolicy{Name: p.Name, Roster: p.Roster, Loses: p.Loses, Losses: p.Losses,
			Regret: [3]string{floatText(p.Regret.Mean), floatText(p.Regret.Lo), floatText(p.Regret.Hi)}, N: p.Regret.N})
	}
	return r
}

// card rebuilds the part of a scorecard.Card that scorecard.Summarize
// reads.
func (r recordCard) card() (*scorecard.Card, error) {
	c := &scorecard.Card{Scenario: r.Scenario, Decided: r.Decided, Headline: -1, Changes: r.Changes}
	if r.HasHeadline {
		c.Headline = 0
	}
	for _, p := range r.Policies {
		var g [3]float64
		for k, s := range p.Regret {
			v, err := textFloat(s)
			if err != nil {
				return nil, fmt.Errorf("scenario %s, policy %s: regret: %v", r.Scenario, p.Name, err)
			}
			g[k] = v
		}
		c.Policies = append(c.Policies, scorecard.Policy{Name: p.Name, Roster: p.Roster, Loses: p.Loses, Losses: p.Losses,
			Regret: study.Gain{Mean: g[0], Lo: g[1], Hi: g[2], N: p.N}, Clairvoyant: math.NaN()})
	}
	return c, nil
}

// writeScorecardShard writes a population scorecard's shard: its records
// into f.out (default scorecard-shard-I-of-N).
func writeScorecardShard(pop *scorecardPopulation, f scorecardFlags, records []scorecardRecord, wall time.Duration, stdout io.Writer) error {
	sh := *f.shard
	dir := f.out
	if dir == "" {
		dir = "scorecard" + shardSuffix(sh)
	}
	if err := report.CheckOutputDir(dir); err != nil {
		return err
	}
	state, err := json.MarshalIndent(records, "", " ")
	if err != nil {
		return err
	}
	state = append(state, '\n')
	sum := sha256.Sum256(state)
	sw := &scorecardWork{N: pop.n, Seed: pop.seed, Space: pop.space, SpaceSHA256: pop.sha256, Reps: f.start, Cap: f.cap, Verbose: f.verbose}
	h := partialHeader{Format: partialFormat, Build: buildID(), work: work{Command: "scorecard", Flags: workFlags{Scorecard: sw}},
		Shard: sh.String(), Runs: len(records), TotalRuns: pop.n, StateSHA256: hex.EncodeToString(sum[:])}
	header, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	paths, err := report.WritePartial(dir, append(header, '\n'), state)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "shard %s of hedgesim scorecard %s: %d of %d scenarios in %s\n", sh, sw, len(records), pop.n, wall.Round(time.Millisecond))
	printPaths(stdout, dir, paths)
	fmt.Fprintf(stdout, "merge the %d shards' directories with: hedgesim merge DIR...\n", sh.Count)
	return nil
}

// mergeScorecard merges the shards of a population scorecard and prints
// what the unsharded scorecard prints.
func mergeScorecard(shards []*shardDir, out string, stdout io.Writer) error {
	first := shards[0]
	sw := first.header.Flags.Scorecard
	if sw == nil {
		return fmt.Errorf("%s: a scorecard partial result without its population (flags.scorecard)", first.headerPath())
	}
	if out != "" {
		return fmt.Errorf("--out: a scorecard's merge prints its result; there are no files to write")
	}
	var all []scorecardRecord
	for _, s := range shards {
		data, err := os.ReadFile(s.statePath())
		if err != nil {
			return err
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != s.header.StateSHA256 {
			return fmt.Errorf("%s does not match the sha256 in %s: the directory was modified or copied incompletely; run the shard again", s.statePath(), report.PartialHeader)
		}
		var recs []scorecardRecord
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&recs); err != nil {
			return fmt.Errorf("%s: %v", s.statePath(), err)
		}
		for _, r := range recs {
			if r.Index < 0 || r.Index >= sw.N || r.Index%s.shard.Count != s.shard.Index {
				return fmt.Errorf("%s: scenario index %d is not of shard %s of %d scenarios", s.statePath(), r.Index, s.shard, sw.N)
			}
		}
		all = append(all, recs...)
	}
	slices.SortFunc(all, func(a, b scorecardRecord) int { return a.Index - b.Index })
	for k, r := range all {
		if r.Index != k {
			return fmt.Errorf("%s: scenario %d of %d missing or given twice (index %d at place %d): the shards are incomplete", filepath.Dir(first.dir), k, sw.N, r.Index, k)
		}
	}
	if len(all) != sw.N {
		return fmt.Errorf("the shards hold %d of the population's %d scenarios", len(all), sw.N)
	}
	var cards []*scorecard.Card
	for _, r := range all {
		c, err := r.Card.card()
		if err != nil {
			return err
		}
		cards = append(cards, c)
		fmt.Fprint(stdout, r.Text)
	}
	fmt.Fprint(stdout, summaryText(scorecard.Summarize(cards)))
	return nil
}
