package scorecard

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hedgelab/hedging"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// The roster stands beside a scenario's own policies: an own entry of a
// roster entry's name, or else of its settings, stands for it; the others
// are added. A fixed threshold of the frontier that a scored policy
// already is runs once.
func TestLineup(t *testing.T) {
	s, err := scenarios.Get("tiny") // disabled, static-20ms, ...
	if err != nil {
		t.Fatal(err)
	}
	cfg, own, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	entries, grid, err := lineup(s, cfg, own, false, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	stands := map[string]string{}
	for _, e := range entries {
		names = append(names, e.file.Name)
		stands[e.roster] = e.file.Name
	}
	for _, r := range RosterNames() {
		if stands[r] == "" {
			t.Errorf("roster entry %q has no scored policy", r)
		}
	}
	if stands["disabled"] != "disabled" || len(entries) < len(own) {
		t.Errorf("lineup %v: the file's disabled must stand for the roster's", names)
	}
	g := slices.Index(GridMs, 20)
	if j := grid[g]; j < 0 || entries[j].file.Name != "static-20ms" {
		t.Errorf("fixed 20 ms: %d, want the file's static-20ms", grid[g])
	}
	ownOnly, _, _ := lineup(s, cfg, own, true, false)
	if len(ownOnly) != len(own) {
		t.Errorf("own only: %d policies, want %d", len(ownOnly), len(own))
	}
}

func TestSameSettingsAndStatic(t *testing.T) {
	ms := 50.0
	ratio := 0.1
	a := scenarios.Policy{Name: "a", Type: "static", ThresholdMs: &ms}
	b := scenarios.Policy{Name: "b", Type: "static", ThresholdMs: &ms}
	if !sameSettings(a, b) {
		t.Error("static 50 ms under two names: not the same settings")
	}
	if v, ok := staticMs(a); !ok || v != 50 {
		t.Errorf("staticMs = %v, %v", v, ok)
	}
	b.HedgeBudget = &ratio
	if sameSettings(a, b) {
		t.Error("a budget is a different setting")
	}
	if _, ok := staticMs(b); ok {
		t.Error("a budgeted static threshold is not a fixed threshold of the frontier")
	}
}

// Files reads directories' *.toml in name order and a content given twice
// once; Generated and Concat yield in order.
func TestSources(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "..", "scenarios", "tiny.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"b.toml", "a.toml"} {
		if err := os.WriteFile(filepath.Join(dir, n), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	other := strings.Replace(string(data), `name = "tiny"`, `name = "tiny-two"`, 1)
	if err := os.WriteFile(filepath.Join(dir, "c.toml"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for s, err := range Concat("x", Files(dir), Generated("gen", 2, func(i int) (*scenarios.Scenario, error) { return scenarios.Get("tiny") })).Scenarios {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, filepath.Base(s.Source))
	}
	if want := "a.toml c.toml embedded:tiny.toml embedded:tiny.toml"; strings.Join(got, " ") != want {
		t.Errorf("sources %q, want %q", got, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "d.toml"), []byte("name = 3"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, failed := 0, false
	for _, err := range Files(dir).Scenarios {
		n++
		failed = err != nil
	}
	if !failed || n != 3 {
		t.Errorf("a broken file: %d yielded, last error %v; want the error third, then stop", n, failed)
	}
}

// A whole scorecard of one small scenario: every roster entry scored, the
// frontier's fixed thresholds and no hedging on it, the recommended
// policy's regret against the best of them at no more RU, and the
// clairvoyant bound (tiny has no queueing) at most the policy's own
// headline figure; the same again is the same card (deterministic,
// whatever Parallel).
func TestScoreTiny(t *testing.T) {
	s, err := scenarios.Get("tiny")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Score(s, Options{Parallel: 2, Cap: 3})
	if err != nil {
		t.Fatal(err)
	}
	if c.Headline < 0 || c.Quantities[c.Headline].String() != "read p99" || c.Start != 3 {
		t.Fatalf("headline %d of %v, start %d", c.Headline, c.Quantities, c.Start)
	}
	if len(c.Frontier) != len(GridMs)+1 || !math.IsInf(c.Frontier[len(c.Frontier)-1].ThresholdMs, 1) {
		t.Errorf("frontier %+v: want every fixed threshold and no hedging", c.Frontier)
	}
	rec := c.Policy(Recommended)
	if rec == nil || rec.Regret.N != 3 || rec.Best.RU > rec.RU+1e-9 && rec.Best.Policy != "disabled" {
		t.Fatalf("recommended %+v", rec)
	}
	if c.ClairvoyantWhy != "" || math.IsNaN(rec.Clairvoyant) || rec.Clairvoyant > rec.Latency[c.Headline]*1.01 {
		t.Errorf("clairvoyant %v (%s) against the policy's %v ms", rec.Clairvoyant, c.ClairvoyantWhy, rec.Latency[c.Headline])
	}
	again, err := Score(s, Options{Parallel: 1, Cap: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Policies {
		a, b := c.Policies[i], again.Policies[i]
		if a.Name != b.Name || a.Loses != b.Loses || a.RU != b.RU || !slices.Equal(a.Latency, b.Latency) || a.Regret != b.Regret {
			t.Errorf("%s: %+v then %+v", a.Name, a, b)
		}
	}
	sum := Summarize([]*Card{c, again})
	if r := sum.Rate(Recommended); r.Ran != 2 || r.Lost%2 != 0 {
		t.Errorf("summary rate %+v", r)
	}
}

// A kind's quantile falls among its failures when a failed operation
// ranks slower than every answered one (rank q × ops rounded, as the
// histograms count it): 1000 read_many calls of which 15 failed put the
// p99 (rank 990) among them and the p99.9 too; 10 failed leave the p99 an
// answer (rank 990 of 990 answered).
func TestAmongFailures(t *testing.T) {
	for _, c := range []struct {
		q           float64
		ops, failed int64
		want        bool
	}{{0.99, 1000, 15, true}, {0.999, 1000, 15, true}, {0.99, 1000, 10, false}, {0.99, 1000, 11, true}, {0.99, 1000, 0, false}, {0.99, 0, 0, false}, {0.99, 5, 5, true}} {
		if got := amongFailures(c.q, c.ops, c.failed); got != c.want {
			t.Errorf("amongFailures(%v, %d, %d) = %v, want %v", c.q, c.ops, c.failed, got, c.want)
		}
	}
	c := &Card{Quantities: []study.Quantity{{Kind: "read_many", Q: 0.99}, {Kind: hedging.PointRead.String(), Q: 0.99}}}
	var s sample
	s.ops = 2000
	s.kindOps[hedging.ReadManyPage], s.kindFailed[hedging.ReadManyPage] = 1000, 15
	s.kindOps[hedging.PointRead] = 1000
	s.kindQ[hedging.ReadManyPage][0], s.kindQ[hedging.PointRead][0] = 100, 40
	if r := c.replication(s); r.Latency[0] != study.Failed || r.Latency[1] != 40 {
		t.Errorf("replication latencies %v, want [+Inf 40]", r.Latency)
	}
}

// A quantile is scored where at least minTail of the kind's operations lie
// beyond it, p99 as p99.9 (issue 25: p99 of a kind with 300 operations
// was scored, the third-largest value): 999 point reads score nothing,
// 1000 their p99, 10000 their p99.9 too; the headline is the p99 of the
// scored kind with the most operations, none when no p99 is scored.
func TestChooseScoresQuantilesWithEnoughTail(t *testing.T) {
	for _, c := range []struct {
		reads, queries int64
		want           string
		headline       string
	}{
		{999, 0, "", ""},
		{1000, 0, "read p99", "read p99"},
		{9999, 0, "read p99", "read p99"},
		{10000, 0, "read p99, read p99.9", "read p99"},
		{300, 5000, "query p99", "query p99"},
		{20000, 1500, "read p99, read p99.9, query p99", "read p99"},
	} {
		var s sample
		s.kindOps[hedging.PointRead], s.kindOps[hedging.QueryPage] = c.reads, c.queries
		card := &Card{}
		cfg := &simnet.Config{}
		cfg.Client.Phase = hedging.Phase2
		card.choose(cfg, [][]sample{{s}})
		var got []string
		for _, q := range card.Quantities {
			got = append(got, q.String())
		}
		head := ""
		if card.Headline >= 0 {
			head = card.Quantities[card.Headline].String()
		}
		if strings.Join(got, ", ") != c.want || head != c.headline {
			t.Errorf("%d reads, %d queries: scored %q (headline %q), want %q (headline %q)", c.reads, c.queries, got, head, c.want, c.headline)
		}
	}
	for _, c := range []struct {
		q    float64
		ops  int64
		want bool
	}{{0.99, 999, false}, {0.99, 1000, true}, {0.999, 9999, false}, {0.999, 10000, true}, {0.99, 0, false}} {
		if got := scoresQuantile(c.q, c.ops); got != c.want {
			t.Errorf("scoresQuantile(%v, %d) = %v, want %v", c.q, c.ops, got, c.want)
		}
	}
}
