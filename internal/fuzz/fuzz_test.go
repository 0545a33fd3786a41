package fuzz

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"hedgelab/internal/tomltree"
	"hedgelab/scenarios"
)

func defaultSpace(t *testing.T) *scenarios.Space {
	t.Helper()
	sp, err := scenarios.DefaultSpace()
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// verdict is what a Run decided, without the output directory.
func verdict(t *testing.T, res *Result, err error, dir string) []Failure {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Failure, len(res.Failures))
	for i, f := range res.Failures {
		text, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		f.Path, f.Original = filepath.Base(f.Path), strings.ReplaceAll(string(text), dir, "OUT")
		out[i] = f
	}
	return out
}

// Issue 24: repeat runs give the same verdicts, whatever --parallel is:
// the same failures, from the same scenarios, shrunk to the same files.
func TestVerdictsRepeatAndDoNotDependOnParallel(t *testing.T) {
	sp := defaultSpace(t)
	run := func(parallel int) []Failure {
		out := t.TempDir()
		res, err := Run(context.Background(), Options{Space: sp, N: 24, Seed: 11, Parallel: parallel, All: true,
			Out: out, Sample: 8, ShrinkBudget: 40})
		return verdict(t, res, err, out)
	}
	a, b, c := run(1), run(3), run(3)
	if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(b, c) {
		t.Errorf("verdicts differ:\nparallel 1: %+v\nparallel 3: %+v\nagain:      %+v", a, b, c)
	}
}

// Without All the check stops at the first failing scenario, the lowest
// index whatever the worker count.
func TestStopsAtTheFirstFailure(t *testing.T) {
	sp := defaultSpace(t)
	e := &engine{opt: Options{Space: sp, N: 30, Seed: 3, Parallel: 3, Out: t.TempDir(), Sample: -1, Only: []string{"invalid"}}}
	e.plantDoc = plantInvalid
	res, err := run(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	want := -1
	for i := range 30 {
		doc, _ := sp.Generate(3, i)
		if _, ok := doc.Get("episodes"); ok {
			want = i
			break
		}
	}
	if len(res.Failures) != 1 || res.Failures[0].Index != want || res.Checked != want+1 {
		t.Fatalf("got %+v (checked %d), want the failure of scenario %d", res.Failures, res.Checked, want)
	}
}

// plantInvalid makes a scenario with episodes invalid (a negative
// partition count).
func plantInvalid(doc *tomltree.Table) {
	if _, ok := doc.Get("episodes"); ok {
		doc.Table("workload").Set("partitions", -3)
	}
}

// A generated scenario the validator refuses is an "invalid" failure,
// shrunk to a small file refused for the same reason.
func TestPlantedInvalidIsShrunkToTheSameError(t *testing.T) {
	e := &engine{opt: Options{Space: defaultSpace(t), N: 20, Seed: 3, Out: t.TempDir(), Sample: -1}}
	e.plantDoc = plantInvalid
	res, err := run(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 || res.Failures[0].Invariant != "invalid" {
		t.Fatalf("got %+v", res.Failures)
	}
	f := res.Failures[0]
	if f.Lines > 25 {
		t.Errorf("shrunk to %d lines, want at most 25", f.Lines)
	}
	_, err = scenarios.Load(f.Path)
	if err == nil || !strings.Contains(err.Error(), "workload.partitions: must be between 0 and 1000000, got -3") {
		t.Errorf("the shrunk file gives %v", err)
	}
}

// The resource-limit check fails when the limit leaves work out (planted:
// a limit that counts nothing for scenarios with faults).
func TestPlantedLimitCountsWork(t *testing.T) {
	limitedWork = func(s *scenarios.Scenario) float64 {
		if len(s.File.Faults) > 0 {
			return 0
		}
		return s.LimitedWork()
	}
	defer func() { limitedWork = func(s *scenarios.Scenario) float64 { return s.LimitedWork() } }()
	res, err := Run(context.Background(), Options{Space: defaultSpace(t), N: 20, Seed: 4, Out: t.TempDir(), Sample: -1,
		Only: []string{"limit-counts-work"}, ShrinkBudget: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 || res.Failures[0].Lines > 50 {
		t.Fatalf("got %+v", res.Failures)
	}
	text, _ := os.ReadFile(res.Failures[0].Path)
	if !bytes.Contains(text, []byte("[[faults]]")) {
		t.Errorf("the shrunk file lost its fault:\n%s", text)
	}
}

// An interrupted run returns the context's error and shrinks nothing.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := t.TempDir()
	res, err := Run(ctx, Options{Space: defaultSpace(t), N: 50, Seed: 1, Out: out})
	if err == nil || res == nil || len(res.Failures) > 0 {
		t.Fatalf("got %+v, %v", res, err)
	}
}

func TestShape(t *testing.T) {
	for _, c := range [][2]string{
		{"x.toml:12: workload.rate_changes.2.at_s: must be >= 18.62 s, where", "x.toml:40: workload.rate_changes.0.at_s: must be >= 1.5 s, where"},
		{"a.toml:3: replicas.eastus.servers: must be between 0 and 1000000, got -4", "b.toml:9: replicas.westus2.servers: must be between 0 and 1000000, got -1"},
	} {
		if shape(c[0]) != shape(c[1]) {
			t.Errorf("shape(%q) = %q, shape(%q) = %q", c[0], shape(c[0]), c[1], shape(c[1]))
		}
	}
	if shape("x.toml:1: duration_s: need duration_s > 0") == shape("x.toml:1: workload.rate_per_s: required") {
		t.Error("two rules share a shape")
	}
}

// Keep writes every generated scenario, failing or not, as the generator
// made it: the file after its one-line header is Generate's document, and
// it validates under its own name (how a scorecard population's member is
// written out to be rerun).
func TestKeepWritesEveryScenario(t *testing.T) {
	sp, err := scenarios.PopulationSpace()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Space: sp, N: 3, First: 5, Seed: 11, Out: out, Sample: -1, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 0 {
		t.Fatalf("failures %v", res.Failures)
	}
	for i := 5; i < 8; i++ {
		name := "fuzz-11-" + string(rune('0'+i))
		b, err := os.ReadFile(filepath.Join(out, name+".toml"))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := sp.Generate(11, i)
		if err != nil {
			t.Fatal(err)
		}
		_, body, ok := bytes.Cut(b, []byte("\n"))
		if !ok || !bytes.Equal(body, doc.Marshal()) {
			t.Errorf("%s is not Generate(11, %d)'s document", name, i)
		}
		if _, err := scenarios.Parse(name+".toml", b); err != nil {
			t.Errorf("%s does not parse: %v", name, err)
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 3 {
		t.Errorf("%d files written, want 3", len(ents))
	}
}
