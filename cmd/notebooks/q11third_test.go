package main

import (
	"strings"
	"testing"

	"hedgelab/internal/report"
)

func tfig(name string, p99, ru, errs float64) report.Figures {
	return report.Figures{Policy: name, P99: p99, RUMultiplier: ru, ErrorRate: errs,
		CI95: map[string][2]float64{"p99_ms": {p99 * 0.99, p99 * 1.01}}}
}

// Scoring over scenarios: a policy dominated on a scenario loses it, the
// policy it loses to most often is named, and a scenario where every
// policy loses yields its Pareto front with the recommended policy's
// position on it.
func TestQ11ThirdScoring(t *testing.T) {
	names := []string{"disabled", "static-50ms", q11RecName}
	scns := []q11Scn{
		{Name: "slow", Figs: []report.Figures{tfig("disabled", 200, 1, 0), tfig("static-50ms", 60, 1.1, 0), tfig(q11RecName, 60, 1.1, 0)}},
		{Name: "both-slow", Figs: []report.Figures{tfig("disabled", 160, 1, 0), tfig("static-50ms", 160, 1.08, 0), tfig(q11RecName, 160, 1.0, 0)}},
		// A trade-off: cheap and slow, fast and dear, and the recommended
		// policy in between with more errors than the best.
		{Name: "trade", Figs: []report.Figures{tfig("disabled", 200, 1, 0), tfig("static-50ms", 100, 1.3, 0), tfig(q11RecName, 150, 1.1, 0.02)}},
	}
	cards, err := q11ScoreAll(scns, names)
	if err != nil {
		t.Fatal(err)
	}
	// A lower p99 for more RU does not dominate: disabled loses nothing.
	if got := len(cards["disabled"].Lost); got != 0 {
		t.Errorf("disabled loses %d, want 0", got)
	}
	// both-slow: disabled and recommended are 8 points cheaper at the
	// same p99; the tie for "most often" goes to the first name.
	if c := cards["static-50ms"]; len(c.Lost) != 1 || c.LostTo["disabled"] != 1 || c.LostTo[q11RecName] != 1 || c.TopLoser != "disabled" {
		t.Errorf("static-50ms: lost %d, to %v (top %q), want both-slow to disabled and recommended", len(c.Lost), c.LostTo, c.TopLoser)
	}
	rec := cards[q11RecName]
	if len(rec.Lost) != 1 || rec.Lost[0].Scenario != "trade" || rec.ErrLoss != 1 {
		t.Errorf("recommended: %+v, want one error loss on trade", rec.Lost)
	}
	// trade: disabled loses? No one dominates it (cheapest) — so not every
	// policy loses there and it is not unavoidable.
	if u := q11Unavoidable(scns, cards, names); len(u) != 0 {
		t.Errorf("unavoidable %+v, want none", u)
	}
	front := []report.Figures{tfig("disabled", 200, 1, 0), tfig(q11RecName, 150, 1.1, 0), tfig("static-50ms", 100, 1.3, 0)}
	if p := q11Position(front, q11RecName); p != "between" {
		t.Errorf("position %q, want between", p)
	}
	if p := q11Position(front[:1], q11RecName); p != "off" {
		t.Errorf("position %q, want off", p)
	}
}

// The third edition's paragraphs render from a view without template
// errors, and the trade-off sentence follows the position.
func TestQ11ThirdTemplates(t *testing.T) {
	v := q11ThirdView{Rec: q11RecName, Scenarios: 3, Embedded: 2, Cases: []string{"`a.toml`"}, Roster: []string{"disabled"},
		RecCard: &q11Card{}, Fewest: []string{"`recommended`"}, P99Gain: 0.1, RU: 0.02, ErrPts: 0.01,
		Unavoidable: []q11Trade{{Scenario: "x", Front: "`disabled` 200 ms / 1.000 / 0.00%", Position: "cheapest", Rec: "200 ms / 1.000 / 0.00%"}}}
	d := &doc{}
	for _, n := range []string{"q11/third-question", "q11/third-recommended", "q11/third-method", "q11/third-scorecard", "q11/third-rec-card", "q11/third-unavoidable", "q11/third-matrix", "q11/third-answer"} {
		d.say(n, v)
	}
	if d.err != nil {
		t.Fatal(d.err)
	}
	got := d.b.String()
	for _, want := range []string{
		"`recommended` loses none of the 3 scenarios",
		"`x`: `disabled` 200 ms / 1.000 / 0.00%. `recommended` (200 ms / 1.000 / 0.00%) takes the cheapest point",
		"**Answer.** Ship `type = \"recommended\"`: on all 3 scenarios",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
}
