package scorecard

import (
	"math"
	"os"
	"testing"

	"hedgelab/scenarios"
)

// A scenario whose every kind is free of RU (the RU multiplier is NaN for
// every policy and every frontier point) is scored without a regret: the
// best fixed threshold cannot be chosen at the policy's RU. It panicked
// (index -1: a NaN point is not == to itself) in the first population
// scorecard, seed 11 scenario 2.
func TestScoreNaNRU(t *testing.T) {
	data, err := os.ReadFile("testdata/nan-ru.toml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenarios.Parse("testdata/nan-ru.toml", data)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Score(s, Options{Parallel: 2, Cap: 3, RosterOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Headline < 0 {
		t.Fatal("no headline: the case no longer exercises the frontier")
	}
	for _, p := range c.Policies {
		if !math.IsNaN(p.RU) {
			t.Errorf("%s: RU %v, want NaN (every kind free)", p.Name, p.RU)
		}
		if p.Regret.N != 0 {
			t.Errorf("%s: regret %+v over %d replications, want none", p.Name, p.Regret, p.Regret.N)
		}
		if p.Roster == "" {
			t.Errorf("%s: a scenario's own policy scored with RosterOnly", p.Name)
		}
	}
}

// A scenario's conditions change when it has episodes, rate changes, or a
// fault or background load with a window; a fault or background load for
// the whole run does not change them. With the run's length unknown (0)
// every window counts.
func TestChanges(t *testing.T) {
	end := 5.0
	for _, c := range []struct {
		f    scenarios.File
		want string
	}{
		{scenarios.File{}, ""},
		{scenarios.File{Faults: []scenarios.Fault{{Probability: 0.1}}}, ""},
		{scenarios.File{Background: []scenarios.Background{{RatePerS: 10}}}, ""},
		{scenarios.File{Episodes: []scenarios.Episode{{EndS: 1}}}, "episodes"},
		{scenarios.File{Workload: scenarios.Workload{RateChanges: []scenarios.RateChange{{AtS: 1}}}}, "rate_changes"},
		{scenarios.File{Faults: []scenarios.Fault{{StartS: 2}}}, "a fault window"},
		{scenarios.File{Faults: []scenarios.Fault{{EndS: 2}}}, "a fault window"},
		{scenarios.File{Background: []scenarios.Background{{EndS: &end}}}, "a background window"},
		{scenarios.File{Episodes: []scenarios.Episode{{}}, Faults: []scenarios.Fault{{StartS: 1}}}, "episodes, a fault window"},
	} {
		if got := changes(&c.f, 0); got != c.want {
			t.Errorf("changes(%+v, 0) = %q, want %q", c.f, got, c.want)
		}
	}
}

// A change that holds less than minChangeShare (1%) of the run, or leaves
// less than that as it was, does not change its conditions (issue 25: a
// 0.1 s fault window made 195 of 200 population members "changing"); the
// windows of one kind add up. Each row is a 30 s run.
func TestChangesNegligibleShare(t *testing.T) {
	at := func(s float64) *float64 { return &s }
	for _, c := range []struct {
		name string
		f    scenarios.File
		want string
	}{
		{"a 0.1 s fault window (0.33%)", scenarios.File{Faults: []scenarios.Fault{{StartS: 12, EndS: 12.1}}}, ""},
		{"a 0.3 s fault window (1%)", scenarios.File{Faults: []scenarios.Fault{{StartS: 12, EndS: 12.3}}}, "a fault window"},
		{"a fault from 29.9 s to the end", scenarios.File{Faults: []scenarios.Fault{{StartS: 29.9}}}, ""},
		{"a fault from 0.1 s to the end: the run's condition", scenarios.File{Faults: []scenarios.Fault{{StartS: 0.1}}}, ""},
		{"a fault from 5 s to the end", scenarios.File{Faults: []scenarios.Fault{{StartS: 5}}}, "a fault window"},
		{"a fault window past the run's end", scenarios.File{Faults: []scenarios.Fault{{StartS: 40, EndS: 50}}}, ""},
		{"two 0.2 s episodes add up (1.3%)", scenarios.File{Episodes: []scenarios.Episode{{StartS: 3, EndS: 3.2}, {StartS: 9, EndS: 9.2}}}, "episodes"},
		{"one 0.2 s episode", scenarios.File{Episodes: []scenarios.Episode{{StartS: 3, EndS: 3.2}}}, ""},
		{"a rate change at 0.1 s", scenarios.File{Workload: scenarios.Workload{RateChanges: []scenarios.RateChange{{AtS: 0.1}}}}, ""},
		{"a rate change at 10 s", scenarios.File{Workload: scenarios.Workload{RateChanges: []scenarios.RateChange{{AtS: 10}}}}, "rate_changes"},
		{"background load for 0.2 s", scenarios.File{Background: []scenarios.Background{{StartS: 1, EndS: at(1.2)}}}, ""},
		{"background load for 2 s", scenarios.File{Background: []scenarios.Background{{StartS: 1, EndS: at(3)}}}, "a background window"},
	} {
		c.f.DurationS = 30
		if got := changes(&c.f, scenarios.RunLength(&c.f, nil).Seconds()); got != c.want {
			t.Errorf("%s: changes = %q, want %q", c.name, got, c.want)
		}
	}
	f := scenarios.File{DurationS: 60, MaxOps: 3000, Workload: scenarios.Workload{RatePerS: 100}, Faults: []scenarios.Fault{{StartS: 31, EndS: 40}}}
	if got := changes(&f, scenarios.RunLength(&f, nil).Seconds()); got != "" {
		t.Errorf("a fault window after max_ops ends the run at 30 s: changes = %q, want none", got)
	}
}

// Every scenario of the population space has an alternate region and
// point reads (what the population space promises).
func TestPopulationSpace(t *testing.T) {
	sp, err := scenarios.PopulationSpace()
	if err != nil {
		t.Fatal(err)
	}
	var idx []int
	for i := range 60 {
		idx = append(idx, i)
	}
	noReads := 0
	for s, err := range Population(sp, 5, idx).Scenarios {
		if err != nil {
			t.Fatal(err)
		}
		regions := map[string]bool{}
		for _, r := range s.File.Replicas {
			regions[r.Region] = true
		}
		if len(regions) < 2 {
			t.Errorf("%s: replicas in %d region(s), want 2 or more", s.Name, len(regions))
		}
		if mix := s.File.Workload.Mix; len(mix) > 0 && mix["read"] == 0 && s.File.Feed == nil {
			noReads++ // a write-only mix: each entry is a write with p 0.1
		}
	}
	if noReads > 3 {
		t.Errorf("%d of %d scenarios without point reads or a feed, want at most 3 (5%%)", noReads, len(idx))
	}
}
