package study

import (
	"strings"
	"testing"

	"hedgelab/internal/report"
)

func fig(name string, p99, lo, hi, ru, errs float64) report.Figures {
	return report.Figures{Policy: name, P99: p99, RUMultiplier: ru, ErrorRate: errs,
		CI95: map[string][2]float64{"p99_ms": {lo, hi}}}
}

// The dominance rule of issue 17, one row per clause and its edges (the
// table cmd/scorecard was written against).
func TestDominates(t *testing.T) {
	r := func(p99, lo, hi, ru float64) report.Figures { return fig("", p99, lo, hi, ru, 0) }
	for _, c := range []struct {
		name string
		a, b report.Figures
		want bool
	}{
		{"10% lower p99, intervals apart, same RU", r(80, 78, 82, 1.1), r(100, 95, 105, 1.1), true},
		{"10% lower p99 but intervals overlap", r(80, 70, 96, 1.1), r(100, 95, 105, 1.1), false},
		{"10% lower p99 for more RU", r(80, 78, 82, 1.2), r(100, 95, 105, 1.1), false},
		{"9% lower p99", r(91, 90, 92, 1.0), r(100, 99, 101, 1.0), false},
		{"2 RU points cheaper, p99 overlapping", r(101, 95, 107, 1.08), r(100, 95, 105, 1.1), true},
		{"1.9 RU points cheaper", r(100, 95, 105, 1.081), r(100, 95, 105, 1.1), false},
		{"2 RU points cheaper, p99 worse and apart", r(120, 118, 122, 1.0), r(100, 95, 105, 1.1), false},
		{"one replication: no interval, 10% lower", report.Figures{P99: 90, RUMultiplier: 1}, report.Figures{P99: 100, RUMultiplier: 1}, true},
	} {
		if _, got := Dominates(c.a, c.b); got != c.want {
			t.Errorf("%s: Dominates = %v, want %v", c.name, got, c.want)
		}
	}
}

// Losses names every dominating policy and an error-rate loss; a policy
// no one dominates loses nothing.
func TestLosses(t *testing.T) {
	figs := []report.Figures{
		fig("disabled", 160, 158, 162, 1.000, 0.0002),
		fig("p99-dynamic", 160, 158, 162, 1.085, 0.0002),
		fig("static-20ms", 100, 98, 102, 1.085, 0.0002),
		fig("deadline", 150, 148, 152, 1.0, 0.0600),
	}
	got, err := Losses(figs, "p99-dynamic")
	if err != nil {
		t.Fatal(err)
	}
	var by []string
	for _, l := range got {
		by = append(by, l.By)
	}
	if strings.Join(by, ",") != "disabled,static-20ms,deadline" {
		t.Errorf("p99-dynamic loses to %q, want disabled,static-20ms,deadline", by)
	}
	got, _ = Losses(figs, "deadline")
	if len(got) != 1 || got[0].By != "" || !strings.Contains(got[0].Why, "errors 6.00% vs best 0.02%") {
		t.Errorf("deadline: %+v, want one error-rate loss", got)
	}
	if got, _ := Losses(figs, "static-20ms"); len(got) != 0 {
		t.Errorf("static-20ms: %+v, want no loss", got)
	}
	if _, err := Losses(figs, "nope"); err == nil {
		t.Error("unknown policy: no error")
	}
}

// The Pareto front keeps the cheapest and the fastest and whatever trades
// between them; a policy worse on both is off it.
func TestParetoFront(t *testing.T) {
	figs := []report.Figures{
		{Policy: "cheap", P99: 200, RUMultiplier: 1.0},
		{Policy: "fast", P99: 50, RUMultiplier: 1.3},
		{Policy: "middle", P99: 100, RUMultiplier: 1.1},
		{Policy: "worse", P99: 120, RUMultiplier: 1.2},
		{Policy: "tie-cheap", P99: 200, RUMultiplier: 1.0},
	}
	var names []string
	for _, f := range ParetoFront(figs) {
		names = append(names, f.Policy)
	}
	if got := strings.Join(names, ","); got != "cheap,fast,middle,tie-cheap" {
		t.Errorf("front %s, want cheap,fast,middle,tie-cheap", got)
	}
}
