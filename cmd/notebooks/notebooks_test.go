package main

import (
	"hedgelab/internal/scorecard"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hedgelab/internal/report"
	"hedgelab/scenarios"
)

func TestFirstSentence(t *testing.T) {
	for in, want := range map[string]string{
		"One. Two.":            "One.",
		"RTTs (2.5 ms). Next.": "RTTs (2.5 ms).",
		"no period":            "no period",
	} {
		if got := firstSentence(in); got != want {
			t.Errorf("firstSentence(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteIndex(t *testing.T) {
	dir := t.TempDir()
	run := &report.Run{Scenario: "tiny", Replications: 1, Policies: []report.PolicyResult{
		{Figures: report.Figures{Policy: "disabled", Ops: 10, P99: 300}},
		{Figures: report.Figures{Policy: "static-20ms", Ops: 10, P99: 30, RUMultiplier: 1.02, HedgeRate: 0.03}},
	}}
	if _, err := report.WriteRun(filepath.Join(dir, "tiny"), run, report.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := writeIndex(dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := "| [tiny](tiny/) | Two regions, a slow tail on the primary, hedging off versus a static 20 ms threshold. | p99 300 ms without hedging → lowest p99 30.0 ms (`static-20ms`, RU 1.020×, hedge rate 3.00%) |"
	if !strings.Contains(string(data), want) {
		t.Errorf("index:\n%s\nwant line:\n%s", data, want)
	}
}

func TestDocTableAndBetter(t *testing.T) {
	d := newDoc(t.TempDir(), "x", "Title", 1)
	d.table([]string{"a", "b"}, [][]string{{"1", "2"}})
	if !strings.Contains(d.b.String(), "| a | b |\n|---|---|\n| 1 | 2 |\n") {
		t.Errorf("table:\n%s", d.b.String())
	}
	lo := report.Figures{CI95: map[string][2]float64{"p99_ms": {1, 2}}}
	hi := report.Figures{CI95: map[string][2]float64{"p99_ms": {3, 4}}}
	ov := report.Figures{CI95: map[string][2]float64{"p99_ms": {1.5, 3.5}}}
	if !better(lo, hi, "p99_ms", 1.5, 3.5) || better(hi, lo, "p99_ms", 3.5, 1.5) || better(lo, ov, "p99_ms", 1.5, 2.5) {
		t.Error("better() with CIs")
	}
	if !better(report.Figures{}, report.Figures{}, "p99_ms", 90, 100) || better(report.Figures{}, report.Figures{}, "p99_ms", 97, 100) {
		t.Error("better() without CIs uses a 5% margin")
	}
	zero := func(v float64) report.Figures { return report.Figures{CI95: map[string][2]float64{"p99_ms": {v, v}}} }
	if better(zero(2007), zero(2011), "p99_ms", 2007, 2011) {
		t.Error("zero-width CIs 0.2% apart are not a meaningful difference")
	}
}

// The roster: one policy of every type and the presets notebook 01
// studies, each buildable.
func TestQ11Roster(t *testing.T) {
	want := "disabled driver-default static-50ms p99-tps p99-dynamic p99-dynamic-min20 p99-budget-20pct cassandra-100ms finagle-2pct grpc-throttle-50ms recommended"
	if got := strings.Join(scorecard.RosterNames(), " "); got != want {
		t.Errorf("roster %q, want %q", got, want)
	}
	pols, err := scenarios.BuildPolicies("q11 roster", []byte(scorecard.RosterTOML), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pols {
		if _, err := p.New(); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
}

func TestWithCIOneBucket(t *testing.T) {
	f := report.Figures{CI95: map[string][2]float64{"p99_ms": {2002, 2002.0000001}, "p999_ms": {10, 12}, "ru_multiplier": {1, 1}}}
	if got := withCI(f, "p99_ms", 2002, ms); got != "2002 [one bucket]" {
		t.Errorf("zero-width: %q", got)
	}
	if got := withCI(f, "ru_multiplier", 1, ru); got != "1.000 [no spread]" {
		t.Errorf("zero-width RU: %q", got)
	}
	if got := withCI(f, "p999_ms", 11, ms); got != "11.0 [10.0, 12.0]" {
		t.Errorf("interval: %q", got)
	}
}

func TestWithCIUnboundedLatency(t *testing.T) {
	f := report.Figures{CI95: map[string][2]float64{"p999_ms": {0, 1856}, "p99_ms": {67.6, 67.8}}}
	if got := withCI(f, "p999_ms", 764, ms); got != "764 ± 1092†" {
		t.Errorf("p99.9 = %q, want 764 ± 1092†", got)
	}
	if got := withCI(f, "p99_ms", 67.7, ms); got != "67.7 [67.6, 67.8]" {
		t.Errorf("p99 = %q, want 67.7 [67.6, 67.8]", got)
	}
	d := &doc{}
	d.table([]string{"policy", "p99.9"}, [][]string{{"a", withCI(f, "p999_ms", 764, ms)}})
	if !strings.Contains(d.b.String(), report.UnboundedCINote) {
		t.Errorf("table with a † lacks the note:\n%s", d.b.String())
	}
	d = &doc{}
	d.table([]string{"policy", "p99"}, [][]string{{"a", withCI(f, "p99_ms", 67.7, ms)}})
	if strings.Contains(d.b.String(), "†") {
		t.Errorf("note without a mark:\n%s", d.b.String())
	}
}
