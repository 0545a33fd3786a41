package scorecard

import (
	"testing"

	"hedgelab/internal/study"
)

// Reasons lists the losses of one truth in order, "<by>: <why>" or
// "<why>" alone, the winner's name rendered as asked; Card.Why is the
// decided reasons of a policy that loses, and "" for one that does not.
func TestReasons(t *testing.T) {
	p := Policy{Name: "recommended", Loses: true, Losses: []study.Loss{
		{By: "static-50ms", Why: "faster", Truth: study.True},
		{By: "p99-dynamic", Why: "cheaper", Truth: study.Unknown},
		{Why: "errors above the best", Truth: study.True},
		{By: "disabled", Why: "cheaper", Truth: study.False},
	}}
	quote := func(s string) string { return "`" + s + "`" }
	for _, tc := range []struct {
		truth study.Truth
		name  func(string) string
		want  string
	}{
		{study.True, nil, "static-50ms: faster; errors above the best"},
		{study.True, quote, "`static-50ms`: faster; errors above the best"},
		{study.Unknown, quote, "`p99-dynamic`: cheaper"},
	} {
		if got := p.Reasons(tc.truth, tc.name); got != tc.want {
			t.Errorf("Reasons(%v): %q, want %q", tc.truth, got, tc.want)
		}
	}
	c := &Card{Policies: []Policy{p}}
	if got, want := c.Why("recommended"), "static-50ms: faster; errors above the best"; got != want {
		t.Errorf("Why: %q, want %q", got, want)
	}
	c.Policies[0].Loses = false
	if got := c.Why("recommended"); got != "" {
		t.Errorf("Why of a policy that does not lose: %q", got)
	}
}
